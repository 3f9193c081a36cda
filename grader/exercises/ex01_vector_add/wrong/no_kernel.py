"""Wrong: no Triton kernel at all, just torch."""

import torch

EXPECTED = "without launching a Triton kernel"
SELECT = "matches_reference and n1025 and fp32"


def add(x, y):
    return torch.add(x, y)
