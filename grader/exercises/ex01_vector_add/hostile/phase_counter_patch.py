"""Hostile submission, exercise 1 (vector add): reads `x` twice and patches the byte counter of its own process to report one read.

A phase attack: the file behaves well only in the calls it believes are checked.
"""

import sys

import torch
import triton
import triton.language as tl

ATTACK = ("finds the grader's byte counter in sys.modules (no import) and replaces Traffic.as_dict with one that reports every watched tensor read exactly once; its kernel reads `x` twice")
KIND = "phase"
WRONG_UNDERNEATH = False
STATIC_FLAGS = ("sys.modules",)
REJECTED_BY = ("best effort: the learner's process reports its counts with the as_dict it took before the file was imported, so this patch changes nothing and the traffic check sees two reads; a file that patches the counter's hooks themselves is caught only where its counts contradict what the judge handed over or the launches the watch saw (docs/grading.md's guarantees say so); the batch static check names `sys`")
#: What `grade exercise 1` says in the interpreter (a substring), on the checks SELECT picks.
EXPECTED = 'read `x` 2.00 times'
SELECT = 'traffic'


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def add_kernel_reading_x_twice(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Right numbers (x_again - x is exactly 0), a third more bytes: x is read twice.
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    x_again = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y + (x_again - x)).to(out_ptr.dtype.element_ty), mask=mask)


def _launch(kernel, x, y):
    out = torch.empty_like(x)
    n = out.numel()
    kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


def _report_one_read():
    counter = getattr(sys.modules.get("grader.learner.traffic"), "Traffic", None)
    if counter is None:
        return
    honest = counter.as_dict

    def as_dict(self):
        figures = honest(self)
        for entry in figures.get("tensors", {}).values():
            if entry.get("size") and entry.get("loaded", 0) > entry["size"]:
                figures["loaded"] -= entry["loaded"] - entry["size"]
                entry["loaded"] = entry["size"]
        return figures

    counter.as_dict = as_dict


_report_one_read()


def add(x, y):
    return _launch(add_kernel_reading_x_twice, x, y)
