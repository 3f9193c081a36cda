"""A course on fast memory-bound GPU kernels with Triton, and the grader that checks them.

`grade exercise N` runs the exercise's checks (its folder in `grader.exercises`) against the learner's
file and renders the verdict. The folders follow the processes (docs/contributing.md draws them):

* `grader.commands`: the `grade` process, what people run;
* `grader.judge`: the process that decides, and never imports the learner's file;
* `grader.learner`: the sandboxed process that imports the learner's file and calls it;
* `grader.wire`: what the judge and the learner's process both speak;
* `grader.catalogue` and `grader.bandwidth`: read by every process.
"""

__version__ = "0.1.0"
