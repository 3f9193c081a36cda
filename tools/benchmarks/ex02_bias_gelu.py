"""Bias + GELU at 16384 x 4096 (x and out: 537 MB in fp32, about 8.5x the H200's L2): the solution
against the eager pair (x + bias, then F.gelu) and torch.compile of the same function, in fp32,
fp16 and bf16.

Every row's ``gbps``/``fraction`` use the *minimum* bytes, (2MN + N) x element size, as the grader
does. The eager rows also carry ``moved_bytes`` (the unfused pair's real traffic, (4MN + N) x
element size) and ``moved_gbps``: how fast it runs on the bytes it actually moves.

``sweep()`` (not part of ``run()``) times the solution's kernel over a few tile shapes and warp
counts, for when the solution needs retuning on a new GPU:

    python -c "from tools.benchmarks.ex02_bias_gelu import sweep; [print(r) for r in sweep()]"
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from grader import bandwidth
from grader.exercises.ex02_bias_gelu.spec import minimum_bytes, unfused_bytes
from tools.benchmarks import failed_row, time_row

M, N = 16384, 4096
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
#: Largest difference from the eager pair allowed before a row is not trusted (output rounding).
ATOL = {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1.6e-2}


def eager_bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The unfused pair: two kernels, x + bias written to HBM and read back."""
    return F.gelu(x + bias)


def _agrees(out: torch.Tensor, want: torch.Tensor, dtype: str) -> None:
    err = (out.float() - want.float()).abs().max().item()
    if not err <= ATOL[dtype] * max(1.0, want.float().abs().max().item()):
        raise AssertionError(f"differs from the eager pair by {err:.3g} ({dtype})")


def run() -> list[dict]:
    from solutions.ex02_bias_gelu import bias_gelu

    torch.manual_seed(0)
    rows = []
    for name, dtype in DTYPES.items():
        x = torch.randn(M, N, device="cuda", dtype=dtype)
        bias = torch.randn(N, device="cuda", dtype=dtype)
        size = x.element_size()
        fused, moved = minimum_bytes(M, N, size), unfused_bytes(M, N, size)
        shape = {"M": M, "N": N, "dtype": name}
        want = eager_bias_gelu(x, bias)
        _agrees(bias_gelu(x, bias), want, name)

        rows.append(time_row("solution", lambda: bias_gelu(x, bias), fused, **shape))

        eager = time_row("torch eager (x + bias, gelu)", lambda: eager_bias_gelu(x, bias), fused, **shape)
        eager.update(moved_bytes=moved, moved_gbps=round(bandwidth.gbps(moved, eager["ms"]), 1))
        rows.append(eager)

        try:
            # A fresh compiled function per dtype; three calls so compilation (and any
            # autotuning) is done before timing.
            compiled = torch.compile(eager_bias_gelu)
            for _ in range(3):
                out = compiled(x, bias)
            torch.cuda.synchronize()
            _agrees(out, want, name)
            del out
            rows.append(time_row("torch.compile", lambda: compiled(x, bias), fused, **shape))
        except Exception as exc:  # no compiler toolchain, an Inductor error: record it, keep the rest
            rows.append(failed_row("torch.compile", exc, **shape))
        del x, bias, want
        torch.cuda.empty_cache()
    return rows


@functools.cache
def _tiled_kernel():
    """The 2-D tiling the course first shipped (a program owns BLOCK_M rows x BLOCK_N columns, rows
    fastest in program order), kept here so the tile sweep in h200-tiles-ex02.json can be rerun."""
    import triton
    import triton.language as tl

    @triton.jit
    def tiled(x_ptr, bias_ptr, out_ptr, M, N, x_row_stride, out_row_stride,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, COLUMNS_FASTEST: tl.constexpr):
        if COLUMNS_FASTEST:
            n_col_blocks = tl.cdiv(N, BLOCK_N)
            row_block = tl.program_id(0) // n_col_blocks
            col_block = tl.program_id(0) % n_col_blocks
        else:
            row_block = tl.program_id(0)
            col_block = tl.program_id(1)
        rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
        col_mask = cols < N
        mask = (rows < M)[:, None] & col_mask[None, :]
        b = tl.load(bias_ptr + cols, mask=col_mask).to(tl.float32)
        rows64 = rows.to(tl.int64)
        x = tl.load(x_ptr + rows64[:, None] * x_row_stride + cols[None, :], mask=mask)
        z = x.to(tl.float32) + b[None, :]
        y = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
        tl.store(out_ptr + rows64[:, None] * out_row_stride + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)

    return tiled


def _tile_rows(kernel_name: str, shapes, dtypes, columns_fastest: bool) -> list[dict]:
    import triton

    tiled = _tiled_kernel()
    rows = []
    for dtype, name in dtypes:
        x = torch.randn(M, N, device="cuda", dtype=dtype)
        bias = torch.randn(N, device="cuda", dtype=dtype)
        out = torch.empty_like(x)
        want = eager_bias_gelu(x, bias)
        for block_m, block_n in shapes:
            for warps in (4, 8):
                if columns_fastest:
                    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
                else:
                    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))

                def launch():
                    tiled[grid](x, bias, out, M, N, x.stride(0), out.stride(0), BLOCK_M=block_m,
                                BLOCK_N=block_n, COLUMNS_FASTEST=columns_fastest, num_warps=warps)

                label = {"M": M, "N": N, "dtype": name, "BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps}
                try:
                    launch()
                    torch.cuda.synchronize()
                    _agrees(out, want, name)
                    rows.append(time_row(kernel_name, launch, minimum_bytes(M, N, x.element_size()), **label))
                except Exception as exc:
                    rows.append(failed_row(kernel_name, exc, **label))
    return rows


def sweep() -> list[dict]:
    """2-D tilings (BLOCK_M x BLOCK_N) and warps, rows fastest in program order, fp32 at M x N."""
    shapes = ((1, 1024), (4, 1024), (8, 1024), (2, 2048), (1, 4096), (8, 512), (16, 256))
    return _tile_rows("tile", shapes, ((torch.float32, "fp32"),), columns_fastest=False)


def sweep_order() -> list[dict]:
    """The same tiles with a 1-D grid whose column block varies fastest (consecutive programs read
    consecutive memory), fp32 and fp16."""
    shapes = ((1, 1024), (4, 1024), (1, 2048), (2, 2048), (1, 4096))
    return _tile_rows("columns fastest", shapes, ((torch.float32, "fp32"), (torch.float16, "fp16")),
                      columns_fastest=True)
