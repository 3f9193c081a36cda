"""Entry point of the child process that records one access map for `grade show`.

    python -m grader.learner.show_child SPEC_FILE --learner-file F --function NAME --out JSON [--size S]

It switches Triton's interpreter on before anything imports Triton (`grader.learner.mode`), asks the
spec's ``show_inputs(size)`` for the input, places every tensor in a guarded buffer
(`grader.wire.guards`), imports the learner's file, records one call (`grader.learner.access_map`) and
writes one JSON object to ``--out``:

* ``{"map": {...}}`` - `AccessMap.to_dict`, also when the learner's code raised (the map then
  says so in its ``error``);
* ``{"usage": "sentence"}`` - the size could not be read, or the exercise draws no tensors;
* ``{"problem": "sentence"}`` - the learner's file did not import or lacks the function.

A crash or a hang is the parent's to report (`grader.commands.show`): nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def _write(path: str, payload: dict) -> None:
    partial = f"{path}.partial"
    with open(partial, "w") as f:
        json.dump(payload, f)
    os.replace(partial, path)


def record(spec_file: str, learner_file: str, function: str, size: str | None) -> dict:
    """The payload described in the module docstring."""
    import torch

    from grader.learner import loader
    from grader.learner.access_map import record_access_map
    from grader.wire import guards
    from grader.wire.failures import describe_exception

    spec = loader.import_file(spec_file, prefix="grader_show_spec")
    show_inputs = getattr(spec, "show_inputs", None)
    if show_inputs is None:
        return {"usage": f"{Path(spec_file).stem} takes no tensors: there is no kernel to draw"}
    try:
        case = show_inputs(size)
    except ValueError as exc:
        return {"usage": str(exc)}

    def guarded(name, value):
        return guards.guard_input(name, value).view if isinstance(value, torch.Tensor) else value

    inputs = {name: guarded(name, value) for name, value in case.inputs.items()}
    kwargs = {name: guarded(name, value) for name, value in case.kwargs.items()}
    learner_file = str(Path(learner_file).resolve())
    try:
        learner = loader.import_file(learner_file)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        return {"problem": f"importing {learner_file} failed: {describe_exception(exc, learner_file)}"}
    fn = getattr(learner, function, None)
    if fn is None:
        return {"problem": f"your file does not define `{function}`: keep the function the stub defines"}
    amap = record_access_map(fn, inputs, kwargs, learner_file=learner_file, label=case.label)
    return {"map": amap.to_dict()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.learner.show_child")
    parser.add_argument("spec_file")
    parser.add_argument("--learner-file", required=True)
    parser.add_argument("--function", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--size")
    args = parser.parse_args(argv)

    from grader.learner import mode

    mode.select(force_interpreter=True)  # maps are recorded in the interpreter, on a GPU machine too
    _write(args.out, record(args.spec_file, args.learner_file, args.function, args.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
