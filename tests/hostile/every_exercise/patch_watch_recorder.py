"""Hostile submission: the torch-op recorder patched away.

The answer is right but no kernel computed it: the grader's torch-op watch would say "computed with
torch", had the file not disabled it from inside the process.
"""

ATTACK = ("replaces the torch-op recorder of grader.learner.call_watch so that it records nothing, then computes the "
          "answer with torch and launches a kernel that does nothing")
KIND = "patch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("grader",)
REJECTED_BY = ("best effort: the batch static check rejects `import grader`; the judge's comparison passes (the "
               "numbers are right), so `grade exercise` can only warn")

try:
    import grader.learner.call_watch

    def _see_nothing(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    # The watch's TorchDispatchMode now records no torch op (and poisons no allocation).
    grader.learner.call_watch._Recorder.__torch_dispatch__ = _see_nothing
except ImportError:
    pass


def graded_function(*inputs, **options):
    out = torch_answer(*inputs, **options)  # torch computes the whole answer in plain sight
    noop_kernel[(1,)](out)
    return out
