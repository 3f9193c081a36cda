"""Where the learner's process runs: a sandbox that nothing it starts can leave.

The judge starts every learner process through a *keeper*, ``python -m grader.learner.sandbox --
COMMAND...`` (its settings travel in the environment, never on a command line another process
can read), which sets the sandbox up and then runs COMMAND (`grader.learner.runner`) as its child.

One contract, default deny, at every level (docs/assets/sandbox-contract.md says it for the
learner): the learner's process sees its private copy and the course's read-only runtime, nothing
else; it runs as an unprivileged user whenever the grader is root (``GRADE_SANDBOX_UID``, default
65534, "nobody"); it gets an allow-listed environment (`learner_environment`); its ``/dev/shm``
and temporary folder are private, capped and gone with it; its memory (``RLIMIT_DATA``) and
processes (``RLIMIT_NPROC``) are bounded; and it writes nothing the judge later opens by name
(its output goes to a file the judge opened, a setup failure to a pipe it never holds). How
strongly each part holds depends on the level, the strongest this machine allows
(``GRADE_SANDBOX`` picks one by name):

``namespaces`` (root, or an unprivileged user namespace)
    New mount, PID and network namespaces, and a new root (``pivot_root``, the host's root detached):
    an empty tmpfs holding read-only binds of the system folders, the Python that runs the grader, and
    the course's ``grader/`` package
    (without the natural files, correct kernels written another way), the private scratch folder
    (writable) and fresh, capped tmpfs mounts on ``/tmp`` and ``/dev/shm``. Nothing else exists
    there: not ``solutions/``, ``tests/``, the class folder, the output folder, the progress
    files, nor any other submission. ``/proc`` is the process's own (PID namespace, ``hidepid``).
    The learner's process is PID 1 of its namespace: when it ends, the kernel ends every process
    it started, ``setsid`` daemons included. All capabilities are dropped (bounding set,
    ``no_new_privs``), so it cannot remount, trace or escape; no network. Where it is in a user
    namespace of its own, that namespace's limit on new user namespaces is 0, so it cannot get
    capabilities back by making one (`_forbid_user_namespaces`).
``user`` (root, without namespaces: a container that forbids them, such as Gradescope's)
    The learner's process runs as the unprivileged user and reads only what others may read. The
    keeper (root) first removes others' access to the folders the judge hides (the class,
    output and progress folders) and to the course's ``solutions/``, ``tests/`` and natural
    files, and afterwards deletes whatever that user left in ``/dev/shm`` and ``/tmp``; processes
    it leaves behind are found through the keeper, a child subreaper, and killed. Best effort:
    world-readable files elsewhere stay readable (the parent's command line included), and two
    runs at once share the user, so they could signal each other or meet in ``/dev/shm``.
``partial`` (neither: a learner's laptop)
    The keeper is a child subreaper, the learner's process runs in its own session with resource
    limits and dies with the keeper; the judge is not dumpable. Files the user can read or write,
    the learner's code can too: grade a class in a container (docs/grading.md).

At every level: ``PR_SET_PDEATHSIG`` (the learner's process dies with the keeper, the keeper with
the judge), ``RLIMIT_FSIZE`` (no file, stdout and stderr included, grows past `FILE_LIMIT`),
``RLIMIT_CORE`` 0, ``RLIMIT_DATA`` (`memory_limit`), ``RLIMIT_NPROC`` where the process has a
user of its own (`process_limit`; counted in a user namespace of the process's own where the kernel
allows, so gradings beside each other do not share it: `_own_user_namespace`), and a private working
folder.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

LEVELS = ("namespaces", "user", "partial")
#: The largest file the learner's process may write (stdout and stderr go to files too).
FILE_LIMIT = 256 << 20
DEFAULT_UID = 65534
#: The keeper's settings (JSON), in its environment only: another user cannot read a process's
#: environment, while any process can read every command line in /proc.
CONFIG_VARIABLE = "GRADE_SANDBOX_CONFIG"
#: Exit status of a keeper that was started without its settings.
EXIT_SETUP = 96
#: Sizes of the private tmpfs mounts (``namespaces`` level).
SHM_BYTES = 1 << 30
TMP_BYTES = 1 << 30

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442  # the same number on x86-64 and arm64
#: pivot_root has no glibc wrapper; its number differs by architecture.
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203}.get(os.uname().machine, 155)
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 36, 38, 47, 4
CAPABILITY_VERSION_3 = 0x20080522


def memory_limit() -> int:
    """Bytes of private memory the learner's process may hold (``GRADE_SANDBOX_MEMORY_GIB``, default
    16; 0 turns the limit off). ``RLIMIT_DATA``, not ``RLIMIT_AS``: CUDA reserves address space far
    beyond the memory it uses (unified addressing maps the GPU's whole memory), which ``RLIMIT_AS``
    counts and ``RLIMIT_DATA`` does not (it counts private writable mappings: the heap, torch's
    CPU tensors). The shared arenas the judge hands over are shared mappings and do not count."""
    try:
        gib = float(os.environ.get("GRADE_SANDBOX_MEMORY_GIB", "16"))
    except ValueError:
        gib = 16.0
    return int(gib * (1 << 30)) if gib > 0 else 0


def process_limit() -> int:
    """Processes and threads the sandbox user may have at once (``GRADE_SANDBOX_PROCESSES``; by default
    256, or 4 per core where that is more: torch starts a thread per core)."""
    try:
        return max(16, int(os.environ["GRADE_SANDBOX_PROCESSES"]))
    except (KeyError, ValueError):
        return max(256, 4 * (os.cpu_count() or 1))


def sandbox_uid() -> int:
    try:
        return int(os.environ.get("GRADE_SANDBOX_UID", DEFAULT_UID))
    except ValueError:
        return DEFAULT_UID


class SandboxError(Exception):
    """The sandbox could not be set up; a sentence."""


@dataclass
class Config:
    """What the keeper needs; travels as JSON in its environment."""

    level: str
    scratch: str  # the run's private, writable folder (holds the copy of the learner's file)
    hide: list[str] = field(default_factory=list)  # folders only the user level must conceal (the others see none)
    uid: int = DEFAULT_UID
    #: Descriptors the judge opened: where the learner's stdout and stderr go, and where the keeper
    #: writes a setup failure (the learner's process never holds it).
    output_fd: int = -1
    status_fd: int = -1
    network: bool = False
    #: A PID namespace of its own (``GRADE_SANDBOX_PIDNS=0`` turns it off, e.g. where CUDA IPC needs
    #: both processes in one namespace; the keeper still kills every process left behind).
    pid_namespace: bool = True
    #: ``namespaces`` level: the empty folder the new root is built on, and what it shows read-only.
    view: str = ""
    expose: list[str] = field(default_factory=list)
    course: str = ""  # the course's root: only its grader/ package is shown
    conceal: list[str] = field(default_factory=list)  # course folders the learner must not read
    #: The course's solutions/ shown read-only: only for the course's own variants (files inside
    #: its grader/exercises/), which import the solution and override one thing.
    solutions: str = ""
    memory_bytes: int = 0
    processes: int = 0
    shm_bytes: int = SHM_BYTES
    tmp_bytes: int = TMP_BYTES
    #: The judge shares CUDA memory with the learner's process (a GPU run). CUDA's interprocess
    #: handles are files in /dev/shm (the driver's ``cuda.shm.*`` and torch's ``torch_*`` reference
    #: counts, mode 0600), and the driver maps a handle only into a process of the exporter's user
    #: (`judge_sandbox_plan`). So the learner's process keeps the judge's uid and sees the judge's
    #: /dev/shm: a root judge becomes the sandbox user first (`enter_judge_sandbox`), and the learner's
    #: process then runs in a user namespace; where the judge stays root it keeps uid 0 with every
    #: capability dropped. In the host's /dev/shm the keeper deletes what appeared during the run (the
    #: judge's own files aside).
    cuda_ipc: bool = False
    #: The judge's /dev/shm, which the learner's process shares (`cuda_ipc`), is a tmpfs of its own
    #: (`enter_judge_sandbox`), freed by the kernel with it: the keeper deletes nothing there.
    shm_private: bool = False
    #: A folder the learner's process keeps between gradings, writable (its Triton cache on a GPU: one
    #: learner's own gradings, never a class's), shown at the same path; empty: none.
    kernel_cache: str = ""
    #: The keeper was forked from the learner's template (`grader.prestart`), which imported torch and
    #: Triton: the learner's process runs `grader.learner.runner` where it is, after the same setup, instead
    #: of starting a new Python (any other command is still executed).
    in_process: bool = False


#: System folders the new root shows read-only (those that exist; a symlink is copied as a symlink).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys",
                "/run/nvidia-persistenced", "/var/run/nvidia-persistenced")


def runtime_paths(course: str | Path) -> list[str]:
    """The read-only runtime the learner's process needs: system folders and the Python (prefixes
    and every existing ``sys.path`` folder) that runs the grader, less the course itself, whose
    ``grader/`` package alone is shown (`Config.course`)."""
    course = os.path.realpath(course)
    found = [p for p in SYSTEM_PATHS if os.path.lexists(p)]
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    python = set(prefixes)
    # Packages installed elsewhere (a distribution's dist-packages); never the current folder, which
    # `python -m` puts first on sys.path and which may hold a class's submissions.
    python.update(p for p in sys.path if p and os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")
                  and not any(_inside(p, prefix) for prefix in prefixes))
    for path in sorted(python):
        real = os.path.realpath(path)
        if not os.path.isdir(real) or _inside(course, real):
            continue  # the course (or a folder holding it) is never shown whole
        # A virtual environment inside the course (README's `python -m venv .venv`) is shown: it
        # holds the runtime, not the course. It is mounted after the course's skeleton (deeper).
        if not any(_inside(real, shown) for shown in found):
            found.append(real)
    return found


def course_variant(course: str | Path, learner_file: str | Path) -> bool:
    """Is ``learner_file`` one of the course's own variants (a file in an exercise folder's
    ``wrong/`` or ``natural/``)? Those may import the solution they differ from; no other file sees
    it, the hostile corpus (``hostile/``) included: it is graded as a learner's file is."""
    path = Path(os.path.realpath(learner_file))
    exercises = os.path.realpath(os.path.join(course, "grader", "exercises"))
    return _inside(str(path), exercises) and path.parent.name in ("wrong", "natural")


