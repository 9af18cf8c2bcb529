// What the wgmma_tma kernel's two files share (docs/hopper.md): lower_dot_wgmma.cc builds the
// mbarrier ring, the producer and the consumers' K loop; lower_dot_wgmma_epilogue.cc the
// epilogue on the accumulator's registers (broadcast indices recomputed in its layout, the
// output tile's store). Internal to metile/lower.
#pragma once

#include <array>
#include <map>
#include <utility>
#include <vector>

#include "metile/lower/lowering_steps.h"
#include "metile/schedule/async_gemm.h"

namespace metile::lower::wgmma {

using K = ir::OpKind;
constexpr int64_t kWarpGroup = 128;

// The accumulator tile of C consumer warp groups (BLOCK_M / 64) in wgmma's register fragments.
ir::ThreadLayout accumulator_layout(int64_t block_m, int64_t block_n);

// A tile of the output: its row and column tile indices.
struct Tile {
  ir::ValueId m, n;
};

// Metal IR helpers over one Lowering (i32 arithmetic, comparisons, pointers, parameters).
class Emitter {
 protected:
  Emitter(Lowering& l, const schedule::AsyncGemm& g) : l_(l), g_(g) {}

  ir::ValueId at(ir::ValueId p, ir::ValueId i) {
    return l_.emit(K::PtrAdd, {p, i}, l_.metal.type(p));
  }
  ir::ValueId c(int64_t v) { return l_.const_int(v); }
  ir::ValueId add(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Add, {a, b}, i32()); }
  ir::ValueId sub(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Sub, {a, b}, i32()); }
  ir::ValueId mul(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Mul, {a, b}, i32()); }
  ir::ValueId div(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Div, {a, b}, i32()); }
  ir::ValueId rem(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Rem, {a, b}, i32()); }
  ir::ValueId shr(ir::ValueId a, int bits) { return l_.emit(K::Shr, {a, c(bits)}, i32()); }
  ir::ValueId cmp(const char* pred, ir::ValueId a, ir::ValueId b) {
    return l_.emit(K::Cmp, {a, b}, i1(), {{"pred", std::string(pred)}});
  }
  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  static ir::Type i1() { return ir::Type::scalar(ir::DType::i1); }
  static ir::Type f32() { return ir::Type::scalar(ir::DType::f32); }

  ir::ValueId parameter(int index) {
    return l_.scalar(l_.tile.params[static_cast<size_t>(index)].value);
  }
  ir::ValueId extent(const schedule::Extent& e) {
    return e.param >= 0 ? parameter(e.param) : c(e.value);
  }

  Lowering& l_;
  const schedule::AsyncGemm& g_;
};

// The consumers' epilogue: the kernel's own Tile IR after the K loop, on the accumulator's
// registers of output tile `tile`.
class Epilogue : Emitter {
 public:
  Epilogue(Lowering& l, const schedule::AsyncGemm& g);
  // Lowers `op` of tile `tile`'s epilogue where this class does it (a broadcast, the output
  // store) and says whether it did; other ops lower as usual.
  bool lower(const ir::Op& op, Tile tile);

 private:
  void recompute_broadcast(const ir::Op& op);
  ir::ValueId evaluate(ir::ValueId v, const std::vector<ir::ValueId>& coords);
  bool store_output(const ir::Op& op);
  std::map<std::pair<int64_t, int64_t>, size_t> register_pairs(const ir::ThreadLayout& layout,
                                                               size_t registers) const;
  std::array<ir::ValueId, 4> swap_pairs(ir::ValueId odd, const std::vector<ir::ValueId>& values,
                                        size_t first, size_t second);

  std::map<ir::ValueId, const ir::Op*> def_;
  Tile tile_{ir::kNoValue, ir::kNoValue};
};

}  // namespace metile::lower::wgmma
