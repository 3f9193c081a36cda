"""On an NVIDIA GPU: record what the interpreter is held to, and grade the natural corpus there.

    PYTHONPATH=. python tests/gpu_record.py --out DIR [--parts bf16,check,natural] [--minutes 8]

(A dry run without a GPU: ``TRITON_INTERPRET=1 ... --device cpu --files ex01/tutorial_add.py``.)

Parts (each in its own try: one failing part does not lose the others; files are written as
soon as a part ends):

``bf16``     runs every kernel of tests/bf16_agreement.py on the GPU, writes DIR/bf16-h200.json:
             the inputs and outputs as bits, with the GPU, driver, versions and date. Commit it
             as tests/data/bf16-h200.json (tests/test_interpreter_fixes.py compares with it).
``check``    runs tests/test_interpreter_fixes.py here, in Triton's interpreter, against that
             file (the comparison CI will make); writes DIR/bf16-check.txt.
``natural``  grades every exercise folder's natural/ files on the GPU, as ``grade exercise N --from FILE
             --json`` does: correctness (the checks other than performance, four files at a
             time), then the performance check one file at a time; writes DIR/natural-h200.json.

A short table is printed last. Past ``--minutes`` the remaining work is recorded as not run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SEED = 20261201


def _meta() -> dict:
    import torch
    import triton

    try:
        from tools import benchmarks

        meta = benchmarks.meta()
    except Exception as exc:  # the ceiling measurement must not cost the record
        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU (a dry run)"
        meta = {"gpu": gpu, "torch": torch.__version__, "triton": triton.__version__,
                "date": time.strftime("%Y-%m-%d"), "meta_error": repr(exc)}
    meta["python"] = sys.version.split()[0]
    return meta


def record_bf16(out: Path, device: str) -> dict:
    from tests import bf16_agreement as agreement

    if device == "cpu":  # a dry run: the interpreter stands in for the GPU, as the grader runs it
        from grader.learner import interpreter_fixes

        interpreter_fixes.apply()

    record = {"meta": {**_meta(), "seed": agreement.SEED,
                       "command": "PYTHONPATH=. python tests/gpu_record.py --out DIR --parts bf16"},
              "cases": {}}
    summary = {}
    for case in agreement.CASES:
        inputs = agreement.inputs_for(case)
        entry = {"inputs": {name: agreement.encode(t) for name, t in inputs.items()}}
        try:
            outputs = agreement.run(case, inputs, device)
            entry["outputs"] = {name: agreement.encode(t) for name, t in outputs.items()}
            # How the GPU compares with the model (for the table; the test compares the interpreter).
            verdicts = []
            for name, expected in case.model(inputs).items():
                problem = agreement.disagreement(expected.gpu, agreement.bits_of(outputs[name]), expected.bits)
                verdicts.append(f"{name}: {'as the model' if problem is None else problem[:200]}")
            entry["gpu_vs_model"] = verdicts
            summary[case.name] = "ok" if all(v.endswith("as the model") for v in verdicts) else "differs from model"
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
            summary[case.name] = f"error: {type(exc).__name__}"
        record["cases"][case.name] = entry
        (out / "bf16-h200.json").write_text(json.dumps(record, indent=1))
    return summary


def check_bf16(out: Path) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="1", BF16_GPU_DATA=str(out / "bf16-h200.json"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
                           "tests/test_interpreter_fixes.py", "-k", "(gpu or model or installed) and not left_to"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=420)
    text = proc.stdout[-20000:] + proc.stderr[-4000:]
    (out / "bf16-check.txt").write_text(text)
    last = [line for line in proc.stdout.splitlines() if line.strip()][-1:] or ["(no output)"]
    return {"pytest": last[0], "exit": proc.returncode}


def grade_natural(out: Path, deadline: float, only: list[str], interpreter: bool,
                  performance_only: bool = False) -> dict:
    from grader import catalogue
    from grader.commands import isolation, report
    from tests.test_natural import natural_files

    files = [(n, p) for n, p in natural_files() if not only or f"ex{n:02d}/{p.name}" in only]
    results: dict[str, dict] = {}
    path_json = out / "natural-h200.json"

    def save():
        path_json.write_text(json.dumps({"meta": _meta_cached, "files": results}, indent=1))

    def correctness(item):
        number, path = item
        key = f"ex{number:02d}/{path.name}"
        if time.monotonic() > deadline:
            return key, {"not_run": "past the time budget"}
        started = time.monotonic()
        run = isolation.run_checks(catalogue.get(number), path, seed=SEED, select="not performance",
                                   interpreter=interpreter)
        return key, {"correctness": report.to_json(run), "seconds": round(time.monotonic() - started, 1)}

    if performance_only:
        results.update({f"ex{n:02d}/{p.name}": {} for n, p in files})
    else:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for key, value in pool.map(correctness, files):
                results[key] = value
                save()
    for number, path in files:  # performance: one at a time, nothing else on the GPU
        key = f"ex{number:02d}/{path.name}"
        if time.monotonic() > deadline:
            results[key]["performance"] = {"not_run": "past the time budget"}
            continue
        try:
            run = isolation.run_checks(catalogue.get(number), path, seed=SEED, select="performance",
                                       interpreter=interpreter)
            check = next((c for c in run.checks if c.name == "performance"), None)
            measured = report.to_json(run).get("performance") or {}  # a typed record, as JSON
            results[key]["performance"] = {"passed": run.passed, "message": check.message if check else "",
                                           **measured}
        except Exception as exc:
            results[key]["performance"] = {"error": repr(exc)}
        save()
    summary = {}
    for key, value in results.items():
        checks = (value.get("correctness") or {}).get("checks", [])
        failed = [c for c in checks if not c["passed"] and not c["skipped"]]
        perf = value.get("performance") or {}
        summary[key] = {
            "correct": "not run" if "not_run" in value or "correctness" not in value else ("PASS" if not failed else f"FAIL {len(failed)}: "
                                                             + (failed[0]["message"] or "")[:120]),
            "performance": (f"{perf['fraction']:.0%} ({'pass' if perf.get('passed') else 'under floor'})"
                            if perf.get("fraction") is not None else perf.get("not_run") or perf.get("error")
                            or perf.get("message", "")[:60]),
        }
    return summary


_meta_cached: dict = {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/gpu_record.py")
    parser.add_argument("--out", required=True)
    parser.add_argument("--parts", default="bf16,check,natural")
    parser.add_argument("--minutes", type=float, default=8.0, help="stop starting new work after this")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run in the interpreter")
    parser.add_argument("--files", default="", help="natural files to grade, e.g. ex01/tutorial_add.py (default: all)")
    parser.add_argument("--performance-only", action="store_true", help="natural: the performance check alone")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + 60 * args.minutes
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import tempfile

    os.environ.setdefault("GRADE_CACHE_DIR", tempfile.mkdtemp(prefix="grade-cache-"))  # a cold ceiling cache
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    summaries: dict[str, object] = {}
    global _meta_cached
    try:
        _meta_cached = _meta()
    except Exception as exc:
        _meta_cached = {"error": repr(exc)}
    for part in parts:
        started = time.monotonic()
        try:
            if part == "bf16":
                summaries[part] = record_bf16(out, args.device)
            elif part == "check":
                summaries[part] = check_bf16(out)
            elif part == "natural":
                summaries[part] = grade_natural(out, deadline, [f for f in args.files.split(",") if f],
                                                interpreter=args.device == "cpu",
                                                performance_only=args.performance_only)
            else:
                summaries[part] = f"unknown part {part!r}"
        except Exception:
            summaries[part] = "FAILED: " + traceback.format_exc()[-1500:]
        print(f"[{part}: {time.monotonic() - started:.0f} s]", flush=True)

    print(f"\n{_meta_cached.get('gpu')} · triton {_meta_cached.get('triton')} · torch {_meta_cached.get('torch')}")
    for part, summary in summaries.items():
        print(f"== {part}")
        if isinstance(summary, dict):
            for key, value in summary.items():
                if isinstance(value, dict):
                    value = " · ".join(f"{k} {v}" for k, v in value.items())
                print(f"  {key:<42} {value}")
        else:
            print(f"  {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
