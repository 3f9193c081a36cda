"""The judge's side: the process that decides a learner file's verdict and never imports it.

``python -m grader.judge`` (`grader.judge.__main__`) runs one exercise's spec under pytest with the
judge's plugin (`grader.judge.plugin`). The specs build on `grader.judge.checks` (guarded inputs, the
float64 comparison of `grader.judge.compare`) and time on the judge's own clock
(`grader.judge.clock`); `grader.judge.learner_process` starts the learner's process and calls its
functions over the wire (`grader.wire`).
"""
