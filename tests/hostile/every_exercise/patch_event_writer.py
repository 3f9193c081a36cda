"""Hostile submission: every result rewritten as passed.

The checks still fail inside the child, but the verdict the parent reads is whatever the child
writes, and the learner's code runs in the child. A passed result is also written as each check
starts, so the parent never sees one running (none can time out).
"""

ATTACK = ("wraps grader.judge.plugin's event writer so that every result it sends the parent says passed, "
          "over {WRONG_KERNEL}")
KIND = "patch"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("the judge's comparison fails: the kernel underneath is wrong ({WRONG_KERNEL}); "
               "nothing the learner's process does reaches the judge")

try:
    import grader.judge.plugin as _plugin

    _write = _plugin._events.write

    def _always_passed(**event):
        # Every result line the plugin writes for the parent process now says "passed" ...
        if event.get("event") == "result" and not event.get("skipped"):
            event.update(passed=True, message="", kind="ok")
        _write(**event)
        # ... and a passed result follows every "start" at once, so no check can time out either
        # (the parent writes its own verdict for a check that runs past its timeout).
        if event.get("event") == "start":
            nodeid = event["nodeid"]
            name = nodeid.split("::")[-1].removeprefix("test_")
            _write(event="result", nodeid=nodeid, name=name, passed=True, skipped=False, message="",
                   kind="ok", launches=[1])

    _plugin._events.write = _always_passed
except (ImportError, AttributeError):
    pass


def graded_function(*inputs, **options):
    return wrong_kernel(*inputs, **options)
