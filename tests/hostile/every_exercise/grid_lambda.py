"""Hostile submission: the work in the grid function's second call.

The launch recorder calls a callable grid once to learn its size (ops seen) and then Triton calls it
again inside the launch (ops ignored as Triton's own).
"""

ATTACK = ("does the work in the grid function of its one launch, on the function's second call (Triton's "
          "own, made while the grader's watch takes every torch op for Triton's); the kernel itself does "
          "nothing")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("best effort: nothing a static check can name; the torch-op watch must see every call of a grid "
               "function (today it ignores all but the first); the judge's comparison passes (the numbers are "
               "right, only their origin is wrong)")


def graded_function(*inputs, **options):
    out = empty_output(*inputs)
    calls = []

    def grid(meta):
        calls.append(meta)
        if len(calls) >= 2:  # not the first call: the grader's recorder made that one
            out.copy_(torch_answer(*inputs, **options))
        return (1,)

    noop_kernel[grid](out)  # the one launch, so that "a Triton kernel ran"
    return out
