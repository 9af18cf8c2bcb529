// dot (a, b, acc) on sm90's wgmma without a software pipeline (strategy wgmma_staged: kernels
// whose dots are not one canonical K loop, attention's two dots a step among them).
// plan_schedule gives the tile sizes of every dot's accumulator and a wgmma's register layout
// (wgmma_accumulator_layout), so neither moves: a 16-bit [M, K] tile in that layout holds, per
// m64 block and K step of 16, exactly the eight elements of wgmma's register operand a (a0 ..
// a7), and a softmax's probabilities feed the next dot where the previous one left them. b is
// stored by its threads into 128-byte-swizzled scratch ([K, N] in 64-column blocks, as the
// software pipeline's slots), fenced for the asynchronous proxy and published by a barrier;
// each warp group issues one wgmma per K step and m64 block as one group and waits for it,
// which hands back the accumulator registers; a barrier releases the scratch.
#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/lowering_steps.h"
#include "metile/lower/staged_prefetch.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);
const ir::Type kF32 = ir::Type::scalar(ir::DType::f32);

// The value's slots in `layout`: a splat's in every register, else its own, which the plan put
// in that layout.
std::vector<ir::ValueId> registers_in(Lowering& l, ir::ValueId v, const ir::ThreadLayout& layout) {
  const LoweredValue& lv = l.get(v);
  if (lv.uniform) return std::vector<ir::ValueId>(layout.elements_per_thread(), lv.slots[0]);
  if (!lv.layout || !(*lv.layout == layout))
    throw InternalError("lower dot (wgmma_staged): " + l.name(v) + " is in " +
                        (lv.layout ? lv.layout->str() : std::string("fragments")) +
                        ", not wgmma's register layout " + layout.str() +
                        ", which plan_schedule gives its tile size");
  return lv.slots;
}

// Each thread stores its elements of b [K, N] at their places in the swizzled [K, N] tile.
void stage(Lowering& l, ir::ValueId b, ir::ValueId buffer, const SlotLayout& place) {
  const ir::Type& t = l.tile_type(b);
  const LoweredValue& lv = l.get(b);
  const ir::ThreadLayout layout = l.layout_of(b);
  const ir::Type ptr = l.metal.type(buffer);
  const ir::ValueId writes = l.writes_elements(layout);
  const int column_bits = log2_exact(t.shape[1]);
  for (int64_t r = 0; r < layout.elements_per_thread(); ++r) {
    const ir::ValueId index = l.logical_index(layout, r);
    const ir::ValueId row = l.emit(ir::OpKind::Shr, {index, l.const_int(column_bits)}, kI32);
    const ir::ValueId column = l.emit(ir::OpKind::And, {index, l.const_int(t.shape[1] - 1)}, kI32);
    std::vector<ir::ValueId> operands = {
        l.emit(ir::OpKind::PtrAdd, {buffer, place.offset(l, row, column)}, ptr),
        lv.uniform ? lv.slots[0] : lv.slots[static_cast<size_t>(r)]};
    if (writes != ir::kNoValue) operands.push_back(writes);
    l.emit_void(ir::OpKind::Store, operands);
  }
}

}  // namespace

void lower_dot_wgmma_staged(Lowering& l, const ir::Op& op) {
  const ir::Type& a_type = l.tile_type(op.operands[0]);
  const ir::Type& b_type = l.tile_type(op.operands[1]);
  const int64_t m = a_type.shape[0], k = a_type.shape[1], n = b_type.shape[1];
  const int64_t groups = l.threads / 128;
  const ir::ThreadLayout acc_layout = wgmma_accumulator_layout(m, n, groups);
  const std::vector<ir::ValueId> a =
      registers_in(l, op.operands[0], wgmma_accumulator_layout(m, k, groups));
  std::vector<ir::ValueId> acc = registers_in(l, op.operands[2], acc_layout);

  // b's scratch: this step's slot of a prefetch ring, published by the step's first ring dot;
  // else copied (or stored) here, waited for, fenced and published.
  const StagedRing::Operand* ring = l.staged_ring ? l.staged_ring->find(op) : nullptr;
  bool k_major = ring && ring->k_major;
  ir::ValueId buffer = ir::kNoValue;
  if (ring) {
    buffer = ring_slot(l, *l.staged_ring, *ring);
  } else {
    const SlotLayout place{k, n, 0, true};
    buffer = l.scratch("wgmma b (" + l.name(op.results[0]) + ")", "exchange", b_type.dtype,
                       place.elements(), 1024);
    const StagedOperand staged = staged_operand(l, op);
    if (staged.load && l.deferred_operand_loads.count(staged.load)) {
      copy_staged_operand(l, op, buffer);
      l.emit_void(ir::OpKind::AsyncCopyCommit, {});
      l.emit_void(ir::OpKind::AsyncCopyWait, {}, {{"pending", int64_t{0}}});
      k_major = staged.k_major;
    } else {
      stage(l, op.operands[1], buffer, place);
    }
    l.emit_void(ir::OpKind::AsyncProxyFence, {});
    l.threadgroup_barrier();
  }

  // Per warp group: m / groups rows, as m64 blocks of n/2 accumulator and k/2 a registers.
  const int64_t blocks = m / groups / 64;
  const size_t acc_per_block = static_cast<size_t>(n / 2), a_per_block = static_cast<size_t>(k / 2);
  const ir::Type ptr = l.metal.type(buffer);
  const int64_t b_block_bytes = k * 64 * ir::dtype_bytes(b_type.dtype);
  l.emit_void(ir::OpKind::WgmmaFence, {});
  for (int64_t kk = 0; kk < k / 16; ++kk) {
    // K-major: 16 more elements of each 128-byte row, then the next 64-element K block.
    const int64_t b_offset = k_major ? kk / 4 * n * 64 + kk % 4 * 16 : kk * 16 * 64;
    const ir::ValueId b_step =
        kk == 0 ? buffer : l.emit(ir::OpKind::PtrAdd, {buffer, l.const_int(b_offset)}, ptr);
    for (int64_t block = 0; block < blocks; ++block) {
      const auto a_first =
          a.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(block) * a_per_block +
                                                  static_cast<size_t>(kk) * 8);
      std::vector<ir::ValueId> operands(a_first, a_first + 8);
      operands.push_back(b_step);
      const auto acc_first =
          acc.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(block) * acc_per_block);
      operands.insert(operands.end(), acc_first,
                      acc_first + static_cast<std::ptrdiff_t>(acc_per_block));
      const std::vector<ir::ValueId> product = l.builder.create(
          ir::OpKind::WgmmaMma, operands, std::vector<ir::Type>(acc_per_block, kF32),
          {{"n", n},
           {"b_block_bytes", b_block_bytes},
           {"a_registers", int64_t{1}},
           {"b_k_major", int64_t{k_major}}});
      std::copy(product.begin(), product.end(), acc_first);
    }
  }
  l.emit_void(ir::OpKind::WgmmaCommit, {});
  acc = l.builder.create(ir::OpKind::WgmmaWait, acc, std::vector<ir::Type>(acc.size(), kF32),
                         {{"pending", int64_t{0}}});
  // Every warp group's wgmma has read b: the scratch is free (a ring slot is written next
  // after the next step's barrier).
  if (!ring) l.threadgroup_barrier();

  LoweredValue result;
  result.slots = std::move(acc);
  result.layout = acc_layout;
  l.bind(op.results[0], std::move(result));
}

}  // namespace metile::lower
