"""The hostile corpus, read and graded without ever being imported: the attacks on one exercise (its
folder's hostile/, grader/exercises/exNN_slug/hostile/), the attacks on every exercise
(tests/hostile/every_exercise/, one file each, written for every exercise whose hostile/ holds a
carrier.py) and the files that attack no one exercise (tests/hostile/batch, tests/hostile/robustness,
tests/hostile/sandbox).

An attack on every exercise is written as a submission of exercise N from three parts: the attack
(its constants, its `graded_function`), tests/hostile/every_exercise/launch.py (the kernels an attack
launches) and exercise N's carrier.py (the answer computed with torch and numpy, the wrong kernel, and
what else the exercise's file defines), then one line that names `graded_function` as the exercise's
function. Its constants may say `{WRONG_KERNEL}`: the carrier's WRONG_KERNEL fills it in.

Every file declares what it does and what a sound grader must do with it in module-level
constants (tests/hostile/README.md). This module reads those constants from the file's syntax
tree, copies a file into a test's own folder before it is graded (the corpus itself is never
graded in place), and tracks every process a grading run starts: each run carries a token in its
environment, so a `setsid` daemon or a forked child that ignores SIGTERM is still found and killed
afterwards, and nothing else on the machine is ever signalled.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import signal
import time
import tokenize
import uuid
from dataclasses import dataclass
from pathlib import Path

from grader import catalogue

ROOT = catalogue.ROOT
HOSTILE = Path(__file__).resolve().parent / "hostile"
#: The attacks that apply to every exercise with a carrier, and what each of them may launch.
EVERY_EXERCISE = HOSTILE / "every_exercise"
LAUNCH = EVERY_EXERCISE / "launch.py"
#: The file of an exercise's hostile/ that makes the attacks on every exercise into its submissions.
CARRIER = "carrier.py"
#: The exercises whose folders hold hostile files, by the short name their ids use ("ex03/forge_events").
EXERCISE_FOLDERS = {f"ex{e.number:02d}": e.number for e in catalogue.EXERCISES if e.hostile_dir.is_dir()}
#: One check per exercise that every wrong kernel of the corpus fails: a ragged tail past one block
#: (exercises 1 and 2), a row longer than one warp's worth of columns (3), several heads and a
#: sequence that is not a power of two (7), ragged cache lengths over several pages (8), rows of a
#: vocabulary that is not a power of two (10).
ONE_CHECK = {
    1: "matches_reference and n1025 and fp32",
    2: "matches_reference and 5x1025 and fp32",
    3: "matches_reference and n781 and fp32",
    7: "matches_reference and B2-H3-S17-D32 and not causal",
    8: "matches_reference and lens300_3_47_160",
    10: "matches_reference and 6x781-fp32",
}
#: The environment variable that marks every process of one grading run (the sandbox passes it on to
#: the learner's process because the run names it in ``GRADE_SANDBOX_PASS_ENV``).
TOKEN_VARIABLE = "HOSTILE_TEST_TOKEN"
#: Folders of the course that no submission may change.
COURSE_FOLDERS = ("grader", "solutions", "exercises", "tests/hostile")


@dataclass(frozen=True)
class HostileFile:
    path: Path
    meta: dict
    #: The exercise it attacks (None: exercise 1, the exercise of batch/, robustness/ and sandbox/).
    number: int | None = None
    #: For an attack on every exercise, the exercise's carrier.py its submission is written with.
    carrier: Path | None = None

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.path.stem}"

    @property
    def folder(self) -> str:
        """"ex03" for an attack on exercise 3, else the folder under tests/hostile/."""
        return f"ex{self.number:02d}" if self.number else self.path.parent.name

    @property
    def exercise(self) -> int:
        return self.number or 1

    @property
    def kind(self) -> str:
        return self.meta.get("KIND", "")

    @property
    def wrong_underneath(self) -> bool:
        return bool(self.meta.get("WRONG_UNDERNEATH"))

    @property
    def static_flags(self) -> tuple[str, ...]:
        return tuple(self.meta.get("STATIC_FLAGS", ()))

    def source(self) -> bytes:
        """The submission: the file itself, or the attack written for its exercise (module docstring)."""
        if self.carrier is None:
            return self.path.read_bytes()
        parts = [self.path.read_text(encoding="utf-8")]
        for part in (LAUNCH, self.carrier):
            parts.append(f"# --- {part.relative_to(ROOT).as_posix()} ---\n\n{part.read_text(encoding='utf-8')}")
        function = catalogue.get(self.exercise).function
        return ("\n\n".join(parts) + f"\n\n{function} = graded_function\n").encode()

    def copy_into(self, folder: Path, name: str | None = None, *, replace: tuple[str, str] | None = None) -> Path:
        """The submission written into ``folder`` (one line replaced, when a test shrinks a constant)."""
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (name or self.path.name)
        data = self.source()
        if replace is not None:
            old, new = (s.encode() for s in replace)
            assert old in data, f"{self.id} no longer holds {replace[0]!r}"
            data = data.replace(old, new, 1)
        target.write_bytes(data)
        return target


def metadata(path: Path) -> dict:
    """The file's upper-case module constants, evaluated as literals (or plain arithmetic), never run."""
    with tokenize.open(path) as f:
        tree = ast.parse(f.read(), str(path))
    found = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if not name.isupper():
            continue
        try:
            found[name] = ast.literal_eval(node.value)
        except ValueError:
            if _arithmetic(node.value):  # STDERR_BYTES = 2 * 2**30
                found[name] = eval(compile(ast.Expression(node.value), str(path), "eval"), {"__builtins__": {}})
    return found


