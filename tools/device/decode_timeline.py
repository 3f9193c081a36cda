"""When each program of exercise 8's split kernel starts and ends, read off the GPU's own clock.

    PYTHONPATH=. python tools/device/decode_timeline.py      # $OUT/decode_timeline.json
    PYTHONPATH=. python tools/device/decode_timeline.py --analyze FILE   # adds the sm-consistency rows (no GPU)

The solution's split kernel (its own code, called from a wrapper, and its launch configuration) with
``%globaltimer`` read before and after it in every program, and the SM the program ran on. Beside it, the plain read of the same bytes (one 8 KiB block per program) with the same
readings. Each launch runs after a read flush of the L2, like the benchmark's timing. The summary shows
the ramp (how late the last program starts), the tail (how long the kernel runs after its median program
has finished) and the spread of the programs' own durations: where a short kernel loses its time. A
second launcher, ``split-even``, gives every SM the same number of programs (splits of equal tokens, not
whole tiles) to tell a late SM from a late program. About 15 s on an H200.
"""
import json
import math
import os
import re
import statistics
import time

import torch
import triton
import triton.language as tl

from grader import bandwidth
from solutions import ex08_decode as sol
from tools.benchmarks.ex08_decode import nbytes, paged_inputs

OUT = os.environ.get("OUT", ".")


@triton.jit
def _now():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _smid():
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)


@triton.jit
def timed_split_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, out_ptr,
                       part_m_ptr, part_l_ptr, part_acc_ptr, stamps_ptr,
                       stride_qb, stride_qh, stride_qd, stride_kp, stride_ks, stride_kh, stride_kd,
                       stride_vp, stride_vs, stride_vh, stride_vd, stride_tb, stride_tp, stride_ob, stride_oh, stride_od,
                       tokens_per_split, qk_scale,
                       GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
                       PAGE_SIZE: tl.constexpr, TILE: tl.constexpr, SPLIT_KV: tl.constexpr):
    # The solution's decode_split_kernel itself (called, so inlined), between two clock readings.
    start = _now()
    sol.decode_split_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, cache_lens_ptr, out_ptr,
                            part_m_ptr, part_l_ptr, part_acc_ptr, stride_qb, stride_qh, stride_qd,
                            stride_kp, stride_ks, stride_kh, stride_kd, stride_vp, stride_vs, stride_vh, stride_vd,
                            stride_tb, stride_tp, stride_ob, stride_oh, stride_od, tokens_per_split, qk_scale,
                            GROUP, GROUP_PAD, HEAD_DIM, PAGE_SIZE, TILE, SPLIT_KV)
    end = _now()
    pid = (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) + tl.program_id(0)
    _store_stamps(stamps_ptr, pid, start, end)


@triton.jit
def _store_stamps(stamps_ptr, pid, start, end):
    tl.store(stamps_ptr + pid * 3 + 0, start)
    tl.store(stamps_ptr + pid * 3 + 1, end)
    tl.store(stamps_ptr + pid * 3 + 2, _smid().to(tl.int64))


@triton.jit
def timed_read_kernel(x_ptr, part_ptr, stamps_ptr, n, BLOCK: tl.constexpr):
    start = _now()
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32), 0))
    _store_stamps(stamps_ptr, pid, start, _now())


