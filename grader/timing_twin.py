"""The course's own stand-in for a learner file, run as the *twin* of the GPU timing.

The judge's clock (`grader.timing`) around a round of calls in another process includes a cost
of its own: the GPU handing over from the judge's work to the other process's, that process waking
up, a message each way. It is the same whatever the calls do, so the judge measures it on a twin:
a second learner process that imports this file (nothing of the learner's), opens the same shared
inputs and outputs, and in each of its rounds only fills the outputs. Its round time minus the fill
time (measured by ``triton.testing.do_bench`` in that process) is the round's own cost, which the
judge subtracts from the learner's rounds. The learner's code never runs in the twin, so it cannot
enlarge that cost to look faster.
"""


def nothing() -> None:
    """The twin's rounds are run by `grader.runner` itself; this file only has to import."""
