"""Checks for exercise 10, cross-entropy over a large vocabulary:
``cross_entropy(logits, target, ignore_index=-100) -> loss``, the gradient written into ``logits``.

``logits`` is (T, V), fp32, fp16 or bf16, any row stride; ``target`` (T,) int64. The loss is the
mean over the ``count`` rows whose target is not ``ignore_index`` (0 when every row is ignored), a
0-dim float32 tensor. After the call ``logits`` holds the gradient of the loss,
``(softmax(x_r) - one_hot(target_r)) / count`` on counted rows and exactly 0 on ignored rows.

Byte model (`minimum_bytes`, which the learner also writes): the logits read twice (the online
log-sum-exp, then the gradient pass) and written once, the targets read once (int64, 8 bytes a
row), the float32 loss written once: ``3·T·V·element_size + 8·T + 4``. A row of V = 128256 bf16
logits is 250 KiB, more than one program's registers, so the second read is the price of the
algorithm; but it is not always a trip to HBM: hundreds of rows in flight are about the size of an
H200's L2, which can serve part of the second read. The performance check therefore also passes the
bytes the memory must move at least, one read and one write (`least_hbm_bytes`), to tell a cache hit
from a measurement error.

The gradient is written in place (``checks.run_case(..., inplace={"logits": ...})``): every element
of the view must be overwritten and its guards and row gaps left alone. `test_no_vocabulary_sized_buffer`
holds the memory a call allocates to O(T): on a GPU the allocator's peak, in the interpreter the sizes
of the tensors the call allocates.

When an answer is wrong, the spec recomputes it the ways the known pitfalls compute it (for every
power-of-two block size where the pitfall depends on it) and names the one the learner's loss or
gradient matches, before the usual mismatch listing.
"""

from __future__ import annotations

import math

import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.wire import guards
from grader.judge.compare import DEFAULT_TOLERANCES, Tolerance, dtype_name, expect_close
from grader.wire.failures import GradeFailure


#: The stub's launcher reads 32 KiB of logits per loop iteration: 8192 fp32 or 16384 bf16 columns.
LAUNCHER_BLOCK_BYTES = 32768
B32, B16 = 8192, 16384
#: (T, V, dtype): one column, tiny rows and odd sizes in both dtypes; a block - 1 and + 1 of the
#: launcher's block for each dtype (8192 fp32 columns, 16384 bf16), and rows of several blocks with a
#: ragged tail. Llama 3's 128256 columns on a GPU (LONG).
F32, BF16 = torch.float32, torch.bfloat16
MAIN = [(1, 1, F32), (1, 1, BF16), (3, 2, F32), (3, 2, BF16), (4, 3, F32), (4, 3, BF16), (6, 781, F32),
        (6, 781, BF16), (3, B32 - 1, F32), (3, B32 + 1, F32), (4, B16 - 1, BF16), (4, B16 + 1, BF16),
        (3, 3 * B32 + 5, F32), (3, 2 * B16 + 5, BF16)]
#: Rows of the pattern, ignored-row and padding checks: three fp32 blocks and a 5-column tail (a
#: bf16 block and a half).
PATTERN_V = 3 * B32 + 5
#: Targets on both sides of every block edge of both launcher blocks, and the last column.
EDGE_TARGETS = (0, B32 - 1, B32, B32 + 1, B16 - 1, B16, B16 + 1, PATTERN_V - 1)
#: Long rows: eight fp32 blocks and a tail in the interpreter; Llama 3's vocabulary (and one more
#: column, an odd row that no 16-byte load can align) on a GPU.
LONG = {"interpreter": [(3, 8 * B32 + 3)], "gpu": [(5, 128256), (7, 128257)]}
#: The memory check: (T, V, dtype).
MEMORY = {"interpreter": (6, PATTERN_V, torch.float32), "gpu": (2048, 128256, torch.bfloat16)}
#: The performance check: Llama 3's vocabulary, bf16, T rows (fewer where the GPU's memory is small).
PERF_T, PERF_V = 8192, 128256
#: count, the main kernel and the sum of the row losses, or a separate statistics and gradient kernel.
MAX_LAUNCHES = 4

NEG_INF = float("-inf")
#: fp32's largest x with a finite exp(x).
EXP_OVERFLOW = 88.72


def minimum_bytes(T: int, V: int, element_size: int) -> int:
    """Fewest bytes the two-pass cross-entropy moves: the logits read twice and written once (the
    gradient), each int64 target read once, the float32 loss written once."""
    return 3 * T * V * element_size + 8 * T + 4


def least_hbm_bytes(T: int, V: int, element_size: int) -> int:
    """What the memory must move even if the L2 served every second read: one read and one write."""
    return 2 * T * V * element_size + 8 * T + 4


