"""Entry point of the child process that runs one exercise's checks.

    python -m grader.harness.child SPEC_FILE --learner-file F [--grade-seed N]
        [--grade-events E] [--grade-done D] [--interpreter] [-k EXPR]

It chooses GPU or interpreter mode *before* anything imports Triton (`grader.mode`), then
hands over to pytest with the grading plugin. The parent (`grader.isolation`) watches the
events file, enforces the per-check timeout, and restarts this process after a crash.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    force_interpreter = "--interpreter" in argv
    if force_interpreter:
        argv.remove("--interpreter")

    from grader import mode

    mode.select(force_interpreter=force_interpreter)
    # The first torch dispatch mode imports torch._dynamo (~4 s of CPU): pay it here, not in the first check.
    import torch._dynamo  # noqa: F401

    import pytest

    from grader.catalogue import ROOT

    args = [
        *argv,
        "-p", "grader.harness.plugin",
        "-p", "no:cacheprovider",
        "--rootdir", str(ROOT),
        "-o", "addopts=",
        "-o", "python_files=*.py",
        "-q", "--no-header", "-rN", "--tb=no", "--assert=plain",
        "-W", "ignore::DeprecationWarning",
    ]
    return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(main())
