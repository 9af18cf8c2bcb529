#include "metile/transform/check_matrix_barriers.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>

#include "metile/ir/printer.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

// An inclusive range of integer values; nullopt where the analysis cannot bound a value.
struct Range {
  int64_t lo;
  int64_t hi;
};
using MaybeRange = std::optional<Range>;

constexpr int64_t kLimit = int64_t{1} << 40;  // larger bounds are treated as unknown

MaybeRange checked(int64_t lo, int64_t hi) {
  if (lo < -kLimit || hi > kLimit) return std::nullopt;
  return Range{lo, hi};
}

enum class Access { ScalarRead, ScalarWrite, MatrixRead, MatrixWrite };

const char* access_name(Access a) {
  switch (a) {
    case Access::ScalarRead:
      return "a scalar load";
    case Access::ScalarWrite:
      return "a scalar store";
    case Access::MatrixRead:
      return "a matrix load";
    case Access::MatrixWrite:
      return "a matrix store";
  }
  return "";
}

// The rule an earlier access and a later one of the same elements break without a barrier
// between them, or nullptr when their order needs none.
const char* hazard(Access earlier, Access later) {
  const bool later_writes = later == Access::ScalarWrite || later == Access::MatrixWrite;
  if (earlier == Access::ScalarWrite && later == Access::MatrixRead)
    return "a barrier must publish scalar writes before a matrix load reads them";
  if (earlier == Access::MatrixWrite && later == Access::ScalarRead)
    return "a barrier must publish a matrix store before scalar loads read it";
  if (earlier == Access::MatrixRead && later_writes)
    return "a barrier must finish the matrix load before the storage is overwritten";
  return nullptr;
}

struct Pending {
  const Op* op;
  Access access;
  ValueId allocation;
  MaybeRange elements;  // nullopt: the whole allocation
  bool previous_iteration = false;
};

class BarrierCheck {
 public:
  explicit BarrierCheck(const ir::Kernel& k) : k_(k), names_(ir::printed_value_names(k)) {}

  void run() {
    bool has_matrix = false;
    ir::walk(k_.body, [&](const Op& op) {
      has_matrix = has_matrix || op.kind == OpKind::MatrixLoad || op.kind == OpKind::MatrixStore;
    });
    if (!has_matrix) return;
    ir::walk(k_.body, [&](const Op& op) { define(op); });
    std::vector<Pending> pending;
    block(k_.body, pending);
  }

 private:
  // ---- value ranges (integers) and shared pointers (allocation + element range) ----------
  void define(const Op& op) {
    if (op.kind == OpKind::SharedAlloc) {
      pointers_[op.results[0]] = {op.results[0], Range{0, 0}};
      return;
    }
    if (op.kind == OpKind::For) {
      const ValueId index = op.regions[0].args[0];
      const MaybeRange start = range(op.operands[0]), end = range(op.operands[1]);
      if (start && end) ranges_[index] = checked(start->lo, std::max(start->lo, end->hi - 1));
      return;
    }
    if (op.results.size() != 1) return;
    const ValueId r = op.results[0];
    if (k_.type(r).pointer) return define_pointer(op, r);
    ranges_[r] = integer_range(op);
  }

  MaybeRange range(ValueId v) const {
    const auto found = ranges_.find(v);
    return found == ranges_.end() ? std::nullopt : found->second;
  }

  // Ops outside these lists (loads, reductions, bitwise ops, ...) bound nothing.
  MaybeRange integer_range(const Op& op) const {
    const OpKind kind = op.kind;
    auto is = [&](std::initializer_list<OpKind> kinds) {
      return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
    };
    if (kind == OpKind::Constant) {
      if (!ir::is_integer(k_.type(op.results[0]).dtype)) return std::nullopt;
      return checked(op.int_attr("value"), op.int_attr("value"));
    }
    if (is({OpKind::ThreadId, OpKind::ThreadIndex, OpKind::SimdLane, OpKind::SimdGroup,
            OpKind::ProgramId}))
      return checked(0, kLimit);
    if (kind == OpKind::Arange) return checked(op.int_attr("start"), op.int_attr("end") - 1);
    if (is({OpKind::Splat, OpKind::Broadcast, OpKind::ExpandDims, OpKind::Reshape, OpKind::Trans,
            OpKind::ConvertLayout}))
      return range(op.operands[0]);
    if (kind == OpKind::Cast) return widening(op) ? range(op.operands[0]) : std::nullopt;
    if (is({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::FloorDiv, OpKind::Div, OpKind::Rem,
            OpKind::Min, OpKind::Max}))
      return arithmetic(kind, range(op.operands[0]), range(op.operands[1]));
    return std::nullopt;
  }

