// The IR harnesses' shared first half: IR text -> parse -> verify -> exact re-print -> parse
// again. Bad input ends in a UserError (nullopt: nothing to go on with); a re-print that does not
// parse back or differs is a finding (abort, naming the harness and the input).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/support/errors.h"

namespace metile::fuzz {

[[noreturn]] inline void finding(const char* harness, const std::string& what,
                                 const std::string& text) {
  std::fprintf(stderr, "%s: %s\n--- input ---\n%s\n", harness, what.c_str(), text.c_str());
  std::abort();
}

// The verified kernel of `text`, or nullopt for text that is rightly refused.
inline std::optional<ir::Kernel> round_trip(const char* harness, const std::string& text) {
  ir::Kernel kernel;
  try {
    kernel = ir::parse(text, "<fuzz>");
  } catch (const UserError&) {
    return std::nullopt;  // malformed text, reported as such
  }
  if (!ir::verify(kernel).empty()) return std::nullopt;
  const std::string printed = ir::print(kernel);
  ir::Kernel again;
  try {
    again = ir::parse(printed, "<reprint>");
  } catch (const UserError& e) {
    finding(harness, std::string("the printed form does not parse: ") + e.what(), text);
  }
  if (ir::print(again) != printed)
    finding(harness, "print -> parse -> print is not the identity", text);
  return kernel;
}

}  // namespace metile::fuzz
