"""The card the grader runs on, read once, and the one decision between it and Triton's interpreter.

Everything that depends on the card (which dtypes are graded, how large the timed inputs are, how many
programs fill a multiprocessor, what `grade doctor` prints) reads a `Device`: a frozen record built
from ``torch.cuda.get_device_properties`` and, on NVIDIA cards, NVML, or the record of Triton's
interpreter when there is no GPU. `current()` builds it once per process; `from_properties` builds it
from any object with the fields torch's properties have, which is how the tests fake a T4 or an MI300X.

Deciding costs nothing without a GPU: when no GPU driver is present (no ``/dev/nvidiactl``, no
``/dev/kfd``) torch is not imported at all, so `grade doctor` answers on a laptop in well under a
second (importing torch alone takes about 2 s on a busy CPU).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20

#: The variable Triton reads (when ``@triton.jit`` decorates a kernel) to run kernels in Python.
INTERPRETER_VARIABLE = "TRITON_INTERPRET"
#: The values Triton reads as "on" (``triton.knobs.getenv_bool``): the grader parses it the same way.
TRUE_WORDS = ("1", "true", "on", "yes", "y")
#: Emulate a smaller card on a larger one: the GiB this process may allocate (tools/device/small_card.py).
MEMORY_LIMIT_VARIABLE = "GRADE_DEVICE_MEMORY_GIB"
#: What shows that a GPU driver is installed, checked before torch is imported (NVIDIA, then ROCm).
DRIVER_FILES = ("/dev/nvidiactl", "/dev/dxg", "/proc/driver/nvidia/version", "/dev/kfd")

#: AMD CDNA 3 puts a 256 MB Infinity Cache behind its L2 (4 MB per XCD, which is what torch reports):
#: timed inputs must be several times the larger one, or the cache serves them. Where the
#: architecture has no such cache, the L2 the properties report is the last level.
LAST_LEVEL_CACHE_BYTES = {"gfx942": 256 * MiB, "gfx950": 256 * MiB}
#: AMD architectures whose vector units compute bfloat16 (CDNA 2 and 3, RDNA 3 and 4).
AMD_BF16_PREFIXES = ("gfx90a", "gfx94", "gfx95", "gfx11", "gfx12")
#: NVIDIA computes bfloat16 natively from Ampere (sm_80) on; Turing (sm_75, the T4) does not.
NVIDIA_BF16_CAPABILITY = (8, 0)


@dataclass(frozen=True)
class Device:
    """What the grading of one run depends on, as read from the card (or the interpreter)."""

    vendor: str  # "NVIDIA", "AMD", or "none"
    name: str
    backend: str  # "cuda", "hip" or "interpreter"
    architecture: str  # "sm_90", "gfx942"; "" in the interpreter
    multiprocessors: int  # SMs on NVIDIA, compute units on AMD; 0 in the interpreter
    l2_bytes: int  # as the properties report it
    cache_bytes: int  # the last-level cache timed inputs must exceed: the L2, or AMD's Infinity Cache
    memory_bytes: int  # what this process may use: the card's memory, or the emulated limit
    card_memory_bytes: int  # the card's memory as the properties report it
    warp_size: int  # 32 on NVIDIA, 64 on AMD CDNA (a wavefront)
    max_threads_per_multiprocessor: int
    native_dtypes: tuple[str, ...]  # "fp32", "fp16", "bf16": what the card computes in hardware
    driver: str
    peak_gbps: float | None  # the datasheet's bandwidth, where the vendor's library gives it
    peak_source: str  # how the peak was read, or a sentence saying why there is none

    @property
    def gpu(self) -> bool:
        return self.backend != "interpreter"

    @property
    def mode(self) -> str:
        """"gpu" or "interpreter": the spelling of the JSON result and the spec fixtures."""
        return "gpu" if self.gpu else "interpreter"

    @property
    def multiprocessor_word(self) -> str:
        return "CUs" if self.vendor == "AMD" else "SMs"

    @property
    def emulated(self) -> bool:
        return self.memory_bytes < self.card_memory_bytes

    def describe(self) -> list[tuple[str, str]]:
        """The rows `grade doctor` prints about the card."""
        if not self.gpu:
            return [("gpu", "none: kernels run in Triton's interpreter (correctness only, performance not measured)")]
        memory = f"{self.memory_bytes / GiB:.0f} GiB"
        if self.emulated:
            memory = (f"{memory} (emulated: {MEMORY_LIMIT_VARIABLE} holds this process to it of the card's "
                      f"{self.card_memory_bytes / GiB:.0f} GiB)")
        cache = f"L2 {self.l2_bytes / MiB:.0f} MiB"
        if self.cache_bytes != self.l2_bytes:
            cache += f", last-level cache {self.cache_bytes / MiB:.0f} MiB (timed inputs are sized past it)"
        bf16 = ("bf16 graded" if "bf16" in self.native_dtypes else
                "bf16 skipped: this card has no native bfloat16 arithmetic")
        threads = self.max_threads_per_multiprocessor
        rows = [("gpu", f"{self.name} ({self.vendor}, {self.backend.upper()}, {self.architecture})"),
                ("multiprocessors", f"{self.multiprocessors} {self.multiprocessor_word}, warp size {self.warp_size}, "
                                    f"{threads} threads ({threads // max(1, self.warp_size)} warps) each"),
                ("memory", f"{memory}, {cache}"),
                ("dtypes", f"{', '.join(self.native_dtypes)} native; {bf16}"),
                ("driver", self.driver)]
        peak = (f"{self.peak_gbps:.0f} GB/s ({self.peak_source})" if self.peak_gbps else f"unknown: {self.peak_source}")
        rows.append(("datasheet peak", peak))
        return rows


#: No GPU: Triton's interpreter runs every kernel in Python on the CPU.
INTERPRETER = Device(vendor="none", name="Triton's interpreter (CPU)", backend="interpreter", architecture="",
                     multiprocessors=0, l2_bytes=0, cache_bytes=0, memory_bytes=0, card_memory_bytes=0, warp_size=1,
                     max_threads_per_multiprocessor=0, native_dtypes=("fp32", "fp16", "bf16"), driver="",
                     peak_gbps=None, peak_source="no GPU")


# --- the decision --------------------------------------------------------------------------------

def interpreter_requested(environ: dict | None = None) -> bool:
    """Is ``TRITON_INTERPRET`` on, read the way Triton reads it?"""
    value = (os.environ if environ is None else environ).get(INTERPRETER_VARIABLE, "")
    return value.strip().lower() in TRUE_WORDS


def driver_present(files: tuple[str, ...] = DRIVER_FILES) -> bool:
    """Is a GPU driver installed? Without one no GPU can be used, and torch need not be imported to know it."""
    return any(Path(f).exists() for f in files)


def gpu_usable(*, force_interpreter: bool = False) -> bool:
    """The one GPU-or-interpreter decision: a GPU when nothing asks for the interpreter, a driver is
    installed and torch can use a card (a CUDA or a ROCm build)."""
    if force_interpreter or interpreter_requested() or not driver_present():
        return False
    import torch  # imports no Triton: the caller may still set TRITON_INTERPRET afterwards

    return bool(torch.cuda.is_available())


@functools.cache
def current(*, force_interpreter: bool = False) -> Device:
    """This process's device, read once."""
    if not gpu_usable(force_interpreter=force_interpreter):
        return INTERPRETER
    import torch

    index = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    hip = getattr(torch.version, "hip", None)
    nvml = (None, "AMD cards have no NVML (amdsmi is not read): the datasheet peak is not known here"
            ) if hip else read_nvml(index)
    device = from_properties(props, hip=bool(hip), driver=nvml_driver(index) if not hip else f"ROCm {hip}",
                             peak=nvml, memory_limit=memory_limit())
    if device.emulated:
        hold_to_memory_limit(index)
    return device


