"""Checks for exercise 7, FlashAttention forward:
``attention(q, k, v, causal=False, key_lens=None, sm_scale=None) -> Tensor``.

q is (B, H, S_q, D), k and v (B, H, S_k, D), fp16 or bf16, D in {16, 32, 64, 128}. ``causal``:
query i sees keys j <= i. ``key_lens`` (B,): keys at positions >= key_lens[b] are padding; a row
that sees no key returns zeros. ``sm_scale`` defaults to 1/sqrt(D).

Attention at these shapes is compute-bound, so the performance check is throughput in TFLOP/s
(4 · B · H · S_q · S_k · D, half of that when causal) as a fraction of PyTorch's
``scaled_dot_product_attention`` (SDPA) on the same inputs, not a fraction of a bandwidth
ceiling. `minimum_bytes` is still the floor of its HBM traffic (q, k, v read, out written once);
the memory check allows allocations of twice the inputs during a call, far below one S × S matrix.

Interpreter limits this spec works around, each said in a message:

* ``tl.dot`` on bf16 operands multiplies the raw bits in Triton's interpreter
  (triton-lang/triton#11584). `grader.learner.interpreter_fixes` makes it compute as a GPU does (float32
  products and accumulation), so `test_bf16` runs its short cases there; where that fix cannot be
  installed (an interpreter it does not know), bf16 is checked on a GPU only and the check says so.
* ~1 ms of Python per program and per loop step: interpreter shapes stay under S = 130 except
  three cases (S 257 to 513, B = H = 1): the reference solution grades in about 15 s of CPU.

When a comparison fails the spec says *why* where it can, by comparing the learner's output
with references that make one known mistake each (a wrong scale, a missing mask, no final
division) and, for the online softmax, by rerunning on scores that rise or fall along the keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.learner import interpreter_fixes
from grader.wire import guards
from grader.learner.access_map import ShowCase, parse_size
from grader.judge.compare import DEFAULT_TOLERANCES, Tolerance, expect_close
from grader.wire.failures import GradeFailure


HEAD_DIMS = (16, 32, 64, 128)
LOG2E = 1.4426950408889634
MiB = 1 << 20


#: Measured against the kernel's own algorithm (fp32 scores, P rounded to the input dtype before
#: P·V, fp32 accumulator, output rounded once) over S 1 to 1000 and every D: the worst element used
#: 0.19 of the default fp16 tolerance and 0.18 of the bf16 one. A wrong scale or a missing mask
#: is off by far more, so the defaults (compare.DEFAULT_TOLERANCES) are kept.
TOLERANCES = {torch.float16: DEFAULT_TOLERANCES[torch.float16], torch.bfloat16: DEFAULT_TOLERANCES[torch.bfloat16]}


def minimum_bytes(B: int, H: int, S_q: int, S_k: int, D: int, element_size: int) -> int:
    """Fewest bytes attention can move: q, k, v read once, out written once (no S×S matrix)."""
    return (2 * B * H * S_q * D + 2 * B * H * S_k * D) * element_size


def flops(B: int, H: int, S_q: int, S_k: int, D: int, causal: bool) -> float:
    """Two matrix products of 2 · S_q · S_k · D each per head; causal skips about half."""
    total = 4.0 * B * H * S_q * S_k * D
    return total / 2 if causal else total


# --- cases -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    B: int
    H: int
    S: int  # S_q
    D: int
    causal: bool = False
    S_k: int | None = None  # None: S_k = S_q
    key_lens: tuple[int, ...] | None = None
    sm_scale: float | None = None
    layout: str = "bhsd"  # "bshd": (B, S, H, D) tensors seen as (B, H, S, D), as attention layers make them
    lens_dtype: torch.dtype = torch.int64

    @property
    def seq_k(self) -> int:
        return self.S if self.S_k is None else self.S_k

    @property
    def id(self) -> str:
        parts = [f"B{self.B}", f"H{self.H}", f"S{self.S}" if self.S_k is None else f"Sq{self.S}-Sk{self.S_k}", f"D{self.D}"]
        if self.causal:
            parts.append("causal")
        if self.key_lens is not None:
            parts.append("lens" + "_".join(str(n) for n in self.key_lens))
        if self.sm_scale is not None:
            parts.append(f"scale{self.sm_scale:g}")
        if self.layout != "bhsd":
            parts.append(self.layout)
        return "-".join(parts)

    def describe(self) -> str:
        shape = f"B {self.B}, H {self.H}, S {self.S}" + ("" if self.S_k is None else f", S_k {self.S_k}") + f", D {self.D}"
        extras = ["causal" if self.causal else "not causal"]
        if self.key_lens is not None:
            extras.append(f"key_lens {list(self.key_lens)}")
        if self.sm_scale is not None:
            extras.append(f"sm_scale {self.sm_scale:g}")
        return ", ".join([shape, *extras])

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.sm_scale is None else self.sm_scale


#: The learner's stub picks BLOCK_M = 64 and BLOCK_N = 32 in the interpreter (128 and 64 on a GPU):
#: these lengths are 1, under one block, and one or two past a block boundary.
MAIN = [
    Case(1, 1, 1, 16), Case(1, 1, 1, 16, causal=True),
    Case(2, 3, 17, 32), Case(2, 3, 17, 32, causal=True),
    Case(1, 2, 97, 64), Case(1, 2, 97, 64, causal=True),
    Case(2, 1, 130, 128), Case(2, 1, 130, 128, causal=True),
    Case(1, 2, 65, 16, causal=True),
]
SCALED = [Case(1, 2, 50, 64, causal=True, sm_scale=0.3), Case(2, 1, 33, 32, sm_scale=0.05)]
CROSS = [Case(1, 2, 40, 32, S_k=97), Case(2, 1, 33, 16, S_k=1)]
#: key_lens = 0 for one sequence (its rows must be exact zeros), a short one, a full one.
PADDED = [Case(3, 2, 70, 32, key_lens=(0, 33, 70)),
          Case(3, 2, 70, 64, causal=True, key_lens=(70, 0, 1), lens_dtype=torch.int32)]
STRIDED = [Case(2, 2, 40, 32, causal=True, layout="bshd")]
GARBAGE = [Case(2, 2, 80, 32, key_lens=(37, 61)), Case(2, 2, 80, 32, causal=True, key_lens=(61, 37))]
#: Long sequences: on a GPU the lengths the issue names; in the interpreter one 257-long head.
LONG = {
    "gpu": [Case(2, 4, 1000, 64), Case(2, 4, 1000, 128, causal=True), Case(1, 2, 4000, 64, causal=True),
            Case(1, 2, 4000, 128), Case(2, 2, 4000, 32, causal=True, key_lens=(4000, 2500))],
    "interpreter": [Case(1, 1, 257, 64, causal=True)],
}
BF16 = [Case(2, 3, 17, 32, causal=True), Case(1, 2, 130, 128), Case(3, 2, 70, 64, causal=True, key_lens=(70, 0, 1)),
        Case(1, 2, 1000, 64, causal=True), Case(1, 2, 1000, 16)]
#: In the interpreter (about 1 ms per program and loop step) the two short cases run, causal and
#: padded; the longer ones are checked on a GPU.
BF16_INTERPRETER_MAX_S = 70


# --- inputs and references ---------------------------------------------------------------

def make_inputs(case: Case, dtype: torch.dtype, rng: torch.Generator, device: str):
    """q, k, v (B, H, S, D) and key_lens (or None), drawn on the CPU so a seed replays anywhere."""
    def draw(S):
        if case.layout == "bshd":
            return checks.randn((case.B, S, case.H, case.D), dtype, rng, device).transpose(1, 2)
        return checks.randn((case.B, case.H, S, case.D), dtype, rng, device)

    q, k, v = draw(case.S), draw(case.seq_k), draw(case.seq_k)
    key_lens = None
    if case.key_lens is not None:
        key_lens = torch.tensor(case.key_lens, dtype=case.lens_dtype, device=device)
    return q, k, v, key_lens


def visible(S_q: int, S_k: int, B: int, *, causal: bool, key_lens, device, strict: bool = False) -> torch.Tensor:
    """(B, 1, S_q, S_k) bool: which keys each query row sees."""
    rows = torch.arange(S_q, device=device)[:, None]
    cols = torch.arange(S_k, device=device)[None, :]
    mask = torch.ones(S_q, S_k, dtype=torch.bool, device=device)
    if causal:
        mask = (cols < rows) if strict else (cols <= rows)
    mask = mask.expand(B, 1, S_q, S_k)
    if key_lens is not None:
        lens = torch.as_tensor(key_lens, device=device).reshape(B, 1, 1, 1)
        mask = mask & (cols.reshape(1, 1, 1, S_k) < lens)
    return mask


def reference(q, k, v, *, scale: float, causal: bool, key_lens=None, strict: bool = False,
              normalize: bool = True) -> torch.Tensor:
    """Attention in float64, one batch element at a time (S×S in float64 is large at S = 4000).

    Rows that see no key are zeros. ``strict`` (j < i) and ``normalize=False`` (no division by the
    sum) exist only to recognise those mistakes.
    """
    B, H, S_q, _ = q.shape
    S_k = k.shape[2]
    out = torch.empty(q.shape, dtype=torch.float64, device=q.device)
    mask = visible(S_q, S_k, B, causal=causal, key_lens=key_lens, device=q.device, strict=strict)
    for b in range(B):
        s = (q[b].double() @ k[b].double().transpose(-1, -2)) * scale
        s = s.masked_fill(~mask[b], float("-inf"))
        m = s.amax(-1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        p = torch.exp(s - m)
        if normalize:
            total = p.sum(-1, keepdim=True)
            p = p / torch.where(total > 0, total, torch.ones_like(total))
        out[b] = p @ v[b].double()
    return out


def _close(out: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> bool:
    try:
        expect_close(out, want, dtype=dtype, tolerance=TOLERANCES[dtype], poisoned=False)
    except GradeFailure:
        return False
    return True


# --- diagnosis: which known mistake does the output match? --------------------------------

def _scale_label(case: Case) -> str:
    return "1/sqrt(D)" if case.sm_scale is None else f"sm_scale = {case.sm_scale:g}"


def _wrong_references(case: Case, q, k, v, key_lens):
    """(message, float64 output) for each mistake the spec can name."""
    D = case.D
    expected = _scale_label(case)
    scales = []
    if case.sm_scale is None:
        scales += [("1/D", 1.0 / D), ("1 (no scale at all)", 1.0), ("sqrt(D)", math.sqrt(D))]
    else:
        scales += [("1/sqrt(D) (the sm_scale argument was ignored)", 1.0 / math.sqrt(D)), ("1 (no scale at all)", 1.0)]
    scales += [(f"{expected} · ln(2) (exp2 without the log2(e) factor)", case.scale * math.log(2)),
               (f"{expected} · log2(e) (log2(e) folded in, but exp used instead of exp2)", case.scale * LOG2E),
               (f"({expected})² (the scale applied twice)", case.scale ** 2)]
    common = dict(causal=case.causal, key_lens=key_lens)
    for label, scale in scales:
        if not math.isclose(scale, case.scale, rel_tol=1e-6):
            yield f"scores were scaled by {label}, expected {expected}", reference(q, k, v, scale=scale, **common)
    if case.causal:
        yield ("the causal mask is missing: query i attended to keys j > i",
               reference(q, k, v, scale=case.scale, causal=False, key_lens=key_lens))
        yield ("the causal mask hides the diagonal: query i sees keys j <= i, itself included",
               reference(q, k, v, scale=case.scale, causal=True, key_lens=key_lens, strict=True))
    elif case.S == case.seq_k:
        yield ("a causal mask was applied although causal=False",
               reference(q, k, v, scale=case.scale, causal=True, key_lens=key_lens))
    if key_lens is not None:
        yield ("keys past key_lens[b] were not masked: sequence b has only its first key_lens[b] keys",
               reference(q, k, v, scale=case.scale, causal=case.causal, key_lens=None))
        yield ("one key too many per sequence: keys 0 .. key_lens[b] - 1 are valid (the mask used <= instead of <)",
               reference(q, k, v, scale=case.scale, causal=case.causal, key_lens=key_lens + 1))
    yield ("the output was not divided by the running sum ℓ at the end",
           reference(q, k, v, scale=case.scale, normalize=False, **common))


def rising_scores(S: int, D: int, dtype: torch.dtype, rng: torch.Generator, device: str, *, falling: bool = False):
    """q, k, v whose scores rise (or fall) along the keys for every query row.

    q > 0 elementwise and key j = c_j · (1, ..., 1), so score(i, j) = scale · c_j · sum(q_i): with
    c rising, each new key block raises every row's running max, and the online softmax must
    rescale ℓ and acc each time; with c falling the max never changes after the first block and
    a kernel that forgets to rescale is still right.
    """
    q = (torch.randn((1, 1, S, D), generator=rng).abs() * 0.5 + 0.5).to(dtype).to(device)
    c = torch.linspace(-1.0, 1.0, S)
    if falling:
        c = c.flip(0)
    k = c.reshape(1, 1, S, 1).expand(1, 1, S, D).contiguous().to(dtype).to(device)
    v = checks.randn((1, 1, S, D), dtype, rng, device)
    return q, k, v


RESCALE_S, RESCALE_D = 300, 16


_RESCALING: dict[tuple[str, torch.dtype], str | None] = {}  # one probe per learner function and dtype


def _rescaling_mistake(fn, dtype: torch.dtype, rng: torch.Generator, device: str) -> str | None:
    """Run the learner on rising and falling scores: right when falling, wrong when rising = no rescale."""
    key = (getattr(fn, "__name__", str(id(fn))), dtype)  # one learner file per judge
    if key not in _RESCALING:
        _RESCALING[key] = _probe_rescaling(fn, dtype, rng, device)
    return _RESCALING[key]


def _probe_rescaling(fn, dtype: torch.dtype, rng: torch.Generator, device: str) -> str | None:
    results = {}
    for falling in (True, False):
        q, k, v = rising_scores(RESCALE_S, RESCALE_D, dtype, rng, device, falling=falling)
        try:
            out = fn(q, k, v, causal=False, key_lens=None, sm_scale=None)
        except Exception:
            return None
        results[falling] = _close(out, reference(q, k, v, scale=1 / math.sqrt(RESCALE_D), causal=False), dtype)
    if results[True] and not results[False]:
        return ("the running sum/accumulator was not rescaled when the max changed: on scores that fall along "
                "the keys (the max never changes after the first block) your output is right, on scores that "
                "rise (a new max in every block) it is wrong. When m grows to m_new, multiply ℓ and acc by "
                "exp(m - m_new) before adding the new block")
    return None


def _check_empty_rows(out: torch.Tensor, key_lens, case: Case) -> None:
    """Rows of a sequence with key_lens[b] = 0 see no key: they must hold exact zeros."""
    if key_lens is None:
        return
    for b, n in enumerate(torch.as_tensor(key_lens).tolist()):
        if n > 0:
            continue
        rows = out[b].detach()
        if bool(guards.is_poison(rows).any()):
            return  # expect_close names unwritten elements
        if bool(torch.isnan(rows).any()):
            raise GradeFailure(
                f"rows with no valid key must be zeros, not NaN: sequence {b} has key_lens[{b}] = 0 "
                f"({case.describe()}), so every score is masked, the running max stays -inf and ℓ = 0; "
                f"your out[{b}] holds {int(torch.isnan(rows).sum())} NaN. Guard the end: where ℓ = 0, "
                "divide by 1 (acc is 0 there), and never compute exp(-inf - (-inf))")
        nonzero = rows != 0
        if bool(nonzero.any()):
            where = nonzero.reshape(-1).nonzero()[0].item()
            value = rows.reshape(-1)[where].item()
            raise GradeFailure(
                f"rows with no valid key must be exact zeros: sequence {b} has key_lens[{b}] = 0 "
                f"({case.describe()}) but {int(nonzero.sum())} elements of out[{b}] are not 0 (the first is "
                f"{value:.6g}). A finite mask value (-1e9, -65504) instead of -inf lets every masked key back "
                "in with equal weight when all of them are masked: mask with -inf and return zeros where ℓ = 0")


def _future_leak(fn, case: Case, q, k, v, key_lens, dtype: torch.dtype) -> str | None:
    """Causal only: change the keys and values from position S/2 on; rows before S/2 must not move."""
    split = case.S // 2
    if not case.causal or case.S != case.seq_k or split < 1:
        return None
    generator = torch.Generator().manual_seed(split)
    k2, v2 = k.clone(), v.clone()
    k2[:, :, split:] = torch.randn(k2[:, :, split:].shape, generator=generator).to(dtype).to(k.device)
    v2[:, :, split:] = torch.randn(v2[:, :, split:].shape, generator=generator).to(dtype).to(v.device)
    kwargs = {"causal": True, "key_lens": key_lens, "sm_scale": case.sm_scale}
    try:
        first = fn(q, k, v, **kwargs)
        second = fn(q, k2, v2, **kwargs)
    except Exception:
        return None
    if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor) or first.shape != q.shape:
        return None
    if _close(second[:, :, :split].nan_to_num(0.0), first[:, :, :split].double().nan_to_num(0.0), dtype):
        return None
    return (f"query i attended to keys j > i: with causal=True, rows 0 to {split - 1} changed when only the keys "
            f"and values from position {split} on changed. The causal mask must hide every key j > i, inside "
            "the blocks that straddle the diagonal too")


def _verify(case: Case, dtype: torch.dtype, q, k, v, key_lens, *, fn=None, rng=None, device="cpu", note: str = ""):
    """The `expected` callable for run_case: the comparison, then a diagnosis, then exact zeros.

    On a mismatch (or NaN) the output is compared with references that make one known mistake
    each; then rows with no valid key are checked (NaN, or not zero); then, at the cost of more
    calls of the learner's function, the online-softmax rescaling and the causal mask are probed.
    """
    want = reference(q, k, v, scale=case.scale, causal=case.causal, key_lens=key_lens)

    def check(out):
        try:
            expect_close(out, want, dtype=dtype, tolerance=TOLERANCES[dtype])
        except GradeFailure as failure:
            text = str(failure)
            if "differ from the float64 reference" not in text and "are NaN where the answer is not" not in text:
                raise  # unwritten, infinite, wrong shape or dtype: that message is already precise
            finite = out.detach().nan_to_num(0.0)
            for message, wrong in _wrong_references(case, q, k, v, key_lens):
                if _close(finite, wrong, dtype):
                    raise GradeFailure(f"{message} ({case.describe()}): your output matches attention computed "
                                       f"that way. {failure}") from None
            _check_empty_rows(out, key_lens, case)
            if fn is not None and rng is not None:
                named = _rescaling_mistake(fn, dtype, rng, device) or _future_leak(fn, case, q, k, v, key_lens, dtype)
                if named:
                    raise GradeFailure(f"{named} ({case.describe()}). {failure}") from None
            raise GradeFailure(f"{case.describe()}{note}: {failure}") from None
        _check_empty_rows(out, key_lens, case)  # within tolerance is not enough there: exact zeros

    return check


def check_case(fn, case: Case, dtype: torch.dtype, rng: torch.Generator, device: str, *, note: str = "",
               inputs=None):
    q, k, v, key_lens = inputs if inputs is not None else make_inputs(case, dtype, rng, device)
    kwargs = {"causal": case.causal, "key_lens": key_lens, "sm_scale": case.sm_scale}
    return checks.run_case(fn, {"q": q, "k": k, "v": v},
                           _verify(case, dtype, q, k, v, key_lens, fn=fn, rng=rng, device=device, note=note),
                           dtype=dtype, kwargs=kwargs)


def _ids(cases):
    return [c.id for c in cases]


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 7`: causal attention over two sequences of S = 130 (D = 16, fp16), the second
    padded after key_lens = 45 keys (``--size S,D,KEY_LEN``).

    130 is two blocks of 64 query rows and a ragged third (and four blocks of 32 keys and a
    ragged fifth): the map of k shows which key blocks each query block read, the causal
    staircase in the first sequence and the padding, never to be read, in the second."""
    S, D, key_len = parse_size(size, (130, 16, 45), ("S (sequence length)", "D (head size: 16, 32, 64 or 128)",
                                                     "the second sequence's key_lens"), "130,16,45")
    if D not in HEAD_DIMS:
        raise ValueError(f"--size: D must be one of {', '.join(str(d) for d in HEAD_DIMS)}, not {D}")
    case = Case(2, 1, S, D, causal=True, key_lens=(S, min(key_len, S)))
    q, k, v, key_lens = make_inputs(case, torch.float16, torch.Generator().manual_seed(0), "cpu")
    return ShowCase({"q": q, "k": k, "v": v}, {"causal": True, "key_lens": key_lens, "sm_scale": None},
                    label=f"B 2, H 1, S {S}, D {D}, fp16, causal, key_lens [{S}, {min(key_len, S)}]")


