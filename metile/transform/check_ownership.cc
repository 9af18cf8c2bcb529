#include "metile/transform/check_ownership.h"

#include "metile/ir/printer.h"
#include "metile/lower/uniformity.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Owner;
using ir::ThreadLayout;
using ir::ValueId;

// The geometry of seed 004's explicit layouts: one to 32 SIMD groups of 32 threads, 1 to 32
// register slots per thread. The ceiling is the IR's; a target may launch fewer threads.
constexpr int64_t kMinThreads = 32;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxElementsPerThread = 32;
constexpr int64_t kMaxElements = 32768;

const ThreadLayout* explicit_layout_of(const Op& op) {
  if (op.kind == OpKind::Arange || op.kind == OpKind::ConvertLayout)
    return op.layout_attr("layout");
  return nullptr;
}

class OwnershipCheck {
 public:
  explicit OwnershipCheck(const ir::Kernel& k)
      : k_(k),
        names_(ir::printed_value_names(k)),
        uniform_(lower::analyze_uniformity(k)),
        map_(k.types.size()) {}

  ir::OwnershipMap run() {
    if (k_.dialect != ir::Dialect::Tile)
      throw UserError("check_ownership: kernel '" + k_.name + "' is not Tile IR");
    find_geometry(k_.body);
    if (geometry_) check_num_threads();
    block(k_.body);
    if (geometry_) resolve_identities();
    return std::move(map_);
  }

 private:
  // ---- geometry ----------------------------------------------------------------------
  // The first explicit layout fixes the kernel's geometry; every other one must agree.
  void find_geometry(const ir::Block& b) {
    ir::walk(b, [&](const Op& op) {
      const ThreadLayout* layout = explicit_layout_of(op);
      if (!layout) return;
      check_limits(op, *layout);
      if (!geometry_) {
        geometry_ = *layout;
        geometry_op_ = &op;
        map_.set_geometry({layout->size(), layout->thread_count(), layout->elements_per_thread()});
        return;
      }
      if (layout->size() != geometry_->size())
        fail(op, "tile sizes must agree within a kernel: " + layout->str() + " owns " +
                     std::to_string(layout->size()) + " elements but " + first_layout() + " owns " +
                     std::to_string(geometry_->size()));
      if (layout->elements_per_thread() != geometry_->elements_per_thread())
        fail(op, "register counts must agree within a kernel: " + layout->str() + " has " +
                     std::to_string(layout->elements_per_thread()) + " elements per thread but " +
                     first_layout() + " has " + std::to_string(geometry_->elements_per_thread()));
    });
  }

  void check_limits(const Op& op, const ThreadLayout& layout) {
    const std::string what = "the layout " + layout.str();
    if (layout.size() > kMaxElements)
      fail(op, what + " owns " + std::to_string(layout.size()) + " elements; at most " +
                   std::to_string(kMaxElements) + " are supported");
    if (layout.elements_per_thread() > kMaxElementsPerThread)
      fail(op, what + " has " + std::to_string(layout.elements_per_thread()) +
                   " elements per thread; at most " + std::to_string(kMaxElementsPerThread) +
                   " are supported");
    if (layout.thread_count() < kMinThreads || layout.thread_count() > kMaxThreads)
      fail(op, what + " runs on " + std::to_string(layout.thread_count()) +
                   " threads; explicit layouts need " + std::to_string(kMinThreads) + " to " +
                   std::to_string(kMaxThreads) + " (one to 32 SIMD groups)");
  }

  // The layouts fix the threads per threadgroup; a requested count may not remap them.
  void check_num_threads() const {
    auto it = k_.attrs.find("num_threads");
    const int64_t* threads = it == k_.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
    if (threads && *threads != geometry_->thread_count())
      throw UserError("check_ownership: kernel '" + k_.name +
                          "' asks for num_threads = " + std::to_string(*threads) + " but " +
                          first_layout() + " runs on " + std::to_string(geometry_->thread_count()) +
                          " threads; ownership is never remapped",
                      geometry_op_->loc);
  }

