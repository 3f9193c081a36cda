"""The operation as a jitted helper passed as a constexpr (``OP=_sum``), the block as a constexpr
tuple and the accumulation as a constexpr string; a local helper checks the inputs with f-string
messages, and every function has type hints. Differs from the solution in how the kernel is
parametrized, not in what it computes: a compiler builds each of these constexprs into the kernel."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

SELECT = "(matches_reference and (n1 or n1025 or n4093)) or traffic"


@triton.jit
def _sum(a, b):
    return a + b


@triton.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, SHAPE: tl.constexpr, ACCUMULATE: tl.constexpr):
    offs = tl.program_id(0) * SHAPE[0] + tl.arange(0, SHAPE[0])
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if ACCUMULATE == "float32":
        x, y = x.to(tl.float32), y.to(tl.float32)
    tl.store(out_ptr + offs, OP(x, y).to(out_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, y: torch.Tensor) -> int:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError(f"x is {tuple(x.shape)} {x.dtype}, y is {tuple(y.shape)} {y.dtype}: they must match")
    return x.numel()


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = _check(x, y)
    out = torch.empty_like(x)
    shape: tuple[int] = (1024,)
    binary_kernel[(triton.cdiv(n, shape[0]),)](x, y, out, n, OP=_sum, SHAPE=shape, ACCUMULATE="float32")
    return out
