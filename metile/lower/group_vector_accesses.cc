#include "metile/lower/group_vector_accesses.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "metile/lower/known_divisibility.h"
#include "metile/lower/mask_bounds.h"
#include "metile/lower/vector_index.h"

namespace metile::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

// The narrowest group group_width reports: four elements, as seed 004 defines grouping; a
// target may pack pairs too (Target::min_vector_group), found after every wider group.
constexpr int kMinWidth = 4;

// A scalar f16/bf16/f32 load or store through ptr_add(base, index) on a device pointer, or a
// one-element async_copy from one (its destination ptr_add(dst_base, dst_index) in threadgroup
// memory).
struct Access {
  enum Kind { Load, Store, Copy };
  size_t position = 0;
  Kind kind = Load;
  bool load = false;
  ValueId base = ir::kNoValue;
  ValueId index = ir::kNoValue;
  ValueId dst_base = ir::kNoValue;
  ValueId dst_index = ir::kNoValue;
  ir::DType dtype = ir::DType::f32;
  ir::Attrs eviction;  // the cache hint (ops.def: load's eviction), which the group keeps
};

// Four or more accesses of one kind, in address order (member 0 at the lowest address).
struct Group {
  std::vector<Access> members;
  int width() const { return static_cast<int>(members.size()); }
};

// An op that touches or orders memory, or may inside its regions: accesses do not move
// across it.
bool orders_memory(const Op& op) {
  const ir::OpInfo& info = ir::op_info(op.kind);
  return !op.regions.empty() || info.has(ir::Trait::ReadsMemory) ||
         info.has(ir::Trait::WritesMemory) || info.has(ir::Trait::Convergent);
}

class Grouper {
 public:
  Grouper(ir::Kernel& k, const target::Target& target, VectorGroups& groups)
      : k_(k),
        target_(target),
        groups_(groups),
        index_(std::make_unique<IndexAnalysis>(k)),
        divisibility_(std::make_unique<KnownDivisibility>(k)) {}

  bool run(ir::Block& block) {
    bool changed = false;
    for (Op& op : block.ops)
      for (ir::Block& region : op.regions) changed |= run(region);
    while (std::optional<Group> group = find_group(block)) {
      rewrite(block, *group);
      // The block's ops moved: the analyses read the kernel afresh.
      index_ = std::make_unique<IndexAnalysis>(k_);
      divisibility_ = std::make_unique<KnownDivisibility>(k_);
      changed = true;
    }
    return changed;
  }

 private:
  std::optional<Access> access(const Op& op, size_t position) const {
    if (op.kind == OpKind::AsyncCopy) return copy(op, position);
    const bool load = op.kind == OpKind::Load;
    if (!load && op.kind != OpKind::Store) return std::nullopt;
    const ValueId ptr = op.operands[0];
    const ir::Type& p = k_.type(ptr);
    const ir::Type& value = k_.type(load ? op.results[0] : op.operands[1]);
    if (!p.is_pointer() || p.space != ir::AddressSpace::Device || !value.is_scalar() ||
        group_width(target_, value.dtype) == 0)
      return std::nullopt;
    const std::optional<PointerParts> parts = index_->pointer_parts(ptr);
    if (!parts) return std::nullopt;
    return Access{position,
                  load ? Access::Load : Access::Store,
                  load,
                  parts->base,
                  parts->index,
                  ir::kNoValue,
                  ir::kNoValue,
                  value.dtype,
                  op.only_attr("eviction")};
  }

  std::optional<Access> copy(const Op& op, size_t position) const {
    const ir::DType dtype = k_.type(op.operands[1]).dtype;
    if (!target_.has_async_copy || op.int_attr("elements") != 1 || group_width(target_, dtype) == 0)
      return std::nullopt;
    const std::optional<PointerParts> src = index_->pointer_parts(op.operands[1]);
    const std::optional<PointerParts> dst = index_->pointer_parts(op.operands[0]);
    if (!src || !dst) return std::nullopt;
    return Access{position,  Access::Copy, false, src->base, src->index,
                  dst->base, dst->index,   dtype, {}};
  }

