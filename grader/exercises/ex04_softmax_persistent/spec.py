"""Checks for exercise 4, persistent softmax: ``softmax_persistent(x) -> Tensor``.

The contract of exercise 3 (rows of a 2-D tensor, any row stride, rows of up to 128 KiB in one
block: N up to 32768 in fp32 and 65536 in fp16/bf16, fp32/fp16/bf16,
exactly 0 for a -inf logit, NaN for a row that is entirely -inf, one launch, no fill), computed by
a grid of ``programs_per_sm x number of SMs`` programs, never more than the rows, each looping over
rows ``pid, pid + G, pid + 2G, ...``. Byte model: ``2 * M * N * element_size`` bytes.

The learner also writes the occupancy as two pure functions, checked on hand-computed cases
without a GPU:

    programs_per_sm(n_regs, shared_bytes, num_warps, *, regs_per_sm, smem_per_sm, threads_per_sm,
                    warp_size) -> int
        min(regs_per_sm // (n_regs * warp_size * num_warps),
            smem_per_sm // shared_bytes            (left out when shared_bytes == 0),
            threads_per_sm // (warp_size * num_warps))
    grid_size(n_rows, programs_per_sm, num_sms) -> int
        min(n_rows, programs_per_sm * num_sms)

The grid check then asks that the launched grid be what those functions give for the kernel that
was launched: on a GPU, for the ``CompiledKernel`` Triton returned from the launch (its
``n_regs``, ``metadata.shared`` and ``metadata.num_warps``) and this GPU's limits (Triton's
driver properties, as the stub's ``device_limits`` reads them); in the interpreter, which
compiles nothing, for the stand-ins below (the stub has the same numbers), which make a grid of
8 programs, so every row count above 8 runs the row loop more than once.
"""


import pytest
import torch

from grader import plan
from grader.judge import checks
from grader.learner.access_map import ShowCase
from grader.wire.failures import GradeFailure
from grader.exercises._shared import softmax_checks as sm


#: The interpreter's stand-ins (the same as INTERPRETER_KERNEL and INTERPRETER_GPU in the stub):
#: programs_per_sm = min(65536 // (64 * 32 * 4) = 8, 232448 // 100000 = 2, 2048 // 128 = 16) = 2.
INTERPRETER_KERNEL = {"n_regs": 64, "shared_bytes": 100_000, "num_warps": 4}
INTERPRETER_GPU = {"num_sms": 4, "regs_per_sm": 65536, "smem_per_sm": 232448, "threads_per_sm": 2048, "warp_size": 32}

#: Row lengths as in exercise 3, with more rows than the interpreter's 8 programs so the loop runs
#: two to five times; on a GPU, more rows than any occupancy grid (an H200 fits at most 2112).
COLS = [1, 2, 3, 781, 1823, 4097]
ROWS = {"interpreter": {1: 37, 2: 19, 3: 17, 781: 11, 1823: 9, 4097: 9}, "gpu": {n: 4099 for n in COLS}}
STRIDED = {"interpreter": (11, 781, 1000), "gpu": (4099, 1823, 2053)}
#: Rows of the longest-row check (`sm.max_cols` columns: 128 KiB per row). A 128 KiB row fills a
#: program's share of the register file and its pipeline buffer takes 128 KiB of shared memory: one
#: program per SM, so 401 rows make three rounds of the loop on an H200's 132 SMs. In the interpreter,
#: 9 rows on its grid of 8 programs run the loop twice.
LONGEST_ROWS = {"interpreter": 9, "gpu": 401}
SPECIAL = {"interpreter": (10, 781), "gpu": (4098, 1823)}
#: Row counts of the grid check: fewer rows than programs, about one round, several rounds (the
#: interpreter's grid is 8 programs; an H200's is at most 2112).
GRID_ROWS = {"few_rows": {"interpreter": 3, "gpu": 3}, "some_rows": {"interpreter": 8, "gpu": 1000},
             "many_rows": {"interpreter": 37, "gpu": 20011}}
GRID_COLS = 129
PERF_COLS = 4096

PROGRAMS_PER_SM_SIGNATURE = ("programs_per_sm(n_regs, shared_bytes, num_warps, *, regs_per_sm, smem_per_sm, "
                             "threads_per_sm, warp_size)")
GRID_SIZE_SIGNATURE = "grid_size(n_rows, programs_per_sm, num_sms)"

