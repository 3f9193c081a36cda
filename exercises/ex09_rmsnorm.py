"""
Exercise 9 · RMSNorm, forward and backward
==========================================

In this exercise you will learn:

* a **forward and backward pair**: the forward normalizes each row, ``y = x · rstd · w``
  with ``rstd = 1 / sqrt(mean(x²) + eps)``, and saves ``rstd`` (one float32 per row) for
  the backward;
* the backward of a normalization: ``dx = rstd · (g − x̂ · mean(x̂ · g))`` with ``g = dy
  · w`` and ``x̂ = x · rstd``: the second term is the gradient that flows through
  ``rstd`` itself;
* a **reduction across programs**: ``dweight = Σ_rows dy · x̂`` sums over all M rows.
  Each program of the backward sums its own rows in registers and writes one row of a
  small float32 buffer of partial sums; a second kernel adds those rows up, always in
  the same order, so the same inputs give the same bits on every run (no atomics);
* how many partial sums: enough programs to fill every SM, each with a contiguous run of
  rows;
* the **byte model of the pair**, as code.

The contract: ``rmsnorm_forward(x, weight, eps) -> (y, rstd)`` and
``rmsnorm_backward(dy, x, weight, rstd) -> (dx, dweight)``. x and dy are 2-D (M, N) of
float32, float16 or bfloat16, contiguous along a row but with **any row stride**; N up
to 16384; weight is (N,) of x's dtype. y and dx are new contiguous tensors of x's dtype,
rstd is float32 (M,), dweight has weight's dtype. Statistics and sums in float32. One
launch for the forward, two for the backward.

Fill in the places marked TODO: the three kernel bodies, the launches, ``partial_count``
and the two byte-model functions at the end. Then run ``grade exercise 9``; ``grade hint
9`` gives a hint when you are stuck.
"""

import os

import torch
import triton
import triton.language as tl

#: The longest row this file takes: one row is one block.
MAX_COLS = 16384

#: Programs of the backward per SM (see partial_count).
PROGRAMS_PER_SM = 4

#: Triton's interpreter has no SMs to count: this stand-in takes their place there, and
#: the grader assumes the same number (do not change it).
INTERPRETER_SMS = 4


@triton.jit
def rmsnorm_forward_kernel(
    x_ptr,  # pointer to x[0, 0]
    w_ptr,  # pointer to weight[0]: one scale per column
    y_ptr,  # pointer to y[0, 0], the output
    rstd_ptr,  # pointer to rstd[0]: one float32 per row, saved for the backward
    x_row_stride,  # elements from the start of one row of x to the next (>= n_cols)
    y_row_stride,  # the same for y
    n_cols,  # N: elements in each row
    eps,  # added to the mean of squares, inside the square root
    BLOCK: tl.constexpr,  # a power of two >= n_cols: the whole row is one block
):
    # TODO: one program per row (row = tl.program_id(0), in int64). Load the row of x
    # (masked at n_cols) and convert it to float32; mean_square = the sum of x * x over
    # the row divided by n_cols; rstd = 1 / sqrt(mean_square + eps). Store rstd at
    # rstd_ptr + row, then y = x * rstd * w into y (converted to y's dtype) under the
    # same mask.
    pass


@triton.jit
def rmsnorm_backward_kernel(
    dy_ptr,  # pointer to dy[0, 0], the gradient of the loss with respect to y
    x_ptr,  # pointer to x[0, 0], the forward's input
    w_ptr,  # pointer to weight[0]
    rstd_ptr,  # pointer to rstd[0], saved by the forward (float32)
    dx_ptr,  # pointer to dx[0, 0], the output
    # pointer to the (n_programs, n_cols) float32 buffer of partial sums of dweight
    partial_ptr,
    dy_row_stride,  # elements between the starts of two rows of dy
    x_row_stride,  # the same for x
    dx_row_stride,  # the same for dx
    n_rows,  # M
    n_cols,  # N
    # consecutive rows each program handles (the last program may have fewer)
    rows_per_program,
    BLOCK: tl.constexpr,  # a power of two >= n_cols
):
    # TODO: program pid handles rows pid * rows_per_program up to (not including)
    # min((pid + 1) * rows_per_program, n_rows). Load w once, start a float32 running
    # sum dw = tl.zeros((BLOCK,), tl.float32), then for each row: load x, dy (float32)
    # and rstd[row]; x_hat = x * rstd, g = dy * w, c = sum(x_hat * g) / n_cols, dx = (g
    # - x_hat * c) * rstd; store dx; dw += dy * x_hat. After the loop, store dw as row
    # pid of the partial buffer.
    pass


