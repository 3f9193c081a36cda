"""The hostile corpus (tests/hostile/) against the grader: what each file is owed, proved in the interpreter.

Every file is copied into the test's own folder and graded through `grader.commands.isolation.run_checks`
(or `grade batch` in a child process), never imported and never graded in place; every process a
run starts carries a token and is gone (or killed, and the test fails) afterwards. What is proved:

* class grading (strict): every exercise file the static check can name something in is refused
  before any process starts, with a sentence that names what it found;
* `grade exercise` (lenient): every file whose kernel is wrong underneath fails the judge's own
  comparison on one check, whatever it patches, forges or reads, and leaves its file and the
  course byte-identical; the four files that give a static check nothing to name are caught too;
* `grade exercise`, phase attacks: a file that behaves only in the call it takes for the traffic
  check gets the sentence it declares (every call is made the same way, and the traffic check's
  rules hold on every correctness call);
* a class batch of every batch attack and two honest classmates: the batch completes, the honest
  files keep the verdict they get alone, no file changes and no process survives;
* the robustness files are graded right within their wall clocks.

tests/hostile/README.md says what each group stands for.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import catalogue
from grader.commands import batch, isolation, source_allowlist
from grader.learner import sandbox
from grader.wire.results import Kind
from tests.hostile_corpus import (ONE_CHECK, ROOT, TOKEN_VARIABLE, HostileFile, RunProcesses, changed, copy_into,
                                  corpus, course_digest, digest)

SEED = 20261130
#: Seconds one exercise file may take here, import and exit included (about 5 to 20 s on two shared cores).
FILE_CLOCK = 300.0
CORPUS = corpus()
EXERCISE_FILES = [f for f in CORPUS if f.folder.startswith("ex")]
STATIC_REJECTED = [f for f in EXERCISE_FILES if f.static_flags]
WRONG_UNDERNEATH = [f for f in EXERCISE_FILES if f.wrong_underneath]
UNNAMED_OUTSIDE_WATCH = [f for f in EXERCISE_FILES if f.kind == "outside_watch" and not f.static_flags]
#: Files that behave only in the calls they believe are checked (the traffic check's call).
PHASE_FILES = [f for f in EXERCISE_FILES if f.kind == "phase"]
BATCH_FILES = [f for f in CORPUS if f.folder == "batch"]
ROBUSTNESS_FILES = [f for f in CORPUS if f.folder == "robustness"]
SANDBOX_FILES = [f for f in CORPUS if f.folder == "sandbox"]

#: What the static check's findings say for each flag a file declares (any one of them).
FLAG_FINDINGS = {
    "grader": ("`grader",),
    "threading": ("`threading`",),
    "gc": ("`gc`",),
    "ctypes": ("`ctypes`",),
    "importlib": ("`importlib`",),
    "eval": ("`eval()`",),
    "exec": ("`exec()`",),
    "torch._C": ("`._C`",),
    "torch.utils._python_dispatch (a private torch API)": ("`torch.utils._python_dispatch",),
    ".tolist()": ("`.tolist`",),
    ".numpy()": ("`.numpy`",),
    ".data =": (),  # not named: `out.data = ...` is ordinary Python; the file's `.tolist()` is
    "sys._getframe": ("`._getframe`",),
    "sys.argv / /proc/self/cmdline": ("imports `sys`", "calls `open()`"),
    "os._exit": ("`os._exit`",),
    "__builtins__": ("`__builtins__`",),
    "getattr with a computed name": ("`getattr()` with a computed",),
    "sys.modules": ("imports `sys`", "`.modules`"),
    "triton.runtime": ("`triton.runtime",),
    # The subclass is made with torch.Tensor._make_subclass, which the check names as private torch.
    "__torch_dispatch__": ("`__torch_dispatch__`", "`_make_subclass`"),
}
#: The same for the forms that go around a deny-list (builtins under an alias, chains past their first link).
FLAG_FINDINGS.update({
    "alias of exec": ("reads the builtin `exec`",),
    "alias of eval": ("reads the builtin `eval`",),
    "alias of open": ("reads the builtin `open`",),
    "__import__": ("reads `__import__`",),
    "a builtin's name bound": ("binds `exec`",),
    "vars": ("calls `vars()`",),
    "builtins": ("imports `builtins`",),
    "globals": ("calls `globals()`",),
    "os.path.sys": ("(`os.path.sys",),
    "os.path.os": ("(`os.path.os",),
    "torch.sys": ("(`torch.sys",),
    "tl.core.builtins": ("(`triton.language.core.builtins",),
    "triton.testing.subprocess": ("(`triton.testing.subprocess",),
    "torch._C through an alias": ("uses `._C` (`torch._C",),
    "a module as a value": ("passes the module `torch` around as a value",),
    "operator.attrgetter": ("uses `.attrgetter`",),
    "a pattern reads an attribute": ("matches the attribute `_C`",),
    "typing.get_type_hints": ("uses `.get_type_hints`",),
    "__subclasses__": ("uses `.__subclasses__`",),
})
#: What the grader does with each attack that gives a static check nothing to name.
UNNAMED_CAUGHT_BY = {
    # Triton calls a grid function once per launch: the work the file keeps for a second call never
    # happens, and its kernel stores nothing.
    "grid_lambda": "unwritten",
    # Learner callbacks that run inside a launch are watched like the launcher's own code.
    "heuristics_hook": "computed with torch",
    "autotune_pre_hook": "computed with torch",
    "pre_run_hook": "computed with torch",
    # The learner's Python that Triton runs inside a launch (the interpreter's programs, the compiler's
    # front end) is watched as the learner's (grader.learner.interpreter_fixes.programs).
    "constexpr_function": "computed with torch",
    "kernel_body_stash": "computed with torch",
    # What a launch may hand a kernel is the compiler's rule (grader.learner.interpreter_fixes.kernel_arguments,
    # .constexpr_globals): a Python function as a constexpr or a plain argument is refused with a sentence.
    "constexpr_closure": "make it a `@triton.jit` function",
    "constexpr_global": "make it a `@triton.jit` function",
    "plain_argument_function": "failed to specialize argument of type: function",
}


def _ids(files: list[HostileFile]) -> list[str]:
    return [f.id for f in files]


#: The rest of the corpus, graded only when asked: the default run must stay within a few minutes
#: of CI's two cores (one exercise file costs 5 to 20 s there).
SWEEP = pytest.mark.skipif(not os.environ.get("HOSTILE_SWEEP"),
                           reason="the rest of the corpus is graded with HOSTILE_SWEEP=1 (about 3 more minutes "
                                  "with -n 2); the default run grades every attack of exercise 1 and one file per "
                                  "kind of each other exercise")


def _one_per_kind(files: list[HostileFile]) -> list[HostileFile]:
    """Every file of exercise 1 (the cheapest to grade), and for each other exercise one file per
    KIND, taken in turn (the k-th exercise takes the k-th file of a kind), so that the default run
    meets as many different attacks as exercises."""
    chosen = []
    for turn, number in enumerate(sorted({f.exercise for f in files})):
        mine = [f for f in files if f.exercise == number]
        if number == 1:
            chosen += mine
            continue
        for kind in sorted({f.kind for f in mine}):
            of_kind = [f for f in mine if f.kind == kind]
            chosen.append(of_kind[turn % len(of_kind)])
    return chosen


def _cases(files: list[HostileFile], default: list[HostileFile]) -> list:
    """``default`` as plain cases, every other file of ``files`` as a slow case of the sweep."""
    return [pytest.param(f, id=f.id, marks=() if f in default else (pytest.mark.slow, SWEEP)) for f in files]


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture
def processes(monkeypatch):
    """Every process the test's grading starts carries this token; none may outlive the test."""
    run = RunProcesses()
    monkeypatch.setenv(TOKEN_VARIABLE, run.token)
    monkeypatch.setenv(sandbox.PASS_VARIABLE, TOKEN_VARIABLE)  # the allow-listed environment keeps the token
    yield run
    run.kill()


