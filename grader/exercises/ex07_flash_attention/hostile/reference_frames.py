"""Hostile submission, exercise 7 (FlashAttention forward): the reference read from the caller's frames.

The reference lives in the same process as the learner's function, one or two frames up the stack
from its call.
"""

import sys

import torch
import triton
import triton.language as tl

ATTACK = ("walks sys._getframe() up to the check's frame and copies its float64 `expected` (or the checking "
          "closure's `want`) into `out` with a Triton copy kernel; where no answer exists yet, calls the "
          "spec's own `reference` found in a caller's globals; zeros otherwise")
KIND = "reference"
WRONG_UNDERNEATH = True
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ("sys._getframe",)
REJECTED_BY = ("the judge's comparison fails: the learner's process holds no reference to find, so the file "
               "falls back to zeros, which is wrong")


@triton.jit
def copy_heads_kernel(src_ptr, out_ptr, H, S,
                      ss_b, ss_h, ss_s, ss_d,  # strides of src
                      so_b, so_h, so_s, so_d,  # strides of out
                      D: tl.constexpr):
    # One program per (batch, head, row): copies a (B, H, S, D) answer made elsewhere.
    pid = tl.program_id(0)
    b = pid // (H * S)
    h = (pid // S) % H
    s = pid % S
    d = tl.arange(0, D)
    values = tl.load(src_ptr + b * ss_b + h * ss_h + s * ss_s + d * ss_d)
    tl.store(out_ptr + b * so_b + h * so_h + s * so_s + d * so_d,
             values.to(tl.float32).to(out_ptr.dtype.element_ty))


def _copy_4d(src, out):
    B, H, S, D = out.shape
    copy_heads_kernel[(B * H * S,)](src, out, H, S, *src.stride(), *out.stride(), D=D)


@triton.jit
def zeros_kernel(out_ptr, H, S, so_b, so_h, so_s, so_d, D: tl.constexpr):
    # WRONG on purpose: one program per (batch, head, row) stores zeros; no attention at all.
    # Only a forged verdict passes it (rows that see no key are the only right ones).
    pid = tl.program_id(0)
    b = pid // (H * S)
    h = (pid // S) % H
    s = pid % S
    d = tl.arange(0, D)
    tl.store(out_ptr + b * so_b + h * so_h + s * so_s + d * so_d,
             tl.zeros((D,), tl.float32).to(out_ptr.dtype.element_ty))


def _float64_in(value, shape, depth=0):
    """``value`` if it is a float64 tensor of ``shape``; else the same search in a closure's cells."""
    if isinstance(value, torch.Tensor):
        return value if value.dtype == torch.float64 and tuple(value.shape) == tuple(shape) else None
    names = getattr(getattr(value, "__code__", None), "co_freevars", ())
    cells = getattr(value, "__closure__", None) or ()
    if depth < 3:
        for cell in cells[:len(names)]:
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            found = _float64_in(inner, shape, depth + 1)
            if found is not None:
                return found
    return None


def _reference(shape):
    """The grader's float64 answer for this call: `expected` in a caller's frame (exercise 1), or the
    `want` a checking closure holds (`expected=` callables of exercises 2, 3 and 7)."""
    frame = sys._getframe(2)
    while frame is not None:
        for name in ("expected", "want"):
            found = _float64_in(frame.f_locals.get(name), shape)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def _reference_from_spec():
    """Where no answer exists yet (test_no_score_matrix), the spec's own `reference` and the check's
    `case` are a few frames up: call them."""
    frame = sys._getframe(2)
    while frame is not None:
        local, reference = frame.f_locals, frame.f_globals.get("reference")
        if callable(reference) and {"case", "q", "k", "v"} <= set(local):
            case = local["case"]
            return reference(local["q"], local["k"], local["v"], scale=case.scale, causal=case.causal)
        frame = frame.f_back
    return None


def attention(q, k, v, causal=False, key_lens=None, sm_scale=None):
    out = torch.empty_like(q)
    want = _reference(q.shape)
    if want is None:
        want = _reference_from_spec()
    if want is not None:
        _copy_4d(want, out)
    else:  # nothing to copy: zeros, which is wrong
        B, H, S, D = q.shape
        zeros_kernel[(B * H * S,)](out, H, S, *out.stride(), D=D)
    return out
