"""Wrong: partial_count returns min(n_rows, num_sms * programs_per_sm), exercise 4's grid. With
rows_per_program = ceil(n_rows / slots), fewer programs already cover every row: 16384 rows on
264 slots need 63 rows each, and 261 programs; the last 3 would have no row to work on and would
still write a row of partial sums each (of zeros, if the kernel is careful)."""

from solutions.ex09_rmsnorm import (backward_bytes, forward_bytes, rmsnorm_backward,  # noqa: F401
                                    rmsnorm_forward)

EXPECTED = "would have no row to work on"
SELECT = "partial_count and h200"


def partial_count(n_rows: int, num_sms: int, programs_per_sm: int) -> int:
    return min(n_rows, num_sms * programs_per_sm)  # WRONG: programs without rows
