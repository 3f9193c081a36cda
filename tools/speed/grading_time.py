"""How long a learner waits: the fixed cost of a grading, whole gradings of exercise 1, `grade bench`.

    PYTHONPATH=. python -m tools.speed.grading_time --phase after [--cases solution hang ...] [--repeat N]
        [--out docs/measurements/cpu-grading-speed.json] [--solutions]

Each case is timed from this process, as the learner's command would be:

``first_check``
    the solution of exercise 1, graded through `grader.commands.isolation.run_checks` (what ``grade
    exercise`` calls), the one-element cases selected: the time until the first result arrives is
    the fixed cost of a grading (the judge, the sandbox, the learner's process, torch and Triton
    imported, the spec collected), plus one call of an add of one element;
``first_check_warm``
    the same in a process that has graded before (`grade batch`, `grade watch`, the course's
    tests): what is started once per process (`grader.prestart`'s templates) is started already;
``solution_warm``
    the whole grading of the solution, likewise;
``solution``, ``wrong``, ``import_loop``, ``hang``
    ``grade exercise 1 --from FILE --json`` end to end on the solution, a wrong variant (the tail
    mask missing), a file that loops at import and a kernel that never ends (``first_result_s`` is
    when the first check's result arrived);
``bench``
    ``grade bench 1`` on the solution: without a GPU it only has to say so;
``fast_loop``
    the maintainers' fast loop, ``python -m pytest -m "not grading" -q -n 2`` (every test that grades nothing).

``--solutions`` grades every exercise's solution (``--exercises`` some) ``--repeat`` times instead
(the noise of the performance verdict on a GPU: the fraction of every run is kept, and
``fraction_spread`` is the largest minus the smallest); with ``--warm``, each in a process that has graded
before, as the course's tests, `grade batch` and `grade watch` grade (the cases' ``solution_ex01_warm``...); with
``--select performance``, only the performance check of each (every run still a grading of its own: the judge,
the learner's process, the kernel compiled).

Every row records the wall seconds, the CPU seconds of every process the case started (user and
system, children included) and the load average before it: on a shared machine the wall clock
moves with the neighbours, the CPU seconds much less. The rows are merged into ``--out`` (rows of
the same phase and case are replaced), with the machine and the versions in ``meta``; a short
table is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import catalogue
from grader.commands import isolation
from grader.wire import results

ROOT = catalogue.ROOT
EXERCISE = catalogue.get(1)
SEED = 20261203
FIRST_CHECK = "matches_reference and n1-"
WRONG = EXERCISE.wrong_dir / "no_tail_mask.py"
HANG = EXERCISE.wrong_dir / "kernel_hangs.py"
IMPORT_LOOP = '''"""Loops at import time: the grader's import clock must end it."""

while True:
    pass
