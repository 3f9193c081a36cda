"""Triton's interpreter, with `grader.learner.interpreter_fixes`, computes what a GPU computes.

* bf16: the kernels of tests/bf16_agreement.py agree with a model of each (torch's float32 ->
  bfloat16 rounding and exact fractions, independent of the fix), and with the outputs an H200
  recorded for the same inputs (tests/data/bf16-h200.json, written by tests/gpu_record.py);
* loop variables are Triton scalars (``r.to(tl.int64)`` works), loop bounds may be computed in
  the kernel (Triton 3.6 under NumPy 2.4), a plain ``bool`` argument reaches the kernel (Triton 3.6);
* a kernel may read only the globals the compiler accepts (``tl.constexpr`` values, modules, jitted
  functions, dtypes): a plain float is refused with one sentence that names the line that reads it,
  the compiler's words and the fix, raised at that line;
* a launch may hand a kernel only what the compiler builds into it: a jitted function, a string, a
  tuple or a dtype as a constexpr run; a Python function, a tensor or a list as a constexpr, and
  anything the compiler cannot specialize as a plain argument, are refused with a sentence;
* torch ops that the kernel's programs run (a ``triton.constexpr_function``, the body itself) are
  recorded by the torch-op watch as the learner's, and the interpreter's own copies are not;
* a Triton whose interpreter source is not one the fixes know gets no fix, and then bf16 cases
  are left to a GPU with one line in the report.
"""

from __future__ import annotations

import json
import math
import os
import types
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.interpreter import TensorHandle

from grader.learner import interpreter_fixes
from grader.learner.interpreter_fixes import bits, fingerprints
from tests import bf16_agreement as agreement
from grader import catalogue
from tests.grading import ROOT, grade

#: The H200's outputs for tests/bf16_agreement.py (BF16_GPU_DATA points elsewhere, e.g. on the GPU itself).
GPU_DATA = Path(os.environ.get("BF16_GPU_DATA", ROOT / "tests" / "data" / "bf16-h200.json"))

#: In this process too, before any kernel runs: the kernels below run in the interpreter.
APPLIED = interpreter_fixes.apply()
#: The hard inputs overflow on purpose (inf, NaN): NumPy says so each time.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# --- the bits ------------------------------------------------------------------------------

def test_float32_rounds_to_nearest_even_like_torch():
    rng = np.random.default_rng(1)
    words = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    words[:6] = [0x3F808000, 0x3F818000, 0x7F7F8000, 0x7F7F7FFF, 0x00008000, 0x80018000]  # ties, overflow, subnormals
    values = words.view(np.float32)
    ours = bits.from_float(values)
    nan = np.isnan(values)
    assert np.array_equal(ours[~nan], agreement.rne(values)[~nan])
    assert np.isnan(bits.to_float32(ours[nan])).all()
    assert ours[0] == 0x3F80 and ours[1] == 0x3F82 and ours[2] == 0x7F80  # ties to even; the top tie is inf


def test_float32_toward_zero_truncates():
    values = np.array([1.0078125 * (1 + 2**-9), -1.99, 3.4e38, -np.inf], dtype=np.float32)
    assert list(bits.from_float(values, "rtz")) == [0x3F81, 0xBFFE, 0x7F7F, 0xFF80]


def test_float64_rounds_once():
    """Just above a tie by less than half a float32 ulp: float32 first would land on the tie."""
    ties = np.array([1 + 2**-8, 3 * 2**-9 + 2**-1, -(1 + 3 * 2**-8)], dtype=np.float64)
    above, below = ties * (1 + 2**-40), ties * (1 - 2**-40)
    for values in (above, below, ties):
        assert list(bits.from_float(values)) == list(agreement.exact_bits(values))
    twice = agreement.rne(above.astype(np.float32))  # rounded to float32, then to bf16
    assert (bits.from_float(above) != twice).any(), "the cases above must tell one rounding from two"


