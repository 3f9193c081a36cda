"""What people run: the `grade` command (`grader.commands.cli`) and the process it runs in.

That process never imports a learner's file either: it reads the source for the static check
(`grader.commands.source_allowlist`), starts the judge (`grader.commands.isolation`) and renders what the
judge sends (`grader.commands.report`); the other commands read the catalogue, the learner's progress
and the course's files.
"""
