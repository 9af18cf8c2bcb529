#!/usr/bin/env bash
# Builds meTile on a GPU machine that lacks our Debian packages and has no network (the H200
# machine: Ubuntu 24.04, GCC 13, CMake 4, Boost without context) and runs the C++ suites
# (CTest: unit, lit, end-to-end) and the Python suite on one device. Run from the repo root:
#
#   scripts/h200_suite.sh [all|build|test]     # all (the default) = build, then test
#
# .debs/  Debian 12 packages, unpacked with dpkg -x into build-deps/prefix, never into /:
#         Boost 1.74 with context, GoogleTest, nlohmann-json, LEMON, FileCheck and its libz3.
# .whl/   wheels the machine's Python lacks (lit; the nanobind the extension is built with),
#         installed into build-deps/site with pip --target, also never into the system.
# SUITE_DEVICE  the device the suites run on (default cuda; host runs them on the host
#               emulator; empty leaves METILE_DEVICE unset, so the default device is used).
# PYTHON        the interpreter with numpy, pytest (and torch, Triton); default python3.
# OUT           when set, the logs are written there (configure, build, ctest, pytest).
#
# Warnings are not errors here: a newer compiler's new warnings are reported (and counted in
# the summary), not fatal. The exit status is non-zero when any step or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-all}"
case "$steps" in all | build | test) ;; *) echo "usage: $0 [all|build|test]" >&2; exit 2 ;; esac
device="${SUITE_DEVICE-cuda}"
python="$(command -v "${PYTHON:-python3}")"
jobs="$(nproc)"
logs="${OUT:-$PWD/build-deps/logs}"
deps="$PWD/build-deps"
prefix="$deps/prefix"
lib="$prefix/usr/lib/x86_64-linux-gnu"
site="$deps/site"
mkdir -p "$logs"
: >"$logs/summary.txt"

log() { echo "h200_suite: $*" | tee -a "$logs/summary.txt"; }

# Unpacks .debs/ and .whl/ afresh and writes the FileCheck and lit wrappers CTest runs.
unpack_dependencies() {
  rm -rf "${prefix:?}" "${site:?}" "${deps:?}/bin"
  mkdir -p "$prefix" "$site" "$deps/bin"
  local f
  for f in .debs/*.deb; do dpkg -x "$f" "$prefix"; done
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
    .whl/*.whl
  # FileCheck needs libz3.so.4 from the prefix, and only FileCheck gets it.
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' \
    "$lib" "$prefix/usr/lib/llvm-14/bin/FileCheck" >"$deps/bin/FileCheck"
  # lit has no __main__: its console script's entry point, run from the wheel's files.
  printf '#!/bin/sh\nPYTHONPATH="%s" exec "%s" -c "import lit.main; lit.main.main()" "$@"\n' \
    "$site" "$python" >"$deps/bin/lit"
  chmod +x "$deps/bin/FileCheck" "$deps/bin/lit"
}

# Every dependency from the prefix, named where CMake would otherwise find the machine's own
# (its libgmock.a does not match Debian's GoogleTest headers).
configure() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_PREFIX_PATH=$prefix/usr" \
    "-DBoost_DIR=$lib/cmake/Boost-1.74.0" \
    "-DGTest_DIR=$lib/cmake/GTest" \
    "-Dnlohmann_json_DIR=$prefix/usr/share/cmake/nlohmann_json" \
    "-DLEMON_INCLUDE_DIR=$prefix/usr/include" "-DLEMON_LIBRARY=$lib/liblemon.a" \
    "-DFILECHECK=$deps/bin/FileCheck" "-DLIT=$deps/bin/lit" \
    -DMETILE_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$python" "-Dnanobind_DIR=$site/nanobind/cmake" \
    -DMETILE_WARNINGS_AS_ERRORS=OFF
}

build() {
  unpack_dependencies
  configure 2>&1 | tee "$logs/configure.log"
  cmake --build build -j "$jobs" 2>&1 | tee "$logs/build.log"
  log "build done with $(grep -c 'warning:' "$logs/build.log" || true) compiler warnings" \
    "(build.log)"
  # import metile loads python/metile and build/'s _core, as scripts/build.sh sets up.
  "$python" scripts/metile_checkout.py build
}

# Runs both suites even when the first fails, so one run reports everything.
run_tests() {
  local failed=()
  if [ -n "$device" ]; then export METILE_DEVICE="$device"; else unset METILE_DEVICE; fi
  log "device: ${METILE_DEVICE:-(default)}; python: $python"
  if [ "$device" = cuda ]; then nvidia-smi -L 2>&1 | tee -a "$logs/summary.txt" || true; fi
  # A hung kernel costs one test's timeout, not the whole run.
  ctest --test-dir build --output-on-failure --timeout 300 -j "$jobs" 2>&1 |
    tee "$logs/ctest.log" || failed+=(ctest)
  "$python" -m pytest -q tests/python 2>&1 |
    tee "$logs/pytest.log" || failed+=(pytest)
  if [ ${#failed[@]} -gt 0 ]; then
    log "FAILED: ${failed[*]} (see ${failed[*]/%/.log} in $logs)"
    return 1
  fi
  log "passed: ctest and pytest"
}

# Steps as plain commands: set -e does not apply inside a function run as `build && ...`.
case "$steps" in
  all) build; run_tests ;;
  build) build ;;
  test) run_tests ;;
esac
