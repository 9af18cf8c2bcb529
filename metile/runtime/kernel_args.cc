#include "metile/runtime/kernel_args.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "metile/ir/float8.h"
#include "metile/support/errors.h"
#include "metile/support/half_bfloat.h"

namespace metile::runtime {

namespace {

using codegen::AbiParam;
using ir::DType;

std::string describe(const codegen::KernelABI& abi, std::size_t i) {
  return "kernel '" + abi.kernel_name + "' parameter " + std::to_string(i) + " ('" +
         abi.params[i].name + "')";
}

const char* kind_name(const KernelArg& arg) {
  static constexpr const char* kNames[] = {"a buffer", "an int32", "a uint32", "an int64",
                                           "a float"};
  return kNames[arg.index()];
}

template <class T>
void store(BoundArg& bound, T value) {
  std::memcpy(bound.scalar, &value, sizeof(T));
}

void bind_scalar(const codegen::KernelABI& abi, std::size_t i, const KernelArg& arg,
                 BoundArg& bound) {
  const DType t = abi.params[i].dtype;
  if (ir::is_float(t)) {
    double value = std::visit(
        [](const auto& v) -> double {
          if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>)
            return double(v);
          else
            return 0.0;
        },
        arg);
    const float f = static_cast<float>(value);
    if (t == DType::f64)
      store(bound, value);
    else if (ir::is_fp8(t))
      store(bound, ir::float8_encode(t, f));
    else if (t == DType::f32)
      store(bound, f);
    else if (t == DType::f16)
      store(bound, float_to_half_bits(f));
    else
      store(bound, float_to_bfloat_bits(f));
    return;
  }
  if (std::holds_alternative<float>(arg))
    throw UserError(describe(abi, i) + " is " + std::string(ir::dtype_name(t)) +
                    "; an integer value is required, but a float was given");
  const int64_t v = std::visit(
      [](const auto& x) -> int64_t {
        if constexpr (std::is_integral_v<std::decay_t<decltype(x)>>)
          return int64_t(x);
        else
          return 0;
      },
      arg);
  auto require_range = [&](int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      throw UserError(describe(abi, i) + " is " + std::string(ir::dtype_name(t)) + "; the value " +
                      std::to_string(v) + " is out of its range");
  };
  switch (t) {
    case DType::i32:
      require_range(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      store(bound, int32_t(v));
      break;
    case DType::u32:
      require_range(0, std::numeric_limits<uint32_t>::max());
      store(bound, uint32_t(v));
      break;
    case DType::i64:
      store(bound, v);
      break;
    case DType::i1:
      require_range(0, 1);
      store(bound, static_cast<unsigned char>(v));
      break;
    case DType::i8:
      require_range(std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max());
      store(bound, int8_t(v));
      break;
    case DType::u8:
      require_range(0, std::numeric_limits<uint8_t>::max());
      store(bound, uint8_t(v));
      break;
    case DType::i16:
      require_range(std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max());
      store(bound, int16_t(v));
      break;
    case DType::u16:
      require_range(0, std::numeric_limits<uint16_t>::max());
      store(bound, uint16_t(v));
      break;
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
    case DType::f8e4m3:
    case DType::f8e5m2:
      throw InternalError("integer argument bound as float dtype " +
                          std::string(ir::dtype_name(t)));
  }
}

}  // namespace

std::vector<BoundArg> bind_kernel_args(const codegen::KernelABI& abi,
                                       std::span<const KernelArg> args) {
  if (args.size() != abi.params.size())
    throw UserError("kernel '" + abi.kernel_name + "' takes " + std::to_string(abi.params.size()) +
                    " arguments, but " + std::to_string(args.size()) + " were given");
  std::vector<BoundArg> bound(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const AbiParam& p = abi.params[i];
    const bool is_buffer = std::holds_alternative<std::reference_wrapper<Buffer>>(args[i]);
    if (p.kind == AbiParam::Kind::Buffer) {
      if (!is_buffer)
        throw UserError(describe(abi, i) + " is a buffer of " +
                        std::string(ir::dtype_name(p.dtype)) + ", but " + kind_name(args[i]) +
                        " was given");
      Buffer& buffer = std::get<std::reference_wrapper<Buffer>>(args[i]).get();
      if (!buffer.valid()) throw UserError(describe(abi, i) + " was given an empty Buffer handle");
      if (buffer.dtype() && *buffer.dtype() != p.dtype)
        throw UserError(describe(abi, i) + " expects " + std::string(ir::dtype_name(p.dtype)) +
                        " elements, but the buffer holds " +
                        std::string(ir::dtype_name(*buffer.dtype())));
      bound[i].buffer = &buffer;
    } else {
      if (is_buffer)
        throw UserError(describe(abi, i) + " is a scalar " + std::string(ir::dtype_name(p.dtype)) +
                        ", but a buffer was given");
      bind_scalar(abi, i, args[i], bound[i]);
    }
  }
  return bound;
}

}  // namespace metile::runtime
