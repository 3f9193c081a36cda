"""
Exercise 10 · Cross-entropy over a large vocabulary
===================================================

In this exercise you will learn:

* the last layer of a language model as a **memory-bound** kernel: T rows of V logits (V
  = 128256 for Llama 3), one target per row, and a loss that needs each row's
  **log-sum-exp**: exercise 5's online softmax, walked across the vocabulary in blocks;
* the **in-place gradient**: the loss needs each logit twice (for the statistics, then
  for the gradient) and never again, so the gradient ``(softmax - one_hot) / count``
  overwrites the logits, as Liger-Kernel does. Nothing of size (T, V) is allocated;
  eager PyTorch allocates several;
* the **byte model**, as code: the logits read twice and written once, plus the targets
  and the loss;
* ``ignore_index``: a row whose target is ``ignore_index`` (padding, a prompt token)
  adds nothing to the loss, is not counted in the mean, and its gradient is exactly
  zero.

For each counted row r (target t = target[r]), with count the number of counted rows::

    pass 1, per block: m_new = max(m, max(block)); d = d * exp(m - m_new) +
    sum(exp(block - m_new)); m = m_new
                        x_t = the logit of column t, picked out of the block that holds
                        it
    then: lse = m + log(d); row loss = (lse - x_t) / count pass 2, per block: grad =
    (exp(block - lse) - (column == t)) / count, stored over the block

and the loss is the sum of the row losses. When every row is ignored, the loss is 0
(divide by max(count, 1)).

The launcher is written except for the launch of ``cross_entropy_kernel``; the two small
kernels that count the rows and add up the row losses are written too. Fill in the
places marked TODO (the kernel, its launch, and ``minimum_bytes`` at the end), then run
``grade exercise 10``. The grader hands you logits inside buffers full of NaN (sometimes
with gaps between the rows), targets at the edges of your blocks, rows that are ignored,
and logits large enough to overflow ``exp``. ``grade hint 10`` gives a hint when you are
stuck.
"""

import torch
import triton
import triton.language as tl

#: Bytes of logits one program reads per loop iteration: 8192 fp32 or 16384 bf16
#: columns.
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
    # One program counts every row: the gradient needs 1 / count before any row is
    # written.
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
    # pointer to T float32: store each row's loss there, already divided by count
    row_loss_ptr,
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
    # 1 / max(count, 1): with every row ignored, nothing is divided by zero.
    inv_count = 1.0 / tl.maximum(tl.load(count_ptr), 1).to(tl.float32)

    # TODO if target == ignore_index: store zeros over the whole row (loop over it in
    # blocks, with the store masked past n_cols) and a row loss of 0. There is no need
    # to read the row.

    # TODO else, pass 1: loop over the row in blocks (`start = 0`, `while start <
    # n_cols:`, ..., `start += BLOCK`) keeping the running max m and the rescaled
    # running sum d as float32 scalars, as in exercise 5, and pick the target's logit
    # x_t out of the block that holds column `target`. Then lse = m + log(d).

    # TODO pass 2: loop over the row again and store (exp(x - lse) - (column == target))
    # * inv_count over it, converted to the logits' dtype. Then store the row's loss,
    # (lse - x_t) * inv_count.
    pass


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
    # O(T) memory, nothing of size V: the loss, one float per row, the count.
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    row_loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
    count = torch.empty((), dtype=torch.int32, device=logits.device)
    BLOCK = min(BLOCK_BYTES // logits.element_size(), triton.next_power_of_2(n_cols))
    ROWS_BLOCK = min(4096, triton.next_power_of_2(n_rows))

    count_kernel[(1,)](count, target, n_rows, ignore_index, BLOCK=ROWS_BLOCK)
    # TODO: launch cross_entropy_kernel with one program per row, passing the logits'
    # row stride (logits.stride(0): the rows may have gaps between them), BLOCK=BLOCK
    # and num_warps=NUM_WARPS if BLOCK >= 4096 else 4; then delete the line below.
    raise NotImplementedError(
        "exercise 10: write cross_entropy_kernel and launch it from cross_entropy()"
    )
    sum_kernel[(1,)](loss, row_loss, n_rows, BLOCK=ROWS_BLOCK)
    return loss


# --- the byte model
# ----------------------------------------------------------------------------

def minimum_bytes(T: int, V: int, element_size: int) -> int:
    """Fewest bytes ``cross_entropy`` moves for (T, V) logits of this element size."""
    # TODO: the logits are read twice (a row of 128256 does not fit on chip between the
    # passes) and written once (the gradient); each target is an int64, read once; the
    # loss is one float32.
    raise NotImplementedError(
        "exercise 10: count the bytes of the two-pass cross-entropy in minimum_bytes()"
    )