def course_private_paths(course: str | Path, *, with_solutions: bool = False) -> list[str]:
    """Folders of the course the learner's process must not read: the solutions (unless
    ``with_solutions``: a course variant's), the course's own tests (correct files among them) and
    every exercise's natural files (correct kernels written another way)."""
    course = Path(course)
    found = ([] if with_solutions else [course / "solutions"]) + [course / "tests", course / ".git"]
    found += sorted(course.glob("grader/exercises/*/natural"))
    return [str(p) for p in found if p.is_dir()]


# --- what a limit looks like from inside -------------------------------------------------------

_PROCESS_SIGNS = ("Resource temporarily unavailable", "can't start new thread", "BlockingIOError")
_MEMORY_SIGNS = ("Cannot allocate memory", "can't allocate memory", "MemoryError", "std::bad_alloc")


def limit_sentence(said: str) -> str | None:
    """The limit a failure of the learner's code ran into, as a sentence (None when it is no limit's):
    past ``RLIMIT_NPROC`` a fork or a new thread fails with EAGAIN, past ``RLIMIT_DATA`` an
    allocation fails with ENOMEM."""
    if any(sign in said for sign in _PROCESS_SIGNS):
        return (f"your file started more than {process_limit()} processes (threads count too), the sandbox's "
                "limit: does it fork or start processes in a loop?")
    limit = memory_limit()
    if limit and any(sign in said for sign in _MEMORY_SIGNS):
        return (f"your process used more than {limit / (1 << 30):g} GiB of memory, the sandbox's limit: does it "
                "allocate a tensor far larger than its inputs?")
    return None


