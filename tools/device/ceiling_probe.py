"""On a GPU: how far apart are the ceiling's three kernels (torch's copy, torch's add, a plain Triton add
at three block sizes)? Timed in turns on the same buffers, three rounds, so the gap comes with its noise.

    PYTHONPATH=. python3 tools/device/ceiling_probe.py --out $OUT/ceiling-probe.json

Asked because on an H100 a correct Triton add was graded at 101-103% of the better of torch's two, the
ceiling before `grader.ceiling_kernel` was timed beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from grader import bandwidth  # noqa: E402


@triton.jit
def plain_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    elements = bandwidth.sized_for_hbm(3 * 4, l2_multiple=16)
    a = torch.randn(elements, device="cuda")
    b = torch.randn(elements, device="cuda")
    c = torch.empty_like(a)
    nbytes = elements * 4
    kernels = {"torch copy": (lambda: c.copy_(a), 2 * nbytes), "torch add": (lambda: torch.add(a, b, out=c), 3 * nbytes)}
    for block in (1024, 2048, 4096):
        kernels[f"triton add BLOCK={block}"] = (
            lambda block=block: plain_add[(triton.cdiv(elements, block),)](a, b, c, elements, BLOCK=block), 3 * nbytes)
    rows = []
    for round_ in range(3):
        for name, (fn, moved) in kernels.items():
            ms = bandwidth.time_ms(fn, rep_ms=200)
            rows.append({"round": round_ + 1, "kernel": name, "ms": round(ms, 5), "gbps": round(bandwidth.gbps(moved, ms), 1)})
    from tools.device import provenance

    args.out.write_text(json.dumps({"meta": provenance.header(elements=elements, buffer_bytes=nbytes), "rows": rows}, indent=1) + "\n")
    for row in rows:
        print(f"{row['round']} {row['kernel']:<24}{row['gbps']:>9.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
