"""Exercise 2's part of every attack of tests/hostile/every_exercise/: the answer an attack computes
where the grader's watch does not look, the wrong kernel a forged verdict would have to pass, and the
byte model (right: the attacks are about the kernel). tests/hostile_corpus.py writes each submission
from the attack and this file."""

import math

import torch
import triton
import triton.language as tl

#: The kernel under the attacks whose kernel is wrong (their ATTACK and REJECTED_BY name it).
WRONG_KERNEL = "a kernel that adds the bias after the GELU"


@triton.jit
def gelu_then_bias_kernel(x_ptr, bias_ptr, out_ptr, n_elements, N, x_row_stride, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    row = offsets // N
    col = offsets % N
    x = tl.load(x_ptr + row * x_row_stride + col, mask=mask).to(tl.float32)
    b = tl.load(bias_ptr + col, mask=mask).to(tl.float32)
    # WRONG on purpose: gelu(x) + bias, not gelu(x + bias). Only a forged verdict passes it.
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offsets, (g + b).to(out_ptr.dtype.element_ty), mask=mask)


def wrong_kernel(x, bias):
    M, N = x.shape
    out = torch.empty_like(x)  # contiguous (empty_like of a view with gaps is contiguous)
    n = M * N
    gelu_then_bias_kernel[(triton.cdiv(n, 1024),)](x, bias, out, n, N, x.stride(0), BLOCK=1024)
    return out


def torch_answer(x, bias):
    return torch.nn.functional.gelu(x.double() + bias.double()).to(x.dtype)


def numpy_answer(np, x, bias):
    """GELU(x + bias) on float64 arrays, with the exact erf (``np``: the attack's numpy module)."""
    z = x + bias
    return 0.5 * z * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


def fused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size


def unfused_bytes(m, n, element_size):
    return (4 * m * n + n) * element_size
