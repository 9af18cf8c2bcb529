#!/usr/bin/env bash
# Builds meTile on a GPU machine that lacks our Debian packages and has no network (the H200
# machine: Ubuntu 24.04, GCC 13, CMake 4, Boost without context) and runs the C++ suites
# (CTest: unit, lit, end-to-end) and the Python suite on one device. Run from the repo root:
#
#   scripts/h200_suite.sh [all|build|test|sanitize]  # all (the default) = build, then test
#
# sanitize (optional, after build): a small CUDA subset under compute-sanitizer memcheck and
# racecheck, failing when either reports an error (see run_sanitizers).
#
# .debs/  Debian 12 packages, unpacked with dpkg -x into build-deps/prefix, never into /:
#         Boost 1.74 with context, GoogleTest, nlohmann-json, LEMON, FileCheck and its libz3.
# .whl/   wheels the machine's Python lacks (lit; the nanobind the extension is built with),
#         installed into build-deps/site with pip --target, also never into the system.
# SUITE_DEVICE  the device the suites run on (default cuda; host runs them on the host
#               emulator; empty leaves METILE_DEVICE unset, so the default device is used).
# PYTHON        the interpreter with numpy, pytest (and torch, Triton); default python3.
# OUT           when set, the logs are written there (configure, build, ctest, pytest,
#               sanitize-<tool>-<suite>.log).
# SUITE_TARGETS the build targets (default: all); `_core` builds only the Python extension, which
#               is all the benchmarks need (about half the build time).
# SUITE_CXX, SUITE_CC  the compilers (default: the system's /usr/bin/g++ and gcc). The Python
#               extension must share the interpreter's libstdc++: the image's CXX
#               (/opt/gcc/bin/g++, a wrapper of the same GCC 13) linked parts of libstdc++
#               (std::ostream, codecvt) into _core.so beside the shared libstdc++.so.6, and
#               formatting a double crashed there.
# COMPUTE_SANITIZER  the compute-sanitizer to run (default: the one on PATH, else
#               /usr/local/cuda/bin/compute-sanitizer).
#
# Warnings are not errors here: a newer compiler's new warnings are reported (and counted in
# the summary), not fatal. The exit status is non-zero when any step or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-all}"
case "$steps" in
  all | build | test | sanitize) ;;
  *) echo "usage: $0 [all|build|test|sanitize]" >&2; exit 2 ;;
esac
device="${SUITE_DEVICE-cuda}"
python="$(command -v "${PYTHON:-python3}")"
jobs="$(nproc)"
logs="${OUT:-$PWD/build-deps/logs}"
deps="$PWD/build-deps"
prefix="$deps/prefix"
lib="$prefix/usr/lib/x86_64-linux-gnu"
site="$deps/site"
cxx="${SUITE_CXX:-/usr/bin/g++}"
cc="${SUITE_CC:-/usr/bin/gcc}"
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
    "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_C_COMPILER=$cc" \
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
  # shellcheck disable=SC2086  # SUITE_TARGETS is a list of words
  cmake --build build -j "$jobs" ${SUITE_TARGETS:+--target $SUITE_TARGETS} 2>&1 |
    tee "$logs/build.log"
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

# The sanitized subset: the GPU tests of metile_cuda_tests but the two that fault on purpose
# (a wild store, which memcheck would rightly report), and Python suites that launch many
# kernels, reductions and threadgroup memory among them, on the cuda device.
sanitize_gtest_filter="OnTheGpu.*:-OnTheGpu.AFaultNamesTheKernelAndDoesNotHang"
sanitize_gtest_filter+=":OnTheGpu.AnAsynchronousFaultSurfacesAtSynchronizeNamingTheKernel"
sanitize_pytests=(tests/python/test_vector_add.py tests/python/test_axis_ops.py
  tests/python/test_rmsnorm_register.py)

# sanitized TOOL SUITE COMMAND...: runs COMMAND under compute-sanitizer's TOOL, its output and
# the tool's report in sanitize-TOOL-SUITE.log. Fails when the command fails or the tool
# reports an error in any process: API errors are not counted (tests provoke them on
# purpose), and racecheck's warnings (possible hazards) are logged but not fatal.
sanitized() {
  local tool="$1" suite="$2"
  shift 2
  local log_file="$logs/sanitize-$tool-$suite.log" status=0
  "$sanitizer" --tool "$tool" --target-processes all --report-api-errors no \
    --error-exitcode 86 "$@" >"$log_file" 2>&1 || status=$?
  if [ "$status" -ne 0 ] ||
    grep -Eq "ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: .*\([1-9][0-9]* errors?" "$log_file"; then
    log "FAILED: $tool on $suite (exit status $status; sanitize-$tool-$suite.log)"
    return 1
  fi
  log "clean: $tool on $suite: $(grep -E "(ERROR|RACECHECK) SUMMARY" "$log_file" | sort -u |
    sed 's/^=* *//' | paste -sd ';' -)"
}

# Runs every tool on every suite even when one fails, so one run reports everything.
run_sanitizers() {
  local failed=() tool
  sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer ||
    echo /usr/local/cuda/bin/compute-sanitizer)}"
  if [ ! -x "$sanitizer" ]; then
    log "FAILED: no compute-sanitizer at $sanitizer (set COMPUTE_SANITIZER)"
    return 1
  fi
  export METILE_DEVICE=cuda
  log "sanitizer: $("$sanitizer" --version | tail -1); python: $python"
  for tool in memcheck racecheck; do
    sanitized "$tool" gtest build/tests/runtime/metile_cuda_tests \
      "--gtest_filter=$sanitize_gtest_filter" || failed+=("$tool-gtest")
    sanitized "$tool" pytest "$python" -m pytest -q -p no:cacheprovider \
      "${sanitize_pytests[@]}" || failed+=("$tool-pytest")
  done
  if [ ${#failed[@]} -gt 0 ]; then
    log "FAILED under compute-sanitizer: ${failed[*]}"
    return 1
  fi
  log "passed: memcheck and racecheck"
}

# Steps as plain commands: set -e does not apply inside a function run as `build && ...`.
case "$steps" in
  all) build; run_tests ;;
  build) build ;;
  test) run_tests ;;
  sanitize) run_sanitizers ;;
esac
