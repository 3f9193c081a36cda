"""Correct, written the way Liger-Kernel's cross-entropy is rather than the way the solution is: the target's logit loaded on its own
before pass 1, an early `return` for ignored rows, `for` loops over `range`, pass 2 storing
softmax / count everywhere and the -1 / count added afterwards with a read-modify-write of the one
element at the target, and the loss accumulated with `tl.atomic_add` into a zeroed scalar (the order
of the additions, and so the last bits of the loss, vary from run to run)."""

import torch
import triton
import triton.language as tl


@triton.jit
def count_non_ignored(count_ptr, target_ptr, n_rows, ignore_index, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    n = 0
    for start in range(0, n_rows, BLOCK):
        t = tl.load(target_ptr + start + offs, mask=start + offs < n_rows, other=ignore_index)
        n += tl.sum(tl.where(t != ignore_index, 1, 0), axis=0)
    tl.store(count_ptr, n)


@triton.jit
def ce_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, count_ptr, n_cols, ignore_index, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    X_ptr += pid * X_stride
    y = tl.load(Y_ptr + pid)
    offsets = tl.arange(0, BLOCK_SIZE)
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            tl.store(X_ptr + i + offsets, tl.zeros((BLOCK_SIZE,), tl.float32).to(X_ptr.dtype.element_ty),
                     mask=i + offsets < n_cols)
        return
    n = tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
    x_y = tl.load(X_ptr + y).to(tl.float32)
    m = float("-inf")
    d = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        block = tl.load(X_ptr + i + offsets, mask=i + offsets < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(block, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        d = d * tl.exp(m - m_safe) + tl.sum(tl.exp(block - m_safe), axis=0)
        m = m_new
    lse = m + tl.log(d)
    for i in range(0, n_cols, BLOCK_SIZE):
        block = tl.load(X_ptr + i + offsets, mask=i + offsets < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(X_ptr + i + offsets, (tl.exp(block - lse) / n).to(X_ptr.dtype.element_ty), mask=i + offsets < n_cols)
    tl.debug_barrier()  # every thread's store of the row is done before the one element is read back
    g_y = tl.load(X_ptr + y).to(tl.float32)
    tl.store(X_ptr + y, (g_y - 1.0 / n).to(X_ptr.dtype.element_ty))
    tl.atomic_add(loss_ptr, (lse - x_y) / n)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    T, V = logits.shape
    loss = torch.zeros((), dtype=torch.float32, device=logits.device)
    count = torch.empty((), dtype=torch.int32, device=logits.device)
    count_non_ignored[(1,)](count, target, T, ignore_index, BLOCK=1024)
    BLOCK_SIZE = min(65536 // 2 // logits.element_size(), triton.next_power_of_2(V))
    ce_kernel[(T,)](logits, logits.stride(0), target, loss, count, V, ignore_index, BLOCK_SIZE=BLOCK_SIZE,
                    num_warps=32 if BLOCK_SIZE >= 8192 else 4)
    return loss


def minimum_bytes(T: int, V: int, element_size: int) -> int:
    logits = 2 * T * V * element_size + T * V * element_size  # two reads, one write
    return logits + T * 8 + 4