# --- the checks --------------------------------------------------------------------------

@pytest.mark.parametrize("case", MAIN, ids=_ids(MAIN))
def test_matches_reference(learner_function, case, rng, device):
    check_case(learner_function, case, torch.float16, rng, device)


@pytest.mark.parametrize("case", SCALED, ids=_ids(SCALED))
def test_sm_scale(learner_function, case, rng, device):
    check_case(learner_function, case, torch.float16, rng, device)


@pytest.mark.parametrize("case", CROSS, ids=_ids(CROSS))
def test_cross_attention(learner_function, case, rng, device):
    """S_q != S_k (not causal): queries from one sequence, keys and values from another."""
    check_case(learner_function, case, torch.float16, rng, device,
               note=f" (S_q = {case.S} queries, S_k = {case.seq_k} keys: k and v have their own length)")


@pytest.mark.parametrize("case", PADDED, ids=_ids(PADDED))
def test_key_lens(learner_function, case, rng, device):
    check_case(learner_function, case, torch.float16, rng, device)


@pytest.mark.parametrize("case", STRIDED, ids=_ids(STRIDED))
def test_strided_inputs(learner_function, case, rng, device):
    check_case(learner_function, case, torch.float16, rng, device,
               note=" — q, k and v here are (B, S, H, D) tensors seen as (B, H, S, D), so their strides are not "
                    "those of a contiguous tensor: index every tensor with its own strides")


