"""The `grade` command.

Learners: ``list`` · ``exercise N`` · ``show N`` · ``watch [N]`` · ``hint N`` · ``solution N`` ·
``reset N`` · ``bench N`` · ``doctor``. Instructors: ``batch DIR --exercise N [--gradescope] [--report FILE.html]``.
Maintainers: ``check-course`` (every exercise's manifest, files, pages and measurements).

Exit status: 0 passed (or done), 1 failed (or refused, with a sentence saying why), 2 usage error.
Commands that do not grade avoid importing torch and Triton so they answer at once.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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


def _learner_file(args, exercise: catalogue.Exercise) -> Path:
    """The file to grade or bench: --from PATH, else the learner's exercises/exNN_*.py."""
    path = Path(args.from_path) if args.from_path else exercise.learner_path
    if not path.is_file():
        raise UsageError(f"no file at {path}: --from takes a Python file implementing exercise {exercise.number}")
    return path


def cmd_list(args, console: Console) -> int:
    from grader.commands import progress_file
    from grader.commands.progress_view import render_list

    render_list(console, progress_file.load())
    return EXIT_PASSED


def _positive(value: float | None, option: str) -> None:
    if value is not None and not value > 0:
        raise UsageError(f"{option} takes a number of seconds greater than 0, not {value:g}")


def _hidden_state() -> tuple[str, ...]:
    """Folders the learner's process must not see: the progress and backup files."""
    from grader.commands import progress_file

    folder = progress_file.state_dir()
    return (str(folder),) if folder.is_dir() else ()


def cmd_exercise(args, console: Console) -> int:
    from grader.commands import isolation, progress_file, report

    exercise = _exercise(args.number)
    path = _learner_file(args, exercise)
    _positive(args.timeout, "--timeout")
    _positive(args.file_timeout, "--file-timeout")
    if not exercise.spec_file.is_file():
        raise UsageError(f"exercise {exercise.number} has no checks yet ({exercise.spec_file} is missing)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    if not args.json:
        console.print(Text(f"Grading {path} …", style="dim"), soft_wrap=True)
    hide = _hidden_state()
    run = isolation.run_checks(exercise, path, seed=seed, interpreter=args.interpreter,
                               check_timeout=args.timeout, file_timeout=args.file_timeout, strict=args.strict,
                               hide=hide, kernel_cache=isolation.kernel_cache_for(exercise, path))
    if args.traffic:
        run = isolation.count_traffic(run, exercise, path, seed=seed, check_timeout=args.timeout, hide=hide)
    if not args.from_path:
        progress_file.record_run(exercise.number, run)
    if args.json:
        print(json.dumps(report.to_json(run), indent=1))
    else:
        report.render(run, exercise, console, verbose=args.verbose or args.traffic)
        if run.passed and not args.from_path:
            console.print(Text(f"`grade solution {exercise.number}` shows the reference with its commentary; "
                               "`grade list` shows what comes next.", style="dim"))
    return EXIT_PASSED if run.passed else EXIT_FAILED


def cmd_show(args, console: Console) -> int:
    from grader.commands import show

    exercise = _exercise(args.number)
    path = _learner_file(args, exercise)
    if not exercise.spec_file.is_file():
        raise UsageError(f"exercise {exercise.number} has no checks yet ({exercise.spec_file} is missing)")
    if not show.draws(exercise):
        drawn = ", ".join(str(n) for n in show.drawn_exercises())
        raise UsageError(f"there is no access map for exercise {exercise.number} ({exercise.title.split(':')[0]}): "
                         f"`grade show` draws exercises {drawn}")
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"--out takes a .png or .svg file, not {out.name}")
    if not args.json:
        console.print(Text(f"Drawing what {path} touches, in Triton's interpreter …", style="dim"))
    result = show.record_in_child(exercise, path, size=args.size, timeout=args.timeout)
    if result.usage:
        raise UsageError(result.usage)
    if result.problem:
        if args.json:
            print(json.dumps({"exercise": exercise.number, "problem": result.problem}, indent=1))
        else:
            console.print(Text(f"No map: {result.problem}.", style="red"))
        return EXIT_FAILED
    title = f"Exercise {exercise.number} · what `{exercise.function}` touched"
    if args.json:
        print(json.dumps({"exercise": exercise.number, "map": result.map.to_dict()}))
    else:
        from grader.commands import access_terminal

        access_terminal.render(result.map, console, title=title)
    if out is not None:
        from grader.commands import access_figure

        access_figure.save(result.map, out, title=f"{title} ({path.name})")
        if not args.json:
            console.print(Text.assemble("wrote ", (_shown(out), "bold")), soft_wrap=True)
    return EXIT_PASSED


