"""Where exercise 9's forward + backward spends its CPU time when called through autograd.

    PYTHONPATH=. python tools/device/autograd_probe.py    # writes $OUT/autograd_probe.json

For the solution's autograd function and for eager ``F.rms_norm``: host µs per forward + backward and
do_bench µs, with autograd's device threads (the default) and with
``torch.autograd.set_multithreading_enabled(False)`` (the backward on the calling thread); and each piece
of the solution's call timed alone.
"""
import json
import os
import time

import torch
import triton

from grader import bandwidth
from solutions import ex09_rmsnorm as rms
from tools.benchmarks.ex09_rmsnorm import SolutionRMSNorm  # the benchmark's autograd function of the pair

OUT = os.environ.get("OUT", ".")


def host(fn, calls=400):
    for _ in range(30):
        fn()
    return round(min(bandwidth.host_us(fn, calls) for _ in range(3)), 1)


rows = []
for n in (1024, 4096):
    x = torch.randn(16384, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(16384, n, device="cuda", dtype=torch.bfloat16)
    y_saved, rstd = rms.rmsnorm_forward(x.detach(), w.detach(), 1e-6)
    y_graph = SolutionRMSNorm.apply(x, w, 1e-6)
    fns = {
        "solution_fwdbwd": lambda: torch.autograd.grad(SolutionRMSNorm.apply(x, w, 1e-6), (x, w), dy),
        "eager_fwdbwd": lambda: torch.autograd.grad(torch.nn.functional.rms_norm(x, (n,), w, 1e-6), (x, w), dy),
        "solution_apply_only": lambda: SolutionRMSNorm.apply(x, w, 1e-6),
        "solution_grad_only": lambda: torch.autograd.grad(y_graph, (x, w), dy, retain_graph=True),
        "solution_fwd": lambda: rms.rmsnorm_forward(x.detach(), w.detach(), 1e-6),
        "solution_bwd": lambda: rms.rmsnorm_backward(dy, x.detach(), w.detach(), rstd),
        "sm_count": lambda: rms.sm_count(x.device),
        "torch.empty": lambda: torch.empty((16384, n), dtype=torch.bfloat16, device="cuda"),
    }
    row = {"n": n, "threads": {k: host(f) for k, f in fns.items()}}
    with torch.autograd.set_multithreading_enabled(False):
        row["one_thread"] = {k: host(fns[k]) for k in ("solution_fwdbwd", "eager_fwdbwd", "solution_grad_only")}
        row["one_thread_dobench_us"] = {k: round(bandwidth.time_ms(fns[k], rep_ms=100) * 1000, 1)
                                        for k in ("solution_fwdbwd", "eager_fwdbwd")}
    row["dobench_us"] = {k: round(bandwidth.time_ms(fns[k], rep_ms=100) * 1000, 1) for k in ("solution_fwdbwd", "eager_fwdbwd")}
    rows.append(row)
    print(row, flush=True)
json.dump({"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                    "date": time.strftime("%Y-%m-%d")}, "rows": rows},
          open(os.path.join(OUT, "autograd_probe.json"), "w"), indent=1)