@triton.jit
def dweight_reduce_kernel(
    partial_ptr,  # pointer to the (n_partials, n_cols) float32 partial sums
    dw_ptr,  # pointer to dweight[0], the output (weight's dtype)
    n_partials,  # rows of the partial buffer
    n_cols,  # N
    BLOCK_P: tl.constexpr,  # partial rows added per step
    BLOCK_N: tl.constexpr,  # columns per program
):
    # TODO: program p owns columns p * BLOCK_N + tl.arange(0, BLOCK_N). Walk the partial
    # rows in steps of BLOCK_P, accumulating a (BLOCK_P, BLOCK_N) float32 tile (masked
    # at n_partials and n_cols), then sum the tile over its rows and store into dweight
    # (converted to its dtype).
    pass


def sm_count(device: torch.device) -> int:
    """Given. The GPU's number of SMs, or the interpreter's stand-in
    (INTERPRETER_SMS)."""
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def partial_count(n_rows: int, num_sms: int, programs_per_sm: int) -> int:
    """Programs of the backward, and rows of its partial-sum buffer.

    ``num_sms * programs_per_sm`` programs fill the GPU; each takes ``rows_per_program =
    ceil(n_rows / (num_sms * programs_per_sm))`` consecutive rows. Return how many
    programs it takes to cover every row that way (none of them left without a row).
    """
    # TODO
    raise NotImplementedError("exercise 9: write partial_count")


def reduce_tile(n_cols: int, num_sms: int) -> tuple[int, int]:
    """Given. (BLOCK_P, BLOCK_N) of the reduction: about one program per SM, each owning
    BLOCK_N columns (32 at least: a 128-byte line of float32 per partial row), and a
    tile of 2048 values per step."""
    block_n = max(32, triton.next_power_of_2(triton.cdiv(n_cols, num_sms)))
    return max(1, 2048 // block_n), block_n


def forward_num_warps(block: int, element_size: int) -> int:
    """Given. Warps per program of the forward: about 64 bytes of x per thread, 1 to 16
    warps."""
    return min(16, max(1, block * element_size // 2048))


def backward_num_warps(block: int, element_size: int) -> int:
    """Given. Warps per program of the backward: 4 to 16."""
    return min(16, max(4, block * element_size // 1024))


def rmsnorm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float):
    """RMSNorm of each row of ``x`` (M, N), any row stride: returns ``(y, rstd)``."""
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    # TODO: launch rmsnorm_forward_kernel with one program per row
    # (num_warps=forward_num_warps( BLOCK, x.element_size())) and delete the line below.
    raise NotImplementedError(
        "exercise 9: launch rmsnorm_forward_kernel from rmsnorm_forward() and write "
        "its body"
    )
    return y, rstd


def rmsnorm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
):
    """Gradients of RMSNorm: returns ``(dx, dweight)`` for the ``dy`` of ``y =
    rmsnorm_forward(x, ...)``."""
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    BLOCK = triton.next_power_of_2(n_cols)
    # TODO: n_partials = partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM);
    # rows per program = ceil(n_rows / n_partials); a float32 (n_partials, n_cols)
    # buffer from torch.empty. Launch rmsnorm_backward_kernel on n_partials programs
    # (num_warps=backward_num_warps(BLOCK, x.element_size())), then
    # dweight_reduce_kernel with BLOCK_P, BLOCK_N = reduce_tile(n_cols,
    # sm_count(x.device)) on ceil(n_cols / BLOCK_N) programs. Delete the line below.
    raise NotImplementedError(
        "exercise 9: launch the two backward kernels from rmsnorm_backward() and write "
        "them"
    )
    return dx, dweight


# --- the byte model
# ----------------------------------------------------------------------------

def forward_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes the forward can move for an (m, n) x and an (n,) weight of this
    element size."""
    # TODO: every input read once, every output written once. rstd is float32 whatever x
    # is.
    raise NotImplementedError(
        "exercise 9: count the bytes of the forward in forward_bytes()"
    )


def backward_bytes(m: int, n: int, element_size: int, n_partials: int) -> int:
    """Bytes the backward's two kernels move with ``n_partials`` rows of float32 partial
    sums."""
    # TODO: the row kernel reads and writes its tensors once each, the partial sums
    # included; the reduction reads the partial sums back and writes dweight.
    raise NotImplementedError(
        "exercise 9: count the bytes of the backward in backward_bytes()"
    )
