"""On a GPU: is the measured ceiling (the better of torch's copy and torch's add) the best a plain kernel
reaches? A plain Triton add of the same buffers, at three block sizes, is timed in turns with both, three
rounds; the summary holds each kernel's median (the Triton add's at its best block).

    PYTHONPATH=. python3 tools/device/ceiling_probe.py --out $OUT/ceiling-probe.json

Asked because on an H100 a correct Triton add was graded at 103% of that ceiling. The answer, on an H100
and on the H200 (docs/measurements/h100-ceiling-probe.json, and the ``vadd_*`` figures of
h200-baselines-2026-11-30.json): torch's add and the Triton add move the same bytes per second within
0.1%, so the 103% was the judge's clock, not the ceiling (`grader.judge.clock.per_call_ms`).
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def summary(rows: list[dict]) -> dict:
    """Each kernel's median over the rounds, the Triton add's at its best block size."""
    medians = {name: statistics.median(r["gbps"] for r in rows if r["kernel"] == name) for name in {r["kernel"] for r in rows}}
    triton = max((name for name in medians if name.startswith("triton")), key=medians.get)
    return {"torch_copy_gbps": medians["torch copy"], "torch_add_gbps": medians["torch add"],
            "triton_add_gbps": medians[triton], "triton_best": triton,
            "triton_over_torch_add": round(medians[triton] / medians["torch add"] - 1, 4)}


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

    record = {"meta": provenance.header(elements=elements, buffer_bytes=nbytes), "rows": rows, "summary": summary(rows)}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    for row in rows:
        print(f"{row['round']} {row['kernel']:<24}{row['gbps']:>9.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
