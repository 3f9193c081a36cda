"""Checks for exercise 8, decode over a paged KV cache:
``decode_attention(q, k_cache, v_cache, block_table, cache_lens, sm_scale=None) -> Tensor``.

q is (B, H_q, D), one new token per sequence; k_cache and v_cache are (num_pages, page_size, H_kv, D)
pools shared by every sequence, fp16 or bf16; block_table (B, max_pages) int32 lists each sequence's
pages in order; cache_lens (B,) int32 its valid tokens (0 allowed: zeros out). Query head h reads KV
head h // (H_q / H_kv). D in {64, 128}, page_size in {16, 64}. Returns (B, H_q, D).

Every case is built the way a server's cache looks: pages shuffled through the pool, the pool's
free pages and the slots of each last page past ``cache_lens[b]`` full of NaN, and the block table's
entries past a sequence's pages pointing at those NaN pages. A kernel that reads a single token past
``cache_lens[b]`` gets NaN into its answer, and the spec reruns it with those slots made finite to say
which mistake it was (the last page read whole, or pages past the end).

The learner also writes, checked on hand cases without a GPU:

    num_splits(max_cache_len, num_seqs, num_kv_heads, num_sms, *, tile_tokens, programs_per_sm)
        max(1, min((programs_per_sm * num_sms) // (num_seqs * num_kv_heads), cdiv(max_cache_len, tile_tokens)))
    minimum_bytes(cache_lens, num_pages, page_size, num_q_heads, num_kv_heads, head_dim, element_size)
        (2 · sum(cache_lens) · H_kv · D + 2 · B · H_q · D) · element_size
    per_query_head_bytes(...)        the same with H_q in place of H_kv: K and V read once per query head

Interpreter limits this spec works around, each said in a message:

* ``tl.dot`` on bf16 operands multiplies the raw bits in Triton's interpreter
  (triton-lang/triton#11584): bf16 is checked on a GPU only, and `test_bf16` says so.
* ~1 ms of Python per program and per loop step: interpreter cases stay under 330 tokens except the
  scores-in-memory case (2500 tokens of one KV head).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.wire import guards
from grader.judge.compare import DEFAULT_TOLERANCES, Tolerance, expect_close
from grader.wire.failures import GradeFailure


HEAD_DIMS = (64, 128)
PAGE_SIZES = (16, 64)
LOG2E = 1.4426950408889634
#: The stand-in SM count of the interpreter (the stub's INTERPRETER_NUM_SMS; do not change it there).
INTERPRETER_NUM_SMS = 4

BF16_ON_GPU_ONLY = ("bf16: checked on a GPU only: Triton's interpreter multiplies bf16 tl.dot operands as "
                    "raw bits (triton-lang/triton#11584)")

#: The kernel computes scores and the accumulator in float32 and rounds p to the input dtype before
#: P·V (as exercise 7); the default tolerances hold (the solution used under a third of them).
TOLERANCES = {torch.float16: DEFAULT_TOLERANCES[torch.float16], torch.bfloat16: DEFAULT_TOLERANCES[torch.bfloat16]}

NUM_SPLITS_SIGNATURE = "num_splits(max_cache_len, num_seqs, num_kv_heads, num_sms, *, tile_tokens, programs_per_sm)"
BYTES_SIGNATURE = ("(cache_lens, num_pages, page_size, num_q_heads, num_kv_heads, head_dim, element_size)")


# --- the byte model ---------------------------------------------------------------------------

def minimum_bytes(cache_lens, num_pages: int, page_size: int, num_q_heads: int, num_kv_heads: int, head_dim: int,
                  element_size: int) -> int:
    """Fewest bytes one decode step moves: the K and V rows of valid tokens once, q read, out written.

    ``cache_lens`` lists each sequence's length. The pool's size and its page size do not enter: a step
    reads only the tokens below ``cache_lens[b]``, whatever else the pool holds. The block table (4 bytes
    per page, against 2 · page_size · H_kv · D elements of K and V per page) is left out.
    """
    tokens = sum(int(n) for n in cache_lens)
    return (2 * tokens * num_kv_heads * head_dim + 2 * len(cache_lens) * num_q_heads * head_dim) * element_size


def per_query_head_bytes(cache_lens, num_pages: int, page_size: int, num_q_heads: int, num_kv_heads: int,
                         head_dim: int, element_size: int) -> int:
    """Bytes of one program per (sequence, query head): each query head reads its KV head's rows itself."""
    tokens = sum(int(n) for n in cache_lens)
    return (2 * tokens * num_q_heads * head_dim + 2 * len(cache_lens) * num_q_heads * head_dim) * element_size