def _grade(hostile: HostileFile, path: Path, *, strict: bool = False, select: str | None = None,
           check_timeout: float | None = None, file_timeout: float = FILE_CLOCK):
    return isolation.run_checks(catalogue.get(hostile.exercise), path, seed=SEED, interpreter=True,
                                select=select or ONE_CHECK[hostile.exercise], strict=strict,
                                check_timeout=check_timeout, file_timeout=file_timeout)


def _counted(run) -> list:
    return [c for c in run.checks if not (c.skipped and c.kind != Kind.NOT_RUN)]


def _said(run) -> list[str]:
    return [c.message for c in run.checks if c.failed] + ([run.fatal] if run.fatal else [])


# --- every file has an expectation ---------------------------------------------------------------------

def test_every_hostile_file_declares_what_it_is_owed_and_is_tested():
    groups = {"static": STATIC_REJECTED, "wrong": WRONG_UNDERNEATH, "unnamed": UNNAMED_OUTSIDE_WATCH,
              "phase": PHASE_FILES, "batch": BATCH_FILES, "robustness": ROBUSTNESS_FILES, "sandbox": SANDBOX_FILES}
    assert all(groups.values()), {k: len(v) for k, v in groups.items()}
    for hostile in CORPUS:
        missing = [k for k in ("ATTACK", "KIND", "WRONG_UNDERNEATH", "STATIC_FLAGS", "REJECTED_BY")
                   if k not in hostile.meta]
        assert not missing, f"{hostile.id} does not declare {missing}"
        assert hostile.kind in ("patch", "forge", "reference", "outside_watch", "phase", "batch", "robustness",
                                "sandbox"), hostile.id
        assert any(hostile in files for files in groups.values()), f"no test asserts anything about {hostile.id}"
    for hostile in STATIC_REJECTED:
        unknown = [flag for flag in hostile.static_flags if flag not in FLAG_FINDINGS]
        assert not unknown, f"{hostile.id}: say in FLAG_FINDINGS what the static check names for {unknown}"
    for hostile in UNNAMED_OUTSIDE_WATCH:
        assert hostile.path.stem in UNNAMED_CAUGHT_BY, f"say in UNNAMED_CAUGHT_BY what catches {hostile.id}"
    for hostile in PHASE_FILES:
        assert hostile.meta.get("EXPECTED") and hostile.meta.get("SELECT"), f"{hostile.id}: say what it gets and where"
    for hostile in BATCH_FILES:
        assert list(hostile.meta["CLASS"].values()).count(None) == 1, hostile.id
        for source in filter(None, hostile.meta["CLASS"].values()):  # every classmate is in the test's class
            assert ROOT / source in HONEST.values(), f"{hostile.id} needs {source} in HONEST"
    names = sorted([*ATTACKERS, *HONEST])
    assert names[names.index("saboteur.py") + 1] == "saboteur_victim.py"
    for hostile in ROBUSTNESS_FILES:
        assert hostile.path.stem in ROBUSTNESS, f"say in ROBUSTNESS how {hostile.id} must be graded"
        assert "WALL_SECONDS" in hostile.meta, hostile.id
    for hostile in SANDBOX_FILES:
        assert "SENTENCE" in hostile.meta and hostile.kind == "sandbox", hostile.id