def launcher_block(dtype: torch.dtype, V: int) -> int:
    """The block the stub's launcher uses."""
    size = torch.empty((), dtype=dtype).element_size()
    return min(LAUNCHER_BLOCK_BYTES // size, 1 << max(0, math.ceil(math.log2(max(V, 1)))))


# --- the answer -------------------------------------------------------------------------------

def _counted(target: torch.Tensor, ignore_index: int) -> tuple[torch.Tensor, int]:
    keep = target != ignore_index
    return keep, max(int(keep.sum()), 1)


def _one_hot(target: torch.Tensor, keep: torch.Tensor, V: int) -> torch.Tensor:
    hot = torch.zeros((target.shape[0], V), dtype=torch.float64)
    rows = keep.nonzero().flatten()
    hot[rows, target[rows]] = 1.0
    return hot


def _loss_and_grad(x: torch.Tensor, target: torch.Tensor, keep: torch.Tensor, lse: torch.Tensor,
                   x_target: torch.Tensor, p: torch.Tensor, hot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    count = max(int(keep.sum()), 1)
    row_loss = torch.where(keep, lse - x_target, torch.zeros_like(lse))
    grad = (p - hot) / count
    grad[~keep] = 0.0
    return row_loss.sum() / count, grad


def reference(logits: torch.Tensor, target: torch.Tensor, ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, gradient) in float64 on the CPU: the mean over counted rows (0 if none), and
    (softmax - one_hot) / count, 0 on ignored rows."""
    x = logits.detach().double().cpu()
    t = target.detach().cpu().long()
    keep, _ = _counted(t, ignore_index)
    lse = torch.logsumexp(x, dim=1)
    safe = torch.where(keep, t, torch.zeros_like(t))
    x_target = x.gather(1, safe[:, None])[:, 0]
    return _loss_and_grad(x, t, keep, lse, x_target, torch.softmax(x, dim=1), _one_hot(t, keep, x.shape[1]))


#: The loss is computed in float32 from whatever dtype the logits have: rounding of the sums only.
LOSS_TOLERANCE = Tolerance(rtol=2e-5, atol=1e-6)


def grad_tolerance(dtype: torch.dtype, x: torch.Tensor) -> Tolerance:
    """The dtype's tolerance; in float32, exp(x - lse) with |x| and |lse| near L carries an error of
    about L · 2^-24 in its argument, so large logits (the `huge` pattern) get that much more."""
    tol = DEFAULT_TOLERANCES[dtype]
    if dtype != torch.float32:
        return tol
    finite = x[torch.isfinite(x)]
    largest = float(finite.abs().max()) if finite.numel() else 0.0
    return Tolerance(rtol=max(tol.rtol, 4 * largest * 2.0 ** -24), atol=tol.atol)


# --- the wrong answers the known pitfalls give ---------------------------------------------------

def _blocks(x: torch.Tensor, block: int, fill: float = NEG_INF) -> torch.Tensor:
    """x (T, V) as (T, blocks, block), the tail padded with ``fill``, as a kernel loading with other=fill."""
    T, V = x.shape
    count = -(-V // block)
    padded = torch.full((T, count * block), fill, dtype=x.dtype)
    padded[:, :V] = x
    return padded.view(T, count, block)


def _exp_minus(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.where(a == NEG_INF, torch.zeros_like(a), torch.exp(a - b))


class Case:
    """One graded input, in float64 on the CPU, with the pieces every pitfall is built from."""

    def __init__(self, logits: torch.Tensor, target: torch.Tensor, ignore_index: int):
        self.x = logits.detach().double().cpu()
        self.dtype = logits.dtype
        self.target = target.detach().cpu().long()
        self.ignore_index = ignore_index
        self.T, self.V = self.x.shape
        self.keep, self.count = _counted(self.target, ignore_index)
        self.lse = torch.logsumexp(self.x, dim=1)
        safe = torch.where(self.keep, self.target, torch.zeros_like(self.target))
        self.x_target = self.x.gather(1, safe[:, None])[:, 0]
        self.p = torch.softmax(self.x, dim=1)
        self.hot = _one_hot(self.target, self.keep, self.V)
        self.loss, self.grad = _loss_and_grad(self.x, self.target, self.keep, self.lse, self.x_target, self.p,
                                              self.hot)

    def with_lse(self, lse: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and gradient of a kernel whose only mistake is this log-sum-exp."""
        p = _exp_minus(self.x, lse[:, None])
        return _loss_and_grad(self.x, self.target, self.keep, lse, self.x_target, p, self.hot)

    # Each returns (loss, grad) in float64, either of them None where the mistake does not touch it.

    def block_column(self, block: int):
        """The target compared with the block's lane numbers (cols == target): x_target adds up lane t of
        every block when t < block (the padded lanes of the last block hold -inf) and is 0 otherwise,
        and pass 2 puts its -1 in each of those columns."""
        cols = torch.arange(self.V)
        inside = (self.target < block) & self.keep
        hit = ((cols[None, :] % block) == self.target[:, None]) & inside[:, None]
        lanes = _blocks(self.x, block)  # (T, blocks, block), -inf past V
        lane = torch.where(inside, self.target, torch.zeros_like(self.target)).clamp(max=block - 1)
        picked = lanes.gather(2, lane[:, None, None].expand(-1, lanes.shape[1], 1))[..., 0].sum(dim=1)
        x_target = torch.where(inside, picked, torch.zeros_like(picked))
        return _loss_and_grad(self.x, self.target, self.keep, self.lse, x_target, self.p, hit.double())

    def tail_lanes(self, block: int):
        """The lanes past V loaded as 0 and added to the sum (and to the max)."""
        k = -(-self.V // block) * block - self.V
        if k == 0:
            return None, None
        m = torch.clamp(self.x.amax(dim=1), min=0.0)
        d = _exp_minus(self.x, m[:, None]).sum(dim=1) + k * torch.exp(-m)
        return self.with_lse(m + torch.log(d))

    def rescale_missing(self, block: int):
        """d accumulated against the running max, never multiplied by exp(m_old - m_new)."""
        blocks = _blocks(self.x, block)
        running = torch.cummax(blocks.amax(dim=-1), dim=1).values
        d = _exp_minus(blocks, running[..., None]).sum(dim=(1, 2))
        return self.with_lse(running[:, -1] + torch.log(d))

    def stored_in_pass_one(self, block: int):
        """The gradient written in pass 1 with the log-sum-exp of the blocks read so far."""
        blocks = _blocks(self.x, block)
        running = torch.logcumsumexp(torch.logsumexp(blocks, dim=-1), dim=1)
        p = _exp_minus(blocks, running[..., None]).reshape(self.T, -1)[:, : self.V]
        grad = (p - self.hot) / self.count
        grad[~self.keep] = 0.0
        return None, grad

    def mean_over_all_rows(self):
        if self.count == self.T or not bool(self.keep.any()):
            return None, None
        scale = self.count / self.T
        return self.loss * scale, self.grad * scale

    def ignore_index_unused(self):
        if self.ignore_index == -100:
            return None, None
        return reference(self.x, self.target, -100)

    def target_after_gradient(self):
        """x[target] read after pass 2 wrote the gradient there (rounded to the logits' dtype)."""
        safe = torch.where(self.keep, self.target, torch.zeros_like(self.target))
        written = self.grad.to(self.dtype).double().gather(1, safe[:, None])[:, 0]
        row_loss = torch.where(self.keep, self.lse - written, torch.zeros_like(self.lse))
        return row_loss.sum() / self.count, None

    def not_divided(self):
        if self.count == 1:
            return None, None
        return None, self.grad * self.count


BLOCK_COLUMN = ("the target was looked up as a column of the block instead of the row: `cols == target` compares "
                "the target with the lane numbers 0 .. BLOCK-1, which repeat in every block, so a target past "
                "the first block is never found and one inside it is found again in every later block. Column j of "
                "the block that starts at `start` is `start + cols`: compare `start + cols == target`, in both passes")
TAIL_LANES = ("the lanes past the end of the row (the mask past V) were added to the sum: they were loaded as 0 "
              "(other=0, or no `other`), so each added exp(0 - m) to d, and 0 took part in the max. Load them "
              "with other=float(\"-inf\"), which adds exp(-inf) = 0")
RESCALE = ("the running sum was not rescaled when the max changed: when a block raises the running max from "
           "m_old to m_new, the sum so far is a sum of exp(x - m_old) and must be multiplied by "
           "exp(m_old - m_new) before the block's own terms are added (exercise 5)")
PASS_ONE = ("the gradient was stored in pass 1, with the max and sum of the blocks read so far, so only the last "
            "block's gradient is right: softmax needs the row's final log-sum-exp, which exists only after the "
            "whole row has been read. Finish pass 1, then read the row again to write the gradient")
IGNORED_IN_MEAN = ("rows whose target is ignore_index were counted in the mean: the loss is the sum of the counted "
                   "rows' losses divided by count, the number of rows whose target is not ignore_index (not by T), "
                   "and each counted row's gradient is divided by count too")
IGNORE_INDEX_UNUSED = ("the `ignore_index` argument was not used: here ignore_index = {index}, and the rows whose "
                       "target is {index} were counted as class {index}. Compare each target with the "
                       "ignore_index argument, not with -100")
TARGET_AFTER_GRADIENT = ("the target's logit was read after its row had been overwritten with the gradient: the "
                         "loss used grad[target] = (p - 1) / count instead of x[target]. Pick x[target] out of its "
                         "block in pass 1 (or load it before pass 2 writes over the row)")
NOT_DIVIDED = ("the gradient was not divided by count: the loss is a mean over the count counted rows, so each "
               "counted row's gradient is (softmax - one_hot) / count")
NO_MAX = ("the log-sum-exp overflowed: these logits reach {top:.0f}, and exp(x) overflows float32 above 88.7, so "
          "a sum of exp(x) without the max subtracted is inf. Compute lse = m + log(sum(exp(x - m))) with m the "
          "row's running max, as exercise 5 does: every term is then at most 1")
INF_BLOCK = ("a block whose logits are all -inf gave NaN: while the running max is still -inf, "
             "exp(m_old - m_new) = exp(-inf - (-inf)) is NaN and it poisons the sum; measure against 0 while the max "
             "is -inf (`m_ref = tl.where(m_new == float(\"-inf\"), 0.0, m_new)`), as in exercise 5")
ALL_IGNORED = ("every row of this batch is ignored, so count = 0 and the mean is 0 / 0: this exercise returns a loss "
               "of 0 (divide by max(count, 1)), and every element of the gradient is 0")

#: (message, method of Case, whether it depends on the block size), in the order they are tried.
PITFALLS = (
    (BLOCK_COLUMN, "block_column", True),
    (TAIL_LANES, "tail_lanes", True),
    (RESCALE, "rescale_missing", True),
    (PASS_ONE, "stored_in_pass_one", True),
    (IGNORED_IN_MEAN, "mean_over_all_rows", False),
    (IGNORE_INDEX_UNUSED, "ignore_index_unused", False),
    (TARGET_AFTER_GRADIENT, "target_after_gradient", False),
    (NOT_DIVIDED, "not_divided", False),
)


def _block_sizes(V: int, dtype: torch.dtype) -> list[int]:
    """Every power-of-two block a kernel might use, 2 up to the first block >= V: the stub's first."""
    top = max(1, math.ceil(math.log2(max(V, 2))))
    sizes = [1 << p for p in range(top, 0, -1)]
    first = launcher_block(dtype, V)
    return [first] + [b for b in sizes if b != first]


def _loss_close(got: float, wrong: float, slack: float = 1.0) -> bool:
    if not math.isfinite(wrong):
        return got == wrong or (math.isnan(got) and math.isnan(wrong))
    return abs(got - wrong) <= slack * (1e-4 * abs(wrong) + 1e-6)


def _grad_close(got: torch.Tensor, wrong: torch.Tensor, tol: Tolerance, slack: float = 2.0) -> bool:
    finite = torch.isfinite(wrong)
    if not bool(((got == wrong) | (torch.isnan(got) & torch.isnan(wrong)))[~finite].all()):
        return False
    scale = (float(wrong[finite].abs().max()) if bool(finite.any()) else 1.0) or 1.0
    bound = slack * (tol.rtol * wrong.abs() + tol.atol * scale)
    return bool(((got - wrong).abs() <= bound)[finite].all())


def _non_finite_named(case: Case, got_rows: torch.Tensor) -> str | None:
    """NaN or inf where the answer is finite: the overflow of an exp without the max, or a block of -inf."""
    top = float(case.x[torch.isfinite(case.x)].max()) if bool(torch.isfinite(case.x).any()) else 0.0
    if top > EXP_OVERFLOW:
        return NO_MAX.format(top=top)
    bad_rows = got_rows & case.keep
    if bool(bad_rows.any()) and bool((case.x[bad_rows, 0] == NEG_INF).all()):
        return INF_BLOCK
    return None


def diagnose(case: Case, *, loss: float | None = None, grad: torch.Tensor | None = None) -> str | None:
    """The pitfall that explains a wrong ``loss`` (a float) or a wrong ``grad`` (float64, (T, V)), or None."""
    if loss is not None and not math.isfinite(loss):
        if case.count == 1 and not bool(case.keep.any()):
            return ALL_IGNORED
        named = _non_finite_named(case, torch.ones(case.T, dtype=torch.bool))
        if named:
            return named
    if grad is not None and not bool(torch.isfinite(grad).all()):
        named = _non_finite_named(case, ~torch.isfinite(grad).all(dim=1))
        if named:
            return named
    tol = grad_tolerance(case.dtype, case.x)
    truth_grad = case.grad.to(case.dtype).double() if grad is not None else None
    for message, method, by_block in PITFALLS:
        for block in (_block_sizes(case.V, case.dtype) if by_block else [None]):
            wrong_loss, wrong_grad = getattr(case, method)(*(() if block is None else (block,)))
            # A wrong way explains an answer when the answer matches it and it is clearly not the right
            # answer (at least four times the tolerance away): one that nearly gives the right answer
            # on this input explains nothing.
            if loss is not None and wrong_loss is not None:
                wrong = float(wrong_loss)
                if _loss_close(loss, wrong) and not _loss_close(float(case.loss), wrong, slack=4.0):
                    return message.format(index=case.ignore_index)
            if grad is not None and wrong_grad is not None:
                wrong = wrong_grad.to(case.dtype).double()
                if _grad_close(grad, wrong, tol) and not _grad_close(truth_grad, wrong, tol, slack=4.0):
                    return message.format(index=case.ignore_index)
    return None


# --- the checks of one call --------------------------------------------------------------------

def _describe(case: Case) -> str:
    ignored = case.T - int(case.keep.sum())
    return (f"T = {case.T}, V = {case.V}, {dtype_name(case.dtype)}, {ignored} of {case.T} rows ignored"
            + (f" (ignore_index = {case.ignore_index})" if case.ignore_index != -100 else ""))


def check_loss(case: Case):
    """The `expected` callable for run_case: the loss against float64, the pitfall named on a mismatch."""
    def check(result) -> None:
        try:
            expect_close(result, case.loss, name="loss", dtype=torch.float32, tolerance=LOSS_TOLERANCE)
        except GradeFailure as failure:
            text = str(failure)
            if not isinstance(result, torch.Tensor) or result.shape != () or "unwritten" in text \
                    or result.dtype != torch.float32:
                raise
            named = diagnose(case, loss=float(result.detach().double().cpu()))
            if named:
                raise GradeFailure(f"{named} ({_describe(case)}). {failure}") from None
            raise GradeFailure(f"{_describe(case)}: {failure}") from None

    return check


def _check_ignored_rows(case: Case, got: torch.Tensor, original: torch.Tensor) -> None:
    """Rows whose target is ignore_index must hold exact zeros (a tolerance would excuse small values)."""
    ignored = (~case.keep).nonzero().flatten()
    if not ignored.numel():
        return
    rows = got[ignored]
    nonzero = rows != 0
    if not bool(nonzero.any()):
        return
    which = int(ignored[nonzero.any(dim=1).nonzero()[0, 0]])
    first = got[which][got[which] != 0][0].item()
    untouched = bool((rows.double() == original.detach().cpu()[ignored].double()).all())
    if untouched:
        raise GradeFailure(
            f"the ignored rows still hold their logits: row {which} has target = ignore_index "
            f"({case.ignore_index}), and its gradient is exactly zero (it adds nothing to the loss). Store zeros "
            f"over the whole row; there is no need to read it ({_describe(case)})")
    raise GradeFailure(
        f"the gradient of ignored rows must be exactly zero: row {which} has target = ignore_index "
        f"({case.ignore_index}) but {int(nonzero[ignored.tolist().index(which)].sum())} of its elements are not 0 "
        f"(the first is {first:.6g}). An ignored row adds nothing to the loss, so nothing flows back to its "
        f"logits: store zeros over it, whatever its logits hold ({_describe(case)})")


def check_gradient(case: Case, original: torch.Tensor):
    """The in-place check of `logits`: written everywhere, exact zeros on ignored rows, then the gradient
    against float64, the pitfall named on a mismatch. ``original`` is the logits as handed over."""
    tol = grad_tolerance(case.dtype, case.x)

    def check(view: torch.Tensor) -> None:
        got_bits = view.detach()
        if bool((guards.bits_view(got_bits) == guards.bits_view(original.to(view.device))).all()):
            checks.expect_overwritten("logits", view, original, case.grad, tolerance=tol)  # says it plainly
        got = view.detach().double().cpu()
        _check_ignored_rows(case, got, original)
        try:
            checks.expect_overwritten("logits", view, original, case.grad, tolerance=tol)
        except GradeFailure as failure:
            text = str(failure)
            if "unchanged" in text:
                raise GradeFailure(f"{text} ({_describe(case)})") from None
            named = diagnose(case, grad=got)
            if named:
                raise GradeFailure(f"{named} ({_describe(case)}). The gradient in {failure}") from None
            raise GradeFailure(f"{_describe(case)}: the gradient in {failure}") from None

    return check


def run(fn, logits: torch.Tensor, target: torch.Tensor, *, ignore_index: int = -100) -> checks.CaseReport:
    """Grade one call. ``ignore_index`` is passed only when it is not the default, so the default is graded too."""
    case = Case(logits, target, ignore_index)
    kwargs = {} if ignore_index == -100 else {"ignore_index": ignore_index}
    # allow_fill: a learner who accumulates the loss with tl.atomic_add starts from torch.zeros((), ...),
    # one 4-byte fill, not a pass over an output.
    return checks.run_case(fn, {"logits": logits, "target": target}, check_loss(case), kwargs=kwargs,
                           inplace={"logits": check_gradient(case, logits)}, max_launches=MAX_LAUNCHES,
                           allow_fill=True)


# --- inputs -----------------------------------------------------------------------------------

def make_inputs(T: int, V: int, dtype: torch.dtype, rng: torch.Generator, device: str, *, ignored: float = 0.25,
                ignore_index: int = -100, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal logits and random targets; about ``ignored`` of the rows get ignore_index (row 0 never,
    the middle row always when T >= 3)."""
    logits = checks.randn((T, V), dtype, rng, device, scale=scale)
    target = torch.randint(0, V, (T,), generator=rng)
    drop = torch.rand((T,), generator=rng) < ignored
    drop[0] = False
    if T >= 3 and ignored > 0:
        drop[T // 2] = True
    target[drop] = ignore_index
    return logits, target.to(device)


def _pattern(name: str, dtype: torch.dtype, rng: torch.Generator, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows built to break one idea each; the comments say which."""
    T, V = 4, PATTERN_V
    x = torch.randn((T, V), generator=rng)
    target = torch.randint(0, V, (T,), generator=rng)
    if name == "huge":
        # Logits up to about +-130: exp(x) overflows float32 above 88.7 unless the max is subtracted.
        x = x * 30.0
    elif name == "all_negative":
        # Every logit near -40: a lane past V loaded as 0 becomes the max and outweighs the whole row.
        x = x - 40.0
    elif name == "late_spike":
        # The max arrives in the last block (row 0) and mid-row (row 1): an unrescaled sum is off by e^20.
        x[0, V - 2] = 25.0
        x[1, V // 2 + 1] = 25.0
        x[2, V - 4] = 25.0
    elif name == "negative_start":
        # The first 40% of every row near -30, then ordinary logits: the running max jumps after block 1.
        x[:, : (2 * V) // 5] -= 30.0
    elif name == "masked_vocab":
        # Masked logits: scattered -inf (never the target) and, in row 1, a leading stretch of -inf longer
        # than a block; their softmax, and so their gradient, is exactly 0.
        x[torch.rand((T, V), generator=rng) < 0.1] = NEG_INF
        x[1, : (3 * V) // 5] = NEG_INF
        target[1] = V - 1
        x[torch.arange(T), target] = torch.randn((T,), generator=rng)
    else:  # pragma: no cover - a typo in PATTERNS
        raise ValueError(name)
    return x.to(dtype).to(device), target.to(device)


PATTERNS = ["huge", "all_negative", "late_spike", "negative_start", "masked_vocab"]
PATTERN_CASES = [(p, torch.float32) for p in PATTERNS] + [(p, torch.bfloat16) for p in ("huge", "all_negative")]
#: (name, T, ignored fraction or "all", ignore_index, dtype)
IGNORED_CASES = [("quarter", 8, 0.25, -100, torch.float32), ("quarter", 8, 0.25, -100, torch.bfloat16),
                 ("custom_index", 8, 0.4, 3, torch.float32), ("one_counted", 5, 1.0, -100, torch.float32),
                 ("all_ignored", 5, "all", -100, torch.float32), ("all_ignored", 3, "all", -100, torch.bfloat16)]


# --- the checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("T,V,dtype", MAIN, ids=[f"{T}x{V}-{checks.dtype_id(d)}" for T, V, d in MAIN])
def test_matches_reference(learner_function, T, V, dtype, rng, device):
    run(learner_function, *make_inputs(T, V, dtype, rng, device))


def test_float16(learner_function, rng, device):
    run(learner_function, *make_inputs(5, 3 * B32 + 5, torch.float16, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_targets_at_block_edges(learner_function, dtype, rng, device):
    """Targets on both sides of every block edge: a target looked up as a column of the block is found
    in the wrong block, or never."""
    logits = checks.randn((len(EDGE_TARGETS), PATTERN_V), dtype, rng, device)
    run(learner_function, logits, torch.tensor(EDGE_TARGETS, device=device))


@pytest.mark.parametrize("name,T,ignored,ignore_index,dtype", IGNORED_CASES,
                         ids=[f"{c[0]}-{checks.dtype_id(c[4])}" for c in IGNORED_CASES])
def test_ignored_rows(learner_function, name, T, ignored, ignore_index, dtype, rng, device):
    if ignored == "all":
        logits = checks.randn((T, PATTERN_V), dtype, rng, device)
        target = torch.full((T,), ignore_index, dtype=torch.int64, device=device)
    else:
        logits, target = make_inputs(T, PATTERN_V, dtype, rng, device, ignored=ignored, ignore_index=ignore_index)
        if name == "one_counted":
            target = torch.full_like(target, ignore_index)
            target[T - 1] = 5
    run(learner_function, logits, target, ignore_index=ignore_index)


@pytest.mark.parametrize("pattern,dtype", PATTERN_CASES, ids=[f"{p}-{checks.dtype_id(d)}" for p, d in PATTERN_CASES])
def test_logit_pattern(learner_function, pattern, dtype, rng, device):
    run(learner_function, *_pattern(pattern, dtype, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_padded_vocabulary(learner_function, dtype, rng, device):
    """Rows 59 elements further apart than V (a vocabulary padded to a multiple of 64 and sliced back):
    the gaps hold NaN; a kernel that steps by V reads them, one that stores past V writes them."""
    logits, target = make_inputs(5, PATTERN_V, dtype, rng, device)
    padded = -(-PATTERN_V // 64) * 64
    run(learner_function, checks.with_row_stride(logits, padded), target)


@pytest.mark.parametrize("index", range(len(LONG["gpu"])), ids=[f"long{i}" for i in range(len(LONG["gpu"]))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=checks.dtype_id)
def test_long_rows(learner_function, index, dtype, rng, device, mode):
    cases = LONG[mode]
    if index >= len(cases):
        pytest.skip("rows of Llama 3's 128256 columns are checked on a GPU only; the interpreter runs rows of "
                    f"{LONG['interpreter'][0][1]} columns (long0)")
    T, V = cases[index]
    report = run(learner_function, *make_inputs(T, V, dtype, rng, device))
    for launch in report.launches:
        for name, value in launch.arguments.items():
            if name.upper().startswith("BLOCK") and isinstance(value, int) and not isinstance(value, bool) \
                    and value >= V:
                raise GradeFailure(
                    f"each row was read as one block ({name} = {value} >= V = {V}): this exercise is about rows "
                    f"longer than any block. Keep the stub's block ({launcher_block(dtype, V)} columns here) and walk "
                    "the row in a loop; a block of a whole 128256-column row needs hundreds of registers a thread, "
                    "far more than a program has")


def _memory_message(T: int, V: int, dtype: torch.dtype, report: checks.MemoryReport, budget: int) -> str:
    mib = 1 << 20
    full = T * V * 4
    largest = max(report.allocations, key=lambda a: a[2]) if report.allocations else None
    what = f"; the largest was a {list(largest[0])} {largest[1]} tensor ({largest[2] / mib:.2f} MiB)" if largest else ""
    return (f"your call allocated {report.peak_bytes / mib:.2f} MiB beyond its inputs ({report.how}) for T = {T}, "
            f"V = {V}, {dtype_name(dtype)}{what}. A (T, V) float32 tensor would be {full / mib:.2f} MiB, and this "
            f"exercise allows only a few numbers per row ({budget / mib:.2f} MiB here): the gradient goes into "
            "`logits` itself, the loss needs one float per row and one for the count, and nothing of size V may be "
            "allocated (eager PyTorch allocates several (T, V) tensors)")


def test_no_vocabulary_sized_buffer(learner_function, rng, device, mode, check):
    """The memory one call allocates is O(T): 64 bytes a row and 64 KiB. No (T, V) or (T, BLOCK) scratch."""
    T, V, dtype = MEMORY[mode]
    if mode == "gpu":
        dtype = plan.torch_dtype(plan.half_dtype(plan.current_device()))  # float16 on a card without bfloat16
    logits, target = make_inputs(T, V, dtype, rng, device)
    want, _ = reference(logits, target, -100)
    report = checks.peak_memory(learner_function, {"logits": logits, "target": target})
    budget = 64 * T + 65536
    check.extra["memory"] = {"T": T, "V": V, "dtype": checks.dtype_id(dtype), "peak_bytes": report.peak_bytes,
                             "how": report.how, "budget_bytes": budget, "logits_bytes": T * V * logits.element_size()}
    checks.require(report.peak_bytes <= budget, _memory_message(T, V, dtype, report, budget))
    # A call that allocates nothing because it did nothing must not pass.
    expect_close(report.result, want, name="loss", dtype=torch.float32, tolerance=Tolerance(rtol=1e-4, atol=1e-6),
                 poisoned=False)


def test_traffic(learner_function, rng, device):
    """Interpreter: each row read twice (statistics, then gradient) and written once: ratio 1.00 of the
    byte model (the targets, row losses and count are a few bytes a row)."""
    T, V = 4, PATTERN_V
    logits, target = make_inputs(T, V, torch.float32, rng, device, ignored=0.0)
    # Two reads of every row, and at most two more elements a row: a kernel that loads x[target] on its own
    # and, after pass 2, adds -1/count to the target's gradient moves those too.
    checks.expect_traffic(learner_function, {"logits": logits, "target": target},
                          minimum_bytes=minimum_bytes(T, V, 4), max_passes={"logits": 2.0 + 2.0 / V},
                          max_ratio=1.01, writable=("logits",),
                          lesson="one pass for the log-sum-exp, one to write the gradient")


# --- the byte model the learner writes -----------------------------------------------------------

BYTE_MODEL_CASES = [(8192, 128256, torch.bfloat16), (16384, 128256, torch.float32), (3, 1, torch.float32),
                    (7, 24581, torch.float16), (1, 5, torch.bfloat16)]


def _byte_model_mistakes(T: int, V: int, s: int) -> list[tuple[int, str]]:
    tv = T * V
    rest = 8 * T + 4
    return [
        (3 * tv + T + 1, "that counts elements, not bytes: multiply the logits by element_size, a target is 8 bytes "
                         "and the loss 4"),
        (3 * tv, "that counts elements, not bytes, and leaves out the targets and the loss"),
        (2 * tv * s + rest, "that reads the logits once: a row of 128256 logits does not fit on chip, so the gradient "
                            "pass reads it again (two reads and one write)"),
        (4 * tv * s + rest, "that moves the logits four times: the online log-sum-exp gets the max and the sum in "
                            "one pass, and the gradient overwrites the logits in the second (two reads and one write)"),
        (3 * tv * s, "the targets and the loss are missing: 8 bytes a row (int64 targets) and 4 bytes (the float32 loss)"),
        (3 * tv * s + 8 * T, "the loss is missing: 4 bytes, one float32"),
        (3 * tv * s + 4, "the targets are missing: one int64 (8 bytes) a row"),
        (3 * tv * s + T * s + 4, "the targets are int64, 8 bytes each whatever the logits' dtype"),
        (3 * tv * s + 8 * T + 4 * T + 4, "the row losses stay in your kernel's bookkeeping: the minimum counts the "
                                         "logits, the targets and the one float32 loss"),
    ]


def diagnose_byte_model(T: int, V: int, element_size: int, value) -> str | None:
    """None when ``value`` is the right count; otherwise the sentence the learner reads."""
    right = minimum_bytes(T, V, element_size)
    call = f"`minimum_bytes({T}, {V}, {element_size})`"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{call} returned {value!r} ({type(value).__name__}); it must return a number of bytes (an int)"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return f"{call} returned {value!r}; a count of bytes is a whole number"
    if int(value) == right:
        return None
    message = f"{call} returned {int(value):,} but the two-pass cross-entropy moves at least {right:,} bytes"
    mistakes = _byte_model_mistakes(T, V, element_size)
    named = [reason for count, reason in mistakes if count == int(value) and count != right]
    if len(named) == 1:
        return f"{message}: {named[0]}"
    return (f"{message}: the logits read twice and written once (3·T·V·element_size), each int64 target read "
            "once (8·T), the float32 loss written once (4)")


@pytest.fixture
def learner_byte_model(learner):
    fn = getattr(learner, "minimum_bytes", None)
    if not callable(fn):
        raise GradeFailure("your file does not define `minimum_bytes(T, V, element_size)`: keep the function the "
                           "stub defines")
    return fn


@pytest.mark.parametrize("case", BYTE_MODEL_CASES, ids=lambda c: f"{c[0]}x{c[1]}-{checks.dtype_id(c[2])}")
def test_byte_model(learner_byte_model, case, check):
    T, V, dtype = case
    size = torch.empty((), dtype=dtype).element_size()
    check.extra["byte_model"] = {"T": T, "V": V, "dtype": checks.dtype_id(dtype), "element_size": size,
                                 "minimum_bytes": minimum_bytes(T, V, size)}
    message = diagnose_byte_model(T, V, size, learner_byte_model(T, V, size))
    checks.require(message is None, message or "")


# --- performance (GPU only) ---------------------------------------------------------------------

def perf_rows(free_bytes: int, V: int = PERF_V) -> int:
    """PERF_T rows, fewer where the card's memory is small: the judge's smallest number of input sets (bf16
    logits and targets each) and, once, the eager comparison's (T, V) float32 tensors must fit in 60% of the free
    memory. Never fewer than 256 rows. (Dividing the free memory among the sets *and* charging every set
    the comparison's tensors gave an emulated 8 GiB H200 256 rows, two waves of its 132 SMs: the solution
    read 39% of the ceiling there.)"""
    from grader.judge import clock

    per_row = clock.SETS * (V * 2 + 8) + V * 4 * 4
    return max(256, min(PERF_T, int(free_bytes * 0.6) // per_row))


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: Llama 3's vocabulary in bfloat16 (float16, the same bytes, on a card
    without it), PERF_T rows or fewer where the card's memory is small (`perf_rows`)."""
    dtype = plan.half_dtype(device)
    T = perf_rows(free_bytes)
    one_set = T * PERF_V * 2 + T * 8
    return plan.PerformanceInput(label=f"T {T} x V {PERF_V:,} {dtype}, 2 reads + 1 write of the logits", dtype=dtype,
                                 data_bytes=least_hbm_bytes(T, PERF_V, 2),
                                 held_bytes=plan.timed_sets_bytes(one_set, free_bytes) + T * PERF_V * 4 * 4,
                                 sizes={"T": T, "V": PERF_V})


def _chunked_reference(x: torch.Tensor, target: torch.Tensor, rows: list[int]) -> tuple[float, torch.Tensor]:
    """The loss of a large bf16 input (float64 in chunks of rows), and the gradient of ``rows``."""
    total, T = 0.0, x.shape[0]
    for start in range(0, T, 256):
        chunk = x[start:start + 256].double()
        t = target[start:start + 256]
        total += float((torch.logsumexp(chunk, dim=1) - chunk.gather(1, t[:, None])[:, 0]).sum())
    picked = x[rows].double()
    grad = torch.softmax(picked, dim=1)
    grad[torch.arange(len(rows)), target[rows]] -= 1.0
    return total / T, grad / T


def test_performance(exercise, learner_function, mode, check):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    import torch.nn.functional as F

    _, timed = plan.here(__file__)
    T, V, dtype = timed.sizes["T"], timed.sizes["V"], plan.torch_dtype(timed.dtype)
    rows = sorted({0, T // 2, T - 1})
    label = timed.label

    def make_set(generator):
        x = torch.randn((T, V), device="cuda", generator=generator).to(dtype)
        target = torch.randint(0, V, (T,), device="cuda", generator=generator)
        return [x, target], {}

    def snapshot(args, kwargs):  # the answer, from the logits as they are before the call overwrites them
        x, target = args
        return _chunked_reference(x, target, rows)

    def verify(loss, args, kwargs, state):
        x, _ = args
        want_loss, want_rows = state
        got = float(loss)
        checks.require(abs(got - want_loss) <= 1e-4 * abs(want_loss),
                       f"the loss is {got:.6g} but should be {want_loss:.6g} at the benchmark size ({label})")
        try:
            expect_close(x[rows], want_rows, name="logits", dtype=dtype, poisoned=False)
        except GradeFailure as failure:
            raise GradeFailure(f"the gradient is wrong at the benchmark size ({label}): {failure}") from None

    element = 2
    try:
        checks.measure_bandwidth(learner_function, make_set, nbytes=minimum_bytes(T, V, element),
                                 floor=exercise.floor, verify=verify, label=label, snapshot=snapshot,
                                 output_like=lambda a, k: torch.empty((), dtype=torch.float32),
                                 least_hbm_bytes=least_hbm_bytes(T, V, element))
    finally:
        if check.performance is not None:
            _add_eager(check.performance, make_set, F)


def _add_eager(record, make_set, F) -> None:
    """Eager PyTorch beside the learner's figure: F.cross_entropy on the float32 logits (as training code
    upcasts them), then backward, by the same clock, with the memory it allocates. Left out if it does
    not fit."""
    from grader.judge import clock

    def eager(x, target):
        leaf = x.detach().float().requires_grad_(True)
        F.cross_entropy(leaf, target).backward()

    try:
        args, _ = make_set(torch.Generator(device="cuda").manual_seed(10))
        eager(*args)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        eager(*args)
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - before
        del args
        eager_ms = clock.time_local(eager, make_set, sets=2, rounds=3).ms
    except torch.cuda.OutOfMemoryError:
        record.lines.append("eager PyTorch: not measured (its (T, V) float32 tensors do not fit)")
        return
    finally:
        torch.cuda.empty_cache()
    record.details.update(eager_ms=round(eager_ms, 5), eager_extra_bytes=int(extra),
                          time_ratio=round(eager_ms / record.ms, 4))
    record.lines[:0] = [
        f"your kernel: {record.ms * 1000:.0f} µs, the gradient written into the logits",
        f"eager F.cross_entropy(logits.float(), target) + backward: {eager_ms * 1000:.0f} µs and "
        f"{extra / 2**30:.1f} GiB allocated beyond the logits ({eager_ms / record.ms:.1f}x your time)",
    ]
