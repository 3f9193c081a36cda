"""The course's own stand-in for a learner file, run as the *twin* of the GPU timing.

The judge's clock (`grader.judge.clock`) around a round of calls in another process includes a cost
of its own: a message each way, that process waking up, the GPU passing from the judge's context to
the other process's. It is the same whatever the calls do, so the judge measures it on a twin: a
second learner process that imports this file (nothing of the learner's), opens the same shared
inputs and outputs, and in each of its rounds writes one element of the first output and
synchronizes (`grader.learner.runner`). Its quickest round is the round's own cost, which the judge subtracts
from the learner's rounds. The learner's code never runs in the twin, so it cannot enlarge that cost
to look faster.
"""


def nothing() -> None:
    """The twin's rounds are run by `grader.learner.runner` itself; this file only has to import."""
