"""Hostile submission: forged events, then exit.

A parent that trusts every line of the events file is told that every check passed, and the file's
path is on the command line of the process the learner's code runs in.
"""

import json
import os
import sys

ATTACK = ("appends a forged `collected` line and a passed `result` line per check to the events file named "
          "on the child's command line, then os._exit(0) at import; {WRONG_KERNEL} underneath")
KIND = "forge"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys.argv / /proc/self/cmdline", "os._exit")
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong ({WRONG_KERNEL}); "
               "nothing the learner's process does reaches the judge (the learner's process sends outputs, never "
               "verdicts; an exit before any output is a sentence, not a pass)")
#: The checks every exercise's spec has, claimed passed.
CHECKS = ["matches_reference", "traffic", "performance"]


def _events_file():
    """The events file the grader's child process was given on its command line, or None."""
    argv = list(sys.argv)
    if "--grade-events" not in argv:
        try:
            with open("/proc/self/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            return None
    if "--grade-events" in argv:
        return argv[argv.index("--grade-events") + 1]
    return None


_events = _events_file()
if _events:
    _ids = [f"spec.py::test_{name}" for name in CHECKS]
    with open(_events, "a") as f:
        f.write(json.dumps({"event": "collected", "nodeids": _ids, "names": CHECKS}) + "\n")
        for nodeid, name in zip(_ids, CHECKS):
            f.write(json.dumps({"event": "result", "nodeid": nodeid, "name": name, "passed": True,
                                "skipped": False, "message": "", "kind": "ok", "launches": [1]}) + "\n")
    os._exit(0)  # before pytest collects a single real check: the forged lines are all the parent reads


def graded_function(*inputs, **options):
    return wrong_kernel(*inputs, **options)
