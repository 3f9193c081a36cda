"""Exercise 8's split-KV decode over its launch configurations, timed the way a server runs it: replayed
from a CUDA graph after a read flush (``grader.perf.time_ms_clean_l2``), beside a plain Triton read of the
same bytes (one 8 KiB block per program, the fastest read of ``tools/device/launch_probe.py``).

    PYTHONPATH=. python tools/device/decode_probe.py      # writes $OUT/decode_probe.json

Each configuration is (TILE, num_warps, num_stages, programs per SM the splits are sized for); each is
timed whole and split kernel alone (the difference is the combine kernel and its launch).
"""
import itertools
import json
import math
import os
import statistics
import time

import torch
import triton
import triton.language as tl

from grader import perf
from tools.benchmarks.ex08_decode import nbytes, paged_inputs
from solutions import ex08_decode as sol

OUT = os.environ.get("OUT", ".")
H_Q, H_KV, D = 32, 8, 128


@triton.jit
def read_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32), 0))


@triton.jit
def combine_d_kernel(part_m_ptr, part_l_ptr, part_acc_ptr, cache_lens_ptr, out_ptr, stride_ob, stride_oh, stride_od,
                     tokens_per_split, num_splits, HEAD_DIM: tl.constexpr, SPLITS_PAD: tl.constexpr,
                     BLOCK_D: tl.constexpr):
    # The solution's combine with the head dimension cut into HEAD_DIM / BLOCK_D programs.
    seq = tl.program_id(0)
    head = tl.program_id(1)
    num_q_heads = tl.num_programs(1)
    cache_len = tl.load(cache_lens_ptr + seq)
    n_valid = (cache_len + tokens_per_split - 1) // tokens_per_split
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.program_id(2) * BLOCK_D + tl.arange(0, BLOCK_D)
    ok = offs_s < n_valid
    row = (seq * num_q_heads + head) * num_splits + offs_s
    m = tl.load(part_m_ptr + row, mask=ok, other=float("-inf"))
    l = tl.load(part_l_ptr + row, mask=ok, other=0.0)
    acc = tl.load(part_acc_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], mask=ok[:, None], other=0.0)
    m_all = tl.max(m, 0)
    m_ref = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.math.exp2(m - m_ref)
    total = tl.sum(w * l, 0)
    out = tl.sum(w[:, None] * acc, 0) / tl.where(total == 0.0, 1.0, total)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d * stride_od, out.to(out_ptr.dtype.element_ty))


def launcher(q, k_cache, v_cache, table, lens, config, split_only=False):
    TILE, warps, stages, per_sm = config[:4]
    block_d = config[4] if len(config) > 4 else None
    B, Hq, d = q.shape
    _, page_size, Hkv, _ = k_cache.shape
    group = Hq // Hkv
    capacity = table.shape[1] * page_size
    splits = sol.num_splits(capacity, B, Hkv, torch.cuda.get_device_properties(0).multi_processor_count,
                            tile_tokens=TILE, programs_per_sm=per_sm)
    tiles = max(1, triton.cdiv(capacity, TILE))
    tiles_per_split = triton.cdiv(tiles, splits)
    splits = triton.cdiv(tiles, tiles_per_split)
    tokens_per_split = tiles_per_split * TILE
    out = torch.empty((B, Hq, d), dtype=q.dtype, device=q.device)
    split_kv = splits > 1
    part_m = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_l = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_acc = torch.empty((B, Hq, splits, d), dtype=torch.float32, device=q.device)

    def run():
        compiled = sol.decode_split_kernel[(splits, Hkv, B)](
            q, k_cache, v_cache, table, lens, out, part_m, part_l, part_acc,
            *q.stride(), *k_cache.stride(), *v_cache.stride(), *table.stride(), *out.stride(),
            tokens_per_split, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, PAGE_SIZE=page_size,
            TILE=TILE, SPLIT_KV=split_kv, num_warps=warps, num_stages=stages)
        resources.update(n_regs=compiled.n_regs, shared=compiled.metadata.shared)
        if split_kv and not split_only and block_d:
            combine_d_kernel[(B, Hq, d // block_d)](
                part_m, part_l, part_acc, lens, out, *out.stride(), tokens_per_split, splits,
                HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits), BLOCK_D=block_d, num_warps=4)
        elif split_kv and not split_only:
            sol.decode_combine_kernel[(B, Hq)](
                part_m, part_l, part_acc, lens, out, *out.stride(), tokens_per_split, splits,
                HEAD_DIM=d, SPLITS_PAD=triton.next_power_of_2(splits), num_warps=4)
        return out
    resources = {}
    return run, splits, resources


