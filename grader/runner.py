"""The learner's process: import the learner's file, call its functions when the judge asks.

    python -m grader.runner --requests FD --replies FD --arena-in FD:BYTES --arena-out FD:BYTES
        --learner PATH --display NAME --mode interpreter|gpu

Started by the judge through `grader.sandbox` (which set up the sandbox and, in interpreter mode,
``TRITON_INTERPRET=1`` before this process imported anything). Everything here before the
learner's file is imported is the course's code; after it, nothing in this process can be
trusted, and nothing here decides anything: a reply carries the learner's outputs (in the
shared arenas, `grader.arena`), what the watch saw (launches, torch ops, allocations: help for
honest mistakes, not a guarantee) and sentences about exceptions. The judge checks the outputs
itself.

Requests (`grader.protocol`):

* ``call``: call one of the learner's functions, on arguments in the ``in`` arena (tensors marked
  ``cuda`` are copied to the GPU first and back after), or once per shared set (``sets``, the
  calls the judge's clock times). Every call is made the same way (`Runner._watched`): the watch
  (`grader.watch.Watch`: launches, torch ops, allocations intercepted into guarded buffers), the
  bytes its kernels move (`grader.traffic`, interpreter) and the memory it allocates (GPU). The
  request says nothing else about what the judge will do with the answer.
* ``reset``: start filling the ``out`` arena from the beginning (a new check).
* ``share`` / ``unshare``: open and close the judge's sets for its clock (`grader.timing`);
  ``trace_start`` / ``trace_stop``: a CUDA activity trace of the kernels that run in between
  (around the timed rounds: `grader.kernel_audit`).
* ``twin_round``, ``dobench``: the twin's round and the do_bench cross-check (`grader.timing`).
* ``exit``: leave at once (``os._exit``: a learner's non-daemon thread or ``atexit`` hook cannot
  keep the process alive; the judge kills it anyway after a moment).
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from grader.results import Kind

EXIT_CUDA_FATAL = 75  # a CUDA error poisoned this process's context: the judge starts a new one


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="grader.runner")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--arena-in", required=True)
    parser.add_argument("--arena-out", required=True)
    parser.add_argument("--learner", required=True)
    parser.add_argument("--display", required=True)
    parser.add_argument("--mode", choices=["interpreter", "gpu"], required=True)
    return parser.parse_args(argv)


class _KernelTrace:
    """The names of the CUDA kernels this process runs, from CUPTI's activity records (through
    torch.profiler), between ``trace_start`` and ``trace_stop``. Started before the judge's first
    counted round and stopped after its last, so its cost at start and stop is outside every
    round; while it runs it only adds an activity record to each launch."""

    #: (torch.profiler.profile, ProfilerActivity), taken before the learner's file is imported (`prepare`):
    #: a file that replaces torch.profiler's names at import does not replace these.
    tools: tuple | None = None

    @classmethod
    def prepare(cls) -> None:
        from torch.profiler import ProfilerActivity, profile

        cls.tools = (profile, ProfilerActivity)

    def __init__(self, torch):
        if self.tools is None:
            self.prepare()
        profile, activity = self.tools
        self.torch = torch
        self.profile = profile(activities=[activity.CUDA])
        self.profile.__enter__()

    def stop(self) -> dict:
        """{kernel name: launches} of every kernel, or {"$error": why} when the trace could not be read."""
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
            return dict(list(counts.items())[:200])
        except Exception as exc:  # noqa: BLE001 - a trace that cannot be read is a sentence for the judge
            return {"$error": f"{type(exc).__name__}: {exc}"[:300]}


class Runner:
    def __init__(self, args: argparse.Namespace):
        import torch

        from grader import arena, protocol

        self.torch = torch
        self.protocol = protocol
        self.args = args
        self.requests, self.replies = args.requests, args.replies
        fd_in, size_in = (int(v) for v in args.arena_in.split(":"))
        fd_out, size_out = (int(v) for v in args.arena_out.split(":"))
        self.arenas = {"in": arena.Arena(size_in, fd=fd_in, name="in"), "out": arena.Arena(size_out, fd=fd_out, name="out")}
        self.gpu = args.mode == "gpu"
        self.module = None
        self.shared: dict | None = None  # the judge's sets for its clock (`share`)
        self.trace: "_KernelTrace | None" = None
        self._sets = None
        self._slot = None
        self._grader_bytes = 0
        #: Interpreter: the traffic counter whose hooks stay installed for the whole process.
        self.counting = None

    # --- the learner's module ------------------------------------------------------------------

    def import_learner(self) -> dict:
        from grader.failures import describe_exception

        path = self.args.learner
        spec = importlib.util.spec_from_file_location(f"learner_{Path(path).stem}", path)
        if spec is None or spec.loader is None:
            return {"ready": False, "kind": Kind.IMPORT, "message": f"cannot import {self.args.display}: is it a Python file?"}
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
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
        from grader import arena

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
        from grader import arena

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
                    out.update(dtype=arena.NAMES.get(tensor.dtype, str(tensor.dtype)), shape=list(tensor.shape),
                               stride=list(tensor.stride()), storage_offset=storage_offset)
                    return out
        # Not in a known buffer: copy it (contiguous) into the out arena.
        dtype = tensor.dtype if tensor.dtype in arena.NAMES else torch.float32
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
        """An intercepted allocation: a guarded, poisoned buffer the judge can read. In a call on
        the judge's shared sets, the first allocation of the set's output shape is the judge's own
        guarded slot (laid out the same way: the view starts `guards.GUARD` elements in)."""
        from grader import arena, guards

        on_gpu = self.gpu and self.torch.device(device).type == "cuda"
        slot = self._slot
        if slot is not None and on_gpu and dtype == slot.dtype \
                and guards.buffer_numel(shape, stride) == slot.numel():
            self._slot = None
            return guards.GuardedTensor(name, "output", slot, guards.view_of(slot, shape, stride), None, None,
                                        device="cuda")
        if on_gpu:
            # Only the buffer: the judge keeps what it compares against, so the grader's share of the
            # memory a call allocates is the two guards, subtracted from the peak (`peak_memory`).
            buffer = self.torch.empty(guards.buffer_numel(shape, stride), dtype=dtype, device=device)
            view = guards.view_of(buffer, shape, stride)
            guarded = guards.GuardedTensor(name, "output", buffer, view, None, None, device="cuda")
            if self._sets:
                # A timed call's other allocations (exercise 8's partials) come back to nobody: no poison,
                # which would put the grader's own fill kernels among the ones the audit reads.
                return guarded
            guards.fill_sentinel(buffer)
            guards.fill_poison(view)
            self._grader_bytes += (buffer.numel() - guards.extent(tuple(shape), tuple(stride))) * buffer.element_size()
            host = self.arenas["out"].empty(guarded.buffer.numel(), dtype)
            self._downloads.append((guarded.buffer, host))
            offset = host.data_ptr() - self.arenas["out"].bytes.data_ptr()
        else:
            guarded = guards.guard_output(name, shape, stride, dtype, "cpu", allocate=self.arenas["out"].empty)
            host = guarded.buffer
            offset = host.data_ptr() - self.arenas["out"].bytes.data_ptr()
        index = len(self._allocations)
        desc = {"arena": "out", "offset": offset, "numel": guarded.buffer.numel(),
                "dtype": arena.NAMES.get(dtype, str(dtype)), "shape": list(shape), "stride": list(stride),
                "storage_offset": guards.GUARD, "device": self.torch.device(device).type, "allocation": index,
                "name": name}
        self._allocations.append(desc)
        self._known.append((host, desc, guarded.buffer if host is not guarded.buffer else None))
        return guarded

    def _watched(self, fn, args: list, kwargs: dict, names: dict) -> tuple[dict, Any, Any]:
        """One call of the learner's function, the same way whatever the judge does with it: the
        watch, the allocation interception, the traffic counter (interpreter) and the allocator's
        peak (GPU). Returns (reply, result, watch result)."""
        from grader.failures import describe_exception
        from grader.watch import Watch

        torch = self.torch
        counter = self.counting.begin() if self.counting is not None else None
        if counter is not None:
            for index, value in enumerate(args):
                if isinstance(value, torch.Tensor):
                    counter.watch(str(names.get(str(index)) or f"argument {index}"), value)
            for key, value in kwargs.items():
                if isinstance(value, torch.Tensor):
                    counter.watch(str(names.get(key) or key), value)
        watch = Watch(make_output=self._make_output, on_allocate=counter.watch if counter is not None else None)
        self._grader_bytes = 0
        if self.gpu and not self._sets:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
        reply: dict = {"ok": True}
        result = None
        try:
            with watch:
                result = fn(*args, **kwargs)
                if self.gpu and not self._sets:
                    torch.cuda.synchronize()
        except BaseException as exc:  # noqa: BLE001 - anything the learner's code raises is a sentence
            failure = describe_exception(exc, self.args.learner, display=self.args.display)
            reply = {"ok": False, "kind": failure.kind, "message": str(failure), "raised": failure.raised}
        finally:
            if counter is not None:
                self.counting.end()
        if self.gpu and reply["ok"] and not self._sets:
            peak = torch.cuda.max_memory_allocated() - before - self._grader_bytes
            reply["memory"] = {"peak_bytes": int(max(peak, 0))}
        if counter is not None:
            reply["traffic"] = self.counting.report(counter)
        return reply, result, watch.result

    def _watch_record(self, outcome, result) -> dict:
        return {
            "launches": [{"kernel": launch.kernel, "grid": list(launch.grid) if launch.grid is not None else None,
                          "arguments": {k: self._encode(v) for k, v in launch.arguments.items()},
                          "compiled": launch.compiled} for launch in outcome.launches[:1000]],
            "computed": outcome.computed[:200],
            # Only fills of what the call returned (a scratch buffer may be a torch.zeros).
            "filled_outputs": [[index, fill] for index, fill in outcome.filled_outputs(result)][:200],
            "allocations": self._allocations,
        }

    def call(self, request: dict) -> dict:
        """One call on tensors in the arenas (``args``), or one call per shared set (``sets``: the
        judge's clock runs around the whole request), each made by `_watched`."""
        from grader.failures import describe_exception

        torch = self.torch
        name = request.get("function")
        fn = getattr(self.module, str(name), None)
        if not callable(fn):
            return {"ok": False, "kind": Kind.WRONG,
                    "message": f"your file does not define `{name}`: keep the functions the stub defines"}
        if request.get("sets") is not None:
            return self._call_sets(fn, request)
        self._known, self._allocations, self._downloads, self._sets, self._slot = [], [], [], None, None
        uploads: list = []
        try:
            args = self._decode(request.get("args") or [], uploads)
            kwargs = self._decode(request.get("kwargs") or {}, uploads)
        except ValueError as exc:
            return {"ok": False, "kind": Kind.WRONG, "message": f"the grader could not hand over the inputs: {exc}"}
        reply, result, outcome = self._watched(fn, args, kwargs, request.get("names") or {})
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
        reply["watch"] = self._watch_record(outcome, result)
        if reply["ok"]:
            reply["result"] = self._encode(result)
        return reply

    def _call_sets(self, fn, request: dict) -> dict:
        """The calls the judge's clock times: one per shared set, each output in the judge's slot
        (or copied there, inside the clock), then one device-wide synchronize. What the watch saw
        comes back for every call: a torch op here fails the check as it does anywhere else."""
        torch = self.torch
        copied, seen = [], {"launches": [], "computed": [], "fills": []}
        for index in request["sets"]:
            args, kwargs, slot = self.shared["sets"][int(index)]
            self._known, self._allocations, self._downloads = [], [], []
            self._sets, self._slot = True, slot
            reply, result, outcome = self._watched(fn, list(args), dict(kwargs), {})
            self._sets, self._slot = None, None
            if not reply["ok"]:
                return reply
            seen["launches"].append(len(outcome.launches))
            seen["computed"] += outcome.computed[:20]
            seen["fills"] += outcome.fills[:20]
            out = result[0] if isinstance(result, (tuple, list)) and result else result
            view = self.shared["views"][int(index)]
            same = isinstance(out, torch.Tensor) and out.data_ptr() == view.data_ptr()
            if not same and isinstance(out, torch.Tensor) and out.shape == view.shape:
                view.copy_(out)  # the learner allocated elsewhere: the copy counts in the time
            copied.append(not same)
        try:
            torch.cuda.synchronize()
        except BaseException as exc:  # noqa: BLE001
            from grader.failures import describe_exception

            failure = describe_exception(exc, self.args.learner, display=self.args.display)
            return {"ok": False, "kind": failure.kind, "message": str(failure)}
        return {"ok": True, "copied": copied, "watch": {k: v[:200] for k, v in seen.items()}}

    # --- a measurement the course runs on a learner function ------------------------------------

    def measure(self, request: dict) -> dict:
        """Run a course function (``grader.<module>:<name>``) on one of the learner's functions and
        return its numbers (exercise 6 times a block with the exercise-3 softmax swapped in)."""
        import importlib

        from grader.failures import describe_exception

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

    def share(self, request: dict) -> dict:
        """Open the judge's shared sets (CUDA IPC): each set's arguments and its guarded output slot."""
        from torch.multiprocessing import reductions

        from grader import guards

        def rebuild(item):
            if isinstance(item, dict) and "$cuda" in item:
                args = pickle.loads(base64.b64decode(item["$cuda"]))  # from the judge: trusted
                return reductions.rebuild_cuda_tensor(*args)
            if isinstance(item, list):
                return [rebuild(v) for v in item]
            if isinstance(item, dict):
                if "$tuple" in item or "$float" in item:
                    return self.protocol.decode_scalar(item)
                return {k: rebuild(v) for k, v in item.items()}
            return item

        slots = [rebuild(slot["buffer"]) for slot in request["outputs"]]
        views = [guards.view_of(buffer, slot["shape"], slot["stride"]) for buffer, slot in zip(slots, request["outputs"])]
        sets = [(rebuild(s["args"]), rebuild(s["kwargs"]), slot) for s, slot in zip(request["sets"], slots)]
        self.shared = {"sets": sets, "views": views}
        return {"ok": True}

    def trace_start(self, request: dict) -> dict:
        """From now on a CUDA activity trace records every kernel this process runs (`grader.kernel_audit`)."""
        if self.trace is None:
            try:
                self.trace = _KernelTrace(self.torch)
            except Exception as exc:  # noqa: BLE001 - no profiler here: the judge says it cannot audit
                return {"ok": True, "started": False, "why": f"{type(exc).__name__}: {exc}"[:300]}
        return {"ok": True, "started": True}

    def trace_stop(self, request: dict) -> dict:
        """The kernels the trace saw since `trace_start`, by name, with their launches."""
        kernels = self.trace.stop() if self.trace is not None else None
        self.trace = None
        return {"ok": True, "kernels": kernels}

    def twin_round(self, request: dict) -> dict:
        """The course's twin (grader.timing_twin): a round with one element of work."""
        self.shared["views"][0].view(-1)[:1].fill_(0.25)
        self.torch.cuda.synchronize()
        return {"ok": True, "copied": []}

    def timing_dobench(self, request: dict) -> dict:
        """The cross-check: triton.testing.do_bench on the first set, in this process."""
        from grader import perf

        args, kwargs, _ = self.shared["sets"][0]
        fn = getattr(self.module, str(request.get("function")), None)
        work = lambda: fn(*args, **kwargs)  # noqa: E731
        try:
            ms = perf.time_ms(work, rep_ms=int(request.get("rep_ms", 100)))
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "kind": Kind.WRONG, "message": f"do_bench failed: {type(exc).__name__}: {exc}"}
        return {"ok": True, "ms": ms}

    def unshare(self, request: dict) -> dict:
        """Close the shared sets (and a trace left running)."""
        import gc

        if self.trace is not None:
            self.trace.stop()
            self.trace = None
        self.shared = None
        gc.collect()  # the shared tensors' last references: the judge can collect their memory at once
        self.torch.cuda.synchronize()
        return {"ok": True}

    # --- the loop -----------------------------------------------------------------------------

    def serve(self) -> int:
        protocol = self.protocol
        handlers = {"call": self.call, "measure": self.measure, "share": self.share, "twin_round": self.twin_round,
                    "dobench": self.timing_dobench, "unshare": self.unshare,
                    "trace_start": self.trace_start, "trace_stop": self.trace_stop}
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
    from grader import protocol

    started = time.monotonic()
    if args.mode == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    try:
        import triton  # noqa: F401

        triton_version = triton.__version__
    except Exception as exc:  # noqa: BLE001
        protocol.send(args.replies, {"ready": False, "kind": Kind.FATAL, "message": f"Triton cannot be imported: {exc}"})
        return 1
    fixes: dict = {}
    if args.mode == "interpreter":
        from grader import mode

        fixes = mode.prepare_interpreter()
    else:  # a GPU's compiler runs the learner's Python too, and takes arguments the interpreter would
        from grader import interpreter_fixes

        interpreter_fixes.apply_compiled()
    runner = Runner(args)
    # The watch's launch wrappers and the traffic counter's hooks are installed now, once, before the
    # learner's file is imported: every call then finds the same ones, whatever the judge does with it.
    from grader import watch

    watch.install_for_process()
    if args.mode == "interpreter":
        from grader import traffic

        runner.counting = traffic.EveryCall()
    else:
        _KernelTrace.prepare()
    hello = runner.import_learner()
    hello.update(versions={"triton": triton_version, "torch": torch.__version__, "python": sys.version.split()[0]},
                 fixes=fixes, seconds=round(time.monotonic() - started, 3))
    protocol.send(args.replies, hello)
    if not hello["ready"]:
        return 0
    code = runner.serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
