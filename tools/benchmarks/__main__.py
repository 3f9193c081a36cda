"""python -m tools.benchmarks MODULE... --out DIR: run benchmark modules, write JSON, print a table.

A module's ``run()`` returns its rows, or a dict with ``"rows"`` and other sections of the same file
(written beside ``meta`` and ``rows``) and, under ``"attachments"``, ``{name: text}`` written as
files of their own beside the JSON (``PREFIX-MODULE-NAME``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks")
    parser.add_argument("modules", nargs="+", help="e.g. ex01_vector_add ex03_softmax")
    parser.add_argument("--out", default="build/measurements", help="folder for the JSON files")
    parser.add_argument("--prefix", default=None, help="file name prefix (default: the GPU's name, e.g. h200)")
    args = parser.parse_args(argv)

    from tools import benchmarks

    header = benchmarks.meta()
    prefix = args.prefix or benchmarks.file_prefix(header)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in args.modules:
        started = time.time()
        try:
            module = importlib.import_module(f"tools.benchmarks.{name}")
            result = module.run()
        except Exception as exc:  # one broken benchmark must not lose the others' numbers
            print(f"{name}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
            continue
        path = out / f"{prefix}-{name.replace('_', '-')}.json"
        rows = write_record(path, name, header, result, started)
        print(f"\n{name} -> {path}")
        for row in rows:
            shape = " ".join(f"{k}={v}" for k, v in row.items()
                             if k not in {"kernel", "ms", "ms_runs", "bytes", "gbps", "fraction", "tflops", "error"}
                             and not isinstance(v, (list, dict)))
            figures = (f"{row['ms']:.4f} ms" if row.get("ms") is not None else row.get("error", "?"))
            if row.get("gbps") is not None:
                figures += f"  {row['gbps']:7.0f} GB/s  {row['fraction']:6.1%}"
            if row.get("tflops") is not None:
                figures += f"  {row['tflops']:6.1f} TFLOP/s"
            print(f"  {row['kernel']:<22} {shape:<28} {figures}")
    return status


def write_record(path: Path, name: str, header: dict, result, started: float, *, command: str | None = None) -> list:
    """Write one module's results to ``path`` (and its attachments beside it); return its rows."""
    sections = dict(result) if isinstance(result, dict) else {"rows": result}
    attachments = sections.pop("attachments", None) or {}
    rows = sections.pop("rows")
    record = {"meta": {**header, "command": command or f"python -m tools.benchmarks {name}",
                       "seconds": round(time.time() - started, 1)}, "rows": rows, **sections}
    path.write_text(json.dumps(record, indent=1))
    stem = path.name.removesuffix(".json")
    for attachment, text in attachments.items():
        (path.parent / f"{stem}-{attachment}").write_text(text)
    return rows


if __name__ == "__main__":
    sys.exit(main())
