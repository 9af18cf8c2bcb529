// The text form of Tile IR and Metal IR (docs/ir_text_form.md). print -> parse -> print is
// the identity; parse lives in parser.h.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::ir {

// The whole kernel, ending in a newline. Never throws on broken IR (the verifier's error
// messages embed it): undefined values print as %?<id>.
std::string print(const Kernel& k);

// One attribute value as it appears in the text form: 3, 1.5, "read", f32, [1, 2].
std::string print_attr(const Attr& a);

// The name print() gives every value, indexed by ValueId: "%x" for a parameter named x,
// "%N" for the N-th other definition in text order, "%?<id>" for values never defined.
std::vector<std::string> printed_value_names(const Kernel& k);

}  // namespace metile::ir
