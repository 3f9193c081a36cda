"""Exercise 4's persistent softmax against exercise 3's one-program-per-row kernel.

The sweep of `tools.benchmarks.softmax_sweep` (fp32; M = 4096, N = 256 ... 32768; N = 4096,
M = 32 ... 16384). Rows:

* ``solution``: the persistent kernel, with the occupancy it launched with (``n_regs``,
  ``shared_bytes``, ``programs_per_sm``, ``programs``: the grid);
* ``one_row_per_program``: exercise 3's solution on the same input, for the comparison;
* ``variant_stages{S}``: the persistent kernel with a software pipeline of S = 1, 2, 3 stages at
  N = 1024, 4096, 16384 and 32768 (the solution uses 2; Triton's tutorial uses 4, which needs
  393,280 bytes of shared memory at N = 32768 and does not launch on an H200; 3 stages need two
  rows of 128 KiB there, which do not fit either: that row records the error).

Chapter 5's claim to check: persistence loses at few long rows and many short rows alike. At
N = 32768 a program holds a 128 KiB row: one program per SM, the grid is the SM count, and the
pipeline is the only overlap an SM gets between one row's loads and the previous row's math.
"""

from __future__ import annotations

import torch
import triton

from tools.benchmarks.softmax_sweep import sweep

STAGES_PROBED_AT = (1024, 4096, 16384, 32768)


def _launch(num_stages: int, record: dict | None = None):
    """The solution's launcher with a given pipeline depth; ``record`` receives its occupancy."""
    import solutions.ex04_softmax_persistent as sol

    def run(x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        block = triton.next_power_of_2(n_cols)
        meta = dict(BLOCK=block, NUM_STAGES=num_stages, num_warps=min(16, max(4, block // 512)))
        args = (x, out, x.stride(0), out.stride(0), n_rows, n_cols)
        res = sol.kernel_resources(sol.softmax_persistent_kernel, *args, **meta)
        gpu = sol.device_limits(x.device)
        per_sm = sol.programs_per_sm(res["n_regs"], res["shared_bytes"], res["num_warps"],
                                     regs_per_sm=gpu["regs_per_sm"], smem_per_sm=gpu["smem_per_sm"],
                                     threads_per_sm=gpu["threads_per_sm"], warp_size=gpu["warp_size"])
        grid = sol.grid_size(n_rows, per_sm, gpu["num_sms"])
        if record is not None:
            record.update(n_regs=res["n_regs"], shared_bytes=res["shared_bytes"], num_warps=res["num_warps"],
                          programs_per_sm=per_sm, programs=grid)
        sol.softmax_persistent_kernel[(grid,)](*args, **meta)
        return out

    return run


def _variants(x: torch.Tensor) -> list:
    m, n = x.shape
    if m != 4096 or n not in STAGES_PROBED_AT:
        return []
    return [(f"variant_stages{s}", _launch(s), {"num_stages": s}) for s in (1, 2, 3)]


def run() -> list[dict]:
    from solutions.ex03_softmax import softmax
    from solutions.ex04_softmax_persistent import softmax_persistent

    rows = sweep([("solution", softmax_persistent), ("one_row_per_program", softmax)], extra=_variants)
    # The occupancy each solution row launched with (the solution's own launcher, 2 stages).
    for row in rows:
        if row["kernel"] == "solution" and row.get("ms") is not None:
            record: dict = {}
            x = torch.empty(row["M"], row["N"], device="cuda")
            _launch(2, record)(x)
            torch.cuda.synchronize()
            row.update(record)
            del x
    return rows
