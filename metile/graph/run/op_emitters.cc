#include "metile/graph/run/op_emitters.h"

#include <limits>

#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
// Below any finite input, and not -inf, so that exp(lowest - max) is 0, never NaN.
constexpr float kLowest = -1e38f;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

Value silu(const Value& x) {
  auto negated = -x;
  auto denominator = exp(negated) + 1.0f;
  return x / denominator;
}
}  // namespace

dsl::DType compute_dtype(graph::DType dtype) {
  return is_float(dtype) ? f32 : i32;
}

dsl::DType storage_dtype(graph::DType dtype) {
  switch (dtype) {
    case graph::DType::f16:
      return f16;
    case graph::DType::bf16:
      return bf16;
    case graph::DType::f32:
      return f32;
    case graph::DType::i32:
      return i32;
  }
  throw InternalError("storage_dtype: unknown dtype");
}

Value emit_elementwise(const Op& op, const std::vector<Value>& in, const TilePosition& position) {
  switch (op.kind) {
    case OpKind::Add:
      return in[0] + in[1];
    case OpKind::Subtract:
      return in[0] - in[1];
    case OpKind::Multiply:
      return in[0] * in[1];
    case OpKind::Divide:
      return in[0] / in[1];
    case OpKind::Scale:
      return in[0] * op.float_attr("factor");
    case OpKind::Exp:
      return exp(in[0]);
    case OpKind::Silu:
      return silu(in[0]);
    case OpKind::Cast: {
      // Rounded to the target dtype here, where the unfused graph rounds, then computed on.
      auto target = static_cast<graph::DType>(op.int_attr("dtype"));
      Value rounded = in[0].to(storage_dtype(target));
      return rounded.to(compute_dtype(target));
    }
    case OpKind::CausalMask: {
      auto keep = position.column <= position.row;
      return where(keep, in[0], -kInfinity);
    }
    case OpKind::RmsNorm:
    case OpKind::Softmax:
    case OpKind::Sum:
    case OpKind::Max:
    case OpKind::Mean:
    case OpKind::Matmul:
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::Slice:
    case OpKind::Concat:
    case OpKind::Rotary:
    case OpKind::Embedding:
    case OpKind::CacheUpdate:
    case OpKind::FlashAttention:
      break;
  }
  throw InternalError("emit_elementwise: " + std::string(op.name()) + " is not elementwise");
}

Value emit_row_op(const Op& op, const std::vector<Value>& in, const Value& in_row,
                  int64_t columns) {
  const Value& x = in[0];
  switch (op.kind) {
    case OpKind::RmsNorm: {
      auto squares = where(in_row, x * x, 0.0f);
      auto mean_square = sum(squares) / static_cast<float>(columns);
      auto scale = rsqrt(mean_square + static_cast<float>(op.float_attr("eps")));
      return x * scale * in[1];
    }
    case OpKind::Softmax: {
      auto row_max = max(where(in_row, x, kLowest));
      auto shifted = exp(x - row_max);
      auto e = where(in_row, shifted, 0.0f);
      auto inverse = 1.0f / sum(e);
      return e * inverse;
    }
    case OpKind::Sum:
      return sum(where(in_row, x, 0));
    case OpKind::Max:
      return max(where(
          in_row, x,
          x.dtype() == f32 ? Operand(kLowest) : Operand(std::numeric_limits<int32_t>::min())));
    case OpKind::Mean:
      return sum(where(in_row, x, 0.0f)) / static_cast<float>(columns);
    case OpKind::Add:
    case OpKind::Subtract:
    case OpKind::Multiply:
    case OpKind::Divide:
    case OpKind::Scale:
    case OpKind::Exp:
    case OpKind::Silu:
    case OpKind::Cast:
    case OpKind::CausalMask:
    case OpKind::Matmul:
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::Slice:
    case OpKind::Concat:
    case OpKind::Rotary:
    case OpKind::Embedding:
    case OpKind::CacheUpdate:
    case OpKind::FlashAttention:
      break;
  }
  throw InternalError("emit_row_op: " + std::string(op.name()) + " is not a row op");
}

}  // namespace metile::graph
