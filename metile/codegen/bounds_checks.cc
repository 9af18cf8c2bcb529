// Bounds checks: before each device access, a compare of its bytes with the extent of the
// buffer its pointer comes from (pointer_roots.h), so that no read or write outside a buffer
// goes unreported, however close to the end or far beyond it. Two forms:
// - the host target's, always on (docs/host_emulator.md, "Out-of-bounds detection"): the
//   helpers of runtime/host/msl/bounds.h abandon the threadgroup with the report;
// - recorded ones, under METILE_DEBUG=bounds (CUDA, codegen/cuda/cuda_bounds.h): a failed
//   check records the launch's first fault for the runtime to read, and the access goes to the
//   record's scratch bytes instead of outside its buffer.
#include <algorithm>

#include "metile/codegen/c_emitter.h"
#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/support/warnings.h"

namespace metile::codegen {

namespace {
using K = ir::OpKind;
}  // namespace

void CEmitter::enable_bounds_checks() {
  bounds_checked_ = true;
  pointer_roots_ = pointer_roots(kernel_);
}

void CEmitter::enable_recorded_bounds_checks(const target::Target& target) {
  if (!dialect_.declare_recorded_bounds_checks(prelude_))
    throw NotSupported("METILE_DEBUG=bounds: " + std::string(dialect_.table().language) +
                       " for target " + target.name +
                       " has no bounds checks; the host emulator (METILE_DEVICE=host) checks "
                       "every access of the same kernel");
  enable_bounds_checks();
  recorded_checks_ = true;
}

void CEmitter::declare_extents() {
  // Recorded checks receive the extents as hidden parameters (entry_wrapper.cc).
  if (!bounds_checked_ || recorded_checks_) return;
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
    case K::AsyncCopy:  // reads its source (a device pointer) where pred holds
      // Recorded checks only: the host target's synchronous copy is still left to its guard pages.
      if (!recorded_checks_) return {};
      return {{operands[1], "", ir::dtype_bytes(type(operands[1]).dtype) * op.int_attr("elements"),
               false, operands.size() == 3 ? operands[2] : ir::kNoValue}};
    case K::MatrixLoad:
    case K::MatrixStore: {
      // The four corners of the window p[offset + r * stride + c] (or transposed) of the
      // fragment's rows x columns: every element lies between two of them, whatever the
      // stride's sign.
      const bool store = op.kind == K::MatrixStore;
      const ir::ValueId ptr = operands[store ? 1 : 0];
      const std::string offset = name(operands[store ? 2 : 1]),
                        stride = name(operands[store ? 3 : 2]);
      const ir::Type& fragment = type(store ? operands[0] : op.results[0]);
      const bool transpose = op.int_attr_or("transpose", 0) != 0;
      const std::string along = std::to_string(
                            (transpose ? fragment.shape.at(0) : fragment.shape.at(1)) - 1),
                        across = std::to_string(
                            (transpose ? fragment.shape.at(1) : fragment.shape.at(0)) - 1);
      const int64_t bytes = ir::dtype_bytes(type(ptr).dtype);
      std::vector<Access> corners;
      for (const std::string& corner :
           {offset, offset + " + " + along, offset + " + " + across + " * " + stride,
            offset + " + " + across + " * " + stride + " + " + along})
        corners.push_back({ptr, corner, bytes, store, ir::kNoValue});
      return corners;
    }
    default:
      return {};
  }
}

std::string CEmitter::checked_address(const Access& a) const {
  return a.offset.empty() ? name(a.ptr) : "(" + name(a.ptr) + " + (" + a.offset + "))";
}

