"""
Exercise 7 · FlashAttention forward
===================================

In this exercise you will learn:

* how attention, ``O = softmax(scale · Q Kᵀ + mask) V``, runs without ever storing the S
  × S score matrix: each program owns a block of query rows, walks the keys and values
  in blocks, and folds each tile of scores into a running max ``m``, running sum ``ℓ``
  and output accumulator ``acc`` (the online softmax of exercise 5, with the values
  included);
* why masked scores are ``-inf`` (they add exactly ``e^-inf = 0``), and why a row with
  *no* visible key (``key_lens[b] = 0``) then needs one guard: ``ℓ = 0``, return zeros,
  not NaN;
* how to skip work instead of masking it: a causal query block stops at the diagonal,
  and ``key_lens`` stops every program at its sequence's length.

The contract: ``q`` is (B, H, S_q, D), ``k`` and ``v`` are (B, H, S_k, D), fp16 or bf16,
with D in {16, 32, 64, 128} and any S >= 1. ``causal``: query i sees keys j <= i.
``key_lens``: an optional (B,) integer tensor; keys at positions >= key_lens[b] are
padding. ``sm_scale`` defaults to 1/sqrt(D). Return a new (B, H, S_q, D) tensor of q's
dtype.

Fill in the places marked TODO, then run ``grade exercise 7``. The grader compares with
a float64 reference on lengths that are not multiples of the block, causal and not, with
padding, and checks that no S × S matrix is allocated. ``grade hint 7`` gives a hint
when you are stuck.
"""

import math
import os

import torch
import triton
import triton.language as tl

HEAD_DIMS = (16, 32, 64, 128)


@triton.jit
def attention_kernel(
    q_ptr,  # pointer to the queries, (B, H, S_q, D)
    k_ptr,  # pointer to the keys, (B, H, S_k, D)
    v_ptr,  # pointer to the values, (B, H, S_k, D)
    out_ptr,  # pointer to the output, (B, H, S_q, D)
    # pointer to the (B,) valid key lengths; not read when HAS_KEY_LENS is False
    key_lens_ptr,
    # query strides: batch, head, row, head-dim element
    stride_qb, stride_qh, stride_qm, stride_qd,
    stride_kb, stride_kh, stride_kn, stride_kd,  # key strides
    stride_vb, stride_vh, stride_vn, stride_vd,  # value strides
    stride_ob, stride_oh, stride_om, stride_od,  # output strides
    n_heads,  # H
    seq_q,  # S_q: query rows per (batch, head)
    seq_k,  # S_k: keys per (batch, head)
    # the factor on q · k (sm_scale; multiply by log2(e) here if you use exp2)
    qk_scale,
    HEAD_DIM: tl.constexpr,  # D: 16, 32, 64 or 128
    BLOCK_M: tl.constexpr,  # query rows per program
    BLOCK_N: tl.constexpr,  # keys per loop step
    CAUSAL: tl.constexpr,  # query i sees keys j <= i
    HAS_KEY_LENS: tl.constexpr,  # key_lens was given
):
    # TODO: program (tl.program_id(0), tl.program_id(1)) handles query rows [pid_m *
    # BLOCK_M, (pid_m + 1) * BLOCK_M) of batch b = bh // n_heads, head h = bh % n_heads.
    #   1. Load this block of q once (mask the rows past seq_q).
    #   2. Start m = -inf, l = 0 (BLOCK_M,) and acc = 0 (BLOCK_M, HEAD_DIM), all
    #      float32.
    #   3. Loop over the keys in steps of BLOCK_N, only as far as this block needs
    #      (seq_k, key_lens[b], and the diagonal when CAUSAL): scores s = tl.dot(q,
    #      tl.trans(k)) * scale; masked scores -inf before the max; then the
    #      online-softmax update of m, l and acc (acc += tl.dot(p, v)).
    #   4. Divide acc by l (by 1 where l == 0: a row with no visible key stores zeros)
    #      and store.
    # A second @triton.jit function called from here (the solution has one) lets you run
    # the same loop without masks over the keys every row sees, and with masks over the
    # last blocks only.
    pass


def _config(head_dim: int, causal: bool) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps, num_stages) for this head size.

    Triton's interpreter runs ~1 ms of Python per program and per loop step, whatever
    the block size, so there the blocks are small enough for the grader's short
    sequences to cross several of them (64 query rows, 32 keys). On a GPU, 128 query
    rows with 8 warps keep the tensor cores busy. Change these once your kernel is
    correct, and measure.
    """
    if os.environ.get("TRITON_INTERPRET") == "1":
        return 64, 32, 4, 1
    return 128, 64, 8, 3


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_lens: torch.Tensor | None = None,
    sm_scale: float | None = None,
) -> torch.Tensor:
    """Attention forward, ``softmax(sm_scale · q kᵀ + mask) v``, for (B, H, S, D)
    tensors.

    ``causal``: query i sees keys j <= i. ``key_lens``: (B,) integers, keys at positions
    >= key_lens[b] are padding; a row that sees no key returns zeros. ``sm_scale``
    defaults to 1/sqrt(D).
    """
    B, H, seq_q, D = q.shape
    seq_k = k.shape[2]
    if k.shape != (B, H, seq_k, D) or v.shape != k.shape:
        raise ValueError(
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: expected (B, "
            "H, S, D) each"
        )
    if D not in HEAD_DIMS:
        raise ValueError(f"head size D = {D}: this kernel supports {HEAD_DIMS}")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N, num_warps, num_stages = _config(D, causal)
    # TODO: launch attention_kernel on a grid of (query blocks, B * H): pass q, k, v,
    # out, key_lens (or any tensor when it is None: HAS_KEY_LENS tells the kernel not to
    # read it), every stride (`*q.stride()`, ...), H, seq_q, seq_k, the scale, and the
    # constexprs, with num_warps=num_warps and num_stages=num_stages. Then delete the
    # line below.
    raise NotImplementedError(
        "exercise 7: write attention_kernel's body and launch it from attention()"
    )
    return out
