#!/usr/bin/env bash
# Put Liger-Kernel's wheel in .whl/ (ignored by git), for a GPU machine that has no network.
#
#   bash tools/device/prepare_liger.sh          # PYTHON=/path/to/python to pick the pip
#
# Run it where pip can reach PyPI, before sending the working tree to the GPU machine with `.whl`
# carried along. There, the exercise 9 and 10 benchmarks install it without the network:
#
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=.:/tmp/site python3 -m tools.benchmarks.ex09_rmsnorm --out "$OUT"
#
# Liger-Kernel is pure Python: its wheel declares torch and triton as its only requirements (both are
# on the GPU machine already, hence --no-deps) and it also imports `packaging`. If it does not import
# there, the benchmarks record the exact error in place of Liger's rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VERSION=0.8.5
WHEEL=.whl/liger_kernel-$VERSION-py3-none-any.whl
# sha256 of the wheel PyPI served on 2026-12-01 (pip download liger_kernel==0.8.5).
SHA256=60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9

mkdir -p .whl
if [ ! -f "$WHEEL" ]; then
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --dest .whl "liger_kernel==$VERSION"
fi
echo "$SHA256  $WHEEL" | sha256sum -c -
ls -l "$WHEEL"
