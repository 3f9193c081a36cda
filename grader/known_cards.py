"""Five cards as ``torch.cuda.get_device_properties`` describes them, for the plans no one can run here.

A free notebook T4, a gaming RTX 4060, a rented A100-40GB, the H200 the course was measured on, and an
AMD MI300X through Triton's HIP backend. tests/test_devices.py checks every exercise's plan on each, and
the learner's page on GPUs (docs/gpus.md) renders its table from them. Total memory is what the driver
reports (less than the datasheet's); the MI300X's L2 is the 4 MB of one XCD, as ROCm reports it, and its
256 MB Infinity Cache comes from `grader.device.LAST_LEVEL_CACHE_BYTES`.
"""

from __future__ import annotations

from types import SimpleNamespace

from grader import device

MiB = 1 << 20


def _props(name, major, minor, memory, sms, l2, *, warp=32, threads=2048, arch=""):
    return SimpleNamespace(name=name, major=major, minor=minor, total_memory=memory, multi_processor_count=sms,
                           L2_cache_size=l2, warp_size=warp, max_threads_per_multi_processor=threads,
                           gcnArchName=arch)


NVML = "NVML: memory clock x bus width x 2"
#: short name: (properties, HIP?, what NVML reads: the datasheet peak in GB/s and how)
CARDS = {
    "T4": (_props("Tesla T4", 7, 5, 15_835_660_288, 40, 4 * MiB, threads=1024), False, (320.1, NVML)),
    "RTX 4060": (_props("NVIDIA GeForce RTX 4060", 8, 9, 8_585_216_000, 24, 24 * MiB, threads=1536), False,
                 (272.0, NVML)),
    "A100-40GB": (_props("NVIDIA A100-SXM4-40GB", 8, 0, 42_505_273_344, 108, 40 * MiB), False, (1555.2, NVML)),
    "H200": (_props("NVIDIA H200", 9, 0, 150_754_820_096, 132, 60 * MiB), False, (4814.3, NVML)),
    "MI300X": (_props("AMD Instinct MI300X", 9, 4, 205_822_885_888, 304, 4 * MiB, warp=64,
                      arch="gfx942:sramecc+:xnack-"), True,
               (None, "AMD cards have no NVML (amdsmi is not read): the datasheet peak is not known here")),
}


def card(name: str) -> device.Device:
    """The device model of one of `CARDS`."""
    properties, hip, peak = CARDS[name]
    return device.from_properties(properties, hip=hip, driver="not read (a card described, not present)", peak=peak)
