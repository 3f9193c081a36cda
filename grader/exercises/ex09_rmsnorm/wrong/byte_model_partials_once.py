"""Wrong byte model: backward_bytes counts the partial sums once (their write), not their read by
the reduction kernel. The kernels are the solution's."""

from solutions.ex09_rmsnorm import (forward_bytes, partial_count, rmsnorm_backward,  # noqa: F401
                                    rmsnorm_forward)

EXPECTED = "the partial sums are counted once"
SELECT = "byte_model"


def backward_bytes(m: int, n: int, element_size: int, n_partials: int) -> int:
    row_kernel = (3 * m * n + n) * element_size + 4 * m + 4 * n_partials * n
    reduction = n * element_size  # WRONG: the reduction reads the partial sums back too
    return row_kernel + reduction
