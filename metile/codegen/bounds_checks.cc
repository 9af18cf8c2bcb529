// The host target's bounds checks (docs/host_emulator.md, "Out-of-bounds detection"): before
// each device access, a compare of its bytes with the extent of the buffer its pointer comes
// from, so that no read or write outside a buffer goes unreported, however close to the end
// (inside the guard pages' slack) or far beyond it (in other mapped memory).
#include <algorithm>

#include "metile/codegen/c_emitter.h"

namespace metile::codegen {

namespace {

using K = ir::OpKind;

// The root of a pointer made from an integer (Triton's int_to_ptr): no parameter bounds it,
// so its accesses are checked against every live buffer (msl/bounds.h, in_some_buffer).
constexpr size_t kMadeFromInteger = static_cast<size_t>(-1);

// The buffer parameters (indices into k.params) each device pointer may point into: reached
// from a parameter through ptr_add, select, loop-carried values and if or while results.
// Grows to a fixed point because a loop body may feed a carried pointer before the loop's
// results are seen.
std::map<ir::ValueId, std::set<size_t>> pointer_roots(const ir::Kernel& k) {
  std::map<ir::ValueId, std::set<size_t>> roots;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.type(k.params[i].value).pointer) roots[k.params[i].value].insert(i);
  bool changed = true;
  auto join = [&](ir::ValueId into, ir::ValueId from) {
    const auto it = roots.find(from);
    if (it == roots.end() || !k.type(into).pointer) return;
    const std::set<size_t> add = it->second;  // roots[into] may rehash `it`'s node: copy
    for (size_t r : add) changed = roots[into].insert(r).second || changed;
  };
  while (changed) {
    changed = false;
    ir::walk(k.body, [&](const ir::Op& op) {
      switch (op.kind) {
        case K::PtrAdd:
          return join(op.results[0], op.operands[0]);
        case K::Cast:
          if (k.type(op.results[0]).pointer)
            changed = roots[op.results[0]].insert(kMadeFromInteger).second || changed;
          return;
        case K::Select:
          join(op.results[0], op.operands[1]);
          return join(op.results[0], op.operands[2]);
        case K::For: {
          const ir::Block& body = op.regions.at(0);
          const ir::Op& yield = body.ops.back();
          for (size_t i = 0; i < op.results.size(); ++i) {
            join(body.args[1 + i], op.operands[3 + i]);
            join(body.args[1 + i], yield.operands[i]);
            join(op.results[i], body.args[1 + i]);
          }
          return;
        }
        case K::While: {
          for (size_t i = 0; i < op.results.size(); ++i) {
            const std::array<ir::ValueId, 6> group = ir::while_carried(op, i);
            for (ir::ValueId a : group)
              for (ir::ValueId b : group) join(a, b);
          }
          return;
        }
        case K::If:
          for (const ir::Block& region : op.regions)
            for (size_t i = 0; i < op.results.size(); ++i)
              join(op.results[i], region.ops.back().operands[i]);
          return;
        default:
          return;
      }
    });
  }
  return roots;
}

// The bytes one access of a value of type t moves (a 3-wide vector is 4 wide in MSL).
int64_t access_bytes(const ir::Type& t) {
  const int64_t width = t.is_vector() ? t.shape.at(0) : 1;
  return ir::dtype_bytes(t.dtype) * (width == 3 ? 4 : width);
}

}  // namespace

void CEmitter::enable_bounds_checks() {
  bounds_checked_ = true;
  pointer_roots_ = pointer_roots(kernel_);
}

void CEmitter::declare_extents() {
  if (!bounds_checked_) return;
  for (size_t i = 0; i < kernel_.params.size(); ++i)
    if (kernel_.type(kernel_.params[i].value).pointer)
      line("const ulong metile_extent" + std::to_string(i) + " = metal::detail::buffer_extent(" +
           std::to_string(i) + "u);");
}

