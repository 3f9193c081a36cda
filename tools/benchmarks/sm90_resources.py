"""Registers, spills and shared memory of a Triton kernel compiled for an H100/H200 (sm_90), without a GPU.

``triton.compile`` with a ``GPUTarget("cuda", 90, 32)`` runs Triton's whole pipeline down to the cubin on
any machine; ``cuobjdump --dump-resource-usage`` (shipped with Triton) reads its registers and stack
(where spilled registers live), and ``ptxas -v`` the bytes of spill stores where the bundled ptxas
reads the PTX version (Triton 3.9's PTX can be newer than its bundled ptxas: then None). Not under
``TRITON_INTERPRET=1``: the interpreter replaces what ``@triton.jit`` returns and what ``tl`` computes. The numbers
are those a launch on contiguous, 16-byte aligned tensors would compile to: pointer arguments are
marked 16-byte aligned and integer arguments are specialised the way a launch specialises them
(equal to 1: a constant; divisible by 16: marked so).

    from tools.benchmarks.sm90_resources import compile_report
    compile_report(kernel, pointers={"x_ptr": "fp32", "out_ptr": "fp32"},
                   integers={"x_row_stride": 32768, "out_row_stride": 32768, "n_cols": 32768},
                   constexprs={"BLOCK": 32768}, num_warps=32)
    # {"registers": ..., "stack_bytes": ..., "spill_bytes": ..., "shared_bytes": ...}
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Any


def compile_report(kernel, *, pointers: dict[str, str], integers: dict[str, int], constexprs: dict[str, Any],
                   num_warps: int, num_stages: int = 3, floats: tuple[str, ...] = (), ttgir: bool = False) -> dict:
    """Compile ``kernel`` (a ``@triton.jit`` function) for sm_90 and read ptxas's resource report.

    ``pointers`` maps pointer arguments to their element type (``"fp32"``, ``"bf16"``, ...),
    ``integers`` gives the value of each integer argument (only its specialisation matters),
    ``floats`` names the float32 scalar arguments, ``constexprs`` the compile-time constants. Every
    argument of the kernel must be in one of them. ``ttgir=True`` adds the compiled TTGIR (Triton's
    GPU-level IR, where the software pipeliner's shared-memory buffers can be read) as ``"ttgir"``.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    signature: dict[str, str] = {}
    constants: dict[tuple[int, ...], Any] = {}
    attrs: dict[tuple[int, ...], list] = {}
    for i, name in enumerate(kernel.arg_names):
        if name in constexprs:
            signature[name], constants[(i,)] = "constexpr", constexprs[name]
        elif name in pointers:
            signature[name] = f"*{pointers[name]}"
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name in floats:
            signature[name] = "fp32"
        elif name in integers:
            value = integers[name]
            if value == 1:  # a launch turns an integer argument equal to 1 into a constant
                signature[name], constants[(i,)] = "constexpr", 1
            else:
                signature[name] = "i32"
                if value % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            raise ValueError(f"compile_report: no type or value given for argument {name!r} of {kernel.__name__}")
    source = triton.compiler.ASTSource(fn=kernel, signature=signature, constexprs=constants, attrs=attrs)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": num_warps, "num_stages": num_stages})
    tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    metadata = compiled.metadata
    shared = metadata["shared"] if isinstance(metadata, dict) else metadata.shared
    report = {**_cubin_usage(compiled.asm.get("cubin"), tools), **_ptxas_spills(compiled.asm["ptx"], tools),
              "shared_bytes": int(shared)}
    if ttgir:
        report["ttgir"] = compiled.asm["ttgir"]
    return report


def _cubin_usage(cubin: bytes | None, tools: str) -> dict:
    """Registers and stack bytes (where spilled registers live) of the cubin Triton built."""
    if not cubin:
        return {"registers": None, "stack_bytes": None}
    with tempfile.NamedTemporaryFile("wb", suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        report = subprocess.run([os.path.join(tools, "cuobjdump"), "--dump-resource-usage", f.name],
                                capture_output=True, text=True).stdout
    registers = re.search(r"REG:(\d+)", report)
    stack = re.search(r"STACK:(\d+)", report)
    return {"registers": int(registers.group(1)) if registers else None,
            "stack_bytes": int(stack.group(1)) if stack else None}


def _ptxas_spills(ptx: str, tools: str) -> dict:
    """Bytes of spill stores from ``ptxas -v`` (None when the bundled ptxas is older than the PTX)."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        report = subprocess.run([os.path.join(tools, "ptxas"), "-v", "--gpu-name=sm_90a", f.name, "-o", os.devnull],
                                capture_output=True, text=True).stderr
    spills = re.search(r"(\d+) bytes spill stores", report)
    return {"spill_bytes": int(spills.group(1)) if spills else None}
