"""A course on fast memory-bound GPU kernels with Triton, and the grader that checks them.

`grade exercise N` runs the exercise's checks (its folder in `grader.exercises`) against the learner's
file in a child process (`grader.commands.isolation`) and renders the verdict (`grader.commands.report`).
"""

__version__ = "0.1.0"
