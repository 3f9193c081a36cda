"""Hostile submission, exercise 3 (fused softmax): the reference found by the garbage collector.

Torch tensors are tracked by Python's garbage collector, so any tensor alive in the process can be
found without a single frame or name.
"""

import gc

import torch
import triton
import triton.language as tl

ATTACK = ("finds the grader's float64 reference among gc.get_objects() (the newest float64 tensor of the "
          "output's shape) and copies it into `out` with a Triton copy kernel; a copy of x otherwise")
KIND = "reference"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("gc",)
REJECTED_BY = ("the judge's comparison fails: no float64 answer exists in the learner's process, so the file "
               "falls back to a copy of x, which is wrong")


@triton.jit
def copy_kernel(src_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # A plain copy, converting to out's dtype: the "kernel" that delivers an answer made elsewhere.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    values = tl.load(src_ptr + offsets, mask=mask)
    # Through float32: Triton's interpreter converts float64 straight to fp16/bf16 wrongly.
    tl.store(out_ptr + offsets, values.to(tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def copy_rows_kernel(src_ptr, out_ptr, n_cols, src_row_stride, out_row_stride, BLOCK: tl.constexpr):
    # Row by row, each tensor with its own row stride: copies an (M, N) answer made elsewhere.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    values = tl.load(src_ptr + row * src_row_stride + cols, mask=mask)
    tl.store(out_ptr + row * out_row_stride + cols, values.to(tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


def _copy_2d(src, out):
    """Copy a 2-D ``src`` (any row stride) into ``out`` with one launch."""
    if src.is_contiguous() and out.is_contiguous():
        n = out.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](src, out, n, BLOCK=1024)
    else:
        m, n = out.shape
        copy_rows_kernel[(m, triton.cdiv(n, 1024))](src, out, n, src.stride(0), out.stride(0), BLOCK=1024)


#: References already copied: a later call must not take a stale one (same shape, other inputs).
_USED = []


def _reference(shape):
    """The grader's float64 answer for this call: the newest float64 tensor of this shape alive and not
    used before (the youngest garbage-collector generation first; in each, the last one allocated)."""
    for generation in (0, 1, 2):
        found = None
        for obj in gc.get_objects(generation=generation):
            try:
                if (isinstance(obj, torch.Tensor) and obj.dtype == torch.float64 and tuple(obj.shape) == tuple(shape)
                        and not any(obj is used for used in _USED)):
                    found = obj
            except Exception:  # objects that fail isinstance or have odd attributes
                continue
        if found is not None:
            _USED.append(found)
            return found
    return None


def softmax(x):
    out = torch.empty_like(x)
    want = _reference(x.shape)
    # Found: copy the grader's answer. Not found (the traffic check): copy x, which is wrong.
    _copy_2d(want if want is not None else x, out)
    return out
