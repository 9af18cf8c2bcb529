// Helper functions the emitted body calls, written into the source only when used. The
// dialect's hooks (dialect.h) decide which helpers exist and how they read; the prelude only
// collects them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "metile/ir/types.h"

namespace metile::codegen {

class Prelude {
 public:
  // Records the definition of helper `name` for dtype t; a pair already recorded is kept.
  void add(std::string_view name, ir::DType t, std::string definition);
  // Records the definition of a type the source names (CUDA's half): types come before every
  // helper, since helpers may take them.
  void add_type(std::string_view name, std::string definition);

  // The types and then the helpers recorded so far, each ordered by name (helpers then by
  // dtype); "" when none.
  std::string text() const;

 private:
  std::map<std::string, std::string> types_;
  std::map<std::pair<std::string, ir::DType>, std::string> helpers_;
};

}  // namespace metile::codegen