H200 = {"regs_per_sm": 65536, "smem_per_sm": 232448, "threads_per_sm": 2048, "warp_size": 32}
#: A laptop RTX 3050 (sm_86): 99 KiB of shared memory and 1536 threads per SM.
SM86 = {"regs_per_sm": 65536, "smem_per_sm": 101376, "threads_per_sm": 1536, "warp_size": 32}
#: (id, n_regs, shared_bytes, num_warps, limits, expected), each worked out by hand below.
OCCUPANCY_CASES = [
    # registers 65536 // (128 * 32 * 8) = 2; threads 2048 // 256 = 8; no shared memory.
    ("registers", 128, 0, 8, H200, 2),
    # registers 65536 // (40 * 32 * 8) = 6; shared memory 232448 // 49216 = 4; threads 8.
    ("shared_memory", 40, 49216, 8, H200, 4),
    # registers 65536 // (16 * 32 * 4) = 32; shared memory 232448 // 1024 = 227; threads 2048 // 128 = 16.
    ("threads", 16, 1024, 4, H200, 16),
    # registers 65536 // (96 * 32 * 16) = 1.33 -> 1; threads 2048 // 512 = 4: a program fits whole or not at all.
    ("rounds_down", 96, 0, 16, H200, 1),
    # registers 65536 // (32 * 32 * 4) = 16; shared memory 101376 // 33024 = 3; threads 1536 // 128 = 12.
    ("laptop_gpu", 32, 33024, 4, SM86, 3),
    # registers 65536 // (24 * 32 * 2) = 42; shared memory 101376 // 4096 = 24; threads 1536 // 64 = 24.
    ("two_limits_tie", 24, 4096, 2, SM86, 24),
]
#: (n_rows, programs_per_sm, num_sms, expected)
GRID_CASES = [(4096, 4, 132, 528), (100, 16, 132, 100), (528, 4, 132, 528), (1, 2, 132, 1), (9, 2, 4, 8), (7, 2, 4, 7)]


def minimum_bytes(n_rows: int, n_cols: int, element_size: int) -> int:
    """Fewest bytes a softmax can move: one read of x and one write of out."""
    return 2 * n_rows * n_cols * element_size


