// libFuzzer harness: IR text -> parse -> verify -> exact re-print -> parse again, for the Tile
// and Metal IR (metile_ir alone: the smoke run's harness, quick to build under the
// sanitizers; ir_pipeline_fuzzer goes on through the whole pipeline). Bad input must end in a
// UserError; a crash, an InternalError or a re-print that differs is a finding (abort).
#include <cstdint>
#include <string>

#include "ir_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace metile;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    fuzz::round_trip("ir_text_fuzzer", text);
  } catch (const InternalError& e) {
    fuzz::finding("ir_text_fuzzer", e.what(), text);
  }
  return 0;
}
