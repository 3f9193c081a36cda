"""The pytest side of grading: the plugin that runs a spec against one learner file, and the
child-process entry point that the `grade` command starts (`python -m grader.harness.child`)."""
