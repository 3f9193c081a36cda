"""What a launch may hand a kernel: the compiler's rule, held in the interpreter and on a GPU.

Compiled, a kernel's arguments go through Triton's specialization first (``mangle_type``, Triton 3.6
to 3.9): a parameter without ``tl.constexpr`` takes a tensor, a number, a bool, ``None`` or a tuple of
them, and anything else stops the launch (``TypeError: failed to specialize argument of type:
function``). A ``tl.constexpr`` parameter is a value of the compile itself; where the kernel calls
it, the compiler builds a ``@triton.jit`` function, a Triton builtin or a
``triton.constexpr_function`` into the kernel, and calls any other Python callable *once, on the
host, while it compiles* (``CodeGenerator.call_Function``): nothing of it runs in the kernel.

Triton's interpreter hands every argument to the kernel as Python instead: a function passed as a
constexpr runs in every program, and a parameter without ``tl.constexpr`` may be anything at all.
Either way learner Python runs inside the launch, where the torch-op watch takes every op for
Triton's own: ``SIDE=lambda: out.copy_(x + y)`` beside a kernel that stores ``x`` passed exercise 1.
A kernel never needs that, so the grader holds both modes to one rule, `refusal`: the compiler's
specialization for plain parameters, and for constexprs the values the compiler can build into a
kernel (`plain_constant`). A file that passes a jitted function, a string or a tuple still runs.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from dataclasses import dataclass
from typing import Any

#: Python types a constexpr may hold as they are (tuples of them too); a NumPy scalar is a Number.
CONSTANT_TYPES = (type(None), numbers.Number, str)


def triton_callable(value: Any) -> bool:
    """A callable the compiler builds into a kernel: jitted (``JITCallable``, and the interpreter's
    ``InterpretedFunction``), a ``triton.constexpr_function``, or one of Triton's own builtins."""
    from triton.runtime import jit

    kinds = tuple(t for t in (getattr(jit, "JITCallable", None), jit.JITFunction) if isinstance(t, type))
    if isinstance(value, kinds) or type(value).__name__ == "InterpretedFunction":
        return True
    module = getattr(value, "__module__", None) or ""
    return bool(getattr(value, "__triton_builtin__", False)) or module.startswith("triton.language")


def plain_constant(value: Any) -> bool:
    """A value a constexpr can hold and the compiler can build into a kernel: ``None``, a bool, a
    number, a string, a Triton or torch dtype, a tuple of them (named tuples too), a
    ``tl.constexpr`` of one, or a callable of `triton_callable`."""
    import torch
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        return plain_constant(value.value)
    if isinstance(value, tuple):
        return all(plain_constant(item) for item in value)
    if isinstance(value, CONSTANT_TYPES) or isinstance(value, (tl.dtype, torch.dtype)):
        return True
    return triton_callable(value)


def _described(value: Any) -> str:
    """``the Python function `f```, ``a `list```: what the sentence says a value is."""
    if callable(value) and not isinstance(value, type) and not hasattr(value, "data_ptr"):
        return f"the Python function `{getattr(value, '__qualname__', None) or type(value).__name__}`"
    return f"a `{type(value).__name__}`"


def constexpr_refusal(kernel: str, name: str, value: Any) -> str | None:
    """The sentence for a constexpr ``name`` of ``kernel`` that receives ``value``, or None if it may."""
    if plain_constant(value):
        return None
    if isinstance(value, tuple):  # name the item that is refused
        return next(filter(None, (constexpr_refusal(kernel, f"{name}[{i}]", item) for i, item in enumerate(value))))
    if hasattr(value, "data_ptr"):
        return (f"`{kernel}` gets a tensor for its constexpr `{name}`: a tensor reaches a kernel as a "
                f"pointer, so take `tl.constexpr` off `{name}`")
    if callable(value):
        return (f"`{kernel}` gets {_described(value)} for its constexpr `{name}`: Triton's "
                "compiler does not build a plain function into the kernel, it calls it once on the host while "
                "it compiles, so make it a `@triton.jit` function")
    return (f"`{kernel}` gets {_described(value)} for its constexpr `{name}`: a constexpr is a number, a bool, "
            "a string, a dtype, a `@triton.jit` function or a tuple of these")


def _real_tensor(value: Any) -> bool:
    """A torch tensor whose ``data_ptr`` is torch's own, or one of Triton's wrappers of one: Triton asks a
    tensor argument for its address inside the launch, so a ``data_ptr`` of the file's own would run there."""
    import torch

    if type(value).__module__.startswith("triton."):
        return True
    return isinstance(value, torch.Tensor) and getattr(type(value), "data_ptr", None) is torch.Tensor.data_ptr