@pytest.mark.parametrize("case", GARBAGE, ids=_ids(GARBAGE))
def test_masked_keys_ignored(learner_function, case, rng, device):
    """Keys past key_lens[b] hold huge values (an unused cache slot holds anything): no effect allowed.

    First the same case with ordinary padding (a plain masking bug fails there, with its own
    message); then with the padding keys at 200 and values at 1000, where a kernel that takes
    the running max before masking sees e^(s - m) underflow to 0 for every real key.
    """
    q, k, v, key_lens = make_inputs(case, torch.float16, rng, device)
    q = q.abs()  # every row's score with the padding keys is then large and positive
    check_case(learner_function, case, torch.float16, rng, device, inputs=(q, k, v, key_lens))
    k, v = k.clone(), v.clone()
    for b, n in enumerate(case.key_lens):
        k[b, :, n:] = 200.0
        v[b, :, n:] = 1000.0
    try:
        check_case(learner_function, case, torch.float16, rng, device, inputs=(q, k, v, key_lens))
    except GradeFailure as failure:
        raise GradeFailure(
            f"masked keys changed your answer ({case.describe()}): with ordinary values past key_lens[b] your "
            "output is right, but here those padding keys hold 200 and their values 1000 (an unused cache slot "
            "can hold anything) and your output moved. A masked key must take no part in anything: set its "
            "score to -inf before tl.max. If the running max sees a large masked score, exp(s - m) underflows "
            f"to 0 for every real key (was the mask applied after the max?). "
            f"{str(failure).removeprefix(case.describe() + ': ')}", kind=failure.kind) from None


