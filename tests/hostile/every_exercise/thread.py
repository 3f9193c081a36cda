"""Hostile submission: the work in another thread.

A TorchDispatchMode is thread-local: ops run by another thread are never seen.
"""

import threading

ATTACK = ("computes the answer with torch in a threading.Thread (the torch-op watch is a per-thread "
          "dispatch mode) and copies it into `out` there, then launches a kernel that does nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("threading",)
REJECTED_BY = ("best effort: the batch static check rejects `import threading`; the judge's comparison passes "
               "(the numbers are right, only their origin is wrong)")


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    worker = threading.Thread(target=lambda: out.copy_(torch_answer(*inputs, **options)))
    worker.start()
    worker.join()
    noop_kernel[(1,)](out)  # a launch, so that "a Triton kernel ran"
    return out
