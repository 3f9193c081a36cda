"""The wire: what the judge and the learner's process both speak, and nothing else.

The messages (`grader.wire.protocol`), the shared memory tensors cross (`grader.wire.arena`), the
layout of the guarded buffers both sides build in it (`grader.wire.guards`), the records and kinds
of failure that travel on to `grade` (`grader.wire.results`), and the sentences a failure carries
(`grader.wire.failures`). Nothing here imports either side.
"""
