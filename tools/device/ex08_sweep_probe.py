"""Exercise 8's configurations replayed from CUDA graphs at B 1 and B 8 (probe; prints a table)."""
import statistics, sys, json, os
from pathlib import Path
import torch
from grader import perf
from tools.benchmarks.ex08_decode import nbytes, paged_inputs, graphed, with_config
import solutions.ex08_decode as sol

ceiling = perf.measure_ceiling()[0].ceiling_gbps
rows = []
configs = [(t, w, st, ps) for t in (32, 64, 128) for w in (4, 8) for st in (2, 3, 4) for ps in (1, 2, 3, 4, 6)
           if not (t == 128 and st == 4) and not (t == 32 and w == 8)]
for B, S in [(1, 32768), (8, 8192)]:
    a = paged_inputs(B, S, 16)
    want = sol.decode_attention(*a)
    kernels = {}
    for c in configs:
        fn = with_config(sol, c)
        try:
            if not torch.allclose(fn(*a), want, atol=2e-2, rtol=2e-2):
                continue
            kernels["-".join(map(str, c))] = graphed(lambda fn=fn: fn(*a))
        except Exception as exc:
            print("fail", c, str(exc)[:100])
    times = perf.time_in_turns(kernels, rounds=2, rep_ms=40)
    res = sorted(((statistics.median(t), k) for k, t in times.items()))
    for ms, k in res[:12]:
        rows.append({"B": B, "S_k": S, "config": k, "ms": ms, "fraction": round(perf.gbps(nbytes(B, S, 16), ms) / ceiling, 4)})
        print(B, S, k, round(ms * 1000, 1), "us", rows[-1]["fraction"])
    print(B, S, "default", [r for r in res if r[1] == "64-4-2-4"])
    del a, kernels
    torch.cuda.empty_cache()
Path(os.environ.get("OUT", "build"), "ex08-sweep-probe.json").write_text(json.dumps(rows, indent=1))
