"""The `grade` command: list, exercise, hint, doctor.

Exit status: 0 passed, 1 failed, 2 usage error. Commands that do not grade avoid importing
torch and Triton so they answer at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader import catalogue

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake in how the command was called; printed as one sentence, exit status 2."""


def _exercise(number: int) -> catalogue.Exercise:
    try:
        return catalogue.get(number)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def cmd_list(args, console: Console) -> int:
    from grader import progress

    state = progress.load()
    table = Table(title="Exercises", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("exercise")
    table.add_column("your file")
    table.add_column("state")
    table.add_column("best", justify="right")
    done = 0
    for exercise in catalogue.EXERCISES:
        entry = state.exercise(exercise.number)
        label, style = progress.describe_state(entry)
        if entry.get("state") == "passed":
            done += 1
        best = entry.get("best_fraction")
        table.add_row(str(exercise.number), exercise.title, exercise.learner_file, Text(label, style=style),
                      f"{best:.0%}" if isinstance(best, (int, float)) else "–")
    console.print(table)
    console.print(f"{done} of {len(catalogue.EXERCISES)} exercises passed. "
                  "Next: `grade exercise N` grades exercises/exNN_*.py; `grade hint N` when stuck.")
    return EXIT_PASSED


def cmd_exercise(args, console: Console) -> int:
    from grader import isolation, progress, report

    exercise = _exercise(args.number)
    path = Path(args.from_path) if args.from_path else exercise.learner_path
    if not path.is_file():
        raise UsageError(f"no file at {path}: --from takes a Python file implementing exercise {exercise.number}")
    if not exercise.spec_file.is_file():
        raise UsageError(f"exercise {exercise.number} has no checks yet ({exercise.spec_file} is missing)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    if not args.json:
        console.print(Text(f"Grading {path} …", style="dim"))
    run = isolation.run_checks(exercise, path, seed=seed, interpreter=args.interpreter,
                               check_timeout=args.timeout)
    if args.traffic and run.mode == "gpu":
        # Bytes are counted by Triton's interpreter: a second, interpreter-only run of the traffic check.
        counted = isolation.run_checks(exercise, path, seed=seed, interpreter=True, check_timeout=args.timeout,
                                       select="traffic")
        replacements = {c.name: c for c in counted.checks if c.name.startswith("traffic")}
        run.checks = [replacements.pop(c.name, c) for c in run.checks] + list(replacements.values())
    if not args.from_path:
        progress.record_run(exercise.number, run)
    if args.json:
        print(json.dumps(report.to_json(run), indent=1))
    else:
        report.render(run, exercise, console)
    return EXIT_PASSED if run.passed else EXIT_FAILED


def cmd_hint(args, console: Console) -> int:
    from grader import progress

    exercise = _exercise(args.number)
    if not exercise.hints:
        console.print(f"Exercise {exercise.number} has no hints yet; its page is docs/{exercise.docs_page}.")
        return EXIT_PASSED
    shown = progress.next_hint(exercise.number, len(exercise.hints)) if not args.all else len(exercise.hints)
    for i, hint in enumerate(exercise.hints[:shown], start=1):
        console.print(Text(f"Hint {i} of {len(exercise.hints)}", style="bold"))
        console.print(hint)
        console.print()
    if shown < len(exercise.hints):
        console.print(Text(f"Run `grade hint {exercise.number}` again for the next one.", style="dim"))
    return EXIT_PASSED


def cmd_doctor(args, console: Console) -> int:
    from grader import mode as modes

    selected = modes.select(force_interpreter=args.interpreter)
    import torch

    rows: list[tuple[str, str]] = [("python", sys.version.split()[0]), ("torch", torch.__version__)]
    try:
        import triton

        rows.append(("triton", triton.__version__))
    except Exception as exc:
        rows.append(("triton", f"cannot import: {exc}"))
    rows.append(("mode", "gpu" if selected == "gpu" else "interpreter (TRITON_INTERPRET=1): correctness only, "
                 "performance not measured"))
    from grader import perf

    rows.append(("ceiling cache", str(perf.cache_path())))
    if selected == "gpu":
        info = perf.gpu_info()
        rows += [("gpu", f"{info.name} (compute capability {info.capability}, {info.sm_count} SMs, "
                         f"L2 {info.l2_bytes / 2**20:.0f} MiB, {info.total_bytes / 2**30:.0f} GiB)"),
                 ("driver", info.driver), ("cuda (torch)", str(torch.version.cuda))]
        spec = perf.spec_peak_gbps()
        rows.append(("datasheet peak", f"{spec:.0f} GB/s (NVML: memory clock x bus width x 2)" if spec else
                     "unknown (NVML unavailable)"))
        ceiling, cached = perf.measure_ceiling(refresh=args.refresh)
        share = f", {ceiling.ceiling_gbps / spec:.0%} of the datasheet" if spec else ""
        rows.append(("measured ceiling", f"{ceiling.ceiling_gbps:.0f} GB/s (copy {ceiling.copy_gbps:.0f}, add "
                     f"{ceiling.add_gbps:.0f}; {ceiling.buffer_bytes / 2**20:.0f} MiB buffers{share}; "
                     f"{'cached ' + ceiling.measured_at if cached else 'measured now'})"))
    else:
        rows.append(("gpu", "none visible to torch (torch.cuda.is_available() is False)"))
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    return EXIT_PASSED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grade", description="Grade the Triton course's exercises.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="the exercises and your progress")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("exercise", help="grade exercise N (your file, or --from PATH)")
    p.add_argument("number", type=int)
    p.add_argument("--from", dest="from_path", metavar="PATH", help="grade this file instead of exercises/exNN_*.py")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--seed", type=int, help="replay the random inputs of an earlier run")
    p.add_argument("--interpreter", action="store_true", help="use Triton's interpreter even where a GPU exists")
    p.add_argument("--timeout", type=float, help="seconds one check may run (default: 120 interpreter, 60 GPU)")
    p.add_argument("--traffic", action="store_true",
                   help="on a GPU, also count the bytes your kernel moves (in Triton's interpreter, small shape)")
    p.set_defaults(handler=cmd_exercise)

    p = sub.add_parser("hint", help="the next hint for exercise N")
    p.add_argument("number", type=int)
    p.add_argument("--all", action="store_true", help="show every hint at once")
    p.set_defaults(handler=cmd_hint)

    p = sub.add_parser("doctor", help="GPU, driver, versions, mode, datasheet peak and measured ceiling")
    p.add_argument("--interpreter", action="store_true", help="report as if no GPU were present")
    p.add_argument("--refresh", action="store_true", help="measure the ceiling again instead of using the cache")
    p.set_defaults(handler=cmd_doctor)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.handler(args, console)
    except UsageError as exc:
        Console(stderr=True, highlight=False).print(Text(f"grade: {exc}", style="red"))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
