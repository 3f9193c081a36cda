"""The judge: the process that decides a learner file's verdict, and never imports it.

    python -m grader.judge SPEC_FILE --learner-file F [--display NAME] [--grade-seed N]
        [--grade-events-fd FD] [--check-timeout S] [--interpreter] [--hide DIR]... [--tmp-root DIR] [-k EXPR]

`grade` starts it (`grader.commands.isolation`) and reads its events; it passes the options that name the
learner's file and the hidden folders in ``PYTEST_ADDOPTS``, never on the command line (which any
process can read in /proc). It runs pytest with the judge's
plugin (`grader.judge.plugin`) over one exercise's spec; the plugin starts the learner's own
process in a sandbox and the specs call the learner's functions there. Triton is never put in
interpreter mode here: only the learner's process runs kernels in Triton's interpreter.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    import os

    # The judge needs no plugin but its own: pytest's search of every installed package for plugins (and their
    # imports: pytest-xdist's and others in a course's dev install) cost 0.13-0.2 s before the learner's process
    # could start, on two CPU cores, and a plugin a learner installed has no business in the judge.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    from grader.catalogue import ROOT

    args = [
        *argv,
        "-p", "grader.judge.plugin",
        "-p", "no:cacheprovider",
        # pytest's check for exceptions raised in __del__ runs gc.collect() twice a session, each about
        # 70 ms with torch imported on a laptop core, to report warnings about the grader's own objects,
        # which no verdict reads.
        "-p", "no:unraisableexception",
        "--rootdir", str(ROOT),
        "-o", "addopts=",
        "-o", "python_files=*.py",
        "-q", "--no-header", "-rN", "--tb=no", "--assert=plain",
        "-W", "ignore::DeprecationWarning",
    ]
    return int(pytest.main(args))


def _exit(code: int) -> None:
    """End without Python's finalization, as a judge forked from its template does (`grader.prestart`): by
    then every result is sent and the learner's process and the twin are gone (`pytest_unconfigure`), and
    what is left is torch's own teardown, which `grade` waited for. Exercise 1's solution graded with every
    process started fresh, as on a GPU: 4.5 s with that teardown, 3.9 s without, on two CPU cores (phases
    ``12-07-judge-exit-before`` and ``-after`` of docs/measurements/cpu-grading-speed.json)."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    _exit(main())
