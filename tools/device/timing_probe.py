"""Where the judge's clock spends its time on a GPU, for exercise 1's solution: the learner's rounds
with the twin's measured cost subtracted, against do_bench of the same kernel in this process, over
sizes from a ~50 µs call to a ~400 µs one and over 8 and 32 sets. A fixed cost per round shows as a
gap that shrinks with the call's length and with the number of sets.

    PYTHONPATH=. python tools/device/timing_probe.py        # writes $OUT/timing_probe.json
"""
import importlib.util
import json
import os

import torch

from grader import perf, timing
from grader.catalogue import ROOT
from grader.learner_process import LearnerFunction, LearnerProcess

spec = importlib.util.spec_from_file_location("solution", ROOT / "solutions" / "ex01_vector_add.py")
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)

p = LearnerProcess("solutions/ex01_vector_add.py", mode="gpu")
p.twin = LearnerProcess(ROOT / "grader" / "timing_twin.py", mode="gpu")
p.start(); p.twin.start(); p.ready()
fn = LearnerFunction(p, "add")
rows = []
for log2n in (24, 25, 26, 27):
    n = 1 << log2n
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    dobench = perf.time_ms(lambda: solution.add(x, y), rep_ms=200)
    del x, y
    for sets in (8, 32):
        def make_set(g, n=n):
            return [torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)], {}

        def verify(o, a, k):
            assert torch.equal(o, a[0] + a[1])

        t = timing.time_learner(fn, make_set, verify, output_like=torch.empty(n, device="cuda"), sets=sets, rounds=5)
        row = {"n": n, "sets": sets, "dobench_ms": round(dobench, 5), "judge_ms": round(t.ms, 5),
               "ratio": round(dobench / t.ms, 4), "extra_us_per_call": round((t.ms - dobench) * 1000, 1),
               "extra_us_per_round": round((t.ms - dobench) * 1000 * sets, 1), **t.to_json()}
        rows.append(row)
        print({k: row[k] for k in ("n", "sets", "dobench_ms", "judge_ms", "ratio", "extra_us_per_call",
                                   "extra_us_per_round", "round_overhead_ms")}, flush=True)
        torch.cuda.empty_cache()
json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
          open(os.path.join(os.environ.get("OUT", "."), "timing_probe.json"), "w"), indent=1)
p.twin.close(); p.close()
