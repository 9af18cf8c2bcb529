// libFuzzer harness: IR text -> parse -> verify -> exact re-print -> parse again, for the Tile
// and Metal IR (metile_ir alone: the smoke run's harness, quick to build under the
// sanitizers; ir_pipeline_fuzzer goes on through the whole pipeline). Bad input must end in a
// UserError; a crash, an InternalError or a re-print that differs is a finding (abort).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/support/errors.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "ir_text_fuzzer: %s\n--- input ---\n%s\n", what.c_str(), text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace metile;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ir::Kernel kernel;
    try {
      kernel = ir::parse(text, "<fuzz>");
    } catch (const UserError&) {
      return 0;  // malformed text, reported as such
    }
    if (!ir::verify(kernel).empty()) return 0;
    const std::string printed = ir::print(kernel);
    ir::Kernel again;
    try {
      again = ir::parse(printed, "<reprint>");
    } catch (const UserError& e) {
      finding(std::string("the printed form does not parse: ") + e.what(), text);
    }
    if (ir::print(again) != printed) finding("print -> parse -> print is not the identity", text);
  } catch (const InternalError& e) {
    finding(e.what(), text);
  }
  return 0;
}
