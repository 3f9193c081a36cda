"""
Exercise 9 · RMSNorm, forward and backward — reference solution
===============================================================

In this exercise you will learn:

* a **forward and backward pair**: the forward normalizes each row, ``y = x · rstd · w``
  with ``rstd = 1 / sqrt(mean(x²) + eps)``, and saves ``rstd`` (4 bytes per row) so that
  the backward never recomputes the statistics;
* the backward of a normalization: ``dx = rstd · (g − x̂ · mean(x̂ · g))`` with ``g = dy
  · w`` and ``x̂ = x · rstd``. The second term is the gradient that flows through
  ``rstd`` itself: every element of the row moved the mean of squares, so every element
  feels every other one;
* a **reduction across programs**: ``dweight = Σ_rows dy · x̂`` sums over all M rows,
  which no single program sees. Each program of the backward keeps a running sum for its
  own rows in registers and writes it as one row of a small float32 buffer of *partial
  sums*; a second kernel adds the rows of that buffer in a fixed order. No atomics, so
  the same inputs give the same bits on every run (chapter 10 says why training needs
  that);
* how many partial sums: as many programs as fill every SM (``partial_count``), each
  taking a contiguous run of rows. Fewer partials would leave SMs idle; more would cost
  bytes (each partial is written once and read once) and buy no parallelism;
* the **byte model of the pair** (``forward_bytes``, ``backward_bytes``): the forward
  reads x and w and writes y and rstd; the backward reads x, dy, w and rstd, writes dx,
  and moves the partial sums twice. Every 16-bit element is read or written exactly
  once.

Everything is computed in float32, whatever the input dtype, and rounded once on the
store. ``python -m tools.benchmarks.ex09_rmsnorm --out DIR`` measures both kernels on
your GPU against eager PyTorch, ``torch.compile`` and Liger-Kernel
(docs/measurements/h200-ex09-rmsnorm.json).
"""

import os

import torch
import triton
import triton.language as tl

#: The longest row this file takes: one row is one block (16384 fp32 values are 64 KiB
#: of registers per program, spread over 16 warps).
MAX_COLS = 16384

#: Programs of the backward per SM. Each program holds a float32 running sum of dweight
#: for its columns across all its rows, so it is worth keeping the programs few and
#: long; a few per SM keep enough loads in flight. The sweep in
#: tools/benchmarks/ex09_rmsnorm.py (``bwd-sweep`` rows of
#: docs/measurements/h200-ex09-rmsnorm.json) measures 1, 2, 4 and 8.
PROGRAMS_PER_SM = 4

#: Triton's interpreter has no SMs to count: this stand-in takes their place there (the
#: grader assumes the same number), so that a few dozen rows already share each
#: program's loop.
INTERPRETER_SMS = 4



@triton.jit
def rmsnorm_forward_kernel(
    x_ptr,  # pointer to x[0, 0]
    w_ptr,  # pointer to weight[0]: one scale per column
    y_ptr,  # pointer to y[0, 0], the output
    rstd_ptr,  # pointer to rstd[0]: one float32 per row, saved for the backward
    x_row_stride,  # elements from the start of one row of x to the next (>= n_cols)
    y_row_stride,  # the same for y
    n_rows,  # M: the last program may hold fewer than ROWS rows
    n_cols,  # N: elements in each row
    eps,  # added to the mean of squares, inside the square root
    ROWS: tl.constexpr,  # rows per program, each one whole row (see forward_rows)
    BLOCK: tl.constexpr,  # a power of two >= n_cols: the whole row is one block
):
    # ROWS consecutive rows per program; the row offset in int64 (row * stride passes
    # 2^31 above 8 GiB).
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    row_mask = rows < n_rows
    col_mask = cols < n_cols
    mask = row_mask[:, None] & col_mask[None, :]
    # Masked lanes load 0: they add nothing to the sum of squares. The mean divides by
    # n_cols, the row's length, not by BLOCK: the padding lanes are not part of the row.
    x = tl.load(
        x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0
    ).to(tl.float32)
    # The statistics in float32: in float16 a sum of squares overflows past 65504 (a row
    # of 4096 values of magnitude 4 already does), and in bfloat16 it keeps only 8
    # significant bits.
    mean_square = tl.sum(x * x, axis=1) / n_cols
    # eps inside the square root: rstd stays finite (1 / sqrt(eps)) on a row of zeros.
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(rstd_ptr + rows, rstd, mask=row_mask)
    # Every program reads the same N weights: after the first rows they come from L2,
    # not HBM.
    w = tl.load(w_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(
        y_ptr + rows[:, None] * y_row_stride + cols[None, :],
        y.to(y_ptr.dtype.element_ty),
        mask=mask,
    )


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
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # This program's share of dweight = sum over its rows of dy * x_hat, one float32 per
    # column.
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    # A contiguous run of rows: [row_start, row_end). int64: row * stride passes 2^31
    # above 8 GiB.
    row_start = pid.to(tl.int64) * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in tl.range(row_start, row_end):
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(
            tl.float32
        )
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(
            tl.float32
        )
        # The forward's rstd, not a new one: no second reduction, no eps to know, the
        # same value.
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        dw += dy * x_hat
        # The weights are the same for every row, yet loaded in every iteration (from L1
        # after the first): held in registers beside x, dy and dw they cost spills. The
        # ``w per row`` rows of docs/measurements/h200-ex09-rmsnorm.json time both
        # forms.
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        g = dy * w  # the gradient with respect to x_hat
        # y depends on every x_j of the row through rstd; d rstd / d x_j = -rstd^3 x_j /
        # N gives the term -x_hat * mean(x_hat * g). The sum runs over the row's N
        # columns (masked lanes are 0).
        c = tl.sum(x_hat * g, axis=0) / n_cols
        dx = (g - x_hat * c) * rstd
        tl.store(
            dx_ptr + row * dx_row_stride + cols,
            dx.to(dx_ptr.dtype.element_ty),
            mask=mask,
        )
    # One row of partial sums per program, in float32: the second kernel adds them up.
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=mask)