  // The first group of the block: runs of accesses of one kind with no other memory op
  // between them, searched for consecutive addresses, the widest group first.
  std::optional<Group> find_group(const ir::Block& block) const {
    std::vector<Access> run;
    for (size_t i = 0; i <= block.ops.size(); ++i) {
      const Op* op = i < block.ops.size() ? &block.ops[i] : nullptr;
      const std::optional<Access> a = op ? access(*op, i) : std::nullopt;
      const bool ends =
          !op || (!a && orders_memory(*op)) || (a && !run.empty() && a->kind != run.front().kind);
      if (ends) {
        if (std::optional<Group> g = group_in(block, run)) return g;
        run.clear();
      }
      if (a) run.push_back(*a);
    }
    return std::nullopt;
  }

  // Groups of four or more first, each leader's widest first; narrower ones down to the
  // target's min_vector_group (sm90: pairs) only once no wider group is left in the run. Members
  // are looked up by their constant offset from their class's first access (accesses of one base
  // and dtype a constant apart), so a search costs a pass over the run per class, not per leader
  // and distance.
  std::optional<Group> group_in(const ir::Block& block, const std::vector<Access>& run) const {
    const Offsets offsets = classify(run);
    for (size_t i = 0; i < run.size(); ++i)
      for (int width = group_width(target_, run[i].dtype); width >= kMinWidth; width /= 2)
        if (std::optional<Group> g = group_at(block, run, offsets, i, width)) return g;
    for (int width = kMinWidth / 2; width >= std::max(2, target_.min_vector_group); width /= 2)
      for (size_t i = 0; i < run.size(); ++i)
        if (std::optional<Group> g = group_at(block, run, offsets, i, width)) return g;
    return std::nullopt;
  }

  // Each access's class and offset, and per class the first access (in run order) at each
  // offset.
  struct Offsets {
    std::vector<size_t> class_of;
    std::vector<int64_t> offset_of;
    std::vector<std::map<int64_t, size_t>> first_at;
  };

  Offsets classify(const std::vector<Access>& run) const {
    Offsets o;
    std::vector<size_t> representative;
    for (size_t i = 0; i < run.size(); ++i) {
      const Access& a = run[i];
      size_t cls = representative.size();
      int64_t offset = 0;
      for (size_t c = 0; c < representative.size(); ++c) {
        const Access& r = run[representative[c]];
        if (r.base != a.base || r.dtype != a.dtype || r.eviction != a.eviction ||
            r.dst_base != a.dst_base)
          continue;
        if (const std::optional<int64_t> d = index_->constant_difference(r.index, a.index)) {
          // A copy's destination moves with its source.
          if (a.kind == Access::Copy && index_->constant_difference(r.dst_index, a.dst_index) != d)
            continue;
          cls = c;
          offset = *d;
          break;
        }
      }
      if (cls == representative.size()) {
        representative.push_back(i);
        o.first_at.emplace_back();
      }
      o.class_of.push_back(cls);
      o.offset_of.push_back(offset);
      o.first_at[cls].emplace(offset, i);  // keeps the first access at an offset
    }
    return o;
  }

  std::optional<Group> group_at(const ir::Block& block, const std::vector<Access>& run,
                                const Offsets& o, size_t leader, int width) const {
    const std::map<int64_t, size_t>& at = o.first_at[o.class_of[leader]];
    Group g{{run[leader]}};
    for (int d = 1; d < width; ++d) {
      const auto member = at.find(o.offset_of[leader] + d);
      if (member == at.end()) return std::nullopt;
      g.members.push_back(run[member->second]);
    }
    if (movable(block, g)) return g;
    return std::nullopt;
  }

  // The positions between the group's first and last access, other than its own.
  static std::vector<size_t> between(const Group& g) {
    size_t first = g.members[0].position, last = first;
    std::set<size_t> own;
    for (const Access& a : g.members) {
      first = std::min(first, a.position);
      last = std::max(last, a.position);
      own.insert(a.position);
    }
    std::vector<size_t> positions;
    for (size_t i = first + 1; i < last; ++i)
      if (!own.count(i)) positions.push_back(i);
    return positions;
  }

