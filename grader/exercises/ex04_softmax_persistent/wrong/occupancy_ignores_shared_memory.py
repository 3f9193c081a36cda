"""Wrong: programs_per_sm counts registers and threads but not shared memory.

With the 2-stage pipeline each program keeps a row in shared memory: at 16384 fp32 columns that
is 64 KiB, so only 3 programs fit in an H200 SM's 227 KiB whatever the registers say.
"""

from grader.exercises._shared.variants import solution_with
from solutions.ex04_softmax_persistent import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'the tightest limit wins, here shared memory'
SELECT = 'programs_per_sm and shared_memory'


_wrong = solution_with(
    "ex04_softmax_persistent",
    ("    if shared_bytes > 0:\n        limits.append(smem_per_sm // shared_bytes)  # shared memory\n",
     "    # WRONG: no `smem_per_sm // shared_bytes` limit when the kernel uses shared memory\n"),
)
programs_per_sm = _wrong.programs_per_sm
softmax_persistent = _wrong.softmax_persistent
