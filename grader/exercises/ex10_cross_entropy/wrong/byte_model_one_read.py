"""Wrong: the byte model reads the logits once, as if a row stayed on chip between the passes."""

from solutions.ex10_cross_entropy import *  # noqa: F401,F403 (everything else is the solution's)

EXPECTED = 'that reads the logits once'
SELECT = 'byte_model'


def minimum_bytes(T, V, element_size):
    return 2 * T * V * element_size + 8 * T + 4  # WRONG: the logits read once, not twice