# --- the learner's environment -------------------------------------------------------------------

#: Variables the learner's process inherits, by exact name or by prefix: what Python, torch, Triton,
#: CUDA and the terminal need. Everything else (tokens, keys, the grader's own settings) stays out.
ALLOWED_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "COLUMNS", "LINES", "NO_COLOR",
                           "LD_LIBRARY_PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                           "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                           # The grader settings the learner's process reads: which interpreter fixes apply,
                           # and the memory of an emulated smaller card (grader.device).
                           "GRADE_INTERPRETER_FIXES", "GRADE_DEVICE_MEMORY_GIB"})
ALLOWED_PREFIXES = ("LC_", "TRITON_", "CUDA_", "PYTORCH_", "TORCH_", "NCCL_")
#: Names an instructor adds with ``GRADE_SANDBOX_PASS_ENV`` (comma separated); the course's tests
#: mark every process of a run this way to find the ones left behind.
PASS_VARIABLE = "GRADE_SANDBOX_PASS_ENV"


def learner_environment(source: dict[str, str], *, scratch: str | Path, course: str | Path,
                        interpreter: bool) -> dict[str, str]:
    """The allow-listed environment of the learner's process: HOME, the temporary folder and every
    cache inside its private scratch folder."""
    extra = {name.strip() for name in source.get(PASS_VARIABLE, "").split(",") if name.strip()}
    env = {k: v for k, v in source.items()
           if k in ALLOWED_NAMES or k in extra or k.startswith(ALLOWED_PREFIXES)}
    env.pop("TRITON_INTERPRET", None)
    scratch = str(scratch)
    env.update(HOME=scratch, TMPDIR=os.path.join(scratch, "tmp"), TRITON_CACHE_DIR=os.path.join(scratch, ".triton"),
               TRITON_HOME=scratch, MPLCONFIGDIR=scratch, XDG_CACHE_HOME=os.path.join(scratch, ".cache"),
               CUDA_CACHE_PATH=os.path.join(scratch, ".nv"),
               PYTHONPATH=str(course), PYTHONDONTWRITEBYTECODE="1", PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1",
               USER="learner", LOGNAME="learner")  # getpass.getuser() needs a name, whatever the uid
    env.setdefault("PATH", os.defpath)
    if interpreter:
        env["TRITON_INTERPRET"] = "1"
    return env


# --- system calls ------------------------------------------------------------------------------

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result == -1:
        code = ctypes.get_errno()
        raise SandboxError(f"{what} failed: {os.strerror(code)} (errno {code})")
    return result


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), f"prctl({option})")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda v: v.encode() if v is not None else None)
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(path: str, *, set_: int = 0, clear: int = 0, recursive: bool = True) -> None:
    attr = _MountAttr(set_, clear, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    _check(_libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                         ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
           f"mount_setattr {path}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_bounding_set() -> None:
    """Empty the bounding and ambient sets: no exec can give a capability back."""
    last = 40
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        if _libc.prctl(ctypes.c_int(PR_CAPBSET_DROP), ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)) == -1 and ctypes.get_errno() not in (errno.EINVAL, errno.EPERM):
            raise SandboxError(f"dropping capability {cap} failed")
    _libc.prctl(ctypes.c_int(PR_CAP_AMBIENT), ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0),
                ctypes.c_ulong(0), ctypes.c_ulong(0))


def clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets."""
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
    drop_bounding_set()
    clear_capabilities()


def make_undumpable() -> None:
    """Other processes of the same user can no longer read this one's memory or open its pipes
    through /proc (the judge and `grade` call it: the learner's process runs as the same user at
    the ``partial`` level)."""
    try:
        prctl(PR_SET_DUMPABLE, 0)
    except SandboxError:
        pass


def become_subreaper() -> bool:
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        return True
    except SandboxError:
        return False


# --- which level this machine allows ------------------------------------------------------------

_PROBED: dict[str, bool] = {}


def _probe_namespaces() -> bool:
    """Can this process make the namespaces and mounts the ``namespaces`` level needs? (Tried in a
    forked child, so nothing here changes.)"""
    pid = os.fork()
    if pid == 0:  # the child tries, and says by its exit status
        code = 1
        try:
            # A judge made itself undumpable (`make_undumpable`), and a fork keeps that: its /proc/self files
            # then belong to root, and an ordinary user could not write the new namespace's uid_map.
            prctl(PR_SET_DUMPABLE, 1)
            flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
            if os.geteuid() != 0:
                flags |= CLONE_NEWUSER
            _unshare(flags)
            if os.geteuid() != 0 or flags & CLONE_NEWUSER:
                _map_user(os.getuid(), os.getgid())
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            _mount_setattr("/", set_=MOUNT_ATTR_RDONLY)
            code = 0
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


#: The limit on new user namespaces of the user namespace the reading process is in (Linux 4.9 and later).
USER_NAMESPACE_LIMIT = Path("/proc/sys/user/max_user_namespaces")


def _forbid_user_namespaces() -> bool:
    """No process of this user namespace can make a user namespace inside it: its limit set to 0, by this
    process, which made the namespace and still holds the capabilities to (``CAP_SYS_RESOURCE`` in it).

    A new user namespace hands its maker every capability over what that namespace owns: a mount
    namespace of its own, where it mounts what it likes (``tests/hostile/sandbox/remount_writable.py``
    mounted a tmpfs on /tmp), and the kernel's code for namespaces within reach. Until this limit, the
    learner's process was kept from it by accident: the kernel refuses a new user namespace to a
    process with threads, and torch's OpenMP threads were there; with one thread in the interpreter the
    file's unshare() went through. True where the limit was written (False where /proc is read-only
    here: then the learner's process can make one, as any unprivileged process of the host can)."""
    try:
        USER_NAMESPACE_LIMIT.write_text("0")
    except OSError:
        return False
    return True


def _map_user(uid: int, gid: int) -> None:
    """In a new user namespace, be the same user as outside (and have no other groups)."""
    try:
        Path("/proc/self/setgroups").write_text("deny")
    except OSError:
        pass
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


def setting_problem() -> str | None:
    """A sentence when ``GRADE_SANDBOX`` names no level: a typo must not quietly grade at another level."""
    wanted = os.environ.get("GRADE_SANDBOX")
    if wanted is None or wanted in ("auto", *LEVELS):
        return None
    return f"GRADE_SANDBOX={wanted!r} names no sandbox level: set it to auto, {', '.join(LEVELS)}, or unset it"


def is_full(description: str | None) -> bool:
    """Whether a result's sandbox (`describe`) is the full one: a root of its own, namespaces, no capabilities."""
    return bool(description) and description.startswith(DESCRIPTIONS["namespaces"])


def available_level() -> str:
    """The strongest level this machine allows, or the one ``GRADE_SANDBOX`` names."""
    wanted = os.environ.get("GRADE_SANDBOX", "auto")
    if wanted in LEVELS:
        return wanted
    if "namespaces" not in _PROBED:
        _PROBED["namespaces"] = _probe_namespaces()
    if _PROBED["namespaces"]:
        return "namespaces"
    if os.geteuid() == 0:
        return "user"
    return "partial"


DESCRIPTIONS = {
    "namespaces": ("sandboxed (a root of its own holding only the runtime, read-only; own PID, IPC and network "
                   "namespaces; no capabilities)"),
    "user": ("sandboxed (an unprivileged user; the hidden folders closed to others; what it leaves in /tmp and /dev/shm "
             "is deleted, the processes it leaves are killed)"),
    "partial": ("partly sandboxed (own session, limits, processes it leaves are killed; the learner's code runs "
                "as you and can read and write what you can: grade a class in a container, see docs/grading.md)"),
}


def describe(level: str, *, gpu: bool) -> str:
    """What the learner's process of this judge gets, for the result: the level, and whose user it runs as."""
    said = DESCRIPTIONS.get(level, level)
    if level == "partial":
        return said
    uid = os.geteuid()
    if uid == 0 and not _in_user_namespace():
        who = ("root without capabilities (its judge stayed root: the sandbox user could not run the course, "
               "or GRADE_SANDBOX_GPU_USER=judge)" if gpu else f"the sandbox user (uid {sandbox_uid()})")
    elif uid == sandbox_uid():
        who = f"the sandbox user (uid {uid}), as its judge does"
    else:
        who = f"your user (uid {uid}), in a user namespace"
    return f"{said}; it runs as {who}"

# --- starting a learner process ---------------------------------------------------------------------

#: The learner's template a judge may ask (`grader.commands.isolation` passes its socket): interpreter runs only.
TEMPLATE_FD_VARIABLE = "GRADE_LEARNER_TEMPLATE_FD"
_TEMPLATE: list = []  # the template reached through that socket, once asked


def _learner_template():
    if not _TEMPLATE:
        from grader import prestart

        fd = os.environ.get(TEMPLATE_FD_VARIABLE, "")
        _TEMPLATE.append(prestart.Template.reached_through(int(fd)) if fd.isdigit() else None)
    return _TEMPLATE[0]