# --- a class batch of every batch attack and two honest classmates -----------------------------------
# (First in the file: the longest tests start first, and the other worker takes the short ones.)

BATCH_SELECT = ONE_CHECK[1]
#: The solution is named so that it is graded right after the saboteur (the file it overwrites).
HONEST = {"saboteur_victim.py": ROOT / "solutions" / "ex01_vector_add.py",
          "honest_wrong.py": catalogue.get(1).wrong_dir / "grid_one_block_short.py"}
ATTACKERS = {f"{f.path.stem}.py": f for f in BATCH_FILES}


def _class_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "class"
    for name, hostile in ATTACKERS.items():
        hostile.copy_into(folder, name)
    for name, source in HONEST.items():
        copy_into(source, folder, name)
    return folder


def _folder_digest(folder: Path) -> dict[str, str]:
    return {p.name: digest(p) for p in folder.iterdir() if p.is_file()}


def _grade_batch(folder: Path, out: Path, processes: RunProcesses, *, lenient: bool) -> subprocess.CompletedProcess:
    """`grade batch` in a child process, as an instructor runs it: attacks that look for the `grade`
    command among their ancestors find it."""
    argv = [sys.executable, "-m", "grader.commands.cli", "batch", str(folder), "--exercise", "1", "--select", BATCH_SELECT,
            "--seed", str(SEED), "--interpreter", "--out", str(out), "--gradescope", "--jobs", "2",
            "--file-timeout", str(FILE_CLOCK), *(["--lenient"] if lenient else [])]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.Popen(argv, cwd=folder.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        processes.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"`grade batch` did not finish within 900 s: {stderr[-2000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _rows(out: Path) -> dict[str, dict]:
    with open(out / "summary.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def _alone(tmp_path: Path) -> dict[str, dict]:
    """Each honest file graded as the only file of a class batch: the verdict it must keep."""
    rows = {}
    for name, source in HONEST.items():
        path = copy_into(source, tmp_path / "alone" / name.removesuffix(".py"), name)
        sub, = batch.grade_all([path], catalogue.get(1), seed=SEED, interpreter=True, select=BATCH_SELECT,
                               strict=True, file_timeout=FILE_CLOCK)
        rows[name] = batch.csv_row(sub, 100.0)
    return rows


def _same_verdict(row: dict, alone: dict) -> bool:
    keys = ("passed", "score", "checks_passed", "checks_counted", "checks_not_run", "first_failure")
    return all(str(row[k]) == str(alone[k]) for k in keys)


def test_class_batch_refuses_every_attacker_and_keeps_honest_verdicts(tmp_path, processes):
    folder = _class_folder(tmp_path)
    out = tmp_path / "out"
    (out / "summary.json").mkdir(parents=True)  # in the way of one output: a sentence, not a crash
    before_class, before_course = _folder_digest(folder), course_digest()
    done = _grade_batch(folder, out, processes, lenient=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    printed = " ".join(done.stdout.split())
    assert "summary.json: a folder is in the way; the other results are written" in printed, printed
    rows = _rows(out)
    assert set(rows) == set(ATTACKERS) | set(HONEST)
    for name in ATTACKERS:
        assert float(rows[name]["score"]) == 0.0 and rows[name]["passed"] == "False"
        assert rows[name]["first_failure"].startswith("honesty: the class grader refuses this file"), rows[name]
    for name in [*ATTACKERS, *HONEST]:
        assert (out / "gradescope" / f"{Path(name).stem}.results.json").is_file(), name
    assert processes.survivors() == []
    alone = _alone(tmp_path)
    for name in alone:
        assert _same_verdict(rows[name], alone[name]), (rows[name], alone[name])
    assert rows["saboteur_victim.py"]["passed"] == "True" and rows["honest_wrong.py"]["passed"] == "False"
    assert _folder_digest(folder) == before_class
    assert changed(before_course, course_digest()) == []


CONTAINED = sandbox.available_level() in ("namespaces", "user")


@pytest.mark.skipif(not CONTAINED, reason="the sandbox here is `partial` (no namespaces, not root): the learner's "
                    "code runs as this user and could write the course and signal `grade` (grader/learner/sandbox.py); "
                    "class grading runs in a container")
def test_batch_attacks_run_in_the_sandbox_and_change_nothing(tmp_path, processes):
    """With --lenient the attacks' code really runs: the sandbox, not the static check, must stop it."""
    folder = _class_folder(tmp_path)
    out = tmp_path / "out"
    before_class, before_course = _folder_digest(folder), course_digest()
    done = _grade_batch(folder, out, processes, lenient=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    rows_at_exit = _rows(out)
    assert set(rows_at_exit) == set(ATTACKERS) | set(HONEST)
    assert processes.survivors() == [], "a process a submission started outlived the batch"
    settle = max(f.meta.get("SETTLE_SECONDS", 0) for f in BATCH_FILES)
    time.sleep(settle)  # the time the score forger's daemon would need to rewrite its row
    assert _rows(out) == rows_at_exit
    assert (out / "summary.json").is_file()  # the crasher could not put a folder in its way
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["submissions"]) == len(rows_at_exit)
    for name, hostile in ATTACKERS.items():
        row = rows_at_exit[name]
        if hostile.wrong_underneath:
            assert float(row["score"]) == 0.0, row
        if row["passed"] == "False":
            assert row["first_failure"].strip(), row
        for classmate in HONEST:
            assert classmate not in row["first_failure"], f"{name} shows a classmate's file: {row['first_failure']}"
    assert not (tmp_path / "stolen").exists() and not (folder / "stolen").exists()
    assert _folder_digest(folder) == before_class
    assert changed(before_course, course_digest()) == []
    alone = _alone(tmp_path)
    for name in alone:
        assert _same_verdict(rows_at_exit[name], alone[name]), (rows_at_exit[name], alone[name])


# --- class grading: the static check refuses what it can name, before anything runs ------------------

@pytest.mark.parametrize("hostile", STATIC_REJECTED, ids=_ids(STATIC_REJECTED))
def test_class_grading_refuses_a_file_the_static_check_can_name(hostile, tmp_path, processes):
    path = hostile.copy_into(tmp_path / "submission")
    started = time.monotonic()
    run = _grade(hostile, path, strict=True)
    assert time.monotonic() - started < 5, "the static check runs before any process starts"
    assert not run.passed and run.fatal is None
    assert [(c.name, c.kind) for c in run.checks] == [("honesty", Kind.REJECTED)]
    message = run.checks[0].message
    assert message.startswith("the class grader refuses this file: line "), message
    found = source_allowlist.findings(source_allowlist.read_source(path))
    assert str(found[0]) in message, message
    named = " ".join(str(f) for f in found)
    assert any(word in named for flag in hostile.static_flags for word in FLAG_FINDINGS[flag]), (
        f"none of {hostile.static_flags} is named: {named}")
    assert processes.alive() == []


#: The files that go around a deny-list: a builtin under an alias, a chain past its first link, a module as
#: a value, dynamic attribute access (tests/test_source_allowlist.py holds the check to each form line by line).
AROUND_A_DENY_LIST = [f for f in STATIC_REJECTED
                      if set(f.static_flags) & {"alias of exec", "alias of eval", "alias of open", "__import__",
                                                "a builtin's name bound", "vars", "globals", "os.path.sys",
                                                "os.path.os", "torch.sys", "tl.core.builtins",
                                                "triton.testing.subprocess", "torch._C through an alias",
                                                "a module as a value", "operator.attrgetter",
                                                "a pattern reads an attribute", "typing.get_type_hints",
                                                "__subclasses__"}]


def test_grade_batch_refuses_every_way_around_a_deny_list(tmp_path, processes):
    """`grade batch` (strict, as always) scores each of them 0 with the sentence that names its form."""
    assert len(AROUND_A_DENY_LIST) >= 15
    for number in sorted({f.exercise for f in AROUND_A_DENY_LIST}):
        files = [f for f in AROUND_A_DENY_LIST if f.exercise == number]
        paths = [f.copy_into(tmp_path / f"class{number}", f"{f.path.stem}.py") for f in files]
        started = time.monotonic()
        graded = batch.grade_all(paths, catalogue.get(number), seed=SEED, interpreter=True,
                                 select=ONE_CHECK[number], strict=True, file_timeout=FILE_CLOCK)
        assert time.monotonic() - started < 5 * len(files), "refused before any process starts"
        for hostile, submission in zip(files, graded):
            row = batch.csv_row(submission, 100.0)
            assert float(row["score"]) == 0.0 and row["passed"] is False, row
            said = row["first_failure"]
            assert said.startswith("honesty: the class grader refuses this file: line "), said
            named = any(word in said for flag in hostile.static_flags for word in FLAG_FINDINGS[flag])
            assert named, (hostile.id, said)
    assert processes.alive() == []


# --- `grade exercise`: a wrong kernel fails the judge's comparison, whatever the file does ------------

@pytest.mark.parametrize("hostile", _cases(WRONG_UNDERNEATH, _one_per_kind(WRONG_UNDERNEATH)))
def test_a_wrong_kernel_fails_the_judges_comparison_whatever_the_file_forges(hostile, tmp_path, processes):
    path = hostile.copy_into(tmp_path / "submission")
    before_file, before_course = digest(path), course_digest()
    run = _grade(hostile, path)
    counted = _counted(run)
    assert run.fatal is None and len(counted) == 1, [(c.name, c.kind, c.message) for c in run.checks] + [run.fatal]
    check = counted[0]
    assert not run.passed and not check.passed
    # The comparison's own sentence, not an import error, a crash or a timeout.
    assert check.kind == Kind.WRONG and "differ from the float64 reference" in check.message, (check.kind, check.message)
    if hostile.static_flags:  # and `grade exercise` says the class grader would refuse it
        assert any(n.startswith("`grade batch` (class grading) would refuse this file") for n in run.notices)
    assert digest(path) == before_file
    assert changed(before_course, course_digest()) == []
    assert processes.survivors() == []


# --- the attacks a static check cannot see --------------------------------------------------------------

@pytest.mark.parametrize("hostile", _cases(UNNAMED_OUTSIDE_WATCH, [f for f in UNNAMED_OUTSIDE_WATCH if f.exercise == 1]))
def test_work_hidden_in_a_triton_callback_is_caught_in_grade_exercise(hostile, tmp_path, processes):
    path = hostile.copy_into(tmp_path / "submission")
    assert source_allowlist.findings(source_allowlist.read_source(path)) == []  # nothing to name: only running tells
    run = _grade(hostile, path)
    counted = _counted(run)
    assert run.fatal is None and len(counted) == 1 and not run.passed
    check = counted[0]
    assert check.kind in (Kind.WRONG, Kind.COVERAGE), (check.kind, check.message)
    assert UNNAMED_CAUGHT_BY[hostile.path.stem] in check.message, check.message
    assert run.notices == []
    assert processes.survivors() == []


# --- files that behave only in the calls they believe are checked --------------------------------------

@pytest.mark.parametrize("hostile", PHASE_FILES, ids=_ids(PHASE_FILES))
def test_a_file_that_behaves_only_when_it_believes_it_is_checked_is_caught(hostile, tmp_path, processes):
    """In the interpreter every call is made the same way and the traffic check's rules hold on every
    correctness call: a file that reads `x` once, or masks its loads, only in the call it takes for the
    traffic check gets the sentence it declares, on the checks it declares."""
    path = hostile.copy_into(tmp_path / "submission")
    before = digest(path)
    run = _grade(hostile, path, select=hostile.meta["SELECT"])
    said = _said(run)
    assert run.fatal is None and not run.passed, said
    assert any(hostile.meta["EXPECTED"] in message for message in said), said
    assert digest(path) == before
    assert processes.survivors() == []


# --- honest but unlucky files: graded right, within their clocks ---------------------------------------

#: (must pass, a sentence it must contain when it fails, how the test changes its copy)
ROBUSTNESS = {
    "atexit_sleep": (True, None, None),
    "thread_left_running": (True, None, None),
    "fork_ignores_sigterm": (True, None, None),
    "latin1_coding": (True, None, None),
    # 64 MiB instead of 2 GiB: under the sandbox's file limit, so the file passes, and still far more
    # than a bounded tail. (Past the limit the write fails: tests/test_robustness.py.)
    "stderr_flood": (True, None, ("STDERR_BYTES = 2 * 2**30", "STDERR_BYTES = 64 * 2**20")),
    "exit_at_import": (False, "importing your file ended the process", None),
    "import_infinite_loop": (False, "importing your file did not finish within", None),
    "keyboard_interrupt": (False, "your code raised KeyboardInterrupt", None),
    "unused_allocation": (True, None, None),
    "private_tempfile": (True, None, None),
}


@pytest.mark.parametrize("hostile", ROBUSTNESS_FILES, ids=_ids(ROBUSTNESS_FILES))
def test_a_robustness_file_is_graded_right_within_its_clock(hostile, tmp_path, processes):
    must_pass, sentence, shrink = ROBUSTNESS[hostile.path.stem]
    path = hostile.copy_into(tmp_path / "submission", replace=shrink)
    wall = hostile.meta["WALL_SECONDS"]
    started = time.monotonic()
    # The import's clock is the check's (at most 60 s): a short one where the import never ends.
    check_timeout = 10.0 if hostile.path.stem == "import_infinite_loop" else min(60.0, wall / 2)
    run = _grade(hostile, path, check_timeout=check_timeout, file_timeout=wall)
    seconds = time.monotonic() - started
    assert seconds < wall, f"{seconds:.0f} s, past the file's {wall} s"
    if must_pass:
        assert run.passed, _said(run)
    else:
        said = _said(run)
        assert not run.passed and any(sentence in m for m in said), said
        assert not any("outside its tensors" in m for m in said), said
    if hostile.path.stem == "latin1_coding":  # the class grader reads it as Python does, too
        assert batch.precheck(path) is None
        assert source_allowlist.findings(source_allowlist.read_source(path)) == []  # so strict grading is this grading
    if hostile.path.stem == "stderr_flood":  # what comes back is a bounded tail, not the flood
        assert len(json.dumps(run.to_json())) < 1 << 20
    assert processes.survivors() == [], "a process the file started outlived grading"


# --- sandbox escapes: each finds nothing, or gets its limit's sentence ----------------------------------

#: Planted in the grader's environment for every escape: no message may carry them.
PLANTED_SECRETS = {"GRADE_TEST_SECRET": "planted-secret-5e1f", "GRADE_API_TOKEN": "planted-token-77a0"}
#: Where a run could leave something for the next one: the shared temporary folders and System V segments.
SHARED_PLACES = ("/dev/shm", "/tmp", "/var/tmp")


def _left_in_shared_places() -> set[str]:
    """What the sandbox user owns in the shared temporary folders, every entry named like the escapes'
    notes, and every System V shared memory key (other work on the machine leaves its own files, so
    only these are compared)."""
    found = set()
    for folder in SHARED_PLACES:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(folder, name)
            try:
                owner = os.lstat(path).st_uid
            except OSError:
                continue
            if owner == sandbox.sandbox_uid() or name.startswith(("grade-note", "grade-ballast")):
                found.add(path)
    try:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        found |= {f"sysv:{line.split()[0]}" for line in lines}
    except OSError:
        pass
    return found


@pytest.mark.skipif(not CONTAINED, reason="the sandbox here is `partial` (no namespaces, not root): the learner's "
                    "code runs as this user and reads what it can read (grader/learner/sandbox.py)")
@pytest.mark.parametrize("hostile", SANDBOX_FILES, ids=_ids(SANDBOX_FILES))
def test_a_sandbox_escape_finds_nothing_and_leaves_nothing(hostile, tmp_path, processes, monkeypatch):
    for name, value in PLANTED_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GRADE_SANDBOX_MEMORY_GIB", "2")  # memory_past_limit asks for 4
    path = hostile.copy_into(tmp_path / "submission")
    before_file, before_course, before_shared = digest(path), course_digest(), _left_in_shared_places()
    run = _grade(hostile, path)
    said = _said(run)
    everything = json.dumps(run.to_json())
    assert "ESCAPED" not in everything, said
    assert not any(secret in everything for secret in PLANTED_SECRETS.values()), said
    assert "root:" not in everything, said  # the first line of /etc/shadow
    assert "could not set up its sandbox" not in everything, said
    sentence = hostile.meta["SENTENCE"]
    if sentence is None:
        assert run.passed, said
    else:
        assert not run.passed and any(sentence in m for m in said), said
    assert processes.survivors() == [], "a process the file started outlived grading"
    assert _left_in_shared_places() - before_shared == set(), "the run left something for the next one"
    assert digest(path) == before_file
    assert changed(before_course, course_digest()) == []