def split_launch(q, k, v, table, lens, splits_override=None):
    """The solution's launch (decode_attention's arithmetic) of the timed kernel: (launcher, splits,
    tokens per split, the stamps it fills). ``splits_override``: that many splits of equal tokens (not a
    multiple of TILE) instead."""
    B, Hq, d = q.shape
    _, page, Hkv, _ = k.shape
    TILE, warps, stages, per_sm = sol._config(page, d)
    capacity = table.shape[1] * page
    splits = sol.num_splits(capacity, B, Hkv, sol._num_sms(q.device), tile_tokens=TILE, programs_per_sm=per_sm)
    tiles = max(1, triton.cdiv(capacity, TILE))
    tiles_per_split = triton.cdiv(tiles, splits)
    splits = triton.cdiv(tiles, tiles_per_split)
    tps = tiles_per_split * TILE
    if splits_override:
        tps = triton.cdiv(capacity, splits_override)
        splits = triton.cdiv(capacity, tps)
    out = torch.empty((B, Hq, d), dtype=q.dtype, device=q.device)
    part_m = torch.empty((B, Hq, splits), dtype=torch.float32, device=q.device)
    part_l = torch.empty_like(part_m)
    part_acc = torch.empty((B, Hq, splits, d), dtype=torch.float32, device=q.device)
    stamps = torch.zeros((splits * Hkv * B, 3), dtype=torch.int64, device=q.device)

    def run():
        timed_split_kernel[(splits, Hkv, B)](
            q, k, v, table, lens, out, part_m, part_l, part_acc, stamps,
            *q.stride(), *k.stride(), *v.stride(), *table.stride(), *out.stride(), tps, 1 / math.sqrt(d) * sol.LOG2E,
            GROUP=Hq // Hkv, GROUP_PAD=max(16, triton.next_power_of_2(Hq // Hkv)), HEAD_DIM=d, PAGE_SIZE=page,
            TILE=TILE, SPLIT_KV=splits > 1, num_warps=warps, num_stages=stages)
        return out, part_m, part_l, part_acc
    return run, splits, tps, stamps


def check(run, tokens_per_split, want, lens) -> float:
    """The timed kernel's output (merged by the solution's combine kernel when split) against ``want``."""
    out, part_m, part_l, part_acc = run()
    splits = part_m.shape[2]
    if splits > 1:
        sol.decode_combine_kernel[(out.shape[0], out.shape[1])](
            part_m, part_l, part_acc, lens, out, *out.stride(), tokens_per_split, splits,
            HEAD_DIM=out.shape[2], SPLITS_PAD=triton.next_power_of_2(splits), num_warps=4)
    return float((out.float() - want.float()).abs().max())


def summarize(stamps: torch.Tensor) -> dict:
    s = stamps.cpu().double()
    base = float(s[:, 0].min())
    start, end = (s[:, 0] - base) / 1e3, (s[:, 1] - base) / 1e3  # µs
    dur = end - start
    q = lambda x, f: round(float(torch.quantile(x, f)), 3)  # noqa: E731
    per_sm = torch.bincount(s[:, 2].long())
    return {"programs": len(s), "sms_used": int((per_sm > 0).sum()), "programs_per_sm_max": int(per_sm.max()),
            "span_us": round(float(end.max()), 3),
            "start_us": {"p50": q(start, 0.5), "p90": q(start, 0.9), "max": q(start, 1.0)},
            "end_us": {"min": q(end, 0.0), "p10": q(end, 0.1), "p50": q(end, 0.5), "p90": q(end, 0.9), "max": q(end, 1.0)},
            "duration_us": {"p10": q(dur, 0.1), "p50": q(dur, 0.5), "p90": q(dur, 0.9)},
            "timer_step_ns": float(torch.diff(torch.unique(s[:, :2].flatten())).min()) if len(s) > 1 else None}