def test_running_max_changes(learner_function, rng, device):
    """Scores rise along the keys: the running max changes in every block, so ℓ and acc must be rescaled."""
    q, k, v = rising_scores(RESCALE_S, RESCALE_D, torch.float16, rng, device)
    case = Case(1, 1, RESCALE_S, RESCALE_D)
    want = reference(q, k, v, scale=case.scale, causal=False)

    def check(out):
        try:
            expect_close(out, want, dtype=torch.float16, tolerance=TOLERANCES[torch.float16])
        except GradeFailure as failure:
            if "differ from the float64 reference" not in str(failure):
                raise
            named = _rescaling_mistake(learner_function, torch.float16, rng, device)
            if named is None:
                named = f"scores that rise along the keys (a new running max in every key block), {case.describe()}"
            raise GradeFailure(f"{named}. {failure}") from None

    checks.run_case(learner_function, {"q": q, "k": k, "v": v}, check, dtype=torch.float16,
                    kwargs={"causal": False, "key_lens": None, "sm_scale": None})


@pytest.mark.parametrize("index", range(len(LONG["gpu"])), ids=[f"long{i}" for i in range(len(LONG["gpu"]))])
def test_long_sequences(learner_function, index, rng, device, mode):
    cases = LONG[mode]
    if index >= len(cases):
        pytest.skip("long sequences (S = 1000 and 4000) are checked on a GPU only; the interpreter runs one "
                    "257-long sequence (long0)")
    check_case(learner_function, cases[index], torch.float16, rng, device)


