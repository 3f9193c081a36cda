"""On a GPU: the names of the CUDA kernels the learner's process runs while the judge's clock runs.

The judge's clock (`grader.judge.clock`) times whatever this process does between "go" and "done".
A file that runs a correct Triton kernel while it is checked and ``torch.add`` while it is timed would
be graded on torch's speed. The watch (`grader.learner.call_watch`) would see the torch op, but inside
the timed calls it costs too much: on an H200 it took exercise 9's forward from 86% to 39% of the
ceiling (docs/measurements/h200-phase-audit.json). A CUDA activity trace (CUPTI, through
torch.profiler) only adds a record to each launch, so it runs from the first counted round to the last,
every counted round traced and none left out, and the judge reads the kernel names it saw
(`grader.judge.kernel_audit`).

CUPTI traces the process it is loaded in, so the trace has to live here, beside the learner's code: a
file that patches torch.profiler's internals could forge the names. The tools are taken before the
learner's file is imported (`prepare`), so a file that replaces ``torch.profiler``'s names at import
does not replace these; the rest is best effort, and docs/grading.md says so. A file can tell a traced
round from the other calls (the profiler is on), and gains nothing by it: every counted round is traced,
and every other call that decides anything is watched.
"""

from __future__ import annotations

import threading

#: (torch.profiler.profile, ProfilerActivity), taken before the learner's file is imported.
_TOOLS: tuple | None = None
#: Kernel names kept, at most (a file launching thousands of distinct kernels is already foreign).
MAX_NAMES = 200
#: The first trace of a process pays for CUPTI's start: 4.1 s on an H200, then about 1 ms a trace
#: (measured in one process, torch 2.11). It is started in a thread when the process starts (`prepare`),
#: and `KernelTrace` waits for it. The thread saves less than it seems: CUPTI's start most likely holds
#: Python's lock for much of its time, and the process's first check waits for it (Triton's key of its own sources took
#: 5.6-5.8 s beside it on an H100, 0.46-0.48 s in the twin, which starts none: runs.4 of
#: docs/measurements/h100-grading-startup.json). The performance check of every grading needs the trace.
_WARMING: threading.Thread | None = None


def _warm(profile, activity) -> None:
    try:
        trace = profile(activities=[activity.CUDA])
        trace.__enter__()
        trace.__exit__(None, None, None)
    except Exception:  # noqa: BLE001 - the real trace will say what is wrong, to the judge
        pass


def prepare(*, warm: bool = False) -> None:
    """Take torch.profiler's names now, before the learner's file can replace them; with ``warm``,
    start CUPTI in a thread so that the first trace does not wait for it."""
    global _TOOLS, _WARMING
    from torch.profiler import ProfilerActivity, profile

    _TOOLS = (profile, ProfilerActivity)
    if warm and _WARMING is None:
        _WARMING = threading.Thread(target=_warm, args=_TOOLS, name="cupti-warm-up", daemon=True)
        _WARMING.start()


class KernelTrace:
    """Started by `start`, read (and ended) by `stop`: ``{kernel name: launches}``."""

    def __init__(self, torch):
        if _TOOLS is None:
            prepare()
        if _WARMING is not None:
            _WARMING.join()
        profile, activity = _TOOLS
        self.torch = torch
        self.profile = profile(activities=[activity.CUDA])
        self.profile.__enter__()

    def stop(self) -> dict:
        """{kernel name: launches} of every kernel since the start, or {"$error": why}."""
        try:
            self.torch.cuda.synchronize()
            self.profile.__exit__(None, None, None)
            cuda = self.torch.autograd.DeviceType.CUDA
            try:  # kineto's own records: no tree of CPU events to build
                names = [event.name() for event in self.profile.profiler.kineto_results.events()
                         if event.device_type() == cuda]
            except AttributeError:
                names = [event.name for event in self.profile.events() if getattr(event, "device_type", None) == cuda]
            counts: dict = {}
            for name in names:
                name = str(name)[:300]
                if not name.startswith(("Memcpy", "Memset")):  # copies and fills of memory run no kernel code
                    counts[name] = counts.get(name, 0) + 1
            return dict(list(counts.items())[:MAX_NAMES])
        except Exception as exc:  # noqa: BLE001 - a trace that cannot be read is a sentence for the judge
            return {"$error": f"{type(exc).__name__}: {exc}"[:300]}
