"""Where a short kernel's time goes when it is called from Python, and how fast reading a few hundred MB
can be at all, on the GPU this runs on.

Three questions, one run (``PYTHONPATH=. python tools/device/launch_probe.py``; writes
``$OUT/launch_probe.json`` and ``$OUT/launch_probe_profile.txt``):

* **the launcher**: the CPU µs of one call of exercise 3's softmax (bf16, 4096 x 1024) through each
  layer: ``kernel[grid](...)`` (Triton's JIT dispatch), the compiled kernel's own runner
  (``compiled[grid](...)``), the C launcher alone, ``torch.empty_like``, ``torch.softmax``; and
  ``do_bench`` of each, to see which of them starve the GPU; a cProfile of the JIT dispatch;
* **RMSNorm forward + backward through autograd** (exercise 9): the same, for the solution's autograd
  function and eager PyTorch;
* **the read floor**: plain reads of 134 MB and 268 MB (exercise 8's B = 1 and B = 8 caches), replayed from a CUDA
  graph after a read flush (``grader.bandwidth.time_ms_clean_l2``), with ``torch.sum`` and Triton read kernels of
  several shapes, beside an empty kernel timed the same way (what the timing itself costs).
"""
import cProfile
import importlib.util
import io
import json
import os
import pstats
import sys
import time

import torch
import triton
import triton.language as tl

from grader import bandwidth
from grader.catalogue import ROOT

OUT = os.environ.get("OUT", ".")
results: dict = {"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                          "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d")}}


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "solutions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def host(fn, calls=2000):
    for _ in range(50):
        fn()
    return round(min(bandwidth.host_us(fn, calls) for _ in range(3)), 2)


def bench(fn):
    return round(bandwidth.time_ms(fn, rep_ms=200) * 1000, 2)


# --- the launcher: exercise 3 ------------------------------------------------------------------
sm = load("ex03_softmax")
M, N = 4096, 1024
x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(x)
BLOCK = triton.next_power_of_2(N)
warps = sm.num_warps_for(BLOCK)
compiled = sm.softmax_kernel[(M,)](x, out, x.stride(0), out.stride(0), N, BLOCK=BLOCK, num_warps=warps)
torch.cuda.synchronize()
runner = compiled[(M, 1, 1)]
stream = torch.cuda.current_stream().cuda_stream
launch = compiled.run
function = compiled.function
packed = compiled.packed_metadata


def jit_prealloc():
    sm.softmax_kernel[(M,)](x, out, x.stride(0), out.stride(0), N, BLOCK=BLOCK, num_warps=warps)


def compiled_runner():
    runner(x, out, x.stride(0), out.stride(0), N, BLOCK)


def c_launcher():
    launch(M, 1, 1, stream, function, packed, None, None, None, x, out, x.stride(0), out.stride(0), N, BLOCK)


def compiled_with_alloc():
    o = torch.empty_like(x)
    runner(x, o, x.stride(0), o.stride(0), N, BLOCK)
    return o


ref = torch.softmax(x.float(), -1)
checks = {}
for name, fn in {"jit_prealloc": jit_prealloc, "compiled_runner": compiled_runner, "c_launcher": c_launcher}.items():
    out.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    checks[name] = float((out.float() - ref).abs().max())
paths = {
    "torch_softmax": lambda: torch.softmax(x, -1),
    "torch_empty_like": lambda: torch.empty_like(x),
    "solution_softmax": lambda: sm.softmax(x),
    "jit_prealloc": jit_prealloc,
    "compiled_runner": compiled_runner,
    "c_launcher": c_launcher,
    "compiled_with_alloc": compiled_with_alloc,
}
results["ex03_launcher"] = {"shape": [M, N], "dtype": "bf16", "max_abs_err": checks,
                            "host_us": {k: host(f) for k, f in paths.items()},
                            "dobench_us": {k: bench(f) for k, f in paths.items() if k != "torch_empty_like"},
                            "graph_us": {k: bench(bandwidth.graphed(f)) for k, f in (("solution_softmax", paths["solution_softmax"]),
                                                                               ("torch_softmax", paths["torch_softmax"]))}}
print("ex03", results["ex03_launcher"], flush=True)

profile = cProfile.Profile()
profile.enable()
for _ in range(3000):
    sm.softmax(x)
profile.disable()
torch.cuda.synchronize()
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)

# --- RMSNorm forward + backward through autograd: exercise 9 -----------------------------------
rms = load("ex09_rmsnorm")
from tools.benchmarks.ex09_rmsnorm import SolutionRMSNorm  # noqa: E402  the benchmark's autograd function


