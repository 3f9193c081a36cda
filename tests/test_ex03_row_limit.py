"""Exercises 3 and 4 hold rows of up to 128 KiB in one block: 32768 float32 columns, 65536 16-bit
columns. The limit is one number shared by the grader, the solutions and the stubs; the solution
takes the longest row and refuses the next one with a sentence; its warps keep the longest float32
row in registers (checked by compiling for sm_90, no GPU needed)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from grader.exercises._shared import softmax_checks as sm

ROOT = Path(__file__).resolve().parent.parent
FILES = ["solutions.ex03_softmax", "exercises.ex03_softmax", "solutions.ex04_softmax_persistent",
         "exercises.ex04_softmax_persistent"]


def test_the_limit_is_128_kib_in_every_dtype():
    assert sm.MAX_ROW_BYTES == 128 * 1024
    assert (sm.max_cols(torch.float32), sm.max_cols(torch.float16), sm.max_cols(torch.bfloat16)) == (32768, 65536, 65536)


@pytest.mark.parametrize("module", FILES)
def test_solutions_and_stubs_state_the_grader_limit(module):
    file = importlib.import_module(module)
    assert file.MAX_ROW_BYTES == sm.MAX_ROW_BYTES
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        assert file.max_cols(dtype) == sm.max_cols(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_solution_takes_the_longest_row_and_refuses_a_longer_one(dtype):
    from solutions.ex03_softmax import softmax

    n = sm.max_cols(dtype)
    x = torch.randn(1, n).to(dtype)
    out = softmax(x)
    assert torch.allclose(out.double(), torch.softmax(x.double(), dim=1), rtol=2e-2, atol=1e-6)
    with pytest.raises(ValueError, match=f"rows of {n + 1} .* do not fit in one block .*exercise 5"):
        softmax(torch.randn(1, n + 1).to(dtype))


def test_warps_grow_with_the_row_up_to_a_whole_program():
    from solutions.ex03_softmax import num_warps_for

    assert [num_warps_for(b) for b in (256, 1024, 2048, 4096, 32768, 65536)] == [1, 1, 2, 4, 32, 32]


def _bundled_tools() -> bool:
    import triton

    folder = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    return os.path.isfile(os.path.join(folder, "cuobjdump"))


@pytest.mark.skipif(not _bundled_tools(), reason="Triton's bundled cuobjdump is not installed")
def test_the_longest_float32_row_fits_in_registers_with_the_chosen_warps():
    """sm_90: 32768 float32 values over 32 warps leave every thread within its 64 registers, unspilled.

    Compiled in a child process: under TRITON_INTERPRET=1 (the course's tests) Triton compiles nothing.
    """
    code = ("import json, torch\n"
            "from tools.benchmarks.sm90_resources import compile_report\n"
            "from solutions.ex03_softmax import max_cols, num_warps_for, softmax_kernel\n"
            "n = max_cols(torch.float32)\n"
            "print(json.dumps(compile_report(softmax_kernel, pointers={'x_ptr': 'fp32', 'out_ptr': 'fp32'},\n"
            "    integers={'x_row_stride': n, 'out_row_stride': n, 'n_cols': n}, constexprs={'BLOCK': n},\n"
            "    num_warps=num_warps_for(n))))\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["registers"] is not None and report["registers"] <= 64
    assert report["stack_bytes"] == 0
