"""On a GPU: where the seconds before a grading's first result go, and what a timeline of one grading looks like.

    PYTHONPATH=. python tools/device/startup_probe.py --out $OUT/startup.json [--exercise 1] [--file F]

Its parts, each in fresh processes (as a learner's ``grade exercise`` starts them):

``stages``
    what a Python that will grade pays, one stage at a time: ``import torch``; torch's CUDA start
    (``torch.cuda.is_available``, the device's properties, a first allocation: the context); Triton's
    import and a first kernel compiled into an empty cache, then the same kernel from a warm cache;
``timeline``
    ``grade exercise N --from FILE`` run in this process through `grader.commands.isolation.run_checks`,
    with the arrival time of every event the judge sends (``mode``, ``collected``, each check's start
    and result): the seconds until the judge is up, until the learner's file is imported, each check's
    own seconds, and the performance check's; then the judge's ``timings``: when the learner's process and
    the twin were started and ready, the stages of their start, and how long each took to end;

Each stage runs twice; the first run also pays for a cold page cache.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))  # tools.device.provenance, run as a script

KERNEL = '''
import triton, triton.language as tl
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''

STAGES = {
    "import_torch": "import torch",
    "cuda_available": "import torch; torch.cuda.is_available()",
    "device_properties": "import torch; torch.cuda.get_device_properties(0)",
    "first_allocation": "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()",
    "import_triton": "import torch, triton, triton.language",
    "first_kernel": ("import torch, importlib.util, sys, os\n"
                     "spec_path = os.environ['PROBE_KERNEL']\n"
                     "spec = importlib.util.spec_from_file_location('probe_kernel', spec_path)\n"
                     "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                     "x = torch.rand(1000, device='cuda'); out = torch.empty_like(x)\n"
                     "m.add_kernel[(4,)](x, x, out, 1000, BLOCK=256); torch.cuda.synchronize()"),
    # The learner's process starts CUPTI in a thread (grader.learner.kernel_trace.prepare): does that thread
    # hold up a kernel's compile and first launch beside it?
    "first_kernel_cupti_warming": ("import torch, importlib.util, sys, os, threading\n"
                                   "from torch.profiler import profile, ProfilerActivity\n"
                                   "def warm():\n"
                                   "    p = profile(activities=[ProfilerActivity.CUDA]); p.__enter__(); p.__exit__(None, None, None)\n"
                                   "threading.Thread(target=warm, daemon=True).start()\n"
                                   "spec = importlib.util.spec_from_file_location('probe_kernel', os.environ['PROBE_KERNEL'])\n"
                                   "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                                   "x = torch.rand(1000, device='cuda'); out = torch.empty_like(x)\n"
                                   "m.add_kernel[(4,)](x, x, out, 1000, BLOCK=256); torch.cuda.synchronize()"),
}
# In one process, after torch's import, from a warm Triton cache: the seconds the main thread takes to import
# Triton and the kernel, launch it and synchronize (``main_s``), alone and with CUPTI starting in a thread beside
# it as in the learner's process, and how long that start took (``warm_s``, joined after). Printed as JSON.
_BESIDE = ("import torch, importlib.util, json, os, threading, time\n"
           "t0 = time.monotonic(); warm_s = None\n"
           "if os.environ.get('PROBE_WARM'):\n"
           "    from torch.profiler import profile, ProfilerActivity\n"
           "    def warm():\n"
           "        global warm_s\n"
           "        p = profile(activities=[ProfilerActivity.CUDA]); p.__enter__(); p.__exit__(None, None, None)\n"
           "        warm_s = time.monotonic() - t0\n"
           "    thread = threading.Thread(target=warm, daemon=True); thread.start()\n"
           "import triton\n"
           "spec = importlib.util.spec_from_file_location('probe_kernel', os.environ['PROBE_KERNEL'])\n"
           "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
           "x = torch.rand(1000, device='cuda'); out = torch.empty_like(x)\n"
           "m.add_kernel[(4,)](x, x, out, 1000, BLOCK=256); torch.cuda.synchronize()\n"
           "main_s = time.monotonic() - t0\n"
           "if os.environ.get('PROBE_WARM'): thread.join()\n"
           "print(json.dumps({'main_s': round(main_s, 3), 'warm_s': warm_s and round(warm_s, 3)}))\n")
STAGES["kernel_after_torch"] = _BESIDE
STAGES["kernel_after_torch_cupti_thread"] = "import os; os.environ['PROBE_WARM'] = '1'\n" + _BESIDE


def stages(kernel_file: Path, only: list[str] | None = None) -> list[dict]:
    rows = []
    cache = tempfile.mkdtemp(prefix="probe-triton-")
    for name, code in STAGES.items():
        if only and name not in only and name != "first_kernel":  # the first kernel fills the Triton cache
            continue
        for attempt in (1, 2):
            env = {"PATH": "/usr/bin:/bin", "TRITON_CACHE_DIR": cache, "PROBE_KERNEL": str(kernel_file),
                   "HOME": cache}
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            rows.append({"stage": name, "attempt": attempt, "seconds": round(time.monotonic() - started, 3),
                         "exit": done.returncode, "error": done.stderr[-300:] if done.returncode else None})
            if done.stdout.strip().startswith("{"):
                rows[-1]["in_process"] = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def timeline(number: int, file: Path) -> dict:
    from grader import catalogue
    from grader.commands import isolation
    from grader.wire import results

    arrivals: list[dict] = []
    started = time.monotonic()
    original = results.apply_event

    def stamped(run, data, collected, done, running):
        entry = {"t": round(time.monotonic() - started, 3), "event": data.get("event")}
        if data.get("event") == "start":
            entry["check"] = data.get("nodeid")
        elif data.get("event") == "result":
            entry["check"] = data["check"].get("nodeid")
            entry["passed"] = data["check"].get("passed")
        elif data.get("event") == "timings":  # the learner's and the twin's start, stage by stage, and their end
            entry.update({k: v for k, v in data.items() if k != "event"})
        arrivals.append(entry)
        return original(run, data, collected, done, running)

    isolation.apply_event = stamped
    try:
        exercise = catalogue.get(number)  # with the Triton cache `grade exercise` keeps for the file
        run = isolation.run_checks(exercise, file, seed=20261206, kernel_cache=isolation.kernel_cache_for(exercise, file))
    finally:
        isolation.apply_event = original
    performance = run.performance
    return {"exercise": number, "file": str(file), "wall_s": round(run.wall_seconds, 3), "passed": run.passed,
            "mode": run.mode, "fraction": performance.fraction if performance else None,
            "events": arrivals}


def cli(number: int, file: Path, times: int = 3) -> list[dict]:
    """``grade exercise N --from FILE --json`` as a learner runs it, ``times`` times in a row: its wall seconds."""
    rows = []
    for _ in range(times):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "grader.commands.cli", "exercise", str(number), "--from", str(file),
                               "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        seconds = round(time.monotonic() - started, 2)
        try:
            result = json.loads(done.stdout)
            rows.append({"seconds": seconds, "passed": result.get("passed"),
                         "fraction": (result.get("performance") or {}).get("fraction")})
        except ValueError:
            rows.append({"seconds": seconds, "error": (done.stderr or done.stdout)[-800:]})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--exercise", type=int, default=1)
    parser.add_argument("--file", type=Path, default=ROOT / "solutions" / "ex01_vector_add.py")
    parser.add_argument("--parts", nargs="*", default=["stages", "timeline", "cli"])
    parser.add_argument("--stages", nargs="*", choices=list(STAGES), help="only these stages (and first_kernel)")
    args = parser.parse_args()
    kernel_file = Path(tempfile.mkdtemp(prefix="probe-kernel-")) / "probe_kernel.py"
    kernel_file.write_text(KERNEL)
    found: dict = {}
    if "stages" in args.parts:
        found["stages"] = stages(kernel_file, args.stages)
    if "timeline" in args.parts:
        found["timeline"] = [timeline(args.exercise, args.file) for _ in range(2)]
    if "cli" in args.parts:
        found["cli"] = cli(args.exercise, args.file)
    from tools.device import provenance  # imports torch: after the timings, which start their own processes

    args.out.write_text(json.dumps({"meta": provenance.header(), **found}, indent=1))
    for row in found.get("cli", []):
        print(f"grade exercise {args.exercise}: {row['seconds']} s, passed {row.get('passed')}, "
              f"fraction {row.get('fraction')} {row.get('error', '')}")
    for row in found.get("stages", []):
        print(f"{row['stage']:>18} #{row['attempt']}: {row['seconds']:6.2f} s" + (" FAILED" if row["exit"] else "")
              + (f" {row['in_process']}" if row.get("in_process") else ""))
    for run in found.get("timeline", []):
        first = next((e["t"] for e in run["events"] if e["event"] == "result"), None)
        mode = next((e["t"] for e in run["events"] if e["event"] == "mode"), None)
        print(f"timeline: mode at {mode} s, first result at {first} s, whole {run['wall_s']} s, "
              f"passed {run['passed']}, fraction {run['fraction']}")
        for timings in (e for e in run["events"] if e["event"] == "timings"):
            print(f"  learner {timings['learner']}\n  twin {timings['twin']}\n"
                  f"  ended: twin {timings['twin_ended_s']} s, learner {timings['learner_ended_s']} s after asked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
