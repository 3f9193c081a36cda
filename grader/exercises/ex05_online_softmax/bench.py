"""`grade bench`'s code for this exercise: the inputs of a sweep and the PyTorch baseline it times (the
sizes, dtype and labels are the manifest's `[bench]` table, whose `workload` names an entry here). The
softmax family shares one: rows of random values against torch.softmax."""

from __future__ import annotations

from grader.exercises._shared.softmax_bench import SOFTMAX_ROWS

WORKLOADS = {"softmax": SOFTMAX_ROWS}
