// The state lower_to_metal threads through its steps: the Tile IR input, the Metal IR being
// built, and the mapping from every Tile IR value to its Metal IR values.
//
// Every tile value of S elements has a ThreadLayout: the plan's layout for tiles of S elements
// if it has one, else the striped identity over the plan's T threads (thread t owns logical
// indices t + r * T for register slots r in [0, max(1, S / T)); when S < T, threads t >= S own
// nothing: their one slot is invalid). Each slot is one Metal IR SSA scalar. Scalars map to
// one Metal IR value, uniform or per-thread.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metile/ir/builder.h"
#include "metile/ir/thread_layout.h"
#include "metile/lower/lower.h"
#include "metile/lower/threadgroup_allocator.h"
#include "metile/schedule/schedule_plan.h"

namespace metile::lower {

struct StagedRing;

struct LoweredValue {
  LoweredValue() = default;
  LoweredValue(std::vector<ir::ValueId> values, bool is_tile, bool is_uniform)
      : slots(std::move(values)), tile(is_tile), uniform(is_uniform) {}

  std::vector<ir::ValueId> slots;  // a tile: one per register slot; a scalar: one
  bool tile = false;
  // Scalars: every thread holds the same value. Tiles: every element is one uniform scalar
  // (a splat), so every slot holds the same SSA value.
  bool uniform = false;
  // Tiles: which (thread, slot) holds which logical element; bind() fills in the default.
  std::optional<ir::ThreadLayout> layout;
  // A dot accumulator a loop keeps in SIMD-group matrix fragments (lower_dot_simdgroup.cc):
  // `slots` are those fragments, not register slots, and there is no layout.
  bool fragments = false;
};

class Lowering {
 public:
  Lowering(const ir::Kernel& tile, const ThreadPlan& plan, const schedule::SchedulePlan& schedule,
           const target::Target& target, int64_t user_shared_bytes, int64_t private_scratch_bytes);

  const ir::Kernel& tile;
  const target::Target& target;
  const ThreadPlan& plan;
  // plan_schedule's backend, SIMD-group geometry, staging, vector width and buffering.
  const schedule::SchedulePlan& schedule_plan;
  const int64_t threads;
  ir::Kernel metal;
  ir::Builder builder;
  ThreadgroupAllocator allocator;
  std::vector<LoopInfo> loops;
  std::vector<std::string> value_layouts;
  std::vector<RegisterReduction> register_reductions;
  std::vector<LayoutConversion> layout_conversions;
  std::vector<Buffering> buffering;
  std::vector<FusedEpilogue> fused_epilogues;
  std::vector<schedule::SoftwarePipeline> pipelines;
  // How many for/if regions enclose the op being lowered (0: the kernel's top level).
  int nesting = 0;
  // How many of them run per thread (bounds or a condition that differ between threads): 0
  // where every thread runs the op together.
  int divergence = 0;
  // The Tile IR op that defines each value (for rematerialise.h).
  const std::map<ir::ValueId, const ir::Op*> definers;
  // A whole-kernel strategy (lower_dot_wgmma.cc) lowers some ops itself: lower_block offers it
  // each op first, and skips the op when it returns true.
  std::function<bool(const ir::Op&)> intercept;
  // wgmma_staged's b loads left unlowered for their dot to copy (async_operand_copy.cc).
  std::set<const ir::Op*> deferred_operand_loads;
  // The prefetch ring of the loop whose body is being lowered, if it has one
  // (staged_prefetch.h).
  StagedRing* staged_ring = nullptr;

  // ---- Tile IR values ----------------------------------------------------------------
  const ir::Type& tile_type(ir::ValueId v) const { return tile.type(v); }
  const LoweredValue& get(ir::ValueId tile_value) const;
  void bind(ir::ValueId tile_value, LoweredValue lowered);
  bool is_bound(ir::ValueId tile_value) const { return bound_[static_cast<size_t>(tile_value)]; }
  // Puts back a binding that a lowering replaced for a while (staged_prefetch.cc lowers a
  // loop body's ops again at the next step), without reporting its layout again.
  void restore(ir::ValueId tile_value, LoweredValue lowered);
  // A scalar operand's Metal IR value.
  ir::ValueId scalar(ir::ValueId tile_value) const;
  // A scalar operand that every thread must agree on; UserError naming `op` otherwise.
  ir::ValueId uniform_scalar(const ir::Op& op, ir::ValueId tile_value,
                             const std::string& role) const;
  // Whether a Tile IR scalar is the same in every thread (uniformity.h).
  bool is_uniform(ir::ValueId tile_value) const { return uniform_[tile_value]; }
  // How print() names a Tile IR value: "%5", "%x".
  const std::string& name(ir::ValueId tile_value) const { return names_[tile_value]; }

