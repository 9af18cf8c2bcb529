#include "metile/lower/verify_vector_accesses.h"

#include <map>
#include <set>

#include "metile/ir/printer.h"
#include "metile/lower/group_vector_accesses.h"
#include "metile/lower/vector_index.h"

namespace metile::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

bool is_packed(const Op& op) {
  return op.kind == OpKind::PackedLoad || op.kind == OpKind::PackedStore;
}

class Verifier {
 public:
  Verifier(const ir::Kernel& k, const target::Target& target) : k_(k), target_(target), index_(k) {}

  void run() {
    block(k_.body, nullptr);
    ir::walk(k_.body, [&](const Op& op) {
      for (ValueId v : op.operands)
        if (packed_loads_.count(v) && op.kind != OpKind::Extract)
          fail(op,
               "reads the vector %" + std::to_string(v) + " of a packed_load; only extract may");
    });
  }

 private:
  [[noreturn]] void fail(const Op& op, const std::string& rule) const {
    throw InternalError("verify_vector_accesses: " + std::string(ir::op_name(op.kind)) + ": " +
                        rule + "\n" + ir::print(k_));
  }

  // `guarded_by`: the if whose then region is this block, when it has an else region.
  void block(const ir::Block& b, const Op* guarded_by) {
    std::set<ValueId> defined_here;
    for (const Op& op : b.ops) {
      if (op.kind == OpKind::Extract && !defined_here.count(op.operands[0]))
        fail(op, "its vector is not a packed_load defined before it in the same block");
      if (op.kind == OpKind::PackedLoad) {
        defined_here.insert(op.results[0]);
        packed_loads_.insert(op.results[0]);
      }
      if (is_packed(op)) packed_access(op, guarded_by);
      for (size_t r = 0; r < op.regions.size(); ++r)
        block(op.regions[r],
              op.kind == OpKind::If && r == 0 && op.regions.size() == 2 ? &op : nullptr);
    }
  }

  void packed_access(const Op& op, const Op* guarded_by) {
    const ir::Type& p = k_.type(op.operands[0]);
    const int64_t width = op.kind == OpKind::PackedLoad
                              ? k_.type(op.results[0]).shape[0]
                              : static_cast<int64_t>(op.operands.size()) - 1;
    if (!groupable_dtype(p.dtype))
      fail(op, "moves " + std::string(ir::dtype_name(p.dtype)) +
                   "; grouped accesses are f16, bf16 or f32");
    if (width > target_.max_vector_elements ||
        width * ir::dtype_bytes(p.dtype) > target_.max_vector_bytes)
      fail(op, "a vector of " + std::to_string(width) + " " + std::string(ir::dtype_name(p.dtype)) +
                   " exceeds target " + target_.name + "'s vector accesses");
    if (!guarded_by) {
      if (target_.vector_access_needs_vector_alignment)
        fail(op, "target " + target_.name +
                     " needs the vector's alignment, but the access has no guard testing it");
      return;
    }
    guard(op, *guarded_by, width);
  }

  // The and-tree of cond, as the values it requires.
  std::set<ValueId> conjuncts(ValueId cond) const {
    std::set<ValueId> all = {cond};
    const Op* def = index_.definer(cond);
    if (def && def->kind == OpKind::And)
      for (ValueId v : def->operands) all.merge(conjuncts(v));
    return all;
  }

  void guard(const Op& packed, const Op& branch, int64_t width) {
    const bool load = packed.kind == OpKind::PackedLoad;
    const std::set<ValueId> required = conjuncts(branch.operands[0]);
    const std::optional<PointerParts> at = index_.pointer_parts(packed.operands[0]);
    if (!at) fail(packed, "its address is not ptr_add(base, index)");
    std::set<int64_t> covered;
    for (const Op& scalar : branch.regions[1].ops) {
      if (scalar.kind != (load ? OpKind::Load : OpKind::Store)) continue;
      const std::optional<PointerParts> parts = index_.pointer_parts(scalar.operands[0]);
      const std::optional<int64_t> d = parts && parts->base == at->base
                                           ? index_.constant_difference(at->index, parts->index)
                                           : std::nullopt;
      if (!d || *d < 0 || *d >= width || !covered.insert(*d).second)
        fail(packed, "the fallback's access through %" + std::to_string(scalar.operands[0]) +
                         " is not one of the vector's elements");
      const size_t mask = load ? 1 : 2;
      if (scalar.operands.size() > mask && !required.count(scalar.operands[mask]))
        fail(packed, "the guard does not require the fallback's mask %" +
                         std::to_string(scalar.operands[mask]));
    }
    if (static_cast<int64_t>(covered.size()) != width)
      fail(packed, "the fallback covers " + std::to_string(covered.size()) + " of its " +
                       std::to_string(width) + " elements");
    if (k_.type(at->index).dtype != ir::DType::i64 && !requires_widened_check(required))
      fail(packed, "the guard does not compare the widened 32-bit indices");
    if (target_.vector_access_needs_vector_alignment &&
        !requires_alignment(required, packed.operands[0],
                            width * ir::dtype_bytes(k_.type(packed.operands[0]).dtype)))
      fail(packed, "the guard does not test the vector's alignment, which target " + target_.name +
                       " needs");
  }

  bool requires_widened_check(const std::set<ValueId>& required) const {
    for (ValueId v : required) {
      const Op* def = index_.definer(v);
      if (def && def->kind == OpKind::Cmp && def->str_attr("pred") == "eq" &&
          k_.type(def->operands[0]).dtype == ir::DType::i64)
        return true;
    }
    return false;
  }

  bool requires_alignment(const std::set<ValueId>& required, ValueId ptr, int64_t bytes) const {
    for (ValueId v : required) {
      const Op* def = index_.definer(v);
      if (def && def->kind == OpKind::IsAligned && def->operands[0] == ptr &&
          def->int_attr("bytes") >= bytes)
        return true;
    }
    return false;
  }

  const ir::Kernel& k_;
  const target::Target& target_;
  IndexAnalysis index_;
  std::set<ValueId> packed_loads_;
};

}  // namespace

void verify_vector_accesses(const ir::Kernel& k, const target::Target& target) {
  if (k.dialect != ir::Dialect::Metal)
    throw UserError("verify_vector_accesses: kernel '" + k.name + "' is not Metal IR");
  Verifier(k, target).run();
}

}  // namespace metile::lower