def plain_refusal(kernel: str, name: str, value: Any) -> str | None:
    """The compiler's specialization of a parameter without ``tl.constexpr``: its sentence, or None."""
    if hasattr(value, "data_ptr") and not isinstance(value, tuple):
        if _real_tensor(value):
            return None
        return (f"`{kernel}` gets {_described(value)} for `{name}`, which only looks like a tensor (a `data_ptr` of "
                "its own, which Triton calls inside the launch): pass the torch tensor itself")
    if isinstance(value, (bool, int, float, type(None))):
        return None  # the cases every kernel passes, without asking the compiler
    from triton.runtime.jit import mangle_type

    try:
        mangle_type(value)
    except TypeError as error:
        return (f"`{kernel}` gets {_described(value)} for `{name}`, which Triton's compiler refuses ({error}): "
                "a parameter without `tl.constexpr` takes a tensor, a number, a bool or None")
    return None


def _is_constexpr(parameter: inspect.Parameter) -> bool:
    from triton.runtime.jit import _normalize_ty

    annotation = parameter.annotation
    return annotation is not inspect.Parameter.empty and bool(annotation) and "constexpr" in _normalize_ty(annotation)


@dataclass(frozen=True)
class _Parameters:
    """A kernel's parameters as one launch needs them: read once per kernel, not once per launch."""

    names: tuple[str, ...]
    constexpr: dict[str, bool]
    #: Per position: the types that need no look further (the constexpr or the plain ones).
    fast: tuple[tuple[type, ...], ...]
    #: The sentence for a default value the rule refuses (defaults are fixed objects: checked once).
    default_refusal: str | None


@functools.lru_cache(maxsize=None)
def _parameters(fn) -> _Parameters | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    constexpr = {name: _is_constexpr(p) for name, p in signature.parameters.items()}
    default_refusal = None
    for name, parameter in signature.parameters.items():
        if parameter.default is not inspect.Parameter.empty:
            check = constexpr_refusal if constexpr[name] else plain_refusal
            default_refusal = default_refusal or check(fn.__name__, name, parameter.default)
    import torch

    fast = tuple(_CONSTANT_FAST if constexpr[name] else (*_PLAIN_FAST, torch.Tensor) for name in signature.parameters)
    return _Parameters(tuple(signature.parameters), constexpr, fast, default_refusal)


#: Types every launch passes, answered without a look further (about 1 µs a launch, not 1 ms: the
#: judge's clock times launches too).
_PLAIN_FAST = (bool, int, float, type(None))
_CONSTANT_FAST = (bool, int, float, str, type(None))


def _refused(fn, name: str, value: Any, constexpr: bool) -> str | None:
    kind = type(value)
    if constexpr:
        return None if kind in _CONSTANT_FAST else constexpr_refusal(fn.__name__, name, value)
    if kind in _PLAIN_FAST or kind is _tensor_type():
        return None
    return plain_refusal(fn.__name__, name, value)


@functools.lru_cache(maxsize=None)
def _tensor_type() -> type:
    import torch

    return torch.Tensor


def refusal(fn, args: tuple, kwargs: dict) -> str | None:
    """The first argument of a launch of ``fn`` (the kernel's Python function) that the rule refuses."""
    try:
        parameters = _parameters(fn)
    except TypeError:  # an unhashable callable: nothing to cache, nothing Triton launches
        return None
    if parameters is None:
        return None
    if parameters.default_refusal is not None:
        return parameters.default_refusal
    for name, value, fast in zip(parameters.names, args, parameters.fast):
        if type(value) in fast:
            continue
        sentence = _refused(fn, name, value, parameters.constexpr[name])
        if sentence is not None:
            return sentence
    for name, value in kwargs.items():
        if name in parameters.constexpr:  # the rest are launch options (num_warps...)
            sentence = _refused(fn, name, value, parameters.constexpr[name])
            if sentence is not None:
                return sentence
    return None


class CompilationError(Exception):
    """Named as Triton's own, so the report reads "your kernel did not compile", as on a GPU."""


def install(owner: type) -> bool:
    """Check every launch of ``owner.run`` (``InterpretedFunction`` or ``JITFunction``); True once installed."""
    original = owner.__dict__.get("run")
    if original is None:
        return False
    if getattr(original, "_grader_kernel_arguments", False):
        return True

    def run(self, *args, grid, warmup, **kwargs):
        fn = getattr(self, "fn", None)
        if fn is not None:
            sentence = refusal(fn, args, kwargs)
            if sentence is not None:
                raise CompilationError(sentence)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    run._grader_kernel_arguments = True
    run.__wrapped__ = original
    owner.run = run
    return True


def install_compiled() -> bool:
    """The same rule for compiled launches (GPU mode), where a constexpr function runs while compiling."""
    try:
        from triton.runtime.jit import JITFunction
    except Exception:  # no Triton here
        return False
    return install(JITFunction)
