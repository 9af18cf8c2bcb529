// libFuzzer harness: IR text -> parse -> verify -> exact re-print -> the whole pipeline
// (passes, lowering, emit) for MSL and CUDA. Bad input must end in a UserError; a crash, an
// InternalError or a re-print that differs is a finding (abort).
#include <cstdint>
#include <string>

#include "ir_round_trip.h"
#include "metile/pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace metile;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::optional<ir::Kernel> kernel = fuzz::round_trip("ir_pipeline_fuzzer", text);
    if (!kernel || kernel->dialect != ir::Dialect::Tile) return 0;
    for (const char* target : {"host", "sm90"}) {
      PipelineOptions options;
      options.target = &target::target_by_name(target);
      try {
        compile_to_source(*kernel, options);
      } catch (const UserError&) {
        // a rule broken after verification (resources, not supported): reported as such
      }
    }
  } catch (const InternalError& e) {
    fuzz::finding("ir_pipeline_fuzzer", e.what(), text);
  }
  return 0;
}
