#include "metile/transform/eliminate_redundant_conversions.h"

#include <map>
#include <set>

#include "metile/ir/printer.h"
#include "metile/transform/check_ownership.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ThreadLayout;
using ir::ValueId;

bool has_conversion(const ir::Block& b) {
  bool found = false;
  ir::walk(b, [&](const Op& op) { found = found || op.kind == OpKind::ConvertLayout; });
  return found;
}

// Plans every rewrite on the unchanged kernel first, so that a kernel with nothing to remove
// is never copied or touched.
class Elimination {
 public:
  Elimination(const ir::Kernel& k, const ir::OwnershipMap& owners)
      : k_(k), owners_(owners), names_(ir::printed_value_names(k)), uses_(k.types.size(), 0) {
    ir::walk(k.body, [&](const Op& op) {
      for (ValueId v : op.operands) ++uses_[v];
    });
  }

  // Conversions live in straight-line kernels only (check_ownership), so the body's ops are
  // all of them.
  void plan() {
    for (size_t i = 0; i < k_.body.ops.size(); ++i) {
      const Op& op = k_.body.ops[i];
      if (op.kind == OpKind::ConvertLayout) conversion(i);
    }
  }

  bool changed() const { return !optimizations_.empty(); }
  std::vector<LayoutOptimization> take_optimizations() { return std::move(optimizations_); }

  void apply(ir::Kernel& k) const {
    std::vector<Op> kept;
    for (size_t i = 0; i < k.body.ops.size(); ++i) {
      if (removed_.count(i)) continue;
      Op& op = k.body.ops[i];
      if (auto it = new_operand_.find(i); it != new_operand_.end()) op.operands[0] = it->second;
      kept.push_back(std::move(op));
    }
    k.body.ops = std::move(kept);
    ir::walk(k.body, [&](Op& op) {
      for (ValueId& v : op.operands) v = resolve(v);
    });
  }

 private:
  void conversion(size_t index) {
    const Op& c = k_.body.ops[index];
    const ValueId source = resolve(c.operands[0]);
    const ThreadLayout& to = *c.layout_attr("layout");
    if (layout(source) == to)
      return replace(
          index, source, "identity",
          name(source) + " is already owned by " + to.str() + ", so converting it moves nothing");
    auto producer = producers_.find(source);
    if (producer == producers_.end()) {
      producers_[c.results[0]] = index;
      return;
    }
    const size_t first = producer->second;
    const ValueId original = current_operand(first);
    if (layout(original) == to) {
      replace(index, original, "inverse pair",
              name(source) + " = convert_layout(" + name(original) + ") to " +
                  layout(source).str() + ", and converting it back to " + to.str() +
                  " gives the values of " + name(original) + " where they were");
      return drop_if_unused(first, source);
    }
    if (uses_[source] != 1) {
      producers_[c.results[0]] = index;
      return;
    }
    new_operand_[index] = original;
    ++uses_[original];
    record(index, "chain",
           name(source) + " = convert_layout(" + name(original) + ") has no other user, so " +
               name(c.results[0]) + " converts " + name(original) + " to " + to.str() +
               " directly; convert_layout keeps every logical value, so the intermediate owner "
               "is unobservable");
    --uses_[source];
    drop_if_unused(first, source);
    producers_[c.results[0]] = index;
  }

  // Conversion `index` disappears; its users read `value`.
  void replace(size_t index, ValueId value, const std::string& rule, const std::string& proof) {
    const Op& c = k_.body.ops[index];
    record(index, rule, proof);
    replaced_[c.results[0]] = value;
    uses_[value] += uses_[c.results[0]];
    --uses_[resolve(c.operands[0])];
    removed_.insert(index);
  }

  void drop_if_unused(size_t index, ValueId result) {
    if (uses_[result] != 0) return;
    --uses_[current_operand(index)];
    removed_.insert(index);
  }

  void record(size_t index, const std::string& rule, const std::string& proof) {
    const Op& c = k_.body.ops[index];
    optimizations_.push_back(
        {rule, name(c.results[0]) + (c.loc.known() ? " at " + c.loc.str() : ""), proof});
  }

  ValueId current_operand(size_t index) const {
    auto it = new_operand_.find(index);
    return it != new_operand_.end() ? it->second : resolve(k_.body.ops[index].operands[0]);
  }

  ValueId resolve(ValueId v) const {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  const ThreadLayout& layout(ValueId v) const {
    const ThreadLayout* l = owners_.layout(v);
    METILE_ASSERT(l, "eliminate_redundant_conversions: tile " + name(v) + " has no layout");
    return *l;
  }

  const std::string& name(ValueId v) const { return names_[v]; }

  const ir::Kernel& k_;
  const ir::OwnershipMap& owners_;
  std::vector<std::string> names_;
  std::vector<int> uses_;
  std::map<ValueId, size_t> producers_;  // a live conversion's result -> its op's index
  std::map<ValueId, ValueId> replaced_;
  std::map<size_t, ValueId> new_operand_;
  std::set<size_t> removed_;
  std::vector<LayoutOptimization> optimizations_;
};

}  // namespace

ConversionElimination eliminate_redundant_conversions(ir::Kernel kernel) {
  if (!has_conversion(kernel.body)) return {{std::move(kernel), false}, {}};
  const ir::OwnershipMap owners = check_ownership(kernel);
  Elimination elimination(kernel, owners);
  elimination.plan();
  if (!elimination.changed()) return {{std::move(kernel), false}, {}};
  elimination.apply(kernel);
  return {{std::move(kernel), true}, elimination.take_optimizations()};
}

}  // namespace metile::transform
