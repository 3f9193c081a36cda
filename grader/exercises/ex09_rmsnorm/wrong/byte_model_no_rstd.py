"""Wrong byte model: forward_bytes forgets the rstd the forward writes (one float32 per row). The
kernels are the solution's."""

from solutions.ex09_rmsnorm import (backward_bytes, partial_count, rmsnorm_backward,  # noqa: F401
                                    rmsnorm_forward)

EXPECTED = "rstd is missing: the forward also writes"
SELECT = "byte_model"


def forward_bytes(m: int, n: int, element_size: int) -> int:
    return (2 * m * n + n) * element_size  # WRONG: + 4 * m for rstd
