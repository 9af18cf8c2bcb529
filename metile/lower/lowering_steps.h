// The per-concern lowering steps lower_block dispatches to; each takes one Tile IR op and
// binds its results (lowering_context.h).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "metile/lower/lowering_context.h"

namespace metile::lower {

// lower_elementwise.cc: constants, geometry, arange, splat, arithmetic, cmp, select, cast,
// math, and SIMD collectives on per-thread scalars.
// constant, program_id, num_programs: one uniform scalar, the Metal IR op `metal_kind` with
// the op's attributes.
void lower_uniform_scalar(Lowering& l, const ir::Op& op, ir::OpKind metal_kind);
void lower_thread_id(Lowering& l, const ir::Op& op);
void lower_arange(Lowering& l, const ir::Op& op);
void lower_splat(Lowering& l, const ir::Op& op);
void lower_elementwise(Lowering& l, const ir::Op& op);
void lower_simd_collective(Lowering& l, const ir::Op& op);

// lower_memory.cc: ptr_add, load, store, shared_alloc, barrier.
void lower_ptr_add(Lowering& l, const ir::Op& op);
void lower_load(Lowering& l, const ir::Op& op);
void lower_store(Lowering& l, const ir::Op& op);
// An atomic_rmw or atomic_cas slot by slot (threads that own no element masked off).
void lower_atomic(Lowering& l, const ir::Op& op);
void lower_shared_alloc(Lowering& l, const ir::Op& op);
void lower_barrier(Lowering& l, const ir::Op& op);

// lower_data_movement.cc: expand_dims and broadcast, forwarding or exchanging values.
void lower_expand_dims(Lowering& l, const ir::Op& op);
void lower_broadcast(Lowering& l, const ir::Op& op);

// lower_convert_layout.cc: a tile to another ThreadLayout, by forwarding, SIMD shuffles or
// threadgroup scratch, as the owner map requires.
void lower_convert_layout(Lowering& l, const ir::Op& op);

// lower_reduce.cc: a whole tile to one uniform scalar, and the pieces every reduction shares.
void lower_reduce(Lowering& l, const ir::Op& op);
struct ReduceKind {
  ir::OpKind combine;  // the elementwise op that combines two values
  ir::OpKind simd;     // the SIMD collective that combines a SIMD group
};
// The kind attribute of a reduce or reduce_axis; NotSupported for another kind.
ReduceKind reduce_kind(Lowering& l, const ir::Op& op);
// The value that leaves any other unchanged under `combine`.
ir::ValueId reduce_identity(Lowering& l, const ir::Op& op, ir::OpKind combine, ir::DType dtype);
// Pairs neighbours until one value is left: depth log2(n) instead of n.
ir::ValueId combine_tree(Lowering& l, ir::OpKind combine, ir::Type type,
                         std::vector<ir::ValueId> values);

// lower_reduce_axis.cc: a 2-D tile along one axis to a 1-D tile.
void lower_reduce_axis(Lowering& l, const ir::Op& op);
// lower_reduce_combine.cc: tiles along one axis with a user-defined combine (metile.reduce).
void lower_reduce_combine(Lowering& l, const ir::Op& op);
// lower_scan.cc: the inclusive scan of a tile along one axis.
void lower_scan(Lowering& l, const ir::Op& op);
// lower_xor_permute.cc: the tile whose element i is element i ^ mask (register renaming, SIMD
// shuffles or threadgroup scratch).
void lower_xor_permute(Lowering& l, const ir::Op& op);
// lower_device_debug.cc: device_assert and device_print, one Metal IR assert or print per
// element a thread owns (per thread for scalars).
void lower_device_assert(Lowering& l, const ir::Op& op);
void lower_device_print(Lowering& l, const ir::Op& op);

// lower_dot.cc: acc + a @ b, on SIMD-group matrix fragments where the target has them and the
// SIMD groups tile the output (lower_dot_simdgroup.cc), else through a threadgroup exchange
// with f32 multiply-adds in the accumulator's layout; and the exchange's two halves.
void lower_dot(Lowering& l, const ir::Op& op);
// lower_dot_wgmma_staged.cc: a dot on sm90's wgmma with a and the accumulator in wgmma's
// registers and b stored by its threads into swizzled scratch (strategy wgmma_staged).
void lower_dot_wgmma_staged(Lowering& l, const ir::Op& op);
// Stores the calling thread's elements of a 2-D tile at buffer[offset + logical index], or
// with rows `row_stride` elements apart (padded) when it is not 0.
void publish_tile(Lowering& l, ir::ValueId tile, ir::ValueId buffer, int64_t offset,
                  int64_t row_stride = 0);
// The calling thread's slots of a tile of `type` owned by `layout`, loaded from
// buffer[logical index] (0 in threads that own no element).
std::vector<ir::ValueId> read_tile(Lowering& l, const ir::Type& type,
                                   const ir::ThreadLayout& layout, ir::ValueId buffer);

// lower_dot_mpp.cc: a descriptor GEMM (form_descriptor_matmul.h) on the tensor backend's
// Metal 4 matmul2d, its epilogue applied to each accumulator element before the store.
void lower_descriptor_matmul(Lowering& l, const ir::Op& op);

// lower_dot_simdgroup.cc: the SIMD-group grid over a dot's [M, N] output, and the fragment
// shape each multiply-accumulate takes: 8x8x8 (simdgroup_matrix, and any target's f32), or
// mma.sync's native m16n8k16 for 16-bit operands on targets that have it.
struct DotGeometry {
  int simdgroups_m = 1, simdgroups_n = 1;
  int fragment_m = 8, fragment_n = 8, fragment_k = 8;
};
// The grid when the target has matrix fragments and the threadgroup's SIMD groups divide the
// output's fragment blocks evenly; none otherwise.
std::optional<DotGeometry> simdgroup_dot_geometry(const Lowering& l, const ir::Op& op);
void lower_dot_simdgroup(Lowering& l, const ir::Op& op, DotGeometry geometry);
// A loop-carried accumulator a `for` keeps in fragments: `acc' = dot(a, b, acc)` at the body's
// top level, the carried acc used only as that dot's accumulator and acc' only by the yield,
// with a SIMD-group grid for the dot. The accumulator then stays in fragments across
// iterations; it enters them before the loop and leaves them after it.
struct FragmentCarry {
  const ir::Op* dot = nullptr;
  DotGeometry geometry;
};
// One entry per carried value of the loop; none for a value carried in registers.
std::vector<std::optional<FragmentCarry>> fragment_carries(const Lowering& l, const ir::Op& loop);
// The number of fragments (Metal IR values) of one carried accumulator.
int64_t fragment_count(const Lowering& l, const FragmentCarry& carry);
// A tile value as the carried dot's accumulator fragments (exchange 1 of lower_dot_simdgroup).
std::vector<ir::ValueId> carried_fragments(Lowering& l, const FragmentCarry& carry,
                                           ir::ValueId value);
LoweredValue carried_fragment_value(std::vector<ir::ValueId> fragments);
// The fragments as the slots of a tile of `type` in its default layout (exchange 3).
std::vector<ir::ValueId> carried_slots(Lowering& l, const FragmentCarry& carry,
                                       const std::vector<ir::ValueId>& fragments,
                                       const ir::Type& type);

// The row stride, in elements, of an operand of `columns` columns staged for the carried dot:
// mma.sync's native fragments pad each row by 16 bytes, so the eight row addresses of an
// ldmatrix fall in distinct banks.
int64_t staged_row_stride(const FragmentCarry& carry, int64_t columns);
// The carried dot's acc += a @ b from row-major a [M, K] at a_slot and b [K, N] at b_slot
// (threadgroup pointers to a software pipeline's current slots, rows staged_row_stride
// apart), with no barrier.
std::vector<ir::ValueId> consume_pipeline_slots(Lowering& l, const FragmentCarry& carry,
                                                std::vector<ir::ValueId> acc, ir::ValueId a_slot,
                                                ir::ValueId b_slot);

// lower_pipelined_loop.cc: a K loop whose dot the plan requires double-buffered
// (double_buffer=True), as seed 004's two-stage software pipeline.
// The loop's fragment carry when the plan requires a double buffer and the loop accumulates
// a dot in fragments; NotSupported naming the reason when such a loop is not the canonical
// K loop (nothing is rewritten then); none for a loop without such a dot.
std::optional<FragmentCarry> pipelined_carry(const Lowering& l, const ir::Op& loop);
void lower_pipelined_for(Lowering& l, const ir::Op& loop, const FragmentCarry& carry);

// dot_operand_vectors.cc: under Schedule(vector_width=4) on the simdgroup backend, a dot
// operand's load whose address and mask are recomputable from their definitions, lowered so
// that each run of four slots reads four consecutive addresses (false: not such a load).
bool lower_vectorized_operand_load(Lowering& l, const ir::Op& op);
// The elements of such a load in its run layout, slot by slot: the element's row, the first
// column of its run (i32; a multiple of the run), its place d in the run (its column is
// column0 + d) and the load's operands recomputed there. False, having emitted nothing, when
// the load is not such a load.
using RunElement = std::function<void(ir::ValueId row, ir::ValueId column0, int64_t d,
                                      std::vector<ir::ValueId> operands)>;
bool for_each_run_element(Lowering& l, const ir::Op& op, const RunElement& element);
// The runs alone: each run's row and first column, and its length, in slot order (the load's
// operands are not checked: the caller rematerialises what it needs).
using RunStart = std::function<void(ir::ValueId row, ir::ValueId column0, int64_t run)>;
bool for_each_run(Lowering& l, const ir::Op& op, const RunStart& start);

// async_operand_copy.cc: a software pipeline's copy of a dot operand that is a tile load
// straight into its slot by async_copy ops, one per element (group_vector_accesses packs them
// into copies of up to 16 bytes). It applies to a 2-D load whose fill is zero (or that has no
// mask) on a threadgroup without idle threads.
bool async_copyable(const Lowering& l, const ir::Op& load);
// Where element (row, column) of an operand tile sits in its slot (an i32 element offset);
// within a run of up to eight elements from a column that is a multiple of the run, the next
// columns follow it.
struct SlotLayout {
  int64_t rows = 0, columns = 0;
  int64_t row_stride = 0;  // rows padded to this many elements
  // wgmma's 128-byte swizzle of 16-bit elements: blocks of 64 columns, each rows x 128 bytes,
  // the 16-byte chunk c of row r at chunk c ^ (r % 8) (rows start on 1024-byte boundaries).
  bool swizzled = false;
  int64_t elements() const { return rows * (swizzled ? columns : row_stride); }
  ir::ValueId offset(Lowering& l, ir::ValueId row, ir::ValueId column) const;
  // The same offset at compile time.
  int64_t offset_of(int64_t row, int64_t column) const;
};
// A copied load's addresses split as p_r + d(k): p_r, each run's first address without the
// loop's step offset, computed once before the pipeline (the step offset's root pointer plus
// the run's loop-invariant offsets), and d(k) the uniform step offset the copy adds, so that
// a step adds one 64-bit offset per run instead of recomputing each address.
struct HoistedPointers {
  ir::ValueId step_offset = ir::kNoValue;  // d: a Tile IR scalar of the loop body
  std::vector<ir::ValueId> runs;           // p_r: Metal IR pointers, one per run
};
// Such a split of `load` (a tile load of the loop body `body` that copy_operand_async copies):
// its pointer is ptr_add(splat(ptr_add(q, d)), offsets) with q and the offset tile defined
// before the loop; nullopt otherwise (each copy then recomputes its addresses).
std::optional<HoistedPointers> hoist_copy_pointers(Lowering& l, const ir::Op& load,
                                                   const ir::Block& body);
// The copy into the slot at `slot` (its run addresses from `hoisted` where given).
void copy_operand_async(Lowering& l, const ir::Op& load, ir::ValueId slot, const SlotLayout& layout,
                        const HoistedPointers* hoisted = nullptr);
// wgmma_staged's b operands that may be tile loads copied straight into their swizzled
// scratch: the loads read by one dot alone, as b (each with its dot).
std::map<const ir::Op*, const ir::Op*> staged_operand_candidates(const Lowering& l);
// When lowering reaches such a load: whether its dot copies it instead (staged_operand); the
// load is then left unlowered (Lowering::deferred_operand_loads).
bool defer_staged_operand_load(Lowering& l, const ir::Op& dot);
// A wgmma_staged dot's b that its dot may copy straight from device memory: a zero-fill 2-D
// tile load whose address, mask and fill are recomputable from their definitions and step by
// one element along K or N, with runs of 16 bytes that divide evenly among the threads
// (load: none otherwise); K-major when its addresses step along K.
struct StagedOperand {
  const ir::Op* load = nullptr;
  bool k_major = false;
};
StagedOperand staged_operand(Lowering& l, const ir::Op& dot);
// Copies such a b into `buffer` by async_copy ops, each thread runs of 16 bytes along the
// contiguous axis (group_vector_accesses packs each run into one copy): K-major (N rows of K
// elements, as wgmma_mma's b_k_major reads it) or N-major ([K, N] in 64-column blocks).
void copy_staged_operand(Lowering& l, const ir::Op& dot, ir::ValueId buffer);

// lower_trans.cc: reshape (no movement) and trans (forwarded, SIMD shuffles or scratch).
void lower_reshape(Lowering& l, const ir::Op& op);
void lower_trans(Lowering& l, const ir::Op& op);
// The private scratch bytes the kernel's register reductions need, laid out before lowering.
int64_t register_reduction_bytes(const ir::Kernel& tile, const ThreadPlan& plan,
                                 const target::Target& target);

// lower_fragment.cc: matrix fragment ops, as the same Metal IR ops, and a dot of fragments
// as matrix_mma.
void lower_fragment_op(Lowering& l, const ir::Op& op);
void lower_fragment_dot(Lowering& l, const ir::Op& op);
// UserError unless the schedule plan's backend is simdgroup_inline, which fragments need.
void require_fragment_backend(const Lowering& l, const ir::Op& op);
// lower_fragment_tile.cc: device_tile_load / device_tile_store, as a matrix access of device
// memory for a complete tile and bounded scalar copies through the scratch otherwise.
void lower_device_tile(Lowering& l, const ir::Op& op);

// lower_control_flow.cc: for, if and while.
void lower_for(Lowering& l, const ir::Op& op);
void lower_if(Lowering& l, const ir::Op& op);
void lower_while(Lowering& l, const ir::Op& op);

}  // namespace metile::lower