def test_fma_rounds_once():
    x = np.array([1.0625, 1.0625, 1.0625, -1.0625], dtype=np.float32)  # 1.0625^2 = 1.125 + 2^-8: a tie
    z = np.array([2**-30, -(2**-30), 0.0, 2**-30], dtype=np.float32)
    expected = [agreement.exact_bf16(Fraction(float(a)) * Fraction(float(a)) + Fraction(float(c))) for a, c in zip(x, z)]
    assert list(bits.fma(x, x, z)) == expected
    in_float32 = agreement.rne([np.float32(1.0625) * np.float32(1.0625) + np.float32(2**-30)])  # two roundings
    assert bits.fma(x, x, z)[0] != in_float32[0], "the first case must tell one rounding from two"
    assert bits.fma(np.float32([0.0]), np.float32([0.0]), np.float32([-0.0]))[0] == 0x0000  # +0 + -0 = +0


def test_constant_goes_through_six_decimals_as_in_triton():
    assert bits.constant(1e-7) == 0  # "0.000000"
    assert bits.constant(0.1) == agreement.exact_bf16(Fraction("0.100000"))
    assert bits.constant(-2.5) == 0xC020
    assert bits.constant(float("inf")) == 0x7F80


# --- the fixes on this Triton --------------------------------------------------------------

def test_every_fix_is_installed_on_this_triton():
    """Fails on a Triton whose interpreter changed where a fix works: read the functions named,
    and add their fingerprints (grader/learner/interpreter_fixes/fingerprints.py) once the fix is right."""
    assert APPLIED["bf16"] and APPLIED["loop_variables"] and APPLIED["constexpr_globals"], (
        f"triton {triton.__version__}: unknown interpreter source in {interpreter_fixes.unknown_sources()}")
    assert APPLIED["kernel_arguments"] and APPLIED["watched_programs"] and APPLIED["helper_calls"], (
        f"triton {triton.__version__}: unknown interpreter source in {interpreter_fixes.unknown_sources()}")
    assert interpreter_fixes.bf16_trustworthy()


@pytest.mark.parametrize("case", agreement.CASES, ids=lambda c: c.name)
def test_bf16_kernel_agrees_with_the_model(case):
    inputs = agreement.inputs_for(case)
    outputs = agreement.run(case, inputs, "cpu")
    for name, expected in case.model(inputs).items():
        problem = agreement.disagreement(expected.model, agreement.bits_of(outputs[name]), expected.bits)
        assert problem is None, f"{case.name}.{name}: {problem}"


def _recorded() -> dict:
    if not GPU_DATA.is_file():
        pytest.skip(f"{GPU_DATA.relative_to(ROOT) if GPU_DATA.is_relative_to(ROOT) else GPU_DATA} is not recorded "
                    "yet: run `python tests/gpu_record.py --out DIR` on a GPU and commit DIR/bf16-h200.json there")
    return json.loads(GPU_DATA.read_text())


@pytest.mark.parametrize("case", agreement.CASES, ids=lambda c: c.name)
def test_bf16_kernel_agrees_with_the_gpu(case):
    """The same inputs (stored as bits) through the interpreter and through the H200: the same bits,
    or, where the GPU approximates (exp, division) or picks its own order (sums, dot), the bound
    each output states in tests/bf16_agreement.py."""
    record = _recorded()["cases"].get(case.name)
    assert record is not None, f"{GPU_DATA.name} has no case {case.name!r}: record it again"
    if "error" in record:
        pytest.fail(f"the GPU could not run {case.name}: {record['error']}")
    inputs = {name: agreement.decode(value) for name, value in record["inputs"].items()}
    outputs = agreement.run(case, inputs, "cpu")
    for name, expected in case.model(inputs).items():
        gpu = agreement.bits_of(agreement.decode(record["outputs"][name]))
        problem = agreement.disagreement(expected.gpu, agreement.bits_of(outputs[name]), gpu)
        assert problem is None, f"{case.name}.{name}: interpreter vs GPU: {problem}"


def test_gpu_record_names_the_machine():
    meta = _recorded()["meta"]
    assert {"gpu", "triton", "torch", "date"} <= set(meta)
    assert meta["seed"] == agreement.SEED


# --- loops ---------------------------------------------------------------------------------

