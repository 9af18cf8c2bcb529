// match_async_gemm: whether a traced Tile IR kernel (before expand_tensor_access) is the
// canonical descriptor GEMM of metile_kernels.gemm (docs/hopper.md), which the wgmma_tma
// strategy lowers whole:
//   a = tensor(left, (rows, inner)); b = tensor(right, (inner, columns))   (row-major)
//   row = program_id(0) * BM + arange(BM); column = program_id(1) * BN + arange(BN)
//   acc = zeros((BM, BN), f32)
//   for k in tile_range(0, inner, BK):
//     acc = dot(a.load((row[:, None], (k + arange(BK))[None, :])),
//               b.load(((k + arange(BK))[:, None], column[None, :])), acc)
//   <pointwise ops of acc and runtime scalars>; c.store((row[:, None], column[None, :]), value)
// Anything else is named in AsyncGemm::not_matched, and the kernel is lowered otherwise (or,
// when tensor_ops is required, rejected with that reason).
#include <array>
#include <map>
#include <optional>
#include <set>

#include "metile/lower/lower_dot_wgmma.h"

namespace metile::lower {

namespace {

using K = ir::OpKind;

class Matcher {
 public:
  explicit Matcher(const ir::Kernel& k) : k_(k) {
    ir::walk(k.body, [&](const ir::Op& op) {
      for (ir::ValueId r : op.results) def_[r] = &op;
    });
  }

  schedule::AsyncGemm run() {
    const ir::Op* loop = nullptr;
    for (const ir::Op& op : k_.body.ops) {
      if (op.kind == K::For || op.kind == K::If) {
        if (loop || op.kind == K::If) return fail("control flow besides one K loop");
        loop = &op;
        continue;
      }
      if (!epilogue_op(op.kind))
        return fail("op " + std::string(ir::op_name(op.kind)) +
                    " outside the K loop (only pointwise tile code and one tensor store may "
                    "surround it)");
      if (op.kind == K::TensorStore && store_) return fail("more than one tensor store");
      if (op.kind == K::TensorStore) store_ = &op;
    }
    if (!loop) return fail("no K loop (tile_range) holding the dot");
    if (!store_) return fail("no tensor store of the product");
    if (const std::string why = match_loop(*loop); !why.empty()) return fail(why);
    if (const std::string why = match_store(*loop); !why.empty()) return fail(why);
    return gemm_;
  }

 private:
  static bool epilogue_op(K kind) {
    static const std::set<K> kinds = {
        K::Constant,   K::ProgramId,   K::Arange, K::Splat,  K::ExpandDims, K::Broadcast,
        K::MakeTensor, K::TensorStore, K::Add,    K::Sub,    K::Mul,        K::Div,
        K::Min,        K::Max,         K::Cmp,    K::Select, K::Cast,       K::Neg,
        K::Abs,        K::Exp,         K::Exp2,   K::Log,    K::Sqrt,       K::Rsqrt,
        K::Tanh,       K::Sin,         K::Cos,    K::Floor,  K::Ceil};
    return kinds.count(kind) != 0;
  }

  schedule::AsyncGemm fail(const std::string& why) {
    schedule::AsyncGemm g;
    g.not_matched = why;
    return g;
  }

  const ir::Op* def(ir::ValueId v, K kind) const {
    const auto it = def_.find(v);
    return it != def_.end() && it->second->kind == kind ? it->second : nullptr;
  }

  std::optional<double> constant(ir::ValueId v) const {
    const ir::Op* c = def(v, K::Constant);
    if (!c) return std::nullopt;
    return c->float_attr("value");
  }

  int param(ir::ValueId v) const {
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (k_.params[i].value == v) return static_cast<int>(i);
    return -1;
  }

  // v = splat(s) + arange(0, n) (either order); s is returned.
  ir::ValueId offset_arange(ir::ValueId v, int64_t n) const {
    const ir::Op* add = def(v, K::Add);
    if (!add) return ir::kNoValue;
    for (int i : {0, 1}) {
      const ir::Op* splat = def(add->operands[static_cast<size_t>(i)], K::Splat);
      const ir::Op* range = def(add->operands[static_cast<size_t>(1 - i)], K::Arange);
      if (splat && range && range->int_attr("start") == 0 && range->int_attr("end") == n)
        return splat->operands[0];
    }
    return ir::kNoValue;
  }

  // v = broadcast(expand_dims(x, axis)); x is returned.
  ir::ValueId expanded(ir::ValueId v, int64_t axis) const {
    const ir::Op* b = def(v, K::Broadcast);
    const ir::Op* e = b ? def(b->operands[0], K::ExpandDims) : nullptr;
    return e && e->int_attr("axis") == axis ? e->operands[0] : ir::kNoValue;
  }

  // v = program_id(axis) * block.
  bool tile_origin(ir::ValueId v, int64_t axis, int64_t block) const {
    const ir::Op* mul = def(v, K::Mul);
    if (!mul) return false;
    for (int i : {0, 1}) {
      const ir::Op* pid = def(mul->operands[static_cast<size_t>(i)], K::ProgramId);
      if (pid && pid->int_attr("axis") == axis &&
          constant(mul->operands[static_cast<size_t>(1 - i)]) == static_cast<double>(block))
        return true;
    }
    return false;
  }

  // An i32 scalar parameter or a constant.
  std::optional<schedule::Extent> extent(ir::ValueId v) const {
    if (const int p = param(v); p >= 0) return schedule::Extent{p, 0};
    if (const std::optional<double> c = constant(v))
      return schedule::Extent{-1, static_cast<int64_t>(*c)};
    return std::nullopt;
  }

  struct RowMajor {
    int buffer;
    schedule::Extent outer, inner;
  };

