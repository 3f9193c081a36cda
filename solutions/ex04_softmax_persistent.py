"""
Exercise 4 · Persistent softmax — reference solution
====================================================

In this exercise you will learn:

* what **occupancy** is: how many programs of a compiled kernel fit on one SM at once,
  limited by its registers, its shared memory and its threads, and how to read those
  from the kernel Triton compiled (``n_regs``, ``metadata.shared``);
* how a **persistent** kernel works: launch only as many programs as fit at once
  (``occupancy x number of SMs``, never more than the rows) and let each loop over rows
  ``pid, pid + G, pid + 2G, ...`` (a grid-stride loop);
* that persistence is not free: on an NVIDIA H200 a tutorial-style persistent softmax
  lost to the one-program-per-row kernel of exercise 3 at almost every shape measured
  (rows ``kernel=solution`` and ``kernel=one_row_per_program`` of
  ``docs/measurements/h200-ex04-softmax-persistent.json``). The hardware already starts
  a new program within cycles of the last one ending; a loop saves little and serializes
  the waits of the rows one program handles.

The contract is exercise 3's: ``softmax_persistent(x)`` for a 2-D tensor (M, N) of
float32, float16 or bfloat16, any row stride, rows of up to 128 KiB (N up to 32768 in
float32, 65536 in 16-bit types); a new contiguous output; one launch. At 128 KiB a row
fills a program's share of the registers and its pipeline buffer takes 128 KiB of shared
memory, so one program fits per SM: the grid is one program per SM, and the pipeline is
then the only thing that overlaps the next row's load with this row's arithmetic on that
SM. ``python -m tools.benchmarks ex04_softmax_persistent`` measures it against exercise
3 on your GPU.
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
#: take their place there, and the grader assumes the same numbers: 64 registers per
#: thread, 100,000 bytes of shared memory and 4 warps per program on a GPU of 4 SMs give
#: 2 programs per SM (shared memory is the tightest limit) and a grid of 8 programs, so
#: any row count above 8 exercises the row loop.
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
    # The columns and their mask are the same for every row: computed once, outside the
    # loop.
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # The grid-stride loop: program pid handles rows pid, pid + G, pid + 2G, ... for G
    # programs, so every row is visited exactly once, whatever G is. num_stages lets the
    # compiler issue the loads of the next row while the current one is computed (it
    # buffers them in shared memory).
    for row in tl.range(
        tl.program_id(0), n_rows, tl.num_programs(0), num_stages=NUM_STAGES
    ):
        # row * stride passes 2^31 for tensors over 8 GiB
        row_offset = tl.cast(row, tl.int64)
        # The body of exercise 3: masked lanes load -inf, arithmetic in float32, max
        # subtracted.
        x = tl.load(
            x_ptr + row_offset * x_row_stride + cols, mask=mask, other=-float("inf")
        ).to(tl.float32)
        z = x - tl.max(x, axis=0)
        numerator = tl.exp(z)
        y = numerator / tl.sum(numerator, axis=0)
        tl.store(
            out_ptr + row_offset * out_row_stride + cols,
            y.to(out_ptr.dtype.element_ty),
            mask=mask,
        )


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

    Each limit rounds down: a program fits entirely or not at all. (The hardware also
    caps resident programs per SM, 16 to 32 depending on the GPU; with 4 warps or more
    per program the thread limit is always the tighter one, so this model leaves that
    cap out.)
    """
    threads = warp_size * num_warps
    limits = [regs_per_sm // (n_regs * threads),  # registers
              threads_per_sm // threads]  # threads
    if shared_bytes > 0:
        limits.append(smem_per_sm // shared_bytes)  # shared memory
    return min(limits)


def grid_size(n_rows: int, programs_per_sm: int, num_sms: int) -> int:
    """Programs to launch: every SM filled to its occupancy, never more programs than
    rows."""
    return min(n_rows, programs_per_sm * num_sms)


@functools.lru_cache(maxsize=None)
def device_limits(device: torch.device) -> dict:
    """The GPU's SM count and per-SM limits, or the interpreter's stand-ins
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
    """``{"n_regs", "shared_bytes", "num_warps"}`` of ``kernel`` compiled for these
    arguments.

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
            f"{max_cols(x.dtype)}: "
            f"{MAX_ROW_BYTES // 1024} KiB per row): that is exercise 5, the online "
            "softmax"
        )
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    # At least 4 warps: with fewer, the hardware's cap on resident programs per SM
    # (which the occupancy model leaves out) could bind before the thread limit.
    # Otherwise as exercise 3: about 16 elements per thread, up to 16 warps.
    num_warps = min(16, max(4, BLOCK // 512))
    # Two stages: the next row's loads are in flight while this row is reduced; that
    # costs one row of shared memory per program (128 KiB at the longest rows, of an
    # H200 SM's 227 KiB). Triton's tutorial uses 4 stages, which needs three rows:
    # 393,280 bytes at 32768 fp32 columns, more than an H200 SM has (an OutOfResources
    # at launch). The benchmark times 1, 2 and 3 stages.
    meta = dict(BLOCK=BLOCK, NUM_STAGES=2, num_warps=num_warps)
    args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
    # Occupancy from the kernel compiled for exactly these arguments: registers and
    # shared memory change with the block, the dtype and the number of stages. After the
    # first call the warm-up is a lookup in Triton's cache, the same lookup the launch
    # itself makes.
    res = kernel_resources(softmax_persistent_kernel, *args, **meta)
    gpu = device_limits(x.device)
    per_sm = programs_per_sm(
        res["n_regs"],
        res["shared_bytes"],
        res["num_warps"],
        regs_per_sm=gpu["regs_per_sm"],
        smem_per_sm=gpu["smem_per_sm"],
        threads_per_sm=gpu["threads_per_sm"],
        warp_size=gpu["warp_size"],
    )
    grid = (grid_size(n_rows, per_sm, gpu["num_sms"]),)
    softmax_persistent_kernel[grid](*args, **meta)
    return out