@triton.jit
def _loop_kernel(out_ptr, wide_ptr, n, big, STEP: tl.constexpr):
    for r in tl.range(tl.program_id(0), n, tl.num_programs(0)):  # a bound computed in the kernel
        row = r.to(tl.int64)  # a Triton scalar, as on a GPU
        tl.store(out_ptr + row, row * 3)
    for i in range(0, n, STEP):
        tl.static_assert(i.dtype == tl.int32)
        tl.store(out_ptr + n + i, i.to(tl.int64) * 2)
    for j in range(big - 1, big):
        tl.static_assert(j.dtype == tl.int64)  # a bound past 2^31: the loop variable is int64
        tl.store(wide_ptr, j)
    for k in tl.static_range(2):
        tl.static_assert(k < 2)  # a compile-time constant, as on a GPU


def test_loop_variables_are_triton_scalars():
    out = torch.full((12,), -1, dtype=torch.int64)
    wide = torch.zeros(1, dtype=torch.int64)
    _loop_kernel[(2,)](out, wide, 6, 2**33, STEP=1)
    assert out.tolist() == [0, 3, 6, 9, 12, 15, 0, 2, 4, 6, 8, 10]
    assert wide.item() == 2**33 - 1


# --- globals: the compiler's rule -----------------------------------------------------------

_PLAIN_SCALE = 2.0  # a plain float: the compiler refuses it inside a kernel
_SCALE = tl.constexpr(2.0)
_OUT_DTYPE = tl.float32


@triton.jit
def _times_scale(x):
    return x * _SCALE


@triton.jit
def _allowed_globals_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # a module, a jitted helper, a constexpr, a dtype and builtins
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, _times_scale(x).to(_OUT_DTYPE) + float(max(1, 0)) - 1.0, mask=offs < n)


@triton.jit
def _plain_float_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * _PLAIN_SCALE, mask=offs < n)


@triton.jit
def _refusing_helper(x):
    return x * _PLAIN_SCALE


@triton.jit
def _plain_float_in_helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    _PLAIN_SCALE = 3.0  # a local of the same name is the kernel's own: allowed here, not in the helper
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0) * _PLAIN_SCALE
    tl.store(out_ptr + offs, _refusing_helper(x), mask=offs < n)


def test_globals_the_compiler_accepts_run():
    x = torch.arange(5, dtype=torch.float32)
    out = torch.empty_like(x)
    _allowed_globals_kernel[(1,)](x, out, 5, BLOCK=8)
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]


@pytest.mark.parametrize("kernel", [_plain_float_kernel, _plain_float_in_helper_kernel], ids=["kernel", "helper"])
def test_a_plain_float_global_is_refused_as_the_compiler_refuses_it(kernel):
    x = torch.arange(5, dtype=torch.float32)
    with pytest.raises(Exception) as raised:
        kernel[(1,)](x, torch.empty_like(x), 5, BLOCK=8)
    chain, exc = [], raised.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__
    refusal = next((e for e in chain if type(e).__name__ == "CompilationError"), None)
    assert refusal is not None, [type(e).__name__ for e in chain]
    assert "Cannot access global variable _PLAIN_SCALE from within @jit'ed function" in str(refusal)


def test_the_names_read_are_those_the_body_does_not_bind():
    from grader.learner.interpreter_fixes.constexpr_globals import names_read

    def kernel(x_ptr, n, BLOCK: tl.constexpr = _PLAIN_SCALE):  # a default value is allowed by the compiler
        acc = 0.0
        for i in range(n):
            acc += tl.load(x_ptr + i) * LOG2E  # noqa: F821 (a name read, never bound)
        return acc

    assert sorted(names_read(kernel)) == ["LOG2E", "range", "tl"]


def test_a_refused_global_is_one_sentence_raised_at_the_line_that_reads_it():
    import traceback

    x = torch.arange(5, dtype=torch.float32)
    with pytest.raises(Exception) as raised:
        _plain_float_kernel[(1,)](x, torch.empty_like(x), 5, BLOCK=8)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("`_plain_float_kernel` reads the global `_PLAIN_SCALE` (line ")
    assert message.endswith("write `_PLAIN_SCALE = tl.constexpr(2.0)`")
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert last.filename == __file__ and "x * _PLAIN_SCALE" in last.line
    assert f"(line {last.lineno})" in message


_FUNCTION_CONSTEXPR = tl.constexpr(lambda: None)  # the compiler would call it while compiling


@triton.jit
def _function_constexpr_global_kernel(out_ptr):
    _FUNCTION_CONSTEXPR()
    tl.store(out_ptr, 1.0)


