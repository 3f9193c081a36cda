#!/usr/bin/env bash
# The oldest Triton the course claims, beside the one CI installs: a second virtual environment inside
# the course (the sandbox shows a venv that lives there) with the same torch and that Triton, running
# the interpreter checks that depend on Triton's version: the interpreter fixes (version-checked
# against the interpreter's source), every solution, and a few known-wrong variants.
#
#   bash tools/ci/other_triton.sh            # the oldest claimed, read from pyproject.toml
#   TRITON_VERSION=3.7.0 bash tools/ci/other_triton.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

# "triton>=3.6,<3.10" in pyproject.toml: the oldest claimed is the lower bound.
oldest=$(sed -n 's/^ *"triton>=\([0-9.]*\),.*/\1/p' pyproject.toml)
version=${TRITON_VERSION:-$oldest.0}
torch_version=$(python -c 'import torch; print(torch.__version__.split("+")[0])')
venv=.venv-triton-$version

if [ ! -x "$venv/bin/python" ]; then
  python -m venv "$venv"
fi
"$venv/bin/pip" install -q "torch==$torch_version" "triton==$version" -e ".[dev]"
"$venv/bin/python" -c 'import triton, torch; print(f"second Triton: triton {triton.__version__}, torch {torch.__version__}")'

# The fixes' own tests, every solution, and wrong variants whose message comes through the interpreter's
# hooks (masking, traffic, launch counting).
"$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider tests/test_interpreter_fixes.py tests/test_course.py \
  -k "test_interpreter_fixes or solution_passes or (wrong_variant and ex01)"
