"""Nsight Compute's counters on exercise 8's two kernels, beside a plain read of the same bytes and decode's
reads with no arithmetic: where the decode step's time goes inside the kernels, not only around them.

    ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section MemoryWorkloadAnalysis --page raw --csv \\
        -k regex:'decode_|read_kernel|pattern_read' python3 tools/device/decode_ncu.py 1 32768 16 > raw.csv
    python3 tools/device/decode_ncu.py --summary 1-32768-16=raw.csv [--json out.json]   # the counters that matter

ncu replays each kernel with its caches flushed, so every row starts from a cold L2, as the benchmark's
``graph-clean-l2`` rows do; its durations have no launch overhead in them.
"""
import csv
import io
import json
import sys

#: (field of the summary, ncu's raw metric name, factor to the field's unit).
COLUMNS = (
    ("ms", "gpu__time_duration.sum", 1e-6),  # ncu reports ns
    ("dram_fraction_of_peak", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 0.01),
    ("dram_gbps", "dram__bytes.sum.per_second", 1e-9),  # ncu reports bytes per second
    ("achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", 0.01),
    ("theoretical_occupancy", "sm__maximum_warps_per_active_cycle_pct", 0.01),
    ("sm_throughput_fraction", "sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.01),
    ("l2_hit_fraction", "lts__t_sector_hit_rate.pct", 0.01),
    ("registers", "launch__registers_per_thread", 1),
    ("blocks_per_sm_by_registers", "launch__occupancy_limit_registers", 1),
    ("blocks_per_sm_by_shared", "launch__occupancy_limit_shared_mem", 1),
)
#: Warp stall reasons, each in cycles a warp spent stalled for it per instruction issued.
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
STALLS = ("long_scoreboard", "short_scoreboard", "wait", "barrier", "mio_throttle", "lg_throttle",
          "math_pipe_throttle", "not_selected", "selected", "no_instruction", "drain")


def run(B: int, S: int, page: int) -> None:
    import torch
    import triton

    from solutions import ex08_decode as sol
    from tools.benchmarks.ex08_decode import nbytes, paged_inputs
    from tools.device import decode_probe as probe

    q, k, v, table, lens = paged_inputs(B, S, page)
    moved = nbytes(B, S, page)
    plain = torch.randn(moved // 2, device="cuda", dtype=torch.bfloat16)
    parts = torch.empty(triton.cdiv(plain.numel(), 4096), device="cuda")
    pattern8 = probe.pattern_reader(k, v, table, B, S, 1, True, 8)
    for _ in range(2):  # the second round is the one to read: compiled, warm
        sol.decode_attention(q, k, v, table, lens)
        probe.read_kernel[(parts.numel(),)](plain, parts, plain.numel(), BLOCK=4096)
        pattern8()
    torch.cuda.synchronize()


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def summary(path: str) -> list[dict]:
    """One dict per profiled kernel launch of ``path`` (ncu's raw CSV page), with the fields of COLUMNS
    and the stall reasons of STALLS."""
    text = open(path).read()
    text = text[text.index('"ID"'):]  # ncu prints its own lines before the CSV
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("ID", "").strip().isdigit()]  # line 2: units
    kernels = []
    for r in rows:
        k = {"kernel": r["Kernel Name"].split("(")[0], "grid": r.get("Grid Size"), "block": r.get("Block Size")}
        for field, column, factor in COLUMNS:
            if r.get(column, "").strip():
                k[field] = round(_number(r[column]) * factor, 6)
        k["stalls_per_issue"] = {name: _number(r[STALL.format(name)]) for name in STALLS if r.get(STALL.format(name))}
        kernels.append(k)
    return kernels


def main(argv: list[str]) -> None:
    if argv[0] == "--summary":  # --summary [--json OUT] B-S-PAGE=raw.csv ...
        out = argv[argv.index("--json") + 1] if "--json" in argv else None
        shapes = {}
        for arg in argv[1:]:
            if "=" in arg:
                shape, path = arg.split("=", 1)
                shapes[shape] = summary(path)
                print(f"=== B-S_k-page {shape}")
                for k in shapes[shape]:
                    top = sorted(k["stalls_per_issue"].items(), key=lambda kv: -kv[1])[:4]
                    print(f"  {k['kernel'][:22]:>22} {1000 * k['ms']:8.2f} us  DRAM {k.get('dram_fraction_of_peak', 0):6.1%}  "
                          f"occupancy {k.get('achieved_occupancy', 0):6.1%} of {k.get('theoretical_occupancy', 0):6.1%}  "
                          + " ".join(f"{n} {v:.2f}" for n, v in top))
        if out:
            json.dump(shapes, open(out, "w"), indent=1)
    else:
        run(*map(int, argv[:3]))


if __name__ == "__main__":
    main(sys.argv[1:])