def _arithmetic(node: ast.AST) -> bool:
    allowed = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop)
    return all(isinstance(n, allowed) for n in ast.walk(node)) and all(
        isinstance(n.value, (int, float)) for n in ast.walk(node) if isinstance(n, ast.Constant))


def _filled(meta: dict, carrier: Path) -> dict:
    """An attack's constants with the carrier's WRONG_KERNEL in place of `{WRONG_KERNEL}`."""
    wrong_kernel = metadata(carrier)["WRONG_KERNEL"]
    return {name: value.replace("{WRONG_KERNEL}", wrong_kernel) if isinstance(value, str) else value
            for name, value in meta.items()}


def corpus() -> list[HostileFile]:
    """Every file of the corpus, in a fixed order (exercises, each by attack name, then batch, robustness,
    sandbox)."""
    attacks = sorted(p for p in EVERY_EXERCISE.glob("*.py") if p != LAUNCH)
    files = []
    for number in EXERCISE_FOLDERS.values():
        folder = catalogue.get(number).hostile_dir
        carrier = folder / CARRIER
        mine = [HostileFile(p, metadata(p), number) for p in folder.glob("*.py") if p.name != CARRIER]
        if carrier.is_file():
            mine += [HostileFile(p, _filled(metadata(p), carrier), number, carrier) for p in attacks]
        files += sorted(mine, key=lambda f: f.path.stem)
    for folder in ("batch", "robustness", "sandbox"):
        files += [HostileFile(p, metadata(p)) for p in sorted((HOSTILE / folder).glob("*.py"))]
    return files


def one(hostile_id: str) -> HostileFile:
    """The file of the corpus with this id ("ex01/thread")."""
    return next(f for f in corpus() if f.id == hostile_id)


def copy_into(source: Path, folder: Path, name: str | None = None) -> Path:
    """A byte-for-byte copy of a course file (a classmate's) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (name or source.name)
    shutil.copyfile(source, target)
    return target


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def course_digest() -> dict[str, str]:
    """A hash of every source file of the course folders a submission could aim at."""
    hashes = {}
    for folder in COURSE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                hashes[str(path.relative_to(ROOT))] = digest(path)
    return hashes


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


# --- processes ----------------------------------------------------------------------------------------

class RunProcesses:
    """The processes of one grading run, found by the token in their environment."""

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        self.marker = f"{TOKEN_VARIABLE}={self.token}".encode()

    def alive(self) -> list[tuple[int, str]]:
        """(pid, command line) of every live process (not a zombie) that carries this run's token."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if self.marker not in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    continue
                stat = Path(f"/proc/{entry}/stat").read_text()
                if stat[stat.rfind(")") + 2:].split()[0] == "Z":
                    continue
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append((int(entry), command.strip()))
            except (OSError, IndexError):
                continue
        return found

    def survivors(self, grace: float = 3.0) -> list[tuple[int, str]]:
        """The processes still alive ``grace`` seconds after the run (a PID namespace takes a moment
        to empty), each then killed with SIGKILL."""
        deadline = time.monotonic() + grace
        left = self.alive()
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = self.alive()
        self.kill()
        return left

    def kill(self) -> None:
        for _ in range(50):
            left = self.alive()
            if not left:
                return
            for pid, _ in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.1)
