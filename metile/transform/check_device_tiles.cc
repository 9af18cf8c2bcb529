#include "metile/transform/check_device_tiles.h"

#include <map>
#include <set>

#include "metile/ir/printer.h"
#include "metile/support/errors.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

bool is_device_tile(const Op& op) {
  return op.kind == OpKind::DeviceTileLoad || op.kind == OpKind::DeviceTileStore;
}

// The operand of a memory access that is its pointer; -1 for an op that is none.
int pointer_operand(const Op& op) {
  if (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::MatrixLoad ||
      op.kind == OpKind::DeviceTileLoad)
    return 0;
  return op.kind == OpKind::MatrixStore || op.kind == OpKind::DeviceTileStore ? 1 : -1;
}

bool writes(const Op& op) {
  return op.kind == OpKind::Store || op.kind == OpKind::MatrixStore ||
         op.kind == OpKind::DeviceTileStore;
}

bool is_matrix_access(const Op& op) {
  return is_device_tile(op) || op.kind == OpKind::MatrixLoad || op.kind == OpKind::MatrixStore;
}

std::string where(const Op& op) {
  return op.loc.known() ? " at " + op.loc.str() : "";
}

class DeviceTileCheck {
 public:
  explicit DeviceTileCheck(const ir::Kernel& k) : k_(k), names_(ir::printed_value_names(k)) {
    for (const ir::Param& p : k.params) params_[p.value] = p.name;
  }

  void run() {
    ir::walk(k_.body, [&](const Op& op) { define(op); });
    if (!has_device_tiles_ && !has_device_matrix_) return;
    ir::walk(k_.body, [&](const Op& op) { check_scratch_use(op); });
    check_read_and_write();
  }

 private:
  // Roots: the buffers (parameters, shared allocations) a pointer derives from through
  // ptr_add and select.
  void define(const Op& op) {
    if (op.kind == OpKind::SharedAlloc) roots_[op.results[0]] = {op.results[0]};
    if (op.kind == OpKind::PtrAdd || op.kind == OpKind::Select) {
      std::set<ValueId>& into = roots_[op.results[0]];
      for (size_t i = op.kind == OpKind::Select ? 1 : 0; i < op.operands.size(); ++i)
        for (ValueId r : roots_of(op.operands[i])) into.insert(r);
    }
    if (op.kind == OpKind::PtrAdd) aliases_[op.results[0]] = &op;
    if (is_device_tile(op)) {
      has_device_tiles_ = true;
      check_scratch_operand(op);
    }
    const int p = pointer_operand(op);
    if (p < 0) return;
    const ValueId ptr = op.operands[static_cast<size_t>(p)];
    if (k_.type(ptr).space != ir::AddressSpace::Device) return;
    if (is_matrix_access(op)) has_device_matrix_ = true;
    for (ValueId root : roots_of(ptr)) {
      Accesses& a = accesses_[root];
      const Op*& first = writes(op) ? a.write : a.read;
      if (!first) first = &op;
      if (is_matrix_access(op) && !a.matrix) a.matrix = &op;
    }
  }

  std::set<ValueId> roots_of(ValueId v) const {
    const auto found = roots_.find(v);
    return found == roots_.end() ? std::set<ValueId>{v} : found->second;
  }

  std::string op_words(const Op& op) const { return std::string(ir::op_name(op.kind)) + where(op); }

  void check_scratch_operand(const Op& op) {
    const ValueId scratch = op.operands.back();
    const auto alias = aliases_.find(scratch);
    if (alias != aliases_.end())
      throw UserError(std::string(ir::op_name(op.kind)) + ": in kernel '" + k_.name +
                          "', scratch= must reference a metile.shared allocation directly, but " +
                          names_[scratch] + " is an offset alias of it (ptr_add" +
                          where(*alias->second) + ")",
                      op.loc);
    const std::set<ValueId> roots = roots_of(scratch);
    if (roots.size() != 1 || *roots.begin() != scratch || !k_.type(scratch).is_pointer() ||
        k_.type(scratch).space != ir::AddressSpace::Threadgroup || params_.count(scratch))
      throw UserError(std::string(ir::op_name(op.kind)) + ": in kernel '" + k_.name +
                          "', scratch= must reference a metile.shared allocation directly, got " +
                          names_[scratch],
                      op.loc);
    scratch_.insert(scratch);
  }

  // Any use of a scratch allocation but as a device tile's scratch operand.
  void check_scratch_use(const Op& op) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ValueId v = op.operands[i];
      if (!scratch_.count(v)) continue;
      if (is_device_tile(op) && i + 1 == op.operands.size()) continue;
      throw UserError(std::string(ir::op_name(op.kind)) + ": in kernel '" + k_.name +
                          "', shared allocation " + names_[v] +
                          " is the scratch= of device tile accesses, which the compiler "
                          "synchronises itself, so nothing else may use it (no scalar access, "
                          "other matrix view or offset alias); " +
                          op_words(op) + " does",
                      op.loc);
    }
  }

  void check_read_and_write() const {
    for (const auto& [root, a] : accesses_) {
      if (!a.matrix || !a.read || !a.write) continue;
      const auto param = params_.find(root);
      const std::string buffer = param != params_.end() ? "'" + param->second + "'" : names_[root];
      throw UserError(std::string(ir::op_name(a.matrix->kind)) + ": in kernel '" + k_.name +
                          "', device buffer " + buffer + " is accessed by matrix operations (" +
                          op_words(*a.matrix) + ") and is both read (" + op_words(*a.read) +
                          ") and written (" + op_words(*a.write) +
                          ") in the kernel; this is rejected even with metile.barrier(), which "
                          "orders threadgroup memory only: read one buffer and write another",
                      a.matrix->loc);
    }
  }

  struct Accesses {
    const Op* read = nullptr;
    const Op* write = nullptr;
    const Op* matrix = nullptr;
  };

  const ir::Kernel& k_;
  const std::vector<std::string> names_;
  std::map<ValueId, std::string> params_;
  std::map<ValueId, std::set<ValueId>> roots_;
  std::map<ValueId, const Op*> aliases_;
  std::map<ValueId, Accesses> accesses_;
  std::set<ValueId> scratch_;
  bool has_device_tiles_ = false;
  bool has_device_matrix_ = false;
};

}  // namespace

void check_device_tiles(const ir::Kernel& kernel) {
  DeviceTileCheck(kernel).run();
}

}  // namespace metile::transform
