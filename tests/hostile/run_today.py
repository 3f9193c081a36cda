"""Grade every hostile file of tests/hostile/ with the grader as it is, and write the table of what happened.

    PYTHONPATH=. python tests/hostile/run_today.py [--jobs 2] [--only TEXT] [--out tests/hostile/TODAY.md]
                                                   [--json FILE] [--gpu] [--keep]
    PYTHONPATH=. python tests/hostile/run_today.py --index    # rewrite README.md's list of files from their constants

Every file is graded in a scratch copy of the repository (``grader/`` and ``pyproject.toml`` copied
to a fresh folder under the system's temporary folder), never in this checkout, because some
files edit the grader, the class folder or the output folder:

* ``exNN/*.py``: ``grade exercise N --from FILE --interpreter --json --timeout 30``;
* ``robustness/*.py``: the same for exercise 1 (and, for the latin-1 file, ``grade batch`` too);
* ``batch/*.py``: ``grade batch CLASS --exercise 1 --gradescope --interpreter`` on a class folder made
  of the file and the classmates its ``CLASS`` names, and, once per classmate, the same batch of
  that classmate alone (the verdict it must keep).

Every run has a wall clock (the file's ``WALL_SECONDS``, else ``--wall``). Every process a run
starts carries an environment variable with a token of this run (``HOSTILE_RUN_MARKER``); after the
run, any process still carrying it is reported (an attack that outlives grading) and killed with
SIGKILL, ``setsid`` daemons included. Nothing else is ever signalled.

The table says, per file: its kind, today's verdict (PASSED / FAILED / hang / crash, or the batch's
outcome), the seconds it took, and what went wrong, checked against what the file declares
(``TODAY`` for robustness and batch files; a verdict of PASSED for the others).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.hostile_corpus import HostileFile, corpus

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MARKER = "HOSTILE_RUN_MARKER"
SEED = 20261130
CHECK_TIMEOUT = 30
DEFAULT_WALL = 1200  # seconds for one grading run of an exercise file (slow when the machine is shared)
BATCH_WALL = 900


def hostile_files(only: str | None) -> list[HostileFile]:
    """The exercise attacks and the robustness and batch files (the sandbox files have their own test)."""
    files = [f for f in corpus() if f.folder != "sandbox"]
    return [f for f in files if only in f.id] if only else files


# --- processes ----------------------------------------------------------------------------------------

def marked_processes(token: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose environment carries this run's token."""
    needle = f"{MARKER}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                found.append((int(entry.name), command))
        except OSError:
            continue
    return found


def kill_marked(token: str) -> None:
    for _ in range(50):
        left = marked_processes(token)
        if not left:
            return
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


@dataclass
class Run:
    returncode: int | None  # None: stopped by the wall clock
    seconds: float
    max_rss_bytes: int
    stdout: str
    stderr_tail: str
    #: At the wall clock: did the command end within TERM_GRACE seconds of SIGTERM (a CI cancel)?
    ended_on_sigterm: bool | None = None


#: Seconds between SIGTERM and SIGKILL at the wall clock.
TERM_GRACE = 5.0


def run_command(argv: list[str], *, cwd: Path, env: dict, wall: float, logs: Path) -> Run:
    """Run ``argv`` in its own process group with a wall clock; its own peak memory from wait4."""
    started = time.monotonic()
    with open(logs / "stdout.txt", "wb") as out, open(logs / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    status = rusage = None
    ended_on_sigterm = None
    while time.monotonic() - started < wall:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.1)
    else:
        # As a CI cancel would: SIGTERM to the command's process group, then SIGKILL.
        os.killpg(proc.pid, signal.SIGTERM)
        grace = time.monotonic() + TERM_GRACE
        pid = 0
        while not pid and time.monotonic() < grace:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            time.sleep(0.1)
        ended_on_sigterm = bool(pid)
        if not pid:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, rusage = os.wait4(proc.pid, 0)
        status = None
    proc.returncode = None if status is None else os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    return Run(proc.returncode, seconds, rusage.ru_maxrss * 1024, (logs / "stdout.txt").read_text(errors="replace"),
               _tail(logs / "stderr.txt"), ended_on_sigterm)


def _tail(path: Path, size: int = 4000) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - size))
        return f.read().decode(errors="replace")


# --- scratch copies ---------------------------------------------------------------------------------------