def cmd_hint(args, console: Console) -> int:
    from grader.commands import progress_file

    exercise = _exercise(args.number)
    if args.reset:
        progress_file.reset_hints(exercise.number)
        console.print(f"Hints for exercise {exercise.number} start over: `grade hint {exercise.number}` shows hint 1.")
        return EXIT_PASSED
    if not exercise.hints:
        console.print(f"Exercise {exercise.number} has no hints yet; its page is docs/{exercise.docs_page}.")
        return EXIT_PASSED
    shown = progress_file.next_hint(exercise.number, len(exercise.hints)) if not args.all else len(exercise.hints)
    for i, hint in enumerate(exercise.hints[:shown], start=1):
        console.print(Text(f"Hint {i} of {len(exercise.hints)}", style="bold"))
        console.print(Text(hint))  # as text: a `[grid]` in a hint is code, not rich markup
        console.print()
    if shown < len(exercise.hints):
        console.print(Text(f"Run `grade hint {exercise.number}` again for the next one.", style="dim"))
    else:
        console.print(Text(f"That was the last hint. The page docs/{exercise.docs_page} walks through the "
                           f"exercise; `grade hint {exercise.number} --reset` starts the hints over.", style="dim"))
    return EXIT_PASSED


def cmd_watch(args, console: Console) -> int:
    from grader.commands import progress_file, regrade_on_save
    from grader.commands.progress_view import available, next_exercise

    if args.number is None:
        exercise = next_exercise(progress_file.load())
        if exercise is None:
            console.print("Every exercise available so far is passed: nothing to watch. "
                          "`grade watch N` watches exercise N anyway.")
            return EXIT_PASSED
    else:
        exercise = _exercise(args.number)
        if not available(exercise):
            raise UsageError(f"exercise {exercise.number} cannot be graded yet ({exercise.spec_file.name} or "
                             f"{exercise.learner_file} is missing)")
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        console.print("grade watch needs the watchfiles package: `pip install watchfiles`.", style="red")
        return EXIT_FAILED
    session = regrade_on_save.Session(exercise, grade=regrade_on_save.isolated_grader(interpreter=args.interpreter,
                                                                         timeout=args.timeout),
                               console=console, follow=args.number is None)
    return regrade_on_save.watch_loop(regrade_on_save.file_changes(exercise.learner_path.parent), session)


def cmd_solution(args, console: Console) -> int:
    from grader.commands import progress_file, solution_view, workspace

    exercise = _exercise(args.number)
    html_path = Path(args.html) if args.html else None
    if html_path is not None and html_path.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--html takes an .html file, not {html_path.name}")
    if not exercise.solution_path.is_file():
        console.print(f"Exercise {exercise.number} has no reference solution yet ({exercise.solution_file}).")
        return EXIT_FAILED
    entry = progress_file.load().exercise(exercise.number)
    if entry.get("state") != "passed" and not args.force:
        so_far = ("you have not graded it yet" if not entry.get("state") else
                  f"your last run, {entry.get('last_run', 'recently')}, did not pass")
        console.print(Text(
            f"The reference for exercise {exercise.number} is shown once your own file passes, and {so_far}. "
            f"Run `grade exercise {exercise.number}` until it passes; `grade hint {exercise.number}` gives the "
            f"next hint. (Instructors: `grade solution {exercise.number} --force`.)", style="yellow"))
        return EXIT_FAILED
    commentary, code = workspace.split_solution(exercise.solution_path.read_text(encoding="utf-8"))
    forced = entry.get("state") != "passed"
    if html_path is not None:
        solution_view.write_html(html_path, title=f"Exercise {exercise.number} · {exercise.title} · reference",
                                 commentary=commentary, code=code)
        if forced:
            console.print(Text("Written with --force: exercise not passed in this working tree.", style="yellow"))
        console.print(Text.assemble("wrote ", (_shown(html_path), "bold"), ": open it in a browser"), soft_wrap=True)
        return EXIT_PASSED

    def show() -> None:
        if forced:
            console.print(Text("Shown with --force: exercise not passed in this working tree.", style="yellow"))
        solution_view.render(console, title=exercise.solution_file, commentary=commentary, code=code)
        console.print()
        console.print(Text(f"Compare it with yours: diff -u {exercise.learner_file} {exercise.solution_file} · the "
                           f"page docs/{exercise.docs_page} explains the choices.", style="dim"), soft_wrap=True)

    if console.is_terminal and sys.stdout.isatty() and not args.no_pager:
        # less shows the colours (-R), leaves a page that fits the screen at once (-F) and on screen (-X).
        os.environ.setdefault("LESS", "-RFX")
        with console.pager(styles=True):
            show()
    else:
        show()
    return EXIT_PASSED


