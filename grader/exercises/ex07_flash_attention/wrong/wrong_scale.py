"""Wrong: the default scale is 1/D instead of 1/sqrt(D)."""

import torch

# Everything but the default scale is the solution's: its kernel, its launcher.
from solutions.ex07_flash_attention import attention as solution_attention

EXPECTED = "scores were scaled by 1/D, expected 1/sqrt(D)"
SELECT = "matches_reference and B1-H2-S97-D64 and not causal"


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              key_lens: torch.Tensor | None = None, sm_scale: float | None = None) -> torch.Tensor:
    """The solution's attention, with the wrong default scale."""
    if sm_scale is None:
        sm_scale = 1.0 / q.shape[-1]  # the mistake: 1/D, not 1/sqrt(D)
    return solution_attention(q, k, v, causal=causal, key_lens=key_lens, sm_scale=sm_scale)