  // ---- ownership ---------------------------------------------------------------------
  // The layout of a tile of this type: the plan's for its size, else the striped identity.
  ir::ThreadLayout layout(const ir::Type& tile_type) const;
  // The layout of a lowered tile value.
  const ir::ThreadLayout& layout_of(ir::ValueId tile_value) const;
  // The layout an ownership-preserving op passes on: that of its first operand that is a
  // tile and not a splat (a splat fits every layout); none when there is no such operand.
  std::optional<ir::ThreadLayout> operand_layout(const ir::Op& op) const;
  int64_t slot_count(const ir::Type& tile_type) const;
  // True when some threads own no element (the layout of tile_type spans fewer threads).
  bool has_idle_threads(const ir::Type& tile_type) const;
  // i1: whether the calling thread is the one that writes its elements of a tile in `layout`
  // (it owns elements, and of replicas it is the canonical one); kNoValue when every thread is.
  ir::ValueId writes_elements(const ir::ThreadLayout& layout);
  ir::ValueId writes_elements(const ir::Type& tile_type) {
    return writes_elements(layout(tile_type));
  }
  // The logical index that `layout` places in slot r of the calling thread (i32, per
  // thread): a part computed from the thread index, shared by every slot, plus the slot's
  // constant. A layout other than the striped identity first masks the thread index to
  // thread_count - 1, which changes no legal index and shows the compiler its zero bits.
  ir::ValueId logical_index(const ir::ThreadLayout& layout, int64_t slot);
  // The part of every logical index of `layout` that comes from the thread index.
  ir::ValueId thread_part(const ir::ThreadLayout& layout);
  // The constant that slot r adds to thread_part (the xor mask's share included).
  static int64_t slot_offset(const ir::ThreadLayout& layout, int64_t slot);
  // The thread that `layout` makes the owner of a logical index (i32 per thread): the
  // index's bits that come from thread bits, moved back to their physical positions.
  ir::ValueId owner_of(const ir::ThreadLayout& layout, ir::ValueId index);
  // The register slot in which `layout` keeps a logical index (i32 per thread): the index's
  // bits that come from register bits, moved back to their slot positions.
  ir::ValueId register_of(const ir::ThreadLayout& layout, ir::ValueId index);
  // `value` (a slot of a tile owned by `layout`) as held by the owner of logical `index`, which
  // must lie in the calling thread's SIMD group: one simd_shuffle from the exact source lane.
  // i1 values cross as i32.
  ir::ValueId shuffle_from_owner(ir::ValueId value, ir::DType dtype, const ir::ThreadLayout& layout,
                                 ir::ValueId index);
  // i1: whether the calling thread owns an element of a tile of `elements` (thread < S).
  ir::ValueId owns_element(int64_t elements);
  // An exchange through threadgroup scratch `buffer` (one element per logical index of
  // `layout`): each owner publishes `slots` at their logical `indices`, and after a barrier
  // every slot reads the element at its index ^ `mask`, then a release barrier. Threads past
  // the layout's own (a tile smaller than the threadgroup) publish and read nothing: their
  // indices may lie past the scratch; they get `dtype`'s 0.
  std::vector<ir::ValueId> xor_exchange(ir::ValueId buffer, const ir::ThreadLayout& layout,
                                        ir::DType dtype, const std::vector<ir::ValueId>& indices,
                                        const std::vector<ir::ValueId>& slots, int64_t mask);

  // ---- Metal IR emission -------------------------------------------------------------
  ir::ValueId emit(ir::OpKind kind, std::vector<ir::ValueId> operands, ir::Type type,
                   ir::Attrs attrs = {});
  void emit_void(ir::OpKind kind, std::vector<ir::ValueId> operands, ir::Attrs attrs = {});
  ir::ValueId const_int(int64_t value, ir::DType dtype = ir::DType::i32);
  ir::ValueId const_float(double value, ir::DType dtype);
  ir::ValueId thread_index() const { return thread_index_; }
  void threadgroup_barrier();
  // A threadgroup pointer to compiler scratch for `elements` values of `dtype`, shared by
  // every use (kind "exchange" or "reduction": each ends with a release barrier) or private
  // to one register reduction (kind "private_reduction").
  // `alignment`: of the scratch's byte offset in the threadgroup block, where it matters.
  ir::ValueId scratch(const std::string& purpose, const std::string& kind, ir::DType dtype,
                      int64_t elements, int64_t alignment = 1);

  // ---- errors ------------------------------------------------------------------------
  [[noreturn]] void not_supported(const ir::Op& op, const std::string& why) const;
  [[noreturn]] void user_error(const ir::Op& op, const std::string& rule) const;

 private:
  // The thread (or, without `thread`, register slot) bits of a logical index of `layout`.
  ir::ValueId physical_part(const ir::ThreadLayout& layout, ir::ValueId index, bool thread);

  std::vector<std::string> names_;
  std::vector<bool> uniform_;
  std::vector<LoweredValue> values_;
  std::vector<bool> bound_;
  ir::ValueId thread_index_ = ir::kNoValue;
};

// Lowers every op of a Tile IR block into the current insertion point (lower_to_metal.cc).
void lower_block(Lowering& l, const ir::Block& block);

}  // namespace metile::lower
