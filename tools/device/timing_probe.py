"""Where the judge's clock spends its time on a GPU, for exercise 1's solution: the learner's rounds
with the twin's measured cost subtracted, against do_bench, for 4 and 16 sets."""
import json, os, statistics, time
import torch
from grader import timing, perf
from grader.catalogue import ROOT
from grader.learner_process import LearnerProcess, LearnerFunction

p = LearnerProcess("solutions/ex01_vector_add.py", mode="gpu")
p.twin = LearnerProcess(ROOT / "grader" / "timing_twin.py", mode="gpu")
p.start(); p.twin.start(); p.ready()
fn = LearnerFunction(p, "add")
out = {}
for sets in (4, 16):
    n = perf.sized_for_hbm(12, l2_multiple=16, budget_fraction=0.5 / (sets + 1))
    def make_set(g, n=n):
        return [torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)], {}
    def verify(o, a, k):
        assert torch.equal(o, a[0] + a[1])
    t = timing.time_learner(fn, make_set, verify, output_like=torch.empty(n, device="cuda"), sets=sets, rounds=5)
    out[f"sets{sets}"] = t.to_json()
    print(sets, json.dumps(t.to_json()), flush=True)
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "timing_probe.json"), "w"), indent=1)
p.twin.close(); p.close()