  // An integer cast that keeps every value (a lossy one may wrap, so it bounds nothing).
  bool widening(const Op& op) const {
    const ir::DType from = k_.type(op.operands[0]).dtype, to = k_.type(op.results[0]).dtype;
    if (!ir::is_integer(from) || !ir::is_integer(to)) return false;
    return from == to || to == ir::DType::i64;
  }

  static MaybeRange arithmetic(OpKind kind, const MaybeRange& a, const MaybeRange& b) {
    if (!a || !b) return std::nullopt;
    if (kind == OpKind::Add) return checked(a->lo + b->lo, a->hi + b->hi);
    if (kind == OpKind::Sub) return checked(a->lo - b->hi, a->hi - b->lo);
    if (kind == OpKind::Mul) {
      const int64_t p[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
      return checked(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    if (kind == OpKind::Min) return checked(std::min(a->lo, b->lo), std::min(a->hi, b->hi));
    if (kind == OpKind::Max) return checked(std::max(a->lo, b->lo), std::max(a->hi, b->hi));
    // Division and remainder of a nonnegative value by a positive constant, where floor and
    // truncation agree.
    if (a->lo < 0 || b->lo != b->hi || b->lo <= 0) return std::nullopt;
    if (kind == OpKind::Rem) return a->hi < b->lo ? a : checked(0, b->lo - 1);
    return checked(a->lo / b->lo, a->hi / b->lo);  // FloorDiv, Div
  }

  struct Pointer {
    ValueId allocation;
    MaybeRange elements;  // the offsets from the allocation's start it may point at
  };

  void define_pointer(const Op& op, ValueId r) {
    if (k_.type(r).space != ir::AddressSpace::Threadgroup) return;
    const bool passes_through = op.kind == OpKind::Splat || op.kind == OpKind::Broadcast ||
                                op.kind == OpKind::ExpandDims || op.kind == OpKind::Reshape ||
                                op.kind == OpKind::Trans || op.kind == OpKind::ConvertLayout;
    if (op.kind == OpKind::PtrAdd) {
      const Pointer base = pointer(op, op.operands[0]);
      const MaybeRange offset = range(op.operands[1]);
      pointers_[r] = {base.allocation, base.elements && offset
                                           ? arithmetic(OpKind::Add, base.elements, offset)
                                           : std::nullopt};
    } else if (passes_through) {
      pointers_[r] = pointer(op, op.operands[0]);
    }
  }

  Pointer pointer(const Op& user, ValueId p) const {
    const auto found = pointers_.find(p);
    if (found == pointers_.end())
      throw NotSupported(std::string(ir::op_name(user.kind)) + ": in kernel '" + k_.name +
                             "', the shared pointer " + names_[p] +
                             " does not resolve to its metile.shared allocation through "
                             "pointer offsets; conditional or loop-carried shared pointers "
                             "are not supported with matrix fragments",
                         user.loc);
    return found->second;
  }

  // ---- accesses in program order -------------------------------------------------------
  std::optional<Pending> access_of(const Op& op) const {
    auto shared = [&](ValueId p) { return k_.type(p).space == ir::AddressSpace::Threadgroup; };
    if (op.kind == OpKind::Load && shared(op.operands[0])) {
      const Pointer p = pointer(op, op.operands[0]);
      return Pending{&op, Access::ScalarRead, p.allocation, p.elements};
    }
    if (op.kind == OpKind::Store && shared(op.operands[0])) {
      const Pointer p = pointer(op, op.operands[0]);
      return Pending{&op, Access::ScalarWrite, p.allocation, p.elements};
    }
    const bool load = op.kind == OpKind::MatrixLoad, store = op.kind == OpKind::MatrixStore;
    if (!load && !store) return std::nullopt;
    const size_t first = store ? 1 : 0;  // (m, p, offset, stride) or (p, offset, stride)
    if (!shared(op.operands[first])) return std::nullopt;
    const Pointer p = pointer(op, op.operands[first]);
    const MaybeRange offset = range(op.operands[first + 1]), stride = range(op.operands[first + 2]);
    MaybeRange tile;
    if (p.elements && offset && stride && stride->lo >= 0) {
      const MaybeRange start = arithmetic(OpKind::Add, p.elements, offset);
      if (start) tile = checked(start->lo, start->hi + 7 * stride->hi + 7);
    }
    return Pending{&op, load ? Access::MatrixRead : Access::MatrixWrite, p.allocation, tile};
  }

  void block(const ir::Block& b, std::vector<Pending>& pending) {
    for (const Op& op : b.ops) {
      if (op.kind == OpKind::Barrier) {
        const std::string& mem = op.str_attr("mem");
        if (op.str_attr("scope") == "threadgroup" && (mem == "threadgroup" || mem == "all"))
          pending.clear();
        continue;
      }
      if (op.kind == OpKind::For) {
        loop(op, pending);
        continue;
      }
      if (op.kind == OpKind::If) {
        std::vector<Pending> after;
        for (const ir::Block& region : op.regions) {
          std::vector<Pending> branch = pending;
          block(region, branch);
          merge(after, branch);
        }
        if (op.regions.size() < 2) merge(after, pending);
        pending = std::move(after);
        continue;
      }
      if (const std::optional<Pending> a = access_of(op)) {
        check(*a, pending);
        if (std::none_of(pending.begin(), pending.end(),
                         [&](const Pending& p) { return p.op == a->op; }))
          pending.push_back(*a);
      }
    }
  }

  // The body runs once from the state before the loop, then again from the state its end
  // leaves (the backedge); the loop leaves either state (it may run no iteration).
  void loop(const Op& op, std::vector<Pending>& pending) {
    std::vector<Pending> first = pending;
    block(op.regions[0], first);
    std::vector<Pending> second = first;
    for (Pending& p : second) p.previous_iteration = true;
    block(op.regions[0], second);
    for (Pending& p : second) p.previous_iteration = false;
    merge(pending, second);
  }

  static void merge(std::vector<Pending>& into, const std::vector<Pending>& from) {
    for (const Pending& p : from)
      if (std::none_of(into.begin(), into.end(),
                       [&](const Pending& q) { return q.op == p.op && q.access == p.access; }))
        into.push_back(p);
  }

  static bool overlap(const MaybeRange& a, const MaybeRange& b) {
    return !a || !b || (a->lo <= b->hi && b->lo <= a->hi);
  }

  void check(const Pending& later, const std::vector<Pending>& pending) const {
    for (const Pending& earlier : pending) {
      if (earlier.allocation != later.allocation) continue;
      const char* rule = hazard(earlier.access, later.access);
      if (!rule || !overlap(earlier.elements, later.elements)) continue;
      throw UserError(
          std::string(ir::op_name(later.op->kind)) + ": in kernel '" + k_.name + "', " +
              access_name(later.access) + " of shared allocation " + describe(later.allocation) +
              elements(later.elements) + " follows " + access_name(earlier.access) +
              elements(earlier.elements) + where(*earlier.op) +
              (earlier.previous_iteration ? " in the previous loop iteration (the backedge)" : "") +
              " with no metile.barrier() between them; " + rule,
          later.op->loc);
    }
  }

  std::string describe(ValueId allocation) const {
    const ir::Type& t = k_.type(allocation);
    for (const Op* op : allocations())
      if (op->results[0] == allocation)
        return names_[allocation] + " (" + std::to_string(op->int_attr("size")) + " x " +
               std::string(ir::dtype_name(t.dtype)) + where(*op) + ")";
    return names_[allocation];
  }

  std::vector<const Op*> allocations() const {
    std::vector<const Op*> found;
    ir::walk(k_.body, [&](const Op& op) {
      if (op.kind == OpKind::SharedAlloc) found.push_back(&op);
    });
    return found;
  }

  static std::string elements(const MaybeRange& r) {
    if (!r) return " (any element)";
    return " (elements " + std::to_string(r->lo) + ".." + std::to_string(r->hi) + ")";
  }

  static std::string where(const Op& op) { return op.loc.known() ? " at " + op.loc.str() : ""; }

  const ir::Kernel& k_;
  const std::vector<std::string> names_;
  std::map<ValueId, MaybeRange> ranges_;
  std::map<ValueId, Pointer> pointers_;
};

}  // namespace

void check_matrix_barriers(const ir::Kernel& kernel) {
  BarrierCheck(kernel).run();
}

}  // namespace metile::transform
