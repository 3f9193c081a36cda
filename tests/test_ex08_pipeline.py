"""Exercise 8's split kernel as its GPU configuration compiles it (sm_90, no GPU needed): the page-number
loads take a pipeline stage of their own, so the K/V ring has one slot at 3 stages and two at the
solution's 5, and the registers and shared memory leave room for the programs per SM its splits are
sized for. Chapter 9 and the solution's `_config` say so; this checks it on the compiler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: sm_90's per-SM limits: 64 K 32-bit registers; 228 KiB of shared memory, 1 KiB of it reserved per program.
REGISTERS_PER_SM = 65536
SHARED_PER_SM = 228 * 1024


def _bundled_tools() -> bool:
    import triton

    folder = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    return os.path.isfile(os.path.join(folder, "cuobjdump"))


CODE = """
import json, re
from tools.benchmarks.sm90_resources import compile_report
from solutions import ex08_decode as sol

TILE, warps, stages, per_sm = sol._config(16, 128)
D, H_kv, page = 128, 8, 16
pointers = {name: "bf16" for name in ("q_ptr", "k_cache_ptr", "v_cache_ptr", "out_ptr")}
pointers.update(block_table_ptr="i32", cache_lens_ptr="i32", part_m_ptr="fp32", part_l_ptr="fp32", part_acc_ptr="fp32")
integers = dict(stride_qb=32 * D, stride_qh=D, stride_qd=1, stride_kp=page * H_kv * D, stride_ks=H_kv * D, stride_kh=D,
                stride_kd=1, stride_vp=page * H_kv * D, stride_vs=H_kv * D, stride_vh=D, stride_vd=1, stride_tb=2048,
                stride_tp=1, stride_ob=32 * D, stride_oh=D, stride_od=1, tokens_per_split=512)
constexprs = dict(GROUP=4, GROUP_PAD=16, HEAD_DIM=D, PAGE_SIZE=page, TILE=TILE, SPLIT_KV=True)
reports = {}
for num_stages in (3, stages):
    report = compile_report(sol.decode_split_kernel, pointers=pointers, integers=integers, floats=("qk_scale",),
                            constexprs=constexprs, num_warps=warps, num_stages=num_stages, ttgir=True)
    ring = re.findall(rf"memdesc<(\\d+)x{TILE}x{D}xbf16", report.pop("ttgir"))
    reports[num_stages] = {**report, "slots": sorted({int(n) for n in ring})}
print(json.dumps({"config": [TILE, warps, stages, per_sm], "reports": reports}))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    if not _bundled_tools():
        pytest.skip("Triton's bundled cuobjdump is not installed")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # the GPU configuration, compiled
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_three_stages_leave_one_kv_buffer_and_the_solutions_five_leave_two(compiled):
    stages = compiled["config"][2]
    assert compiled["reports"]["3"]["slots"] == [1]
    assert compiled["reports"][str(stages)]["slots"] == [2]


def test_the_programs_per_sm_the_splits_assume_fit_on_an_sm(compiled):
    TILE, warps, stages, per_sm = compiled["config"]
    report = compiled["reports"][str(stages)]
    assert report["stack_bytes"] == 0  # nothing spilled
    assert per_sm * report["registers"] * 32 * warps <= REGISTERS_PER_SM
    assert per_sm * (report["shared_bytes"] + 1024) <= SHARED_PER_SM