def hold_to_memory_limit(index: int | None = None) -> float | None:
    """Hold torch's caching allocator on card ``index`` to `MEMORY_LIMIT_VARIABLE`'s share of it: a
    smaller card, as far as memory goes. The judge and the learner's process both call it, so the
    learner's allocations meet the same limit as the judge's. The fraction set, or None (no limit, or
    one the card is not larger than)."""
    limit = memory_limit()
    if limit is None:
        return None
    import torch

    index = torch.cuda.current_device() if index is None else index
    total = int(torch.cuda.get_device_properties(index).total_memory)
    if limit >= total:
        return None
    torch.cuda.set_per_process_memory_fraction(limit / total, index)
    return limit / total


def memory_limit(environ: dict | None = None) -> int | None:
    """The bytes `MEMORY_LIMIT_VARIABLE` holds this process to, or None."""
    value = (os.environ if environ is None else environ).get(MEMORY_LIMIT_VARIABLE, "").strip()
    if not value:
        return None
    try:
        gib = float(value)
    except ValueError:
        raise ValueError(f"{MEMORY_LIMIT_VARIABLE}={value!r}: give the memory to emulate in GiB, such as 8") from None
    return int(gib * GiB)


def free_bytes(device: Device) -> int:
    """Memory the performance checks may plan with now: the driver's free memory, within an emulated limit."""
    import torch

    free, _ = torch.cuda.mem_get_info()
    if device.emulated:
        free = min(free, device.memory_bytes - torch.cuda.memory_reserved())
    return max(0, int(free))