class Scratch:
    """A throwaway copy of the grader (and an environment whose processes carry a token)."""

    def __init__(self, keep: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="hostile-"))
        self.repo = self.dir / "repo"
        self.repo.mkdir()
        shutil.copytree(ROOT / "grader", self.repo / "grader", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "pyproject.toml", self.repo / "pyproject.toml")
        self.tmp = self.dir / "tmp"
        self.tmp.mkdir()
        self.state = self.dir / "state"
        self.logs = self.dir / "logs"
        self.logs.mkdir()
        self.token = uuid.uuid4().hex
        self.keep = keep

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in {"TRITON_INTERPRET", "PYTHONPATH"}}
        env.update(PYTHONPATH=str(self.repo), TMPDIR=str(self.tmp), GRADE_STATE_DIR=str(self.state),
                   PYTHONDONTWRITEBYTECODE="1", **{MARKER: self.token})
        return env

    def grader_digest(self) -> dict[str, str]:
        return {str(p.relative_to(self.repo)): _digest(p) for p in sorted((self.repo / "grader").rglob("*.py"))}

    def leftovers(self) -> tuple[list[tuple[int, str]], list[str]]:
        """Processes still carrying the token, and temporary folders the grader left behind."""
        return marked_processes(self.token), sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("grade-"))

    def close(self) -> None:
        kill_marked(self.token)
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def grade_command(*args: str, gpu: bool) -> list[str]:
    return [sys.executable, "-m", "grader.commands.cli", *args, *([] if gpu else ["--interpreter"])]


# --- one file ------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    file: str
    kind: str
    verdict: str
    seconds: float
    defeated: bool
    what: str
    details: dict = field(default_factory=dict)


def _verdict(run: Run) -> tuple[str, dict | None]:
    if run.returncode is None:
        return "hang", None
    try:
        report = json.loads(run.stdout)
    except ValueError:
        return "crash", None
    if run.returncode not in (0, 1):
        return "crash", report
    return ("PASSED" if report.get("passed") else "FAILED"), report


def _summary(report: dict | None) -> str:
    if not report:
        return ""
    checks = report.get("checks", [])
    counted = [c for c in checks if not c.get("skipped")]
    passed = sum(1 for c in counted if c.get("passed"))
    text = f"{passed} of {len(counted)} checks passed"
    failing = [c for c in counted if not c.get("passed")]
    if failing:
        first = failing[0]
        text += f"; first failure `{first['name']}`: {first.get('message') or '(no sentence)'}"
    return text


