"""Sandbox escape (exercise 1): unshares a mount namespace and remounts the course writable.

A correct vector add underneath. When the attack works it raises an error whose message is what
it found (ESCAPED: ...), so the leak would show in the learner's results; when the sandbox holds,
the attack finds nothing and the file passes.
"""

import ctypes
import os

import torch
import triton
import triton.language as tl

ATTACK = ('calls unshare(CLONE_NEWNS|CLONE_NEWUSER) and mount() through ctypes at import, itself and in a forked '
          'child (which has no threads), and raises if a mount worked')
KIND = "sandbox"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ('ctypes', 'os.fork')
REJECTED_BY = 'the sandbox: no capabilities and no_new_privs; the file passes'
#: The sentence the file must get (None: it must pass).
SENTENCE = None

_libc = ctypes.CDLL(None, use_errno=True)


def _try_mount() -> bool:
    return (_libc.unshare(ctypes.c_int(0x00020000 | 0x10000000)) == 0
            and _libc.mount(b"tmpfs", b"/tmp", b"tmpfs", ctypes.c_ulong(0), None) == 0)


# Once here, once in a forked child: the kernel refuses a new user namespace to a process with threads
# (torch may have started some), and a child of fork() has one.
if _try_mount():
    raise RuntimeError("ESCAPED: mounted a tmpfs on /tmp")
_child = os.fork()
if _child == 0:
    os._exit(0 if _try_mount() else 1)
if os.waitstatus_to_exitcode(os.waitpid(_child, 0)[1]) == 0:
    raise RuntimeError("ESCAPED: a forked child mounted a tmpfs on /tmp")


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
