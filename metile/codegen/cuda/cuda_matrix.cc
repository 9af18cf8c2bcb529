#include "metile/codegen/cuda/cuda_matrix.h"

#include "metile/support/errors.h"

namespace metile::codegen::cuda_matrix {

namespace {

constexpr std::string_view kQualifier = "static __device__ __forceinline__";

// The fragment's lane map, which only these helpers know: lane l holds row l / 4, columns
// 2 * (l % 4) and the one after it. It is the top half of mma.sync's m16n8 accumulator, so
// the mma's C and D need no movement.
constexpr std::string_view kFragment =
    "template <class T>\n"
    "struct metile_fragment {\n"
    "  T e[2];\n"
    "};\n";

std::string element_type(const CDialect& dialect, ir::DType t) {
  return std::string(dialect.scalar_type(t));
}

// f16 and bf16: mma.sync m16n8k8, whose input elements travel as their bits.
std::string mma_helper_f16(std::string_view ptx_type, const std::string& T) {
  // B's mma layout holds b[2 * pair + i][group]: fetched from lane 4 * (2 * pair + i) +
  // group / 2, element group % 2. Rows 8..15 of A are zero.
  return std::string(kQualifier) + " void metile_matrix_mma(metile_fragment<float>& d, " +
         "const metile_fragment<" + T + ">& a, const metile_fragment<" + T +
         ">& b, const metile_fragment<float>& c) {\n"
         "  const int lane = threadIdx.x % 32u, group = lane / 4, pair = lane % 4;\n"
         "  unsigned int column[2];\n"
         "  for (int i = 0; i < 2; ++i) {\n"
         "    const int source = 4 * (2 * pair + i) + group / 2;\n"
         "    const unsigned int e0 = __shfl_sync(0xffffffffu, (unsigned int)b.e[0].bits, "
         "source);\n"
         "    const unsigned int e1 = __shfl_sync(0xffffffffu, (unsigned int)b.e[1].bits, "
         "source);\n"
         "    column[i] = group % 2 ? e1 : e0;\n"
         "  }\n"
         "  const unsigned int a0 = (unsigned int)a.e[0].bits | ((unsigned int)a.e[1].bits << "
         "16);\n"
         "  const unsigned int b0 = column[0] | (column[1] << 16);\n"
         "  float d2, d3;\n"
         "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32." +
         std::string(ptx_type) + "." + std::string(ptx_type) +
         ".f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\"\n"
         "               : \"=f\"(d.e[0]), \"=f\"(d.e[1]), \"=f\"(d2), \"=f\"(d3)\n"
         "               : \"r\"(a0), \"r\"(0u), \"r\"(b0), \"f\"(c.e[0]), \"f\"(c.e[1]), "
         "\"f\"(0.0f), \"f\"(0.0f));\n"
         "}\n";
}

// f32 (ieee precision): each element is c plus the eight products in k order, one
// fused multiply-add each, with a's row and b's column gathered by shuffles.
std::string mma_helper_exact() {
  return std::string(kQualifier) +
         " void metile_matrix_mma(metile_fragment<float>& d, const metile_fragment<float>& a, "
         "const metile_fragment<float>& b, const metile_fragment<float>& c) {\n"
         "  const int lane = threadIdx.x % 32u, row = lane / 4, pair = lane % 4;\n"
         "  float sum0 = c.e[0], sum1 = c.e[1];\n"
         "#pragma unroll\n"
         "  for (int k = 0; k < 8; ++k) {\n"
         "    const float x = __shfl_sync(0xffffffffu, a.e[k % 2], 4 * row + k / 2);\n"
         "    sum0 = fmaf(x, __shfl_sync(0xffffffffu, b.e[0], 4 * k + pair), sum0);\n"
         "    sum1 = fmaf(x, __shfl_sync(0xffffffffu, b.e[1], 4 * k + pair), sum1);\n"
         "  }\n"
         "  d.e[0] = sum0;\n"
         "  d.e[1] = sum1;\n"
         "}\n";
}

// f32 with tf32 precision: mma.sync m16n8k8 on TF32. A's mma layout holds
// a[group][pair] and a[group][pair + 4] (rows 8..15 zero), B's b[pair][group] and
// b[pair + 4][group].
std::string mma_helper_tf32() {
  return std::string(kQualifier) +
         " unsigned int metile_tf32(float f) {\n"
         "  unsigned int r;\n"
         "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(f));\n"
         "  return r;\n"
         "}\n" +
         std::string(kQualifier) +
         " float metile_fragment_at(const metile_fragment<float>& m, int row, int column) {\n"
         "  const float e0 = __shfl_sync(0xffffffffu, m.e[0], 4 * row + column / 2);\n"
         "  const float e1 = __shfl_sync(0xffffffffu, m.e[1], 4 * row + column / 2);\n"
         "  return column % 2 ? e1 : e0;\n"
         "}\n" +
         std::string(kQualifier) +
         " void metile_matrix_mma_tf32(metile_fragment<float>& d, const metile_fragment<float>& "
         "a, const metile_fragment<float>& b, const metile_fragment<float>& c) {\n"
         "  const int lane = threadIdx.x % 32u, group = lane / 4, pair = lane % 4;\n"
         "  const unsigned int a0 = metile_tf32(metile_fragment_at(a, group, pair));\n"
         "  const unsigned int a2 = metile_tf32(metile_fragment_at(a, group, pair + 4));\n"
         "  const unsigned int b0 = metile_tf32(metile_fragment_at(b, pair, group));\n"
         "  const unsigned int b1 = metile_tf32(metile_fragment_at(b, pair + 4, group));\n"
         "  float d2, d3;\n"
         "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
         "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\"\n"
         "               : \"=f\"(d.e[0]), \"=f\"(d.e[1]), \"=f\"(d2), \"=f\"(d3)\n"
         "               : \"r\"(a0), \"r\"(0u), \"r\"(a2), \"r\"(0u), \"r\"(b0), \"r\"(b1), "
         "\"f\"(c.e[0]), \"f\"(c.e[1]), \"f\"(0.0f), \"f\"(0.0f));\n"
         "}\n";
}

}  // namespace

std::string type(ir::DType t, const CDialect& dialect) {
  return "metile_fragment<" + element_type(dialect, t) + ">";
}

void declare(Prelude& prelude) {
  prelude.add_type("metile_fragment", std::string(kFragment));
}

std::string element(const std::string& value, const std::string& index) {
  return value + ".e[" + index + "]";
}

std::string fill(ir::DType t, const std::string& value, const CDialect& dialect) {
  return type(t, dialect) + "{{" + value + ", " + value + "}}";
}

std::string access(bool store, ir::DType t, const std::string& fragment, const std::string& address,
                   const std::string& stride, bool transpose, const CDialect& dialect,
                   Prelude& prelude) {
  const std::string T = element_type(dialect, t);
  const std::string fn = store ? "metile_matrix_store" : "metile_matrix_load";
  const std::string element = store ? "p[at] = m.e[i];" : "m.e[i] = p[at];";
  prelude.add(fn.substr(dialect.table().helper_prefix.size()), t,
              std::string(kQualifier) + " void " + fn + "(" + (store ? "const " : "") +
                  "metile_fragment<" + T + ">& m, " + (store ? "" : "const ") + T +
                  "* p, long long stride, bool transpose) {\n"
                  "  const int lane = threadIdx.x % 32u, row = lane / 4, column = 2 * (lane % "
                  "4);\n"
                  "  for (int i = 0; i < 2; ++i) {\n"
                  "    const long long at = transpose ? (column + i) * stride + row : row * "
                  "stride + column + i;\n"
                  "    " +
                  element +
                  "\n"
                  "  }\n"
                  "}\n");
  return fn + "(" + fragment + ", " + address + ", " + stride + ", " +
         (transpose ? "true" : "false") + ");";
}

std::string mma(const std::string& result, const std::string& a, const std::string& b,
                const std::string& c, ir::DType t, bool tf32, const CDialect& dialect,
                Prelude& prelude) {
  std::string fn = "metile_matrix_mma";
  switch (t) {
    case ir::DType::f16:
      prelude.add("matrix_mma", t, mma_helper_f16("f16", element_type(dialect, t)));
      break;
    case ir::DType::bf16:
      prelude.add("matrix_mma", t, mma_helper_f16("bf16", element_type(dialect, t)));
      break;
    case ir::DType::f32:
      if (tf32) {
        prelude.add("matrix_mma_tf32", t, mma_helper_tf32());
        fn = "metile_matrix_mma_tf32";
      } else {
        prelude.add("matrix_mma", t, mma_helper_exact());
      }
      break;
    case ir::DType::i32:
    case ir::DType::u32:
    case ir::DType::i64:
    case ir::DType::i1:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      throw InternalError("emit CUDA: matrix_mma of " + std::string(ir::dtype_name(t)) +
                          " fragments (the verifier allows floats only)");
  }
  return fn + "(" + result + ", " + a + ", " + b + ", " + c + ");";
}

}  // namespace metile::codegen::cuda_matrix
