// match_async_gemm: whether a traced Tile IR kernel (before expand_tensor_access) is the
// canonical descriptor GEMM (match_descriptor_gemm.h) in the form the wgmma_tma strategy
// lowers whole (docs/hopper.md): besides the K loop only pointwise tile code and one tensor
// store; f16 or bf16 operands; row-major tensors over buffer parameters whose extents are
// scalar parameters or constants; and the tile of program_id (0, 1):
//   row = program_id(0) * BM + arange(BM); column = program_id(1) * BN + arange(BN)
// Anything else is named in AsyncGemm::not_matched, and the kernel is lowered otherwise (or,
// when tensor_ops is required, rejected with that reason).
#include <optional>
#include <set>

#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/match_descriptor_gemm.h"

namespace metile::lower {

namespace {

using K = ir::OpKind;

class Matcher {
 public:
  explicit Matcher(const ir::Kernel& k) : k_(k), values_(k) {}

  schedule::AsyncGemm run() {
    if (const std::string why = match_surroundings(); !why.empty()) return fail(why);
    std::variant<DescriptorGemm, GemmMismatch> found = match_descriptor_gemm(values_);
    if (const GemmMismatch* bad = std::get_if<GemmMismatch>(&found))
      return fail((bad->op ? values_.describe(bad->op) + " " : std::string()) + bad->why);
    if (const std::string why = match_gemm(std::get<DescriptorGemm>(found)); !why.empty())
      return fail(why);
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

  // The strategy lowers the whole kernel: one K loop, pointwise tile code, one tensor store.
  std::string match_surroundings() const {
    const ir::Op* loop = nullptr;
    const ir::Op* store = nullptr;
    for (const ir::Op& op : k_.body.ops) {
      if (op.kind == K::For || op.kind == K::If) {
        if (loop || op.kind == K::If) return "control flow besides one K loop";
        loop = &op;
        for (const ir::Op& inner : op.regions[0].ops)
          if (inner.kind != K::Yield && inner.kind != K::Dot && inner.kind != K::TensorLoad &&
              !epilogue_op(inner.kind))
            return "op " + std::string(ir::op_name(inner.kind)) + " in the K loop";
        continue;
      }
      if (!epilogue_op(op.kind))
        return "op " + std::string(ir::op_name(op.kind)) +
               " outside the K loop (only pointwise tile code and one tensor store may "
               "surround it)";
      if (op.kind == K::TensorStore && store) return "more than one tensor store";
      if (op.kind == K::TensorStore) store = &op;
    }
    if (!loop) return "no K loop (tile_range) holding the dot";
    if (!store) return "no tensor store of the product";
    return "";
  }

  const ir::Op* def(ir::ValueId v, K kind) const {
    const ir::Op* op = values_.def(v);
    return op && op->kind == kind ? op : nullptr;
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

  // A view over a buffer parameter whose extents are parameters or constants and whose row
  // stride is its inner extent.
  std::optional<RowMajor> row_major(const DescriptorView& view) const {
    const int buffer = param(view.base);
    const auto outer = extent(view.rows), inner = extent(view.columns);
    const auto stride = extent(view.row_stride);
    if (buffer < 0 || !outer || !inner || !stride || !(*stride == *inner)) return std::nullopt;
    return RowMajor{buffer, *outer, *inner};
  }

  std::string match_gemm(const DescriptorGemm& m) {
    const ir::Type& acc = k_.type(m.dot->operands[2]);
    const ir::Type& a = k_.type(m.dot->operands[0]);
    gemm_.block_m = acc.shape[0];
    gemm_.block_n = acc.shape[1];
    gemm_.block_k = a.shape[1];
    gemm_.dtype = a.dtype;
    if (a.dtype != ir::DType::f16 && a.dtype != ir::DType::bf16)
      return "operands of " + std::string(ir::dtype_name(a.dtype)) +
             " (wgmma takes f16 and bf16 here)";
    const auto left = row_major(m.a);
    const auto right = row_major(m.b);
    if (!left || !right)
      return "the operands are not row-major tensors of buffer and scalar parameters";
    gemm_.left = left->buffer;
    gemm_.rows = left->outer;
    gemm_.inner = left->inner;
    gemm_.right = right->buffer;
    gemm_.columns = right->inner;
    if (!tile_origin(m.row0, 0, gemm_.block_m) || !tile_origin(m.column0, 1, gemm_.block_n))
      return "the operand rows (columns) are not program_id(0) * BLOCK_M + arange(BLOCK_M) "
             "(program_id(1) * BLOCK_N + arange(BLOCK_N))";
    const auto output = row_major(m.c);
    if (!output) return "the output is not a row-major [rows, columns] tensor";
    gemm_.output = output->buffer;
    return "";
  }

  const ir::Kernel& k_;
  const KernelValues values_;
  schedule::AsyncGemm gemm_;
};

}  // namespace

schedule::AsyncGemm match_async_gemm(const ir::Kernel& tile) {
  return Matcher(tile).run();
}

}  // namespace metile::lower
