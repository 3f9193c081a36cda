"""Correct, with the two passes in two kernels where the solution has one for both: the first writes each row's log-sum-exp (T floats) and
loss, the second has a 2-D grid, one program per (row, block of columns), so the gradient pass is
spread over T · V / BLOCK programs instead of T. Four launches (count, statistics, gradient, sum);
the same bytes: each row read once by each kernel, written once by the second."""

import torch
import triton
import triton.language as tl


@triton.jit
def count_kernel(count_ptr, target_ptr, n_rows, ignore_index, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.int32)
    for start in range(0, n_rows, BLOCK):
        t = tl.load(target_ptr + start + offs, mask=start + offs < n_rows, other=ignore_index)
        total += (t != ignore_index).to(tl.int32)
    tl.store(count_ptr, tl.sum(total, axis=0))


@triton.jit
def stats_kernel(x_ptr, stride, target_ptr, lse_ptr, row_loss_ptr, count_ptr, V, ignore_index,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    t = tl.load(target_ptr + row)
    cols = tl.arange(0, BLOCK)
    if t != ignore_index:
        m = tl.full((), float("-inf"), tl.float32)
        s = tl.full((), 0.0, tl.float32)
        xt = tl.full((), 0.0, tl.float32)
        for start in range(0, V, BLOCK):
            c = start + cols
            x = tl.load(x_ptr + row * stride + c, mask=c < V, other=float("-inf")).to(tl.float32)
            new_m = tl.maximum(m, tl.max(x, axis=0))
            ref = tl.where(new_m == float("-inf"), 0.0, new_m)
            s = s * tl.exp(m - ref) + tl.sum(tl.exp(x - ref), axis=0)
            m = new_m
            xt += tl.sum(tl.where(c == t, x, 0.0), axis=0)
        lse = m + tl.log(s)
        tl.store(lse_ptr + row, lse)
        tl.store(row_loss_ptr + row, (lse - xt) / tl.maximum(tl.load(count_ptr), 1).to(tl.float32))
    else:
        tl.store(lse_ptr + row, 0.0)
        tl.store(row_loss_ptr + row, 0.0)


@triton.jit
def grad_kernel(x_ptr, stride, target_ptr, lse_ptr, count_ptr, V, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    t = tl.load(target_ptr + row)
    ptrs = x_ptr + row * stride + c
    if t == ignore_index:
        tl.store(ptrs, tl.zeros((BLOCK,), tl.float32).to(x_ptr.dtype.element_ty), mask=c < V)
    else:
        lse = tl.load(lse_ptr + row)
        inv = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
        x = tl.load(ptrs, mask=c < V, other=0.0).to(tl.float32)
        g = (tl.exp(x - lse) - tl.where(c == t, 1.0, 0.0)) * inv
        tl.store(ptrs, g.to(x_ptr.dtype.element_ty), mask=c < V)


@triton.jit
def total_kernel(out_ptr, values_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(values_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    T, V = logits.shape
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    lse = torch.empty((T,), dtype=torch.float32, device=logits.device)
    row_loss = torch.empty((T,), dtype=torch.float32, device=logits.device)
    count = torch.empty((), dtype=torch.int32, device=logits.device)
    block = min(4096, triton.next_power_of_2(V))
    rows = min(1024, triton.next_power_of_2(T))
    count_kernel[(1,)](count, target, T, ignore_index, BLOCK=rows)
    stats_kernel[(T,)](logits, logits.stride(0), target, lse, row_loss, count, V, ignore_index, BLOCK=block,
                       num_warps=8)
    grad_kernel[(T, triton.cdiv(V, block))](logits, logits.stride(0), target, lse, count, V, ignore_index,
                                            BLOCK=block, num_warps=8)
    total_kernel[(1,)](loss, row_loss, T, BLOCK=rows)
    return loss


def minimum_bytes(T: int, V: int, element_size: int) -> int:
    return (3 * V * element_size + 8) * T + 4
