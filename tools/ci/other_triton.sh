#!/usr/bin/env bash
# The oldest Triton the course claims, beside the one CI installs: the interpreter checks that depend on
# Triton's version (the interpreter fixes, version-checked against the interpreter's source, and every
# solution) run again with that Triton. CI runs it after the whole suite (README's ci:test block).
#
#   bash tools/ci/other_triton.sh            # the oldest claimed, read from pyproject.toml
#   TRITON_VERSION=3.7.0 bash tools/ci/other_triton.sh
#   bash tools/ci/other_triton.sh --durations=10   # arguments go to pytest
#
# The second environment is a layer over the one that runs this script, not a copy of it: a virtual
# environment inside the course (the sandbox shows a venv that lives there, and the learner's process
# runs its Python) that holds only the other Triton, and a .pth file that puts the running
# environment's packages (torch, pytest...) after it on sys.path. So torch is never installed twice (a
# CUDA build is gigabytes), and a torch whose wheel pins another Triton does not stop the install.
set -euo pipefail
cd "$(dirname "$0")/../.."

# "triton>=3.6,<3.10" in pyproject.toml: the oldest claimed is the lower bound.
oldest=$(sed -n 's/^ *"triton>=\([0-9.]*\),.*/\1/p' pyproject.toml)
version=${TRITON_VERSION:-$oldest.0}
layer=.venv-triton-$version
# Where the running environment's packages are (pure and compiled ones may live apart: one line each).
base_packages=$(python -c 'import sysconfig; p = sysconfig.get_paths(); print("\n".join(dict.fromkeys((p["purelib"], p["platlib"]))))')

if [ ! -x "$layer/bin/python" ]; then
  python -m venv --without-pip "$layer"
fi
layer_packages=$("$layer/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# addsitedir, not a bare path: the running environment's own .pth files (an editable install) apply too.
while read -r folder; do echo "import site; site.addsitedir('$folder')"; done <<< "$base_packages" \
  > "$layer_packages/course-base-environment.pth"
if [ "$("$layer/bin/python" -c 'import triton; print(triton.__version__)' 2>/dev/null)" != "$version" ] \
   || [ ! -d "$layer_packages/triton" ]; then
  python -m pip install -q --no-deps --upgrade --target "$layer_packages" "triton==$version"
fi
"$layer/bin/python" -c 'import triton, torch; print(f"second Triton: triton {triton.__version__} from {triton.__file__}, torch {torch.__version__}")'

# The fixes' own tests (the whole file: about 30 s) and every solution, graded in the interpreter.
"$layer/bin/python" -m pytest -q -n 2 -p no:cacheprovider tests/test_interpreter_fixes.py tests/test_course.py \
  -k "test_interpreter_fixes or solution_passes" "$@"