def cmd_reset(args, console: Console) -> int:
    from grader.commands import progress_file, workspace

    exercise = _exercise(args.number)
    path = exercise.learner_path
    try:
        result = workspace.reset_file(path, backup_dir=progress_file.state_dir() / "backups", ref=args.ref)
    except workspace.WorkspaceError as exc:
        console.print(Text(f"Cannot reset exercise {exercise.number}: {exc}.", style="red"))
        return EXIT_FAILED
    if not result.changed:
        console.print(f"Nothing to reset: {exercise.learner_file} is already the stub as committed ({args.ref}).")
        return EXIT_PASSED
    if result.backup is not None:
        # soft_wrap: a path must stay one copyable string, never broken by rich's wrapping
        console.print(Text.assemble("Your file was saved to ", (_shown(result.backup), "bold"), "."), soft_wrap=True)
    console.print(f"{exercise.learner_file} is the stub again (from git, {args.ref}). Your progress and hints "
                  f"are kept; `grade exercise {exercise.number}` grades the fresh stub.")
    return EXIT_PASSED


def cmd_bench(args, console: Console) -> int:
    exercise = _exercise(args.number)
    path = _learner_file(args, exercise)
    from grader.commands import bench_sweep

    try:
        return bench_sweep.run(exercise.number, path.resolve(), console, out_dir=Path(args.out) if args.out else None,
                         compile=not args.no_compile, dtype_name=args.dtype)
    except bench_sweep.BenchUnavailable as exc:
        console.print(Text(f"{str(exc).rstrip('.')}.", style="yellow"))
        return EXIT_FAILED


