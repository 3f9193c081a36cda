#!/usr/bin/env python3
"""The wrong kernels of chapter 3 ("Masking pitfalls"), and the grader's verdict on each.

Chapter 3 shows each pitfall's code and the message the grader gives for it. Neither is typed
into the page: the code is included from the ``--8<-- [start:NAME]`` sections of this file, and
the messages from ``docs/assets/messages/NAME.txt``, which this script writes by running every
variant through the grader's own checks (`grader.judge.checks.run_case`) in Triton's interpreter,
on seeded inputs. Re-run it whenever the grader's wording changes:

    python docs/scripts/masking_pitfalls.py            # rewrites docs/assets/messages/*.txt
    python docs/scripts/masking_pitfalls.py --out DIR  # writes elsewhere (the site test does this)

The site test (tests/test_site.py) runs it into a temporary folder and fails when the committed
messages are out of date. Runs on a CPU in a few seconds; needs torch and triton.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the same on every machine
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from grader.judge import checks  # noqa: E402
from grader.wire.failures import GradeFailure  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "assets" / "messages"
BLOCK_SIZE = 1024


# --8<-- [start:add_no_store_mask]
@triton.jit
def add_no_store_mask(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y)  # WRONG: no mask on the store
# --8<-- [end:add_no_store_mask]


# --8<-- [start:add_off_by_one]
@triton.jit
def add_off_by_one(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets <= n_elements  # WRONG: should be <
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
# --8<-- [end:add_off_by_one]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add_with(kernel):
    def add(x, y):
        out = torch.empty_like(x)
        n_elements = out.numel()
        kernel[(triton.cdiv(n_elements, BLOCK_SIZE),)](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
        return out
    return add


# --8<-- [start:add_grid_rounded_down]
def add_grid_rounded_down(x, y):
    out = torch.empty_like(x)
    n_elements = out.numel()
    grid = (n_elements // BLOCK_SIZE,)  # WRONG: rounds down
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out
# --8<-- [end:add_grid_rounded_down]


# --8<-- [start:softmax_other_zero]
@triton.jit
def softmax_other_zero(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)  # WRONG
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)  # the padded lanes hold exp(0 - max): not zero
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
# --8<-- [end:softmax_other_zero]


# --8<-- [start:softmax_no_load_mask]
@triton.jit
def softmax_no_load_mask(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols)  # WRONG: no mask
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
# --8<-- [end:softmax_no_load_mask]


# --8<-- [start:softmax_assumes_contiguous]
@triton.jit
def softmax_assumes_contiguous(x_ptr, out_ptr, x_row_stride, out_row_stride, n_cols,
                               BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))  # WRONG
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
# --8<-- [end:softmax_assumes_contiguous]


def softmax_with(kernel):
    def softmax(x):
        out = torch.empty_like(x)
        n_rows, n_cols = x.shape
        kernel[(n_rows,)](x, out, x.stride(0), out.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return out
    return softmax


# --8<-- [start:add_computed_by_torch]
def add_computed_by_torch(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), BLOCK_SIZE),)](x, y, out, x.numel(), BLOCK_SIZE=BLOCK_SIZE)
    return x + y  # WRONG: torch computed the answer
# --8<-- [end:add_computed_by_torch]


# --8<-- [start:add_zeros_like]
def add_zeros_like(x, y):
    out = torch.zeros_like(x)  # WRONG: an extra kernel
    add_kernel[(triton.cdiv(x.numel(), BLOCK_SIZE),)](x, y, out, x.numel(), BLOCK_SIZE=BLOCK_SIZE)
    return out
# --8<-- [end:add_zeros_like]


#: name -> (function, kind of input, size). Sizes are chosen to make the numbers easy to check:
#: n = 1000 with BLOCK_SIZE = 1024 leaves 24 lanes of the only program past the end.
VARIANTS = {
    "add_no_store_mask": (add_with(add_no_store_mask), "add", 1000),
    "add_off_by_one": (add_with(add_off_by_one), "add", 1000),
    "add_grid_rounded_down": (add_grid_rounded_down, "add", 3000),
    "softmax_other_zero": (softmax_with(softmax_other_zero), "softmax", (4, 1000, None)),
    "softmax_no_load_mask": (softmax_with(softmax_no_load_mask), "softmax", (4, 1000, None)),
    "softmax_assumes_contiguous": (softmax_with(softmax_assumes_contiguous), "softmax", (4, 1000, 1200)),
    "add_computed_by_torch": (add_computed_by_torch, "add", 1000),
    "add_zeros_like": (add_zeros_like, "add", 1000),
}


def verdict(name: str, seed: int = 0) -> str:
    """Run one variant through the grader's checks and return its message ('passed' if none)."""
    fn, kind, size = VARIANTS[name]
    rng = torch.Generator().manual_seed(seed)
    try:
        if kind == "add":
            x = checks.randn((size,), torch.float32, rng, "cpu")
            y = checks.randn((size,), torch.float32, rng, "cpu")
            checks.run_case(fn, {"x": x, "y": y}, x.double() + y.double(), dtype=torch.float32)
        else:
            rows, cols, row_stride = size
            x = checks.randn((rows, cols), torch.float32, rng, "cpu")
            if row_stride:
                x = checks.with_row_stride(x, row_stride)
            checks.run_case(fn, {"x": x}, torch.softmax(x.double(), dim=1), dtype=torch.float32)
    except GradeFailure as failure:
        return str(failure)
    return "passed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the grader's message for each pitfall of chapter 3.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for NAME.txt (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in VARIANTS:
        message = verdict(name)
        (args.out / f"{name}.txt").write_text(message + "\n")
        print(f"{name}: {message}")
        if message == "passed":
            failed.append(name)
    if failed:
        print(f"the grader accepted wrong code: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
