"""What a grading run produces, as types: the kinds of failure, one record per check, the
performance record, the whole run, and the events the judge sends `grade` while it runs.

Everything that travels (events, ``--json``, batch summaries) is built from these records, so a
spelling lives here once. The JSON contract of ``grade exercise N --json`` (fields may be added,
never renamed) is `RunResult.to_json`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Kind(str, Enum):
    """Why a check ended the way it did. The values are the JSON spellings."""

    OK = "ok"
    WRONG = "wrong"  # the learner's answer (or code) is wrong; the message says how
    MASKING = "masking"  # a read or write outside a tensor (the access map draws it: `grade show`)
    COVERAGE = "coverage"  # output elements left unwritten, or an input changed (`grade show` draws it)
    NOT_IMPLEMENTED = "not_implemented"  # the stub's NotImplementedError: every check would say it
    IMPORT = "import"  # the learner's file did not import: every check would say it
    MISSING_FUNCTION = "missing_function"  # the file does not define the exercise's function: likewise
    REJECTED = "rejected"  # the static check refused the file (batch grading)
    SETUP = "setup"  # the grader could not start the learner's process (its sandbox): nothing of the file ran
    FATAL = "fatal"  # a CUDA error: the learner's process is restarted
    CRASH = "crash"  # the learner's process died
    TIMEOUT = "timeout"  # the check ran past its clock
    NOT_RUN = "not_run"  # an earlier failure stopped the run
    SKIPPED = "skipped"  # skipped by design (performance without a GPU)

    def __str__(self) -> str:  # f-strings and comparisons with plain strings read naturally
        return self.value

    @classmethod
    def of(cls, value: Any) -> "Kind":
        try:
            return cls(str(value))
        except ValueError:
            return cls.WRONG


#: Failures after which every other check would only repeat the same sentence.
STOPPING = {Kind.NOT_IMPLEMENTED, Kind.IMPORT, Kind.MISSING_FUNCTION, Kind.REJECTED, Kind.SETUP}


@dataclass
class PerformanceRecord:
    """The performance check's outcome. Every field but ``lines`` and ``details`` means the same in
    every exercise; ``lines`` are the exercise's own sentences for the report, ``details`` its own
    numbers for the JSON (merged into the performance object, as the contract has always had them)."""

    passed: bool
    verdict: str
    fraction: float | None = None
    floor: float | None = None
    unit: str = "gbps"  # what ``fraction`` is a fraction of: "gbps" (the bandwidth ceiling), "tflops", ...
    achieved_gbps: float | None = None
    ceiling_gbps: float | None = None
    copy_gbps: float | None = None
    add_gbps: float | None = None
    spec_gbps: float | None = None
    ms: float | None = None
    ms_runs: list[float] = field(default_factory=list)
    bytes: int | None = None
    input: str = ""
    gpu: str | None = None
    driver: str | None = None
    l2_bytes: int | None = None
    launches: int | None = None
    ceiling_cached: bool | None = None
    timing: dict | None = None  # how the time was taken (the judge's clock; do_bench's cross-check)
    lines: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data = {k: v for k, v in asdict(self).items() if k != "details"}
        data.update(self.details)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "PerformanceRecord":
        names = set(cls.__dataclass_fields__)
        known = {k: v for k, v in data.items() if k in names and k != "details"}
        details = {k: v for k, v in data.items() if k not in names}
        return cls(**known, details=details)


@dataclass
class CheckRecord:
    """One check of one run."""

    nodeid: str
    name: str
    passed: bool
    skipped: bool = False
    message: str = ""
    kind: Kind = Kind.OK
    launches: list[int] = field(default_factory=list)  # kernel launches of each call the check made
    performance: PerformanceRecord | None = None
    extra: dict = field(default_factory=dict)  # records for the report and JSON: traffic, byte_model, ...

    def __post_init__(self) -> None:
        self.kind = Kind.of(self.kind)

    @property
    def not_run(self) -> bool:
        return self.kind == Kind.NOT_RUN

    @property
    def counts(self) -> bool:
        """Whether the check counts for a score: everything but checks skipped by design."""
        return not (self.skipped and self.kind != Kind.NOT_RUN)

    @property
    def failed(self) -> bool:
        return not self.passed and not self.skipped and self.kind != Kind.NOT_RUN

    def to_json(self) -> dict:
        return {"name": self.name, "passed": self.passed, "message": self.message, "skipped": self.skipped,
                "kind": self.kind.value}

    def to_event(self) -> dict:
        return {"nodeid": self.nodeid, "name": self.name, "passed": self.passed, "skipped": self.skipped,
                "message": self.message, "kind": self.kind.value, "launches": self.launches,
                "performance": self.performance.to_json() if self.performance else None,
                "extra": self.extra or None}

    @classmethod
    def from_event(cls, data: dict) -> "CheckRecord":
        performance = data.get("performance")
        return cls(nodeid=str(data["nodeid"]), name=str(data.get("name", data["nodeid"])),
                   passed=bool(data.get("passed")), skipped=bool(data.get("skipped")),
                   message=str(data.get("message") or ""), kind=Kind.of(data.get("kind", "ok")),
                   launches=[int(n) for n in data.get("launches") or []],
                   performance=PerformanceRecord.from_json(performance) if isinstance(performance, dict) else None,
                   extra=dict(data.get("extra") or {}))


@dataclass
class RunResult:
    """Every check of one learner file against one exercise."""

    exercise: int
    learner_file: str
    seed: int
    mode: str = "unknown"
    versions: dict = field(default_factory=dict)
    checks: list[CheckRecord] = field(default_factory=list)
    fatal: str | None = None  # a failure outside any check (the grader itself could not run)
    notices: list[str] = field(default_factory=list)  # warnings the learner should read (static check, sandbox)
    sandbox: str | None = None
    stopped: str | None = None  # why checks were left unrun (the judge stopped early), if it said
    #: The fixes of Triton's interpreter the learner's process ran under (`grader.learner.interpreter_fixes`).
    interpreter_fixes: dict | None = None
    wall_seconds: float = 0.0

    @property
    def performance(self) -> PerformanceRecord | None:
        return next((c.performance for c in self.checks if c.performance), None)

    def extra(self, key: str):
        """A record a check left under ``key`` (``traffic``, ``byte_model``, ...), or None."""
        return next((c.extra[key] for c in self.checks if c.extra and c.extra.get(key)), None)

    @property
    def passed(self) -> bool:
        if self.fatal or not self.checks:
            return False
        return all(c.passed or (c.skipped and c.kind != Kind.NOT_RUN) for c in self.checks)

    def launches_per_call(self) -> int | None:
        counts = Counter(n for check in self.checks for n in check.launches)
        return counts.most_common(1)[0][0] if counts else None

    def to_json(self) -> dict:
        extras: dict[str, Any] = {"amdahl": None, "byte_model": None, "traffic": None}
        for check in self.checks:
            for key, value in (check.extra or {}).items():
                if value is not None and extras.get(key) is None and key != "panel":
                    extras[key] = value
        performance = self.performance
        if performance is not None and performance.details.get("amdahl"):
            extras["amdahl"] = performance.details["amdahl"]
        return {
            "exercise": self.exercise,
            "passed": self.passed,
            "mode": self.mode,
            "checks": [c.to_json() for c in self.checks]
            + ([{"name": "start", "passed": False, "message": self.fatal, "skipped": False, "kind": "fatal"}]
               if self.fatal else []),
            "performance": performance.to_json() if performance else None,
            "seed": self.seed,
            "launches_per_call": self.launches_per_call(),
            "versions": self.versions,
            "learner_file": self.learner_file,
            "notices": self.notices,
            "sandbox": self.sandbox,
            "interpreter_fixes": self.interpreter_fixes,
            **extras,
        }


# --- events: the judge tells `grade` what happens, one JSON object per line ----------------------

def event(kind: str, **fields) -> bytes:
    """One event line, ``{"event": kind, ...fields}``; `apply_event` reads it back. The kinds, in the
    order a run sends them: ``mode`` (mode, versions, sandbox), ``fixes`` (interpreter_fixes),
    ``collected`` (checks: nodeid and name), then per check ``start`` (nodeid) and ``result`` (check:
    `CheckRecord.to_event`); at any time ``notice`` (text), ``stopped`` (reason), ``fatal`` (message)."""
    return (json.dumps({"event": kind, **fields}, default=str) + "\n").encode()


def apply_event(run: RunResult, data: dict, collected: dict[str, str], done: dict[str, CheckRecord],
                running: list[str]) -> None:
    """Fold one event into the run being assembled (``running`` holds the check in progress)."""
    kind = data.get("event")
    if kind == "mode":
        run.mode = str(data.get("mode"))
        run.versions = {k: v for k, v in (data.get("versions") or {}).items()}
        run.sandbox = data.get("sandbox")
    elif kind == "collected":
        for item in data.get("checks") or []:
            collected.setdefault(str(item["nodeid"]), str(item["name"]))
    elif kind == "start":
        running[:] = [str(data.get("nodeid"))]
    elif kind == "result":
        record = CheckRecord.from_event(data["check"])
        done[record.nodeid] = record
        if running and running[0] == record.nodeid:
            running.clear()
    elif kind == "notice":
        run.notices.append(str(data.get("text")))
    elif kind == "stopped":
        run.stopped = str(data.get("reason"))
    elif kind == "fixes":
        run.interpreter_fixes = {str(k): bool(v) for k, v in (data.get("interpreter_fixes") or {}).items()}
    elif kind == "fatal":
        run.fatal = str(data.get("message"))
