"""The interpreter source each fix was written against, as short SHA-256 fingerprints.

A fix wraps or relies on a few functions of ``triton/runtime/interpreter.py``. Before patching,
`grader.learner.interpreter_fixes` hashes their source (``inspect.getsource``, dedented) and patches only
when every hash is one listed here: a Triton whose interpreter changed in those places gets no
patch (never a guess), and the grader falls back (bf16 checked on a GPU only).

To add a Triton version: install it, run ``python -m grader.learner.interpreter_fixes``, read the
functions it marks unknown, and add their hashes once the fixes are right for them (the course's
tests in tests/test_interpreter_fixes.py must pass on that version).
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap

#: "Owner.attribute" (Owner "" = a module-level function) -> hashes known to be safe.
#: Read on Triton 3.6.0, 3.7.1 (the same interpreter as 3.7.0), 3.8.0 and 3.9.0; the comment
#: says which versions have which hash. 3.8.0's `_patch_lang_core` only lacks a line about
#: ``tl.condition`` (nothing to do with loops).
KNOWN: dict[str, frozenset[str]] = {
    'InterpreterBuilder.binary_op': frozenset({'527fcf68522a463c', 'c3f3cd8daf681ea3'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'InterpreterBuilder.unary_op': frozenset({'c8d0c44dec108592'}),  # all four
    'InterpreterBuilder.ternary_op': frozenset({'c2b4bb34c763a13a'}),  # all four
    'InterpreterBuilder.create_fma': frozenset({'54d2510d5c80d1a0', 'df4faea5ea79b00c'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'InterpreterBuilder.create_erf': frozenset({'cf5aa40ef49a28cc'}),  # all four
    'InterpreterBuilder.create_rsqrt': frozenset({'c0765abb1a8c3f05'}),  # all four
    'InterpreterBuilder.create_dot': frozenset({'4d3ce066da27c38b'}),  # all four
    'InterpreterBuilder.cast_impl': frozenset({'1956af2a0b4fd4a1'}),  # all four
    'InterpreterBuilder.create_fp_to_fp': frozenset({'349a5c3489fe1870', 'a0fe6e47db8255d7'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'ReduceOps.apply_impl': frozenset({'866277211363953e', '1d5662b1f6ca211a'}),  # 3.6.0/3.7.1; 3.8.0/3.9.0
    'ScanOps.cumsum': frozenset({'9969501d31f47e9c'}),  # all four
    'ScanOps.cumprod': frozenset({'f242e77cfcb05c4d'}),  # all four
    '_get_np_dtype': frozenset({'8f20d41e3207891a'}),  # all four
    'TensorHandle.__post_init__': frozenset({'9483740c986a6ebf'}),  # all four
    'ReduceScanOpInterface.to_tensor': frozenset({'1941ceb512fa91d2', '2ec83494e42ef445'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'ReduceOps.min_max': frozenset({'07bf192f36223783'}),  # all four
    'ReduceOps.generic_reduce': frozenset({'78a072688230e217'}),  # all four
    'ScanOps.apply_impl': frozenset({'2a67f3c2c13808d8', '93e7c904c9444f88'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'FunctionRewriter._compile_and_exec': frozenset({'77d4a3978cc2ca85'}),  # all four
    'FunctionRewriter._transform_ast': frozenset({'d56cb0264d3e1cb0'}),  # all four
    'FunctionRewriter.rewrite_ast': frozenset({'97008a56de7c9646'}),  # all four
    'InterpretedFunction.rewrite': frozenset({'92adde5ab7d675de'}),  # all four
    'CodeGenerator._define_name_lookup': frozenset({'dcd1c5b07e8d0e1a'}),  # all four (the compiler's rule)
    'CodeGenerator._is_constexpr_global': frozenset({'184b614224d7698a'}),  # all four
    '_patch_lang_core': frozenset({'72864625d91b5cd0', '8535aecd1dc601cf', '65cf7cf4d724979d'}),  # 3.6.0/3.7.1; 3.8.0; 3.9.0
    '_patch_lang': frozenset({'e5beeba74ada4829'}),  # all four
    'GridExecutor.__call__': frozenset({'5296d1faf395002b', 'a32ded97afb6e68b'}),  # 3.6.0/3.7.1/3.8.0; 3.9.0
    'InterpretedFunction.__call__': frozenset({'c4349b1c6ee998f5'}),  # all four
}


#: Hashes already taken, by the function they were taken of (a process's sources do not change).
_HASHED: dict[object, str | None] = {}


def source_hash(obj) -> str | None:
    try:
        return _HASHED[obj]
    except (KeyError, TypeError):  # not hashed yet, or an object that cannot be a key
        pass
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    try:
        _HASHED[obj] = digest
    except TypeError:
        pass
    return digest


def lookup(interpreter, owner: str, attribute: str):
    holder = interpreter if not owner else getattr(interpreter, owner, None)
    if holder is None:
        return None
    if isinstance(holder, type):
        return holder.__dict__.get(attribute)
    return getattr(holder, attribute, None)


def matches(interpreter, names) -> tuple[bool, list[str]]:
    """(all known?, the names whose source is not a known one)."""
    unknown = []
    for owner, attribute in names:
        key = f"{owner}.{attribute}" if owner else attribute
        obj = lookup(interpreter, owner, attribute)
        if obj is None or source_hash(obj) not in KNOWN.get(key, frozenset()):
            unknown.append(key)
    return not unknown, unknown


def current(interpreter, names) -> dict[str, str | None]:
    return {(f"{o}.{a}" if o else a): source_hash(lookup(interpreter, o, a)) for o, a in names}