  // The descriptor of a row-major [outer, inner] tensor over a buffer parameter, whose extents
  // are parameters or constants and whose row stride is its inner extent.
  std::optional<RowMajor> row_major(ir::ValueId desc) const {
    const ir::Op* make = def(desc, K::MakeTensor);
    if (!make || make->operands.size() != 5) return std::nullopt;
    const int buffer = param(make->operands[0]);
    const auto outer = extent(make->operands[1]), inner = extent(make->operands[2]);
    const auto stride = extent(make->operands[3]);
    if (buffer < 0 || !outer || !inner || !stride || !(*stride == *inner) ||
        constant(make->operands[4]) != 1.0)
      return std::nullopt;
    return RowMajor{buffer, *outer, *inner};
  }

  std::string match_loop(const ir::Op& loop) {
    const ir::Block& body = loop.regions[0];
    if (loop.operands.size() != 4) return "the K loop carries more than the accumulator";
    const ir::Op& yield = body.ops.back();
    const ir::Op* dot = def(yield.operands[0], K::Dot);
    if (!dot || dot->operands[2] != body.args[1])
      return "the K loop does not carry acc = dot(a, b, acc)";
    for (const ir::Op& op : body.ops)
      if (op.kind != K::Yield && op.kind != K::Dot && op.kind != K::TensorLoad &&
          !epilogue_op(op.kind))
        return "op " + std::string(ir::op_name(op.kind)) + " in the K loop";
    const ir::Type& acc = k_.type(dot->operands[2]);
    const ir::Type& a = k_.type(dot->operands[0]);
    gemm_.block_m = acc.shape[0];
    gemm_.block_n = acc.shape[1];
    gemm_.block_k = a.shape[1];
    gemm_.dtype = a.dtype;
    if (a.dtype != ir::DType::f16 && a.dtype != ir::DType::bf16)
      return "operands of " + std::string(ir::dtype_name(a.dtype)) +
             " (wgmma takes f16 and bf16 here)";
    const ir::Op* init = def(loop.operands[3], K::Splat);
    if (!init || constant(init->operands[0]) != 0.0) return "the accumulator does not start at 0";
    if (constant(loop.operands[0]) != 0.0 ||
        constant(loop.operands[2]) != static_cast<double>(gemm_.block_k))
      return "the K loop does not run from 0 by BLOCK_K";
    const ir::Op* load_a = def(dot->operands[0], K::TensorLoad);
    const ir::Op* load_b = def(dot->operands[1], K::TensorLoad);
    if (!load_a || !load_b || load_a->operands.size() != 3 || load_b->operands.size() != 3)
      return "the dot's operands are not 2-D tensor descriptor loads";
    const auto left = row_major(load_a->operands[0]);
    const auto right = row_major(load_b->operands[0]);
    if (!left || !right)
      return "the operands are not row-major tensors of buffer and scalar parameters";
    gemm_.left = left->buffer;
    gemm_.rows = left->outer;
    gemm_.inner = left->inner;
    gemm_.right = right->buffer;
    gemm_.columns = right->inner;
    const auto end = extent(loop.operands[1]);
    if (!(right->outer == gemm_.inner) || !end || !(*end == gemm_.inner))
      return "the K loop and the operands do not share one inner extent";
    const ir::ValueId iv = body.args[0];
    const ir::ValueId a_k = offset_arange(expanded(load_a->operands[2], 0), gemm_.block_k);
    const ir::ValueId b_k = offset_arange(expanded(load_b->operands[1], 1), gemm_.block_k);
    if (a_k != iv || b_k != iv)
      return "the operands are not loaded at (k + arange(BLOCK_K)) along K";
    row_ = expanded(load_a->operands[1], 1);
    column_ = expanded(load_b->operands[2], 0);
    if (!tile_origin(offset_arange(row_, gemm_.block_m), 0, gemm_.block_m) ||
        !tile_origin(offset_arange(column_, gemm_.block_n), 1, gemm_.block_n))
      return "the operand rows (columns) are not program_id(0) * BLOCK_M + arange(BLOCK_M) "
             "(program_id(1) * BLOCK_N + arange(BLOCK_N))";
    return "";
  }

  std::string match_store(const ir::Op& loop) {
    const ir::Op& store = *store_;
    if (store.operands.size() != 4) return "the tensor store is not 2-D";
    if (expanded(store.operands[1], 1) != row_ || expanded(store.operands[2], 0) != column_)
      return "the product is not stored at (row[:, None], column[None, :])";
    const ir::Op* make = def(store.operands[0], K::MakeTensor);
    const auto out = row_major(store.operands[0]);
    if (!make || !out || !(out->outer == gemm_.rows) || !(out->inner == gemm_.columns))
      return "the output is not a row-major [rows, columns] tensor";
    // The stored value must derive from the loop's accumulator.
    std::vector<ir::ValueId> work = {store.operands[3]};
    while (!work.empty()) {
      const ir::ValueId v = work.back();
      work.pop_back();
      if (v == loop.results[0]) return "";
      const auto it = def_.find(v);
      if (it != def_.end() && it->second != &loop)
        work.insert(work.end(), it->second->operands.begin(), it->second->operands.end());
    }
    return "the stored value does not come from the K loop's accumulator";
  }

  const ir::Kernel& k_;
  std::map<ir::ValueId, const ir::Op*> def_;
  const ir::Op* store_ = nullptr;
  ir::ValueId row_ = ir::kNoValue, column_ = ir::kNoValue;
  schedule::AsyncGemm gemm_;
};

}  // namespace

schedule::AsyncGemm match_async_gemm(const ir::Kernel& tile) {
  return Matcher(tile).run();
}

}  // namespace metile::lower
