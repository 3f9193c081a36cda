"""Sandbox escape (exercise 1): tries to become root again after the sandbox dropped it.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import os

import torch
import triton
import triton.language as tl

ATTACK = 'calls os.setuid(0) and os.setgid(0) at import and raises if either worked'
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('os.setuid',)
REJECTED_BY = 'the sandbox: an unprivileged user with no capabilities and no_new_privs; the file passes'
#: The sentence the file must get (None: it must pass).
SENTENCE = None

if os.getuid() != 0:
    for _call in (os.setuid, os.setgid):
        try:
            _call(0)
            raise RuntimeError(f"ESCAPED: {_call.__name__}(0) worked")
        except OSError:  # EPERM as the sandbox user; EINVAL in its own user namespace, where uid 0 does not exist
            pass


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