def test_a_constexpr_global_holding_a_python_function_is_refused():
    said = "a `tl.constexpr` that holds the Python function `<lambda>`.*make it a `@triton.jit` function"
    with pytest.raises(Exception, match=said):
        _function_constexpr_global_kernel[(1,)](torch.zeros(1))


# --- kernel arguments: the compiler's rule ----------------------------------------------------

@triton.jit
def _plus_one(x):
    return x + 1


@triton.constexpr_function
def _twice(n):
    return 2 * n


@triton.jit
def _constexpr_arguments_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, MODE: tl.constexpr, SHAPE: tl.constexpr,
                                DTYPE: tl.constexpr, BLOCK: tl.constexpr = 8):
    offs = tl.arange(0, _twice(BLOCK) // 2)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if MODE == "square":
        x = x * x
    y = FN(x) * SHAPE[0] + SHAPE[1]
    tl.store(out_ptr + offs, y.to(DTYPE), mask=offs < n)


def test_constexprs_the_compiler_builds_into_a_kernel_run():
    """A jitted function, a string, a tuple, a dtype and a constexpr_function (a Triton builtin passed as a
    constexpr compiles too, but Triton's interpreter cannot call one: it is not run here)."""
    x = torch.arange(5, dtype=torch.float32)
    out = torch.empty_like(x)
    _constexpr_arguments_kernel[(1,)](x, out, 5, FN=_plus_one, MODE="square", SHAPE=(2, 1), DTYPE=tl.float32)
    assert out.tolist() == [3.0, 5.0, 11.0, 21.0, 35.0]


def _python_plus_one(x):
    return x + 1


@pytest.mark.parametrize("value, said", [
    (_python_plus_one, "the Python function `_python_plus_one` for its constexpr `FN`: Triton's compiler does not "
                       "build a plain function into the kernel"),
    (lambda x: x, "the Python function `<lambda>`"),
    (torch.ones(1).add_, "the Python function `Tensor.add_`"),
    (torch.ones(1), "a tensor for its constexpr `FN`: a tensor reaches a kernel as a pointer"),
    ([1, 2], "a `list` for its constexpr `FN`: a constexpr is a number"),
    ((_plus_one, _python_plus_one), "the Python function `_python_plus_one` for its constexpr `FN[1]`"),
], ids=["function", "lambda", "bound-method", "tensor", "list", "tuple-with-a-function"])
def test_a_constexpr_the_compiler_would_not_build_into_the_kernel_is_refused(value, said):
    x = torch.arange(5, dtype=torch.float32)
    with pytest.raises(Exception) as raised:
        _constexpr_arguments_kernel[(1,)](x, torch.empty_like(x), 5, FN=value, MODE="", SHAPE=(1, 0),
                                          DTYPE=tl.float32)
    assert type(raised.value).__name__ == "CompilationError"
    assert said in str(raised.value) and "\n" not in str(raised.value)


@triton.jit
def _plain_argument_kernel(x_ptr, out_ptr, side):
    tl.store(out_ptr, tl.load(x_ptr))


def test_a_plain_argument_the_compiler_cannot_specialize_is_refused_with_its_words():
    x = torch.ones(1)
    with pytest.raises(Exception, match="failed to specialize argument of type: function"):
        _plain_argument_kernel[(1,)](x, torch.empty_like(x), lambda: None)
    for fine in (3, 2.5, True, None, torch.zeros(1), torch.nn.Parameter(torch.zeros(1))):
        _plain_argument_kernel[(1,)](x, torch.empty_like(x), fine)


@triton.jit
def _flag_kernel(out_ptr, flag):
    if flag:
        tl.store(out_ptr, 1.0)
    else:
        tl.store(out_ptr, 2.0)


def test_a_plain_bool_argument_reaches_the_kernel_as_the_compiler_gives_it():
    """Triton 3.6's interpreter refused it (a 32-bit array typed int1); compiled, it is an i1."""
    for flag, stored in ((True, 1.0), (False, 2.0)):
        out = torch.zeros(1)
        _flag_kernel[(1,)](out, flag)
        assert out.item() == stored


def _converts_a_bool_as_an_int(arg):  # Triton 3.6's `_implicit_cvt`, in short: its int branch takes a bool
    if isinstance(arg, int):
        ty = tl.str_to_ty(triton.runtime.jit.mangle_type(arg), None)
        return tl.tensor(TensorHandle(np.array([arg], dtype=np.int32), ty), ty)
    return arg


def _converts_a_bool_first(arg):  # Triton 3.8's and 3.9's, in short
    if isinstance(arg, bool):
        return "the interpreter's own bool"
    if isinstance(arg, int):
        return "the interpreter's own int"
    return arg


def test_the_bool_fix_patches_only_an_interpreter_whose_int_branch_takes_a_bool():
    from grader.learner.interpreter_fixes.bool_arguments import fix_bool_arguments

    old = types.ModuleType("old_interpreter")
    old.tl, old.TensorHandle, old._implicit_cvt = tl, TensorHandle, _converts_a_bool_as_an_int
    with pytest.raises(ValueError, match="exceeds dtype primitive_bitwidth"):
        old._implicit_cvt(True)
    assert fix_bool_arguments(old)
    converted = old._implicit_cvt(True)
    assert converted.dtype == tl.int1 and converted.handle.data.dtype == np.bool_ and bool(converted.handle.data[0])
    assert old._implicit_cvt(7).handle.data.dtype == np.int32  # other arguments go the old way
    assert not fix_bool_arguments(old)  # once only

    new = types.ModuleType("new_interpreter")
    new.tl, new.TensorHandle, new._implicit_cvt = tl, TensorHandle, _converts_a_bool_first
    assert not fix_bool_arguments(new)
    assert new._implicit_cvt is _converts_a_bool_first


class _LooksLikeATensor(torch.Tensor):
    def data_ptr(self):  # Triton calls it inside the launch
        return super().data_ptr()


def test_an_argument_with_a_data_ptr_of_its_own_is_refused():
    x = torch.ones(1)
    fake = torch.zeros(1).as_subclass(_LooksLikeATensor)
    with pytest.raises(Exception, match="only looks like a tensor .* pass the torch tensor itself"):
        _plain_argument_kernel[(1,)](x, torch.empty_like(x), fake)


def test_the_argument_rule_matches_the_compilers_specialization():
    """Where the rule asks nothing of the compiler (tensors, numbers, bools, None), the compiler agrees."""
    from triton.runtime.jit import mangle_type

    from grader.learner.interpreter_fixes.kernel_arguments import plain_refusal

    for value in (torch.zeros(2), 3, 2**40, 2.5, True, None, (torch.zeros(1), 2)):
        mangle_type(value)  # raises where the compiler refuses
        assert plain_refusal("k", "a", value) is None
    for value in ("text", tl.float32, [1], object()):
        with pytest.raises(TypeError):
            mangle_type(value)
        assert plain_refusal("k", "a", value) is not None


# --- the learner's Python inside a launch is the learner's --------------------------------------

#: Torch work a constexpr function runs while the kernel is built (a test puts some here).
_PENDING_WORK = []


@triton.constexpr_function
def _block_after_work(n):
    for work in _PENDING_WORK:  # no method call: the compiler refuses a callable it finds in the body
        work()
    return n


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, _block_after_work(BLOCK))
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_torch_ops_run_inside_a_kernels_programs_are_recorded_as_the_learners():
    from grader.learner.call_watch import Watch

    x, out = torch.arange(5, dtype=torch.float32), torch.empty(5)
    with Watch(intercept_allocations=False) as plain:  # the interpreter's own copies are not the learner's
        _copy_kernel[(1,)](x, out, 5, BLOCK=8)
    assert plain.result.computed == [] and len(plain.result.launches) == 1
    _PENDING_WORK.append(lambda: torch.exp(x))
    with Watch(intercept_allocations=False) as hidden:
        _copy_kernel[(1,)](x, out, 5, BLOCK=8)
    _PENDING_WORK.clear()
    assert any("exp" in op for op in hidden.result.computed), hidden.result.computed
    assert out.tolist() == x.tolist()