  std::string first_layout() const {
    return geometry_->str() + " (" + std::string(ir::op_name(geometry_op_->kind)) +
           (geometry_op_->loc.known() ? " at " + geometry_op_->loc.str() : "") + ")";
  }

  // ---- the walk ------------------------------------------------------------------------
  void block(const ir::Block& b) {
    for (const Op& op : b.ops) this->op(op);
  }

  void op(const Op& op) {
    if (geometry_) {
      check_subset(op);
      for (ValueId r : op.results) check_tile_shape(op, r);
    }
    switch (op.kind) {
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::Rem:
      case OpKind::FloorDiv:
      case OpKind::Min:
      case OpKind::Max:
      case OpKind::And:
      case OpKind::Or:
      case OpKind::Xor:
      case OpKind::Shl:
      case OpKind::Shr:
      case OpKind::Cmp:
      case OpKind::Select:
      case OpKind::Cast:
      case OpKind::Neg:
      case OpKind::Abs:
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Log:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Tanh:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Floor:
      case OpKind::Ceil:
      case OpKind::InlineAsm:
      case OpKind::PtrAdd:
      case OpKind::Load:
      case OpKind::Store:
      case OpKind::AtomicRmw:
      case OpKind::AtomicCas:
      case OpKind::TensorLoad:
      case OpKind::TensorStore:
      case OpKind::DeviceAssert:
      case OpKind::DevicePrint:
        return combine(op);
      case OpKind::Arange:
        return set_results(op, op.has_attr("layout") ? Owner::Explicit : Owner::Implicit,
                           explicit_layout_of(op));
      case OpKind::ConvertLayout:  // its operand passed check_conversion
        return set_results(op, Owner::Explicit, explicit_layout_of(op));
      case OpKind::Splat:
        return set_results(op, uniform_[op.operands[0]] ? Owner::Uniform : Owner::Unowned);
      // 2-D tiles: a kernel with explicit layouts has none (check_tile_shape).
      case OpKind::ExpandDims:
      case OpKind::Broadcast:
      case OpKind::Reshape:
      case OpKind::Trans:
      case OpKind::ReduceAxis:
      case OpKind::Scan:
      case OpKind::XorPermute:
        return set_results(op, map_.owner(op.operands[0]));
      // Each thread computes the accumulator elements it owns.
      case OpKind::Dot:
        return set_results(op, map_.owner(op.operands[2]));
      // Their results are scalars, pointers, descriptors or fragments (which no thread owns).
      case OpKind::MatrixFill:
      case OpKind::MatrixLoad:
      case OpKind::MatrixStore:
      case OpKind::DeviceTileLoad:
      case OpKind::DeviceTileStore:
      case OpKind::Constant:
      case OpKind::ProgramId:
      case OpKind::NumPrograms:
      case OpKind::ThreadId:
      case OpKind::MakeTensor:
      case OpKind::SharedAlloc:
      case OpKind::Reduce:
      case OpKind::SimdShuffle:
      case OpKind::SimdShuffleXor:
      case OpKind::SimdShuffleDown:
      case OpKind::SimdBroadcast:
      case OpKind::SimdSum:
      case OpKind::SimdMax:
      case OpKind::SimdMin:
      case OpKind::Barrier:
      case OpKind::Yield:
        return;
      // Only kernels without explicit layouts get here (check_subset).
      case OpKind::For:
      case OpKind::If:
      case OpKind::While:
      case OpKind::DescriptorMatmul:  // its epilogue region works on the accumulator tile
      case OpKind::ReduceCombine:     // its combine region works on scalars
        for (const ir::Block& region : op.regions) {
          for (ValueId a : region.args) set_tile(a, Owner::Implicit);
          block(region);
        }
        return set_results(op, Owner::Implicit);
      case OpKind::ThreadIndex:
      case OpKind::ThreadgroupIndex:
      case OpKind::ThreadgroupCount:
      case OpKind::SimdLane:
      case OpKind::SimdGroup:
      case OpKind::ThreadgroupBuffer:
      case OpKind::PackedLoad:
      case OpKind::PackedStore:
      case OpKind::Extract:
      case OpKind::Pack:
      case OpKind::IsAligned:
      case OpKind::MatrixMma:
      case OpKind::AssertTrue:
      case OpKind::Print:
      case OpKind::MppMatmul2d:
      case OpKind::MbarrierInit:
      case OpKind::MbarrierFence:
      case OpKind::MbarrierArrive:
      case OpKind::MbarrierArriveExpectTx:
      case OpKind::MbarrierWait:
      case OpKind::TmaLoad:
      case OpKind::WgmmaFence:
      case OpKind::WgmmaMma:
      case OpKind::WgmmaCommit:
      case OpKind::WgmmaWait:
      case OpKind::SetMaxNReg:
      case OpKind::AsyncCopy:
      case OpKind::AsyncCopyCommit:
      case OpKind::AsyncCopyWait:
      case OpKind::AsyncProxyFence:
        throw InternalError("check_ownership: Metal IR op " + std::string(ir::op_name(op.kind)) +
                            " in Tile IR kernel " + k_.name);
    }
  }

