"""Where the judge's clock spends its time on a GPU: one learner process (exercise 1's solution),
the judge's clock with 4 and 16 sets, the pipe alone, a local add by the same clock, do_bench."""
import json, os, sys, time, statistics
import torch
from grader import timing, perf, checks
from grader.learner_process import LearnerProcess, LearnerFunction

p = LearnerProcess("solutions/ex01_vector_add.py", mode="gpu")
p.start(); p.ready()
print("calibrated round overhead (ms):", p.overhead_ms)
fn = LearnerFunction(p, "add")
out = {}
for sets in (4, 16):
    n = perf.sized_for_hbm(12, l2_multiple=16, budget_fraction=0.5 / (sets + 1))
    def make_set(g, n=n):
        return [torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)], {}
    def verify(o, a, k):
        assert torch.equal(o, a[0] + a[1])
    like = torch.empty(n, device="cuda")
    t = timing.time_learner(fn, make_set, verify, output_like=like, sets=sets, rounds=5)
    loc = timing.time_local(lambda x, y: torch.add(x, y), make_set, sets=sets, rounds=5)
    x, y = make_set(torch.Generator(device="cuda"))[0]
    db = perf.time_ms(lambda: torch.add(x, y))
    out[f"sets{sets}"] = {"n": n, "judge": t.to_json(), "local_torch_add_ms": loc.ms, "local_rounds": loc.rounds_ms,
                         "dobench_torch_add_ms": db}
    del x, y
    torch.cuda.empty_cache()
pings = []
for _ in range(50):
    s = time.perf_counter(); p.request({"op": "reset"}); pings.append((time.perf_counter() - s) * 1e6)
out["ping_us_median"] = statistics.median(pings)
print(json.dumps(out, indent=1))
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "timing_probe.json"), "w"), indent=1)
p.close()
