"""Hostile submission, exercise 1 (vector add): the reference found by the garbage collector.

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


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    want = _reference(x.shape)
    # Found: copy the grader's answer. Not found (the traffic check): copy x, which is wrong.
    copy_kernel[(triton.cdiv(n, 1024),)](want if want is not None else x, out, n, BLOCK=1024)
    return out
