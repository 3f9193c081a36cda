"""The judge's side of the learner's process: start it, call its functions, survive anything.

`LearnerProcess` owns one sandboxed runner (`grader.learner.sandbox`, `grader.learner.runner`) for one learner
file, the two shared arenas (`grader.wire.arena`) and the pipes (`grader.wire.protocol`). Specs never see
it directly: the `learner` fixture is a `LearnerModule` whose attributes are `LearnerFunction`
proxies, so ``learner_function(x, y)`` looks like a local call and returns the learner's result
as tensors in shared memory (on the CPU, whatever device the learner used).

What can go wrong in the learner's process becomes a `GradeFailure` with a sentence, and the next
call starts a fresh process (the learner's file is imported again):

* its code raises: the runner describes the exception (``kind`` as `grader.wire.failures` says);
* it runs past the check's clock: the whole sandbox is killed, ``Kind.TIMEOUT``;
* it dies (a segfault in the interpreter, an abort, a CUDA error): ``Kind.CRASH``/``Kind.FATAL``,
  with what the C library printed;
* it sends anything that is not a well-formed reply to the request just made: ``Kind.CRASH``.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from grader.learner import sandbox
from grader.wire import arena, protocol
from grader.wire.failures import GradeFailure
from grader.wire.results import Kind

if TYPE_CHECKING:
    import torch

    from grader.wire import guards
    from grader.learner.call_watch import Launch

# Torch (with `grader.wire.guards` and `grader.learner.call_watch`, which need it) is imported where it is used, not with
# this module: the judge starts the learner's process first, so that both import torch at once (about
# 2 s of CPU each, one after the other before).

#: Seconds the learner's file may take to import (Triton and torch are imported before the clock
#: of each check starts, but the file itself may run anything at import).
IMPORT_TIMEOUT = 60.0
#: Virtual sizes of the arenas (sparse: only touched pages cost memory).
ARENA_BYTES = {"in": 8 << 30, "out": 8 << 30}
STDERR_TAIL = 4000

_SIGNALS = {
    signal.SIGSEGV: "a segmentation fault",
    signal.SIGABRT: "an abort (the C library found the heap corrupted)",
    signal.SIGBUS: "a bus error",
    signal.SIGFPE: "a floating-point exception",
    signal.SIGILL: "an illegal instruction",
    signal.SIGKILL: "SIGKILL (out of memory?)",
}


def crash_message(returncode: int | None, stderr_tail: str, during: str | None) -> str:
    if returncode is not None and returncode > 128:
        what = _SIGNALS.get(returncode - 128, f"signal {returncode - 128}")
    elif returncode is not None and returncode < 0:
        what = _SIGNALS.get(-returncode, f"signal {-returncode}")
    else:
        what = f"exit status {returncode}"
    where = f" during `{during}`" if during else ""
    detail = ""
    for marker in ("free():", "corrupted", "double free", "malloc():", "Segmentation fault", "Aborted", "munmap_chunk"):
        for line in stderr_tail.splitlines():
            if marker in line:
                detail = f" (the C library said: “{line.strip()[:200]}”)"
                break
        if detail:
            break
    if returncode in (signal.SIGSEGV + 128, signal.SIGABRT + 128, signal.SIGBUS + 128) or detail:
        cause = ("your kernel most likely read or wrote far outside its tensors, past the grader's guard regions "
                 "(an unmasked load or store, or an offset that ignores the row stride)")
    else:
        cause = "your code ended the process (a call of os._exit or exit, a signal, or running out of memory)"
    return f"the process running your code died with {what}{where}{detail}: {cause}. The grader restarted it for the next check."


def _with_limit(message: str, raised: str = "") -> str:
    """``message``, led by the sandbox limit it ran into, if any."""
    limit = sandbox.limit_sentence(f"{raised} {message}")
    return f"{limit} ({message})" if limit else message


def clock_that_ran_out(request_timeout: float | None, remaining: float | None, check_clock: float | None) -> float:
    """The length of the clock that stopped a request: the check's, when its deadline came before the
    request's own limit (a timing request may wait 120 s inside a check of 60), else the request's."""
    if check_clock and remaining is not None and (request_timeout is None or remaining < request_timeout):
        return check_clock
    return request_timeout or remaining or 0.0


def timeout_message(seconds: float, during: str | None) -> str:
    what = f"`{during}`" if during else "your code"
    return (f"{what} did not finish within {seconds:.0f} s: does a loop in your kernel or launcher never end (a "
            "`while` whose condition never changes, a loop step of 0), or does the grid have far more programs "
            "than the data needs?")


@dataclass
class CallOutcome:
    """What one call of a learner function produced, as the judge reads it."""

    result: Any
    launches: list[Launch] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    #: (position among the returned tensors, torch fill) for each returned tensor a torch fill wrote.
    fills: list[tuple[int, str]] = field(default_factory=list)
    outputs: list[guards.GuardedTensor] = field(default_factory=list)
    returned: guards.GuardedTensor | None = None  # the allocation the (first) returned tensor views
    traffic: dict | None = None
    memory: dict | None = None

    def output_for(self, tensor: Any) -> guards.GuardedTensor | None:
        import torch

        if not isinstance(tensor, torch.Tensor):
            return None
        ptr = tensor.data_ptr()
        for out in self.outputs:
            start = out.buffer.data_ptr()
            if start <= ptr < start + out.buffer.numel() * out.buffer.element_size():
                return out
        return None


class LearnerProcess:
    """One learner file in a sandboxed process of its own."""

    def __init__(self, learner_file: str | Path, *, display: str | None = None, mode: str = "interpreter",
                 hide: tuple[str, ...] = (), level: str | None = None, import_timeout: float = IMPORT_TIMEOUT,
                 kernel_cache: str | Path | None = None, traced: bool = True):
        self.learner_file = Path(learner_file).resolve()
        self.display = display or str(learner_file)
        self.mode = mode
        self.hide = tuple(hide)
        self.level = level or sandbox.available_level()
        #: On a GPU, the Triton cache this learner's gradings keep (`grader.commands.isolation.kernel_cache_for`):
        #: a re-grade compiles nothing it compiled before. None: a cache in the scratch folder, gone with it.
        #: Not at the ``user`` level: the sandbox user could not reach a folder under the grader's home.
        self.kernel_cache = str(kernel_cache) if kernel_cache and mode == "gpu" and self.level != "user" else ""
        self.import_timeout = import_timeout
        #: False for the clock's twin, whose calls are never traced: its runner starts no CUPTI (`--untraced`).
        self.traced = traced
        self.arenas: dict[str, arena.Arena] = {}
        self.proc: subprocess.Popen | None = None
        self.hello: dict | None = None
        self.scratch: Path | None = None
        self._root: Path | None = None
        self._requests = self._replies = -1
        self._output = self._status = -1  # the learner's output file, the sandbox's failure channel
        self._next_id = 0
        self.restarts = 0
        self.current_check: str | None = None
        self.deadline: float | None = None  # the current check's clock (monotonic)
        self.clock_seconds: float | None = None  # its length in seconds
        self.on_call: Callable[[CallOutcome], None] | None = None  # the plugin counts launches per call
        self._buffers: list[list] = []  # [start, end, buffer, device] of every buffer in the in arena
        #: The course's twin process for the judge's clock (`grader.learner.clock_twin`), on a GPU.
        self.twin: "LearnerProcess | None" = None
        self._traffic_log = None
        #: When `start` was asked and when the judge read the hello, at its first need of the process (monotonic):
        #: the judge's "timings" event.
        self.started_at: float | None = None
        self.ready_at: float | None = None

    @classmethod
    def clock_twin(cls) -> "LearnerProcess":
        """The twin of the GPU timing (`grader.learner.clock_twin`): the course's own file, in a learner's process
        that is never traced, so that no CUPTI starts in it (CUPTI's start, in a thread beside the twin's first
        timing rounds, made them 2-131 ms long instead of about 0.7 on an H100)."""
        from grader.catalogue import ROOT

        return cls(ROOT / "grader" / "learner" / "clock_twin.py", display="grader/learner/clock_twin.py", mode="gpu",
                   traced=False)

    @property
    def traffic_log(self):
        """The bytes every correctness call of the run moved, and the rules the traffic checks stated
        (`grader.judge.traffic_rules.TrafficLog`, made on first use: the interpreter's checks only)."""
        if self._traffic_log is None:
            from grader.judge.traffic_rules import TrafficLog

            self._traffic_log = TrafficLog()
        return self._traffic_log

    # --- lifetime ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the learner's process (it imports the file; `ready` waits for it)."""
        from grader.catalogue import ROOT

        self.stop()
        self.started_at, self.ready_at = time.monotonic(), None
        self._root = Path(tempfile.mkdtemp(prefix="grade-run-"))
        os.chmod(self._root, 0o711)  # the sandbox user may pass through to its scratch folder, not list
        self.scratch = self._root / "work"
        self.scratch.mkdir()
        (self.scratch / "tmp").mkdir()
        (self._root / "view").mkdir()  # the namespaces level builds the learner's root here
        copy = self.scratch / self.learner_file.name
        shutil.copyfile(self.learner_file, copy)
        self._ensure_arenas()
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        # The learner's output and the sandbox's own failures go to descriptors opened here, in a
        # folder the learner's process cannot write: nothing it plants is ever opened by name.
        self._output = os.open(self._root / "output.txt", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                               | os.O_CLOEXEC, 0o600)
        self._status, status_write = os.pipe()
        command = [sys.executable, "-s", "-m", "grader.learner.runner",
                   "--requests", str(request_read), "--replies", str(reply_write),
                   "--arena-in", f"{self.arenas['in'].fd}:{self.arenas['in'].size}",
                   "--arena-out", f"{self.arenas['out'].fd}:{self.arenas['out'].size}", *self.runner_options(copy)]
        variant = sandbox.course_variant(ROOT, self.learner_file)
        env = sandbox.learner_environment(dict(os.environ), scratch=self.scratch, course=ROOT,
                                          interpreter=self.mode == "interpreter")
        if self.kernel_cache:
            try:
                os.makedirs(self.kernel_cache, mode=0o700, exist_ok=True)
                env["TRITON_CACHE_DIR"] = self.kernel_cache
            except OSError:  # a folder this judge's user may not write: the cache lives in the scratch folder
                self.kernel_cache = ""
        config = sandbox.Config(level=self.level, scratch=str(self.scratch), hide=list(self.hide),
                                uid=sandbox.sandbox_uid(), output_fd=self._output, status_fd=status_write,
                                pid_namespace=os.environ.get("GRADE_SANDBOX_PIDNS", "1") != "0",
                                view=str(self._root / "view"), expose=sandbox.runtime_paths(ROOT), course=str(ROOT),
                                conceal=sandbox.course_private_paths(ROOT, with_solutions=variant),
                                solutions=str(ROOT / "solutions") if variant else "", memory_bytes=sandbox.memory_limit(),
                                processes=sandbox.process_limit(), cuda_ipc=self.mode == "gpu",
                                shm_private=os.environ.get(sandbox.JUDGE_SHM_VARIABLE) == "private",
                                kernel_cache=self.kernel_cache)
        fds = (request_read, reply_write, self.arenas["in"].fd, self.arenas["out"].fd)
        for fd in fds:
            os.set_inheritable(fd, True)
        try:
            self.proc = sandbox.start(command, config, env=env, pass_fds=fds)
        finally:
            os.close(request_read)
            os.close(reply_write)
            os.close(status_write)
        self._requests, self._replies = request_write, reply_read
        self.hello = None

    def runner_options(self, copy: Path) -> list[str]:
        """What `grader.learner.runner` is told of its file (``copy``, in its scratch folder) beside the pipes and
        arenas: the name to show, the mode, and for the clock's twin that it is never traced."""
        return [f"--learner={copy}", f"--display={self.display}", "--mode", self.mode,
                *([] if self.traced else ["--untraced"])]

    def _setup_failure(self) -> str:
        """What the keeper said on the sandbox's own channel (empty when the sandbox was set up)."""
        if self._status < 0:
            return ""
        said = b""
        while len(said) < 4000:
            ready, _, _ = select.select([self._status], [], [], 0)
            if not ready:
                break
            chunk = os.read(self._status, 4000)
            if not chunk:
                break
            said += chunk
        return said.decode(errors="replace").strip()

    def ready(self) -> dict:
        """The learner process's hello (after its import); GradeFailure if it could not start."""
        if self.hello is not None and not self.hello.get("ready"):
            self._refuse(self.hello)
        if self.proc is None:
            self.start()
        if self.hello is not None:
            return self.hello
        try:
            hello = protocol.receive(self._replies, timeout=self.import_timeout)
        except protocol.ReplyTimeout:
            self.stop()
            self.hello = {"ready": False, "kind": Kind.IMPORT,
                          "message": f"importing your file did not finish within {self.import_timeout:.0f} s: does "
                                     "it run a loop at import time (outside any function)?"}
            self._refuse(self.hello)
        except protocol.ProtocolError:
            failure = self._setup_failure()
            code, tail = self._ended()
            if failure:
                raise GradeFailure(f"the grader could not set up its sandbox: {failure[-500:]}", kind=Kind.SETUP)
            self.hello = {"ready": False, "kind": Kind.IMPORT,
                          "message": "importing your file ended the process: " + crash_message(code, tail, None)}
            self._refuse(self.hello)
        if not isinstance(hello.get("ready"), bool):
            self.stop()
            raise GradeFailure("the process running your file sent something that is not the grader's", kind=Kind.IMPORT)
        self.hello = hello
        self.ready_at = time.monotonic()
        if not hello["ready"]:
            self.stop()
            self.hello = hello
            self._refuse(hello)
        return hello

    @staticmethod
    def _refuse(hello: dict) -> None:
        kind = Kind.of(hello.get("kind"))
        if kind not in (Kind.NOT_IMPLEMENTED, Kind.IMPORT, Kind.FATAL):
            kind = Kind.IMPORT
        raise GradeFailure(_with_limit(protocol.text(hello.get("message"))), kind=kind)

    @property
    def functions(self) -> set[str]:
        hello = self.ready()
        return {str(f) for f in hello.get("functions", [])}

    def ask_to_exit(self) -> None:
        """Tell the learner's process to end, without waiting (`stop` waits): several end together."""
        if self.proc is not None and self.proc.poll() is None and self._requests >= 0:
            try:
                protocol.send(self._requests, {"op": "exit"})
            except OSError:
                pass

    def stop(self) -> None:
        if self.proc is not None:
            self.ask_to_exit()
            sandbox.stop(self.proc, grace=0.5)
            self.proc = None
        for fd in (self._requests, self._replies, self._output, self._status):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._requests = self._replies = self._output = self._status = -1
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        self.hello = None

    def close(self) -> None:
        self.stop()
        for a in self.arenas.values():
            a.close()
        self.arenas = {}

    def _ended(self) -> tuple[int | None, str]:
        """The keeper's exit status once it has ended, and the tail of the learner's output."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = sandbox.stop(self.proc)
        tail = self.output_tail()
        self.proc = None
        self.stop()
        return code, tail

    def output_tail(self) -> str:
        """The end of what the learner's process printed, read through the judge's own descriptor."""
        if self._output < 0:
            return ""
        try:
            size = os.fstat(self._output).st_size
            return os.pread(self._output, STDERR_TAIL, max(0, size - STDERR_TAIL)).decode(errors="replace")
        except OSError:
            return ""

    # --- requests ---------------------------------------------------------------------------------

    def new_check(self, name: str | None, deadline: float | None) -> None:
        """A new check starts: fresh arenas (on both sides) and a new clock."""
        self.current_check = name
        self.deadline = deadline
        # The check's whole clock, for the message when it runs out (a request's own limit may be longer).
        self.clock_seconds = None if deadline is None else max(0.0, deadline - time.monotonic())
        if self.arenas:
            self.arenas["in"].reset()
        self._buffers = []
        if self.proc is not None and self.hello is not None and self.hello.get("ready"):
            self.request({"op": "reset"})

    def request(self, message: dict, *, timeout: float | None = None) -> dict:
        """Send one request and return its reply (``ok`` true); GradeFailure otherwise."""
        self.ready()
        if self.proc is None:
            self.start()
            self.ready()
        self._next_id += 1
        message = dict(message, id=self._next_id)
        remaining = timeout
        if self.deadline is not None:
            left = max(0.0, self.deadline - time.monotonic())
            remaining = left if remaining is None else min(remaining, left)
        try:
            protocol.send(self._requests, message)
            reply = protocol.receive(self._replies, timeout=remaining)
        except protocol.ReplyTimeout:
            self.stop()
            self.restarts += 1
            seconds = clock_that_ran_out(timeout, remaining, self.clock_seconds)
            raise GradeFailure(timeout_message(seconds if seconds else 0, self.current_check), kind=Kind.TIMEOUT) from None
        except (protocol.ProtocolError, BrokenPipeError, OSError):
            code, tail = self._ended()
            self.restarts += 1
            raise GradeFailure(crash_message(code, tail, self.current_check), kind=Kind.CRASH) from None
        if reply.get("id") != message["id"]:
            self.stop()
            self.restarts += 1
            raise GradeFailure("the process running your code answered a question the grader did not ask (was the "
                               "grader's pipe written to from your file?)", kind=Kind.CRASH)
        if not reply.get("ok"):
            kind = Kind.of(reply.get("kind"))
            if kind not in (Kind.WRONG, Kind.NOT_IMPLEMENTED, Kind.FATAL, Kind.IMPORT):
                kind = Kind.WRONG
            if kind == Kind.FATAL:
                self._ended()
                self.restarts += 1
            raised = reply.get("raised")
            message = protocol.text(reply.get("message")) or "your code failed"
            raise GradeFailure(_with_limit(message, protocol.text(raised) if raised else ""), kind=kind,
                               raised=protocol.text(raised)[:100] if raised else None)
        return reply

    # --- values -----------------------------------------------------------------------------------

    def _ensure_arenas(self) -> None:
        if not self.arenas:
            self.arenas = {name: arena.Arena(size, name=name) for name, size in ARENA_BYTES.items()}

    def allocate(self, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """A buffer in the ``in`` arena (`grader.wire.guards`' ``allocate``): the learner's process reads
        and writes it in place, and the judge sees every change."""
        self._ensure_arenas()
        buffer = self.arenas["in"].empty(numel, dtype)
        self._buffers.append([buffer.data_ptr(), buffer.data_ptr() + buffer.numel() * buffer.element_size(),
                              buffer, "cpu"])
        return buffer

    def set_device(self, buffer: torch.Tensor, device: str) -> None:
        """The learner sees the tensors in ``buffer`` on ``device`` (copied there and back by its process)."""
        for entry in self._buffers:
            if entry[2].data_ptr() == buffer.data_ptr():
                entry[3] = device

    def _place(self, tensor: torch.Tensor) -> dict:
        """A ``$tensor`` description of ``tensor``: inside a buffer of the ``in`` arena, or copied there."""
        from grader.wire import guards

        ptr, item = tensor.data_ptr(), tensor.element_size()
        base = self.arenas["in"].bytes.data_ptr()
        for start, end, buffer, device in self._buffers:
            if buffer.dtype == tensor.dtype and start <= ptr < end and (ptr - start) % item == 0:
                return arena.describe(tensor, "in", start - base, buffer.numel(), (ptr - start) // item, device=device)
        span = guards.extent(tuple(tensor.shape), tuple(tensor.stride())) if tensor.numel() else 0
        host = self.allocate(max(span, 1), tensor.dtype)
        view = host.as_strided(tuple(tensor.shape), tuple(tensor.stride()), host.storage_offset())
        view.copy_(tensor.detach())
        self._buffers[-1][3] = tensor.device.type
        return arena.describe(view, "in", host.data_ptr() - base, max(span, 1), 0, device=tensor.device.type)

    def encode(self, value: Any) -> Any:
        import torch

        if isinstance(value, torch.Tensor):
            return {"$tensor": self._place(value)}
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v) for v in value]}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, dict):
            return {str(k): self.encode(v) for k, v in value.items()}
        return protocol.encode_scalar(value)

    def decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if isinstance(value, dict):
            if "$tensor" in value:
                try:
                    _, view = arena.materialize(value["$tensor"], self.arenas)
                except ValueError as exc:
                    raise GradeFailure(f"your function returned a tensor the grader cannot read ({exc})") from None
                return view
            if "$tuple" in value:
                return tuple(self.decode(v) for v in value["$tuple"])
            if "$float" in value or "$opaque" in value:
                return protocol.decode_scalar(value)
            return {k: self.decode(v) for k, v in value.items()}
        return value

    def _outputs(self, allocations: list) -> list[guards.GuardedTensor]:
        from grader.wire import guards

        outputs = []
        for desc in allocations[:1000]:
            try:
                buffer, _ = arena.materialize({**desc, "shape": [int(desc["numel"])], "stride": [1],
                                               "storage_offset": 0}, self.arenas)
                shape, stride = [int(s) for s in desc["shape"]], [int(s) for s in desc["stride"]]
                if buffer.numel() != guards.buffer_numel(shape, stride) or desc.get("arena") != "out":
                    continue
                view = guards.view_of(buffer, shape, stride)
            except (ValueError, KeyError, TypeError):
                continue
            name = str(desc.get("name") or "a tensor you allocated")[:40]
            # Checked against what a fresh output holds, in chunks (guards.fresh_output_outside_writes):
            # no mask or copy as large as an allocation the learner's process made.
            outputs.append(guards.GuardedTensor(name, "output", buffer, view, None, None,
                                                device=str(desc.get("device", "cpu"))))
        return outputs

    def call(self, function: str, args: tuple | list, kwargs: dict, *, names: dict[str, str] | None = None,
             memory: bool = False, intercept: bool = True) -> CallOutcome:
        """Call ``function`` in the learner's process on these arguments; the outcome as data. In the
        interpreter every call is made the same way there (`grader.learner.runner`): watched, and its
        bytes counted, so the request says nothing of what the answer is for."""
        from grader.learner.call_watch import Launch

        self.ready()
        message = {"op": "call", "function": function, "args": self.encode(list(args)),
                   "kwargs": self.encode(dict(kwargs)), "names": names or {},
                   # measuring memory: the learner's own allocations, without the grader's guards around them
                   "memory": memory, "intercept": intercept and not memory}
        reply = self.request(message)
        watch = reply.get("watch") or {}
        launches = []
        for item in (watch.get("launches") or [])[:1000]:
            if not isinstance(item, dict):
                continue
            grid = item.get("grid")
            try:
                grid = tuple(int(g) for g in grid) if grid is not None else None
            except (TypeError, ValueError):
                grid = None
            arguments = {}
            for key, value in (item.get("arguments") or {}).items():
                try:
                    arguments[str(key)] = self.decode(value)
                except GradeFailure:
                    arguments[str(key)] = protocol.Opaque("a tensor")
            compiled = item.get("compiled") if isinstance(item.get("compiled"), dict) else None
            launches.append(Launch(protocol.text(item.get("kernel"))[:200], grid, arguments, compiled))
        outputs = self._outputs(watch.get("allocations") or [])
        result = self.decode(reply.get("result"))
        outcome = CallOutcome(result=result, launches=launches,
                              computed=[protocol.text(c)[:200] for c in (watch.get("computed") or [])][:200],
                              fills=_filled_outputs(watch.get("filled_outputs")),
                              outputs=outputs, traffic=reply.get("traffic") if isinstance(reply.get("traffic"), dict) else None,
                              memory=reply.get("memory") if isinstance(reply.get("memory"), dict) else None)
        first = result[0] if isinstance(result, tuple) and result else result
        outcome.returned = outcome.output_for(first)
        if self.on_call is not None:
            self.on_call(outcome)
        return outcome


def _filled_outputs(items: Any) -> list[tuple[int, str]]:
    """The learner process's ``filled_outputs``, as (position, fill) pairs; anything else dropped."""
    pairs = []
    for item in (items if isinstance(items, list) else [])[:200]:
        try:
            index, fill = item
            pairs.append((int(index), protocol.text(fill)[:200]))
        except (TypeError, ValueError):
            continue
    return pairs


class LearnerFunction:
    """A learner function, called in the learner's process: ``fn(*args, **kwargs)`` returns its result;
    ``fn.call(...)`` returns the whole `CallOutcome` (launches, torch ops, allocations)."""

    def __init__(self, process: LearnerProcess, name: str):
        self.process = process
        self.__name__ = name
        self.last: CallOutcome | None = None

    def call(self, *args, names: dict[str, str] | None = None, memory: bool = False,
             intercept: bool = True, **kwargs) -> CallOutcome:
        self.last = self.process.call(self.__name__, args, kwargs, names=names, memory=memory, intercept=intercept)
        return self.last

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs).result

    def __repr__(self) -> str:
        return f"<learner function {self.__name__}>"


class LearnerModule:
    """The learner's file as the judge sees it: ``learner.add`` is a `LearnerFunction`;
    ``getattr(learner, "missing", None)`` is None when the file does not define it."""

    def __init__(self, process: LearnerProcess):
        self._process = process

    def __getattr__(self, name: str) -> LearnerFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in self._process.functions:
            raise AttributeError(f"the learner's file defines no `{name}`")
        return LearnerFunction(self._process, name)

    def __dir__(self):
        return sorted(self._process.functions)
