"""The learner's side: what runs in the process that imports the learner's file.

The judge starts that process in a sandbox (`grader.learner.sandbox`, a keeper run as
``python -m grader.learner.sandbox``), which runs the runner (`grader.learner.runner`): it imports the
file and calls its functions when the judge asks, under the watch of its launches and torch ops
(`grader.learner.call_watch`), in Triton's interpreter with the course's fixes
(`grader.learner.interpreter_fixes`) and byte counts (`grader.learner.traffic`) where there is no GPU.
It answers with data only, never a verdict. Nothing here imports the judge's side or the commands':
only the wire (`grader.wire`) and the modules every process reads (`grader.catalogue`,
`grader.bandwidth`, `grader.device`, `grader.prestart`); `tests/test_package_boundary.py` holds it to that.
"""
