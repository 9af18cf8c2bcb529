#!/usr/bin/env bash
# The README's first command: set up, build, run the demo on the default device (host).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/examples/demo/metile-demo
