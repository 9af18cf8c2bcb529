// Reads the text form of Tile IR and Metal IR (docs/ir_text_form.md) back into a Kernel.
#pragma once

#include <string_view>

#include "metile/ir/ir.h"

namespace metile::ir {

// Parses one kernel. Malformed text is a UserError "file:line:col: message". The result is
// not verified: a well-formed but invalid kernel (an op outside its dialect, a use outside
// its definition's region, mismatched types) parses, and verify() reports it.
Kernel parse(std::string_view text, std::string_view filename = "<input>");

}  // namespace metile::ir