  // The values of the ops between the accesses that read a grouped load's result: those
  // ops move after the group.
  std::set<ValueId> dependents(const ir::Block& block, const Group& g) const {
    std::set<ValueId> tainted;
    if (!g.members[0].load) return tainted;
    for (const Access& a : g.members) tainted.insert(block.ops[a.position].results[0]);
    for (size_t i : between(g)) {
      const Op& op = block.ops[i];
      bool reads = false;
      for (ValueId v : op.operands) reads |= tainted.count(v) != 0;
      if (reads) tainted.insert(op.results.begin(), op.results.end());
    }
    return tainted;
  }

  // Stores keep their order against every other store; a load's operands may not depend on
  // a grouped load's result (the group would then read what it defines).
  bool movable(const ir::Block& block, const Group& g) const {
    const std::vector<size_t> others = between(g);
    if (!g.members[0].load) {
      for (size_t i : others)
        if (block.ops[i].kind == OpKind::Store || block.ops[i].kind == OpKind::AsyncCopy)
          return false;
      return true;
    }
    const std::set<ValueId> tainted = dependents(block, g);
    for (const Access& a : g.members)
      for (ValueId v : block.ops[a.position].operands)
        if (tainted.count(v)) return false;
    return true;
  }

  ValueId emit(std::vector<Op>& ops, OpKind kind, std::vector<ValueId> operands, ir::Type type,
               ir::Attrs attrs, const SourceLocation& loc) {
    const ValueId r = k_.new_value(std::move(type));
    ops.push_back(Op{kind, std::move(operands), {r}, std::move(attrs), {}, loc});
    return r;
  }

  ValueId all_of(std::vector<Op>& ops, ValueId a, ValueId b, const SourceLocation& loc) {
    if (a == ir::kNoValue) return b;
    return emit(ops, OpKind::And, {a, b}, ir::Type::scalar(ir::DType::i1), {}, loc);
  }

  // (i64)high == (i64)low + span: the 32-bit values low .. high are exactly span apart.
  ValueId widened_apart(std::vector<Op>& ops, ValueId low, ValueId high, int64_t span,
                        const SourceLocation& loc) {
    const ir::Type wide = ir::Type::scalar(ir::DType::i64);
    const ValueId w_low = emit(ops, OpKind::Cast, {low}, wide, {}, loc);
    const ValueId w_high = emit(ops, OpKind::Cast, {high}, wide, {}, loc);
    const ValueId apart = emit(ops, OpKind::Constant, {}, wide, {{"value", span}}, loc);
    const ValueId next = emit(ops, OpKind::Add, {w_low, apart}, wide, {}, loc);
    return emit(ops, OpKind::Cmp, {w_high, next}, ir::Type::scalar(ir::DType::i1),
                {{"pred", std::string("eq")}}, loc);
  }

