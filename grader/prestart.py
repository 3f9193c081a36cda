"""Processes that start with their imports done: a template imports torch once and forks one per request.

Starting a Python that imports torch costs about 2 s of CPU on a laptop core, and every grading
starts two that do: the judge, and the learner's process (docs/measurements/cpu-grading-speed.json).
A *template* is a process that imports what its role needs (``python -s -m grader.prestart
MODULE...``; ``MODULE:FUNCTION`` also calls a function of the module), then forks a fresh process for
each request. In the interpreter, `grader.commands.isolation`
starts one for the judges and one for the learner's processes (which `grader.learner.sandbox` sets up in the
forked process as in a new one) at a process's second grading, and keeps them for its life:
`grade batch`, `grade watch` and the course's tests pay the imports once.

    requester ──socket──▶ template ──fork──▶ keeper ──fork──▶ started process (``entry(argv)``)

The template never reads a request: on each one it forks, and the *keeper* it forked reads it
(the settings, and the descriptors the started process keeps, passed over the socket), tells the
template it has it, and closes the template's socket: a started process holds nothing of another
request and cannot ask for a process. The keeper then forks the started process, which sets up
what `subprocess.Popen` would have (its own session, the descriptors at the numbers it expects,
the environment, the folder) and calls the entry point. The keeper tells the requester the
started process's pid, later its exit status, and ends its process group if the requester goes
away (its end of the private connection closes), as ``PR_SET_PDEATHSIG`` does for a child.
`Started` is what the requester holds: the few methods of `subprocess.Popen` that the grader uses.

Set ``GRADE_PRESTART=0`` to start every process from scratch instead.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

#: The most descriptors one request passes.
MAX_FDS = 16
#: Bytes a template keeps on its command line and in its environment for those of the processes it starts
#: (`retitle`): a keeper's command line names the runner's, its environment holds the sandbox's settings.
ROOM = {"argv": 8 << 10, "env": 48 << 10}
ROOM_VARIABLE = "GRADE_PRESTART_ROOM"
#: The longest request (its settings as JSON).
MAX_REQUEST = 1 << 20


def enabled() -> bool:
    return os.environ.get("GRADE_PRESTART", "1") != "0"


class Started:
    """A process a template started for us: pid, poll(), wait(), send_signal(), kill(), returncode."""

    def __init__(self, connection: socket.socket, pid: int):
        self._connection = connection
        self._lock = threading.Lock()  # a grading's thread and `grade batch`'s Ctrl-C may both wait for it
        self.pid = pid
        self.returncode: int | None = None

    def _read_status(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if self.returncode is not None:
                    return True
                left = 0.1 if deadline is None else min(0.1, max(0.0, deadline - time.monotonic()))
                ready, _, _ = select.select([self._connection], [], [], left)
                if ready:
                    data = self._connection.recv(64)
                    try:
                        self.returncode = int(json.loads(data)["status"])
                    except (ValueError, KeyError, TypeError):
                        self.returncode = -signal.SIGKILL  # the keeper died without saying: the process went with it
                    self._connection.close()
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def poll(self) -> int | None:
        self._read_status(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._read_status(timeout):
            raise subprocess.TimeoutExpired(f"process {self.pid}", timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Template:
    """A template process (``imports`` done, ``env`` its environment) and the socket to ask it."""

    def __init__(self, imports: list[str], *, env: dict[str, str], cwd: str | None = None, preexec_fn=None):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.imports = list(imports)
        self._socket = ours
        self.proc: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-s", "-m", "grader.prestart", str(theirs.fileno()), *imports, "#" * ROOM["argv"]],
            env={**env, ROOM_VARIABLE: "#" * ROOM["env"]}, cwd=cwd, pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec_fn)
        theirs.close()

    @classmethod
    def reached_through(cls, fd: int) -> "Template":
        """The template whose socket another process passed us as ``fd`` (we may ask, not end it)."""
        template = cls.__new__(cls)
        template.imports, template._socket, template.proc = ["its imports"], socket.socket(fileno=fd), None
        return template

    @property
    def fileno(self) -> int:
        """The socket to pass to a process that may ask this template too."""
        return self._socket.fileno()

    def alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None

    def start(self, entry: str, argv: list[str], *, env: dict[str, str], cwd: str,
              fds: dict[int, int]) -> Started:
        """Start ``entry`` (``"module:function"``, called with ``argv``, its return value the exit status)
        with ``env`` in ``cwd``; ``fds`` maps each descriptor number it gets to one of ours (0, 1 and 2
        included: those it is not given are /dev/null). Its command line in /proc reads
        ``python -s -m MODULE ARGV...``, as if it had been started so."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self._socket, [b"start"], [theirs.fileno()])
        finally:
            theirs.close()
        targets = sorted(fds)
        title = [sys.executable, "-s", "-m", entry.split(":")[0], *argv]
        settings = json.dumps({"entry": entry, "argv": argv, "env": env, "cwd": cwd, "targets": targets,
                               "title": title}).encode()
        socket.send_fds(ours, [settings], [fds[t] for t in targets])
        ready, _, _ = select.select([ours], [], [], 30)
        reply = ours.recv(64) if ready else b""
        try:
            pid = int(json.loads(reply)["pid"])
        except (ValueError, KeyError, TypeError):
            ours.close()
            raise OSError(f"the template of {', '.join(self.imports)} did not start the process") from None
        return Started(ours, pid)

    def cpu_seconds(self) -> float:
        """CPU seconds of the template and of the processes it started that have ended (Linux's /proc)."""
        if self.proc is None:
            return 0.0
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def close(self, timeout: float = 30.0) -> None:
        """Let the template end once what it started has ended (``timeout`` at most, then kill it)."""
        self._socket.close()
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- the template's side ---------------------------------------------------------------------------

