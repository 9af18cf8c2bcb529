#!/usr/bin/env bash
# The C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (-DMETILE_SANITIZE=address,undefined), in build-asan/:
#   scripts/sanitize.sh            every C++ test (CTest), two at a time
#   scripts/sanitize.sh REGEX      the CTest tests whose names match REGEX (CI: a subset)
# Debug (-O0): it builds in about half the time of an optimised build on two cores.
# A report of either sanitizer stops the test that made it, so a green run means none.
# The host emulator's fibers switch stacks, which ASan follows only with its stack-use-after-
# return checks off; kernels compiled at run time are not instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${METILE_SANITIZE_JOBS:-2}
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DMETILE_SANITIZE=address,undefined -DMETILE_WARNINGS_AS_ERRORS=ON \
    -DMETILE_BUILD_BENCHMARKS=OFF -DMETILE_BUILD_PYTHON=OFF
fi
cmake --build build-asan -j "$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan --output-on-failure -j "$jobs" -E '^fuzz\.' ${1:+-R "$1"}
