"""What a failed check says: `GradeFailure`, and how the learner's exceptions become sentences.

Every message a learner reads is a sentence about their code ("your store has no mask: wrote
24 elements past the end of `out`"), never a bare traceback. This module turns the exceptions
that running a learner's code can raise into such sentences, pointing at the line in their file.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from grader.wire.results import Kind


#: Failure kinds whose mistake the access map shows: the report ends with the `grade show` command.
ACCESS_KINDS = (Kind.MASKING, Kind.COVERAGE)


class GradeFailure(AssertionError):
    """A check failed; ``str(exc)`` is the sentence the learner reads.

    ``kind`` (a `grader.wire.results.Kind`) lets the front end group failures: ``NOT_IMPLEMENTED`` stops
    the run after the first one (every other check would say the same), ``FATAL`` means the process
    can no longer be trusted (a CUDA error poisons the context) and the grader restarts it before
    the next check.
    The `ACCESS_KINDS` say where the kernel's loads and stores went wrong, which the access map
    draws (`grade show N`): ``MASKING`` (a read or write outside a tensor: past its end, before its
    start, in the gaps between its rows) and ``COVERAGE`` (output elements left unwritten, or
    elements of an input overwritten). A check that adds words to such a failure keeps its kind.
    """

    def __init__(self, message: str, *, kind: Kind = Kind.WRONG, raised: str | None = None):
        super().__init__(message)
        self.kind = Kind.of(kind)
        #: The class name of the exception the learner's code raised, when that is what happened
        #: ("ValueError"): the judge cannot catch the learner's exceptions, only read their names.
        self.raised = raised


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 zero``, ``3 zeros``: a count with its noun, for every sentence a learner reads."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def learner_location(exc: BaseException, learner_file: str | None, display: str | None = None) -> str:
    """' (exercises/ex01_vector_add.py:42: `tl.store(out_ptr + offs, x)`)' or ''.

    ``display`` is how the learner knows the file (the grader runs a private copy of it)."""
    if not learner_file:
        return ""
    target = Path(learner_file).resolve()
    found = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # walk the chain: interpreter wraps errors
        seen.add(id(current))
        for frame in traceback.extract_tb(current.__traceback__):
            try:
                if Path(frame.filename).resolve() == target:
                    found = frame
            except OSError:
                continue
        current = current.__cause__ or current.__context__
    if found is None:
        return ""
    line = (found.line or "").strip()
    shown = display or _relative(target)
    return f" ({shown}:{found.lineno}: `{line}`)" if line else f" ({shown}:{found.lineno})"


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank, stripped (empty when there is none)."""
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def describe_exception(exc: BaseException, learner_file: str | None, *, display: str | None = None) -> GradeFailure:
    """Turn an exception raised while running the learner's code into a GradeFailure."""
    if isinstance(exc, GradeFailure):
        return exc
    root = _innermost(exc)
    if isinstance(root, SyntaxError) and not _is_compilation_error(root):
        failure = GradeFailure(_syntax_error(root), kind=Kind.IMPORT)
        failure.raised = type(root).__name__
        return failure
    where = learner_location(exc, learner_file, display)
    failure = _describe(exc, root, where)
    failure.raised = type(root).__name__
    return failure


def _syntax_error(exc: SyntaxError) -> str:
    """'your file has a syntax error on line 2 (`def add(x, y)`): expected ':''."""
    what = "an indentation error" if isinstance(exc, IndentationError) else "a syntax error"
    line = (exc.text or "").strip()
    return f"your file has {what} on line {exc.lineno}" + (f" (`{line}`)" if line else "") + f": {exc.msg}"


def _describe(exc: BaseException, root: BaseException, where: str) -> GradeFailure:
    limit = _interpreter_limit(root)
    if limit:
        return GradeFailure(f"{limit}{where}")
    if isinstance(root, NotImplementedError):
        detail = first_line(root) or "the TODOs are still there"
        return GradeFailure(f"not implemented yet: {detail}{where}", kind=Kind.NOT_IMPLEMENTED)
    text = f"{type(root).__name__}: {root}"
    if "illegal memory access" in text or "misaligned address" in text:
        return GradeFailure(
            "the GPU reported an illegal memory access while your kernel ran: a load or store "
            "reached outside every tensor (is a mask missing, or is an offset computed with the "
            f"wrong stride?){where}. CUDA errors end the process; the grader restarts it for "
            "the next check.",
            kind=Kind.FATAL,
        )
    if "CUDA error" in text or "CUDA driver error" in text:
        return GradeFailure(f"CUDA failed while your code ran: {first_line(text)}{where}", kind=Kind.FATAL)
    if _is_compilation_error(exc) or _is_compilation_error(root):
        return GradeFailure(f"your kernel did not compile: {_compile_message(exc)}{where}")
    if isinstance(root, RecursionError):
        return GradeFailure(f"your code recursed without end{where}")
    return GradeFailure(f"your code raised {type(root).__name__}: {first_line(str(root)) or '(no message)'}{where}")


def _interpreter_limit(root: BaseException) -> str | None:
    """A sentence for an error that comes from Triton's interpreter (or Triton's version), not from
    the learner's reasoning; docs/grading.md lists these differences."""
    text = str(root)
    if isinstance(root, NotImplementedError) and "Block pointers have been removed" in text:
        return ("Triton 3.9 removed block pointers (`tl.make_block_ptr`, `tl.advance`), on a GPU as in its "
                "interpreter: address the tile with pointer arithmetic and masks (or `tl.make_tensor_descriptor`)")
    from grader import device

    if not device.interpreter_requested():
        return None
    if isinstance(root, NotImplementedError) and "not supported in interpreter mode" in text:
        return (f"Triton's interpreter cannot run this ({first_line(text)}): a limit of the interpreter, not a "
                "mistake; it runs on a GPU. To grade without a GPU, write it with `tl` operations")
    if isinstance(root, AttributeError) and "'int' object has no attribute" in text:
        return (f"your code raised AttributeError: {first_line(text)}. In Triton's interpreter a loop variable "
                "(and a constexpr) is a Python int, not a Triton scalar as on a GPU: a limit of this interpreter, "
                "not a mistake. `tl.cast(r, tl.int64)` means the same and works in both")
    return None


def _innermost(exc: BaseException) -> BaseException:
    """The interpreter wraps the learner's error in InterpreterError(repr(e)): unwrap it."""
    seen: set[int] = set()
    current = exc
    while type(current).__name__ == "InterpreterError" and current.__cause__ is not None:
        if id(current) in seen:
            break
        seen.add(id(current))
        current = current.__cause__
    return current


def _is_compilation_error(exc: BaseException) -> bool:
    return any(cls.__name__ in {"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"}
               for cls in type(exc).__mro__)


def _compile_message(exc: BaseException) -> str:
    """Triton's CompilationError text is the source with a caret, then the cause: keep both short."""
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    cause = lines[-1] if lines else type(exc).__name__
    if exc.__cause__ is not None and str(exc.__cause__).strip():
        cause = first_line(str(exc.__cause__))
    return cause
