"""Correct, with another division of the work.

How it differs from the solution: the forward normalizes 4 rows per program as one 2-D block (a
row mask beside the column mask); the backward's program pid takes rows pid, pid + G, pid + 2G, ...
(a grid-stride loop over the G = partial_count(...) programs, as in exercise 4) instead of a
contiguous run; the reduction uses a fixed 16 x 128 tile.

On the H200 it passes both floors, closer to the backward's than the solution: its rows in
docs/measurements/h200-grading-sized-rounds.json.
"""

import os

import torch
import triton
import triton.language as tl

# Its difference is how the rows are divided: the grid, the traffic, determinism, and the cases with
# more rows than one program or block takes.
SELECT = "backward_grid or backward_traffic or dweight_deterministic or rows_x781 or strided or test_traffic"

PROGRAMS_PER_SM = 4
INTERPRETER_SMS = 4
ROWS_PER_PROGRAM = 4


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_rows, n_cols, eps,
                           ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    row_mask = rows < n_rows
    mask = row_mask[:, None] & (cols < n_cols)[None, :]
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / n_cols + eps)
    tl.store(rstd_ptr + rows, rstd, mask=row_mask)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in tl.range(pid, n_rows, tl.num_programs(0)):
        row = tl.cast(r, tl.int64)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        x_hat = x * rstd
        wdy = w * dy
        mean = tl.sum(x_hat * wdy, axis=0) / n_cols
        tl.store(dx_ptr + row * dx_row_stride + cols, (rstd * (wdy - x_hat * mean)).to(dx_ptr.dtype.element_ty),
                 mask=mask)
        dw += x_hat * dy
    tl.store(partial_ptr + pid * n_cols + cols, dw, mask=mask)


@triton.jit
def dweight_reduce_kernel(partial_ptr, dw_ptr, n_partials, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_P, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK_P):
        p = start + tl.arange(0, BLOCK_P)
        mask = (p < n_partials)[:, None] & (cols < n_cols)[None, :]
        acc += tl.load(partial_ptr + p[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < n_cols)


def sm_count(device):
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def partial_count(n_rows, num_sms, programs_per_sm):
    per_program = -(-n_rows // (num_sms * programs_per_sm))
    return -(-n_rows // per_program)


def rmsnorm_forward(x, weight, eps):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    grid = (triton.cdiv(n_rows, ROWS_PER_PROGRAM),)
    rmsnorm_forward_kernel[grid](x, weight, y, rstd, x.stride(0), y.stride(0), n_rows, n_cols, eps,
                                 ROWS=ROWS_PER_PROGRAM, BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 256)))
    return y, rstd


def rmsnorm_backward(dy, x, weight, rstd):
    n_rows, n_cols = x.shape
    dx = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    G = partial_count(n_rows, sm_count(x.device), PROGRAMS_PER_SM)
    partials = torch.empty((G, n_cols), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(n_cols)
    rmsnorm_backward_kernel[(G,)](dy, x, weight, rstd, dx, partials, dy.stride(0), x.stride(0), dx.stride(0),
                                  n_rows, n_cols, BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 512)))
    dweight_reduce_kernel[(triton.cdiv(n_cols, 128),)](partials, dweight, G, n_cols, BLOCK_P=16, BLOCK_N=128)
    return dx, dweight


def forward_bytes(m, n, element_size):
    x, w, y, rstd = m * n * element_size, n * element_size, m * n * element_size, m * 4
    return x + w + y + rstd


def backward_bytes(m, n, element_size, n_partials):
    dy = x = dx = m * n * element_size
    w = dw = n * element_size
    rstd = m * 4
    partials = n_partials * n * 4
    return dy + x + w + rstd + dx + partials + partials + dw