def start(command: list[str], config: Config, *, env: dict[str, str], pass_fds: tuple[int, ...] = ()):
    """Start the keeper, which sets up ``config`` and runs ``command`` inside the sandbox. The
    settings go in the keeper's environment (`CONFIG_VARIABLE`), which it removes before the
    learner's process starts. Forked from the learner's template where the judge was given one and
    the run shares no CUDA memory (a `grader.prestart.Started`), else a new Python (a Popen)."""
    template = None if config.cuda_ipc else _learner_template()
    if template is not None:
        forked = Config(**{**asdict(config), "in_process": True})
        fds = {fd: fd for fd in (*pass_fds, config.output_fd, config.status_fd) if fd >= 0}
        try:
            return template.start("grader.learner.sandbox:main", ["--", *command], cwd=config.scratch, fds={**fds, 2: 2},
                                  env={**env, CONFIG_VARIABLE: json.dumps(asdict(forked))})
        except OSError:
            pass  # the template is gone: this keeper starts from scratch
    keeper = [sys.executable, "-s", "-m", "grader.learner.sandbox", "--", *command]
    fds = tuple(fd for fd in (config.output_fd, config.status_fd) if fd >= 0)
    for fd in fds:
        os.set_inheritable(fd, True)
    return subprocess.Popen(keeper, env={**env, CONFIG_VARIABLE: json.dumps(asdict(config))},
                            pass_fds=tuple(pass_fds) + fds, cwd=config.scratch, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, start_new_session=True, preexec_fn=_keeper_dies_with_parent)


def _die_with_parent(sig: int = signal.SIGKILL) -> None:
    _libc.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(sig), ctypes.c_ulong(0),
                ctypes.c_ulong(0), ctypes.c_ulong(0))


def _keeper_dies_with_parent() -> None:
    """The keeper gets SIGTERM when the judge dies: it ends the learner's processes, then itself."""
    _die_with_parent(signal.SIGTERM)


def stop(process: subprocess.Popen, *, grace: float = 0.0) -> int | None:
    """End a keeper and everything it started; its exit status (None if it was already gone)."""
    if process.poll() is None and grace > 0:
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)  # the keeper kills its descendants, then itself
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()
            process.wait()
    return process.returncode


def kill_children(parent: int | None = None) -> int:
    """SIGKILL every child of ``parent`` (this process by default), until none is left; how many.

    For a child subreaper this is every process its descendants left behind: orphans are
    reparented to it, whatever sessions they made."""
    parent = os.getpid() if parent is None else parent
    killed = 0
    for _ in range(100):
        children = _children(parent)
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        _reap_some()
        time.sleep(0.01)
    _reap_some()
    return killed


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(entry))
    return found


def _reap_some() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- the keeper ---------------------------------------------------------------------------------

def _limits(config: Config) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    if config.memory_bytes:
        resource.setrlimit(resource.RLIMIT_DATA, (config.memory_bytes, config.memory_bytes))


def _drops_user(config: Config) -> bool:
    """Does the learner's process become the sandbox user? (Whenever the keeper is really root.)"""
    return (config.level in ("namespaces", "user") and os.geteuid() == 0 and not _in_user_namespace()
            and not config.cuda_ipc)