def _front_end(kernel, signature: dict, constexprs: dict) -> None:
    """Triton's compiler front end (AST to TTIR) for an sm_90 target: it runs on a CPU."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    target = GPUTarget("cuda", 90, 32)
    backend = CUDABackend(target)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    source = ASTSource(JITFunction(kernel.fn), signature, constexprs)
    source.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)


def _front_end_ops() -> list[str]:
    """The torch ops the watch records while the compiler's front end builds `_copy_kernel`, inside a launch."""
    from grader.learner import call_watch

    interpreter_fixes.apply_compiled()
    x = torch.arange(5, dtype=torch.float32)
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    _PENDING_WORK.append(lambda: torch.exp(x))
    with call_watch.Watch(intercept_allocations=False) as compiled:
        depth, call_watch._State.depth = call_watch._State.depth, 1  # as inside a launch, where Triton's own ops run
        try:
            _front_end(_copy_kernel, signature, {(3,): 8})
        finally:
            call_watch._State.depth = depth
            _PENDING_WORK.clear()
    return compiled.result.computed


def test_the_compilers_front_end_runs_the_learners_python_as_the_learners():
    """On a GPU the compiler calls a constexpr function while it compiles, inside the launch: with
    `apply_compiled` its torch ops are recorded, as they are in the interpreter's programs. In a
    process of its own: once the interpreter has run a jitted helper, `triton.language` stays
    patched for it and the compiler's front end no longer builds anything."""
    import subprocess
    import sys

    script = "import json, tests.test_interpreter_fixes as t; print(json.dumps(t._front_end_ops()))"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    computed = json.loads(done.stdout.strip().splitlines()[-1])
    assert any("exp" in op for op in computed), computed


