"""
Exercise 10 · Cross-entropy over a large vocabulary — reference solution
========================================================================

In this exercise you will learn:

* the last layer of a language model as a **memory-bound** kernel: T rows of V logits (V
  = 128256 for Llama 3), one target per row, and a loss that needs each row's
  **log-sum-exp**: exercise 5's online softmax, walked across the vocabulary in blocks;
* why the gradient can go **into the logits buffer**: the loss needs each logit twice
  (once for the statistics, once for the gradient) and never again, so the gradient
  ``(softmax - one_hot) / count`` overwrites it in place, as Liger-Kernel does. No (T,
  V) tensor is allocated: eager PyTorch allocates several;
* the **byte model**: read the logits twice and write the gradient once, ``3 · T · V ·
  element_size`` bytes, plus the targets (8 bytes a row) and the loss. A row of 128256
  bf16 logits is 250 KiB: no program holds it in registers, so the second read is the
  price of the algorithm;
* ``ignore_index``: a row whose target is ``ignore_index`` (padding, or a prompt token
  in fine-tuning) adds nothing to the loss, has a gradient of exactly zero, and is not
  counted in the mean. Such a row is never read: its gradient is written as zeros, one
  pass instead of three.

The loss is the mean over the ``count`` rows that are not ignored::

    loss = sum over counted rows r of (lse_r - x[r, target_r]) / count, lse_r =
    log(sum_j exp(x[r, j])) grad[r, j] = (softmax(x_r)_j - (j == target_r)) / count,
    grad = 0 on ignored rows

When every row is ignored (count = 0) the loss is 0 and every gradient is 0: a batch
made only of padding contributes nothing to a training step, where 0 / 0 = NaN
(PyTorch's answer) would poison the weights.

Three launches, each kernel doing one thing: ``count_kernel`` counts the rows that are
not ignored (the gradient needs 1 / count before the first row is written),
``cross_entropy_kernel`` does the work (one program per row: the online log-sum-exp,
then the gradient written over the row), and ``sum_kernel`` adds the T row losses in a
fixed order, so the loss is the same to the last bit on every run (an ``atomic_add`` per
row would add them in whatever order the programs finish).
"""

import torch
import triton
import triton.language as tl

#: Bytes of logits one program reads per loop iteration: 8192 fp32 or 16384 bf16
#: columns, the byte budget of exercise 5's solution (solutions/ex05_online_softmax.py,
#: chosen for rows of 2^20 float32 values), not the fastest block here. With 16
#: warps the kernel needs at most 64 registers a thread on sm_90
#: (tests/test_ex10_cross_entropy.py compiles it), so two programs fit on an SM. The
#: block and warp count are swept in docs/measurements/h200-ex10-sweep.json
#: (tools/benchmarks/ex10_cross_entropy.py).
BLOCK_BYTES = 32768
NUM_WARPS = 16


@triton.jit
def count_kernel(
    # pointer to one int32: the number of rows whose target is not ignore_index
    count_ptr,
    target_ptr,  # pointer to the targets, T int64 class indices
    n_rows,  # T
    ignore_index,  # the target value of rows that do not count
    BLOCK: tl.constexpr,  # targets read per loop iteration
):
    # One program: T targets are 8 bytes each, 128 KiB at T = 16384, a few microseconds.
    offs = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.int32)
    start = 0
    while start < n_rows:
        mask = start + offs < n_rows
        t = tl.load(target_ptr + start + offs, mask=mask, other=ignore_index)
        total += (t != ignore_index).to(tl.int32)
        start += BLOCK
    tl.store(count_ptr, tl.sum(total, axis=0))


