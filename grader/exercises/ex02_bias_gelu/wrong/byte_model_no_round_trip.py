"""Wrong byte model: the unfused pair is counted as if x + bias never reached memory (the
intermediate's round trip is forgotten). The kernel itself is right."""

from solutions.ex02_bias_gelu import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = "leaves out the round trip of the intermediate x + bias"
SELECT = "byte_model"


def unfused_bytes(m, n, element_size):
    return (2 * m * n + n) * element_size  # WRONG: tmp's round trip (2 * m * n more) is left out