@triton.jit
def dweight_reduce_kernel(
    partial_ptr,  # pointer to the (n_partials, n_cols) float32 partial sums
    dw_ptr,  # pointer to dweight[0], the output (weight's dtype)
    n_partials,  # rows of the partial buffer
    n_cols,  # N
    BLOCK_P: tl.constexpr,  # partial rows added per step
    BLOCK_N: tl.constexpr,  # columns per program
):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros((BLOCK_P, BLOCK_N), dtype=tl.float32)
    # Always the same order: the same partials give the same bits, run after run.
    for start in tl.range(0, n_partials, BLOCK_P):
        rows = start + tl.arange(0, BLOCK_P)
        mask = (rows < n_partials)[:, None] & col_mask[None, :]
        acc += tl.load(
            partial_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0
        )
    dw = tl.sum(acc, axis=0)
    tl.store(dw_ptr + cols, dw.to(dw_ptr.dtype.element_ty), mask=col_mask)


def sm_count(device: torch.device) -> int:
    """The GPU's number of SMs, or the interpreter's stand-in (INTERPRETER_SMS)."""
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def partial_count(n_rows: int, num_sms: int, programs_per_sm: int) -> int:
    """Programs of the backward, and rows of its partial-sum buffer.

    ``num_sms * programs_per_sm`` programs fill the GPU; each takes ``rows_per_program =
    ceil(n_rows / (num_sms * programs_per_sm))`` consecutive rows. Then ``ceil(n_rows /
    rows_per_program)`` programs cover every row and none is left without one: 16384
    rows on 132 SMs x 2 need 63 rows per program and 261 programs, not 264 (three would
    have no row to work on, and would still cost a row of partial sums each).
    """
    slots = num_sms * programs_per_sm
    rows_per_program = -(-n_rows // slots)
    return -(-n_rows // rows_per_program)


def reduce_tile(n_cols: int, num_sms: int) -> tuple[int, int]:
    """(BLOCK_P, BLOCK_N) of the reduction: about one program per SM, each owning
    BLOCK_N columns (32 at least: a 128-byte line of float32 per partial row), and a
    tile of 2048 values per step.

    The tile holds BLOCK_P partial rows at once: their loads are all in flight together,
    where a loop over single rows would wait for each one in turn. The partials were
    written a moment ago by the row kernel and sit in L2 (261 rows x 4096 columns x 4
    bytes = 4.3 MB at most): the reduction is short whatever its tile. In the
    interpreter (4 stand-in SMs) the tile is wide and the grid small, which is what
    keeps the CPU grading fast."""
    block_n = max(32, triton.next_power_of_2(triton.cdiv(n_cols, num_sms)))
    return max(1, 2048 // block_n), block_n


def forward_rows(block: int) -> int:
    """Rows per program of the forward: two for rows of 8192 columns, one otherwise.

    In bf16, one row of 8192 per program on 8 warps gives each thread four 16-byte loads
    of x in flight; two rows on 4 warps give it sixteen, and half as many programs to
    schedule. The ``fwd-rows`` rows of docs/measurements/h200-ex09-rmsnorm.json time 1,
    2 and 4 rows: other lengths gain under two points from it, and two rows of 16384
    float32 values no longer fit in a program's registers."""
    return 2 if block == 8192 else 1


def forward_num_warps(block: int, element_size: int, rows: int = 1) -> int:
    """Warps per program of the forward. One row: about 64 bytes of x per thread (32
    bf16 or 16 fp32 values: four 16-byte loads in flight each), between 1 and 16 warps
    (the ``fwd-sweep`` rows of docs/measurements/h200-ex09-rmsnorm.json). Two rows: 4
    warps (the ``fwd-rows`` rows)."""
    if rows > 1:
        return 4
    return min(16, max(1, block * element_size // 2048))


def backward_num_warps(block: int, element_size: int) -> int:
    """Warps per program of the backward: each thread holds its columns of x, dy, w and
    the running dweight, so more threads per row than the forward, between 4 and 16
    warps (``bwd-sweep`` rows of docs/measurements/h200-ex09-rmsnorm.json)."""
    return min(16, max(4, block * element_size // 1024))


def _check_rows(name: str, t: torch.Tensor) -> None:
    if t.ndim != 2 or t.stride(1) != 1:
        raise ValueError(
            f"{name} must be a 2-D tensor whose rows are contiguous ({name}.stride(1) "
            "== 1)"
        )
    if t.shape[1] > MAX_COLS:
        raise ValueError(
            f"rows of {t.shape[1]} columns do not fit in one block (at most {MAX_COLS})"
        )


def rmsnorm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float):
    """RMSNorm of each row of ``x`` (M, N), any row stride: returns ``(y, rstd)``.

    ``y`` is a new contiguous (M, N) tensor of x's dtype, ``y = x * rstd[:, None] *
    weight``; ``rstd`` is a float32 (M,) tensor, ``1 / sqrt(mean(x**2, dim=1) + eps)``.
    """
    _check_rows("x", x)
    n_rows, n_cols = x.shape
    # empty, not zeros: the kernel writes every element (a fill would be one more
    # launch).
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    ROWS = forward_rows(BLOCK)
    rmsnorm_forward_kernel[(triton.cdiv(n_rows, ROWS),)](
        x,
        weight,
        y,
        rstd,
        x.stride(0),
        y.stride(0),
        n_rows,
        n_cols,
        eps,
        ROWS=ROWS,
        BLOCK=BLOCK,
        num_warps=forward_num_warps(BLOCK, x.element_size(), ROWS),
    )
    return y, rstd


def rmsnorm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
):
    """Gradients of RMSNorm: returns ``(dx, dweight)`` for the ``dy`` of ``y =
    rmsnorm_forward(x, ...)``.

    ``dx`` is a new contiguous (M, N) tensor of x's dtype, ``dweight`` an (N,) tensor of
    weight's dtype. ``rstd`` is what the forward returned. Two launches: the row kernel
    (dx, and one row of float32 partial sums of dweight per program), then the reduction
    of the partial sums.
    """
    _check_rows("x", x)
    _check_rows("dy", dy)
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    num_sms = sm_count(x.device)
    n_partials = partial_count(n_rows, num_sms, PROGRAMS_PER_SM)
    rows_per_program = -(-n_rows // n_partials)
    partials = torch.empty((n_partials, n_cols), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(n_partials,)](
        dy, x, weight, rstd, dx, partials,
        dy.stride(0), x.stride(0), dx.stride(0), n_rows, n_cols, rows_per_program,
        BLOCK=BLOCK, num_warps=backward_num_warps(BLOCK, x.element_size()),
    )
    BLOCK_P, BLOCK_N = reduce_tile(n_cols, num_sms)
    dweight_reduce_kernel[(triton.cdiv(n_cols, BLOCK_N),)](
        partials, dweight, n_partials, n_cols, BLOCK_P=BLOCK_P, BLOCK_N=BLOCK_N,
    )
    return dx, dweight


# --- the byte model
# ----------------------------------------------------------------------------

def forward_bytes(m: int, n: int, element_size: int) -> int:
    """Fewest bytes the forward can move: read x (M·N) and weight (N), write y (M·N) in
    the input's dtype, and write rstd, one float32 (4 bytes) per row.

    The weight is N elements however many rows use it: after the first rows every
    program finds it in L2.
    """
    return (m * n + n + m * n) * element_size + 4 * m


def backward_bytes(m: int, n: int, element_size: int, n_partials: int) -> int:
    """Bytes the backward's two kernels move with ``n_partials`` rows of partial sums.

    The row kernel reads dy, x (M·N each), weight (N) and rstd (4·M), writes dx (M·N)
    and the partial sums (n_partials · N float32); the reduction reads the partial sums
    back and writes dweight (N). With ``n_partials = 0`` this is the minimum any
    backward must move.
    """
    row_kernel = (3 * m * n + n) * element_size + 4 * m + 4 * n_partials * n
    reduction = 4 * n_partials * n + n * element_size
    return row_kernel + reduction
