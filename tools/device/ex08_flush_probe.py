"""Does do_bench's L2 flush (zeroing 256 MB) leave dirty lines that the timed kernel pays to write back?
Times exercise 8's solution (CUDA graph) and a plain read (x.sum) after a write flush and after a read flush."""
import statistics, json, os
from pathlib import Path
import torch
from grader import perf
from tools.benchmarks.ex08_decode import nbytes, paged_inputs, graphed, sdpa, gather
import solutions.ex08_decode as sol

ceiling = perf.measure_ceiling()[0].ceiling_gbps
buf = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
big = torch.randn(64 << 20, device="cuda")  # 256 MB, read to flush


def timed(fn, flush, n=60):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        flush()
        starts[i].record(); fn(); ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


flushes = {"write-flush": lambda: buf.zero_(), "read-flush": lambda: big.sum(), "write-then-read": lambda: (buf.zero_(), big.sum())}
rows = []
for B, S in [(1, 32768), (8, 8192), (64, 4096)]:
    a = paged_inputs(B, S, 16)
    q, k, v, table, lens = a
    kf, vf = gather(k, table, S), gather(v, table, S)
    moved = nbytes(B, S, 16)
    g = graphed(lambda: sol.decode_attention(*a))
    s = graphed(lambda: sdpa(q, kf, vf))
    x = torch.randn(moved // 4, device="cuda")
    r = graphed(lambda: x.sum())
    for rnd in range(3):
        for name, fn in (("solution-graph", g), ("sdpa-graph", s), ("read-same-bytes", r)):
            for fl, f in flushes.items():
                ms = timed(fn, f)
                rows.append({"B": B, "S_k": S, "kernel": name, "flush": fl, "round": rnd, "ms": ms,
                             "fraction": round(perf.gbps(moved, ms) / ceiling, 4)})
    del a, kf, vf, x
    torch.cuda.empty_cache()
Path(os.environ.get("OUT", "build"), "ex08-flush-probe.json").write_text(json.dumps(rows, indent=1))
agg = {}
for r in rows:
    agg.setdefault((r["B"], r["kernel"], r["flush"]), []).append(r["fraction"])
for k, v in agg.items():
    print(*k, [round(x, 3) for x in v])