# --- jitted helpers inside a launch ------------------------------------------------------------

@triton.jit
def _double(x):
    return x * 2.0


@triton.jit
def _row_sums_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """A row per program, its sum taken in blocks: a helper of this file's (``_double``) and
    ``triton.language``'s own helpers (``tl.zeros``, ``tl.sum``) called in every loop step."""
    row = tl.program_id(0)
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        total += _double(tl.load(x_ptr + row * n_cols + offsets, mask=offsets < n_cols, other=0.0))
    tl.store(out_ptr + row, tl.sum(total, axis=0))


def _counting_original_patches(monkeypatch):
    """Count the calls that reach the interpreter's own ``_patch_lang`` (under the fix's wrapper)."""
    from triton.runtime import interpreter

    calls = []
    original = interpreter._patch_lang.__wrapped__
    monkeypatch.setattr(interpreter._patch_lang, "__wrapped__", original)

    def counted(fn):
        calls.append(fn.__name__)
        return original(fn)

    # The wrapper holds the original in its closure; swap the closure's cell for a counting one.
    cells = dict(zip(interpreter._patch_lang.__code__.co_freevars, interpreter._patch_lang.__closure__))
    monkeypatch.setattr(cells["original_patch"], "cell_contents", counted)
    return calls


def test_a_launch_patches_each_language_module_once_however_many_helper_calls(monkeypatch):
    """Three programs, four loop steps each: without the fix every call of ``_double``, ``tl.zeros`` and
    ``tl.sum`` patched ``triton.language`` again (19 patches a launch on Triton 3.9); with it, the launch
    patches the kernel's ``tl`` and the first helper from ``triton.language.standard`` patches ``tl.core``,
    once each."""
    assert APPLIED["helper_calls"]
    calls = _counting_original_patches(monkeypatch)
    x = torch.randn(3, 50)
    out = torch.full((3,), float("nan"))
    _row_sums_kernel[(3,)](x, out, 50, BLOCK=16)
    torch.testing.assert_close(out, 2 * x.sum(dim=1), rtol=1e-5, atol=1e-5)
    assert len(calls) == 2, calls
    assert calls[0] == "_row_sums_kernel"
    calls.clear()
    _row_sums_kernel[(3,)](x, out, 50, BLOCK=16)  # a second launch starts again: its patches were undone
    assert len(calls) == 2, calls


def test_a_helper_called_outside_a_launch_is_patched_as_triton_patches_it(monkeypatch):
    calls = _counting_original_patches(monkeypatch)
    from triton.runtime import interpreter

    interpreter._patch_lang(_double.fn).restore()  # no launch in progress: the interpreter's own call runs
    assert calls == ["_double"]


@triton.jit
def _doubled_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, _double(tl.load(x_ptr + offsets, mask=offsets < n)), mask=offsets < n)


