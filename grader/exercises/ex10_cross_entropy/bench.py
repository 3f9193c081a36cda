"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.commands.bench_sweep import Shape, Workload


def _logits_and_targets(shape: Shape, dtype: torch.dtype, device: str) -> tuple:
    logits = torch.randn(shape["T"], shape["V"], device=device, dtype=dtype)
    return (logits, torch.randint(0, shape["V"], (shape["T"],), device=device))


def _cross_entropy_and_backward(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Eager PyTorch's loss and gradient as training code computes them: F.cross_entropy on the logits
    in float32, then backward (the gradient lands in a new (T, V) tensor; the logits stay as they are)."""
    leaf = logits.detach().requires_grad_(True)
    loss = F.cross_entropy(leaf.float(), target)
    loss.backward()
    return loss.detach()


WORKLOADS = {
    # The loss is a 0-dim tensor and the gradient is written into the logits: the copy row copies them.
    "cross_entropy": Workload(make_inputs=_logits_and_targets, baselines={"torch": _cross_entropy_and_backward},
                              copy_source=lambda args: args[0]),
}