def occupancy(n_regs: int, shared_bytes: int, num_warps: int, *, regs_per_sm: int, smem_per_sm: int,
              threads_per_sm: int, warp_size: int) -> dict[str, int]:
    """Each limit of the occupancy model, by name (the grader's own, for its messages)."""
    threads = warp_size * num_warps
    limits = {"registers": regs_per_sm // (n_regs * threads), "threads": threads_per_sm // threads}
    if shared_bytes > 0:
        limits["shared memory"] = smem_per_sm // shared_bytes
    return limits


def _learner_call(learner, name: str, signature: str, *args, **kwargs):
    fn = getattr(learner, name, None)
    if not callable(fn):
        raise GradeFailure(f"your file does not define `{name}`: keep the functions the stub defines ({signature})")
    try:
        return fn(*args, **kwargs)
    except GradeFailure as failure:  # the learner's exception, as a sentence and a class name
        said = str(failure)
        if failure.raised == "TypeError":
            raise GradeFailure(f"`{name}` {said.removeprefix('your code ')}. Keep the stub's signature: "
                               f"{signature}") from None
        if failure.raised == "ZeroDivisionError":
            raise GradeFailure(f"{said}. Called as {name}{args}: a kernel that uses no shared memory "
                               "(shared_bytes = 0) has no shared-memory limit, so leave that limit out") from None
        raise


def _as_count(value, call: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__index__"):
        raise GradeFailure(f"{call} returned {value!r}, not a whole number of programs")
    if isinstance(value, float) and not value.is_integer():
        raise GradeFailure(f"{call} returned {value:g}: programs come whole, so each limit rounds down (`//`)")
    return int(value)


# --- the occupancy functions, without a GPU -------------------------------------------------

@pytest.mark.parametrize("case", OCCUPANCY_CASES, ids=lambda c: c[0])
def test_programs_per_sm(learner, case):
    _name, n_regs, shared_bytes, num_warps, limits, expected = case
    shown = (f"programs_per_sm(n_regs={n_regs}, shared_bytes={shared_bytes}, num_warps={num_warps}, "
             + ", ".join(f"{k}={v}" for k, v in limits.items()) + ")")
    got = _as_count(_learner_call(learner, "programs_per_sm", PROGRAMS_PER_SM_SIGNATURE,
                                  n_regs, shared_bytes, num_warps, **limits), shown)
    if got != expected:
        each = occupancy(n_regs, shared_bytes, num_warps, **limits)
        tightest = min(each, key=each.get)
        detail = ", ".join(f"{k} {v}" for k, v in each.items())
        no_smem = "; no shared memory, so no limit from it" if shared_bytes == 0 else ""
        raise GradeFailure(f"{shown} returned {got}, but {expected} programs fit (per SM, {detail}{no_smem}): "
                           f"the tightest limit wins, here {tightest}")


@pytest.mark.parametrize("case", GRID_CASES, ids=lambda c: f"rows{c[0]}_per_sm{c[1]}_sms{c[2]}")
def test_grid_size(learner, case):
    n_rows, per_sm, num_sms, expected = case
    shown = f"grid_size(n_rows={n_rows}, programs_per_sm={per_sm}, num_sms={num_sms})"
    got = _as_count(_learner_call(learner, "grid_size", GRID_SIZE_SIGNATURE, n_rows, per_sm, num_sms), shown)
    if got != expected:
        why = ("never more programs than rows: the extra programs would find no row to work on"
               if expected == n_rows else
               f"every SM filled to its occupancy: {per_sm} programs on each of {num_sms} SMs")
        raise GradeFailure(f"{shown} returned {got}, expected {expected}: {why}")


# --- the answer -----------------------------------------------------------------------------

def _programs(fn):
    """How many programs the persistent kernel ran: the diagnosis reads "only the first G rows
    written" as a missing row loop."""
    return lambda: sm.last_programs(fn)


def _check(fn, x, **kwargs):
    return sm.check(fn, x, grid=_programs(fn), **kwargs)


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
@pytest.mark.parametrize("n_cols", COLS, ids=lambda n: f"n{n}")
def test_matches_reference(learner_function, n_cols, dtype, rng, device, mode):
    _check(learner_function, sm.normal_rows((ROWS[mode][n_cols], n_cols), dtype, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_strided_rows(learner_function, dtype, rng, device, mode):
    n_rows, n_cols, row_stride = STRIDED[mode]
    x = sm.normal_rows((n_rows, n_cols), dtype, rng, device)
    sm.check_strided(learner_function, x, row_stride, grid=_programs(learner_function))


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_longest_row(exercise, learner_function, dtype, rng, device, mode):
    """128 KiB rows: 32768 float32 columns, 65536 float16 or bfloat16 columns, one block each."""
    x = sm.normal_rows((LONGEST_ROWS[mode], sm.max_cols(dtype)), dtype, rng, device)
    sm.check_longest(learner_function, x, exercise=exercise.number, grid=_programs(learner_function))


@pytest.mark.parametrize("dtype", checks.FLOAT_DTYPES, ids=checks.dtype_id)
def test_extreme_logits(learner_function, dtype, rng, device, mode):
    _check(learner_function, sm.extreme_rows(SPECIAL[mode], dtype, rng, device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=checks.dtype_id)
def test_masked_logits(learner_function, dtype, rng, device, mode):
    _check(learner_function, sm.masked_rows(SPECIAL[mode], dtype, rng, device))


def test_fully_masked_row(learner_function, rng, device, mode):
    x = sm.masked_rows(SPECIAL[mode], torch.float32, rng, device, fully_masked_row=1)
    checks.run_case(learner_function, {"x": x},
                    sm.expect_fully_masked(x, 1, grid=_programs(learner_function)), max_launches=1)


# --- the grid -------------------------------------------------------------------------------

def _device_limits() -> dict:
    """This GPU's limits, read as the stub's device_limits reads them."""
    import triton

    index = torch.cuda.current_device()
    props = triton.runtime.driver.active.utils.get_device_properties(index)
    threads = plan.current_device().max_threads_per_multiprocessor
    return {"num_sms": props["multiprocessor_count"], "regs_per_sm": props["max_num_regs"],
            "smem_per_sm": props["max_shared_mem"], "threads_per_sm": threads, "warp_size": props["warpSize"]}


@pytest.mark.parametrize("rows", GRID_ROWS)
def test_grid(learner, learner_function, rows, rng, device, mode):
    """The launched grid is grid_size(n_rows, programs_per_sm(<the launched kernel's counts>), SMs)."""
    n_rows = GRID_ROWS[rows][mode]
    x = sm.normal_rows((n_rows, GRID_COLS), torch.float32, rng, device)
    report = _check(learner_function, x)
    launched = report.launches[-1].programs if report.launches else None
    checks.require(launched is not None, "the grader could not work out the grid of your launch: launch with a "
                   "tuple, `softmax_persistent_kernel[(G,)](...)`")
    if launched > n_rows:
        raise GradeFailure(f"launched {launched} programs for {n_rows} rows: never launch more programs than rows "
                           "(grid_size returns min(n_rows, programs_per_sm * num_sms))")
    if mode == "gpu":
        resources = report.launches[-1].compiled  # read in the learner's process from the kernel it launched
        if resources is None:
            pytest.skip("grid: not checked (could not read the compiled kernel's registers on this Triton)")
        limits = _device_limits()
        source = ("the counts of the kernel you launched (n_regs, metadata.shared, metadata.num_warps) and this "
                  "GPU's limits")
    else:
        resources, limits = INTERPRETER_KERNEL, INTERPRETER_GPU
        source = ("the interpreter's stand-in numbers (INTERPRETER_KERNEL and INTERPRETER_GPU in the stub: the "
                  "interpreter compiles nothing, so there are no counts to read)")
    per_sm_call = (f"programs_per_sm({resources['n_regs']}, {resources['shared_bytes']}, {resources['num_warps']}, "
                   f"regs_per_sm={limits['regs_per_sm']}, smem_per_sm={limits['smem_per_sm']}, "
                   f"threads_per_sm={limits['threads_per_sm']}, warp_size={limits['warp_size']})")
    per_sm = _as_count(_learner_call(learner, "programs_per_sm", PROGRAMS_PER_SM_SIGNATURE,
                                     resources["n_regs"], resources["shared_bytes"], resources["num_warps"],
                                     **{k: v for k, v in limits.items() if k != "num_sms"}), per_sm_call)
    expected = _as_count(_learner_call(learner, "grid_size", GRID_SIZE_SIGNATURE, n_rows, per_sm, limits["num_sms"]),
                         "grid_size")
    if launched == expected:
        return
    detail = (f"{per_sm_call} = {per_sm} and grid_size({n_rows}, {per_sm}, {limits['num_sms']}) = {expected}, "
              f"from {source}")
    if launched == n_rows:
        raise GradeFailure(f"launched one program per row ({n_rows} programs for {n_rows} rows): that is exercise 3's "
                           f"grid. A persistent kernel launches only the programs that fit at once and loops over the "
                           f"rows: {detail}")
    raise GradeFailure(f"launched {launched} programs, but your occupancy functions give {expected}: {detail}. "
                       "Compute the grid from the kernel compiled for these arguments (kernel_resources) and this "
                       "GPU's limits (device_limits)")


def show_inputs(size: str | None = None) -> ShowCase:
    """`grade show 4`: 11 rows of 781 float32, 1000 elements apart (``--size M,N,ROW_STRIDE``).

    More rows than the interpreter's grid of 8 programs: the map shows which program visited
    which row (the grid-stride loop), and a loop that stops after one round leaves rows unwritten."""
    return sm.show_rows(size, (11, 781, 1000))


def test_traffic(learner_function, rng, device):
    """Interpreter: persistence changes the schedule, not the bytes: one read, one write per row."""
    m, n = 11, 781  # more rows than the interpreter's grid of 8: the stride loop runs
    x = checks.randn((m, n), torch.float32, rng, device)
    checks.expect_traffic(learner_function, {"x": x}, minimum_bytes=minimum_bytes(m, n, 4),
                          max_passes={"x": 1.0}, max_ratio=1.0,
                          lesson="each row is read once by whichever program visits it")


def performance_input(device, free_bytes: int) -> plan.PerformanceInput:
    """The timed input on ``device``: rows of PERF_COLS fp32 columns (`grader.exercises._shared.softmax_checks.softmax_input`)."""
    return sm.softmax_input(device, free_bytes, n_cols=PERF_COLS, minimum_bytes=minimum_bytes)


def test_performance(exercise, learner_function, mode):
    if mode != "gpu":
        pytest.skip("performance: not measured (no GPU)")
    _, timed = plan.here(__file__)
    sm.measure_softmax_bandwidth(learner_function, timed, floor=exercise.floor, minimum_bytes=minimum_bytes)