@pytest.mark.parametrize("case", BF16, ids=_ids(BF16))
def test_bf16(learner_function, case, rng, device, mode):
    if mode != "gpu":
        if not checks.bf16_trustworthy(learner_function):
            pytest.skip(interpreter_fixes.BF16_ON_GPU_ONLY)
        if case.S > BF16_INTERPRETER_MAX_S:
            pytest.skip(f"bf16 at S = {case.S} is checked on a GPU only; the interpreter runs the short bf16 cases")
    check_case(learner_function, case, torch.bfloat16, rng, device)


# --- no S×S intermediate -----------------------------------------------------------------

MEMORY = {"interpreter": Case(1, 1, 513, 16, causal=True), "gpu": Case(1, 4, 2048, 64, causal=True)}


def _score_matrix_message(case: Case, allocated: int, budget: int, largest: tuple | None) -> str:
    scores = case.B * case.H * case.S * case.seq_k * 2
    what = f"a {list(largest)} tensor" if largest else f"{allocated / MiB:.2f} MiB at its peak"
    return (f"materialized an S×S matrix? Your call allocated {what} ({allocated / MiB:.2f} MiB in all) for "
            f"{case.describe()}, more than twice the inputs ({budget / MiB:.2f} MiB); the scores of this shape "
            f"would be {scores / MiB:.2f} MiB in fp16. FlashAttention keeps each tile of scores in registers and "
            "never writes it to memory: only `out` (and, at most, a few floats per query row) may be allocated")


