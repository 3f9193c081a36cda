"""Where the learner's process runs: a sandbox that nothing it starts can leave.

The judge starts every learner process through a *keeper*, ``python -m grader.sandbox CONFIG --
COMMAND...``, which sets the sandbox up and then runs COMMAND (`grader.runner`) as its child.
Three levels, the strongest this machine allows (``GRADE_SANDBOX`` picks one by name):

``namespaces`` (root, or an unprivileged user namespace)
    New mount, PID and network namespaces. The whole file tree is read-only, except the run's own
    scratch folder (which holds the private copy of the learner's file) and ``/dev/shm``; the
    folders the judge names (a class's submissions, the output folder, progress files) are hidden
    under empty read-only mounts. The learner's process is PID 1 of its namespace: when it ends,
    the kernel ends every process it started, ``setsid`` daemons included, and it cannot see or
    signal any process outside. All capabilities are dropped (bounding set, ``no_new_privs``), so
    it cannot remount, trace or escape; no network.
``user`` (root, without namespaces: a container that forbids them, such as Gradescope's)
    The learner's process drops to an unprivileged user (``GRADE_SANDBOX_UID``, default 65534,
    "nobody") that owns only the scratch folder: it cannot write the course, read root-only
    folders, or signal the judge. Processes it leaves behind are found through the keeper, a
    child subreaper, and killed.
``partial`` (neither: a learner's laptop)
    The keeper is a child subreaper (every descendant, ``setsid`` or not, is reparented to it and
    killed when the run ends), the learner's process runs in its own session with resource limits
    and dies with the keeper; the judge is not dumpable (its memory and pipes cannot be read by
    the learner's process). Files the user can write, the learner's code can write: grade a class
    in a container (docs/grading.md).

At every level: ``PR_SET_PDEATHSIG`` (the learner's process dies with the keeper, the keeper with
the judge), ``RLIMIT_FSIZE`` (no file, stdout and stderr included, grows past `FILE_LIMIT`),
``RLIMIT_CORE`` 0, ``RLIMIT_NPROC`` where it applies (not to root), and a private working folder.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

LEVELS = ("namespaces", "user", "partial")
#: The largest file the learner's process may write (stdout and stderr go to files too).
FILE_LIMIT = 256 << 20
#: Processes the sandbox user may have at once (``user`` level; RLIMIT_NPROC does not bind root).
PROCESS_LIMIT = 512
DEFAULT_UID = 65534

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442  # the same number on x86-64 and arm64
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 36, 38, 47, 4
CAPABILITY_VERSION_3 = 0x20080522


class SandboxError(Exception):
    """The sandbox could not be set up; a sentence."""


@dataclass
class Config:
    """What the keeper needs; travels as JSON on its command line."""

    level: str
    scratch: str  # the run's private, writable folder (holds the copy of the learner's file)
    hide: list[str] = field(default_factory=list)  # folders to hide (empty read-only mounts)
    uid: int = DEFAULT_UID
    output: str = ""  # file for the learner process's stdout and stderr
    network: bool = False
    #: A PID namespace of its own (``GRADE_SANDBOX_PIDNS=0`` turns it off, e.g. where CUDA IPC needs
    #: both processes in one namespace; the keeper still kills every process left behind).
    pid_namespace: bool = True


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


def drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
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
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


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
            flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
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


def _map_user(uid: int, gid: int) -> None:
    """In a new user namespace, be the same user as outside (and have no other groups)."""
    try:
        Path("/proc/self/setgroups").write_text("deny")
    except OSError:
        pass
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


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
    "namespaces": "sandboxed (own mount, PID and network namespaces; course files read-only; no capabilities)",
    "user": "sandboxed (an unprivileged user; processes it leaves are killed)",
    "partial": ("partly sandboxed (own session, limits, processes it leaves are killed; the learner's code runs "
                "as you and can write what you can write: grade a class in a container, see docs/grading.md)"),
}


# --- starting a learner process ---------------------------------------------------------------------

def start(command: list[str], config: Config, *, env: dict[str, str], pass_fds: tuple[int, ...] = ()
          ) -> subprocess.Popen:
    """Start the keeper, which sets up ``config`` and runs ``command`` inside the sandbox."""
    keeper = [sys.executable, "-s", "-m", "grader.sandbox", json.dumps(asdict(config)), "--", *command]
    return subprocess.Popen(keeper, env=env, pass_fds=pass_fds, cwd=config.scratch, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_keeper_dies_with_parent)


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


def _redirect_output(path: str) -> None:
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _namespaces(config: Config) -> None:
    """In the keeper, before it forks the learner's process: namespaces and mounts."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | (CLONE_NEWPID if config.pid_namespace else 0)
    if not config.network:
        flags |= CLONE_NEWNET
    if os.geteuid() != 0:
        flags |= CLONE_NEWUSER
    _unshare(flags)
    if flags & CLONE_NEWUSER:
        _map_user(uid, gid)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # The scratch folder keeps its own mount so that it alone can be made writable again.
    _mount(config.scratch, config.scratch, None, MS_BIND | MS_REC)
    _mount_setattr("/", set_=MOUNT_ATTR_RDONLY)
    _mount_setattr(config.scratch, clear=MOUNT_ATTR_RDONLY)
    if os.path.ismount("/dev/shm"):
        _mount_setattr("/dev/shm", clear=MOUNT_ATTR_RDONLY, recursive=False)  # CUDA IPC and torch use it
    for folder in config.hide:
        if os.path.isdir(folder) and not _inside(config.scratch, folder):
            _mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")


def _inside(child: str, parent: str) -> bool:
    child, parent = os.path.realpath(child), os.path.realpath(parent)
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def _learner_side(config: Config, command: list[str]) -> None:
    """In the forked child: last steps, then exec the learner's process (never returns)."""
    try:
        _die_with_parent()
        os.setsid()
        if config.level == "namespaces" and config.pid_namespace:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this PID namespace only
        _limits(config)
        if config.level == "user":
            os.setgroups([])
            os.setresgid(config.uid, config.uid, config.uid)
            os.setresuid(config.uid, config.uid, config.uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (PROCESS_LIMIT, PROCESS_LIMIT))
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if config.level == "namespaces":
            drop_capabilities()
        os.chdir(config.scratch)
        os.umask(0o077)
        _redirect_output(config.output)
        os.execvp(command[0], command)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"grader sandbox: {exc}\n".encode())
        finally:
            os._exit(97)


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
    if config.level == "namespaces":
        try:
            _namespaces(config)
        except SandboxError as exc:
            os.write(2, f"grader sandbox: {exc}\n".encode())
            return 96
    if not (config.level == "namespaces" and config.pid_namespace):
        become_subreaper()
    if config.level == "user":
        os.chown(config.scratch, config.uid, config.uid)
        if config.output:
            Path(config.output).touch()
            os.chown(config.output, config.uid, config.uid)
    pid = os.fork()
    if pid == 0:
        _learner_side(config, command)
    child.append(pid)
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
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # a signal -s becomes 128 + s, as shells say it


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv or len(argv) < 3:
        print("usage: python -m grader.sandbox CONFIG_JSON -- COMMAND...", file=sys.stderr)
        return 2
    split = argv.index("--")
    config = Config(**json.loads(argv[0]))
    return keeper(config, argv[split + 1:])


if __name__ == "__main__":
    sys.exit(main())