# --- building the record -------------------------------------------------------------------------

def from_properties(props, *, hip: bool = False, driver: str = "", peak: tuple[float | None, str] = (None, ""),
                    memory_limit: int | None = None) -> Device:
    """A `Device` from torch's device properties (or anything with the same fields)."""
    if hip:
        arch = str(getattr(props, "gcnArchName", "") or "gfx").split(":")[0]
        vendor, backend = "AMD", "hip"
        bf16 = arch.startswith(AMD_BF16_PREFIXES)
    else:
        arch = f"sm_{props.major}{props.minor}"
        vendor, backend = "NVIDIA", "cuda"
        bf16 = (props.major, props.minor) >= NVIDIA_BF16_CAPABILITY
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    total = int(props.total_memory)
    warp = int(getattr(props, "warp_size", 0) or (64 if hip else 32))
    peak_gbps, peak_source = peak
    return Device(vendor=vendor, name=props.name, backend=backend, architecture=arch,
                  multiprocessors=int(props.multi_processor_count), l2_bytes=l2,
                  cache_bytes=max(l2, LAST_LEVEL_CACHE_BYTES.get(arch, 0)) or 50 * MiB,
                  memory_bytes=min(total, memory_limit) if memory_limit else total, card_memory_bytes=total,
                  warp_size=warp, max_threads_per_multiprocessor=int(getattr(props, "max_threads_per_multi_processor",
                                                                             0) or 2048),
                  native_dtypes=("fp32", "fp16", "bf16") if bf16 else ("fp32", "fp16"),
                  driver=driver or "unknown", peak_gbps=peak_gbps, peak_source=peak_source)


def emulating(device: Device, memory_bytes: int) -> Device:
    """The same card, told that it has ``memory_bytes`` (what an emulated smaller card plans with)."""
    return replace(device, memory_bytes=min(device.card_memory_bytes, memory_bytes))


def _nvml():
    """pynvml (nvidia-ml-py), initialised, or the sentence that says why not."""
    try:
        import pynvml
    except ImportError:
        return None, "NVML is not installed (pip install nvidia-ml-py): the datasheet peak is not known here"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # no NVIDIA driver, or a driver without NVML (WSL, some containers)
        return None, f"NVML did not start ({type(exc).__name__}): the datasheet peak is not known here"
    return pynvml, ""


def read_nvml(index: int = 0) -> tuple[float | None, str]:
    """The datasheet peak from NVML, memory clock x bus width x 2 (double data rate), with how it was read.

    On the H200: 3201 MHz x 6016 bits x 2 / 8 = 4814 GB/s. Never raises: ``(None, why)`` where NVML cannot say."""
    pynvml, why = _nvml()
    if pynvml is None:
        return None, why
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        clock_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
    except Exception as exc:
        return None, f"NVML could not read the memory clock and bus width ({type(exc).__name__})"
    finally:
        pynvml.nvmlShutdown()
    if not clock_mhz or not bus_bits:
        return None, "NVML reports no memory clock or bus width for this card"
    return clock_mhz * 1e6 * bus_bits * 2 / 8 / 1e9, "NVML: memory clock x bus width x 2"


def nvml_driver(index: int = 0) -> str:
    """The driver version from NVML, or the CUDA version torch was built with where NVML cannot say."""
    pynvml, _ = _nvml()
    if pynvml is not None:
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
            return version.decode() if isinstance(version, bytes) else version
        except Exception:
            pass
        finally:
            pynvml.nvmlShutdown()
    import torch

    return f"unknown (CUDA {torch.version.cuda})"


def elements_for_cache(bytes_per_element_set: int, cache_bytes: int, free_bytes: int, *, l2_multiple: int = 8,
                       budget_fraction: float = 0.5) -> int:
    """How many elements make the data at least ``l2_multiple`` times the cache (`grader.bandwidth.sized_for_hbm`
    without a GPU): capped so the data fits in ``budget_fraction`` of ``free_bytes``, and never under 2^20.
    Arithmetic only, here rather than in `grader.plan`, so the learner's process may read it too."""
    want = l2_multiple * cache_bytes * 3 // bytes_per_element_set
    cap = int(free_bytes * budget_fraction) // bytes_per_element_set
    return max(1 << 20, min(want, cap))
