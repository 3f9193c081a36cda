"""Correct, with chapter 6's per-lane online log-sum-exp where the solution reduces across the block in the loop: each lane keeps its own running max and
sum through the loop (no reduction across the block inside it) and the lanes are merged once after
it; exponentials in base 2 (exp2 with the logits scaled by log2(e)); the row losses stored undivided
and the mean taken by the summing kernel, which divides by max(count, 1)."""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def count_rows(count_ptr, target_ptr, n_rows, ignore_index, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    kept = tl.zeros((BLOCK,), tl.int32)
    start = 0
    while start < n_rows:
        t = tl.load(target_ptr + start + offs, mask=start + offs < n_rows, other=ignore_index)
        kept += tl.where(t == ignore_index, 0, 1)
        start += BLOCK
    tl.store(count_ptr, tl.sum(kept, axis=0))


@triton.jit
def xent_kernel(logits_ptr, row_stride, target_ptr, row_loss_ptr, count_ptr, n_cols, ignore_index,
                BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * row_stride
    lanes = tl.arange(0, BLOCK)
    target = tl.load(target_ptr + row)
    ignored = target == ignore_index
    if ignored:
        start = 0
        while start < n_cols:
            tl.store(base + start + lanes, tl.zeros((BLOCK,), tl.float32).to(logits_ptr.dtype.element_ty),
                     mask=lanes < n_cols - start)
            start += BLOCK
        tl.store(row_loss_ptr + row, 0.0)
    else:
        # Per lane: m (in log2 units) and l = sum of 2^(x * log2(e) - m) over this lane's columns.
        m = tl.full((BLOCK,), float("-inf"), tl.float32)
        l = tl.zeros((BLOCK,), tl.float32)
        picked = tl.zeros((BLOCK,), tl.float32)
        start = 0
        while start < n_cols:
            valid = lanes < n_cols - start
            x = tl.load(base + start + lanes, mask=valid, other=float("-inf")).to(tl.float32)
            z = x * 1.4426950408889634
            m_new = tl.maximum(m, z)
            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
            l = l * tl.exp2(m - m_ref) + tl.exp2(z - m_ref)
            m = m_new
            picked += tl.where(start + lanes == target, x, 0.0)
            start += BLOCK
        m_row = tl.max(m, axis=0)
        l_row = tl.sum(l * tl.exp2(tl.where(m == float("-inf"), float("-inf"), m - m_row)), axis=0)
        lse = (m_row + tl.log2(l_row)) * 0.6931471805599453  # back to natural log
        inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
        start = 0
        while start < n_cols:
            valid = lanes < n_cols - start
            x = tl.load(base + start + lanes, mask=valid, other=float("-inf")).to(tl.float32)
            p = tl.exp2((x - lse) * 1.4426950408889634)
            g = (p - tl.where(start + lanes == target, 1.0, 0.0)) * inv_count
            tl.store(base + start + lanes, g.to(logits_ptr.dtype.element_ty), mask=valid)
            start += BLOCK
        tl.store(row_loss_ptr + row, lse - tl.sum(picked, axis=0))


@triton.jit
def mean_kernel(loss_ptr, row_loss_ptr, count_ptr, n_rows, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    start = 0
    while start < n_rows:
        acc += tl.load(row_loss_ptr + start + offs, mask=start + offs < n_rows, other=0.0)
        start += BLOCK
    tl.store(loss_ptr, tl.sum(acc, axis=0) / tl.maximum(tl.load(count_ptr), 1).to(tl.float32))


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    T, V = logits.shape
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    row_loss = torch.empty((T,), dtype=torch.float32, device=logits.device)
    count = torch.empty((), dtype=torch.int32, device=logits.device)
    BLOCK = min(4096, triton.next_power_of_2(V))
    RB = min(2048, triton.next_power_of_2(T))
    count_rows[(1,)](count, target, T, ignore_index, BLOCK=RB)
    xent_kernel[(T,)](logits, logits.stride(0), target, row_loss, count, V, ignore_index, BLOCK=BLOCK,
                      num_warps=8 if BLOCK >= 2048 else 4)
    mean_kernel[(1,)](loss, row_loss, count, T, BLOCK=RB)
    return loss


def minimum_bytes(T: int, V: int, element_size: int) -> int:
    return T * V * element_size * 3 + T * 8 + 4
