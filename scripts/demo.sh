#!/usr/bin/env bash
# The README's first command: set up, build, and run the demos on the default device (the
# host emulator): the C++ library kernels, then the Python quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh metile-demo _core
echo "== C++ demo: library kernels compiled to MSL and run on the host target"
build/examples/demo/metile-demo
echo "== Python quickstart (examples/quickstart.py)"
.venv/bin/python examples/quickstart.py