def test_no_score_matrix(learner_function, rng, device, mode):
    """Memory during the call stays within twice the inputs: no S × S (or S × block) scratch."""
    case = MEMORY[mode]
    q, k, v, _ = make_inputs(case, torch.float16, rng, device)
    inputs = 3 * q.numel() * q.element_size()
    budget = 2 * inputs
    kwargs = {"causal": case.causal, "key_lens": None, "sm_scale": None}
    if device == "cuda":
        learner_function(q, k, v, **kwargs)  # compiles (and autotunes) outside the measurement
        outcome = learner_function.call(q, k, v, memory=True, **kwargs)
        allocated, largest = int((outcome.memory or {}).get("peak_bytes", 0)), None
    else:
        outcome = learner_function.call(q, k, v, **kwargs)
        sizes = [(g.view.numel() * g.view.element_size(), tuple(g.view.shape)) for g in outcome.outputs]
        allocated = sum(size for size, _ in sizes)
        largest = max(sizes)[1] if sizes else None
    out = outcome.result
    checks.require(allocated <= budget, _score_matrix_message(case, allocated, budget, largest))
    checks.require(isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(q.shape),
                   f"`out` should have the shape of q, {tuple(q.shape)}")
    try:
        expect_close(out, reference(q, k, v, scale=case.scale, causal=case.causal), dtype=torch.float16,
                     tolerance=TOLERANCES[torch.float16], poisoned=False)
    except GradeFailure as failure:
        raise GradeFailure(f"{case.describe()}: {failure}", kind=failure.kind) from None