def _reap(block: bool = False) -> None:
    """Collect the keepers that ended (each one's CPU time then counts in this process's children)."""
    while True:
        try:
            ended, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if ended == 0:
            return


def _serve(listening: socket.socket) -> int:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while True:
        ready, _, _ = select.select([listening], [], [], 1.0)
        _reap()
        if not ready:
            continue
        message, fds, _, _ = socket.recv_fds(listening, 16, 1)
        if not message:
            _reap(block=True)  # the requester is gone: its keepers end theirs, then this one ends
            return 0
        connection = socket.socket(fileno=fds[0]) if fds else None
        if connection is None:
            continue
        taken_read, taken_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(taken_read)
            listening.close()
            _keeper(connection, taken_write)  # never returns
        connection.close()
        os.close(taken_write)
        os.read(taken_read, 1)  # the keeper has read its request (or died): the next one is not its
        os.close(taken_read)


def _keeper(connection: socket.socket, taken: int) -> None:
    code = 1
    try:
        os.setsid()  # its own group: a signal the requester sends the started process does not reach it
        message, fds, _, _ = socket.recv_fds(connection, MAX_REQUEST, MAX_FDS)
        os.write(taken, b"x")
        os.close(taken)
        settings = json.loads(message)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _started(settings, fds)  # never returns
        for fd in fds:
            os.close(fd)
        connection.send(json.dumps({"pid": pid}).encode())
        code = _watch(connection, pid)
    finally:
        os._exit(code)


def _watch(connection: socket.socket, pid: int) -> int:
    """Wait for the started process; its exit status to the requester. If the requester goes away
    first, end the started process's group."""
    ended_fd = os.pidfd_open(pid)  # readable once the process has ended
    while True:
        ready, _, _ = select.select([connection, ended_fd], [], [])
        if ended_fd in ready:
            _, status = os.waitpid(pid, 0)
            try:
                connection.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                pass
            return 0
        if not connection.recv(64):  # the requester is gone
            for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(pid, sig)
                except ProcessLookupError:
                    pass
                deadline = time.monotonic() + grace
                while time.monotonic() < deadline:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        return 0
                    time.sleep(0.02)
            return 0


def _started(settings: dict, fds: list[int]) -> None:
    code = 1
    try:
        os.setsid()
        targets = [int(t) for t in settings["targets"]]
        # Move what was received above every target first, so that placing one never closes another.
        high = max([*targets, *fds, 2]) + 1
        moved = [os.dup2(fd, high + i) for i, fd in enumerate(fds)]
        for fd in fds:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            if std not in targets:
                os.dup2(null, std)
        for target, fd in zip(targets, moved):
            os.dup2(fd, target, inheritable=True)
        keep = {0, 1, 2, *targets}
        for fd in map(int, os.listdir("/proc/self/fd")):
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.environ.clear()
        os.environ.update(settings["env"])
        retitle(settings["title"], os.environ)
        os.chdir(settings["cwd"])
        if os.environ.get("PYTHONFAULTHANDLER"):
            import faulthandler

            faulthandler.enable()
        module, function = settings["entry"].split(":")
        sys.argv = [module, *settings["argv"]]
        code = getattr(importlib.import_module(module), function)(list(settings["argv"]))
        code = int(code or 0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - said on stderr, as a fresh Python would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def retitle(argv: list[str], env: dict[str, str]) -> bool:
    """Show ``argv`` and ``env`` in /proc/self/cmdline and /proc/self/environ, which show what the process
    was started with (the template's), as an exec would: written over the template's own, which kept
    room for them (`ROOM`). Nothing reads them here (Python copied both when it started, and the C
    library's environment was rebuilt from ``os.environ``). False, and nothing written, where one
    does not fit."""
    import ctypes

    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    arg_start, arg_end, env_start, env_end = (int(v) for v in fields[45:49])  # fields 48-51 of proc(5)
    texts = [(arg_start, arg_end, b"".join(a.encode(errors="surrogateescape") + b"\0" for a in argv)),
             (env_start, env_end, b"".join(f"{k}={v}".encode(errors="surrogateescape") + b"\0" for k, v in env.items()))]
    if any(len(text) > end - start for start, end, text in texts):
        return False
    for start, end, text in texts:
        ctypes.memmove(start, text + b"\0" * (end - start - len(text)), end - start)
    return True


def main(argv: list[str] | None = None) -> int:
    argv = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("#")]  # the room left
    listening = socket.socket(fileno=int(argv[0]))
    from grader.learner import sandbox

    sandbox.make_undumpable()  # a process of the same user cannot trace it to ask for a process of its own
    for entry in argv[1:]:  # "module", or "module:function" to call it once imported
        module, _, function = entry.partition(":")
        imported = importlib.import_module(module)
        if function:
            getattr(imported, function)()
    return _serve(listening)


if __name__ == "__main__":
    sys.exit(main())
