#!/usr/bin/env bash
# The libFuzzer harnesses of tests/fuzz, built with clang under ASan and UBSan in build-fuzz/:
#   scripts/fuzz.sh [SECONDS]   run each harness (ir_text, ir_pipeline, dimacs) for SECONDS
#                               (default 300) on its corpus
#   scripts/fuzz.sh --smoke     five seconds each of the harnesses that build quickly under
#                               the sanitizers (ir_text: the IR parser, verifier and printer;
#                               dimacs: the max-flow solvers): the test suite's run (CTest
#                               fuzz.smoke), under 3 minutes from a cold build on 2 cores.
#                               ir_pipeline needs the whole compiler sanitized (over 10 minutes).
# New inputs go to build-fuzz/corpus/<harness>, findings to build-fuzz/findings/. Prints the
# executions and crashes of each harness; exits 1 if any crashed, 77 (skipped) without clang.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
harnesses=(ir_text ir_pipeline dimacs)
if [ "$seconds" = --smoke ]; then
  seconds=5
  harnesses=(ir_text dimacs)
fi

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  > "$probe/probe.cc"
if ! command -v clang++ > /dev/null ||
  ! clang++ -fsanitize=fuzzer "$probe/probe.cc" -o "$probe/probe" 2> /dev/null; then
  echo "fuzz: skipped: clang++ with libFuzzer is not installed (apt-get install clang)"
  exit 77
fi

if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETILE_FUZZ=ON -DMETILE_SANITIZE=address,undefined \
    -DMETILE_BUILD_TESTS=OFF -DMETILE_BUILD_BENCHMARKS=OFF -DMETILE_WITH_CUDA=OFF > /dev/null
fi
cmake --build build-fuzz -j "${METILE_FUZZ_JOBS:-2}" --target "${harnesses[@]/%/_fuzzer}"

crashed=0
for harness in "${harnesses[@]}"; do
  corpus=build-fuzz/corpus/$harness findings=build-fuzz/findings/$harness
  seeds=tests/fuzz/corpus/$harness
  [ "$harness" = ir_text ] && seeds=tests/fuzz/corpus/ir_pipeline  # the same IR texts
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  log=build-fuzz/$harness.log
  status=0
  "build-fuzz/tests/fuzz/${harness}_fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "$seeds" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$findings" -type f | wc -l)
  echo "fuzz: $harness: ${runs:-0} executions, $crashes crashes (log: $log)"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    crashed=1
    tail -40 "$log"
  fi
done
exit $crashed