def _shorten(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_exercise_file(hostile: HostileFile, args) -> Outcome:
    number, meta = hostile.exercise, hostile.meta
    scratch = Scratch(args.keep)
    try:
        submission = hostile.copy_into(scratch.dir / "submission")
        wall = meta.get("WALL_SECONDS", args.wall)
        argv = grade_command("exercise", str(number), "--from", str(submission), "--json", "--timeout",
                             str(CHECK_TIMEOUT), "--seed", str(SEED), gpu=args.gpu)
        run = run_command(argv, cwd=scratch.repo, env=scratch.env(), wall=wall, logs=scratch.logs)
        time.sleep(2)  # give anything the file started time to show itself
        processes, temps = scratch.leftovers()
        verdict, report = _verdict(run)
        kind = meta.get("KIND", "?")
        today = meta.get("TODAY", "passes")
        notes = []
        if verdict == "hang":
            notes.append(f"no verdict after {wall:.0f} s: stopped by the wall clock (SIGTERM to `grade`"
                         + (", which exited" if run.ended_on_sigterm else ", then SIGKILL") + ")")
        elif verdict == "crash":
            notes.append(f"exit status {run.returncode}: {_shorten(run.stderr_tail[-300:])}")
        else:
            notes.append(_summary(report) or "no checks reported")
        if processes and verdict == "hang":
            notes.append(f"after that, {len(processes)} process(es) of the run still alive (the grader's child, "
                         "orphaned; killed here)")
        elif processes:
            notes.append(f"{len(processes)} process(es) still running after `grade` exited "
                         f"({_shorten(processes[0][1], 80)})")
        if temps:
            notes.append(f"left {len(temps)} temporary folder(s) of the grader ({', '.join(temps[:3])})")
        peak = run.max_rss_bytes
        if peak > 1 << 30:
            notes.append(f"the `grade` process peaked at {peak / 2**30:.1f} GiB")
        defeated = {
            "passes": verdict == "PASSED",
            "hang": verdict == "hang",
            "memory": peak >= 1.5 * meta.get("STDERR_BYTES", 1 << 62),
            "no_reason": verdict == "FAILED" and not _has_sentence(report),
            "wrong_sentence": meta.get("TODAY_SENTENCE", "\0") in json.dumps(report or {}),
            "orphan": bool(processes),
        }.get(today, False)
        if today == "no_reason" and defeated:
            notes[0] = "FAILED with no sentence: " + notes[0]
        outcome = Outcome(f"{hostile.id}.py", kind, verdict, round(run.seconds, 1), defeated,
                          "; ".join(notes), {"returncode": run.returncode, "peak_rss_bytes": peak,
                                             "processes_left": len(processes), "temp_left": temps})
        if today == "batch_rejects":
            outcome = _also_in_batch(submission, outcome, args)
        return outcome
    finally:
        scratch.close()


def _has_sentence(report: dict | None) -> bool:
    return bool(report) and any(c.get("message") for c in report.get("checks", []) if not c.get("passed"))


def _also_in_batch(path: Path, outcome: Outcome, args) -> Outcome:
    """The latin-1 file: graded alone it passes; in `grade batch` it must pass too."""
    result = run_batch({"a_latin1.py": path}, args, wall=BATCH_WALL)
    row = result["rows"].get("a_latin1.py", {})
    rejected = row.get("passed") != "True"
    outcome.verdict = f"exercise: {outcome.verdict}; batch: {'FAILED' if rejected else 'PASSED'}"
    outcome.what = (f"`grade exercise`: {outcome.what}; `grade batch`: score {row.get('score', '?')}/"
                    f"{row.get('max_score', '?')}, {_shorten(row.get('first_failure') or '', 160)}")
    outcome.defeated = outcome.verdict.startswith("exercise: PASSED") and rejected
    outcome.seconds = round(outcome.seconds + result["seconds"], 1)
    return outcome


# --- batches ----------------------------------------------------------------------------------------------

def run_batch(members: dict[str, Path], args, *, wall: float, settle: float = 2.0) -> dict:
    """Grade a class folder made of ``members`` (name -> source file) and observe everything around it."""
    scratch = Scratch(args.keep)
    try:
        folder = scratch.dir / "class"
        folder.mkdir()
        for name, source in members.items():
            shutil.copy(source, folder / name)
        before_class = {p.name: _digest(p) for p in folder.iterdir()}
        before_grader = scratch.grader_digest()
        out = scratch.dir / "out"
        argv = grade_command("batch", str(folder), "--exercise", "1", "--out", str(out), "--gradescope", "--seed",
                             str(SEED), "--timeout", str(CHECK_TIMEOUT), gpu=args.gpu)
        run = run_command(argv, cwd=scratch.repo, env=scratch.env(), wall=wall, logs=scratch.logs)
        rows_at_exit = _csv_rows(out / "summary.csv")
        time.sleep(settle)
        processes, temps = scratch.leftovers()
        after_class = {p.name: _digest(p) for p in folder.iterdir() if p.is_file()}
        after_grader = scratch.grader_digest()
        stolen = sorted(p.name for p in (scratch.dir / "stolen").glob("*")) if (scratch.dir / "stolen").exists() else []
        return {
            "returncode": run.returncode,
            "seconds": round(run.seconds, 1),
            "stderr_tail": run.stderr_tail,
            "rows_at_exit": rows_at_exit,
            "rows": _csv_rows(out / "summary.csv"),
            "summary_json": (out / "summary.json").is_file(),
            "summary_json_is_dir": (out / "summary.json").is_dir(),
            "gradescope": sorted(str(p.relative_to(out)) for p in out.rglob("*.results.json")) if out.exists() else [],
            "changed_class_files": sorted(n for n in before_class if before_class[n] != after_class.get(n)),
            "changed_grader_files": sorted(n for n in before_grader if before_grader[n] != after_grader.get(n)),
            "stolen": stolen,
            "processes_left": [c for _, c in processes],
            "temp_left": temps,
        }
    finally:
        scratch.close()


def _csv_rows(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


_ALONE: dict[str, dict] = {}


def grade_classmates_alone(files: list[HostileFile], args) -> None:
    """Each classmate a batch file names, graded as the only file of its batch: the verdict it must keep."""
    sources = sorted({source for hostile in files if hostile.folder == "batch"
                      for source in hostile.meta.get("CLASS", {}).values() if source is not None})

    def one(source: str) -> None:
        _ALONE[source] = run_batch({"b_alone.py": ROOT / source}, args, wall=BATCH_WALL)["rows"].get("b_alone.py", {})
        row = _ALONE[source]
        print(f"{source:45s} alone: {row.get('score', '?')}/{row.get('max_score', '?')}", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, sources))


def run_batch_file(hostile: HostileFile, args) -> Outcome:
    path, meta = hostile.path, hostile.meta
    members = {name: (path if source is None else ROOT / source) for name, source in meta["CLASS"].items()}
    own = next(name for name, source in meta["CLASS"].items() if source is None)
    result = run_batch(members, args, wall=meta.get("WALL_SECONDS", BATCH_WALL), settle=meta.get("SETTLE_SECONDS", 2))
    rows, at_exit = result["rows"], result["rows_at_exit"]
    notes = []
    rc = result["returncode"]
    if rc is None:
        verdict = "hang"
    elif rc < 0:
        verdict = f"batch killed by signal {-rc}"
    elif "Traceback" in result["stderr_tail"]:
        verdict = f"batch crashed (exit status {rc})"
    else:
        verdict = f"batch finished (exit status {rc})"
    for name in members:
        row = rows.get(name)
        shown = f"{row['score']}/{row['max_score']}" if row else "no row"
        line = f"`{name}` {shown}"
        if name != own and meta["CLASS"][name] is not None:
            reference = _ALONE.get(meta["CLASS"][name], {})
            line += f" (alone: {reference.get('score', '?')}/{reference.get('max_score', '?')})"
        if name == own and row and at_exit.get(name) and at_exit[name]["score"] != row["score"]:
            line += f", rewritten after the batch exited (it wrote {at_exit[name]['score']})"
        notes.append(line)
    if not rows:
        notes.append("no summary.csv written")
    if result["summary_json_is_dir"]:
        notes.append("summary.json is a directory, no Gradescope results written" if not result["gradescope"]
                     else "summary.json is a directory")
    if "Traceback" in result["stderr_tail"]:
        last = [line for line in result["stderr_tail"].splitlines() if line.strip()][-1]
        notes.append(f"the batch ended with: {_shorten(last, 120)}")
    if result["changed_class_files"]:
        notes.append(f"class files changed: {', '.join(result['changed_class_files'])}")
    if result["changed_grader_files"]:
        notes.append(f"grader files changed on disk: {', '.join(result['changed_grader_files'])}")
    if result["stolen"]:
        notes.append(f"{len(result['stolen'])} classmate file(s) copied beside the class folder "
                     f"({', '.join(result['stolen'])})")
    own_row = rows.get(own, {})
    if meta.get("TODAY") == "steals" and "def add" in (own_row.get("first_failure") or ""):
        notes.append("a classmate's source is in the thief's own first_failure")
    if result["processes_left"]:
        notes.append(f"{len(result['processes_left'])} process(es) still running after the settle time")
    today = meta.get("TODAY")
    victims = [n for n in members if n != own]
    defeated = {
        "steals": bool(result["stolen"]) or "def add" in (own_row.get("first_failure") or ""),
        "sabotages": any(n in result["changed_class_files"] and rows.get(n, {}).get("score") in ("0.0", "0")
                         for n in victims),
        "forges_score": bool(own_row) and own_row.get("score") == own_row.get("max_score")
                        and at_exit.get(own, {}).get("score") != own_row.get("score"),
        "edits_grader": bool(result["changed_grader_files"])
                        and any(rows.get(n, {}).get("passed") == "True" for n in victims),
        "crashes_batch": result["summary_json_is_dir"] and not result["summary_json"],
        "kills_batch": rc is not None and rc < 0 and not rows,
    }.get(today, False)
    return Outcome(f"{hostile.id}.py", meta.get("KIND", "batch"), verdict, result["seconds"], defeated,
                   "; ".join(notes), {k: v for k, v in result.items() if k != "stderr_tail"})


# --- the table ----------------------------------------------------------------------------------------------

def run_one(hostile: HostileFile, args) -> Outcome:
    started = time.monotonic()
    try:
        if hostile.folder == "batch":
            outcome = run_batch_file(hostile, args)
        else:
            outcome = run_exercise_file(hostile, args)
    except Exception as exc:  # the runner's own failure on one file: say so, go on with the others
        outcome = Outcome(f"{hostile.id}.py", hostile.kind or "?", "runner error",
                          round(time.monotonic() - started, 1), False, f"{type(exc).__name__}: {exc}")
    mark = "defeated" if outcome.defeated else "NOT DEFEATED"
    print(f"{outcome.file:45s} {outcome.verdict:28s} {outcome.seconds:7.1f} s  {mark}", flush=True)
    return outcome


def versions(args) -> str:
    probe = ("import sys, torch, triton; print(f'Python {sys.version.split()[0]}, torch {torch.__version__}, "
             "Triton {triton.__version__}')")
    try:
        text = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300).stdout
    except subprocess.TimeoutExpired:
        text = ""
    return text.strip() or "versions unknown"


