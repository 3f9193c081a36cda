"""Wrong: the launcher still refuses rows over 16384 columns. Rows of up to 128 KiB (32768 float32
columns) fit in one block: one program per SM, with a 128 KiB pipeline buffer in shared memory."""

import functools
import os

import torch
import triton
import triton.language as tl

EXPECTED = "holds rows of up to 128 KiB in one block"
SELECT = "longest_row and fp32"

MAX_COLS = 16384  # WRONG: the contract is 128 KiB per row, 32768 float32 columns

INTERPRETER_KERNEL = {"n_regs": 64, "shared_bytes": 100_000, "num_warps": 4}
INTERPRETER_GPU = {"num_sms": 4, "regs_per_sm": 65536, "smem_per_sm": 232448, "threads_per_sm": 2048, "warp_size": 32}


@triton.jit
def softmax_persistent_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_rows, n_cols,
                              BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=NUM_STAGES):
        row_offset = tl.cast(row, tl.int64)
        x = tl.load(x_ptr + row_offset * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        y = num / tl.sum(num, axis=0)
        tl.store(out_ptr + row_offset * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def programs_per_sm(n_regs, shared_bytes, num_warps, *, regs_per_sm=65536, smem_per_sm=232448,
                    threads_per_sm=2048, warp_size=32):
    threads = warp_size * num_warps
    limits = [regs_per_sm // (n_regs * threads), threads_per_sm // threads]
    if shared_bytes > 0:
        limits.append(smem_per_sm // shared_bytes)
    return min(limits)


def grid_size(n_rows, programs_per_sm, num_sms):
    return min(n_rows, programs_per_sm * num_sms)


@functools.lru_cache(maxsize=None)
def device_limits(device):
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return dict(INTERPRETER_GPU)
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = triton.runtime.driver.active.utils.get_device_properties(index)
    threads = getattr(torch.cuda.get_device_properties(index), "max_threads_per_multi_processor", 2048)
    return {"num_sms": props["multiprocessor_count"], "regs_per_sm": props["max_num_regs"],
            "smem_per_sm": props["max_shared_mem"], "threads_per_sm": threads, "warp_size": props["warpSize"]}


def kernel_resources(kernel, *args, **meta):
    compiled = kernel.warmup(*args, grid=(1,), **meta)
    if compiled is None:
        return dict(INTERPRETER_KERNEL)
    compiled._init_handles()
    return {"n_regs": compiled.n_regs, "shared_bytes": compiled.metadata.shared, "num_warps": compiled.metadata.num_warps}


def softmax_persistent(x):
    n_rows, n_cols = x.shape
    if n_cols > MAX_COLS:
        raise ValueError(f"rows of {n_cols} columns do not fit in one block (at most {MAX_COLS})")
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    meta = dict(BLOCK=BLOCK, NUM_STAGES=2, num_warps=min(16, max(4, BLOCK // 512)))
    args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
    res = kernel_resources(softmax_persistent_kernel, *args, **meta)
    gpu = device_limits(x.device)
    per_sm = programs_per_sm(res["n_regs"], res["shared_bytes"], res["num_warps"], regs_per_sm=gpu["regs_per_sm"],
                             smem_per_sm=gpu["smem_per_sm"], threads_per_sm=gpu["threads_per_sm"],
                             warp_size=gpu["warp_size"])
    softmax_persistent_kernel[(grid_size(n_rows, per_sm, gpu["num_sms"]),)](*args, **meta)
    return out
