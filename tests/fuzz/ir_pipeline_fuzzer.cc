// libFuzzer harness: IR text -> parse -> verify -> exact re-print -> the whole pipeline
// (passes, lowering, emit) for MSL and CUDA. Bad input must end in a UserError; a crash, an
// InternalError or a re-print that differs is a finding (abort).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/pipeline.h"
#include "metile/support/errors.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "ir_pipeline_fuzzer: %s\n--- input ---\n%s\n", what.c_str(), text.c_str());
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
    if (kernel.dialect != ir::Dialect::Tile) return 0;
    for (const char* target : {"host", "sm90"}) {
      PipelineOptions options;
      options.target = &target::target_by_name(target);
      try {
        compile_to_source(kernel, options);
      } catch (const UserError&) {
        // a rule broken after verification (resources, not supported): reported as such
      }
    }
  } catch (const InternalError& e) {
    finding(e.what(), text);
  }
  return 0;
}
