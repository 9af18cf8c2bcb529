#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, run every test: the C++ unit,
# lit and end-to-end tests through CTest, then the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
export PATH="$PWD/.venv/bin:$PATH"
ctest --test-dir build --output-on-failure -j "$(nproc)"
.venv/bin/python -m pytest -q tests/python
