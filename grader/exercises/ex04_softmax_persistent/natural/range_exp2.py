"""The row loop over Python's ``range(pid, n_rows, step)`` with the row turned into int64 by
``row.to(tl.int64)``, ``exp2`` instead of ``exp``, and three pipeline stages. Differs from the
solution in the loop, the exponential and the stages."""

import functools
import os

import torch
import triton
import triton.language as tl

SELECT = ("programs_per_sm or grid_size or grid or (matches_reference and (n1 or n781)) or strided_rows "
          "or extreme_logits or fully_masked_row")


#: The interpreter's stand-ins, kept from the stub.
INTERPRETER_KERNEL = {"n_regs": 64, "shared_bytes": 100_000, "num_warps": 4}
INTERPRETER_GPU = {"num_sms": 4, "regs_per_sm": 65536, "smem_per_sm": 232448, "threads_per_sm": 2048, "warp_size": 32}


@functools.lru_cache(maxsize=None)
def device_limits(device: torch.device) -> dict:
    """Kept from the stub."""
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return dict(INTERPRETER_GPU)
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = triton.runtime.driver.active.utils.get_device_properties(index)
    threads = getattr(torch.cuda.get_device_properties(index), "max_threads_per_multi_processor", 2048)
    return {"num_sms": props["multiprocessor_count"], "regs_per_sm": props["max_num_regs"],
            "smem_per_sm": props["max_shared_mem"], "threads_per_sm": threads, "warp_size": props["warpSize"]}


def kernel_resources(kernel, *args, **meta) -> dict:
    """Kept from the stub."""
    compiled = kernel.warmup(*args, grid=(1,), **meta)
    if compiled is None:
        return dict(INTERPRETER_KERNEL)
    compiled._init_handles()
    metadata = compiled.metadata
    return {"n_regs": compiled.n_regs, "shared_bytes": metadata.shared, "num_warps": metadata.num_warps}


@triton.jit
def softmax_persistent_kernel(x_ptr, out_ptr, x_row_stride, out_row_stride, n_rows, n_cols,
                              BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    step = tl.num_programs(0)
    for row in range(tl.program_id(0), n_rows, step):
        row64 = row.to(tl.int64)
        x = tl.load(x_ptr + row64 * x_row_stride + offs, mask=offs < n_cols, other=float("-inf"))
        x = x.to(tl.float32) * 1.4426950408889634
        p = tl.exp2(x - tl.max(x, axis=0))
        y = p / tl.sum(p, axis=0)
        tl.store(out_ptr + row64 * out_row_stride + offs, y.to(out_ptr.dtype.element_ty), mask=offs < n_cols)


def programs_per_sm(n_regs: int, shared_bytes: int, num_warps: int, *, regs_per_sm: int = 65536,
                    smem_per_sm: int = 232448, threads_per_sm: int = 2048, warp_size: int = 32) -> int:
    threads = warp_size * num_warps
    by_regs = regs_per_sm // (threads * n_regs)
    by_threads = threads_per_sm // threads
    by_smem = smem_per_sm // shared_bytes if shared_bytes > 0 else by_threads
    return min(by_regs, by_smem, by_threads)


def grid_size(n_rows: int, programs_per_sm: int, num_sms: int) -> int:
    programs = programs_per_sm * num_sms
    return n_rows if n_rows < programs else programs


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    meta = dict(BLOCK=BLOCK, NUM_STAGES=3, num_warps=4 if BLOCK <= 2048 else 8)
    args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
    res = kernel_resources(softmax_persistent_kernel, *args, **meta)
    gpu = device_limits(x.device)
    limits = {k: gpu[k] for k in ("regs_per_sm", "smem_per_sm", "threads_per_sm", "warp_size")}
    per_sm = programs_per_sm(res["n_regs"], res["shared_bytes"], res["num_warps"], **limits)
    grid = (grid_size(n_rows, per_sm, gpu["num_sms"]),)
    softmax_persistent_kernel[grid](*args, **meta)
    return out
