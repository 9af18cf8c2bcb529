#include "metile/codegen/ptx/ptx_instructions.h"

namespace metile::codegen::ptx {

// "" for the dtypes the PTX route does not render (docs/ptx_route.md).
std::string_view arithmetic_suffix(ir::DType t) {
  switch (t) {
    case ir::DType::f32:
      return "f32";
    case ir::DType::i32:
      return "s32";
    case ir::DType::u32:
      return "u32";
    case ir::DType::i64:
      return "s64";
    case ir::DType::i1:
      return "pred";
    case ir::DType::f16:
    case ir::DType::bf16:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      return "";
  }
  return "";
}

std::string_view bits_suffix(ir::DType t) {
  switch (t) {
    case ir::DType::f32:
    case ir::DType::i32:
    case ir::DType::u32:
      return "b32";
    case ir::DType::i64:
      return "b64";
    case ir::DType::i1:
      return "pred";
    case ir::DType::f16:
    case ir::DType::bf16:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      return "";
  }
  return "";
}

std::string register_type(ir::DType t) {
  const std::string_view suffix = arithmetic_suffix(t);
  return suffix.empty() ? std::string() : "." + std::string(suffix);
}

std::string ex2_approx(bool ftz) {
  return ftz ? "ex2.approx.ftz.f32" : "ex2.approx.f32";
}

std::string shuffle(std::string_view mode) {
  return "shfl.sync." + std::string(mode) + ".b32";
}

}  // namespace metile::codegen::ptx