def _become(uid: int) -> None:
    """Be ``uid`` (user and group, no other groups) from here on: real, effective and saved alike."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _nproc_per_namespace() -> bool:
    """Does ``RLIMIT_NPROC`` count per user namespace here (Linux 5.14 and later)? Before, it counted every
    process of the uid, the judge's and the user's own included: the limit is then left off."""
    try:
        major, minor = (int(part) for part in os.uname().release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 14)


def _own_user_namespace(uid: int, gid: int) -> bool:
    """Put the learner's process, now the sandbox user, in a user namespace of its own, with the same user
    inside and out, for two things:

    * a count of processes of its own: ``RLIMIT_NPROC`` counts only this process and what it starts
      (Linux 5.14's per-namespace counts). Without it every process of the sandbox user shares one count,
      so a file that forks in a loop starves whatever else runs as that user: a classmate graded beside
      it in ``grade batch --jobs`` failed to start a thread ("died with exit status 1");
    * a limit of 0 on the user namespaces it can make (`_forbid_user_namespaces`): in the host's user
      namespace the sandbox user could make one, as any unprivileged user there can.

    The capabilities a new user namespace hands out are taken away again at once. Returns False where
    the kernel refuses (no user namespaces for this user, or a root that is not its mount namespace's):
    the count is then shared, and making a user namespace is left to the host's rules, as before."""
    prctl(PR_SET_DUMPABLE, 1)  # changing the uid made /proc/self root's: the map could not be written
    try:
        _unshare(CLONE_NEWUSER)
    except SandboxError:
        prctl(PR_SET_DUMPABLE, 0)
        return False
    try:
        _map_user(uid, gid)  # unmapped, the user would still be itself outside, and the count its own
    except OSError:
        pass
    finally:
        prctl(PR_SET_DUMPABLE, 0)
    _forbid_user_namespaces()  # while the capability to is still there
    drop_capabilities()  # raises where it cannot: a sandbox that failed to set up says so
    return True


def _in_user_namespace() -> bool:
    try:
        return Path("/proc/self/uid_map").read_text().split()[:3] != ["0", "0", "4294967295"]
    except OSError:
        return False


def _mount_view(config: Config) -> None:
    """Build the new root on ``config.view``: an empty tmpfs, read-only binds of what it shows, the
    writable scratch folder, fresh capped tmpfs mounts on /tmp and /dev/shm. Mounts go deepest
    last, so a folder inside another's bind (the course inside /tmp) is placed after it."""
    view = config.view.rstrip("/")
    _mount("tmpfs", view, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    plan: list[tuple[str, str, str]] = []  # (target, kind, source)
    for path in config.expose:
        plan.append((path, "ro" if not os.path.islink(path) else "link", path))
    plan.append(("/dev", "dev", "/dev"))
    plan.append(("/tmp", "tmpfs", f"size={config.tmp_bytes},mode=1777"))
    if config.cuda_ipc:  # see Config.cuda_ipc
        plan.append(("/dev/shm", "rw", "/dev/shm"))
    else:
        plan.append(("/dev/shm", "tmpfs", f"size={config.shm_bytes},mode=1777"))
    plan.append(("/proc", "dir", ""))
    if os.path.isdir("/dev/mqueue"):
        plan.append(("/dev/mqueue", "empty", ""))  # the host's queues; the IPC namespace has its own
    if config.course:
        course = os.path.realpath(config.course)
        plan.append((course, "tmpfs", "size=1m,mode=755"))
        plan.append((os.path.join(course, "grader"), "ro", os.path.join(course, "grader")))
        for path in config.conceal:
            if _inside(path, os.path.join(course, "grader")):
                plan.append((path, "empty", ""))
        if config.solutions:
            plan.append((os.path.realpath(config.solutions), "ro", os.path.realpath(config.solutions)))
    plan.append((config.scratch, "rw", config.scratch))
    if config.kernel_cache:
        plan.append((config.kernel_cache, "rw", config.kernel_cache))
    plan.sort(key=lambda item: item[0].rstrip("/").count("/"))
    for target, kind, source in plan:
        inside = view + target
        if kind == "link":
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            os.symlink(os.readlink(source), inside)
            continue
        if os.path.isdir(source) or kind in ("tmpfs", "dir", "empty"):
            os.makedirs(inside, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            Path(inside).touch()
        if kind in ("ro", "rw", "dev"):
            _mount(source, inside, None, MS_BIND | MS_REC)
            if kind == "ro":
                _mount_setattr(inside, set_=MOUNT_ATTR_RDONLY)
        elif kind == "tmpfs":
            _mount("tmpfs", inside, "tmpfs", MS_NOSUID | MS_NODEV, source)
        elif kind == "empty":
            _mount("tmpfs", inside, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")
    # The skeletons are read-only too (in a user namespace the learner's process owns them); the
    # mounts inside them (/tmp, /dev/shm, the scratch folder) keep their own flags.
    for skeleton in [view] + ([view + os.path.realpath(config.course)] if config.course else []):
        _mount_setattr(skeleton, set_=MOUNT_ATTR_RDONLY, recursive=False)


def _namespaces(config: Config) -> None:
    """In the keeper, before it forks the learner's process: namespaces and the new root."""
    uid, gid = os.getuid(), os.getgid()
    # A new IPC namespace too: System V segments and POSIX queues die with it, as /dev/shm does.
    flags = CLONE_NEWNS | CLONE_NEWIPC | (CLONE_NEWPID if config.pid_namespace else 0)
    if not config.network:
        flags |= CLONE_NEWNET
    if os.geteuid() != 0:
        flags |= CLONE_NEWUSER
        # Forked from an undumpable template (`grader.prestart`) the keeper would be too, and an ordinary
        # user could not write its new namespace's uid_map (/proc/self then belongs to root).
        prctl(PR_SET_DUMPABLE, 1)
    _unshare(flags)
    if flags & CLONE_NEWUSER:
        _map_user(uid, gid)
        _forbid_user_namespaces()  # the learner's process, forked into this namespace, makes no other
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount_view(config)


def _enter_view(config: Config) -> None:
    """In the learner's process (PID 1 of its namespace): its own /proc, then the new root."""
    view = config.view.rstrip("/")
    try:
        _mount("proc", view + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    except SandboxError:  # no PID namespace of its own, in a user namespace: the host's, read-only
        _mount("/proc", view + "/proc", None, MS_BIND | MS_REC)
        _mount_setattr(view + "/proc", set_=MOUNT_ATTR_RDONLY)
    # Its own mount namespace, then pivot_root rather than chroot: the root of the process is then the
    # root of its mount namespace, the condition for creating a user namespace (see `_own_user_namespace`),
    # and the keeper, in the namespace left behind, keeps its view of the host.
    _unshare(CLONE_NEWNS)
    os.chdir(view)
    _check(_libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount the old root")  # the host's root, stacked under
    os.chdir("/")


def _inside(child: str, parent: str) -> bool:
    child, parent = os.path.realpath(child), os.path.realpath(parent)
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def _deny_others(paths: list[str]) -> None:
    """``user`` level: the sandbox user is one of "others"; take their access to these folders."""
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode) and mode & 0o007:
                os.chmod(path, stat.S_IMODE(mode) & ~0o007)
        except OSError:
            continue


#: Shared folders where the sandbox user may leave files (``user`` level; the other levels have none).
SHARED_TEMPORARY = ("/dev/shm", "/tmp", "/var/tmp", "/dev/mqueue")


def remove_leftovers(uid: int, folders: tuple[str, ...] = SHARED_TEMPORARY) -> list[str]:
    """Delete what ``uid`` owns directly in the shared temporary folders; the paths removed."""
    removed = []
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
                if info.st_uid != uid:
                    continue
                _remove(path, info)
                removed.append(path)
            except OSError:
                continue
    return removed


def _remove(path: str, info: os.stat_result) -> None:
    """A file, link or whole folder, as ``lstat`` saw it (a link is removed, never followed)."""
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def remove_new_shared_files(before: set[str], judge: int, folder: str = "/dev/shm") -> list[str]:
    """Delete what appeared in ``folder`` since ``before`` was listed, except the judge's own CUDA
    and torch handles (``cuda.shm.0.<pid hex>.*``, ``torch_<pid>_*``); the paths removed."""
    keep = (f"cuda.shm.0.{judge:x}.", f"torch_{judge}_")
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for name in entries:
        if name in before or name.startswith(keep):
            continue
        path = os.path.join(folder, name)
        try:
            _remove(path, os.lstat(path))
            removed.append(path)
        except OSError:
            continue
    return removed


#: In the judge's environment when its /dev/shm is a tmpfs of its own (`enter_judge_sandbox`): the keeper
#: then leaves cleaning it to the kernel, which frees it with the judge's mount namespace.
JUDGE_SHM_VARIABLE = "GRADE_JUDGE_SHM"


def judge_sandbox_plan(*, gpu: bool) -> dict:
    """How the judge of a GPU grading starts, where the grader runs as root with namespaces: as the
    sandbox user (``uid``), and with a ``/dev/shm`` of its own (``private_shm``).

    The judge hands the timed calls' inputs to the learner's process through CUDA's interprocess
    handles, and the driver maps them only into a process of the exporter's user: measured on an H100
    (driver 580), a root judge's tensors fail to map in a process of uid 65534 ("mapping of buffer
    object failed") whatever /dev/shm holds, its handle files handed over by ``chown`` or opened to
    all by ``chmod`` (docs/measurements/h100-sandbox-ipc.json). So the learner's process can only be
    unprivileged if the judge is too: it becomes the sandbox user before CUDA starts, and its learner
    processes run in a user namespace of their own, as on a learner's own machine.
    ``GRADE_SANDBOX_GPU_USER=judge`` keeps the judge root (the learner's process then keeps uid 0
    with every capability dropped) and ``GRADE_SANDBOX_SHM=host`` the host's /dev/shm. Elsewhere
    (no GPU, not root, no namespaces): neither, an empty plan."""
    if not gpu or os.geteuid() != 0 or _in_user_namespace() or available_level() != "namespaces":
        return {}
    plan = {}
    if os.environ.get("GRADE_SANDBOX_GPU_USER", "sandbox") != "judge":
        plan["uid"] = sandbox_uid()
    if os.environ.get("GRADE_SANDBOX_SHM") != "host" and os.path.isdir("/dev/shm"):
        plan["private_shm"] = True
    return plan


def can_judge_as(uid: int, *, read: list[str], write: list[str], namespaces: bool = True) -> str:
    """Could a judge of user ``uid`` read ``read`` and write ``write``, and give its learner's process
    namespaces? Tried in a forked child that becomes that user (nothing here changes): "" if so,
    otherwise the first thing it could not, as a sentence. A course the sandbox user cannot read (a
    root-only home, a root-only virtual environment) keeps the judge root."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        said = ""
        try:
            _become(uid)
            prctl(PR_SET_DUMPABLE, 1)  # the credential change made it undumpable: it could not map a user
            for path in read:
                if not os.access(path, os.R_OK | (os.X_OK if os.path.isdir(path) else 0)):
                    said = f"uid {uid} cannot read {path}"
                    break
            for path in write if not said else ():
                if not os.access(path, os.W_OK | os.X_OK):
                    said = f"uid {uid} cannot write in {path}"
                    break
            if not said and namespaces and not _probe_namespaces():
                said = f"uid {uid} gets no user namespace for the learner's process"
        except Exception as exc:  # noqa: BLE001 - the child only reports
            said = f"uid {uid} could not be tried: {exc}"
        os.write(writer, said.encode()[:4000])
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        said = answer.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return said


def enter_judge_sandbox(plan: dict) -> None:
    """In the judge's process before it execs (a ``preexec_fn``), as root: a mount namespace whose
    ``/dev/shm`` is a fresh tmpfs (`SHM_BYTES`; every process the judge starts sees it, and it is gone
    when the last of them ends), then the sandbox user. Raises SandboxError where a step fails: the
    caller starts the judge without the plan."""
    if plan.get("private_shm"):
        _unshare(CLONE_NEWNS)
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={SHM_BYTES},mode=1777")
    if "uid" in plan:
        uid = plan["uid"]
        try:
            _become(uid)
        except OSError as exc:
            raise SandboxError(f"the judge could not become uid {uid}: {exc}") from exc


def _learner_side(config: Config, command: list[str]) -> None:
    """In the forked child: last steps, then exec the learner's process (never returns)."""
    try:
        _die_with_parent()
        os.setsid()
        if config.level == "namespaces":
            _enter_view(config)
        _limits(config)
        if config.status_fd >= 0:  # closed by the exec: the learner's process never holds the sandbox's channel
            os.set_inheritable(config.status_fd, False)
        if config.level == "namespaces":  # while the capability to drop it is still there
            drop_bounding_set()
        if _drops_user(config):
            _become(config.uid)
            _own_user_namespace(config.uid, config.uid)
            if config.processes:
                resource.setrlimit(resource.RLIMIT_NPROC, (config.processes, config.processes))
        elif config.processes and config.level == "namespaces" and _in_user_namespace() and _nproc_per_namespace():
            # In a user namespace of its own the limit counts only the processes of that namespace's user
            # (Linux 5.14's ucounts): the learner's alone, not the judge's of the same uid outside it.
            resource.setrlimit(resource.RLIMIT_NPROC, (config.processes, config.processes))
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if config.level == "namespaces":
            clear_capabilities()
        os.chdir(config.scratch)
        os.umask(0o077)
        if config.output_fd >= 0:
            os.dup2(config.output_fd, 1)
            os.dup2(config.output_fd, 2)
            os.close(config.output_fd)
        if config.in_process and command[1:4] == ["-s", "-m", "grader.learner.runner"]:
            _run_runner(config, command)  # never returns
        try:
            os.execvp(command[0], command)
        except PermissionError as exc:
            raise SandboxError(f"the sandbox user (uid {os.getuid()}) may not run {command[0]}: at this level the "
                               "Python that runs the grader, and the course's grader/ folder, must be readable "
                               "by others") from exc
    except BaseException as exc:  # noqa: BLE001
        _say_setup_failed(config, f"the learner's process could not start: {exc}")
        os._exit(EXIT_SETUP)


def _run_runner(config: Config, command: list[str]) -> None:
    """The learner's process as ``python -s -m grader.learner.runner ARGS`` would be after its exec, in the
    process forked from the template: the sandbox's channel closed, the command line and environment
    shown in /proc, readable by its own user again (changing the uid made it unreadable; an exec would
    have made it readable), then the runner."""
    from grader import prestart
    from grader.learner import runner

    code = 1
    try:
        if config.status_fd >= 0:
            os.close(config.status_fd)
        for sig in (signal.SIGTERM, signal.SIGHUP):  # the keeper's handlers, which an exec would have reset
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        prestart.retitle(command, os.environ)
        prctl(PR_SET_DUMPABLE, 1)
        sys.argv = [runner.__file__, *command[4:]]
        sys.path[0] = os.getcwd()  # `python -m` puts the current folder first
        code = runner.main(command[4:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - said on stderr, as a new Python would
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _say_setup_failed(config: Config, sentence: str) -> None:
    """A setup failure, on the channel only the keeper and its child hold before the exec."""
    fd = config.status_fd if config.status_fd >= 0 else 2
    try:
        os.write(fd, (sentence.strip() + "\n").encode(errors="replace"))
    except OSError:
        pass


def keeper(config: Config, command: list[str]) -> int:
    """Set up ``config``, run ``command`` as a child, end everything it started, return its status."""
    child: list[int] = []
    stopping: list[int] = []

    def on_term(signum, frame):
        stopping.append(signum)
        for pid in child:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_term)
    _die_with_parent(signal.SIGTERM)
    if os.getppid() == 1:  # the judge is already gone
        return 1
    drops = _drops_user(config)
    try:
        if drops:
            os.makedirs(os.path.join(config.scratch, "tmp"), exist_ok=True)
        # The kernel cache outlives a grading: it becomes the user of whichever process writes it now (a
        # grading as the sandbox user and one as root without capabilities may meet in the same folder).
        owner = config.uid if drops else os.geteuid()
        tops = ([config.scratch] if drops else []) + ([config.kernel_cache] if config.kernel_cache and os.geteuid() == 0
                                                        and not _in_user_namespace() else [])
        for top in tops:
            for folder, _, files in os.walk(top):
                for path in [folder, *(os.path.join(folder, f) for f in files)]:
                    os.lchown(path, owner, owner)
        if config.level == "user" and drops:
            _deny_others([*config.hide, *config.conceal])
        if config.level == "namespaces":
            _namespaces(config)
    except (SandboxError, OSError) as exc:
        _say_setup_failed(config, f"the sandbox ({config.level}) could not be set up: {exc}")
        return EXIT_SETUP
    if not (config.level == "namespaces" and config.pid_namespace):
        become_subreaper()
    judge = os.getppid()
    host_shm = config.cuda_ipc and not config.shm_private  # the host's /dev/shm: what appears there is deleted
    shared_before = set(os.listdir("/dev/shm")) if host_shm and os.path.isdir("/dev/shm") else set()
    pid = os.fork()
    if pid == 0:
        _learner_side(config, command)
    child.append(pid)
    for fd in (config.output_fd, ):
        if fd >= 0:
            os.close(fd)
    if stopping:
        on_term(stopping[0], None)
    status = 0
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    kill_children()  # whatever the learner's process left (a PID namespace has already done it)
    if config.level == "user" and drops:
        remove_leftovers(config.uid)
    if host_shm:
        remove_new_shared_files(shared_before, judge)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # a signal -s becomes 128 + s, as shells say it


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    settings = os.environ.pop(CONFIG_VARIABLE, None)
    if argv[:1] != ["--"] or len(argv) < 2 or settings is None:
        print("usage: GRADE_SANDBOX_CONFIG=JSON python -m grader.learner.sandbox -- COMMAND...", file=sys.stderr)
        return 2
    config = Config(**json.loads(settings))
    return keeper(config, argv[1:])


if __name__ == "__main__":
    sys.exit(main())