def bench_arguments(shape: dict) -> tuple:
    """`grade bench 8`: a shape {B, S_k, H_q, H_kv, D, page_size} as minimum_bytes' arguments."""
    B, S = shape["B"], shape["S_k"]
    pages = B * -(-S // shape["page_size"])
    return ([S] * B, pages, shape["page_size"], shape["H_q"], shape["H_kv"], shape["D"])


def _byte_mistakes(lens, num_pages, page_size, H_q, H_kv, D, s) -> dict[str, list[tuple[int, str]]]:
    """Counts that come from a known mistake, with the sentence that names it."""
    B = len(lens)
    tokens = sum(lens)
    whole_pages = sum(-(-n // page_size) * page_size for n in lens)
    qo = 2 * B * H_q * D
    return {
        "minimum_bytes": [
            (2 * tokens * H_kv * D + qo, "that counts elements, not bytes: multiply by element_size"),
            ((tokens * H_kv * D + qo) * s, "that counts K only: V is read as well, the same number of rows"),
            (2 * tokens * H_kv * D * s, "q and out are missing: each is B · H_q · D elements, read or written once"),
            ((2 * tokens * H_q * D + qo) * s, "that counts K and V once per query head: the G = H_q / H_kv query "
                                             "heads of a group share one KV head, and a kernel that keeps them in "
                                             "one program reads its rows once"),
            ((2 * num_pages * page_size * H_kv * D + qo) * s,
             "that counts the whole pool (num_pages): the pool holds every sequence's pages and free ones; one "
             "decode step reads only the tokens below cache_lens[b] of these sequences"),
            ((2 * whole_pages * H_kv * D + qo) * s,
             "that counts whole pages: the slots of each sequence's last page past cache_lens[b] are not part of "
             "the answer and need not be read"),
            ((2 * B * max(lens) * H_kv * D + qo) * s,
             "that counts every sequence as long as the longest: each one reads only its own cache_lens[b] tokens"),
        ],
        "per_query_head_bytes": [
            (2 * tokens * H_q * D + qo, "that counts elements, not bytes: multiply by element_size"),
            ((2 * tokens * H_kv * D + qo) * s,
             "that is the minimum: a schedule with one program per (sequence, query head) reads its KV head's "
             "rows once for each of the G query heads that share them, H_q times in all, not H_kv"),
            ((tokens * H_q * D + qo) * s, "that counts K only: V is read as well, the same number of rows"),
            (2 * tokens * H_q * D * s, "q and out are missing: each is B · H_q · D elements, read or written once"),
        ],
    }


def diagnose_byte_model(name: str, args: tuple, value) -> str | None:
    """None when ``value`` is the right count for ``name``; otherwise the sentence the learner reads."""
    lens, num_pages, page_size, H_q, H_kv, D, s = args
    right = (minimum_bytes if name == "minimum_bytes" else per_query_head_bytes)(*args)
    call = f"`{name}({list(lens)}, {num_pages}, {page_size}, {H_q}, {H_kv}, {D}, {s})`"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{call} returned {value!r} ({type(value).__name__}); it must return a number of bytes (an int)"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"{call} returned {value!r}; a count of bytes is a whole number"
    if int(value) == right:
        return None
    message = f"{call} returned {int(value):,} but {'one decode step moves at least' if name == 'minimum_bytes' else 'one program per (sequence, query head) moves'} {right:,} bytes"
    mistakes = _byte_mistakes(list(lens), num_pages, page_size, H_q, H_kv, D, s)[name]
    named = [reason for count, reason in mistakes if count == int(value) and count != right]
    if len(named) == 1:
        return f"{message}: {named[0]}"
    if name == "minimum_bytes":
        return (f"{message}: K and V rows of the valid tokens (sum(cache_lens) · H_kv · D elements each), plus q "
                "and out (B · H_q · D each), times element_size")
    return (f"{message}: K and V rows of the valid tokens read once per query head (sum(cache_lens) · H_q · D "
            "elements each), plus q and out (B · H_q · D each), times element_size")


# (cache_lens, num_pages, page_size, H_q, H_kv, D, element_size): each count differs from every mistake's.
BYTE_MODEL_CASES = [
    ([32768], 2048, 16, 32, 8, 128, 2),
    ([8192] * 8, 5000, 64, 32, 8, 128, 2),
    ([17, 1, 0, 130], 40, 16, 8, 2, 64, 2),
    ([100, 37], 12, 64, 4, 4, 64, 4),
    ([1], 3, 16, 16, 2, 128, 2),
]


# --- the split count --------------------------------------------------------------------------

#: (id, max_cache_len, num_seqs, num_kv_heads, num_sms, tile_tokens, programs_per_sm, expected, why)
NUM_SPLITS_CASES = [
    ("one_long_sequence", 32768, 1, 8, 132, 64, 2, 33,
     "one wave holds 2 x 132 = 264 programs; 8 (sequence, KV head) pairs leave room for 264 // 8 = 33 splits each"),
    ("eight_sequences", 8192, 8, 8, 132, 64, 2, 4,
     "264 // 64 = 4 splits: a fifth would make 320 programs, 56 of them in a second, nearly empty wave"),
    ("batch_fills_the_gpu", 4096, 64, 8, 132, 64, 2, 1,
     "512 (sequence, KV head) pairs already fill every SM: nothing to split, and no partials to merge"),
    ("short_sequence", 100, 1, 8, 132, 64, 2, 2,
     "100 tokens are only 2 tiles of 64: a split with no tile would do nothing"),
    ("empty_cache", 0, 1, 8, 132, 64, 2, 1,
     "at least one split, even for an empty cache: its program writes the zeros"),
    ("laptop_gpu", 16384, 1, 8, 20, 64, 2, 5, "a 20-SM laptop GPU: 40 // 8 = 5 splits"),
    ("rounds_down", 8192, 5, 8, 132, 32, 2, 6,
     "264 // 40 = 6.6, rounded down: 7 splits would make 280 programs, more than one wave"),
    ("four_per_sm", 32768, 2, 8, 132, 64, 4, 33, "4 x 132 = 528 programs per wave, 528 // 16 = 33 splits"),
]


def _learner_call(learner, name: str, signature: str, *args, **kwargs):
    fn = getattr(learner, name, None)
    if not callable(fn):
        raise GradeFailure(f"your file does not define `{name}`: keep the functions the stub defines ({signature})")
    try:
        return fn(*args, **kwargs)
    except GradeFailure as failure:  # the learner's exception, as a sentence and a class name
        said = str(failure)
        if failure.raised == "TypeError":
            raise GradeFailure(f"`{name}` {said.removeprefix('your code ')}. Keep the stub's signature: "
                               f"{signature}") from None
        if failure.raised == "ZeroDivisionError":
            raise GradeFailure(f"{said}. Called as {name}{args}: a count of tiles or programs can be 0 "
                               "(an empty cache); guard the division or round up with -(-a // b)") from None
        raise


@pytest.mark.parametrize("case", NUM_SPLITS_CASES, ids=lambda c: c[0])
def test_num_splits(learner, case):
    _id, max_len, seqs, kv_heads, sms, tile, per_sm, expected, why = case
    shown = (f"num_splits({max_len}, {seqs}, {kv_heads}, {sms}, tile_tokens={tile}, programs_per_sm={per_sm})")
    got = _learner_call(learner, "num_splits", NUM_SPLITS_SIGNATURE, max_len, seqs, kv_heads, sms,
                        tile_tokens=tile, programs_per_sm=per_sm)
    if isinstance(got, bool) or not isinstance(got, (int, float)) or (isinstance(got, float) and not got.is_integer()):
        raise GradeFailure(f"{shown} returned {got!r}, not a whole number of splits")
    if int(got) != expected:
        raise GradeFailure(f"{shown} returned {int(got)}, expected {expected}: {why}")


@pytest.fixture
def learner_byte_model(learner):
    found = {}
    for name in ("minimum_bytes", "per_query_head_bytes"):
        fn = getattr(learner, name, None)
        if not callable(fn):
            raise GradeFailure(f"your file does not define `{name}{BYTES_SIGNATURE}`: keep the functions the "
                               "stub defines")
        found[name] = fn
    return found


@pytest.mark.parametrize("case", BYTE_MODEL_CASES, ids=lambda c: f"B{len(c[0])}-S{max(c[0])}-G{c[3] // c[4]}")
def test_byte_model(learner_byte_model, case, check):
    args = tuple(case)
    lens, num_pages, page_size, H_q, H_kv, D, s = args
    low, high = minimum_bytes(*args), per_query_head_bytes(*args)
    check.extra["byte_model"] = {"cache_lens": list(lens), "H_q": H_q, "H_kv": H_kv, "D": D,
                                          "element_size": s, "minimum_bytes": low, "per_query_head_bytes": high,
                                          "ratio": round(high / low, 4)}
    for name in ("minimum_bytes", "per_query_head_bytes"):
        value = learner_byte_model[name](list(lens), num_pages, page_size, H_q, H_kv, D, s)
        message = diagnose_byte_model(name, args, value)
        checks.require(message is None, message or "")


# --- cases ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    B: int
    H_q: int
    H_kv: int
    D: int
    page_size: int
    lens: tuple[int, ...]
    sm_scale: float | None = None
    #: the first pages shared by every sequence longer than them (a common prompt prefix)
    shared_pages: int = 0
    #: "plain": contiguous tensors; "fused": q sliced from a (B, H_q + 2·H_kv, D) projection and K, V
    #: views of one (num_pages, 2, page_size, H_kv, D) pool, as servers lay them out
    layout: str = "plain"
    #: block-table columns past the longest sequence's pages
    table_slack: int = 1

    @property
    def group(self) -> int:
        return self.H_q // self.H_kv

    @property
    def id(self) -> str:
        parts = [f"B{self.B}", f"Hq{self.H_q}", f"Hkv{self.H_kv}", f"D{self.D}", f"page{self.page_size}",
                 "lens" + "_".join(str(n) for n in self.lens)]
        if self.sm_scale is not None:
            parts.append(f"scale{self.sm_scale:g}")
        if self.shared_pages:
            parts.append(f"shared{self.shared_pages}")
        if self.layout != "plain":
            parts.append(self.layout)
        if self.table_slack != 1:
            parts.append(f"table{self.table_slack}")
        return "-".join(parts)

    def describe(self) -> str:
        text = (f"B {self.B}, H_q {self.H_q}, H_kv {self.H_kv} (G = {self.group}), D {self.D}, page_size "
                f"{self.page_size}, cache_lens {list(self.lens)}")
        if self.sm_scale is not None:
            text += f", sm_scale {self.sm_scale:g}"
        if self.shared_pages:
            text += f", the first {self.shared_pages} page(s) shared by the sequences"
        if self.layout == "fused":
            text += ", q and the pools as views with gaps (a fused projection, one K/V pool)"
        return text

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.sm_scale is None else self.sm_scale


#: Lengths 0, 1, a page ± 1, multiples of the page and not; G = 1, 4 and 8; D 64 and 128; pages of 16
#: and 64. The learner's stub walks 32 tokens per step in the interpreter and the grader assumes 4 SMs
#: there, so the one- and two-sequence cases are split into several chunks and merged.
MAIN = [
    Case(1, 1, 1, 64, 16, (1,)),
    Case(2, 4, 1, 64, 16, (17, 15)),
    Case(3, 8, 1, 128, 64, (65, 63, 130)),
    Case(1, 8, 2, 64, 16, (200,)),
    Case(4, 4, 4, 128, 16, (16, 64, 0, 33)),
    Case(3, 8, 2, 128, 64, (0, 1, 129)),
    Case(4, 8, 2, 64, 16, (300, 3, 47, 160)),
    Case(2, 8, 1, 128, 16, (0, 150)),
]
SCALED = [Case(2, 4, 2, 64, 16, (40, 97), sm_scale=0.3)]
SHARED = [Case(3, 8, 2, 64, 16, (70, 33, 48), shared_pages=2)]
FUSED = [Case(2, 8, 2, 64, 16, (50, 81), layout="fused"), Case(2, 4, 4, 128, 64, (70, 5), layout="fused")]
#: Wide block tables (room for 128 tokens): the empty sequences are split, and the merge sees no partial.
EMPTY = [Case(2, 4, 1, 64, 16, (0, 0), table_slack=7)]
#: Long sequences: on a GPU the lengths of a real server; in the interpreter one 640-long sequence.
LONG = {
    "gpu": [Case(1, 32, 8, 128, 16, (32768,)), Case(4, 32, 8, 128, 64, (4000, 1, 0, 2500)),
            Case(8, 16, 2, 64, 16, (8192, 100, 3000, 1, 8191, 4097, 64, 65)),
            Case(64, 8, 8, 128, 64, tuple((37 * i * i + 11) % 4096 for i in range(64)))],
    "interpreter": [Case(1, 4, 1, 64, 64, (513,))],
}
BF16 = [Case(2, 4, 1, 64, 16, (17, 15)), Case(3, 8, 2, 128, 64, (0, 1, 129)), Case(1, 32, 8, 128, 16, (5000,)),
        Case(4, 8, 2, 64, 16, (300, 3, 47, 160))]


# --- inputs and references --------------------------------------------------------------------

def make_inputs(case: Case, dtype: torch.dtype, rng: torch.Generator, device: str):
    """(q, k_cache, v_cache, block_table, cache_lens), drawn on the CPU so a seed replays anywhere.

    Pages are shuffled through the pool; the pool's unused pages, the slots of each last page past its
    sequence's length, and the pages that block-table entries past a sequence's end point at, hold NaN.
    """
    ps = case.page_size
    used = [-(-n // ps) for n in case.lens]
    max_pages = max(used + [1]) + case.table_slack
    shared = case.shared_pages
    sharers = [b for b, u in enumerate(used) if shared and u > shared]
    own = [u - (shared if b in sharers else 0) for b, u in enumerate(used)]
    distinct = sum(own) + (shared if sharers else 0)
    guard_pages = 2
    num_pages = distinct + guard_pages
    order = torch.randperm(num_pages, generator=rng).tolist()
    shared_ids, rest = order[:shared if sharers else 0], order[shared if sharers else 0:]
    guard_ids = rest[len(rest) - guard_pages:]
    rest = rest[:len(rest) - guard_pages]
    table = torch.empty((case.B, max_pages), dtype=torch.int32)
    for b in range(case.B):
        pages = (shared_ids if b in sharers else []) + rest[:own[b]]
        rest = rest[own[b]:]
        fill = torch.randint(0, guard_pages, (max_pages,), generator=rng).tolist()
        row = pages + [guard_ids[i] for i in fill[len(pages):]]
        table[b] = torch.tensor(row, dtype=torch.int32)

    shape = (num_pages, ps, case.H_kv, case.D)
    k = torch.randn(shape, generator=rng)
    v = torch.randn(shape, generator=rng)
    for g in guard_ids:
        k[g] = float("nan")
        v[g] = float("nan")
    for b, n in enumerate(case.lens):
        if n % ps:
            last = int(table[b, used[b] - 1])
            k[last, n % ps:] = float("nan")
            v[last, n % ps:] = float("nan")
    q = torch.randn((case.B, case.H_q, case.D), generator=rng)
    lens = torch.tensor(case.lens, dtype=torch.int32)
    if case.layout == "fused":
        qkv = torch.randn((case.B, case.H_q + 2 * case.H_kv, case.D), generator=rng)
        qkv[:, :case.H_q] = q
        q = qkv[:, :case.H_q]
        pool = torch.full((num_pages, 2, ps, case.H_kv, case.D), float("nan"))
        pool[:, 0], pool[:, 1] = k, v
        pool = pool.to(dtype).to(device)
        return q.to(dtype).to(device), pool[:, 0], pool[:, 1], table.to(device), lens.to(device)
    return (q.to(dtype).to(device), k.to(dtype).to(device), v.to(dtype).to(device), table.to(device),
            lens.to(device))


def reference(q, k_cache, v_cache, block_table, cache_lens, *, scale: float, kv_head=None, lens=None,
              rows=None, normalize: bool = True) -> torch.Tensor:
    """Decode attention in float64, one sequence at a time.

    The keyword arguments exist to recognise mistakes: ``kv_head(h, H_q, H_kv)`` maps a query head to
    its KV head (right: ``h // G``); ``lens`` overrides how many tokens each sequence reads; ``rows(pages,
    slots, page_size)`` maps tokens to rows of the flattened pool (right: ``pages * page_size + slots``);
    ``normalize=False`` skips the division by the sum. A sequence with no token gives zeros.
    """
    B, H_q, D = q.shape
    num_pages, ps, H_kv, _ = k_cache.shape
    G = H_q // H_kv
    lens = [int(n) for n in (cache_lens.tolist() if lens is None else lens)]
    flat_k = k_cache.reshape(num_pages * ps, H_kv, D)
    flat_v = v_cache.reshape(num_pages * ps, H_kv, D)
    out = torch.zeros((B, H_q, D), dtype=torch.float64, device=q.device)
    heads = [kv_head(h, H_q, H_kv) if kv_head else h // G for h in range(H_q)]
    for b in range(B):
        n = lens[b]
        if n <= 0:
            continue
        t = torch.arange(n, device=q.device)
        pages = block_table[b, t // ps].long()
        where = rows(pages, t % ps, ps) if rows else pages * ps + t % ps
        where = where.clamp(0, num_pages * ps - 1)
        K = flat_k[where].double()  # (n, H_kv, D)
        V = flat_v[where].double()
        Ksel = K[:, heads]  # (n, H_q, D)
        Vsel = V[:, heads]
        s = torch.einsum("hd,nhd->hn", q[b].double(), Ksel) * scale
        m = s.amax(-1, keepdim=True)
        p = torch.exp(s - m)
        if normalize:
            p = p / p.sum(-1, keepdim=True)
        out[b] = torch.einsum("hn,nhd->hd", p, Vsel)
    return out


def _close(out, want: torch.Tensor, dtype: torch.dtype) -> bool:
    try:
        expect_close(out, want, dtype=dtype, tolerance=TOLERANCES[dtype], poisoned=False)
    except GradeFailure:
        return False
    return True


# --- diagnosis ----------------------------------------------------------------------------------

def _scale_label(case: Case) -> str:
    return "1/sqrt(D)" if case.sm_scale is None else f"sm_scale = {case.sm_scale:g}"


def _wrong_references(case: Case, q, k_cache, v_cache, block_table, cache_lens):
    """(message, float64 output) for each mistake the spec can name."""
    expected = _scale_label(case)
    common = dict(scale=case.scale)
    yield ("query head h read the wrong KV head: it must read KV head h // G (G = H_q / H_kv = "
           f"{case.group}: heads 0..{case.group - 1} share KV head 0, and so on), not h % H_kv",
           reference(q, k_cache, v_cache, block_table, cache_lens, kv_head=lambda h, hq, hkv: h % hkv, **common))
    yield ("query head h read the wrong KV head: it must read KV head h // G with G = H_q / H_kv = "
           f"{case.group}, not h // H_kv",
           reference(q, k_cache, v_cache, block_table, cache_lens,
                     kv_head=lambda h, hq, hkv: min(h // hkv, hkv - 1), **common))
    yield ("the page index was used as a token index: token t lives in row `slot` of page "
           "block_table[b, t // page_size], at page * stride(0) + slot * stride(1), not at (page + slot) * stride(1)",
           reference(q, k_cache, v_cache, block_table, cache_lens, rows=lambda p, s, ps: p + s, **common))
    scales = []
    if case.sm_scale is None:
        scales += [("1/D", 1.0 / case.D), ("1 (no scale at all)", 1.0)]
    else:
        scales += [("1/sqrt(D) (the sm_scale argument was ignored)", 1.0 / math.sqrt(case.D))]
    scales += [(f"{expected} · ln(2) (exp2 without the log2(e) factor)", case.scale * math.log(2)),
               (f"{expected} · log2(e) (log2(e) folded in, but exp used instead of exp2)", case.scale * LOG2E)]
    for label, scale in scales:
        yield (f"scores were scaled by {label}, expected {expected}",
               reference(q, k_cache, v_cache, block_table, cache_lens, scale=scale))
    yield ("the output was not divided by the sum ℓ at the end",
           reference(q, k_cache, v_cache, block_table, cache_lens, normalize=False, **common))


def _finite_copy(pool: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
    """The same pool with every NaN replaced by fresh random numbers."""
    fresh = torch.randn(pool.shape, generator=rng).to(pool.dtype).to(pool.device)
    return torch.where(torch.isnan(pool), fresh, pool)


def _finite_rerun(fn, case: Case, inputs, rng):
    """(output, k, v): the learner's output on the same inputs with every NaN of the pools made finite.

    Run through `checks.run_case` like the first call, so that what the learner allocates is again
    poisoned with NaN: a NaN that survives finite pools comes from memory no program wrote.
    """
    q, k_cache, v_cache, block_table, cache_lens = inputs
    k2, v2 = _finite_copy(k_cache, rng), _finite_copy(v_cache, rng)
    kept = {}

    def keep(out):
        if isinstance(out, torch.Tensor) and out.shape == q.shape:
            kept["out"] = out.detach().clone()

    try:
        checks.run_case(fn, {"q": q, "k_cache": k2, "v_cache": v2, "block_table": block_table,
                             "cache_lens": cache_lens}, keep, kwargs=_kwargs(case), max_launches=2)
    except GradeFailure:
        pass
    return kept.get("out"), k2, v2


def _past_len_mistake(again, case: Case, inputs, k2, v2, dtype) -> str | None:
    """Which slots past cache_lens[b] the kernel read, judged from its output on finite pools."""
    q, _, _, block_table, cache_lens = inputs
    if bool(torch.isnan(again).any()):
        return ("NaN that does not come from the cache: with every slot of the pools made finite your output still "
                "holds NaN. Does your combine kernel read partials that no program wrote? torch.empty holds "
                "garbage (here NaN): read only the cdiv(cache_lens[b], tokens_per_split) splits that hold tokens, "
                "or have every program write its partials, empty ones included")
    ps = case.page_size
    whole = [-(-n // ps) * ps for n in case.lens]
    every = [block_table.shape[1] * ps] * case.B
    common = dict(scale=case.scale)
    if _close(again, reference(q, k2, v2, block_table, cache_lens, lens=whole, **common), dtype):
        return ("the last page was read whole: sequence b has cache_lens[b] tokens, and the slots of its last page "
                "past that hold anything (here NaN; with those slots made finite, your output is attention over "
                "whole pages). Mask each token with `token < cache_lens[b]`, not by pages")
    if _close(again, reference(q, k2, v2, block_table, cache_lens, lens=every, **common), dtype):
        return ("pages past cache_lens[b] were read: block-table entries after a sequence's last page point at "
                "pages that are not its own (here pages full of NaN; made finite, your output is attention over "
                "every entry of the block table). Stop each sequence at cache_lens[b]")
    if _close(again, reference(q, k2, v2, block_table, cache_lens, **common), dtype):
        return ("K or V rows past cache_lens[b] were loaded: with those slots made finite your output is right, but "
                "the slots of a last page past cache_lens[b] (and pages past the end) hold anything, NaN included, "
                "and 0 · NaN = NaN. Mask the loads (`mask=token < end, other=0.0`), not only the scores")
    return None


def _extra_keys_mistake(out: torch.Tensor, want: torch.Tensor, case: Case, dtype) -> str | None:
    """Tokens past cache_lens[b] left in the softmax with a finite score (masked to 0, or not masked):
    each (sequence, head) row of the output is then the right one times a factor below 1, since those
    keys add exp(s - m) to the sum ℓ and, their V loaded as 0, nothing to the accumulator."""
    got = out.detach().double().cpu()
    ref = want.double().cpu()
    norm = (ref * ref).sum(-1)
    factor = torch.where(norm > 0, (got * ref).sum(-1) / norm.clamp_min(1e-300), torch.ones_like(norm))
    shrunk = factor < 0.99
    if not bool(shrunk.any()) or bool((factor > 1.01).any()):
        return None
    if not _close(out.detach().cpu(), factor[..., None] * ref, dtype):
        return None
    return (f"tokens past cache_lens[b] were not masked to -inf: each row of your output is the right one times a "
            f"factor below 1 (down to {float(factor.min()):.3g} here), the mark of keys past the end that entered "
            "the sum ℓ with a finite score (0, or the score of a K row loaded as 0) and added nothing to the "
            "accumulator (their V loaded as 0). Set the scores of tokens at or past cache_lens[b] to -inf before "
            "the max: `tl.where(token < end, s, float(\"-inf\"))`")


def _check_empty_sequences(out: torch.Tensor, case: Case) -> None:
    """A sequence with cache_lens[b] = 0 has no key: its rows must be exact zeros."""
    for b, n in enumerate(case.lens):
        if n > 0:
            continue
        rows = out[b].detach()
        if bool(guards.is_poison(rows).any()):
            return  # expect_close names unwritten elements
        if bool(torch.isnan(rows).any()):
            raise GradeFailure(
                f"a sequence with no token must give zeros, not NaN: cache_lens[{b}] = 0 ({case.describe()}), so "
                f"no program sees a key, every max stays -inf and every sum 0; your out[{b}] holds "
                f"{int(torch.isnan(rows).sum())} NaN. Guard both places that divide or subtract: where ℓ = 0 divide "
                "by 1, and in the merge, where every partial max is -inf, do not compute exp(-inf - (-inf))")
        nonzero = rows != 0
        if bool(nonzero.any()):
            raise GradeFailure(
                f"a sequence with no token must give exact zeros: cache_lens[{b}] = 0 ({case.describe()}) but "
                f"{int(nonzero.sum())} elements of out[{b}] are not 0. A finite mask value (-1e30) or an unmasked "
                "first tile lets keys back in; mask with -inf, skip the empty sequence's tiles, and store 0 where ℓ = 0")


def _probe_inputs(B: int, S: int, dtype, rng, device, *, periodic: bool):
    """One KV head, D 64, pages of 16, q > 0 and key j = c_j · (1, ..., 1), every sequence the same.

    With c rising along the keys, every tile and every split has a larger max than the one before: the
    running sums and the partials must be rescaled. With c periodic (the same 16 values, largest first,
    in every page), every tile and every split has the same max, and a missing rescale goes unseen.
    """
    D, ps = 64, 16
    pages = -(-S // ps)
    c = torch.linspace(-1.0, 1.0, S) if not periodic else torch.linspace(1.0, -1.0, ps).repeat(pages)[:S]
    k = torch.zeros((pages * ps,), dtype=torch.float32)
    k[:S] = c * 3.0
    k = k.reshape(pages, ps, 1, 1).expand(pages, ps, 1, D).contiguous()
    v = torch.randn((pages, ps, 1, D), generator=rng)
    q = torch.randn((B, 1, D), generator=rng).abs() * 0.5 + 0.5
    table = torch.arange(pages, dtype=torch.int32).flip(0).repeat(B, 1)  # every sequence shares the pages
    lens = torch.full((B,), S, dtype=torch.int32)
    return (q.to(dtype).to(device), k.to(dtype).to(device), v.to(dtype).to(device), table.to(device), lens.to(device))


RESCALE_S = 320
#: Sequences in the probe that must not be split: more (sequence, KV head) pairs than any wave holds.
UNSPLIT_B = {"interpreter": 32, "gpu": 2048}

_RESCALING: dict[tuple[str, torch.dtype], str | None] = {}  # one probe per learner function and dtype


def _probe_right(fn, inputs, dtype) -> bool | None:
    try:
        out = fn(*inputs, sm_scale=None)
    except Exception:
        return None
    q, k, v, table, lens = inputs
    return _close(out, reference(q, k, v, table, lens, scale=1 / math.sqrt(q.shape[-1])), dtype)


def _rescaling_mistake(fn, dtype, rng, device, mode) -> str | None:
    key = (getattr(fn, "__name__", str(id(fn))), dtype)  # one learner file per judge
    if key not in _RESCALING:
        _RESCALING[key] = _probe_rescaling(fn, dtype, rng, device, mode)
    return _RESCALING[key]


def _probe_rescaling(fn, dtype, rng, device, mode) -> str | None:
    periodic = _probe_right(fn, _probe_inputs(1, RESCALE_S, dtype, rng, device, periodic=True), dtype)
    rising = _probe_right(fn, _probe_inputs(1, RESCALE_S, dtype, rng, device, periodic=False), dtype)
    if not periodic or rising is not False:
        return None
    unsplit = _probe_right(fn, _probe_inputs(UNSPLIT_B[mode], RESCALE_S, dtype, rng, device, periodic=False), dtype)
    if unsplit:
        return ("the partial results were merged without rescaling: on keys whose scores rise along the sequence, "
                "one sequence alone (split into chunks) is wrong, while many sequences (too many to split, so "
                "nothing to merge) are right, and every chunk having the same max hides it. The merge must bring "
                "every partial to the common max first: m = max_s m_s, ℓ = Σ_s ℓ_s · exp(m_s - m), acc = Σ_s "
                "acc_s · exp(m_s - m) (chapter 6's merge rule)")
    return ("the running sum/accumulator was not rescaled when the max changed: on keys whose scores rise along the "
            "sequence (a new max in every tile) your output is wrong, on keys whose every tile has the same max it "
            "is right. When m grows to m_new, multiply ℓ and acc by exp(m - m_new) before adding the new tile")


def _verify(case: Case, dtype, inputs, *, fn=None, rng=None, device="cpu", mode="interpreter", note: str = ""):
    """The `expected` callable for run_case: the comparison, then a diagnosis, then exact zeros."""
    q, k_cache, v_cache, block_table, cache_lens = inputs
    want = reference(q, k_cache, v_cache, block_table, cache_lens, scale=case.scale)

    def check(out):
        try:
            expect_close(out, want, dtype=dtype, tolerance=TOLERANCES[dtype])
        except GradeFailure as failure:
            text = str(failure)
            if "differ from the float64 reference" not in text and "are NaN where the answer is not" not in text:
                raise  # unwritten, infinite, wrong shape or dtype: that message is already precise
            _check_empty_sequences(out, case)
            detached = out.detach()
            long_rows = [b for b, n in enumerate(case.lens) if n > 0]
            if bool(torch.isnan(detached[long_rows]).any()):
                # NaN is diagnosed as NaN: a read into the poisoned slots, or into partials nobody wrote. Only
                # a rerun on finite pools may be compared with what a mistake would compute.
                if fn is not None and rng is not None:
                    again, k2, v2 = _finite_rerun(fn, case, inputs, rng)
                    if again is not None:
                        named = _past_len_mistake(again, case, inputs, k2, v2, dtype)
                        if named:
                            raise GradeFailure(f"{named} ({case.describe()}). {failure}") from None
                        finite_inputs = (q, k2, v2, block_table, cache_lens)
                        for message, wrong in _wrong_references(case, *finite_inputs):
                            if _close(again, wrong, dtype):
                                raise GradeFailure(f"{message} ({case.describe()}): your output matches decode "
                                                   f"attention computed that way. {failure}") from None
                raise GradeFailure(
                    "NaN in the output of sequences that have tokens: a load read past the valid tokens, into slots "
                    "that hold NaN here (the pool's free pages, the slots of each last page past cache_lens[b] and "
                    "the pages that block-table entries past a sequence's end point at). Every K and V load needs "
                    f"the mask `token < cache_lens[b]` ({case.describe()}). {failure}") from None
            for message, wrong in _wrong_references(case, q, k_cache, v_cache, block_table, cache_lens):
                if not _close(want, wrong, dtype) and _close(detached, wrong, dtype):
                    raise GradeFailure(f"{message} ({case.describe()}): your output matches decode attention "
                                       f"computed that way. {failure}") from None
            named = _extra_keys_mistake(detached, want, case, dtype)
            if named:
                raise GradeFailure(f"{named} ({case.describe()}). {failure}") from None
            if fn is not None and rng is not None:
                named = _rescaling_mistake(fn, dtype, rng, device, mode)
                if named:
                    raise GradeFailure(f"{named} ({case.describe()}). {failure}") from None
            raise GradeFailure(f"{case.describe()}{note}: {failure}") from None
        _check_empty_sequences(out, case)  # within tolerance is not enough there: exact zeros

    return check


def _kwargs(case: Case) -> dict:
    return {"sm_scale": case.sm_scale}


def check_case(fn, case: Case, dtype, rng, device, mode, *, note: str = "", inputs=None):
    inputs = inputs if inputs is not None else make_inputs(case, dtype, rng, device)
    q, k_cache, v_cache, block_table, cache_lens = inputs
    return checks.run_case(
        fn, {"q": q, "k_cache": k_cache, "v_cache": v_cache, "block_table": block_table, "cache_lens": cache_lens},
        _verify(case, dtype, inputs, fn=fn, rng=rng, device=device, mode=mode, note=note),
        dtype=dtype, kwargs=_kwargs(case), max_launches=2)


def _ids(cases):
    return [c.id for c in cases]


# --- correctness --------------------------------------------------------------------------------

@pytest.mark.parametrize("case", MAIN, ids=_ids(MAIN))
def test_matches_reference(learner_function, case, rng, device, mode):
    check_case(learner_function, case, torch.float16, rng, device, mode)


@pytest.mark.parametrize("case", SCALED, ids=_ids(SCALED))
def test_sm_scale(learner_function, case, rng, device, mode):
    check_case(learner_function, case, torch.float16, rng, device, mode)


@pytest.mark.parametrize("case", SHARED, ids=_ids(SHARED))
def test_shared_pages(learner_function, case, rng, device, mode):
    """Sequences that share their first pages (a common prompt prefix): a page may appear in several rows."""
    check_case(learner_function, case, torch.float16, rng, device, mode,
               note=" (pages shared between sequences: the same page index appears in several block-table rows)")


@pytest.mark.parametrize("case", FUSED, ids=_ids(FUSED))
def test_strided_layouts(learner_function, case, rng, device, mode):
    check_case(learner_function, case, torch.float16, rng, device, mode,
               note=" — q here is a slice of a (B, H_q + 2·H_kv, D) projection and k_cache, v_cache are views "
                    "of one (num_pages, 2, page_size, H_kv, D) pool: index every tensor with its own strides")


@pytest.mark.parametrize("case", EMPTY, ids=_ids(EMPTY))
def test_every_sequence_empty(learner_function, case, rng, device, mode):
    check_case(learner_function, case, torch.float16, rng, device, mode)


def test_running_max_changes(learner_function, rng, device, mode):
    """Scores rise along the keys: the running sums and the partials must be rescaled to the new max."""
    inputs = _probe_inputs(1, RESCALE_S, torch.float16, rng, device, periodic=False)
    q, k, v, table, lens = inputs
    want = reference(q, k, v, table, lens, scale=1 / math.sqrt(q.shape[-1]))

    def check(out):
        try:
            expect_close(out, want, dtype=torch.float16, tolerance=TOLERANCES[torch.float16])
        except GradeFailure as failure:
            if "differ from the float64 reference" not in str(failure):
                raise
            named = _rescaling_mistake(learner_function, torch.float16, rng, device, mode)
            if named is None:
                named = (f"one sequence of {RESCALE_S} tokens whose scores rise along the keys (a new running max in "
                         "every tile and every chunk)")
            raise GradeFailure(f"{named}. {failure}") from None

    checks.run_case(learner_function, {"q": q, "k_cache": k, "v_cache": v, "block_table": table, "cache_lens": lens},
                    check, dtype=torch.float16, kwargs={"sm_scale": None}, max_launches=2)


@pytest.mark.parametrize("index", range(len(LONG["gpu"])), ids=[f"long{i}" for i in range(len(LONG["gpu"]))])
def test_long_sequences(learner_function, index, rng, device, mode):
    cases = LONG[mode]
    if index >= len(cases):
        pytest.skip("long caches (up to 32768 tokens) are checked on a GPU only; the interpreter runs one "
                    "513-token sequence (long0)")
    check_case(learner_function, cases[index], torch.float16, rng, device, mode)


@pytest.mark.parametrize("case", BF16, ids=_ids(BF16))
def test_bf16(learner_function, case, rng, device, mode):
    if mode != "gpu":
        pytest.skip(BF16_ON_GPU_ONLY)
    check_case(learner_function, case, torch.bfloat16, rng, device, mode)


# --- the schedule: split-KV, G heads per read, no scores in memory -------------------------------

SPLIT_CASE = {"interpreter": Case(1, 8, 2, 64, 16, (300,)), "gpu": Case(1, 32, 8, 128, 16, (8192,))}


def _split_kernel_programs(report, k_cache) -> int | None:
    """Programs of the launch that read k_cache (the launch records name the arguments it was given)."""
    for launch in report.launches:
        for value in launch.arguments.values():
            if isinstance(value, torch.Tensor) and value.data_ptr() == k_cache.data_ptr() and launch.grid:
                return math.prod(launch.grid)
    return None


def test_splits_the_keys(learner_function, rng, device, mode, check):
    """One long sequence: (sequence, KV head) pairs alone leave most SMs idle; the keys must be split."""
    case = SPLIT_CASE[mode]
    inputs = make_inputs(case, torch.float16, rng, device)
    report = check_case(learner_function, case, torch.float16, rng, device, mode, inputs=inputs)
    programs = _split_kernel_programs(report, report.inputs["k_cache"])
    checks.require(programs is not None, "the grader could not find the launch that reads k_cache: pass k_cache "
                   "itself to your kernel")
    pairs = case.B * case.H_kv
    sms = INTERPRETER_NUM_SMS if mode != "gpu" else plan.current_device().multiprocessors
    check.extra["split"] = {"programs": programs, "sequence_kv_head_pairs": pairs, "sms": sms}
    if programs < 2 * pairs:
        raise GradeFailure(
            f"your kernel that reads k_cache ran {programs} program{'s' if programs != 1 else ''} for one sequence "
            f"of {case.lens[0]} tokens with {case.H_kv} KV heads ({case.describe()}): one per (sequence, KV head) "
            f"leaves most of the {sms} SMs{' (the interpreter stands in for 4)' if mode != 'gpu' else ''} idle. Split "
            "each sequence's pages into chunks, one program per (chunk, KV head, sequence), with the chunk count "
            "from num_splits, and merge the partials in a second kernel")


TRAFFIC_CASE = Case(2, 8, 2, 64, 16, (100, 37))


def test_traffic(learner_function, rng, device):
    """Interpreter: every K and V row of a valid token is read once per KV head, whatever the group size."""
    case = TRAFFIC_CASE
    q, k_cache, v_cache, block_table, cache_lens = make_inputs(case, torch.float16, rng, device)
    referenced = sum(case.lens) * case.H_kv * case.D * 2  # bytes of K (and of V) that valid tokens reference
    low = minimum_bytes(list(case.lens), k_cache.shape[0], case.page_size, case.H_q, case.H_kv, case.D, 2)
    high = per_query_head_bytes(list(case.lens), k_cache.shape[0], case.page_size, case.H_q, case.H_kv, case.D, 2)
    record = checks.expect_traffic(
        learner_function, {"q": q, "k_cache": k_cache, "v_cache": v_cache, "block_table": block_table,
                           "cache_lens": cache_lens}, minimum_bytes=low)
    record.update(referenced_bytes=referenced, per_query_head_bytes=high)
    for name in ("k_cache", "v_cache"):
        loaded = record["tensors"][name]["loaded"]
        reads = loaded / referenced
        if reads > 1.0 + 1e-9:
            if abs(reads - case.group) < 0.5:
                lesson = (f"that is one read per query head: G = {case.group} query heads share each KV head, and a "
                          "program per (sequence, query head) reads the same rows G times (from L2 at best, from "
                          "HBM at worst). Keep the G heads of a group in one program, as the rows of a (G, D) × "
                          "(D, tile) product, and read each tile once")
            else:
                lesson = "each K and V row of a valid token is needed once per KV head: read every tile once"
            raise GradeFailure(
                f"your kernel read `{name}` {reads:.2f} times per valid token and KV head ({loaded:,} bytes where the "
                f"valid tokens reference {referenced:,}; {case.describe()}): {lesson}. {record['sentence']}")


SCORES_CASE = Case(1, 4, 1, 64, 16, (2500,))


def test_no_scores_in_memory(learner_function, rng, device, mode, check):
    """The S_k scores of each query head stay on chip: scratch memory stays far below one number per score."""
    case = SCORES_CASE if mode != "gpu" else Case(1, 32, 8, 128, 16, (32768,))
    q, k_cache, v_cache, block_table, cache_lens = make_inputs(case, torch.float16, rng, device)
    out_bytes = case.B * case.H_q * case.D * 2
    budget = case.B * case.H_q * sum(case.lens) * 2  # one fp16 number per (query head, token)
    inputs = {"q": q, "k_cache": k_cache, "v_cache": v_cache, "block_table": block_table, "cache_lens": cache_lens}
    if mode == "gpu":
        learner_function(*inputs.values())  # compiles outside the measurement
        outcome = learner_function.call(*inputs.values(), memory=True)  # peak allocated in the learner's process
        scratch = int((outcome.memory or {}).get("peak_bytes", 0)) - out_bytes
        what = f"allocated {scratch:,} bytes besides `out`"
    else:
        record = checks.expect_traffic(learner_function, inputs, minimum_bytes=minimum_bytes(
            list(case.lens), k_cache.shape[0], case.page_size, case.H_q, case.H_kv, case.D, 2))
        check.extra["scratch_traffic"] = check.extra.pop("traffic")  # `traffic` is test_traffic's
        scratch = record["stored"] - out_bytes
        what = f"stored {scratch:,} bytes besides `out`"
    check.extra["scratch_bytes"] = scratch
    if scratch >= budget:
        raise GradeFailure(
            f"the scores went to memory? Your call {what} for {case.describe()}: at least one fp16 number per query "
            f"head and cached token ({budget:,} bytes). Decode keeps each tile of scores in registers, like "
            "FlashAttention: only the partials (m, ℓ and acc: D + 2 floats per query head and split) may be written")


# --- performance: fraction of the ceiling on the minimum bytes -------------------------------------

#: (B, H_q, H_kv, D, S_k, page_size), bf16: a serving batch of 64 sequences of 4096 tokens, pages of 16.
#: A call there moves 1 GiB of cache (about 0.25 ms on an H200): the grader's clock measures the
#: memory, not Python's launch time, which at B 1 is as long as the kernels (the benchmark,
#: tools/benchmarks/ex08_decode.py, times B 1 and B 8 with do_bench, in turns with FlashInfer and SDPA).
PERF_SHAPES = [(64, 32, 8, 128, 4096, 16)]


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed decode step on ``device``: PERF_SHAPES' serving batch, with fewer sequences where the
    judge's input sets and the comparison's float32 gathered K and V (four times a set's cache) would not
    fit in half the free memory; in bfloat16, or float16 (the same bytes) on a card without it."""
    from grader.judge import clock

    B, H_q, H_kv, D, S, ps = PERF_SHAPES[0]
    dtype = plan.half_dtype(device)
    per_sequence = 2 * S * H_kv * D * 2  # K and V of one sequence, 16-bit
    fits = int(free_bytes * 0.5) // ((clock.SETS + 4) * per_sequence)
    B = max(1, min(B, fits))
    nbytes = minimum_bytes([S] * B, B * -(-S // ps), ps, H_q, H_kv, D, 2)
    return plan.PerformanceInput(
        label=f"B {B}, H_q {H_q}, H_kv {H_kv}, D {D}, S_k {S}, page_size {ps}, {dtype}", dtype=dtype,
        data_bytes=nbytes, held_bytes=plan.timed_sets_bytes(B * per_sequence, free_bytes) + 4 * B * per_sequence,
        sizes={"B": B, "H_q": H_q, "H_kv": H_kv, "D": D, "S": S, "page_size": ps})


def perf_inputs(B, H_q, H_kv, D, S, ps, dtype=torch.bfloat16, generator: torch.Generator | None = None):
    """A full paged cache (every sequence S tokens) with its pages shuffled through the pool, on the GPU."""
    if generator is None:
        generator = torch.Generator(device="cuda").manual_seed(8)
    pages_per_seq = -(-S // ps)
    num_pages = B * pages_per_seq
    k = torch.randn((num_pages, ps, H_kv, D), device="cuda", dtype=dtype, generator=generator)
    v = torch.randn((num_pages, ps, H_kv, D), device="cuda", dtype=dtype, generator=generator)
    table = torch.randperm(num_pages, device="cuda", generator=generator).to(torch.int32).reshape(B, pages_per_seq)
    q = torch.randn((B, H_q, D), device="cuda", dtype=dtype, generator=generator)
    lens = torch.full((B,), S, dtype=torch.int32, device="cuda")
    return q, k, v, table, lens


def gathered(k_cache, block_table, S):
    """(B, H_kv, S, D): the pages of each sequence copied into one contiguous tensor."""
    B = block_table.shape[0]
    return k_cache[block_table.long()].reshape(B, -1, *k_cache.shape[2:])[:, :S].transpose(1, 2)


def test_performance(exercise, learner_function, mode, check):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    import torch.nn.functional as F

    _, timed = plan.here(__file__)
    dtype = plan.torch_dtype(timed.dtype)
    B, H_q, H_kv, D, S, ps = (timed.sizes[k] for k in ("B", "H_q", "H_kv", "D", "S", "page_size"))  # this card's
    label = timed.label

    def make_set(generator):
        return list(perf_inputs(B, H_q, H_kv, D, S, ps, dtype=dtype, generator=generator)), {}

    def verify(out, args, kwargs):
        q, k, v, table, lens = args
        want = F.scaled_dot_product_attention(q.float().unsqueeze(2), gathered(k, table, S).float(),
                                              gathered(v, table, S).float(), enable_gqa=True).squeeze(2)
        try:  # a loose check that catches a wrong answer, not rounding
            expect_close(out, want.double(), dtype=dtype, tolerance=Tolerance(rtol=3e-2, atol=2e-2),
                         poisoned=False)
        except GradeFailure as failure:
            raise GradeFailure(f"at the benchmark size ({label}) your output is wrong: {failure}") from None

    nbytes = minimum_bytes([S] * B, B * -(-S // ps), ps, H_q, H_kv, D, 2)
    check.performance = None  # a failure before the timing leaves it None: re-raised below
    failure_after_timing = None
    try:
        record = checks.measure_bandwidth(learner_function, make_set, nbytes=nbytes, floor=exercise.floor,
                                          verify=verify, label=label)
    except GradeFailure as failure:
        if check.performance is None:
            raise
        record, failure_after_timing = check.performance, failure
    ratio = per_query_head_bytes([S] * B, 0, ps, H_q, H_kv, D, 2) / nbytes
    record.details.update(label=label, per_query_head_ratio=round(ratio, 3))
    record.lines = [f"decode attention on this {record.gpu} at {label} (minimum bytes: the valid K and V rows "
                    "once, q and out; the grader's clock around calls on fresh inputs):",
                    f"  {record.achieved_gbps:.0f} GB/s, {record.fraction:.0%} of the measured ceiling "
                    f"({record.ceiling_gbps:.0f} GB/s), {record.ms * 1000:.1f} µs",
                    f"  one program per (sequence, query head) would move {ratio:.1f}x these bytes (K and V once "
                    "per query head, not per KV head)"] + record.lines
    record.verdict = f"{record.verdict} (at {label})"
    check.performance = record
    torch.cuda.empty_cache()
    if failure_after_timing is not None:
        raise failure_after_timing
