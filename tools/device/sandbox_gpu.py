"""On a GPU: the sandbox where CUDA shares the timed calls' inputs, as root and as an ordinary user.

    PYTHONPATH=. python tools/device/sandbox_gpu.py --out $OUT/sandbox-gpu.json [--parts solution nonroot escapes]

``solution``
    exercise 1's solution graded as root in every setting of the sandbox on a GPU, in turns: the judge
    as the sandbox user (the default: the driver maps CUDA memory only into a process of the exporter's
    user, so the learner's process is unprivileged only if the judge is too) or root
    (``GRADE_SANDBOX_GPU_USER=judge``), each with a /dev/shm of its own or the host's
    (``GRADE_SANDBOX_SHM=host``). Every setting must pass with the same fraction; the result's sandbox
    line says whose user the learner's process had, and nothing may be left in the host's /dev/shm.
``nonroot``
    the same grading by an ordinary user (uid 65534 from the start, as on a learner's own machine): the
    learner's process then runs in a user namespace, and CUDA's handles must still open.
``escapes``
    every file of tests/hostile/sandbox (and the GPU phase attack) graded whole on the GPU, as
    tests/test_hostile.py grades them in the interpreter: nothing escapes (no ``ESCAPED``, no planted
    secret, no line of /etc/shadow in any result), a file owed a sentence gets it, the others pass, and
    nothing is left in the host's /dev/shm or /tmp by the sandbox user.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
SEED = 20261206
#: The checks an escape is graded by: one correctness check, and the timed one, where CUDA shares memory.
ESCAPE_CHECKS = "(matches_reference and n1025 and fp32) or performance"
PLANTED = {"GRADE_TEST_SECRET": "planted-secret-5e1f", "GRADE_API_TOKEN": "planted-token-77a0"}


def _grade(number: int, file: Path, *, env_extra: dict | None = None, cwd: Path = ROOT, user: int | None = None,
           timeout: float = 300) -> dict:
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONUNBUFFERED="1", **PLANTED, **(env_extra or {}))
    preexec = None
    if user is not None:
        def preexec():
            os.setgroups([])
            os.setresgid(user, user, user)
            os.setresuid(user, user, user)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "grader.commands.cli", "exercise", str(number), "--from", str(file),
                               "--json", "--seed", str(SEED)], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        return {"seconds": round(time.monotonic() - started, 1), "error": f"past {timeout} s"}
    seconds = round(time.monotonic() - started, 1)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {"seconds": seconds, "exit": done.returncode, "error": (done.stderr or done.stdout)[-1500:]}
    perf = result.get("performance") or {}
    failed = [{"name": c["name"], "message": (c.get("message") or "")[:500]}
              for c in result.get("checks", []) if not c.get("passed") and not c.get("skipped")]
    return {"seconds": seconds, "exit": done.returncode, "passed": result.get("passed"), "failed": failed[:4],
            "fraction": perf.get("fraction"), "verdict": perf.get("verdict"), "sandbox": result.get("sandbox"),
            "everything": json.dumps(result)}


def _shared(folders=("/dev/shm", "/tmp")) -> set[str]:
    found = set()
    for folder in folders:
        try:
            found |= {os.path.join(folder, n) for n in os.listdir(folder)}
        except OSError:
            pass
    return found


def _owner(path: str) -> int | None:
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


#: The settings of the sandbox on a GPU, strongest first (grader.learner.sandbox.judge_sandbox_plan).
GPU_SETTINGS = [("judge as sandbox user, own /dev/shm", {}),
                ("judge as sandbox user, host /dev/shm", {"GRADE_SANDBOX_SHM": "host"}),
                ("judge root, own /dev/shm", {"GRADE_SANDBOX_GPU_USER": "judge"}),
                ("judge root, host /dev/shm", {"GRADE_SANDBOX_GPU_USER": "judge", "GRADE_SANDBOX_SHM": "host"})]


def solution_rows(turns: int = 1) -> list[dict]:
    rows = []
    file = ROOT / "solutions" / "ex01_vector_add.py"
    for turn in range(turns):
        for setting, extra in GPU_SETTINGS:
            before = _shared(("/dev/shm",))
            row = _grade(1, file, env_extra=extra)
            row.update(setting=setting, env=extra, turn=turn, left_in_dev_shm=sorted(_shared(("/dev/shm",)) - before))
            row.pop("everything", None)
            rows.append(row)
    return rows


def nonroot_rows() -> list[dict]:
    """The course copied where an ordinary user reads it, graded by uid 65534 with a home of its own."""
    user = 65534
    tree = Path(tempfile.mkdtemp(prefix="course-nonroot-"))
    for name in ("grader", "solutions", "exercises", "pyproject.toml"):
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, tree / name)
    home = Path(tempfile.mkdtemp(prefix="nonroot-home-"))
    for path in [tree, home, *tree.rglob("*"), *home.rglob("*")]:
        os.chown(path, user, user, follow_symlinks=False)
    os.chmod(tree, 0o755)
    os.chmod(home, 0o700)
    env = {"HOME": str(home), "GRADE_CACHE_DIR": str(home / "cache"), "GRADE_STATE_DIR": str(home / "state"),
           "TMPDIR": str(home)}
    probe = subprocess.run([sys.executable, "-c", "from grader.learner import sandbox; print(sandbox.available_level())"],
                           cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree), **env), capture_output=True, text=True,
                           preexec_fn=lambda: (os.setgroups([]), os.setresgid(user, user, user),
                                               os.setresuid(user, user, user)))
    row = _grade(1, tree / "solutions" / "ex01_vector_add.py", env_extra=env, cwd=tree, user=user)
    row.pop("everything", None)
    row.update(setting="uid 65534 from the start", level=probe.stdout.strip() or probe.stderr[-300:])
    return [row]


def escape_rows(save=lambda rows: None, only: list[str] | None = None) -> list[dict]:
    """Graded in this process, as `grade` grades (`isolation.run_checks`), with the secrets in its environment."""
    from grader import catalogue
    from grader.commands import isolation
    from tests import hostile_corpus

    os.environ.update(PLANTED, GRADE_SANDBOX_MEMORY_GIB="2")  # memory_past_limit asks for 4
    files = [f for f in hostile_corpus.corpus() if f.folder == "sandbox"]
    files.append(hostile_corpus.one("ex01/phase_size_torch"))
    if only:  # a call cut short goes on with the files it did not reach
        files = [f for f in files if f.path.stem in only]
    rows = []
    for hostile in files:
        folder = Path(tempfile.mkdtemp(prefix="escape-"))
        path = hostile.copy_into(folder / "submission")
        before = _shared()
        started = time.monotonic()
        run = isolation.run_checks(catalogue.get(hostile.exercise), path, seed=SEED, select=ESCAPE_CHECKS)
        everything = json.dumps(run.to_json())
        said = " ".join([c.message or "" for c in run.checks if c.failed] + ([run.fatal] if run.fatal else []))
        left = sorted(p for p in _shared() - before if _owner(p) == 65534 or "grade-note" in p)
        sentence = hostile.meta.get("SENTENCE", hostile.meta.get("EXPECTED"))
        if hostile.kind == "phase":  # on a GPU the timed calls' audit catches it (grader.judge.kernel_audit)
            sentence = "not your file's Triton kernels"
        owed_pass = hostile.folder == "sandbox" and sentence is None
        escaped = "ESCAPED" in everything or any(v in everything for v in PLANTED.values()) or "root:" in everything
        held = not escaped and not left and (run.passed if owed_pass else (not run.passed and sentence in said))
        performance = run.performance
        rows.append({"file": hostile.id, "seconds": round(time.monotonic() - started, 1), "passed": run.passed,
                     "mode": run.mode, "fraction": performance.fraction if performance else None,
                     "failed": [{"name": c.name, "message": (c.message or "")[:400]} for c in run.checks if c.failed][:3],
                     "owed": "pass" if owed_pass else sentence, "escaped": escaped, "left": left, "held": held})
        save(rows)  # a call cut short keeps the files graded so far
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--parts", nargs="*", default=["solution", "nonroot", "escapes"])
    parser.add_argument("--only", nargs="*", help="escapes: grade only these files (by name, without .py)")
    args = parser.parse_args()
    from tools.device import provenance

    if "GRADE_CACHE_DIR" not in os.environ:  # the device image has no platformdirs: a ceiling folder of our own
        os.environ["GRADE_CACHE_DIR"] = tempfile.mkdtemp(prefix="sandbox-gpu-ceiling-")
        os.chmod(os.environ["GRADE_CACHE_DIR"], 0o755)
    found = {"meta": provenance.header(seed=SEED, uid=os.geteuid())}
    parts = {"solution": solution_rows, "nonroot": nonroot_rows, "escapes": escape_rows}
    def save(rows, part="escapes"):
        found[part] = rows
        args.out.write_text(json.dumps(found, indent=1))

    for part in args.parts:
        found[part] = parts[part](save, args.only) if part == "escapes" else parts[part]()
        args.out.write_text(json.dumps(found, indent=1))
    if "solution" in found:  # the strongest setting that passed, for the shell to export
        chosen = next((r["env"] for r in found["solution"] if r.get("passed")), {})
        Path(str(args.out) + ".env").write_text("".join(f"export {k}={v}\n" for k, v in chosen.items()))
    for part in args.parts:
        for row in found[part]:
            label = row.get("file") or row.get("setting")
            print(f"{part:>8} {label:<42} passed={row.get('passed')} fraction={row.get('fraction')} "
                  f"{row.get('seconds')} s held={row.get('held', '-')} runs as: "
                  f"{(row.get('sandbox') or '').rpartition('it runs as ')[2]}"[:260])
            for f in row.get("failed", [])[:2]:
                print("           ", f["name"], f["message"][:300])
            if row.get("error"):
                print("           error:", row["error"][-600:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
