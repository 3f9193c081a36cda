"""One pytest module per exercise: input cases, float64 reference, byte model, tolerances.

Each module's tests take the `learner` fixture (the learner's imported file) and build their
checks from `grader.checks`. `grade exercise N` runs them; so can plain pytest:

    pytest -p grader.harness.plugin grader/specs/ex01_vector_add.py --learner-file exercises/ex01_vector_add.py
"""
