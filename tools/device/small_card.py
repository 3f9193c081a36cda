"""Every solution graded on an emulated 8 GiB card: the H200 held to 8 GiB in the judge's process and
in the learner's.

``GRADE_DEVICE_MEMORY_GIB=8`` makes `grader.device.current` report 8 GiB and call
``torch.cuda.set_per_process_memory_fraction`` in the judge, which makes every input, reference and
comparison: the plans (`grader.plan`) size the timed inputs for 8 GiB, and an allocation past it fails
as it would on the card. The variable is on the learner environment's allow-list, and the learner's
process holds its own allocations (the outputs) to the same share (`grader.device.hold_to_memory_limit`).

Without a GPU it writes the plans of the emulated card only (the H200 of `grader.known_cards` held to
8 GiB), which is what it can check here.

    PYTHONPATH=. python tools/device/small_card.py                 # writes $OUT/small_card.json
    SMALL_CARD_GIB=6 SMALL_CARD_EXERCISES="8 10" python tools/device/small_card.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader import catalogue, device, known_cards, plan  # noqa: E402

GIB = float(os.environ.get("SMALL_CARD_GIB", "8"))
OUT = Path(os.environ.get("OUT", "/tmp/small_card"))
#: One grading may run this long (exercise 7's performance check compiles its kernels cold).
TIMEOUT_S = 900


def _versions() -> dict:
    from importlib import metadata

    return {name: metadata.version(name) for name in ("torch", "triton")}


def plans(card: device.Device) -> list[dict]:
    rows = []
    for exercise in catalogue.EXERCISES:
        p = plan.for_exercise(exercise, card)
        timed = p.performance
        rows.append({"exercise": exercise.number, "dtypes": list(p.dtypes), "skipped": dict(p.skipped),
                     "input": timed.label if timed else None,
                     "held_gib": round(timed.held_bytes / 2**30, 2) if timed else None,
                     "cache_multiple": round(timed.data_bytes / card.cache_bytes, 1) if timed else None,
                     "floor_note": p.floor_note})
    return rows


def grade(exercise) -> dict:
    env = {**os.environ, device.MEMORY_LIMIT_VARIABLE: f"{GIB:g}", "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grader.commands.cli", "exercise", str(exercise.number), "--from",
                           exercise.solution_file, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    row = {"exercise": exercise.number, "file": exercise.solution_file,
           "exit": done.returncode, "wall_seconds": round(time.monotonic() - started, 1)}
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {**row, "passed": False, "error": (done.stderr or done.stdout)[-2000:]}
    performance = result.get("performance") or {}
    return {**row, "passed": result.get("passed"), "mode": result.get("mode"),
            "failed_checks": [c["name"] for c in result.get("checks", [])
                              if not c.get("passed") and not c.get("skipped")],
            "skipped_checks": [c["name"] for c in result.get("checks", []) if c.get("skipped")],
            "failures": [f"{c['name']}: {(c.get('message') or '')[:400]}" for c in result.get("checks", [])
                         if not c.get("passed") and not c.get("skipped")][:3],
            "fraction": performance.get("fraction"), "verdict": performance.get("verdict"),
            "input": performance.get("input"), "floor_note": performance.get("floor_note"),
            # False where the fraction was under the floor on a card that cannot measure it (bandwidth.card_verdict)
            "decided": performance.get("decided", True) if performance else None,
            "timing": {k: (performance.get("timing") or {}).get(k) for k in
                       ("sets", "ms_per_call", "round_overhead_ms", "dobench_ms", "dobench_ratio")}}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    # One ceiling for every grading, in a folder of its own: the device image has no platformdirs.
    os.environ.setdefault("GRADE_CACHE_DIR", tempfile.mkdtemp(prefix="small-card-cache-"))
    numbers = [int(n) for n in os.environ.get("SMALL_CARD_EXERCISES", "").split()] or \
        [e.number for e in catalogue.EXERCISES]
    os.environ[device.MEMORY_LIMIT_VARIABLE] = f"{GIB:g}"
    on_gpu = device.gpu_usable()
    card = device.current() if on_gpu else device.emulating(known_cards.card("H200"), int(GIB * 2**30))
    record = {"meta": {"gpu": card.name, "driver": card.driver, **_versions(), "python": sys.version.split()[0],
                       "date": time.strftime("%Y-%m-%d"), "emulated_gib": GIB,
                       "card_gib": round(card.card_memory_bytes / 2**30, 1),
                       "command": f"SMALL_CARD_GIB={GIB:g} python tools/device/small_card.py",
                       "measured": on_gpu},
              "plans": plans(card), "rows": []}
    path = OUT / "small_card.json"
    if on_gpu:
        for number in numbers:
            record["rows"].append(grade(catalogue.get(number)))
            path.write_text(json.dumps(record, indent=1))  # an interrupted run keeps what was graded
    else:
        record["meta"]["note"] = "no GPU: the plans of the emulated card only, nothing graded"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path}")
    print(f"{'ex':>3}  {'input on ' + f'{GIB:g} GiB':58}  {'held GiB':>8}  result")
    graded = {r["exercise"]: r for r in record["rows"]}
    for p in record["plans"]:
        r = graded.get(p["exercise"])
        result = "not graded (no GPU)" if r is None else (
            f"{'PASSED' if r['passed'] else 'FAILED'} {r.get('verdict') or ''} {r.get('failed_checks') or ''}")
        print(f"{p['exercise']:>3}  {(p['input'] or 'not timed'):58}  {p['held_gib'] or 0:>8}  {result}")
    return 0 if all(r["passed"] for r in record["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
