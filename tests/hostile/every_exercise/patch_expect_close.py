"""Hostile submission: the comparison patched away.

A grader that imports the learner's file into the process that compares would let an assignment to a
module attribute change the comparison for every check that follows.
"""

import sys

ATTACK = ("replaces grader.judge.compare.expect_close and grader.judge.checks.expect_close (and every expect_close... of "
          "a grader module already loaded, such as the softmax checks' expect_close_by_row) with a function that "
          "accepts anything, at import time, over {WRONG_KERNEL}")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong ({WRONG_KERNEL}); "
               "nothing the learner's process does reaches the judge")


def _accept_anything(*args, **kwargs):
    return None


try:
    import grader.judge.checks
    import grader.judge.compare

    # The specs are imported after this file (the grader imports the learner first), so
    # `from grader.judge.compare import expect_close` in a spec picks up this function too.
    grader.judge.compare.expect_close = _accept_anything
    grader.judge.checks.expect_close = _accept_anything
    for _name, _module in list(sys.modules.items()):  # a family's own helpers (grader.exercises._shared.softmax_checks...)
        if _name.startswith("grader.") and _module is not None:
            for _attribute in [a for a in vars(_module) if a.startswith("expect_close")]:
                setattr(_module, _attribute, _accept_anything)
except ImportError:  # no grader in this process: only the wrong kernel is left
    pass


def graded_function(*inputs, **options):
    return wrong_kernel(*inputs, **options)
