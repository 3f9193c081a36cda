"""Correct, written from the textbook formulas rather than the solution's factored ones.

How it differs from the solution: rstd as ``1 / tl.sqrt(...)``; dx as
``rstd·g − (rstd³ / N)·Σ(x·g)·x`` and dweight as ``Σ dy·x·rstd``; the weight loaded inside the row
loop instead of once per program; 2 programs per SM; and a reduction kernel that adds the partial
rows one at a time over a 1-D block of columns.

On the H200 it is slower than the floor (its backward is under the backward's floor): its rows in
docs/measurements/h200-grading-sized-rounds.json. A floor may fail a slow design; it must not fail a
right answer.
"""

import os

import torch
import triton
import triton.language as tl

PROGRAMS_PER_SM = 2
INTERPRETER_SMS = 4


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    variance = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(variance + eps)
    tl.store(rstd_ptr + row, rstd)
    tl.store(y_ptr + row * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    first = pid.to(tl.int64) * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    for row in range(first, last):
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        g = dy * w
        dx = rstd * g - (rstd * rstd * rstd / n_cols) * tl.sum(x * g, axis=0) * x
        tl.store(dx_ptr + row * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * x * rstd
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + cols, dw, mask=mask)


@triton.jit
def dweight_reduce_kernel(partial_ptr, dw_ptr, n_partials, n_cols, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for p in range(0, n_partials):
        total += tl.load(partial_ptr + p * n_cols + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, total.to(dw_ptr.dtype.element_ty), mask=mask)


def sm_count(device):
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def partial_count(n_rows, num_sms, programs_per_sm):
    rows_per_program = triton.cdiv(n_rows, num_sms * programs_per_sm)
    return triton.cdiv(n_rows, rows_per_program)


def rmsnorm_forward(x, weight, eps):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_forward_kernel[(n_rows,)](x, weight, y, rstd, x.stride(0), y.stride(0), n_cols, eps, BLOCK=BLOCK,
                                      num_warps=8 if BLOCK >= 4096 else 4)
    return y, rstd


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    programs = partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM)
    partials = torch.empty((programs, n_cols), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(programs,)](dy, x, weight, rstd, dx, partials, dy.stride(0), x.stride(0),
                                         dx.stride(0), n_rows, n_cols, triton.cdiv(n_rows, programs),
                                         BLOCK=BLOCK, num_warps=16 if BLOCK >= 8192 else 8)
    BLOCK_N = min(1024, triton.next_power_of_2(n_cols))
    dweight_reduce_kernel[(triton.cdiv(n_cols, BLOCK_N),)](partials, dweight, programs, n_cols, BLOCK_N=BLOCK_N)
    return dx, dweight


def forward_bytes(m, n, element_size):
    return 2 * m * n * element_size + n * element_size + m * 4


def backward_bytes(m, n, element_size, n_partials):
    reads = (2 * m * n + n) * element_size + m * 4
    writes = m * n * element_size
    partials = 2 * n_partials * n * 4
    return reads + writes + partials + n * element_size