def cmd_batch(args, console: Console) -> int:
    import time

    from grader.commands import batch, progress_file

    exercise = _exercise(args.exercise)
    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"no folder at {folder}: batch takes a folder of submissions (*.py)")
    paths = batch.submissions_in(folder)
    if not paths:
        raise UsageError(f"no *.py files in {folder}")
    if not exercise.spec_file.is_file():
        raise UsageError(f"exercise {exercise.number} has no checks yet ({exercise.spec_file} is missing)")
    if args.jobs < 1 or args.points <= 0:
        raise UsageError("--jobs must be at least 1 and --points positive")
    _positive(args.timeout, "--timeout")
    _positive(args.file_timeout, "--file-timeout")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    out = Path(args.out) if args.out else (progress_file.state_dir() / "batch" /
                                           f"ex{exercise.number:02d}-{time.strftime('%Y%m%d-%H%M%S')}")
    console.print(Text(f"Grading {len(paths)} submission{'s' if len(paths) != 1 else ''} to exercise "
                       f"{exercise.number} with seed {seed} …", style="dim"))

    def done(sub: batch.Submission) -> None:
        mark = Text("✓ ", style="bold green") if sub.passed else Text("✗ ", style="bold red")
        first = (sub.failures() or [""])[0]
        console.print(Text.assemble(mark, (sub.path.name, "bold"),
                                    f"  {sub.score(args.points):g}/{args.points:g}  ({sub.seconds:.0f} s)",
                                    (f"  {first[:160]}" if first else "", "dim")))

    try:
        writer = batch.OutputWriter(out, exercise, seed=seed, points=args.points, select=args.select,
                                    gradescope_format=args.gradescope, expected=len(paths),
                                    report=Path(args.report) if args.report else None)
    except batch.OutputError as exc:
        raise UsageError(str(exc)) from None

    def graded(sub: batch.Submission) -> None:
        writer.add(sub)  # written as each submission ends: an interrupted batch keeps what was graded
        done(sub)

    subs = batch.grade_all(paths, exercise, seed=seed, interpreter=args.interpreter, timeout=args.timeout,
                           file_timeout=args.file_timeout, select=args.select, jobs=args.jobs, on_done=graded,
                           strict=not args.lenient, hide=(str(folder.resolve()), str(out.resolve())) + _hidden_state())
    written = writer.finish(subs)
    from grader.learner import sandbox

    for level in sorted({s.run.sandbox for s in subs if s.run is not None and s.run.sandbox}):
        if not sandbox.is_full(level):  # the class's code ran with less than the full sandbox: say so
            console.print(Text(f"The submissions ran {level}.", style="yellow"), soft_wrap=True)
    for problem in writer.problems:
        console.print(Text(problem, style="yellow"), soft_wrap=True)
    passed = sum(1 for s in subs if s.passed)
    console.print(f"{passed} of {len(subs)} submissions passed. Replay one with "
                  f"`grade exercise {exercise.number} --from FILE --seed {seed}`.")
    for path in written:
        console.print(f"wrote {_shown(path)}", soft_wrap=True)
    return EXIT_PASSED if passed == len(subs) else EXIT_FAILED


