"""One `grade exercise N --from FILE --json` of a tree in a process of its own, as the device scripts that
compare trees or settings grade: how long it took, its exit status and its JSON (or why there is none)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

#: How long one grading may take before the script records it as past its clock.
TIMEOUT_S = 300


def cli_module(tree: Path) -> str:
    """The grade command of a tree: the course moved it into grader/commands/ when core was split."""
    return "grader.commands.cli" if (tree / "grader" / "commands" / "cli.py").is_file() else "grader.cli"


def grade(tree: Path, number: int, file: Path, *, seed: int, env: dict, digits: int = 1) -> tuple[dict, dict | None]:
    """``(row, result)``: ``row`` holds the seconds (rounded to ``digits``) and the exit status, or an
    ``error``; ``result`` is the grading's JSON, None where it printed none."""
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", cli_module(tree), "exercise", str(number), "--from", str(file),
                               "--json", "--seed", str(seed)], cwd=tree, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"seconds": round(time.monotonic() - started, digits), "error": f"past {TIMEOUT_S} s"}, None
    row = {"seconds": round(time.monotonic() - started, digits), "exit": done.returncode}
    try:
        return row, json.loads(done.stdout)
    except ValueError:
        return {**row, "error": (done.stderr or done.stdout)[-1500:]}, None


def ceiling_cache(tree: Path, prefix: str = "ceiling-") -> str:
    """A ceiling cache of ``tree``'s own, its ceiling measured by that tree's grader once: each tree grades
    against a ceiling its own code measured and stored, whatever fields an older tree's cache kept."""
    import os
    import tempfile

    cache = tempfile.mkdtemp(prefix=prefix)
    os.chmod(cache, 0o755)  # the judge may read it as the sandbox user
    subprocess.run([sys.executable, "-c", "from grader import bandwidth; bandwidth.measure_ceiling()"], cwd=tree,
                   env=dict(os.environ, PYTHONPATH=str(tree), GRADE_CACHE_DIR=cache), check=False)
    return cache
