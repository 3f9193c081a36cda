"""Online softmax (exercise 5): the solution against torch.softmax, fp32, timed in turns.

Two groups of rows:

* ``M = 4096`` with ``N`` from 256 to 32768, and ``N = 4096`` with ``M`` from 32 to 16384: the
  shapes of the sweep in docs/measurements/h200-baselines-2026-11-30.json, whose
  ``triton_online`` column this reproduces. Rows this short stay in the L2 cache between the two
  passes (4096 fp32 columns are 16 KiB per row): the second read is served by the L2, not by HBM.
* ``N = 2^20`` (4 MiB per row), ``M`` = 64, 256 and the grader's max(256, 2 x SMs): rows no
  program can hold, the exercise's case. Hundreds of 4 MiB rows in flight are far more than the L2, so both reads come from HBM
  and the algorithm's count (two reads, one write) is what the memory moved. torch.softmax also makes several passes over
  such rows. Besides the solution as shipped, the same kernel with other block sizes and warp
  counts (``variant_b<BLOCK_SIZE>_w<num_warps>``) and the per-lane form of chapter 6
  (``per_lane_...``), so one run calibrates the launch choice.

Every row's ``bytes``, ``gbps`` and ``fraction`` count what the memory must move at least, one read
and one write, ``2 * M * N * 4`` (``spec.least_hbm_bytes``; the count of exercises 3 and 4, so the
three kernels' rows compare directly): a bandwidth by this count cannot pass the ceiling. The
algorithm's own count, two reads and one write (``spec.minimum_bytes``, what the grader credits),
is ``algorithm_bytes`` with its ``fraction_algorithm``: at N = 2^20 that is what the memory moved
(the floor's rows); on rows of 16-128 KiB the L2 serves part of the second read and it passes 100%,
which is why it is not the count the rows are drawn by. The kernels of one shape are timed in turns
(two rounds; `time_rows_in_turns`), each checked against torch.softmax first.

    python -m tools.benchmarks ex05_online_softmax --out docs/measurements
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from grader import bandwidth
from grader.exercises.ex05_online_softmax.spec import least_hbm_bytes, minimum_bytes
from tools.benchmarks import ceiling_gbps, time_rows_in_turns

SWEEP_M = 4096
SWEEP_N = (256, 1024, 2048, 4096, 6272, 8192, 16384, 32768)
#: The other sweep of the baselines file: N = 4096, M from 32 to 16384 (M = 4096 is in the first).
SWEEP_M_AT_N = 4096
SWEEP_MS = (32, 256, 1024, 16384)
LONG_N = 1 << 20
#: Rows at N = 2^20; the grader's performance check uses max(256, 2 x SMs) rows (264 on the H200),
#: which run() adds.
LONG_M = (64, 256)
#: (BLOCK_SIZE, num_warps) tried besides the solution's own choice at N = 2^20.
LAUNCH_VARIANTS = ((2048, 4), (4096, 8), (8192, 8), (16384, 16), (16384, 32))


@triton.jit
def per_lane_kernel(
    out_ptr,  # pointer to the output (n_rows, n_cols), contiguous
    x_ptr,  # pointer to the input's first element
    x_row_stride,  # elements between rows of x
    out_row_stride,  # elements between rows of out
    n_cols,  # elements per row
    BLOCK_SIZE: tl.constexpr,  # columns per loop iteration
):
    # Chapter 6's form: one running (m, l) per lane, merged across lanes once after the loop,
    # so the loop has no cross-lane reduction (but two exponentials per element instead of one).
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    out_row = out_ptr + row * out_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    m = tl.full((BLOCK_SIZE,), float("-inf"), tl.float32)
    l = tl.zeros((BLOCK_SIZE,), tl.float32)
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)
        l = l * tl.exp(m - m_ref) + tl.exp(x - m_ref)
        m = m_new
        start += BLOCK_SIZE
    m_row = tl.max(m, axis=0)
    l_row = tl.sum(l * tl.exp(m - m_row), axis=0)
    start = 0
    while start < n_cols:
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + start + cols, (tl.exp(x - m_row) / l_row).to(out_ptr.dtype.element_ty), mask=mask)
        start += BLOCK_SIZE


def _launcher(kernel, block: int, warps: int):
    def launch(x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
        block_size = min(block, triton.next_power_of_2(n_cols))
        kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=block_size, num_warps=warps)
        return out

    return launch


def _check(name: str, out: torch.Tensor, x: torch.Tensor) -> None:
    """The output matches torch.softmax on three rows (float64), or the row is not worth timing."""
    rows = sorted({0, x.shape[0] // 2, x.shape[0] - 1})
    expected = torch.softmax(x[rows].double(), dim=-1)
    error = (out[rows].double() - expected).abs().max().item()
    scale = expected.abs().max().item()
    if not error <= 1e-5 * scale:
        raise AssertionError(f"{name}: max error {error:.3g} against torch.softmax (max|answer| {scale:.3g})")


def _rows_in_turns(kernels: dict[str, object], x: torch.Tensor, **shape) -> list[dict]:
    """Each kernel checked on ``x``, then all timed in turns; a kernel that fails gets its error as its row."""
    m, n = x.shape
    rows, ready = [], {}
    for name, fn in kernels.items():
        try:
            _check(name, fn(x), x)
            ready[name] = lambda fn=fn: fn(x)
        except Exception as exc:  # one configuration failing (out of resources, say) must not lose the others
            rows.append({"kernel": name, **shape, "ms": None, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    ceiling = ceiling_gbps()
    nbytes, algorithm_bytes = least_hbm_bytes(m, n, 4), minimum_bytes(m, n, 4)
    for row in time_rows_in_turns(ready, rounds=2, **shape).values():
        achieved = bandwidth.gbps(nbytes, row["ms"])
        rows.append({**row, "bytes": nbytes, "gbps": round(achieved, 1), "fraction": round(achieved / ceiling, 4),
                     "algorithm_bytes": algorithm_bytes,
                     "fraction_algorithm": round(bandwidth.gbps(algorithm_bytes, row["ms"]) / ceiling, 4)})
    return rows


def run(device: str = "cuda", sweep_n=SWEEP_N, sweep_m: int = SWEEP_M, sweep_ms=SWEEP_MS,
        sweep_m_at_n: int = SWEEP_M_AT_N, long_n: int = LONG_N, long_m=LONG_M) -> list[dict]:
    from solutions.ex05_online_softmax import softmax_online, softmax_online_kernel

    torch.manual_seed(0)
    rows = []
    peers = {"solution": softmax_online, "torch_softmax": lambda t: torch.softmax(t, dim=-1)}
    shapes = [(sweep_m, n) for n in sweep_n] + [(m, sweep_m_at_n) for m in sweep_ms]
    for m, n in shapes:
        x = torch.randn((m, n), device=device)
        rows += _rows_in_turns(peers, x, M=m, N=n, dtype="fp32")
        del x
    if device == "cuda":
        graded = max(256, 2 * torch.cuda.get_device_properties(0).multi_processor_count)
        long_m = tuple(dict.fromkeys((*long_m, graded)))
    variants = {f"variant_b{block}_w{warps}": _launcher(softmax_online_kernel, block, warps)
                for block, warps in LAUNCH_VARIANTS}
    variants["per_lane_b4096_w8"] = _launcher(per_lane_kernel, 4096, 8)
    variants["per_lane_b8192_w16"] = _launcher(per_lane_kernel, 8192, 16)
    for m in long_m:
        x = torch.randn((m, long_n), device=device)
        rows += _rows_in_turns({**peers, **variants}, x, M=m, N=long_n, dtype="fp32")
        del x
    return rows
