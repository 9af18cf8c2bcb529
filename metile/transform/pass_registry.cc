#include "metile/transform/pass_registry.h"

#include <map>

#include "metile/transform/canonicalize.h"
#include "metile/transform/cse.h"
#include "metile/transform/dce.h"

namespace metile::transform {

namespace {

// std::map keeps references to passes valid while more are registered.
std::map<std::string, Pass>& registry() {
  static std::map<std::string, Pass> passes = [] {
    std::map<std::string, Pass> p;
    auto add = [&](Pass pass) { p.emplace(pass.name, std::move(pass)); };
    add({"verify", "checks the kernel against its dialect's rules and changes nothing",
         [](ir::Kernel k) { return k; }});
    add({"canonicalize",
         "folds constants, applies exact algebraic identities, picks constant branches",
         canonicalize});
    add({"cse", "replaces pure ops by identical earlier ones", eliminate_common_subexpressions});
    add({"dce", "removes ops whose results are unused and that have no effects",
         eliminate_dead_code});
    return p;
  }();
  return passes;
}

}  // namespace

void register_pass(Pass pass) {
  const std::string name = pass.name;
  METILE_ASSERT(registry().emplace(name, std::move(pass)).second,
                "pass " + name + " is registered twice");
}

const Pass& find_pass(const std::string& name) {
  auto& passes = registry();
  auto it = passes.find(name);
  if (it != passes.end()) return it->second;
  std::string known;
  for (const auto& [n, p] : passes) known += (known.empty() ? "" : ", ") + n;
  throw UserError("unknown pass '" + name + "'; known passes: " + known);
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const auto& [n, p] : registry()) names.push_back(n);
  return names;
}

}  // namespace metile::transform
