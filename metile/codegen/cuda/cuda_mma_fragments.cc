#include "metile/codegen/cuda/cuda_mma_fragments.h"

#include "metile/support/errors.h"

namespace metile::codegen::cuda_mma_fragments {

namespace {

constexpr std::string_view kQualifier = "static __device__ __forceinline__";

// The operands hold their 16-bit elements as the 32-bit words mma.sync and ldmatrix move;
// the accumulator holds floats, which elementwise ops reach one by one.
constexpr std::string_view kTypes =
    "template <class T>\n"
    "struct metile_mma_a {\n"
    "  unsigned int w[4];\n"
    "};\n"
    "template <class T>\n"
    "struct metile_mma_b {\n"
    "  unsigned int w[2];\n"
    "};\n"
    "struct metile_mma_c {\n"
    "  float e[4];\n"
    "};\n";

// mma.sync's own lane maps (g = lane / 4, p = lane % 4; each word or float pair two
// neighbours):
//   A 16x16 ([M, K]): words (g, 2p), (g + 8, 2p), (g, 2p + 8), (g + 8, 2p + 8), along k;
//   B 16x8 ([K, N]): words (2p, g), (2p + 8, g), along k;
//   C 16x8 f32: pairs (g, 2p), (g + 8, 2p), along n.
enum class Role { A, B, C };

Role role_of(const ir::Type& t) {
  if (t.shape == std::vector<int64_t>{16, 16} && t.dtype != ir::DType::f32) return Role::A;
  if (t.shape == std::vector<int64_t>{16, 8}) return t.dtype == ir::DType::f32 ? Role::C : Role::B;
  throw InternalError("emit CUDA: " + t.str() + " is not one of mma.sync's fragment shapes");
}

// An operand from threadgroup (shared) memory by ldmatrix: .x4 for A (its four 8x8 blocks),
// .x2 for B (two). Each lane gives the address of one row of one block; .trans where memory
// runs across the register words: B as stored ([K, N], rows along n), A when transposed.
std::string operand_load(Role role, const std::string& T) {
  const bool a = role == Role::A;
  const std::string count = a ? "4" : "2";
  const std::string outputs = a ? "{%0, %1, %2, %3}, [%4]" : "{%0, %1}, [%2]";
  const std::string registers = a ? "\"=r\"(m.w[0]), \"=r\"(m.w[1]), \"=r\"(m.w[2]), \"=r\"(m.w[3])"
                                  : "\"=r\"(m.w[0]), \"=r\"(m.w[1])";
  const std::string instruction = "ldmatrix.sync.aligned.m8n8.x" + count;
  // Lanes 8i .. 8i + 7 address block i's rows, in the register order above.
  const std::string row =
      a ? "transpose ? lane % 8 + 8 * (lane / 16) : lane % 16" : "transpose ? lane % 8 : lane % 16";
  const std::string column =
      a ? "transpose ? 8 * (lane / 8 % 2) : 8 * (lane / 16)" : "transpose ? 8 * (lane / 8 % 2) : 0";
  const std::string trans_when = a ? "transpose" : "!transpose";
  return std::string(kQualifier) + " void metile_mma_load_" + (a ? "a" : "b") + "(metile_mma_" +
         (a ? "a" : "b") + "<" + T + ">& m, const " + T +
         "* p, long long stride, bool transpose) {\n"
         "  const int lane = threadIdx.x % 32u;\n"
         "  const int row = " +
         row + ", column = " + column +
         ";\n"
         "  const unsigned int at =\n"
         "      static_cast<unsigned int>(__cvta_generic_to_shared(p + row * stride + column));\n"
         "  if (" +
         trans_when +
         ")\n"
         "    asm volatile(\"" +
         instruction + ".trans.shared.b16 " + outputs + ";\" : " + registers +
         " : \"r\"(at));\n"
         "  else\n"
         "    asm volatile(\"" +
         instruction + ".shared.b16 " + outputs + ";\" : " + registers +
         " : \"r\"(at));\n"
         "}\n";
}

// The f32 accumulator to or from memory, element by element: once per dot, not per K step.
std::string accumulator_access(bool store) {
  const std::string element = store ? "p[at] = m.e[i];" : "m.e[i] = p[at];";
  return std::string(kQualifier) + " void metile_mma_" + (store ? "store" : "load") + "_c(" +
         (store ? "const " : "") + "metile_mma_c& m, " + (store ? "" : "const ") +
         "float* p, long long stride, bool transpose) {\n"
         "  const int lane = threadIdx.x % 32u;\n"
         "  for (int i = 0; i < 4; ++i) {\n"
         "    const int row = lane / 4 + 8 * (i / 2), column = 2 * (lane % 4) + i % 2;\n"
         "    const long long at = transpose ? column * stride + row : row * stride + column;\n"
         "    " +
         element +
         "\n"
         "  }\n"
         "}\n";
}

std::string mma_helper(std::string_view ptx_type, const std::string& T) {
  const std::string type(ptx_type);
  return std::string(kQualifier) + " void metile_mma_16816(metile_mma_c& d, const metile_mma_a<" +
         T + ">& a, const metile_mma_b<" + T +
         ">& b, const metile_mma_c& c) {\n"
         "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." +
         type + "." + type +
         ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\"\n"
         "               : \"=f\"(d.e[0]), \"=f\"(d.e[1]), \"=f\"(d.e[2]), \"=f\"(d.e[3])\n"
         "               : \"r\"(a.w[0]), \"r\"(a.w[1]), \"r\"(a.w[2]), \"r\"(a.w[3]), "
         "\"r\"(b.w[0]), \"r\"(b.w[1]),\n"
         "                 \"f\"(c.e[0]), \"f\"(c.e[1]), \"f\"(c.e[2]), \"f\"(c.e[3]));\n"
         "}\n";
}

[[noreturn]] void operand_elements(const ir::Type& t) {
  throw NotSupported("emit CUDA: elementwise values of a " + t.str() +
                     " mma.sync operand fragment (its elements are packed words; only "
                     "matrix_load and matrix_mma use it)");
}

}  // namespace

bool is_native(const ir::Type& t) {
  return t.shape != std::vector<int64_t>{8, 8};
}

std::string type(const ir::Type& t, const std::string& element) {
  switch (role_of(t)) {
    case Role::A:
      return "metile_mma_a<" + element + ">";
    case Role::B:
      return "metile_mma_b<" + element + ">";
    case Role::C:
      return "metile_mma_c";
  }
  throw InternalError("emit CUDA: unknown mma.sync fragment role");
}

void declare(Prelude& prelude) {
  prelude.add_type("metile_mma_fragments", std::string(kTypes));
}

std::string element(const ir::Type& t, const std::string& value, const std::string& index) {
  if (role_of(t) != Role::C) operand_elements(t);
  return value + ".e[" + index + "]";
}

std::string fill(const ir::Type& t, const std::string& value) {
  if (role_of(t) != Role::C) operand_elements(t);
  return "metile_mma_c{{" + value + ", " + value + ", " + value + ", " + value + "}}";
}

std::string access(bool store, const ir::Type& t, const std::string& element,
                   const std::string& fragment, const std::string& address,
                   const std::string& stride, bool transpose, Prelude& prelude) {
  const Role role = role_of(t);
  std::string fn;
  if (role == Role::C) {
    fn = store ? "metile_mma_store_c" : "metile_mma_load_c";
    prelude.add(fn.substr(7), t.dtype, accumulator_access(store));
  } else {
    if (store)
      throw NotSupported("emit CUDA: matrix_store of a " + t.str() +
                         " mma.sync operand fragment (operands are only loaded)");
    fn = role == Role::A ? "metile_mma_load_a" : "metile_mma_load_b";
    prelude.add(fn.substr(7), t.dtype, operand_load(role, element));
  }
  return fn + "(" + fragment + ", " + address + ", " + stride + ", " +
         (transpose ? "true" : "false") + ");";
}

std::string mma(const std::string& result, const std::string& a, const std::string& b,
                const std::string& c, const ir::Type& a_type, const std::string& element,
                Prelude& prelude) {
  if (role_of(a_type) != Role::A)
    throw InternalError("emit CUDA: matrix_mma of a " + a_type.str() + " a operand");
  const std::string_view ptx = a_type.dtype == ir::DType::f16 ? "f16" : "bf16";
  prelude.add("mma_16816", a_type.dtype, mma_helper(ptx, element));
  return "metile_mma_16816(" + result + ", " + a + ", " + b + ", " + c + ");";
}

}  // namespace metile::codegen::cuda_mma_fragments