def test_a_launch_inside_a_launch_patches_and_undoes_its_own():
    """A grid function that launches a kernel (Python that Triton runs inside the outer launch): the
    inner launch patches, its programs call helpers, and the outer launch's programs still find
    ``triton.language`` patched after it, and unpatched once it ends (what a helper from
    ``triton.language.standard`` patched in ``tl.core`` stays patched, as in Triton's own interpreter)."""
    x, inner_out = torch.randn(40), torch.full((40,), float("nan"))

    def grid(meta):
        _doubled_copy_kernel[(3,)](x, inner_out, 40, BLOCK=16)
        return (2,)

    rows = torch.randn(2, 50)
    out = torch.full((2,), float("nan"))
    _row_sums_kernel[grid](rows, out, 50, BLOCK=16)
    torch.testing.assert_close(inner_out, 2 * x)
    torch.testing.assert_close(out, 2 * rows.sum(dim=1), rtol=1e-5, atol=1e-5)
    assert tl.core.is_builtin(tl.load), "a launch's patch outlived it"


# --- when the interpreter is not one the fixes know -----------------------------------------

def test_unknown_interpreter_source_gets_no_fix():
    class InterpreterBuilder:
        def binary_op(self, lhs, rhs, op):  # not the source any fix was written against
            return op(lhs, rhs)

    fake = types.ModuleType("fake_interpreter")
    fake.InterpreterBuilder = InterpreterBuilder
    original = InterpreterBuilder.binary_op
    applied, unknown = interpreter_fixes.install(fake)
    assert applied == {"loop_bounds": False, "bool_arguments": False, "loop_variables": False, "bf16": False,
                       "constexpr_globals": False, "kernel_arguments": False, "watched_programs": False,
                       "helper_calls": False}
    assert "InterpreterBuilder.binary_op" in unknown
    assert InterpreterBuilder.binary_op is original


def test_fingerprints_know_this_interpreter():
    from triton.runtime import interpreter

    # The installed wrappers replaced some functions: the unwrapped sources were checked at install.
    named = (*interpreter_fixes.FINGERPRINTED, *interpreter_fixes.COMPILER_RULES)
    assert set(fingerprints.KNOWN) == {(f"{o}.{a}" if o else a) for o, a in named}
    assert all(len(hashes) >= 1 for hashes in fingerprints.KNOWN.values())
    assert fingerprints.source_hash(interpreter.InterpreterBuilder.create_make_range)  # sources are readable


@pytest.mark.slow
def test_without_the_fix_bf16_is_left_to_a_gpu_in_one_line(monkeypatch):
    """GRADE_INTERPRETER_FIXES=off: the state of a Triton the fixes do not know."""
    from rich.console import Console

    from grader import catalogue
    from grader.commands import report

    monkeypatch.setenv("GRADE_INTERPRETER_FIXES", "off")
    path = catalogue.get(1).natural_dir / "tutorial_add.py"
    run = grade(1, path, select="matches_reference and (n3 or n1025)")
    bf16 = [c for c in run.checks if "bf16" in c.name]
    assert bf16 and all(c.skipped and c.message == interpreter_fixes.BF16_ON_GPU_ONLY for c in bf16)
    assert run.passed, [c.message for c in run.checks if not c.passed]
    console = Console(record=True, width=100)
    report.render(run, catalogue.get(1), console)
    assert console.export_text().count(interpreter_fixes.BF16_ON_GPU_ONLY) == 1


def test_interpreter_limit_messages_say_so(monkeypatch):
    from grader.wire.failures import describe_exception

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    message = str(describe_exception(AttributeError("'int' object has no attribute 'to'"), None))
    assert "limit of this interpreter" in message and "tl.cast(r, tl.int64)" in message
    removed = describe_exception(NotImplementedError("Block pointers have been removed in favor of the tensor "
                                                     "descriptor API"), None)
    assert removed.kind == "wrong" and "Triton 3.9 removed block pointers" in str(removed)


def test_bound_rule_accepts_equal_infinities_and_nan():
    rule = agreement.Rule("bound", bound=np.array([1e-3, 1e-3, 1e-3]))
    got = np.array([math.inf, math.nan, 1.0], dtype=np.float32).view(np.uint32)
    want = np.array([math.inf, math.nan, 1.01], dtype=np.float32).view(np.uint32)
    assert "1 of 3 differ" in agreement.disagreement(rule, got, want)
