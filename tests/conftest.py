"""The course's own tests run without a GPU: Triton's interpreter, set before Triton is imported."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    import torch

    _HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - torch is a dependency
    _HAS_CUDA = False
if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if _HAS_CUDA:
        return
    skip_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
