#include "metile/lower/verify_vector_accesses.h"

#include <map>
#include <set>

#include "metile/ir/printer.h"
#include "metile/lower/group_vector_accesses.h"
#include "metile/lower/known_divisibility.h"
#include "metile/lower/mask_bounds.h"
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
  Verifier(const ir::Kernel& k, const target::Target& target)
      : k_(k), target_(target), index_(k), divisibility_(k) {}

  void run() {
    block(k_.body, nullptr);
    ir::walk(k_.body, [&](const Op& op) {
      for (ValueId v : op.operands)
        if (vectors_.count(v) && op.kind != OpKind::Extract && !yielded_.count(&op))
          fail(op, "reads the vector %" + std::to_string(v) +
                       " of a grouped load; only extract (and the yield of a guarded load's "
                       "branch) may");
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
        fail(op,
             "its vector is not a packed_load or guarded load defined before it in the same "
             "block");
      if (op.kind == OpKind::PackedLoad || op.kind == OpKind::Pack) vectors_.insert(op.results[0]);
      if (op.kind == OpKind::PackedLoad) defined_here.insert(op.results[0]);
      if (op.kind == OpKind::If && op.results.size() == 1 && k_.type(op.results[0]).is_vector())
        defined_here.insert(op.results[0]);
      // An if whose else region has no scalar access of the kind (a pipeline's guard) is no
      // grouping's guard.
      if (is_packed(op))
        packed_access(
            op, holds(guarded_by, op.kind == OpKind::PackedLoad ? OpKind::Load : OpKind::Store));
      if (op.kind == OpKind::AsyncCopy && op.int_attr("elements") > 1)
        packed_copy(op, holds(guarded_by, OpKind::AsyncCopy));
      for (size_t r = 0; r < op.regions.size(); ++r)
        block(op.regions[r],
              op.kind == OpKind::If && r == 0 && op.regions.size() == 2 ? &op : nullptr);
    }
  }

  // `branch` when its else region holds an op of `kind`, else nullptr.
  static const Op* holds(const Op* branch, OpKind kind) {
    if (!branch) return nullptr;
    for (const Op& op : branch->regions[1].ops)
      if (op.kind == kind) return branch;
    return nullptr;
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
      if (target_.vector_access_needs_vector_alignment &&
          divisibility_.of(op.operands[0]) < width * ir::dtype_bytes(p.dtype))
        fail(op, "target " + target_.name +
                     " needs the vector's alignment, but the access has no guard testing it");
      const std::optional<PointerParts> at = index_.pointer_parts(op.operands[0]);
      if (at && may_wrap(k_.type(at->index).dtype) && !proven_apart(at->index, width - 1))
        fail(op, "its 32-bit indices may wrap, but the access has no guard comparing them");
      return;
    }
    guard(op, *guarded_by, width);
  }

  void guard(const Op& packed, const Op& branch, int64_t width) {
    const bool load = packed.kind == OpKind::PackedLoad;
    const std::vector<ValueId> all = conjuncts(index_, branch.operands[0]);
    const std::set<ValueId> required(all.begin(), all.end());
    const std::optional<PointerParts> at = index_.pointer_parts(packed.operands[0]);
    if (!at) fail(packed, "its address is not ptr_add(base, index)");
    std::map<int64_t, ValueId> covered;  // each element's index
    for (const Op& scalar : branch.regions[1].ops) {
      if (scalar.kind != (load ? OpKind::Load : OpKind::Store)) continue;
      const std::optional<PointerParts> parts = index_.pointer_parts(scalar.operands[0]);
      const std::optional<int64_t> d = parts && parts->base == at->base
                                           ? index_.constant_difference(at->index, parts->index)
                                           : std::nullopt;
      if (!d || *d < 0 || *d >= width || !covered.emplace(*d, parts->index).second)
        fail(packed, "the fallback's access through %" + std::to_string(scalar.operands[0]) +
                         " is not one of the vector's elements");
      const size_t mask = load ? 1 : 2;
      if (scalar.operands.size() <= mask) continue;
      for (ValueId leaf : conjuncts(index_, scalar.operands[mask]))
        if (!required.count(leaf) && !implied(required, leaf))
          fail(packed, "the guard does not require the fallback's mask %" +
                           std::to_string(scalar.operands[mask]));
    }
    if (static_cast<int64_t>(covered.size()) != width)
      fail(packed, "the fallback covers " + std::to_string(covered.size()) + " of its " +
                       std::to_string(width) + " elements");
    // A load's branches join the whole vector or each element (Target::grouped_load_joins_vector).
    if (load && branch.results.size() == 1 && k_.type(branch.results[0]).is_vector())
      joined_load(packed, branch, *at, width);
    else if (load)
      element_join(packed, branch, *at, width);
    if (may_wrap(k_.type(at->index).dtype) && !proven_apart(at->index, width - 1) &&
        !widened_range_holds(required, at->index, covered.at(width - 1)))
      fail(packed, "the guard does not compare the widened 32-bit indices");
    if (target_.vector_access_needs_vector_alignment &&
        !aligned(required, packed.operands[0],
                 width * ir::dtype_bytes(k_.type(packed.operands[0]).dtype)))
      fail(packed, "the guard does not test the vector's alignment, which target " + target_.name +
                       " needs");
  }

  // A packed async_copy: its guarded if's fallback copies each of its elements one at a time
  // (source and destination moving together), and the guard requires their masks, the widened
  // source indices and the alignment of both addresses, except what a divisibility proves. A
  // copy without a guard has all of that proven; its predicate is its first element's mask,
  // which group_vector_accesses found equal to every element's (uniform_masks: the scalar
  // masks it replaced are gone, so that proof is not repeated here).
  void packed_copy(const Op& packed, const Op* branch) {
    const int64_t width = packed.int_attr("elements");
    const int64_t bytes = width * ir::dtype_bytes(k_.type(packed.operands[1]).dtype);
    const std::optional<PointerParts> src = index_.pointer_parts(packed.operands[1]);
    const std::optional<PointerParts> dst = index_.pointer_parts(packed.operands[0]);
    if (!src || !dst) fail(packed, "its addresses are not ptr_add(base, index)");
    if (!branch) return unguarded_copy(packed, *src, width, bytes);
    const std::vector<ValueId> all = conjuncts(index_, branch->operands[0]);
    const std::set<ValueId> required(all.begin(), all.end());
    std::map<int64_t, ValueId> covered;
    for (const Op& scalar : branch->regions[1].ops) {
      if (scalar.kind != OpKind::AsyncCopy) continue;
      const std::optional<PointerParts> s = index_.pointer_parts(scalar.operands[1]);
      const std::optional<PointerParts> d = index_.pointer_parts(scalar.operands[0]);
      const std::optional<int64_t> at = s && s->base == src->base
                                            ? index_.constant_difference(src->index, s->index)
                                            : std::nullopt;
      if (!at || *at < 0 || *at >= width || !d || d->base != dst->base ||
          index_.constant_difference(dst->index, d->index) != at ||
          scalar.int_attr("elements") != 1 || !covered.emplace(*at, s->index).second)
        fail(packed, "the fallback's copy from %" + std::to_string(scalar.operands[1]) +
                         " is not one of the packed copy's elements");
      if (scalar.operands.size() < 3) continue;
      for (ValueId leaf : conjuncts(index_, scalar.operands[2]))
        if (!required.count(leaf) && !implied(required, leaf))
          fail(packed, "the guard does not require the fallback's mask %" +
                           std::to_string(scalar.operands[2]));
    }
    if (static_cast<int64_t>(covered.size()) != width)
      fail(packed, "the fallback covers " + std::to_string(covered.size()) + " of its " +
                       std::to_string(width) + " elements");
    if (may_wrap(k_.type(src->index).dtype) && !proven_apart(src->index, width - 1) &&
        !widened_range_holds(required, src->index, covered.at(width - 1)))
      fail(packed, "the guard does not compare the widened 32-bit indices");
    for (ValueId pointer : {packed.operands[0], packed.operands[1]})
      if (!aligned(required, pointer, bytes))
        fail(packed, "the guard does not test the alignment of %" + std::to_string(pointer));
  }

  void unguarded_copy(const Op& packed, const PointerParts& src, int64_t width, int64_t bytes) {
    for (ValueId pointer : {packed.operands[0], packed.operands[1]})
      if (divisibility_.of(pointer) < bytes)
        fail(packed, "a packed copy without a guard, but its address %" + std::to_string(pointer) +
                         " is not known to be aligned to " + std::to_string(bytes) + " bytes");
    if (may_wrap(k_.type(src.index).dtype) && !proven_apart(src.index, width - 1))
      fail(packed, "a packed copy without a guard, but its 32-bit source indices may wrap");
  }

  bool proven_apart(ValueId low, int64_t span) const { return divisibility_.no_wrap(low, span); }

  // Whether the pointer is aligned to `bytes`: by its divisibility, or the guard tests it.
  bool aligned(const std::set<ValueId>& required, ValueId pointer, int64_t bytes) const {
    return divisibility_.of(pointer) >= bytes || requires_alignment(required, pointer, bytes);
  }

  // Whether a required bound implies `leaf` (mask_bounds.h): one of the same invariant and
  // direction whose varying value is at least as tight, by a constant, without wrapping
  // between the two (equal values and 64-bit values do not wrap; other 32-bit ones need a
  // required widened check of a range that holds both).
  bool implied(const std::set<ValueId>& required, ValueId leaf) const {
    for (ValueId r : required)
      for (int side = 0; side < 2; ++side) {
        const std::optional<Bound> br = bound_of(k_, index_, r, side);
        const std::optional<Bound> bl = bound_of(k_, index_, leaf, side);
        if (!br || !bl) continue;
        const std::optional<int64_t> d = bound_offset(index_, *br, *bl);
        if (!d || (br->upper() ? *d > 0 : *d < 0)) continue;
        // Values 0 apart are equal: the same comparison.
        if (*d == 0 || !may_wrap(k_.type(bl->varying).dtype) ||
            proven_apart(*d > 0 ? br->varying : bl->varying, *d > 0 ? *d : -*d) ||
            widened_range_holds(required, br->varying, bl->varying))
          return true;
      }
    return false;
  }

  // Whether a required `(i64)high == (i64)low + span`, with high the 32-bit value span past
  // low, puts a and b in low .. low + span.
  bool widened_range_holds(const std::set<ValueId>& required, ValueId a, ValueId b) const {
    for (ValueId v : required) {
      const Op* eq = index_.definer(v);
      if (!eq || eq->kind != OpKind::Cmp || eq->str_attr("pred") != "eq") continue;
      const Op* next = index_.definer(eq->operands[1]);
      if (!next || next->kind != OpKind::Add) continue;
      const Op* high = index_.definer(eq->operands[0]);
      const Op* low = index_.definer(next->operands[0]);
      const Op* span = index_.definer(next->operands[1]);
      if (!high || high->kind != OpKind::Cast || !low || low->kind != OpKind::Cast || !span ||
          span->kind != OpKind::Constant || k_.type(low->results[0]).dtype != ir::DType::i64)
        continue;
      const int64_t c = span->int_attr("value");
      if (index_.constant_difference(low->operands[0], high->operands[0]) != c) continue;
      const std::optional<int64_t> da = index_.constant_difference(low->operands[0], a);
      const std::optional<int64_t> db = index_.constant_difference(low->operands[0], b);
      if (da && db && *da >= 0 && *da <= c && *db >= 0 && *db <= c) return true;
    }
    return false;
  }

  // A guarded load's branches yield its vector: the packed load's, and the fallback's pack of
  // its scalar loads in element order.
  void joined_load(const Op& packed, const Op& branch, const PointerParts& at, int64_t width) {
    const Op& then_yield = branch.regions[0].ops.back();
    const Op& else_yield = branch.regions[1].ops.back();
    if (branch.results.size() != 1 || then_yield.operands.size() != 1 ||
        then_yield.operands[0] != packed.results[0])
      fail(packed, "its guarded if does not yield the packed load's vector as its one result");
    const Op* pack =
        else_yield.operands.size() == 1 ? index_.definer(else_yield.operands[0]) : nullptr;
    if (!pack || pack->kind != OpKind::Pack || static_cast<int64_t>(pack->operands.size()) != width)
      fail(packed,
           "the fallback does not yield a pack of its " + std::to_string(width) + " scalar loads");
    for (int64_t i = 0; i < width; ++i)
      fallback_element(packed, at, pack->operands[i], i, "pack element");
    yielded_.insert(&then_yield);
    yielded_.insert(&else_yield);
  }

  // A guarded load whose branches yield its elements: the packed branch the extracts of its
  // vector, the fallback its scalar loads, both in element order.
  void element_join(const Op& packed, const Op& branch, const PointerParts& at, int64_t width) {
    const Op& then_yield = branch.regions[0].ops.back();
    const Op& else_yield = branch.regions[1].ops.back();
    const auto yields = [width](const Op& op) {
      return static_cast<int64_t>(op.operands.size()) == width;
    };
    if (static_cast<int64_t>(branch.results.size()) != width || !yields(then_yield) ||
        !yields(else_yield))
      fail(packed, "its guarded if yields neither its vector nor its " + std::to_string(width) +
                       " elements");
    for (int64_t i = 0; i < width; ++i) {
      const Op* extract = index_.definer(then_yield.operands[i]);
      if (!extract || extract->kind != OpKind::Extract ||
          extract->operands[0] != packed.results[0] || extract->int_attr("index") != i)
        fail(packed, "the packed branch's element " + std::to_string(i) +
                         " is not the extract of the vector's element " + std::to_string(i));
      fallback_element(packed, at, else_yield.operands[i], i, "element");
    }
  }

  // `value`, the fallback's element i (named `what` in the error), is the scalar load of the
  // vector's element i.
  void fallback_element(const Op& packed, const PointerParts& at, ValueId value, int64_t i,
                        const std::string& what) {
    const Op* scalar = index_.definer(value);
    const std::optional<PointerParts> parts = scalar && scalar->kind == OpKind::Load
                                                  ? index_.pointer_parts(scalar->operands[0])
                                                  : std::nullopt;
    if (!parts || parts->base != at.base || index_.constant_difference(at.index, parts->index) != i)
      fail(packed, "the fallback's " + what + " " + std::to_string(i) +
                       " is not the load of the vector's element " + std::to_string(i));
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
  mutable KnownDivisibility divisibility_;  // memoises
  std::set<ValueId> vectors_;               // packed loads' and packs' vectors
  std::set<const Op*> yielded_;             // the yields of guarded loads' branches
};

}  // namespace

void verify_vector_accesses(const ir::Kernel& k, const target::Target& target) {
  if (k.dialect != ir::Dialect::Metal)
    throw UserError("verify_vector_accesses: kernel '" + k.name + "' is not Metal IR");
  Verifier(k, target).run();
}

}  // namespace metile::lower
