"""What every attack of this folder may launch: a kernel that stores nothing and a copy.

`tests/hostile_corpus.py` writes a submission as the attack, this file, then the exercise's
`grader/exercises/exNN_slug/hostile/carrier.py` (its answer and its wrong kernel), then the line that
names the attack's `graded_function` as the exercise's function.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def noop_kernel(out_ptr):
    # Stores nothing: it is launched only so that "a Triton kernel ran". The answer is
    # already in `out` by then.
    pid = tl.program_id(0)


@triton.jit
def copy_kernel(src_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # A plain copy, converting to out's dtype: the "kernel" that delivers an answer made elsewhere.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    values = tl.load(src_ptr + offsets, mask=mask)
    # Through float32: Triton's interpreter converts float64 straight to fp16/bf16 wrongly.
    tl.store(out_ptr + offsets, values.to(tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


def copy_into_output(source, out):
    """``source`` (contiguous, out's shape) copied into the contiguous ``out`` by a Triton kernel."""
    n = out.numel()
    copy_kernel[(triton.cdiv(n, 1024),)](source, out, n, BLOCK=1024)
    return out


def empty_output(*inputs):
    """The output of every exercise of this corpus: the first input's shape and dtype, contiguous."""
    first = inputs[0]
    return torch.empty(first.shape, dtype=first.dtype, device=first.device)