def write_table(outcomes: list[Outcome], path: Path, args, started: str, seconds: float) -> None:
    mode = "GPU" if args.gpu else "Triton's interpreter (`--interpreter`)"
    try:
        # The last commit that changed grader/ (the files graded here are committed later than that).
        commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "grader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    defeated = sum(o.defeated for o in outcomes)
    lines = [
        "# What today's grader does with the hostile files",
        "",
        f"Written by `tests/hostile/run_today.py` on {started} ({seconds / 60:.0f} minutes): {defeated} of "
        f"{len(outcomes)} files defeat the grader as of commit {commit} (its last change). {mode}; {versions(args)}; "
        f"{platform.machine()}, {os.cpu_count()} cores (shared with other jobs: the seconds are not benchmarks). "
        f"Each exercise file: `grade exercise N --from FILE --interpreter --json --timeout {CHECK_TIMEOUT} "
        f"--seed {SEED}` in a scratch copy of the grader; each batch file: `grade batch` of its class folder "
        "(`--gradescope`), its classmates also graded alone for comparison.",
        "",
        "A file *defeats* today's grader when an exercise attack is graded PASSED, or when a robustness or batch "
        "file does what its `TODAY` constant declares (hang, process left behind, memory, wrong or missing "
        "sentence, stolen or destroyed files, a rewritten score, an edited grader, a crashed or killed batch). "
        "What a sound grader must do with each file is in README.md.",
        "",
        "| file | kind | today's verdict | seconds | defeated | what happened |",
        "|---|---|---|---:|---|---|",
    ]
    for o in outcomes:
        what = o.what.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{o.file}` | {o.kind} | {o.verdict} | {o.seconds:.0f} | {'yes' if o.defeated else '**no**'} "
                     f"| {what} |")
    path.write_text("\n".join(lines) + "\n")


INDEX_START, INDEX_END = "<!-- files: written by run_today.py --index -->", "<!-- end of files -->"


def write_index(readme: Path) -> None:
    """README.md's list of files, one line each, from the constants every file declares."""
    rows = ["| file | kind | wrong underneath | attack | what a sound grader must do |", "|---|---|---|---|---|"]
    for hostile in hostile_files(None):
        meta = hostile.meta
        cells = [f"`{hostile.id}.py`", meta.get("KIND", "?"), "yes" if meta.get("WRONG_UNDERNEATH") else "no",
                 meta.get("ATTACK", ""), meta.get("REJECTED_BY", "")]
        rows.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    text = readme.read_text()
    head, rest = text.split(INDEX_START, 1)
    tail = rest.split(INDEX_END, 1)[1]
    readme.write_text(head + INDEX_START + "\n" + "\n".join(rows) + "\n" + INDEX_END + tail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="files graded at once (default 2)")
    parser.add_argument("--only", help="only files whose path under tests/hostile/ contains this text")
    parser.add_argument("--out", default=str(HERE / "TODAY.md"), help="the table (default tests/hostile/TODAY.md)")
    parser.add_argument("--json", help="also write every observation to this JSON file")
    parser.add_argument("--gpu", action="store_true", help="grade on the GPU (leave out --interpreter)")
    parser.add_argument("--wall", type=float, default=DEFAULT_WALL, help="seconds one exercise file may take")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (under the temporary folder)")
    parser.add_argument("--index", action="store_true", help="only rewrite README.md's list of files, grade nothing")
    args = parser.parse_args(argv)
    if args.index:
        write_index(HERE / "README.md")
        return 0
    files = hostile_files(args.only)
    started, clock = time.strftime("%Y-%m-%d %H:%M"), time.monotonic()
    print(f"{len(files)} hostile files, {args.jobs} at a time", flush=True)
    grade_classmates_alone(files, args)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda p: run_one(p, args), files))
    write_table(outcomes, Path(args.out), args, started, time.monotonic() - clock)
    if args.json:
        Path(args.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=1, default=str) + "\n")
    missed = [o.file for o in outcomes if not o.defeated]
    print(f"wrote {args.out}: {len(outcomes) - len(missed)} of {len(outcomes)} defeat today's grader"
          + (f"; not: {', '.join(missed)}" if missed else ""))
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
