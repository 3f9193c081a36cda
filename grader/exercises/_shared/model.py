"""A small transformer block for exercise 6 (Amdahl's Law), with a softmax you can swap.

The block is a plain pre-LayerNorm encoder block, written so that its softmax is a visible share
of the GPU time at long sequences:

* attention **materializes** the (B, H, S, S) score matrix and calls an explicit softmax on it,
  the way a model without FlashAttention does (softmax traffic grows with S², the GEMMs with S);
* the softmax is a plain attribute, ``block.softmax``, with the exercise-3 contract: it takes a
  **2-D** tensor of rows and returns the softmax of each row. The block reshapes its 4-D scores
  to (B·H·S, S) rows before the call and back afterwards (a view both ways: no copy);
* the scale 1/√d_head is applied to q (B·S·d elements) rather than to the scores (B·H·S²), so the
  softmax is the only elementwise pass over the score matrix;
* everything else is what a block has: LayerNorms, residual adds, an MLP with exact GELU.

Default sizes (d_model 512, 8 heads of 64, MLP ×4, fp32) were chosen from a back-of-the-envelope
model of an H200, not from a measurement: per token the linear layers cost 24·d² flops and the
attention GEMMs 4·S·d, while softmax moves 8·H·S bytes (fp32, read + write). At S = 2048 that puts
softmax near a fifth of the pass, at S = 256 near a twentieth, the same regime as the course's seed
profile (21% and 7%). The measured fractions are in docs/measurements/h200-ex06-*.json.

    block = Block(512, 8, 4).to("cuda")
    x = torch.randn(8, 2048, 512, device="cuda")
    y = block(x)                          # torch.softmax inside
    block.softmax = my_softmax            # any rows -> rows function, e.g. exercise 3's
    y2 = block(x)                         # same weights, your softmax
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

#: A softmax with the exercise-3 contract: a 2-D tensor in, the softmax of each row out.
RowSoftmax = Callable[[torch.Tensor], torch.Tensor]

#: Sizes used by the grader and the H200 benchmark (see the module docstring for why).
D_MODEL = 512
N_HEADS = 8
MLP_RATIO = 4


def torch_softmax(x: torch.Tensor) -> torch.Tensor:
    """PyTorch's softmax over the last dimension: the block's default (``aten::_softmax`` in a profile)."""
    return torch.softmax(x, dim=-1)


class Block(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln1(x))``, then ``x + mlp(ln2(x))``.

    ``softmax`` takes the (B·H·S, S) rows of the score matrix and returns their softmax; it can be
    replaced at any time (``block.softmax = fn``) without touching the weights. ``torch.softmax``
    itself is accepted too (it is called with ``dim=-1``).
    """

    def __init__(self, d_model: int = D_MODEL, n_heads: int = N_HEADS, mlp_ratio: int = MLP_RATIO,
                 softmax: RowSoftmax = torch_softmax):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model = {d_model} must be a multiple of n_heads = {n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)
        self.softmax = softmax

    def attention_probabilities(self, scores: torch.Tensor) -> torch.Tensor:
        """Softmax over the last dimension of the (B, H, S, S) scores, through ``self.softmax`` on 2-D rows."""
        rows = scores.reshape(-1, scores.shape[-1])  # a view: the scores are contiguous
        if self.softmax is torch.softmax:
            probs = torch.softmax(rows, dim=-1)
        else:
            probs = self.softmax(rows)
        return probs.reshape(scores.shape)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        # (B, S, 3·d) -> three (B, H, S, d_head) views
        q, k, v = self.qkv(x).view(batch, seq, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        q = q * (1.0 / math.sqrt(self.d_head))  # scale q (B·S·d), not the scores (B·H·S²)
        scores = q @ k.transpose(-2, -1)  # (B, H, S, S): the materialized score matrix
        probs = self.attention_probabilities(scores)
        out = probs @ v  # (B, H, S, d_head)
        return self.proj(out.transpose(1, 2).reshape(batch, seq, d_model))

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def make_block(*, d_model: int = D_MODEL, n_heads: int = N_HEADS, mlp_ratio: int = MLP_RATIO,
               device: str = "cpu", dtype: torch.dtype = torch.float32, seed: int = 0) -> Block:
    """A block with reproducible weights (``seed``), in eval mode, on ``device``."""
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        torch.manual_seed(seed)
        block = Block(d_model, n_heads, mlp_ratio)
    # Inference only: no autograd graph is recorded, so a timed pass is only the forward kernels.
    return block.to(device=device, dtype=dtype).eval().requires_grad_(False)


def score_rows(batch: int, seq: int, n_heads: int = N_HEADS) -> tuple[int, int]:
    """Shape (rows, columns) of the 2-D tensor the block hands its softmax."""
    return batch * n_heads * seq, seq
