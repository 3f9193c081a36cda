"""The learner's process: import the learner's file, call its functions when the judge asks.

    python -m grader.learner.runner --requests FD --replies FD --arena-in FD:BYTES --arena-out FD:BYTES
        --learner PATH --display NAME --mode interpreter|gpu

Started by the judge through `grader.learner.sandbox` (which set up the sandbox and, in interpreter mode,
``TRITON_INTERPRET=1`` before this process imported anything). Everything here before the
learner's file is imported is the course's code; after it, nothing in this process can be
trusted, and nothing here decides anything: a reply carries the learner's outputs (in the
shared arenas, `grader.wire.arena`), what the watch saw (launches, torch ops, allocations: help for
honest mistakes, not a guarantee) and sentences about exceptions. The judge checks the outputs
itself.

Requests (`grader.wire.protocol`):

* ``call``: call one of the learner's functions on arguments in the ``in`` arena, watched
  (`grader.learner.call_watch.Watch`); in the interpreter every call has the bytes its kernels move
  counted (`grader.learner.traffic.EveryCall`), on a GPU a call may measure the memory it
  allocates; tensors marked ``cuda`` are copied to the GPU first and back after. In the
  interpreter nothing in a request or in this process's state says what the judge will do with
  the answer: a correctness call and the traffic check's call are made the same way.
* ``reset``: start filling the ``out`` arena from the beginning (a new check).
* ``timing_setup`` / ``timing_go`` / ``timing_dobench``: the GPU timing the judge's clock
  decides by (`grader.judge.clock`); ``timing_trace_start`` / ``timing_trace_stop`` keep a CUDA
  activity trace over its counted rounds (`grader.learner.kernel_trace`).
* ``exit``: leave at once (``os._exit``: a learner's non-daemon thread or ``atexit`` hook cannot
  keep the process alive; the judge kills it anyway after a moment).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from grader.wire.results import Kind

EXIT_CUDA_FATAL = 75  # a CUDA error poisoned this process's context: the judge starts a new one


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="grader.learner.runner")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--arena-in", required=True)
    parser.add_argument("--arena-out", required=True)
    parser.add_argument("--learner", required=True)
    parser.add_argument("--display", required=True)
    parser.add_argument("--mode", choices=["interpreter", "gpu"], required=True)
    # The clock's twin (grader.learner.clock_twin): its calls are never traced, so CUPTI is not started. Started
    # in a thread (as for a learner's file), CUPTI's start ran beside the twin's first timing rounds: on an H100
    # they took 2-131 ms instead of about 0.7 (the twin_rounds_ms of docs/measurements/h100-verdict-spread.json).
    parser.add_argument("--untraced", action="store_true")
    return parser.parse_args(argv)


class Runner:
    def __init__(self, args: argparse.Namespace):
        import torch

        from grader.wire import arena, protocol

        self.torch = torch
        self.protocol = protocol
        self.args = args
        self.requests, self.replies = args.requests, args.replies
        fd_in, size_in = (int(v) for v in args.arena_in.split(":"))
        fd_out, size_out = (int(v) for v in args.arena_out.split(":"))
        self.arenas = {"in": arena.Arena(size_in, fd=fd_in, name="in"), "out": arena.Arena(size_out, fd=fd_out, name="out")}
        self.gpu = args.mode == "gpu"
        self.module = None
        self.timing: dict | None = None
        self.trace = None  # the CUDA activity trace over the judge's counted rounds (grader.learner.kernel_trace)
        #: Interpreter: the traffic counter whose hooks stay installed for the whole process (`main`).
        self.counting = None

    # --- the learner's module ------------------------------------------------------------------

    def import_learner(self) -> dict:
        from grader.learner import loader
        from grader.wire.failures import describe_exception

        path = self.args.learner
        try:
            module = loader.import_file(path)
        except loader.NotAPythonFile:
            return {"ready": False, "kind": Kind.IMPORT, "message": f"cannot import {self.args.display}: is it a Python file?"}
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from the file too
            failure = describe_exception(exc, path, display=self.args.display)
            kind = Kind.NOT_IMPLEMENTED if failure.kind == Kind.NOT_IMPLEMENTED else Kind.IMPORT
            if isinstance(exc, SystemExit):
                message = (f"your file called exit ({exc.code!r}) while it was imported: a learner file only "
                           "defines functions and kernels")
            else:
                message = f"importing {self.args.display} failed: {failure}"
            return {"ready": False, "kind": kind, "message": message}
        self.module = module
        functions = sorted(name for name, value in vars(module).items()
                           if callable(value) and not name.startswith("__"))
        return {"ready": True, "functions": functions}

    # --- values ---------------------------------------------------------------------------------

    def _decode(self, value: Any, uploads: list) -> Any:
        from grader.wire import arena

        torch = self.torch
        if isinstance(value, list):
            return [self._decode(v, uploads) for v in value]
        if isinstance(value, dict):
            if "$tensor" in value:
                desc = value["$tensor"]
                buffer, view = arena.materialize(desc, self.arenas)
                self._known.append((buffer, desc, None))
                if desc.get("device") == "cuda":
                    device_buffer = buffer.to("cuda")
                    self._known[-1] = (buffer, desc, device_buffer)
                    uploads.append((buffer, device_buffer))
                    return device_buffer.as_strided(view.shape, view.stride(), int(desc["storage_offset"]))
                return view
            return self.protocol.decode_scalar(value) if ("$float" in value or "$tuple" in value or "$opaque" in value) \
                else {k: self._decode(v, uploads) for k, v in value.items()}
        return value

    def _encode(self, value: Any, *, depth: int = 0) -> Any:
        torch = self.torch
        if isinstance(value, torch.Tensor):
            return {"$tensor": self._describe_tensor(value)}
        if depth > 8:
            return self.protocol.opaque(value)
        if isinstance(value, tuple):
            return {"$tuple": [self._encode(v, depth=depth + 1) for v in value]}
        if isinstance(value, list):
            return [self._encode(v, depth=depth + 1) for v in value[:10_000]]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: self._encode(v, depth=depth + 1) for k, v in list(value.items())[:10_000]}
        return self.protocol.encode_scalar(value)

    def _describe_tensor(self, tensor) -> dict:
        """Where the judge finds ``tensor``: inside a buffer it handed over or one the learner
        allocated through the watch; otherwise copied into the ``out`` arena."""
        from grader.wire import arena

        torch = self.torch
        if tensor.is_sparse or tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        tensor = tensor.detach()
        ptr = tensor.data_ptr()
        item = tensor.element_size()
        for host, desc, device_buffer in self._known:
            local = device_buffer if device_buffer is not None else host
            start = local.data_ptr()
            if local.dtype == tensor.dtype and start <= ptr < start + local.numel() * item and (ptr - start) % item == 0:
                storage_offset = (ptr - start) // item
                if self._fits(tensor, storage_offset, local.numel()):
                    out = dict(desc)
                    out.update(dtype=arena.dtype_name(tensor.dtype), shape=list(tensor.shape),
                               stride=list(tensor.stride()), storage_offset=storage_offset)
                    return out
        # Not in a known buffer: copy it (contiguous) into the out arena.
        dtype = tensor.dtype if tensor.dtype in arena.dtypes().values() else torch.float32
        numel = max(tensor.numel(), 1)
        host = self.arenas["out"].empty(numel, dtype)
        offset = host.data_ptr() - self.arenas["out"].bytes.data_ptr()
        host[: tensor.numel()].copy_(tensor.reshape(-1).to(dtype))
        flat = host[: tensor.numel()].view(tensor.shape)
        return arena.describe(flat, "out", offset, numel, 0, device=tensor.device.type) | {"copied": True}

    @staticmethod
    def _fits(tensor, storage_offset: int, numel: int) -> bool:
        if tensor.numel() == 0:
            return True
        last = storage_offset + sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride()))
        return all(st >= 0 for st in tensor.stride()) and last < numel

    # --- calls --------------------------------------------------------------------------------

    def _make_output(self, name, shape, stride, dtype, device):
        """An intercepted allocation: a guarded, poisoned buffer the judge can read."""
        from grader.wire import arena, guards

        if self.gpu and self.torch.device(device).type == "cuda":
            guarded = guards.guard_output(name, shape, stride, dtype, device)
            host = self.arenas["out"].empty(guarded.buffer.numel(), dtype)
            self._downloads.append((guarded.buffer, host))
            offset = host.data_ptr() - self.arenas["out"].bytes.data_ptr()
        else:
            guarded = guards.guard_output(name, shape, stride, dtype, "cpu", allocate=self.arenas["out"].empty)
            host = guarded.buffer
            offset = host.data_ptr() - self.arenas["out"].bytes.data_ptr()
        index = len(self._allocations)
        desc = {"arena": "out", "offset": offset, "numel": guarded.buffer.numel(),
                "dtype": arena.dtype_name(dtype), "shape": list(shape), "stride": list(stride),
                "storage_offset": guards.GUARD, "device": self.torch.device(device).type, "allocation": index,
                "name": name}
        self._allocations.append(desc)
        self._known.append((host, desc, guarded.buffer if host is not guarded.buffer else None))
        return guarded

    def call(self, request: dict) -> dict:
        from grader.wire.failures import describe_exception
        from grader.learner.call_watch import Watch

        torch = self.torch
        name = request.get("function")
        fn = getattr(self.module, str(name), None)
        if not callable(fn):
            return {"ok": False, "kind": Kind.WRONG,
                    "message": f"your file does not define `{name}`: keep the functions the stub defines"}
        self._known, self._allocations, self._downloads = [], [], []
        uploads: list = []
        try:
            args = self._decode(request.get("args") or [], uploads)
            kwargs = self._decode(request.get("kwargs") or {}, uploads)
        except ValueError as exc:
            return {"ok": False, "kind": Kind.WRONG, "message": f"the grader could not hand over the inputs: {exc}"}
        names = request.get("names") or {}
        memory = bool(request.get("memory")) and self.gpu
        watch = Watch(intercept_allocations=bool(request.get("intercept", True)), make_output=self._make_output)
        counter = self.counting.begin() if self.counting is not None else None
        reply: dict = {"ok": True}
        try:
            if counter is not None:
                for index, value in enumerate(args):
                    if isinstance(value, torch.Tensor):
                        counter.watch(str(names.get(str(index)) or f"argument {index}"), value)
                for key, value in kwargs.items():
                    if isinstance(value, torch.Tensor):
                        counter.watch(str(names.get(key) or key), value)
                watch.on_allocate = counter.watch
            if memory:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                before = torch.cuda.memory_allocated()
            try:
                with watch:
                    result = fn(*args, **kwargs)
                    if self.gpu:
                        torch.cuda.synchronize()
            except BaseException as exc:  # noqa: BLE001 - anything the learner's code raises is a sentence
                failure = describe_exception(exc, self.args.learner, display=self.args.display)
                reply = {"ok": False, "kind": failure.kind, "message": str(failure), "raised": failure.raised}
                result = None
            if memory and reply["ok"]:
                reply["memory"] = {"peak_bytes": int(torch.cuda.max_memory_allocated() - before)}
        finally:
            if counter is not None:
                self.counting.end()
        if not reply["ok"] and reply["kind"] == Kind.FATAL:
            return reply
        try:
            if self.gpu:
                torch.cuda.synchronize()
                for host, device_buffer in uploads:
                    host.copy_(device_buffer.cpu())
                for device_buffer, host in self._downloads:
                    host.copy_(device_buffer.cpu())
        except BaseException as exc:  # noqa: BLE001
            failure = describe_exception(exc, self.args.learner, display=self.args.display)
            return {"ok": False, "kind": failure.kind, "message": str(failure)}
        outcome = watch.result
        reply["watch"] = {
            "launches": [{"kernel": launch.kernel, "grid": list(launch.grid) if launch.grid is not None else None,
                          "arguments": {k: self._encode(v) for k, v in launch.arguments.items()},
                          "compiled": launch.compiled} for launch in outcome.launches[:1000]],
            "computed": outcome.computed[:200],
            # Only fills of what the call returned (a scratch buffer may be a torch.zeros).
            "filled_outputs": [[index, fill] for index, fill in outcome.filled_outputs(result)][:200],
            "allocations": self._allocations,
        }
        if counter is not None:
            reply["traffic"] = self.counting.report(counter)
        if reply["ok"]:
            reply["result"] = self._encode(result)
        return reply

    # --- a measurement the course runs on a learner function ------------------------------------

    def measure(self, request: dict) -> dict:
        """Run a course function (``grader.<module>:<name>``) on one of the learner's functions and
        return its numbers (exercise 6 times a block with the exercise-3 softmax swapped in)."""
        import importlib

        from grader.wire.failures import describe_exception

        target = str(request.get("target") or "")
        module_name, _, name = target.partition(":")
        if not module_name.startswith("grader.") or not name:
            return {"ok": False, "kind": Kind.WRONG, "message": f"no such measurement {target!r}"}
        fn = getattr(self.module, str(request.get("function")), None)
        if not callable(fn):
            return {"ok": False, "kind": Kind.WRONG, "message": f"the file does not define `{request.get('function')}`"}
        try:
            measured = getattr(importlib.import_module(module_name), name)(fn, **(request.get("kwargs") or {}))
        except BaseException as exc:  # noqa: BLE001
            failure = describe_exception(exc, self.args.learner, display=self.args.display)
            return {"ok": False, "kind": failure.kind, "message": str(failure), "raised": failure.raised}
        return {"ok": True, "result": self.protocol.encode_scalar(measured)}

    # --- timing (GPU) -------------------------------------------------------------------------

    def timing_setup(self, request: dict) -> dict:
        rebuild = self.protocol.decode_shared  # the judge's CUDA tensors, opened in place

        fn = getattr(self.module, str(request.get("function")), None)
        if not callable(fn) and not request.get("twin"):
            return {"ok": False, "kind": Kind.WRONG, "message": f"your file does not define `{request.get('function')}`"}
        sets = [(rebuild(s["args"]), rebuild(s["kwargs"])) for s in request["sets"]]
        slots = [rebuild(slot) for slot in request["outputs"]]
        self.timing = {"fn": fn, "sets": sets, "slots": slots}
        return {"ok": True}

    def timing_go(self, request: dict) -> dict:
        """K calls, each output placed in the judge's slot, then one device-wide synchronize."""
        from grader.wire.failures import describe_exception
        from grader.learner.call_watch import redirect_allocations

        torch = self.torch
        state = self.timing
        copied = []
        if request.get("twin"):  # the course's twin (grader.learner.clock_twin): a round with one element of work
            state["slots"][0].view(-1)[:1].fill_(0.25)
            torch.cuda.synchronize()
            return {"ok": True, "copied": []}
        try:
            for (args, kwargs), slot in zip(state["sets"], state["slots"]):
                with redirect_allocations(slot):
                    result = state["fn"](*args, **kwargs)
                out = result[0] if isinstance(result, (tuple, list)) else result
                same = isinstance(out, torch.Tensor) and out.data_ptr() == slot.data_ptr()
                if not same and isinstance(out, torch.Tensor) and out.shape == slot.shape:
                    slot.copy_(out)  # the learner allocated elsewhere: the copy counts in the time
                copied.append(not same)
            torch.cuda.synchronize()
        except BaseException as exc:  # noqa: BLE001
            failure = describe_exception(exc, self.args.learner, display=self.args.display)
            return {"ok": False, "kind": failure.kind, "message": str(failure)}
        return {"ok": True, "copied": copied}

    def timing_dobench(self, request: dict) -> dict:
        """The cross-check: triton.testing.do_bench on the first set, in this process."""
        from grader import bandwidth

        state = self.timing
        args, kwargs = state["sets"][0]
        work = lambda: state["fn"](*args, **kwargs)  # noqa: E731
        try:
            ms = bandwidth.time_ms(work, rep_ms=int(request.get("rep_ms", 100)))
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "kind": Kind.WRONG, "message": f"do_bench failed: {type(exc).__name__}: {exc}"}
        return {"ok": True, "ms": ms}

    def timing_trace_start(self, request: dict) -> dict:
        """From now on a CUDA activity trace records every kernel this process runs."""
        from grader.learner.kernel_trace import KernelTrace

        if self.trace is None:
            try:
                self.trace = KernelTrace(self.torch)
            except Exception as exc:  # noqa: BLE001 - no profiler here: the judge says it cannot audit
                return {"ok": True, "started": False, "why": f"{type(exc).__name__}: {exc}"[:300]}
        return {"ok": True, "started": True}

    def timing_trace_stop(self, request: dict) -> dict:
        """The kernels the trace saw since ``timing_trace_start``, by name, with their launches."""
        kernels = self.trace.stop() if self.trace is not None else None
        self.trace = None
        return {"ok": True, "kernels": kernels}

    def timing_release(self, request: dict) -> dict:
        import gc

        if self.trace is not None:  # a trace the judge left running (its clock failed mid-way)
            self.trace.stop()
            self.trace = None
        self.timing = None
        gc.collect()  # the shared tensors' last references: the judge can collect their memory at once
        self.torch.cuda.synchronize()
        return {"ok": True}

    # --- the loop -----------------------------------------------------------------------------

    def serve(self) -> int:
        protocol = self.protocol
        handlers = {"call": self.call, "measure": self.measure, "timing_setup": self.timing_setup,
                    "timing_go": self.timing_go, "timing_trace_start": self.timing_trace_start,
                    "timing_trace_stop": self.timing_trace_stop,
                    "timing_dobench": self.timing_dobench, "timing_release": self.timing_release}
        while True:
            try:
                request = protocol.receive(self.requests, limit=1 << 30)
            except protocol.ProtocolError:
                return 0  # the judge went away
            op = request.get("op")
            rid = request.get("id")
            if op == "exit":
                return 0
            if op == "reset":
                self.arenas["out"].reset()
                reply = {"ok": True}
            elif op in handlers:
                reply = handlers[op](request)
            else:
                reply = {"ok": False, "kind": Kind.WRONG, "message": f"unknown request {op!r}"}
            reply["id"] = rid
            reply.setdefault("seconds", 0.0)
            try:
                protocol.send(self.replies, reply)
            except (BrokenPipeError, OSError):
                return 0
            if not reply.get("ok") and reply.get("kind") == Kind.FATAL:
                return EXIT_CUDA_FATAL


