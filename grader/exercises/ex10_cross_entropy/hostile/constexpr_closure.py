"""Hostile submission, exercise 10 (cross-entropy): eager cross-entropy in a Python function passed as a constexpr.

Triton's interpreter calls a constexpr argument as Python inside the launch, where the grader's
watch took every torch op (and every allocation) for Triton's own: the eager loss and gradient,
with their (T, V) temporaries, passed the memory and traffic checks too.
"""

import torch
import triton
import triton.language as tl

ATTACK = ("passes a closure that computes the loss and the gradient with eager torch (softmax, log_softmax, a (T, V) "
          "gradient) as a tl.constexpr argument and calls it in a kernel that stores nothing: the closure runs "
          "inside the launch, where the torch-op watch took every op and allocation for Triton's own")
KIND = "outside_watch"
WRONG_UNDERNEATH = False
#: What a static check of this file can name (empty: nothing it can see).
STATIC_FLAGS = ()
REJECTED_BY = ("the kernel-argument rule (grader.learner.interpreter_fixes.kernel_arguments), in the interpreter and on a "
               "GPU: a constexpr holds a number, a string, a dtype, a jitted function or a tuple of them, never a "
               "Python function; the sentence says to make it a @triton.jit function")


@triton.jit
def noop_kernel(loss_ptr, SIDE: tl.constexpr):
    SIDE()


def _eager(logits, target, ignore_index, loss):
    valid = target != ignore_index
    rows = torch.arange(logits.shape[0], device=logits.device)[valid]
    picked = target[valid]
    count = valid.sum().clamp(min=1).float()
    full = logits.float()
    loss.copy_(-torch.log_softmax(full, dim=-1)[rows, picked].sum() / count)
    grad = torch.softmax(full, dim=-1)
    grad[rows, picked] -= 1.0
    grad[~valid] = 0.0
    logits.copy_((grad / count).to(logits.dtype))


def cross_entropy(logits, target, ignore_index=-100):
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    noop_kernel[(1,)](loss, SIDE=lambda: _eager(logits, target, ignore_index, loss))
    return loss
