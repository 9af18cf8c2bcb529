// The default renderings of matrix fragments: MSL's simdgroup_matrix 8x8, whose lane mapping
// the emitted code never names (it reaches elements only through thread_elements()).
#include "metile/codegen/c_types.h"
#include "metile/codegen/dialect.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {
// MSL's simdgroup_matrix is 8x8 only; the lowering takes mma.sync's shapes on CUDA alone.
void require_8x8(const CDialect& dialect, const ir::Type& t) {
  if (t.shape != std::vector<int64_t>{8, 8})
    throw InternalError("emit " + std::string(dialect.table().language) + ": a " + t.str() +
                        " fragment (only targets with mma.sync take shapes other than 8x8)");
}
}  // namespace

int CDialect::matrix_lane_elements(const ir::Type& t) const {
  return static_cast<int>(table_.matrix_lane_elements * t.num_elements() / 64);
}

std::string CDialect::matrix_type(const ir::Type& type) const {
  require_8x8(*this, type);
  const ir::DType t = type.dtype;
  switch (t) {
    case ir::DType::f16:
      return "simdgroup_half8x8";
    case ir::DType::bf16:
      return "simdgroup_bfloat8x8";
    case ir::DType::f32:
      return "simdgroup_float8x8";
    // A comparison's result has no simdgroup_matrix type: a lane keeps its own conditions,
    // which line up with the elements thread_elements() gives it.
    case ir::DType::i1:
      return "bool" + std::to_string(table_.matrix_lane_elements);
    case ir::DType::i32:
    case ir::DType::u32:
    case ir::DType::i64:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      break;
  }
  throw InternalError("emit " + std::string(table_.language) + ": a matrix fragment of " +
                      std::string(ir::dtype_name(t)) + " (the verifier allows floats and i1)");
}

void CDialect::declare_matrix(const ir::Type&, Prelude&) const {}

std::string CDialect::matrix_element(const std::string& value, const ir::Type& t,
                                     const std::string& index) const {
  if (t.dtype == ir::DType::i1) return value + "[" + index + "]";
  return value + ".thread_elements()[" + index + "]";
}

std::string CDialect::matrix_fill(const ir::Type& t, const std::string& value) const {
  if (t.dtype == ir::DType::i1) return matrix_type(t) + "(" + value + ")";
  require_8x8(*this, t);
  return "make_filled_simdgroup_matrix<" + std::string(scalar_type(t.dtype)) + ", 8, 8>(" + value +
         ")";
}

std::string CDialect::matrix_load(const std::string& result, const ir::Type& t,
                                  const std::string& address, const std::string& stride,
                                  bool transpose, Prelude&) const {
  require_8x8(*this, t);
  return "simdgroup_load(" + result + ", " + address + ", " + convert("ulong", stride) +
         ", ulong2(0, 0), " + (transpose ? "true" : "false") + ");";
}

std::string CDialect::matrix_store(const std::string& value, const ir::Type& t,
                                   const std::string& address, const std::string& stride,
                                   bool transpose, Prelude&) const {
  require_8x8(*this, t);
  return "simdgroup_store(" + value + ", " + address + ", " + convert("ulong", stride) +
         ", ulong2(0, 0), " + (transpose ? "true" : "false") + ");";
}

// Apple's matrix multiply has no TF32 mode: tf32 allows rounding, it does not require it.
std::string CDialect::matrix_mma(const std::string& result, const std::string& a,
                                 const std::string& b, const std::string& c, const ir::Type& a_type,
                                 bool, Prelude&) const {
  require_8x8(*this, a_type);
  return "simdgroup_multiply_accumulate(" + result + ", " + a + ", " + b + ", " + c + ");";
}

std::string CDialect::async_statement(const ir::Op& op, const std::vector<std::string>&,
                                      const std::vector<std::string>&, ir::DType, Prelude&) const {
  throw InternalError("emit " + std::string(table_.language) + ": " +
                      std::string(ir::op_name(op.kind)) +
                      " is an sm90 asynchronous pipeline op, which only the CUDA dialect renders");
}

std::string CDialect::async_copy(const std::string& src, const std::string& dst,
                                 const std::string& pred, ir::DType t, int64_t elements,
                                 Prelude&) const {
  const std::string zero = type_name(ir::Type::scalar(t), *this) + "(0.0f)";
  std::string text;
  for (int64_t e = 0; e < elements; ++e) {
    const std::string at = "[" + std::to_string(e) + "]";
    text += std::string(e ? " " : "") + dst + at + " = " +
            (pred.empty() ? src + at : pred + " ? " + src + at + " : " + zero) + ";";
  }
  return text;
}

std::string CDialect::async_copy_commit() const {
  return "// async_copy_commit: the copies above are complete";
}

std::string CDialect::async_copy_wait(int64_t pending) const {
  return "// async_copy_wait " + std::to_string(pending) + ": nothing is in flight";
}

std::string CDialect::entry_qualifier(int64_t, size_t tensor_maps) const {
  if (tensor_maps)
    throw InternalError("emit " + std::string(table_.language) +
                        ": tensor map parameters are CUDA's alone");
  return std::string(table_.entry_qualifier);
}

std::string CDialect::tensor_map_param(int64_t, bool) const {
  throw InternalError("emit " + std::string(table_.language) +
                      ": tensor map parameters are CUDA's alone");
}

std::string CDialect::tensor_map_argument(int64_t) const {
  throw InternalError("emit " + std::string(table_.language) +
                      ": tensor map parameters are CUDA's alone");
}

bool CDialect::declare_recorded_bounds_checks(Prelude&) const {
  return false;
}

}  // namespace metile::codegen
