#include "metile/transform/cse.h"

#include <map>
#include <string>
#include <vector>

#include "metile/ir/printer.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::ValueId;

// Pure ops with one result: the key below names that result's type.
bool is_pure(const Op& op) {
  return ir::op_info(op.kind).has(ir::Trait::Pure) && op.results.size() == 1;
}

class Cse {
 public:
  explicit Cse(const ir::Kernel& k) : k_(k) {}

  void block(ir::Block& b) {
    const size_t scope = defined_.size();
    std::vector<Op> kept;
    for (Op& op : b.ops) {
      for (ValueId& v : op.operands) v = resolve(v);
      for (ir::Block& r : op.regions) block(r);
      if (is_pure(op)) {
        std::string key = key_of(op);
        if (auto it = available_.find(key); it != available_.end()) {
          replaced_[op.results[0]] = it->second;
          continue;
        }
        available_[key] = op.results[0];
        defined_.push_back(key);
      }
      kept.push_back(std::move(op));
    }
    b.ops = std::move(kept);
    // Values of this block are not visible after it.
    while (defined_.size() > scope) {
      available_.erase(defined_.back());
      defined_.pop_back();
    }
  }

  // Every replaced op was removed.
  bool changed() const { return !replaced_.empty(); }

 private:
  ValueId resolve(ValueId v) const {
    auto it = replaced_.find(v);
    return it == replaced_.end() ? v : it->second;
  }

  std::string key_of(const Op& op) const {
    std::string key(ir::op_name(op.kind));
    for (ValueId v : op.operands) key += " %" + std::to_string(v);
    for (const auto& [name, value] : op.attrs) key += " " + name + "=" + ir::print_attr(value);
    return key + " : " + k_.type(op.results[0]).str();
  }

  const ir::Kernel& k_;
  std::map<std::string, ValueId> available_;  // key -> the first visible op computing it
  std::vector<std::string> defined_;          // keys in definition order, for leaving scopes
  std::map<ValueId, ValueId> replaced_;
};

}  // namespace

ir::PassResult eliminate_common_subexpressions(ir::Kernel k) {
  Cse cse(k);
  cse.block(k.body);
  const bool changed = cse.changed();
  return {std::move(k), changed};
}

}  // namespace metile::transform
