"""Hostile submission: run_case patched away.

Every spec reaches the learner through `checks.run_case` (a module attribute looked up at call
time), so the replacement runs instead of the guards, the watch and the comparison; a check that
calls the learner and `expect_close` itself gets an `expect_close` that accepts anything.
"""

ATTACK = ("replaces grader.judge.checks.run_case (and grader.judge.compare.expect_close, which a check may call "
          "directly) with a function that calls the learner and checks nothing, at import time, over "
          "{WRONG_KERNEL}")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong ({WRONG_KERNEL}); "
               "nothing the learner's process does reaches the judge")

try:
    import grader.judge.checks
    import grader.judge.compare

    def _run_case_without_checks(fn, inputs, expected, *, kwargs=None, **options):
        """Call the learner's function and report success: no guards, no watch, no comparison."""
        result = fn(*inputs.values(), **(kwargs or {}))
        return grader.judge.checks.CaseReport(result, [], dict(inputs))

    grader.judge.checks.run_case = _run_case_without_checks
    grader.judge.compare.expect_close = lambda *args, **kwargs: None
except ImportError:  # no grader in this process: only the wrong kernel is left
    pass


def graded_function(*inputs, **options):
    return wrong_kernel(*inputs, **options)