ceiling, _ = perf.measure_ceiling(refresh=True)
rows = []
started = time.time()
SHAPES = ((1, 32768), (8, 8192), (64, 4096))
# The first sweep (64-4-3-4 best at B = 1 and 8; more, shorter splits and 8 warps worse) narrowed to the
# neighbours of the best, fewer splits (1 and 2 programs per SM), and the combine cut along D.
CONFIGS = ([c for c in itertools.product((64,), (4,), (2, 3), (1, 2, 4))] + [(32, 4, 4, 2), (32, 4, 4, 4), (128, 4, 2, 2)]
           + [(64, 4, 3, 4, bd) for bd in (16, 32, 64)] + [(64, 4, 2, 4, 32)])
for (B, S), page in itertools.product(SHAPES, (16, 64)):
    q, k, v, table, lens = paged_inputs(B, S, page)
    moved = nbytes(B, S, page)
    ref = sol.decode_attention(q, k, v, table, lens).float()
    plain = torch.randn(moved // 2, device="cuda", dtype=torch.bfloat16)
    parts = torch.empty(triton.cdiv(plain.numel(), 4096), device="cuda")
    timed = {"read": (perf.graphed(lambda: read_kernel[(parts.numel(),)](plain, parts, plain.numel(), BLOCK=4096)), None),
             "default": (perf.graphed(lambda: sol.decode_attention(q, k, v, table, lens)), None)}
    keep = []
    for config in CONFIGS:
        if page == 64 and config[0] == 32:
            continue  # TILE < page: covered at page 16
        print("config", B, S, page, config, flush=True)  # the last line before a crash names the culprit
        try:
            run, splits, resources = launcher(q, k, v, table, lens, config)
            err = float((run().float() - ref).abs().max())
            split, _, _ = launcher(q, k, v, table, lens, config, split_only=True)
            graphs = (perf.graphed(run), perf.graphed(split))
            for graph in graphs:
                graph()
                torch.cuda.synchronize()
            # The closures hold the outputs and partials the graphs write into: keep them alive with the graphs.
            keep.append((run, split))
            timed[f"config-{'-'.join(map(str, config))}"] = (graphs[0], {"splits": splits, "err": err, **resources})
            timed[f"split-only-{'-'.join(map(str, config))}"] = (graphs[1], {"splits": splits})
        except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory
            rows.append({"kernel": f"config-{'-'.join(map(str, config))}", "B": B, "S_k": S, "page_size": page,
                         "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    runs = {name: [] for name in timed}
    for _ in range(2):
        for name, (fn, _) in timed.items():
            runs[name].append(perf.time_ms_clean_l2(fn, reps=40))
    for name, times in runs.items():
        ms = statistics.median(times)
        rows.append({"kernel": name, "B": B, "S_k": S, "page_size": page, "ms": round(ms, 5),
                     "ms_runs": [round(t, 5) for t in times], "bytes": moved,
                     "fraction": round(perf.gbps(moved, ms) / ceiling.ceiling_gbps, 4), **(timed[name][1] or {})})
    print(f"B {B} S {S} page {page}: {time.time() - started:.0f} s", flush=True)
    del q, k, v, table, lens, plain, timed, keep
    torch.cuda.empty_cache()

meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
        "date": time.strftime("%Y-%m-%d"), "ceiling_gbps": round(ceiling.ceiling_gbps, 1),
        "timing": "CUDA graph replay after a read flush (grader.perf.time_ms_clean_l2), median of 40, two turns"}
json.dump({"meta": meta, "rows": rows}, open(os.path.join(OUT, "decode_probe.json"), "w"), indent=1)
print("\n=== best per shape (fraction of the ceiling) ===")
for (B, S), page in itertools.product(SHAPES, (16, 64)):
    mine = [r for r in rows if r["B"] == B and r["page_size"] == page and "fraction" in r]
    get = {r["kernel"]: r for r in mine}
    configs = sorted((r for r in mine if r["kernel"].startswith("config-")), key=lambda r: -r["fraction"])[:4]
    print(f"B {B:2d} S {S:5d} page {page}: read {get['read']['fraction']:.3f} default {get['default']['fraction']:.3f} | "
          + " ".join(f"{r['kernel'][7:]}:{r['fraction']:.3f}(split {get['split-only-' + r['kernel'][7:]]['fraction']:.3f}, s{r['splits']})"
                     for r in configs))
errors = [r for r in rows if "error" in r]
print(len(errors), "configs failed", errors[:3])
