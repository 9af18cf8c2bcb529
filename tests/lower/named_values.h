// The values of a flat Metal IR test kernel by the names its text gives them. The parser
// numbers values in order (parameters, then results) and keeps only the parameters' names, so
// each op's result takes its name from its line ("  %name = ..."); one result per op, no
// regions.
#pragma once

#include <map>
#include <sstream>
#include <string>

#include "metile/ir/ir.h"

namespace metile::lower {

inline std::map<std::string, ir::ValueId> named_values(const ir::Kernel& k, const char* text) {
  std::map<std::string, ir::ValueId> names;
  std::istringstream lines(text);
  size_t op = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  %", 0) == 0)
      names[line.substr(3, line.find(' ', 3) - 3)] = k.body.ops.at(op++).results.at(0);
  for (const ir::Param& p : k.params) names[p.name] = p.value;
  return names;
}

}  // namespace metile::lower