rows = []
for n in (1024, 4096):
    xr = torch.randn(16384, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    wr = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(16384, n, device="cuda", dtype=torch.bfloat16)
    y0, rstd0 = rms.rmsnorm_forward(xr.detach(), wr.detach(), 1e-6)
    fns = {
        "solution_fwdbwd": lambda: torch.autograd.grad(SolutionRMSNorm.apply(xr, wr, 1e-6), (xr, wr), dy),
        "eager_fwdbwd": lambda: torch.autograd.grad(torch.nn.functional.rms_norm(xr, (n,), wr, 1e-6), (xr, wr), dy),
        "solution_fwd": lambda: rms.rmsnorm_forward(xr.detach(), wr.detach(), 1e-6),
        "solution_bwd": lambda: rms.rmsnorm_backward(dy, xr.detach(), wr.detach(), rstd0),
    }
    row = {"n": n, "host_us": {k: host(f, 500) for k, f in fns.items()},
           "dobench_us": {k: bench(f) for k, f in fns.items()}}
    rows.append(row)
    print("ex09", row, flush=True)
results["ex09_autograd"] = rows
profile = cProfile.Profile()
profile.enable()
for _ in range(1000):
    fns["solution_fwdbwd"]()
profile.disable()
torch.cuda.synchronize()
text.write("\n\n=== exercise 9 forward + backward through autograd, N = 4096 ===\n")
pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
with open(os.path.join(OUT, "launch_probe_profile.txt"), "w") as f:
    f.write(text.getvalue())


# --- the read floor ----------------------------------------------------------------------------
@triton.jit
def read_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    base = pid.to(tl.int64) * BLOCK * ITERS
    for i in range(ITERS):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(part_ptr + pid, tl.sum(acc, 0))


@triton.jit
def read_strided_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(pid.to(tl.int64) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(part_ptr + pid, tl.sum(acc, 0))


@triton.jit
def empty_kernel(x_ptr):
    pass


sms = torch.cuda.get_device_properties(0).multi_processor_count
ceiling, _ = bandwidth.measure_ceiling(refresh=True)
results["ceiling"] = {"ceiling_gbps": round(ceiling.ceiling_gbps, 1), "copy_gbps": round(ceiling.copy_gbps, 1),
                      "add_gbps": round(ceiling.add_gbps, 1)}
floor_rows = []
dummy = torch.empty(1, device="cuda")
floor_rows.append({"kernel": "empty-triton", "us": round(bandwidth.time_ms_clean_l2(bandwidth.graphed(lambda: empty_kernel[(1,)](dummy)), reps=200) * 1000, 2)})
for nbytes in (134234112, 268566528):
    n = nbytes // 2
    buf = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    parts = torch.empty(1 << 20, device="cuda")
    fns = {"torch.sum": lambda: buf.sum()}
    for block, iters, w in ((4096, 1, 4), (8192, 1, 8), (4096, 4, 4), (8192, 4, 8), (2048, 16, 4)):
        fns[f"blocks-{block}x{iters}-w{w}"] = (lambda block=block, iters=iters, w=w: read_kernel[(triton.cdiv(n, block * iters),)](
            buf, parts, n, BLOCK=block, ITERS=iters, num_warps=w))
    for per_sm, block, w in ((1, 8192, 8), (2, 8192, 8), (4, 4096, 4), (8, 4096, 4), (16, 2048, 4)):
        fns[f"strided-{per_sm}perSM-{block}-w{w}"] = (lambda per_sm=per_sm, block=block, w=w: read_strided_kernel[(sms * per_sm,)](
            buf, parts, n, BLOCK=block, num_warps=w))
    graphs = {k: bandwidth.graphed(f) for k, f in fns.items()}
    for turn in range(2):
        for k, g in graphs.items():
            us = bandwidth.time_ms_clean_l2(g, reps=100) * 1000
            floor_rows.append({"kernel": k, "bytes": nbytes, "turn": turn, "us": round(us, 2),
                               "fraction": round(bandwidth.gbps(nbytes, us / 1000) / ceiling.ceiling_gbps, 4)})
    del buf, graphs, fns
    torch.cuda.empty_cache()
results["read_floor"] = floor_rows
with open(os.path.join(OUT, "launch_probe.json"), "w") as f:
    json.dump(results, f, indent=1)

print("\n=== summary ===")
print("ex03 bf16 4096x1024 host µs:", results["ex03_launcher"]["host_us"])
print("ex03 do_bench µs:", results["ex03_launcher"]["dobench_us"], "graph:", results["ex03_launcher"]["graph_us"])
for row in rows:
    print("ex09 N", row["n"], "host", row["host_us"], "do_bench", row["dobench_us"])
best = {}
for r in floor_rows:
    if "bytes" in r:
        key = (r["bytes"], r["kernel"])
        best[key] = max(best.get(key, 0), r["fraction"])
for (nbytes, k), frac in sorted(best.items()):
    print(f"read {nbytes / 1e6:.0f} MB {k:28s} {frac:.3f}")
print("empty kernel, graph + read flush:", floor_rows[0]["us"], "µs; ceiling", results["ceiling"])