@triton.jit
def cross_entropy_kernel(
    logits_ptr,  # pointer to logits[0, 0]: read, then overwritten with the gradient
    # elements between the starts of two consecutive rows (>= n_cols)
    logits_row_stride,
    target_ptr,  # pointer to the targets, one int64 per row
    row_loss_ptr,  # pointer to T float32: each row's loss, already divided by count
    count_ptr,  # pointer to the int32 written by count_kernel
    n_cols,  # V, the vocabulary: any size, many times BLOCK
    ignore_index,  # the target value of rows that do not count
    BLOCK: tl.constexpr,  # columns per loop iteration (a power of two)
):
    # One program per row. In int64: 16384 rows of 128256 columns are 2^31 elements.
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * logits_row_stride
    cols = tl.arange(0, BLOCK)
    target = tl.load(target_ptr + row)
    # max(count, 1): with every row ignored, nothing is divided by zero (and nothing is
    # counted).
    inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)

    if target == ignore_index:
        # Nothing to read: the gradient of an ignored row is exactly zero, and so is its
        # loss.
        zeros = tl.zeros((BLOCK,), tl.float32)
        start = 0
        while start < n_cols:
            tl.store(
                x_row + start + cols,
                zeros.to(logits_ptr.dtype.element_ty),
                mask=start + cols < n_cols,
            )
            start += BLOCK
        tl.store(row_loss_ptr + row, 0.0)
    else:
        # Pass 1: the running max m and the rescaled running sum d (exercise 5), and the
        # target's logit, picked out of the block that holds column `target` (start +
        # cols, not cols: the block's own lane numbers repeat in every block).
        m = tl.full((), float("-inf"), tl.float32)
        d = tl.full((), 0.0, tl.float32)
        x_target = tl.full((), 0.0, tl.float32)
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            # Lanes past V load -inf: they cannot raise the max, and exp(-inf) = 0 adds
            # nothing.
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(
                tl.float32
            )
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # A block of only -inf logits (a masked vocabulary) keeps m_new = -inf:
            # measure against 0 then, or exp(m - m_new) = exp(-inf + inf) is NaN
            # (exercise 5).
            m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
            d = d * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)
            m = m_new
            x_target += tl.sum(tl.where(start + cols == target, x, 0.0), axis=0)
            start += BLOCK
        # log(sum_j exp(x_j)) = m + log(sum_j exp(x_j - m)): d >= 1 (the max's own term
        # is 1).
        lse = m + tl.log(d)

        # Pass 2: read the row again (250 KiB in bf16: no longer on chip) and overwrite
        # it with (softmax - one_hot) / count. The row's logits are not needed after
        # this.
        start = 0
        while start < n_cols:
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(
                tl.float32
            )
            p = tl.exp(x - lse)
            grad = tl.where(start + cols == target, p - 1.0, p) * inv_count
            tl.store(
                x_row + start + cols, grad.to(logits_ptr.dtype.element_ty), mask=mask
            )
            start += BLOCK
        tl.store(row_loss_ptr + row, (lse - x_target) * inv_count)


@triton.jit
def sum_kernel(
    loss_ptr,  # pointer to the loss: one float32
    row_loss_ptr,  # pointer to the T row losses
    n_rows,  # T
    BLOCK: tl.constexpr,  # row losses read per loop iteration
):
    # One program, a fixed order of additions: the same loss, bit for bit, on every run.
    offs = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.float32)
    start = 0
    while start < n_rows:
        total += tl.load(
            row_loss_ptr + start + offs, mask=start + offs < n_rows, other=0.0
        )
        start += BLOCK
    tl.store(loss_ptr, tl.sum(total, axis=0))


def cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    """Mean cross-entropy of ``logits`` (T, V) against ``target`` (T,), rows whose
    target is ``ignore_index`` left out; the gradient with respect to the logits is
    written into ``logits``.

    Returns the loss as a 0-dim float32 tensor (0 when every row is ignored).
    """
    n_rows, n_cols = logits.shape
    # The loss first: it is what the function returns. Then T floats and one int32: O(T)
    # memory, nothing of size V.
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    row_loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    count = torch.empty((), dtype=torch.int32, device=logits.device)
    BLOCK = min(BLOCK_BYTES // logits.element_size(), triton.next_power_of_2(n_cols))
    ROWS_BLOCK = min(4096, triton.next_power_of_2(n_rows))

    count_kernel[(1,)](count, target, n_rows, ignore_index, BLOCK=ROWS_BLOCK)
    cross_entropy_kernel[(n_rows,)](
        logits, logits.stride(0), target, row_loss, count, n_cols, ignore_index,
        BLOCK=BLOCK, num_warps=NUM_WARPS if BLOCK >= 4096 else 4,
    )
    sum_kernel[(1,)](loss, row_loss, n_rows, BLOCK=ROWS_BLOCK)
    return loss


# --- the byte model
# ----------------------------------------------------------------------------

def minimum_bytes(T: int, V: int, element_size: int) -> int:
    """Fewest bytes ``cross_entropy`` moves for (T, V) logits of this element size: the
    logits read twice (a row of 128256 does not fit on chip between the passes) and
    written once (the gradient), each int64 target read once, the float32 loss written
    once."""
    return 3 * T * V * element_size + 8 * T + 4