  // What the packed path's guard tests of the masks (mask_bounds.h). Read before rewrite
  // moves the block's ops, which the index analysis points into.
  MaskTerms guard_terms(const ir::Block& block, const Group& g) const {
    std::vector<ValueId> leaves;
    for (const Access& a : g.members) {
      const Op& op = block.ops[a.position];
      const size_t mask = a.load ? 1 : 2;
      if (op.operands.size() <= mask) continue;
      for (ValueId leaf : conjuncts(*index_, op.operands[mask]))
        if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) leaves.push_back(leaf);
    }
    // The indices' own widened check (guard) covers their range.
    const ValueId index0 = g.members.front().index, last = g.members.back().index;
    const Range checked =
        may_wrap(k_.type(index0).dtype) ? Range{index0, last, g.width() - 1} : Range{};
    return mask_terms(k_, *index_, leaves, checked);
  }

  bool proven_apart(ValueId low, int64_t span) { return divisibility_->no_wrap(low, span); }

  // What divisibility proves of a group's run-time tests. Read before rewrite moves the
  // block's ops, which the analyses point into.
  struct Proofs {
    std::vector<bool> ranges_apart;  // per MaskTerms range
    bool indices_apart = false;      // the members' indices do not wrap
    std::vector<bool> aligned;       // the destination's (a store's, a copy's) and a copy's source
  };
  Proofs prove(const ir::Block& block, const Group& g, const MaskTerms& terms) {
    Proofs p;
    for (const Range& r : terms.ranges) p.ranges_apart.push_back(proven_apart(r.low, r.span));
    p.indices_apart = proven_apart(g.members.front().index, g.width() - 1);
    const Op& first = block.ops[g.members[0].position];
    const int64_t bytes = g.width() * ir::dtype_bytes(g.members[0].dtype);
    for (size_t i = 0; i < (g.members[0].kind == Access::Copy ? 2u : 1u); ++i)
      p.aligned.push_back(divisibility_->of(first.operands[i]) >= bytes);
    return p;
  }

  // The packed path's condition: the masks' terms, the widened 32-bit indices of the first and
  // last member width - 1 apart, and the vector's alignment where needed, each unless proven
  // (cond is kNoValue when nothing is left to test). masks_only: cond tests the masks'
  // conjuncts alone.
  struct Guard {
    ValueId cond = ir::kNoValue;
    bool masks_only = true;
  };
  Guard guard(std::vector<Op>& ops, const Op& first, const Group& g, const MaskTerms& terms,
              const Proofs& proofs) {
    const SourceLocation& loc = first.loc;
    Guard guard;
    for (ValueId leaf : terms.conjuncts) guard.cond = all_of(ops, guard.cond, leaf, loc);
    const auto require = [&](ValueId test) {
      guard.cond = all_of(ops, guard.cond, test, loc);
      guard.masks_only = false;
    };
    for (size_t i = 0; i < terms.ranges.size(); ++i) {
      const Range& r = terms.ranges[i];
      if (!proofs.ranges_apart[i]) require(widened_apart(ops, r.low, r.high, r.span, loc));
    }
    const ValueId index0 = g.members.front().index, last = g.members.back().index;
    if (may_wrap(k_.type(index0).dtype) && !proofs.indices_apart)
      require(widened_apart(ops, index0, last, g.width() - 1, loc));
    // An asynchronous copy needs both of its addresses aligned to its bytes on every target.
    const bool copy = g.members[0].kind == Access::Copy;
    if (target_.vector_access_needs_vector_alignment || copy) {
      const int64_t bytes = g.width() * ir::dtype_bytes(g.members[0].dtype);
      for (size_t i = 0; i < proofs.aligned.size(); ++i)
        if (!proofs.aligned[i])
          require(emit(ops, OpKind::IsAligned, {first.operands[i]}, ir::Type::scalar(ir::DType::i1),
                       {{"bytes", bytes}}, loc));
    }
    return guard;
  }

  // Whether every member's mask equals the first's: the same conjuncts, or bounds x + d < n
  // (or >=) with 0 <= d < width, x and n multiples of the width (x < n then decides them all).
  // A copy of such a group is one predicated copy, and a store one guarded store, without a
  // fallback.
  bool uniform_masks(const ir::Block& block, const Group& g) {
    const auto leaves = [&](const Access& a) {
      const Op& op = block.ops[a.position];
      return op.operands.size() > 2 ? conjuncts(*index_, op.operands[2]) : std::vector<ValueId>{};
    };
    const std::vector<ValueId> first = leaves(g.members[0]);
    for (const Access& a : g.members) {
      const std::vector<ValueId> other = leaves(a);
      if (other.size() != first.size()) return false;
      for (size_t i = 0; i < first.size(); ++i)
        if (!same_over_group(first[i], other[i], g.width())) return false;
    }
    return true;
  }

  bool same_over_group(ValueId a, ValueId b, int64_t width) {
    if (a == b) return true;
    for (int side = 0; side < 2; ++side) {
      const std::optional<Bound> ba = bound_of(k_, *index_, a, side);
      const std::optional<Bound> bb = bound_of(k_, *index_, b, side);
      if (!ba || !bb || (ba->pred != "lt" && ba->pred != "ge") || bb->pred != ba->pred) continue;
      const std::optional<int64_t> d = bound_offset(*index_, *ba, *bb);
      if (d && *d == 0) return true;  // one comparison computed twice
      if (d && *d > 0 && *d < width && decides_group(*ba, width, *divisibility_)) return true;
    }
    return false;
  }

  // The group's packed access, defining the loads' original results through extracts; a copy
  // copies zeros where `pred` (if any) is false.
  void packed(std::vector<Op>& ops, const ir::Block& block, const Group& g,
              const std::vector<ValueId>& results, ValueId pred = ir::kNoValue) {
    const Op& first = block.ops[g.members[0].position];
    const ir::DType dtype = g.members[0].dtype;
    if (g.members[0].kind == Access::Copy) {
      std::vector<ValueId> operands = {first.operands[0], first.operands[1]};
      if (pred != ir::kNoValue) operands.push_back(pred);
      ops.push_back(Op{OpKind::AsyncCopy,
                       std::move(operands),
                       {},
                       {{"elements", int64_t{g.width()}}},
                       {},
                       first.loc});
      return;
    }
    if (!g.members[0].load) {
      std::vector<ValueId> operands = {first.operands[0]};
      for (const Access& a : g.members) operands.push_back(block.ops[a.position].operands[1]);
      ops.push_back(
          Op{OpKind::PackedStore, std::move(operands), {}, g.members[0].eviction, {}, first.loc});
      return;
    }
    const ValueId vector =
        emit(ops, OpKind::PackedLoad, {first.operands[0]}, ir::Type::vector(dtype, g.width()),
             g.members[0].eviction, first.loc);
    for (int i = 0; i < g.width(); ++i)
      ops.push_back(
          Op{OpKind::Extract, {vector}, {results[i]}, {{"index", int64_t{i}}}, {}, first.loc});
  }

  void rewrite(ir::Block& block, const Group& g) {
    const bool load = g.members[0].load;
    (load                                ? groups_.loads
     : g.members[0].kind == Access::Copy ? groups_.copies
                                         : groups_.stores) += 1;
    const std::set<ValueId> tainted = dependents(block, g);
    const MaskTerms terms = guard_terms(block, g);
    const bool store = !load && g.members[0].kind != Access::Copy;
    const bool uniform = !load && uniform_masks(block, g);
    const Proofs proofs = prove(block, g, terms);
    size_t first = block.ops.size(), last = 0;
    for (const Access& a : g.members) {
      first = std::min(first, a.position);
      last = std::max(last, a.position);
    }
    std::vector<Op> out(std::make_move_iterator(block.ops.begin()),
                        std::make_move_iterator(block.ops.begin() + first));
    std::vector<Op> after;
    for (size_t i : between(g)) {
      bool reads = false;
      for (ValueId v : block.ops[i].operands) reads |= tainted.count(v) != 0;
      (reads ? after : out).push_back(std::move(block.ops[i]));
    }
    const SourceLocation loc = block.ops[g.members[0].position].loc;
    const Guard tested = guard(out, block.ops[g.members[0].position], g, terms, proofs);
    const ValueId cond = tested.cond;
    std::vector<ValueId> results(g.width(), ir::kNoValue);
    for (int i = 0; i < g.width(); ++i)
      if (load) results[i] = block.ops[g.members[i].position].results[0];
    if (cond == ir::kNoValue) {
      packed(out, block, g, results);
    } else if (uniform && tested.masks_only && !store) {
      // The masks are all true or all false, as the first member's is: one copy of the group,
      // zeros where it is false.
      packed(out, block, g, results, block.ops[g.members[0].position].operands[2]);
    } else if (uniform && tested.masks_only) {
      // The same of a store: the group's store where the first member's mask holds, nothing
      // where it does not (no member would store).
      Op branch{OpKind::If, {block.ops[g.members[0].position].operands[2]}, {}, {}, {}, loc};
      ir::Block then_block, else_block;
      packed(then_block.ops, block, g, results);
      then_block.ops.push_back(Op{OpKind::Yield, {}, {}, {}, {}, loc});
      else_block.ops.push_back(Op{OpKind::Yield, {}, {}, {}, {}, loc});
      branch.regions.push_back(std::move(then_block));
      branch.regions.push_back(std::move(else_block));
      out.push_back(std::move(branch));
    } else {
      // if (cond) { packed access } else { the scalar accesses, each with its own mask }. Where
      // the target joins vectors, a load's branches yield the whole vector (the fallback packs
      // its scalars) and the extracts follow the join; otherwise each branch yields the elements.
      const bool joined = load && target_.grouped_load_joins_vector;
      Op branch{OpKind::If, {cond}, {}, {}, {}, loc};
      ir::Block then_block, else_block;
      Op then_yield{OpKind::Yield, {}, {}, {}, {}, loc};
      Op else_yield{OpKind::Yield, {}, {}, {}, {}, loc};
      const ir::Type vector = ir::Type::vector(g.members[0].dtype, g.width());
      if (joined) {
        then_yield.operands.push_back(emit(then_block.ops, OpKind::PackedLoad,
                                           {block.ops[g.members[0].position].operands[0]}, vector,
                                           g.members[0].eviction, loc));
      } else {
        // A load's packed branch yields its own extracts; a store's yields nothing.
        for (int i = 0; i < g.width() && load; ++i)
          then_yield.operands.push_back(k_.new_value(k_.type(results[i])));
        packed(then_block.ops, block, g, then_yield.operands);
      }
      std::vector<ValueId> scalars;
      for (int i = 0; i < g.width(); ++i) {
        Op scalar = std::move(block.ops[g.members[i].position]);
        if (load) {
          scalar.results[0] = k_.new_value(k_.type(results[i]));
          scalars.push_back(scalar.results[0]);
        }
        else_block.ops.push_back(std::move(scalar));
      }
      if (joined) {
        else_yield.operands.push_back(
            emit(else_block.ops, OpKind::Pack, std::move(scalars), vector, {}, loc));
        branch.results.push_back(k_.new_value(vector));
      } else if (load) {
        else_yield.operands = std::move(scalars);
        branch.results = results;
      }
      then_block.ops.push_back(std::move(then_yield));
      else_block.ops.push_back(std::move(else_yield));
      branch.regions.push_back(std::move(then_block));
      branch.regions.push_back(std::move(else_block));
      const ValueId joined_vector = joined ? branch.results[0] : ir::kNoValue;
      out.push_back(std::move(branch));
      for (int i = 0; i < g.width() && joined; ++i)
        out.push_back(
            Op{OpKind::Extract, {joined_vector}, {results[i]}, {{"index", int64_t{i}}}, {}, loc});
    }
    for (Op& op : after) out.push_back(std::move(op));
    for (size_t i = last + 1; i < block.ops.size(); ++i) out.push_back(std::move(block.ops[i]));
    block.ops = std::move(out);
  }

  ir::Kernel& k_;
  const target::Target& target_;
  VectorGroups& groups_;
  std::unique_ptr<IndexAnalysis> index_;
  std::unique_ptr<KnownDivisibility> divisibility_;
};

}  // namespace

bool groupable_dtype(ir::DType t) {
  return t == ir::DType::f16 || t == ir::DType::bf16 || t == ir::DType::f32;
}

int group_width(const target::Target& target, ir::DType t) {
  if (!groupable_dtype(t)) return 0;
  int width = kMinWidth;
  while (2 * width <= target.max_vector_elements &&
         2 * width * ir::dtype_bytes(t) <= target.max_vector_bytes)
    width *= 2;
  const bool fits =
      width <= target.max_vector_elements && width * ir::dtype_bytes(t) <= target.max_vector_bytes;
  return fits ? width : 0;
}

ir::PassResult group_vector_accesses(ir::Kernel k, const target::Target& target,
                                     VectorGroups& groups) {
  if (k.dialect != ir::Dialect::Metal)
    throw UserError("group_vector_accesses: kernel '" + k.name + "' is not Metal IR");
  Grouper grouper(k, target, groups);
  const bool changed = grouper.run(k.body);
  return {std::move(k), changed};
}

}  // namespace metile::lower
