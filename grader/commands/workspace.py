"""The learner's files: `grade reset N` (the stub back, the learner's file kept) and `grade solution N`.

Where the pristine stub comes from: the course is a git checkout, and the stub is the file as
committed, ``git show HEAD:exercises/exNN_*.py`` (``--ref`` picks another commit, e.g.
``origin/main`` when the learner has committed their own work). Outside a git checkout, or for a
file git does not track, there is no trustworthy pristine copy, and reset refuses with a sentence
rather than guess.

Never losing work: before anything is overwritten, the learner's file is copied to
``.grade/backups/<stem>.<YYYYmmdd-HHMMSS>[-k].py`` with an exclusive create (an existing backup is
never overwritten; two resets in the same second get ``-2``), flushed to disk, and only then is
the stub written, atomically (a temporary file and `os.replace`). A file that already matches
the stub is left alone: "nothing to reset".

The solution is shown after a pass. Its commentary is the solution's module docstring (what you
learned, with the measured numbers), shown above the code without repeating it.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


class WorkspaceError(Exception):
    """A sentence saying why the command cannot do what was asked; nothing was changed."""


# --- reset ----------------------------------------------------------------------------------------

def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env, timeout=30)
    except FileNotFoundError:
        raise WorkspaceError("`grade reset` takes the stub from git, and git is not installed here: "
                             "copy the stub from the course's repository by hand (your file is untouched)") from None
    except subprocess.TimeoutExpired:
        raise WorkspaceError("git did not answer within 30 s; your file is untouched") from None


def pristine(path: Path, ref: str = "HEAD") -> bytes:
    """The file as committed at ``ref``; WorkspaceError (a sentence) when there is no such copy."""
    folder = path.parent if path.parent.is_dir() else Path.cwd()
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise WorkspaceError(f"{path.parent} is not inside a git checkout, so there is no pristine copy of the "
                             f"stub to restore: download {path.name} from the course's repository instead "
                             "(your file is untouched)")
    root = Path(top.stdout.decode().strip()).resolve()
    try:
        relative = path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise WorkspaceError(f"{path} is outside the git checkout at {root}; your file is untouched") from None
    shown = _git(["show", f"{ref}:{relative}"], root)
    if shown.returncode != 0:
        said = shown.stderr.decode(errors="replace").strip().splitlines()
        raise WorkspaceError(f"git has no copy of {relative} at {ref} ({said[-1] if said else 'no detail'}): "
                             "nothing to restore it from; your file is untouched")
    return shown.stdout


def backup_path(backup_dir: Path, path: Path, stamp: str | None = None) -> Path:
    """A name for a new backup that does not exist yet (claimed by creating it empty)."""
    backup_dir.mkdir(parents=True, exist_ok=True)
    stamp = stamp or time.strftime("%Y%m%d-%H%M%S")
    for k in range(1, 10_000):
        candidate = backup_dir / f"{path.stem}.{stamp}{'' if k == 1 else f'-{k}'}{path.suffix}"
        try:
            with open(candidate, "xb"):
                return candidate
        except FileExistsError:
            continue
    raise WorkspaceError(f"too many backups named {path.stem}.{stamp}* in {backup_dir}")


def _write_durably(path: Path, data: bytes, *, exclusive_target: bool = False) -> None:
    """Write ``data`` to ``path``: flushed to disk; through a temporary file unless it is a fresh claim."""
    if exclusive_target:  # the backup: its name was claimed by backup_path, fill it in
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, path.stat().st_mode)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass
class ResetResult:
    changed: bool
    backup: Path | None
    ref: str


def reset_file(path: Path, *, backup_dir: Path, ref: str = "HEAD") -> ResetResult:
    """Restore ``path`` to its committed version, keeping the current content as a backup first."""
    stub = pristine(path, ref)
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        current = None
    if current == stub:
        return ResetResult(changed=False, backup=None, ref=ref)
    backup = None
    if current is not None:
        try:
            backup = backup_path(backup_dir, path)
            _write_durably(backup, current, exclusive_target=True)
        except OSError as exc:
            raise WorkspaceError(f"your file could not be backed up to {backup or backup_dir} "
                                 f"({exc.strerror or exc}), so it was not reset; your file is untouched") from None
        if backup.read_bytes() != current:  # paranoid: never overwrite work we could not keep
            raise WorkspaceError(f"the backup {backup} could not be verified; your file is untouched")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_durably(path, stub)
    except OSError as exc:
        kept = f" (your work is saved in {backup})" if backup else ""
        raise WorkspaceError(f"{path} could not be written ({exc.strerror or exc}){kept}") from None
    return ResetResult(changed=True, backup=backup, ref=ref)


# --- solution ---------------------------------------------------------------------------------------

def split_solution(source: str) -> tuple[str, str]:
    """(commentary, code): the module docstring, and the code after it (imports onward)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "", source
    doc = ast.get_docstring(tree, clean=False)
    if doc is None or not tree.body:
        return "", source
    end = tree.body[0].end_lineno or 0
    code = "\n".join(source.splitlines()[end:]).lstrip("\n")
    return inspect.cleandoc(doc), code