  void set_tile(ValueId v, Owner owner, const ThreadLayout* layout = nullptr) {
    if (!k_.type(v).is_tile()) return;
    map_.set(v, owner, layout ? std::optional<ThreadLayout>(*layout) : std::nullopt);
  }

  void set_results(const Op& op, Owner owner, const ThreadLayout* layout = nullptr) {
    for (ValueId r : op.results) set_tile(r, owner, layout);
  }

  // The owner the tile operands share; a uniform splat takes any owner.
  void combine(const Op& op) {
    ValueId explicit_value = ir::kNoValue, implicit_value = ir::kNoValue;
    ValueId unowned_value = ir::kNoValue;
    for (ValueId v : op.operands) {
      if (!k_.type(v).is_tile()) continue;
      switch (map_.owner(v)) {
        case Owner::Explicit:
          if (explicit_value != ir::kNoValue && *map_.layout(v) != *map_.layout(explicit_value))
            fail(op,
                 different_owners(explicit_value, layout_text(explicit_value), v, layout_text(v)));
          explicit_value = v;
          break;
        case Owner::Implicit:
          implicit_value = v;
          break;
        case Owner::Unowned:
          unowned_value = v;
          break;
        case Owner::Uniform:
        case Owner::None:
          break;
      }
    }
    if (explicit_value == ir::kNoValue) {
      const Owner owner = unowned_value != ir::kNoValue    ? Owner::Unowned
                          : implicit_value != ir::kNoValue ? Owner::Implicit
                                                           : Owner::Uniform;
      return set_results(op, owner);
    }
    const ThreadLayout& layout = *map_.layout(explicit_value);
    if (unowned_value != ir::kNoValue)
      fail(op, unowned(unowned_value) + "; it cannot be combined with " + describe(explicit_value) +
                   ", owned by " + layout.str() +
                   ". Derive per-thread values from metile.arange(..., layout=) instead");
    if (implicit_value != ir::kNoValue && layout != implicit_identity())
      fail(op, different_owners(explicit_value, layout.str(), implicit_value,
                                "the implicit layout " + implicit_identity().str()));
    set_results(op, Owner::Explicit, &layout);
  }

  // ---- the subset explicit layouts support ---------------------------------------------
  void check_subset(const Op& op) {
    const std::string in_kernel = " in a kernel with explicit thread layouts";
    const ir::TypeRule rule = ir::op_info(op.kind).rule;
    if (op.kind == OpKind::ReduceCombine)
      not_supported(
          op, "metile.reduce with a combine_fn is not supported" + in_kernel +
                  "; only sums reduce tiles there (metile.sum), or drop the explicit layouts");
    if (!op.regions.empty())
      not_supported(op, "loops and branches are not supported" + in_kernel +
                            " (it must be a straight-line program)");
    if (rule == ir::TypeRule::SimdCollective)
      not_supported(op, "raw SIMD-lane collectives are not supported" + in_kernel +
                            ": lane numbers do not follow the layouts");
    if (op.kind == OpKind::SharedAlloc)
      not_supported(op, "threadgroup (shared) allocations are not supported" + in_kernel +
                            "; convert_layout allocates the scratch it needs");
    if (op.kind == OpKind::Reduce) check_reduce(op);
    if (op.kind == OpKind::ConvertLayout) check_conversion(op);
  }