'''
CASES = ("first_check", "first_check_warm", "solution", "solution_warm", "wrong", "import_loop", "hang", "bench",
         "fast_loop")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _templates_cpu() -> float:
    """CPU seconds of the templates this process started and of everything they started, once all of it
    has ended and been collected (a template collects its ended processes once a second)."""
    templates = list(getattr(isolation, "_TEMPLATES", {}).values())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_children(t.proc.pid) for t in templates if t.proc):
        time.sleep(0.2)
    return sum(t.cpu_seconds() for t in templates)


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def timed_grading(exercise: catalogue.Exercise, path: Path, select: str | None = None, *, warm: bool = False) -> dict:
    """Grade ``path`` through run_checks, noting when the first check's result arrives. Cold: no
    template before, and the templates ended after (their CPU time then counts among this process's
    children). Warm: after a grading that started them, which is not counted."""
    close = getattr(isolation, "close_templates", lambda: None)
    close()
    if warm:
        isolation.run_checks(exercise, path, seed=SEED, interpreter=_interpreter(), select=FIRST_CHECK)
    templates_before = _templates_cpu() if warm else 0.0
    first: list[float] = []
    last: list[float] = []  # when the latest result arrived
    apply_event = isolation.apply_event

    def noting(run, data, *rest):
        if data.get("event") == "result":
            if not first:
                first.append(time.monotonic())
            last[:] = [time.monotonic()]
        return apply_event(run, data, *rest)

    isolation.apply_event = noting
    cpu, started = _children_cpu(), time.monotonic()
    try:
        result = isolation.run_checks(exercise, path, seed=SEED, interpreter=_interpreter(), select=select)
    finally:
        isolation.apply_event = apply_event
    wall = time.monotonic() - started
    templates = _templates_cpu() - templates_before if warm else 0.0
    children = _children_cpu() - cpu  # before the templates end: their own imports were counted above
    close()
    if not warm:
        children = _children_cpu() - cpu  # now with what the templates started, if any
    perf = result.performance
    return {"wall_s": round(wall, 2), "cpu_s": round(children + templates, 2),
            "first_result_s": round(first[0] - started, 2) if first else None,
            # From the last result to the grading's end: the judge's and the learner's process's exits.
            "after_last_result_s": round(started + wall - last[0], 2) if last else None, "passed": result.passed,
            "checks": len(result.checks), "select": select, "fraction": perf.fraction if perf else None,
            "failed": sorted({str(c.kind) for c in result.checks if not c.passed and not c.skipped}),
            # What a failing grading said first: a row that failed on a GPU is read without a second call.
            "first_failures": [f"{c.name}: {(c.message or '')[:300]}" for c in result.checks
                               if not c.passed and not c.skipped][:3],
            "verdict": perf.verdict if perf else None,
            # What the judge's clock was made of, so that a spread can be traced to the rounds or to the twin.
            "timing": {k: (perf.timing or {}).get(k) for k in ("sets", "ms_per_call", "raw_rounds_ms",
                                                                "twin_rounds_ms", "round_overhead_ms", "dobench_ms")}
            if perf and perf.timing else None}


def timed_command(args: list[str], module: str = "grader.commands.cli", root: Path = ROOT) -> dict:
    """One ``grade`` command (or another module's) of the course at ``root``, in a process of its own, as
    its user types it."""
    cpu, started = _children_cpu(), time.monotonic()
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)})
    wall = time.monotonic() - started
    row = {"wall_s": round(wall, 2), "cpu_s": round(_children_cpu() - cpu, 2), "exit": done.returncode}
    if "--json" in args:
        try:
            data = json.loads(done.stdout)
            row["passed"] = data.get("passed")
            row["failed"] = sorted({str(c.get("kind")) for c in data.get("checks", [])
                                    if not c.get("passed") and not c.get("skipped")})
        except ValueError:
            row["said"] = (done.stdout + done.stderr).strip()[-300:]
    else:
        row["said"] = (done.stdout + done.stderr).strip()[-300:]
    return row


def _interpreter() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def run_case(name: str, scratch: Path) -> dict:
    solution = str(EXERCISE.solution_path)
    if name == "first_check":
        return timed_grading(EXERCISE, EXERCISE.solution_path, FIRST_CHECK)
    if name == "first_check_warm":
        return timed_grading(EXERCISE, EXERCISE.solution_path, FIRST_CHECK, warm=True)
    if name == "solution_warm":
        return timed_grading(EXERCISE, EXERCISE.solution_path, warm=True)
    if name == "solution":
        return timed_command(["exercise", "1", "--from", solution, "--json", "--seed", str(SEED)])
    if name == "wrong":
        return timed_command(["exercise", "1", "--from", str(WRONG), "--json", "--seed", str(SEED)])
    if name == "import_loop":
        loop = scratch / "loops_at_import.py"
        loop.write_text(IMPORT_LOOP)
        return timed_command(["exercise", "1", "--from", str(loop), "--json", "--seed", str(SEED)])
    if name == "hang":
        return timed_command(["exercise", "1", "--from", str(HANG), "--json", "--seed", str(SEED)])
    if name == "fast_loop":
        row = timed_command(["-m", "not grading", "-q", "-n", "2"], module="pytest")
        row["said"] = row["said"].splitlines()[-1] if row.get("said") else ""
        return row
    if name == "bench":
        return timed_command(["bench", "1", "--from", solution, "--out", str(scratch / "bench")])
    raise SystemExit(f"unknown case {name!r}: one of {', '.join(CASES)}")


def meta() -> dict:
    from importlib import metadata

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    gpu = None
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
        gpu = done.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        pass
    cpu_model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {"machine": f"{os.cpu_count()} CPU cores ({cpu_model})", "gpu": gpu, "commit": commit.stdout.strip() or None,
            "python": platform.python_version(),
            "torch": version("torch"), "triton": version("triton"), "date": time.strftime("%Y-%m-%d"),
            "command": "PYTHONPATH=. python -m tools.speed.grading_time " + " ".join(sys.argv[1:])}


def merge(out: Path, rows: list[dict], phase: str) -> dict:
    data = json.loads(out.read_text()) if out.exists() else {"meta": {}, "rows": []}
    fresh = {(r["phase"], r["case"]) for r in rows}
    data["rows"] = [r for r in data["rows"] if (r.get("phase"), r.get("case")) not in fresh] + rows
    now, before = meta(), data["meta"].get(phase) or {}
    # A phase measured by several commands keeps every one of them (its rows came from all).
    commands = [*before.get("commands", [before["command"]] if "command" in before else []), now["command"]]
    if len(set(commands)) > 1:
        now["commands"] = list(dict.fromkeys(commands))
    data["meta"][phase] = now
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    return data


def paired(other: Path, repeat: int, out: Path) -> int:
    """`grade exercise 1` on the solution, here and in ``other`` in turns; one row per checkout."""
    commits = {}
    for root in (other, ROOT):
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        commits[root] = done.stdout.strip() or root.name
    runs: dict[Path, list[dict]] = {other: [], ROOT: []}
    for _ in range(repeat):
        for root in (other, ROOT):
            solution = str(root / EXERCISE.solution_path.relative_to(ROOT))
            runs[root].append({"load_before": round(os.getloadavg()[0], 2),
                               **timed_command(["exercise", "1", "--from", solution, "--json", "--seed", str(SEED)],
                                               root=root)})
            print(f"{commits[root]}: {runs[root][-1]}", file=sys.stderr, flush=True)
    for root in (other, ROOT):
        walls = sorted(r["wall_s"] for r in runs[root])
        cpus = sorted(r["cpu_s"] for r in runs[root])
        row = {"phase": f"paired-{commits[root]}", "case": "solution", "wall_s": walls[len(walls) // 2],
               "cpu_s": cpus[len(cpus) // 2], "runs": runs[root]}
        merge(out, [row], row["phase"])
        print(f"{commits[root]:<10} median wall {row['wall_s']} s, cpu {row['cpu_s']} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools.speed.grading_time", description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", required=True, help="what the rows measure, e.g. before or after a change")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--solutions", action="store_true", help="grade every exercise's solution instead")
    parser.add_argument("--exercises", type=int, nargs="+", help="with --solutions: only these exercises")
    parser.add_argument("--warm", action="store_true", help="with --solutions: each grading after one that started "
                                                             "the templates (not counted)")
    parser.add_argument("--select", metavar="EXPR",
                        help="with --solutions: only the checks this pytest -k expression selects, e.g. performance "
                             "(the spread of the verdict without a whole grading's correctness checks)")
    parser.add_argument("--repeat", type=int, default=1, help="how many times each case runs (default 1)")
    parser.add_argument("--paired", type=Path, metavar="CHECKOUT",
                        help="grade exercise 1's solution in turns with another checkout of the course (its "
                             "rows are phase `paired-CHECKOUT's commit`), --repeat times each: the same load for both")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "measurements" / "cpu-grading-speed.json")
    args = parser.parse_args(argv)

    if args.paired:
        return paired(args.paired, args.repeat, args.out)
    rows = []
    with tempfile.TemporaryDirectory(prefix="grading-time-") as scratch:
        if args.solutions:
            suffix = "_warm" if args.warm else ""
            work = [(f"solution_ex{e.number:02d}{suffix}", lambda e=e: timed_grading(e, e.solution_path, args.select,
                                                                                      warm=args.warm))
                    for e in catalogue.EXERCISES if not args.exercises or e.number in args.exercises]
        else:
            work = [(name, lambda name=name: run_case(name, Path(scratch))) for name in args.cases]
        for name, measure in work:
            runs = []
            for _ in range(args.repeat):
                load = round(os.getloadavg()[0], 2)
                runs.append({"load_before": load, **measure()})
                print(f"{name}: {runs[-1]}", file=sys.stderr, flush=True)
            row = {"phase": args.phase, "case": name, **runs[0]}
            if args.repeat > 1:
                row["runs"] = runs
                for key in ("wall_s", "cpu_s", "first_result_s"):
                    values = sorted(r[key] for r in runs if r.get(key) is not None)
                    if values:
                        row[key] = values[len(values) // 2]  # the median run
                fractions = [r["fraction"] for r in runs if r.get("fraction") is not None]
                if fractions:
                    row["fraction_spread"] = round(max(fractions) - min(fractions), 4)
            rows.append(row)
            merge(args.out, [row], args.phase)  # each case as it ends: a long run stopped early keeps its rows
    print(f"{'case':<16}{'wall s':>8}{'cpu s':>8}{'first s':>9}  passed  failed")
    for row in rows:
        first = row.get("first_result_s")
        print(f"{row['case']:<16}{row['wall_s']:>8}{row['cpu_s']:>8}{'' if first is None else first:>9}  "
              f"{str(row.get('passed', '')):<7} {','.join(row.get('failed', []))}")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
