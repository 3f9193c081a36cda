#!/usr/bin/env bash
# Put FlashInfer's paged decode kernel, and only what its import needs, in .whl/ (ignored by git) for a
# GPU machine with no network: Python 3.12, x86_64. About 22 MB; the device tool carries at most 64 MiB
# in all, so pass `.whl` in its `carry` list. Run here, from the repository root, before the GPU call:
#
#     bash tools/device/prepare_flashinfer.sh
#
# Why this set. flashinfer-python 0.7.4 (the newest) is a 101 MB wheel whose import pulls in most of
# its package (cuDNN, CuTe DSL and MoE front ends among them). 0.5.3 is a 7 MB wheel with the CUDA
# sources and headers its JIT compiles from (csrc/, include/, CUTLASS headers) and its import needs
# only apache-tvm-ffi (the binding layer its JIT modules load through) plus small pure-Python packages;
# nvidia-cutlass-dsl (CuTe DSL kernels, hundreds of MB) is imported only by the GEMM/MoE paths, not
# by decode. Releases before 0.5 have no wheels. FlashInfer compiles the decode kernel with nvcc and
# ninja on first use (both on the GPU image); tools/device/ex08_decode.sh installs the wheels with
# `pip install --no-index --no-deps --target` and runs the benchmark, which records FlashInfer's
# version, its compile time, or the exact reason it failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=.whl
mkdir -p "$DEST"
PY=${PYTHON:-python3}
"$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$DEST" \
  flashinfer-python==0.5.3 "apache-tvm-ffi>=0.1,<0.2" nvidia-cudnn-frontend einops tabulate tqdm click \
  nvidia-ml-py ninja
du -ch "$DEST"/*.whl | tail -1