# --- performance: TFLOP/s against SDPA ---------------------------------------------------

#: One prefill shape, fp16 (every CUDA GPU with tensor cores runs it), causal and not. The
#: verdict is the weaker of the two: a kernel that computes the blocks above the diagonal and
#: masks them loses half its causal throughput, and that is the lesson.
PERF_SHAPE = (4, 16, 4096, 64)


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed prefill on ``device``: PERF_SHAPE, with fewer sequences where the judge's input sets and
    SDPA's (q, k, v, the output and the float32 each is drawn in) would not fit in half the free memory.
    Graded in TFLOP/s against SDPA, so the cache does not enter."""
    from grader.judge import clock

    B, H, S, D = PERF_SHAPE
    per_sequence = H * S * D * 2 * 4 + H * S * D * 4  # q, k, v and an output slot in fp16, one float32 draw
    fits = int(free_bytes * 0.5) // (2 * clock.SETS * per_sequence)  # the learner's sets and SDPA's
    B = max(1, min(B, fits))
    return plan.PerformanceInput(label=f"B {B}, H {H}, S {S}, D {D}, fp16", dtype="fp16",
                                 data_bytes=4 * B * H * S * D * 2, held_bytes=2 * clock.SETS * B * per_sequence,
                                 sizes={"B": B, "H": H, "S": S, "D": D}, cache_bound=False)


def test_performance(exercise, learner_function, mode, check):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    import torch.nn.functional as F

    from grader.judge import clock

    card, timed = plan.here(__file__)
    B, H, S, D = (timed.sizes[k] for k in "BHSD")
    label = timed.label
    results = []
    for causal in (False, True):
        def make_set(generator, causal=causal):
            q, k, v = (torch.randn((B, H, S, D), device="cuda", generator=generator).to(torch.float16) for _ in range(3))
            return [q, k, v], {"causal": causal}

        def verify(out, args, kwargs):
            q, k, v = args
            want = F.scaled_dot_product_attention(q, k, v, is_causal=kwargs["causal"]).double()
            try:  # SDPA is not exact either: a loose check that catches a wrong answer, not rounding
                expect_close(out, want, dtype=torch.float16, tolerance=Tolerance(rtol=2e-2, atol=1e-2), poisoned=False)
            except GradeFailure as failure:
                raise GradeFailure(f"at the benchmark size ({label}, {'causal' if kwargs['causal'] else 'not causal'}) "
                                   f"your output differs from scaled_dot_product_attention: {failure}") from None

        def sdpa(q, k, v, causal):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        # In turns, not one after the other: SDPA's speed moves with the card's power state. Both by the
        # same clock: the judge's, around calls on several fresh input sets.
        like = torch.empty((B, H, S, D), dtype=torch.float16, device="cuda")
        ours_ms, sdpa_ms = [], []
        dobench = None
        for _ in range(2):
            timed = clock.time_learner(learner_function, make_set, verify, output_like=like, rounds=3)
            ours_ms.append(timed.ms)
            dobench = dobench or timed.dobench_ms
            sdpa_ms.append(clock.time_local(sdpa, make_set, rounds=3).ms)
        ms, sdpa_best = min(ours_ms), min(sdpa_ms)
        work = flops(B, H, S, S, D, causal)
        tflops, sdpa_tflops = work / (ms * 1e-3) / 1e12, work / (sdpa_best * 1e-3) / 1e12
        results.append({"causal": causal, "ms": round(ms, 5), "sdpa_ms": round(sdpa_best, 5),
                        "tflops": round(tflops, 1), "sdpa_tflops": round(sdpa_tflops, 1),
                        "ratio_to_sdpa": round(tflops / sdpa_tflops, 4),
                        "dobench_ms": None if dobench is None else round(dobench, 5)})
    worst = min(results, key=lambda r: r["ratio_to_sdpa"])
    floor = exercise.floor
    ratio = worst["ratio_to_sdpa"]
    which = "causal" if worst["causal"] else "not causal"
    passed = ratio >= floor
    verdict = (f"{ratio:.0%} of SDPA's throughput ({which}, the weaker of the two; floor {floor:.0%})" if passed else
               f"{ratio:.0%} of SDPA's throughput ({which}), below the floor of {floor:.0%}"
               + (": does your causal kernel stop at the diagonal, or compute every block and mask it?"
                  if worst["causal"] else ""))
    lines = [f"attention at {label} on this {card.name} (the grader's clock around calls on fresh inputs, "
             "timed in turns with SDPA):"]
    for r in results:
        lines.append(f"  {'causal    ' if r['causal'] else 'not causal'}  {r['tflops']:5.0f} TFLOP/s "
                     f"({r['ms'] * 1000:.0f} µs); scaled_dot_product_attention {r['sdpa_tflops']:.0f} TFLOP/s "
                     f"({r['sdpa_ms'] * 1000:.0f} µs): {r['ratio_to_sdpa']:.0%}")
    from grader.wire.results import PerformanceRecord

    check.performance = PerformanceRecord(
        passed=passed, verdict=verdict, fraction=ratio, floor=floor, unit="tflops", ms=worst["ms"],
        input=f"{label}, {which}", gpu=card.name, driver=card.driver, lines=lines,
        details={"tflops": worst["tflops"], "sdpa_tflops": worst["sdpa_tflops"], "ratio_to_sdpa": ratio,
                 "cases": results})
    if not passed:
        raise GradeFailure(f"performance: {verdict} ({worst['tflops']:.0f} against {worst['sdpa_tflops']:.0f} "
                           f"TFLOP/s on {label})")