std::vector<CEmitter::Access> CEmitter::accesses_of(const ir::Op& op) const {
  if (!bounds_checked_) return {};
  const auto& operands = op.operands;
  switch (op.kind) {
    case K::Load:
      return {{operands[0], "", access_bytes(type(op.results[0])), false,
               operands.size() == 3 ? operands[1] : ir::kNoValue}};
    case K::Store:
      return {{operands[0], "", access_bytes(type(operands[1])), true,
               operands.size() == 3 ? operands[2] : ir::kNoValue}};
    case K::AtomicRmw:
      return {{operands[0], "", access_bytes(type(op.results[0])), true,
               operands.size() == 3 ? operands[2] : ir::kNoValue}};
    case K::AtomicCas:
      return {{operands[0], "", access_bytes(type(op.results[0])), true, ir::kNoValue}};
    case K::PackedLoad:
      return {{operands[0], "", access_bytes(type(op.results[0])), false, ir::kNoValue}};
    case K::PackedStore:
      return {{operands[0], "",
               ir::dtype_bytes(type(operands[0]).dtype) * int64_t(operands.size() - 1), true,
               ir::kNoValue}};
    case K::MatrixLoad:
    case K::MatrixStore: {
      // The four corners of the 8x8 window p[offset + r * stride + c] (or transposed): every
      // element lies between two of them, whatever the stride's sign.
      const bool store = op.kind == K::MatrixStore;
      const ir::ValueId ptr = operands[store ? 1 : 0];
      const std::string offset = name(operands[store ? 2 : 1]),
                        stride = name(operands[store ? 3 : 2]);
      const int64_t bytes = ir::dtype_bytes(type(ptr).dtype);
      std::vector<Access> corners;
      for (const std::string& corner : {offset, offset + " + 7", offset + " + 7 * " + stride,
                                        offset + " + 7 * " + stride + " + 7"})
        corners.push_back({ptr, corner, bytes, store, ir::kNoValue});
      return corners;
    }
    default:
      return {};
  }
}

std::string CEmitter::in_bounds(const Access& a) const {
  const auto it = pointer_roots_.find(a.ptr);
  if (it == pointer_roots_.end() || type(a.ptr).space == ir::AddressSpace::Threadgroup) return "";
  const std::string p =
      a.offset.empty() ? name(a.ptr) : "(" + name(a.ptr) + " + (" + a.offset + "))";
  std::string any;
  for (size_t root : it->second)
    any += std::string(any.empty() ? "" : " || ") +
           (root == kMadeFromInteger
                ? "metal::detail::in_some_buffer(" + p + ", " + std::to_string(a.bytes) + "u)"
                : "metal::detail::in_bounds(" + p + ", " + name(kernel_.params[root].value) +
                      ", metile_extent" + std::to_string(root) + ", " + std::to_string(a.bytes) +
                      "u)");
  return it->second.size() > 1 ? "(" + any + ")" : any;
}

void CEmitter::check_accesses(const ir::Op& op) {
  if (!bounds_checked_ || proven_in_bounds_.count(&op)) return;
  for (const Access& a : accesses_of(op)) {
    const std::string ok = in_bounds(a);
    if (ok.empty()) continue;
    const size_t root = *pointer_roots_.at(a.ptr).begin();
    const std::string p =
        a.offset.empty() ? name(a.ptr) : "(" + name(a.ptr) + " + (" + a.offset + "))";
    const std::string when = a.mask == ir::kNoValue ? "" : name(a.mask) + " && ";
    if (root == kMadeFromInteger) {
      line("if (" + when + "!" + ok + ") metal::detail::outside_every_buffer(" + p + ", " +
           std::to_string(a.bytes) + "u, " + (a.write ? "1" : "0") + ", __LINE__, " +
           report_thread_ + ");");
      continue;
    }
    line("if (" + when + "!" + ok + ") metal::detail::out_of_bounds(" + std::to_string(root) +
         "u, " + p + ", " + name(kernel_.params[root].value) + ", " + std::to_string(a.bytes) +
         "u, " + (a.write ? "1" : "0") + ", __LINE__, " + report_thread_ + ");");
  }
}

}  // namespace metile::codegen