  void check_reduce(const Op& op) {
    const std::string& kind = op.str_attr("kind");
    const ir::DType dtype = k_.type(op.operands[0]).dtype;
    if (kind != "sum")
      not_supported(op,
                    "only sums reduce tiles in a kernel with explicit thread layouts, got " + kind);
    if (dtype != ir::DType::f32)
      not_supported(op, "sums in a kernel with explicit thread layouts accumulate in f32, got " +
                            std::string(ir::dtype_name(dtype)) + "; cast to f32 before summing");
  }

  void check_conversion(const Op& op) {
    if (map_.owner(op.operands[0]) == Owner::Unowned)
      fail(op, unowned(op.operands[0]) + "; it cannot be converted");
    const ir::Type& t = k_.type(op.operands[0]);
    using ir::DType;
    if (t.pointer)
      not_supported(op, "tiles of pointers do not move between threads; convert the offsets");
    if (t.dtype != DType::f16 && t.dtype != DType::f32 && t.dtype != DType::i32 &&
        t.dtype != DType::u32 && t.dtype != DType::i1)
      not_supported(op, "converts f16, f32, i32, u32 and i1 tiles, got " +
                            std::string(ir::dtype_name(t.dtype)));
  }

  void check_tile_shape(const Op& op, ValueId v) {
    const ir::Type& t = k_.type(v);
    if (!t.is_tile()) return;
    if (t.shape.size() != 1)
      not_supported(op, "explicit thread layouts own one-dimensional tiles, but " + describe(v) +
                            " is " + std::to_string(t.shape.size()) + "-D");
    if (t.shape[0] != geometry_->size())
      fail(op, "tile sizes must agree within a kernel: " + describe(v) + " has " +
                   std::to_string(t.shape[0]) + " elements but " + first_layout() + " owns " +
                   std::to_string(geometry_->size()));
  }

  // ---- the result ------------------------------------------------------------------------
  // With explicit layouts, implicit and uniform tiles hold the identity of the geometry.
  void resolve_identities() {
    const ThreadLayout identity = implicit_identity();
    for (size_t v = 0; v < k_.types.size(); ++v) {
      const Owner owner = map_.owner(static_cast<ValueId>(v));
      if (owner == Owner::Implicit || owner == Owner::Uniform)
        map_.set(static_cast<ValueId>(v), owner, identity);
    }
  }

  ThreadLayout implicit_identity() const {
    return ThreadLayout::identity(geometry_->size(), geometry_->elements_per_thread());
  }

  // ---- messages --------------------------------------------------------------------------
  std::string describe(ValueId v) const { return names_[v] + " (" + k_.type(v).str() + ")"; }

  std::string layout_text(ValueId v) const { return map_.layout(v)->str(); }

  std::string different_owners(ValueId a, const std::string& a_layout, ValueId b,
                               const std::string& b_layout) const {
    return describe(a) + " is owned by " + a_layout + " but " + describe(b) + " by " + b_layout +
           "; values with different owners combine only through convert_layout";
  }

  std::string unowned(ValueId v) const {
    return describe(v) +
           " was built from a per-thread scalar (thread_id, a SIMD collective or a value computed "
           "from them), which has no owner";
  }

  [[noreturn]] void fail(const Op& op, const std::string& rule) const {
    throw UserError(std::string(ir::op_name(op.kind)) + ": " + rule, op.loc);
  }
  [[noreturn]] void not_supported(const Op& op, const std::string& why) const {
    throw NotSupported(std::string(ir::op_name(op.kind)) + ": " + why, op.loc);
  }

  const ir::Kernel& k_;
  std::vector<std::string> names_;
  std::vector<bool> uniform_;
  ir::OwnershipMap map_;
  std::optional<ThreadLayout> geometry_;  // the first explicit layout
  const Op* geometry_op_ = nullptr;
};

}  // namespace

ir::OwnershipMap check_ownership(const ir::Kernel& kernel) {
  return OwnershipCheck(kernel).run();
}

}  // namespace metile::transform