def main(argv: list[str] | None = None) -> int:
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    from grader.wire import protocol

    started = time.monotonic()
    # When each step of the start ended, in seconds from here (after Python's own start): where a grading's
    # first result waits (the judge's "timings" event; tools/device/startup_probe.py prints them).
    stages: dict[str, float] = {}

    def reached(stage: str) -> None:
        stages[stage] = round(time.monotonic() - started, 3)

    if args.mode == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    reached("torch")

    # In the interpreter, one thread: this process and the judge take turns (one waits while the other
    # works) on small tensors, and OpenMP's idle threads spin for the CPU the other one needs (what that
    # did to the course's tests beside gradings: docs/measurements/cpu-grading-speed.json, the rows
    # torch_ops_beside_a_grading).
    torch.set_num_threads(1 if args.mode == "interpreter" else max(1, min(4, os.cpu_count() or 1)))
    try:
        import triton  # noqa: F401

        triton_version = triton.__version__
        reached("triton")
    except Exception as exc:  # noqa: BLE001
        protocol.send(args.replies, {"ready": False, "kind": Kind.FATAL, "message": f"Triton cannot be imported: {exc}"})
        return 1
    fixes: dict = {}
    if args.mode == "interpreter":
        from grader.learner import mode

        fixes = mode.prepare_interpreter()
    else:  # a GPU's compiler runs the learner's Python too, and takes arguments the interpreter would
        from grader.learner import interpreter_fixes

        interpreter_fixes.apply_compiled()
        from grader.learner import kernel_trace

        # torch.profiler's names, before the learner's file can replace them, and CUPTI started in a thread: the
        # first trace of a process waited 4.1 s for it on an H200 (grader.learner.kernel_trace says what it costs
        # the first check).
        kernel_trace.prepare(warm=not args.untraced)
        from grader.device import hold_to_memory_limit

        hold_to_memory_limit()  # an emulated smaller card (GRADE_DEVICE_MEMORY_GIB) holds this process too
        reached("trace_prepared")
    runner = Runner(args)
    if args.mode == "interpreter":
        # The watch's launch wrappers and the traffic counter's hooks are installed now, once, before
        # the learner's file is imported: every call then finds the same ones, whatever the judge does
        # with it. (On a GPU the wrappers come and go with each watched call: the timed calls run bare.)
        from grader.learner import call_watch, traffic

        call_watch.install_for_process()
        runner.counting = traffic.EveryCall()
    hello = runner.import_learner()
    reached("file_imported")
    hello.update(versions={"triton": triton_version, "torch": torch.__version__, "python": sys.version.split()[0]},
                 fixes=fixes, seconds=round(time.monotonic() - started, 3), stages=stages)
    protocol.send(args.replies, hello)
    if not hello["ready"]:
        return 0
    code = runner.serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
