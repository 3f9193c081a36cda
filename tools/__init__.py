"""Maintainers' tools kept outside the shipped `grader` package: the GPU measurement lab
(`tools.benchmarks`) and the device scripts (`tools/device/`). Run from the repository root,
e.g. ``python -m tools.benchmarks ex01_vector_add --out DIR``."""