def _shown(path: Path) -> str:
    """A path relative to the current folder where it is inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def cmd_doctor(args, console: Console) -> int:
    from grader import device
    from grader.learner import mode as modes

    selected = modes.select(force_interpreter=args.interpreter)
    card = device.current(force_interpreter=args.interpreter)
    rows: list[tuple[str, str]] = [("python", sys.version.split()[0]), ("torch", _installed("torch"))]
    try:
        import triton

        rows.append(("triton", triton.__version__))
    except Exception as exc:
        rows.append(("triton", f"cannot import: {exc}"))
    rows.append(("mode", "gpu" if selected == "gpu" else "interpreter (TRITON_INTERPRET=1): correctness only, "
                 "performance not measured"))
    rows += card.describe()
    if card.gpu:
        import torch

        from grader import bandwidth

        rows.append(("runtime (torch)", f"HIP {torch.version.hip}" if card.backend == "hip" else f"CUDA {torch.version.cuda}"))
        rows.append(("ceiling cache", str(bandwidth.cache_path())))
        ceiling, cached = bandwidth.measure_ceiling(refresh=args.refresh)
        share = f", {ceiling.ceiling_gbps / card.peak_gbps:.0%} of the datasheet" if card.peak_gbps else ""
        rows.append(("measured ceiling", f"{ceiling.ceiling_gbps:.0f} GB/s (copy {ceiling.copy_gbps:.0f}, add "
                     f"{ceiling.add_gbps:.0f}; {ceiling.buffer_bytes / 2**20:.0f} MiB buffers{share}; "
                     f"{'cached ' + ceiling.measured_at if cached else 'measured now'})"))
    else:
        from grader.learner import interpreter_fixes

        fixes = interpreter_fixes.apply()
        names = {"bf16": "bf16 as on a GPU", "loop_variables": "loop variables as Triton scalars",
                 "loop_bounds": "loop bounds computed in the kernel",
                 "bool_arguments": "plain bool arguments as the compiler takes them",
                 "constexpr_globals": "globals held to the compiler's rule",
                 "kernel_arguments": "kernel arguments held to the compiler's rule",
                 "watched_programs": "the kernel's programs watched as your code",
                 "helper_calls": "jitted helpers called without patching triton.language again"}
        installed = [names[k] for k, v in fixes.items() if v]
        line = ", ".join(installed) if installed else "none"
        if not fixes["bf16"]:
            line += f"; {interpreter_fixes.BF16_ON_GPU_ONLY}"
        rows.append(("interpreter fixes", line + " (docs/grading.md, section 7)"))
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    return EXIT_PASSED


def _installed(package: str) -> str:
    """A package's version without importing it (importing torch alone takes seconds)."""
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def cmd_check_course(args, console: Console) -> int:
    from grader.commands import course_check

    found = course_check.problems()
    graded = ""
    if args.grade is not None and not found:
        exercises = [e for e in catalogue.EXERCISES if not args.grade or e.number in args.grade]
        found = course_check.grading_problems(catalogue.ROOT, exercises,
                                              report=lambda line: console.print(line, soft_wrap=True))
        graded = f"; every stub fails and every solution passes ({len(exercises)} graded)"
    if not found:
        console.print(f"check-course: OK, {len(catalogue.EXERCISES)} exercises, every manifest, stub, solution, "
                      f"spec, page and measurement in place{graded}", soft_wrap=True)
        return EXIT_PASSED
    console.print(Text(f"check-course: {len(found)} thing{'s' if len(found) != 1 else ''} missing", style="red"), soft_wrap=True)
    for problem in found:
        console.print(Text(f"- {problem}"), soft_wrap=True)
    return EXIT_FAILED


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
    p.add_argument("--file-timeout", type=float, help="seconds the whole file may take, import and exit included "
                   "(default: 900)")
    p.add_argument("--strict", action="store_true", help="refuse the file, as `grade batch` does, when the honesty "
                   "check finds code a learner file never needs")
    p.add_argument("--traffic", action="store_true",
                   help="on a GPU, also count the bytes your kernel moves (in Triton's interpreter, small shape); "
                        "shows every tensor's count")
    p.add_argument("--verbose", action="store_true", help="the detail of checks that passed too (every tensor's "
                   "bytes in the traffic check)")
    p.set_defaults(handler=cmd_exercise)

    p = sub.add_parser("show", help="draw which elements your kernel read and wrote, program by program")
    p.add_argument("number", type=int)
    p.add_argument("--from", dest="from_path", metavar="PATH", help="draw this file instead of exercises/exNN_*.py")
    p.add_argument("--size", metavar="SIZE",
                   help="the input, as the exercise reads it: N for exercise 1 (default 1500), M,N,ROW_STRIDE "
                        "for the softmax exercises (default 5,781,1000 for exercise 3), S,D,KEY_LEN for exercise 7")
    p.add_argument("--out", metavar="FILE", help="also draw the map into FILE (.png or .svg)")
    p.add_argument("--json", action="store_true", help="print the map as JSON instead of drawing it")
    p.add_argument("--timeout", type=float, help="seconds the call may take (default 120)")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("watch", help="re-grade an exercise every time you save it (Ctrl-C to stop)")
    p.add_argument("number", type=int, nargs="?",
                   help="the exercise (default: the first one not passed yet, moving on after each pass)")
    p.add_argument("--interpreter", action="store_true", help="use Triton's interpreter even where a GPU exists")
    p.add_argument("--timeout", type=float, help="seconds one check may run")
    p.set_defaults(handler=cmd_watch)

    p = sub.add_parser("hint", help="the next hint for exercise N")
    p.add_argument("number", type=int)
    p.add_argument("--all", action="store_true", help="show every hint at once")
    p.add_argument("--reset", action="store_true", help="start the hints over from the first")
    p.set_defaults(handler=cmd_hint)

    p = sub.add_parser("solution", help="the reference solution of exercise N, once yours passes")
    p.add_argument("number", type=int)
    p.add_argument("--force", action="store_true", help="show it anyway (instructors)")
    p.add_argument("--html", metavar="PATH", help="write it as one local HTML page instead (highlighted code, "
                   "commentary)")
    p.add_argument("--no-pager", action="store_true", help="print it all at once, without a pager")
    p.set_defaults(handler=cmd_solution)

    p = sub.add_parser("reset", help="restore the stub of exercise N (your file is backed up first)")
    p.add_argument("number", type=int)
    p.add_argument("--ref", default="HEAD", help="the git commit to take the stub from (default: HEAD)")
    p.set_defaults(handler=cmd_reset)

    p = sub.add_parser("bench", help="GPU: your kernel against PyTorch and the copy ceiling over sizes (table, PNG)")
    p.add_argument("number", type=int)
    p.add_argument("--from", dest="from_path", metavar="PATH", help="bench this file instead of exercises/exNN_*.py")
    p.add_argument("--out", metavar="DIR", help="folder for the JSON and PNG (default: .grade/bench)")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (it compiles once per size)")
    p.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], help="element type (default: the exercise's)")
    p.set_defaults(handler=cmd_bench)

    p = sub.add_parser("batch", help="instructors: grade every *.py in DIR; CSV, JSON, Gradescope results")
    p.add_argument("folder", metavar="DIR")
    p.add_argument("--exercise", type=int, required=True, metavar="N")
    p.add_argument("--gradescope", action="store_true", help="also write Gradescope's results.json")
    p.add_argument("--out", metavar="DIR", help="output folder (default: .grade/batch/exNN-<time>)")
    p.add_argument("--report", metavar="FILE.html", help="also write the class report: scores, ranks, the "
                   "class's common mistakes, speeds against the floor (one HTML file)")
    p.add_argument("--seed", type=int, help="the inputs' seed, the same for every submission (default: random)")
    p.add_argument("--points", type=float, default=100.0, help="what a fully passing submission scores (100)")
    p.add_argument("--jobs", type=int, default=1, help="submissions graded at once (each in its own process)")
    p.add_argument("--select", metavar="EXPR", help="only the checks matching this pytest -k expression")
    p.add_argument("--interpreter", action="store_true", help="use Triton's interpreter even where a GPU exists")
    p.add_argument("--timeout", type=float, help="seconds one check may run")
    p.add_argument("--file-timeout", type=float, help="seconds one submission may take in all (default: 900)")
    p.add_argument("--lenient", action="store_true", help="grade files the honesty check refuses (a warning instead)")
    p.set_defaults(handler=cmd_batch)

    p = sub.add_parser("doctor", help="GPU, driver, versions, mode, datasheet peak and measured ceiling")
    p.add_argument("--interpreter", action="store_true", help="report as if no GPU were present")
    p.add_argument("--refresh", action="store_true", help="measure the ceiling again instead of using the cache")
    p.set_defaults(handler=cmd_doctor)

    p = sub.add_parser("check-course", help="maintainers: every exercise's manifest, stub, solution, spec, page and "
                                            "measurement in place")
    p.add_argument("--grade", nargs="*", type=int, metavar="N",
                   help="also grade every stub (it must fail with \"not implemented yet\") and every solution (it "
                        "must pass) in Triton's interpreter, or those of exercises N only: minutes for the course")
    p.set_defaults(handler=cmd_check_course)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2), returned so tests can call main()
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console(highlight=False)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    if catalogue.LOAD_ERROR is not None and args.handler is not cmd_check_course:
        Console(stderr=True, highlight=False).print(Text(f"grade: {catalogue.LOAD_ERROR}", style="red"), soft_wrap=True)
        return EXIT_FAILED
    from grader.commands import isolation
    from grader.learner import sandbox

    problem = sandbox.setting_problem()
    if problem is not None:
        Console(stderr=True, highlight=False).print(Text(f"grade: {problem}", style="red"), soft_wrap=True)
        return EXIT_USAGE
    sandbox.make_undumpable()  # the learner's process cannot read this process's memory or pipes
    import threading

    previous = ({sig: signal.signal(sig, _interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
                if threading.current_thread() is threading.main_thread() else {})
    try:
        return args.handler(args, console)
    except UsageError as exc:
        Console(stderr=True, highlight=False).print(Text(f"grade: {exc}", style="red"))
        return EXIT_USAGE
    except KeyboardInterrupt:
        isolation.stop_all()
        return 130
    except SystemExit as exc:
        isolation.stop_all()
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupted(signum, frame):
    """SIGTERM or SIGHUP (a CI cancel, a closed terminal): unwind, so every process and temporary
    folder of the run is cleaned up on the way out."""
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
