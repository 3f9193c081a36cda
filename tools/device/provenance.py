"""Where and when a device script ran, for the header of the JSON it writes: the GPU, its driver, the
versions, the date and the command. Cheap: no ceiling is measured (`tools.benchmarks.meta` does that
for the benchmarks), and torch is imported only when this is called, after the script's own work."""

from __future__ import annotations

import subprocess
import sys
import time


def header(**extra) -> dict:
    import torch
    import triton

    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        driver = None
    return {"gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "driver": driver,
            "torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0],
            "date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv), **extra}