def main():
    flush = bandwidth._read_flush_buffer()
    rows = []
    for B, S in ((1, 32768), (8, 8192), (64, 4096)):
        page = 16
        q, k, v, table, lens = paged_inputs(B, S, page)
        run, splits, tps, stamps_split = split_launch(q, k, v, table, lens)
        # Every SM given the same number of programs: 4 · SMs programs when they divide into whole splits.
        even = 4 * sol._num_sms(q.device) // (B * k.shape[2])
        run_even, splits_even, tps_even, stamps_even = split_launch(q, k, v, table, lens, splits_override=even)
        want = sol.decode_attention(q, k, v, table, lens)
        moved = nbytes(B, S, page)
        plain = torch.randn(moved // 2, device="cuda", dtype=torch.bfloat16)
        parts = torch.empty(triton.cdiv(plain.numel(), 4096), device="cuda")
        read_stamps = torch.zeros((parts.numel(), 3), dtype=torch.int64, device="cuda")
        read = lambda: timed_read_kernel[(parts.numel(),)](plain, parts, read_stamps, plain.numel(), BLOCK=4096)  # noqa: E731
        run(), read(), run_even()
        torch.cuda.synchronize()
        errors = {name: check(fn, tps_, want, lens) for name, fn, tps_ in (("split", run, tps), ("split-even", run_even, tps_even))}
        print(B, S, "max abs error against the solution", errors, flush=True)
        rows.append({"kernel": "check", "B": B, "S_k": S, "page_size": page, "max_abs_error": errors})
        for rep in range(5):
            for name, fn, stamps in (("split", run, stamps_split), ("read", read, read_stamps),
                                     ("split-even", run_even, stamps_even)):
                flush.sum()  # a read flush, as grader.bandwidth.time_ms_clean_l2
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                stop.record()
                torch.cuda.synchronize()
                rows.append({"kernel": name, "B": B, "S_k": S, "page_size": page, "rep": rep,
                             "splits": {"split": splits, "split-even": splits_even}.get(name),
                             "event_ms": round(start.elapsed_time(stop), 5), **summarize(stamps)})
                if rep == 4 and name != "read":  # one launch's programs, raw: start, end (ns from the first start), SM
                    raw = stamps.cpu()
                    raw[:, :2] -= int(raw[:, 0].min())
                    rows[-1]["programs_raw"] = raw.tolist()
        print(B, S, "done", flush=True)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d")}
    json.dump({"meta": meta, "rows": rows}, open(os.path.join(OUT, "decode_timeline.json"), "w"), indent=1)
    print(f"{'kernel':6} {'B':>3} {'event':>7} {'span':>6} {'start p50/max':>14} {'end min/p10/p50/p90/max':>32} "
          f"{'dur p10/p50/p90':>20} step")
    for r in rows:
        if r.get("rep", 0) < 2:
            continue
        st, en, du = r["start_us"], r["end_us"], r["duration_us"]
        print(f"{r['kernel']:6} {r['B']:3d} {r['event_ms'] * 1e3:7.2f} {r['span_us']:6.2f} {st['p50']:6.2f}/{st['max']:6.2f} "
              f"{en['min']:6.2f}/{en['p10']:6.2f}/{en['p50']:6.2f}/{en['p90']:6.2f}/{en['max']:6.2f} "
              f"{du['p10']:6.2f}/{du['p50']:6.2f}/{du['p90']:6.2f} {r['timer_step_ns']}")


def sm_consistency(rows: list[dict]) -> list[dict]:
    """From the raw programs of two launches of the same shape (``split`` and ``split-even``): each SM's
    mean end time, and how well the two launches agree on which SMs are late (Pearson's r over the SMs
    that ran four programs in both). A high r says lateness belongs to the SM, not to the program."""
    out = []
    raw = {(r["kernel"], r["B"]): r["programs_raw"] for r in rows if "programs_raw" in r}
    for B in sorted({b for _, b in raw}):
        means = []
        for name in ("split", "split-even"):
            ends, count = {}, {}
            for _, end, sm in raw[(name, B)]:
                ends[sm] = ends.get(sm, 0.0) + end / 1e3
                count[sm] = count.get(sm, 0) + 1
            means.append({sm: (ends[sm] / count[sm], count[sm]) for sm in ends})
        both = [sm for sm in means[0] if sm in means[1] and means[0][sm][1] == 4 and means[1][sm][1] == 4]
        a = [means[0][sm][0] for sm in both]
        b = [means[1][sm][0] for sm in both]
        per_sm = sorted(a)
        out.append({"kernel": "sm-consistency", "B": B, "sms": len(both),
                    "sm_mean_end_us": {"min": round(per_sm[0], 3), "p50": round(statistics.median(per_sm), 3),
                                       "max": round(per_sm[-1], 3)},
                    "pearson_r_between_launches": round(statistics.correlation(a, b), 3)})
    return out


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--analyze", metavar="FILE", help="add the sm-consistency rows to a measured FILE (no GPU)")
    args = parser.parse_args()
    if args.analyze:
        data = json.load(open(args.analyze))
        data["rows"] = [r for r in data["rows"] if r["kernel"] != "sm-consistency"] + sm_consistency(data["rows"])
        text = json.dumps(data, indent=1)
        # One line per program in programs_raw.
        text = re.sub(r"\[\s+(-?\d+),\s+(-?\d+),\s+(-?\d+)\s+\]", r"[\1, \2, \3]", text)
        open(args.analyze, "w").write(text + "\n")
        for row in data["rows"][-3:]:
            print(row)
    else:
        main()
