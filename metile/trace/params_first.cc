#include "metile/trace/params_first.h"

#include <vector>

namespace metile::trace {

namespace {

void renumber(ir::Block& block, const std::vector<ir::ValueId>& new_id) {
  for (ir::ValueId& a : block.args) a = new_id[a];
  for (ir::Op& op : block.ops) {
    for (ir::ValueId& v : op.operands)
      if (v != ir::kNoValue) v = new_id[v];
    for (ir::ValueId& v : op.results) v = new_id[v];
    for (ir::Block& region : op.regions) renumber(region, new_id);
  }
}

}  // namespace

void number_params_first(ir::Kernel& kernel) {
  const size_t n = kernel.types.size();
  std::vector<bool> is_param(n, false);
  bool in_order = true;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    is_param[kernel.params[i].value] = true;
    in_order = in_order && kernel.params[i].value == static_cast<ir::ValueId>(i);
  }
  if (in_order) return;  // the common case: declared before the first op
  std::vector<ir::ValueId> new_id(n, ir::kNoValue);
  ir::ValueId next = 0;
  for (const ir::Param& p : kernel.params) new_id[p.value] = next++;
  for (size_t v = 0; v < n; ++v)
    if (!is_param[v]) new_id[v] = next++;

  std::vector<ir::Type> types(n);
  std::vector<std::string> names(n);
  for (size_t v = 0; v < n; ++v) {
    types[new_id[v]] = std::move(kernel.types[v]);
    names[new_id[v]] = std::move(kernel.value_names[v]);
  }
  kernel.types = std::move(types);
  kernel.value_names = std::move(names);
  for (ir::Param& p : kernel.params) p.value = new_id[p.value];
  renumber(kernel.body, new_id);
}

}  // namespace metile::trace
