"""
Exercise 4 · Persistent softmax
===============================

In this exercise you will learn:

* what **occupancy** is: how many programs of a compiled kernel fit on one SM at once,
  limited by its registers, its shared memory and its threads;
* how a **persistent** kernel works: launch only as many programs as fit at once
  (``programs_per_sm x number of SMs``, never more than the rows) and let each loop over
  rows ``pid, pid + G, pid + 2G, ...`` (a grid-stride loop);
* to measure before you believe: on an NVIDIA H200 a persistent softmax lost to exercise
  3's one-program-per-row kernel at almost every shape (chapter 5).

The contract is exercise 3's: ``softmax_persistent(x)`` for a 2-D tensor (M, N) of
float32, float16 or bfloat16, any row stride, rows of up to 128 KiB (N up to 32768 in
float32, 65536 in 16-bit types); a new contiguous output of x's dtype; a -inf logit
gives exactly 0 and an all -inf row gives NaN; one kernel launch per call.

You write four things, marked TODO: the two occupancy functions (``programs_per_sm`` and
``grid_size``: the grader checks them on hand-computed cases, no GPU needed), the
kernel's row loop, and the three lines of the launcher that size the grid and launch.
``device_limits`` and ``kernel_resources`` are given: they read the GPU's limits and the
compiled kernel's registers and shared memory. Run ``grade exercise 4``; ``grade hint
4`` gives a hint when you are stuck.
"""

import functools
import os

import torch
import triton
import triton.language as tl

#: The most bytes of one row held in one block, as in exercise 3: 128 KiB, 32768 float32
#: or 65536 16-bit values.
MAX_ROW_BYTES = 128 * 1024


def max_cols(dtype: torch.dtype) -> int:
    """The longest row one block holds for ``dtype``: 32768 float32 or 65536 16-bit
    columns."""
    return MAX_ROW_BYTES // dtype.itemsize


#: Triton's interpreter (TRITON_INTERPRET=1) compiles nothing and has no SMs, so there
#: are no register or shared-memory counts to read and no SMs to count. These stand-ins
#: take their place there, and the grader assumes the same numbers (do not change them):
#: they give 2 programs per SM on 4 SMs, a grid of 8 programs, so any row count above 8
#: exercises your row loop.
INTERPRETER_KERNEL = {"n_regs": 64, "shared_bytes": 100_000, "num_warps": 4}
INTERPRETER_GPU = {
    "num_sms": 4,
    "regs_per_sm": 65536,
    "smem_per_sm": 232448,
    "threads_per_sm": 2048,
    "warp_size": 32,
}


@triton.jit
def softmax_persistent_kernel(
    x_ptr,  # pointer to x[0, 0]
    out_ptr,  # pointer to out[0, 0]
    # elements from the start of one row of x to the start of the next: x.stride(0)
    x_row_stride,
    out_row_stride,  # the same for out: out.stride(0)
    n_rows,  # M: rows to normalize, shared among the programs of the grid
    n_cols,  # N: elements in each row
    BLOCK: tl.constexpr,  # a power of two >= n_cols: the whole row is one block
    NUM_STAGES: tl.constexpr,  # rows in flight in the software pipeline of the row loop
):
    # TODO: loop over this program's rows: pid = tl.program_id(0), then pid + G, pid +
    # 2G, ... for a grid of G = tl.num_programs(0) programs (tl.range(start, end, step,
    # num_stages=NUM_STAGES) lets the compiler load the next row while this one is
    # computed). The body is exercise 3's softmax of one row.
    pass


def programs_per_sm(
    n_regs: int,
    shared_bytes: int,
    num_warps: int,
    *,
    regs_per_sm: int = 65536,
    smem_per_sm: int = 232448,
    threads_per_sm: int = 2048,
    warp_size: int = 32,
) -> int:
    """How many programs of a compiled kernel fit on one SM at once: the tightest of
    three limits.

    * registers: one program holds ``n_regs * warp_size * num_warps`` of the SM's
      ``regs_per_sm``;
    * shared memory: ``shared_bytes`` of the SM's ``smem_per_sm`` (no limit when it uses
      none);
    * threads: ``warp_size * num_warps`` of the SM's ``threads_per_sm``.

    Each limit rounds down: a program fits entirely or not at all.
    """
    # TODO: compute the three limits and return the smallest.
    raise NotImplementedError(
        "exercise 4: write programs_per_sm (registers, shared memory, threads)"
    )


def grid_size(n_rows: int, programs_per_sm: int, num_sms: int) -> int:
    """Programs to launch: every SM filled to its occupancy, never more programs than
    rows."""
    # TODO
    raise NotImplementedError("exercise 4: write grid_size")


@functools.lru_cache(maxsize=None)
def device_limits(device: torch.device) -> dict:
    """Given. The GPU's SM count and per-SM limits, or the interpreter's stand-ins
    (INTERPRETER_GPU).

    From Triton's driver, as Triton's fused-softmax tutorial reads them: registers and
    shared memory are the per-program maxima (65,536 and 232,448 bytes on an H100 or
    H200), which on NVIDIA GPUs since Volta equal what one SM offers. The thread limit
    comes from torch.
    """
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return dict(INTERPRETER_GPU)
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = triton.runtime.driver.active.utils.get_device_properties(index)
    threads = getattr(
        torch.cuda.get_device_properties(index), "max_threads_per_multi_processor", 2048
    )
    return {
        "num_sms": props["multiprocessor_count"],
        "regs_per_sm": props["max_num_regs"],
        "smem_per_sm": props["max_shared_mem"],
        "threads_per_sm": threads,
        "warp_size": props["warpSize"],
    }


def kernel_resources(kernel, *args, **meta) -> dict:
    """Given. ``{"n_regs", "shared_bytes", "num_warps"}`` of ``kernel`` compiled for
    these arguments.

    ``kernel.warmup`` compiles (or finds in Triton's cache) without launching; loading
    the binary (``_init_handles``) fills in the register count. The interpreter compiles
    nothing: its ``warmup`` returns None and the stand-ins INTERPRETER_KERNEL are used.
    """
    compiled = kernel.warmup(*args, grid=(1,), **meta)
    if compiled is None:
        return dict(INTERPRETER_KERNEL)
    compiled._init_handles()
    metadata = compiled.metadata
    return {
        "n_regs": compiled.n_regs,
        "shared_bytes": metadata.shared,
        "num_warps": metadata.num_warps,
    }


def softmax_persistent(x: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of a 2-D tensor ``x`` (any row stride), by a persistent
    kernel."""
    if x.ndim != 2 or x.stride(1) != 1:
        raise ValueError(
            "softmax expects a 2-D tensor whose elements within a row are contiguous "
            "(x.stride(1) == 1)"
        )
    n_rows, n_cols = x.shape
    if n_cols > max_cols(x.dtype):
        raise ValueError(
            f"rows of {n_cols} {x.dtype} columns do not fit in one block (at most "
            f"{max_cols(x.dtype)})"
        )
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    meta = dict(BLOCK=BLOCK, NUM_STAGES=2, num_warps=min(16, max(4, BLOCK // 512)))
    args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
    res = kernel_resources(softmax_persistent_kernel, *args, **meta)
    gpu = device_limits(x.device)
    # TODO: programs per SM for this compiled kernel on this GPU (programs_per_sm with
    # res and gpu), the grid (grid_size), then launch
    # softmax_persistent_kernel[grid](*args, **meta). Delete the line below.
    raise NotImplementedError(
        "exercise 4: size the grid and launch softmax_persistent_kernel"
    )
    return out
