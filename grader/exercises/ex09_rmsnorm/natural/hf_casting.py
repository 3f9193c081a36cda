"""Correct, with Hugging Face Llama's rounding order (as Liger-Kernel's "llama" casting mode).

How it differs from the solution: the normalized row x̂ = x · rstd is rounded to the input's dtype
before it is multiplied by the weight (``weight * hidden_states.to(input_dtype)`` in
transformers' LlamaRMSNorm), so a 16-bit y is rounded twice; the backward adds dy · x̂ with x̂
rounded the same way; rows are addressed by pointers that step from row to row.
"""

import os

import torch
import triton
import triton.language as tl

# Its difference is the rounding order of 16-bit outputs: the 16-bit cases of every correctness check.
SELECT = "(test_forward or test_backward) and (fp16 or bf16)"

PROGRAMS_PER_SM = 4
INTERPRETER_SMS = 4


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_row_stride, y_row_stride, n_cols, eps,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x_in = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=0.0)
    x = x_in.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)
    x_hat = (x * rstd).to(x_in.dtype)  # rounded to the input dtype first, as transformers does
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    y = w.to(tl.float32) * x_hat.to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, partial_ptr, dy_row_stride, x_row_stride,
                            dx_row_stride, n_rows, n_cols, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    start = pid.to(tl.int64) * rows_per_program
    end = tl.minimum(start + rows_per_program, n_rows)
    x_row = x_ptr + start * x_row_stride
    dy_row = dy_ptr + start * dy_row_stride
    dx_row = dx_ptr + start * dx_row_stride
    for row in range(start, end):
        x_in = tl.load(x_row + offs, mask=mask, other=0.0)
        x = x_in.to(tl.float32)
        dy = tl.load(dy_row + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        m = dy * w
        dx = rstd * m - rstd * (rstd * rstd * tl.sum(m * x, axis=0) / n_cols) * x
        tl.store(dx_row + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        acc += dy * (x * rstd).to(x_in.dtype).to(tl.float32)
        x_row += x_row_stride
        dy_row += dy_row_stride
        dx_row += dx_row_stride
    tl.store(partial_ptr + pid.to(tl.int64) * n_cols + offs, acc, mask=mask)


@triton.jit
def dweight_reduce_kernel(partial_ptr, dw_ptr, n_partials, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros((BLOCK_P, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK_P):
        rows = start + tl.arange(0, BLOCK_P)
        acc += tl.load(partial_ptr + rows[:, None] * n_cols + cols[None, :],
                       mask=(rows < n_partials)[:, None] & col_mask[None, :], other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=col_mask)


def sm_count(device):
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def partial_count(n_rows, num_sms, programs_per_sm):
    rows_per_program = triton.cdiv(n_rows, num_sms * programs_per_sm)
    return triton.cdiv(n_rows, rows_per_program)


def rmsnorm_forward(x, weight, eps):
    M, N = x.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(N)
    rmsnorm_forward_kernel[(M,)](x, weight, y, rstd, x.stride(0), y.stride(0), N, eps, BLOCK=BLOCK,
                                 num_warps=min(16, max(1, BLOCK // 512)))
    return y, rstd


def rmsnorm_backward(dy, x, weight, rstd):
    M, N = x.shape
    dx = torch.empty((M, N), dtype=x.dtype, device=x.device)
    dweight = torch.empty_like(weight)
    num_sms = sm_count(x.device)
    P = partial_count(M, num_sms, PROGRAMS_PER_SM)
    partials = torch.empty((P, N), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(N)
    rmsnorm_backward_kernel[(P,)](dy, x, weight, rstd, dx, partials, dy.stride(0), x.stride(0), dx.stride(0), M, N,
                                  triton.cdiv(M, P), BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 256)))
    BLOCK_N = max(32, triton.next_power_of_2(triton.cdiv(N, num_sms)))
    dweight_reduce_kernel[(triton.cdiv(N, BLOCK_N),)](partials, dweight, P, N, BLOCK_P=max(1, 2048 // BLOCK_N),
                                                     BLOCK_N=BLOCK_N)
    return dx, dweight


def forward_bytes(m, n, element_size):
    return (m * n + n + m * n) * element_size + 4 * m


def backward_bytes(m, n, element_size, n_partials):
    return (3 * m * n + 2 * n) * element_size + 4 * m + 8 * n_partials * n