std::string CEmitter::in_bounds(const Access& a) const {
  const auto it = pointer_roots_.find(a.ptr);
  if (it == pointer_roots_.end() || type(a.ptr).space == ir::AddressSpace::Threadgroup) return "";
  // No parameter bounds a pointer made from an integer: the host checks it against every live
  // buffer (msl/bounds.h, in_some_buffer); a recorded check has no list of them.
  if (recorded_checks_ && it->second.count(kMadeFromInteger)) return "";
  const std::string p = checked_address(a);
  std::string any;
  for (size_t root : it->second) {
    const std::string extent = "metile_extent" + std::to_string(root);
    const std::string check =
        root == kMadeFromInteger
            ? "metal::detail::in_some_buffer(" + p + ", " + std::to_string(a.bytes) + "u)"
        : recorded_checks_
            ? cuda_bounds::in_bounds(p, name(kernel_.params[root].value), extent, a.bytes)
            : "metal::detail::in_bounds(" + p + ", " + name(kernel_.params[root].value) + ", " +
                  extent + ", " + std::to_string(a.bytes) + "u)";
    any += (any.empty() ? "" : " || ") + check;
  }
  return it->second.size() > 1 ? "(" + any + ")" : any;
}

void CEmitter::check_accesses(const ir::Op& op) {
  if (!bounds_checked_ || proven_in_bounds_.count(&op)) return;
  if (recorded_checks_) return record_failed_accesses(op);
  for (const Access& a : accesses_of(op)) {
    const std::string ok = in_bounds(a);
    if (ok.empty()) continue;
    const size_t root = *pointer_roots_.at(a.ptr).begin();
    const std::string p = checked_address(a);
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

// metile_ok<n> = the access is inside its buffer; where its mask holds and it is not, the
// fault is recorded. Then the op's pointer (and a matrix window's offset and stride) is
// redirected for the op's own lines: the record's scratch bytes when a check failed.
void CEmitter::record_failed_accesses(const ir::Op& op) {
  const std::vector<Access> accesses = accesses_of(op);
  if (accesses.empty()) return;
  const ir::ValueId ptr = accesses.front().ptr;
  if (in_bounds(accesses.front()).empty()) {
    if (type(ptr).space != ir::AddressSpace::Threadgroup)
      warn({"unchecked-access", kernel_.name, "made-from-integer",
            "METILE_DEBUG=bounds: kernel '" + kernel_.name + "' accesses memory through a " +
                "pointer made from an integer (" + std::string(ir::op_name(op.kind)) +
                (op.loc.known() ? " at " + op.loc.str() : std::string()) +
                "), which no buffer parameter bounds: that access is not checked"});
    return;
  }
  const std::string n = std::to_string(recorded_checks_emitted_++);
  std::string all;
  for (size_t k = 0; k < accesses.size(); ++k) {
    const Access& a = accesses[k];
    const std::string ok = "metile_ok" + n + (accesses.size() > 1 ? "_" + std::to_string(k) : "");
    line("const bool " + ok + " = " + in_bounds(a) + ";");
    const size_t root = *pointer_roots_.at(a.ptr).begin();
    const std::string when = a.mask == ir::kNoValue ? "" : name(a.mask) + " && ";
    line("if (" + when + "!" + ok + ") " +
         cuda_bounds::record_fault(root, checked_address(a), name(kernel_.params[root].value),
                                   a.bytes, a.write));
    all += (all.empty() ? "" : " && ") + ok;
  }
  const std::string checked = "metile_checked" + n;
  line(type_of(ptr) + " " + checked + " = " + all + " ? " + name(ptr) + " : " +
       cuda_bounds::scratch(type_of(ptr)) + ";");
  std::vector<std::pair<ir::ValueId, std::string>> redirects = {{ptr, checked}};
  // A failed matrix window reads one row of scratch: offset and stride 0.
  if (op.kind == K::MatrixLoad || op.kind == K::MatrixStore) {
    const size_t first = op.kind == K::MatrixStore ? 2 : 1;
    for (size_t i = first; i < first + 2; ++i)
      redirects.emplace_back(op.operands[i], "(" + all + " ? " + name(op.operands[i]) + " : 0)");
  }
  for (auto& [value, text] : redirects) {
    element_names_[value] = std::move(text);
    redirected_.push_back(value);
  }
}

void CEmitter::end_redirects() {
  for (ir::ValueId v : redirected_) element_names_.erase(v);
  redirected_.clear();
}

}  // namespace metile::codegen
