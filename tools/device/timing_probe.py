"""How close the judge's clock comes to do_bench with 8 sets a round and with K sized by
`grader.judge.clock.sets_for`, in turns, on a GPU.

For exercise 1's solution from ~50 to ~370 µs a call and exercise 9's forward (~130 µs a call): the
judge's time per call (the twin's quickest round subtracted) beside do_bench of the same function in the
learner's process; ``sets=8`` and ``sets=sized`` in turns, twice.

    PYTHONPATH=. python tools/device/timing_probe.py        # writes $OUT/timing_probe.json
"""
import json
import os
import time

import torch
import triton

from grader import bandwidth
from grader.judge import clock
from grader.judge.learner_process import LearnerFunction, LearnerProcess



def vector_add_case(n):
    def make_set(g):
        return [torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)], {}

    def verify(out, args, kwargs):
        assert torch.equal(out, args[0] + args[1])

    return "solutions/ex01_vector_add.py", "add", make_set, verify, torch.empty(n, device="cuda"), 12 * n


def rmsnorm_forward_case(m, n):
    def make_set(g):
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g)
        w = (1 + 0.1 * torch.randn(n, device="cuda", generator=g)).to(torch.bfloat16)
        return [x, w, 1e-6], {}

    def verify(y, args, kwargs):
        x, w, eps = args
        want = x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + eps) * w.float()
        assert torch.allclose(y.float(), want, rtol=2e-2, atol=2e-2)

    like = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return "solutions/ex09_rmsnorm.py", "rmsnorm_forward", make_set, verify, like, 4 * m * n + 2 * n + 4 * m


CASES = {f"ex01 n=2^{k}": vector_add_case(1 << k) for k in (24, 25, 27)}
CASES["ex09 forward 16384x4096 bf16"] = rmsnorm_forward_case(16384, 4096)
if os.environ.get("PROBE_CASES"):  # a comma-separated subset, by name
    CASES = {k: v for k, v in CASES.items() if k in os.environ["PROBE_CASES"].split(",")}

ceiling, _ = bandwidth.measure_ceiling()
rows = []
for case, (path, name, make_set, verify, like, nbytes) in CASES.items():
    process = LearnerProcess(path, mode="gpu")
    process.twin = LearnerProcess.clock_twin()
    process.start()
    process.twin.start()
    process.ready()
    fn = LearnerFunction(process, name)
    fastest = nbytes / (ceiling.ceiling_gbps * bandwidth.GB) * 1e3
    for turn in range(2):
        for label, sets in (("8", clock.SETS), ("sized", None)):
            t = clock.time_learner(fn, make_set, verify, output_like=like, sets=sets, fastest_call_ms=fastest)
            row = {"case": case, "sets_rule": label, "turn": turn, "judge_ms": round(t.ms, 5),
                   "dobench_ms": round(t.dobench_ms, 5), "ratio": round(t.dobench_ms / t.ms, 4),
                   "fraction": round(bandwidth.gbps(nbytes, t.ms) / ceiling.ceiling_gbps, 4),
                   "dobench_fraction": round(bandwidth.gbps(nbytes, t.dobench_ms) / ceiling.ceiling_gbps, 4),
                   "extra_us_per_round": round((t.ms - t.dobench_ms) * 1000 * t.sets, 1), **t.to_json()}
            rows.append(row)
            print({k: row[k] for k in ("case", "sets_rule", "turn", "sets", "judge_ms", "dobench_ms", "ratio",
                                       "round_overhead_ms")}, flush=True)
            torch.cuda.empty_cache()
    process.twin.close()
    process.close()

meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
        "date": time.strftime("%Y-%m-%d"), "command": "PYTHONPATH=. python3 tools/device/timing_probe.py",
        "ceiling_gbps": round(ceiling.ceiling_gbps, 1),
        "notes": ["the judge's clock (grader.judge.clock.time_learner, the twin's quickest round subtracted) against "
                  "do_bench of the same function in the learner's process, 5 rounds; 8 sets and K sized by "
                  "grader.judge.clock.sets_for, in turns",
                  "extra_us_per_round = (judge_ms - dobench_ms) x sets: what the twin did not subtract"]}
json.dump({"meta": meta, "rows": rows}, open(os.path.join(os.environ.get("OUT", "."), "timing_probe.json"), "w"),
          indent=1)
print("\n=== do_bench / judge, per case and rule (both turns; sets) ===")
for case in CASES:
    print(case, {label: [(r["ratio"], r["sets"]) for r in rows if r["case"] == case and r["sets_rule"] == label]
                 for label in ("8", "sized")})
