"""Sandbox escape (exercise 1): leaves a System V shared memory segment behind, which no file listing shows.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import ctypes

import torch
import triton
import triton.language as tl

ATTACK = 'creates a 16 MiB System V segment with a fixed key at import (shmget through ctypes), which outlives the run'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('ctypes',)
REJECTED_BY = 'the sandbox: a new IPC namespace, whose segments die with the run; the file passes and /proc/sysvipc/shm is as it was'
#: The sentence the file must get (None: it must pass).
SENTENCE = None

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmget(ctypes.c_int(0x6A11C0DE), ctypes.c_size_t(16 << 20), ctypes.c_int(0o1000 | 0o666))


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
