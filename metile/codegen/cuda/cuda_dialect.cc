#include "metile/codegen/cuda/cuda_dialect.h"

#include <cctype>

#include "metile/codegen/c_types.h"
#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/codegen/cuda/cuda_matrix.h"
#include "metile/codegen/cuda/cuda_mma_fragments.h"
#include "metile/codegen/cuda/cuda_wgmma.h"
#include "metile/codegen/literals.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// CUDA words a local could clash with, beyond the C++ keywords and the table's own names.
constexpr std::string_view kCudaReserved[] = {
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3",   "uint",  "uint1",
    "uint2",     "uint3",    "uint4",    "min",     "max",      "abs",    "llabs", "char",
    "short",     "size_t",   "half",     "bfloat",  "asm",      "float2", "float4"};
constexpr std::string_view kCudaReservedPrefixes[] = {"nv_", "cuda"};

// The fast variants of the float math functions, indexed by MathFn. sqrtf and rsqrtf have no
// faster intrinsic (rsqrtf is already the 2-ulp approximation). The exponentials are prelude
// helpers (fast_exponential): __expf without -ftz keeps denormal results, which costs ptxas
// a rescaling around each ex2 (on the H200, 6% of a 16-bit softmax's bandwidth).
constexpr std::array<std::string_view, kMathFnCount> kFastFloatMath = {
    "fabsf",  "fminf", "fmaxf",  "fmodf",   "floorf", "metile_fast_exp", "metile_fast_exp2",
    "__logf", "sqrtf", "rsqrtf", "__tanhf", "__sinf", "__cosf",          "ceilf"};
// The helper `name` of the fast exp (exponent "x * 1.4426950408889634f", scaled by log2(e)
// as __expf and Triton's exp do) or exp2 (exponent "x"): ex2.approx.ftz, 2 ulp on normal
// results, a denormal result flushed to zero.
std::string fast_exponential(std::string_view name, std::string_view exponent) {
  return "static __device__ __forceinline__ float " + std::string(name) +
         "(float x) {\n"
         "  float y;\n"
         "  asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(" +
         std::string(exponent) +
         "));\n"
         "  return y;\n"
         "}\n";
}
// The integer overloads, indexed by MathFn: the walker's integer abs, min and max (i64's abs
// is llabs); "" where integers take no math function.
constexpr std::array<std::string_view, kMathFnCount> kIntegerMath = {"abs", "min", "max"};

// The cache-hinted accesses (CDialect::hinted_load): Triton's form of an eviction_policy,
// an L1 eviction priority and an L2 cache policy made by createpolicy, in inline PTX moving
// the value's bytes as 32-bit words (16-bit for the narrow scalars; buffers hold no bool) through a
// union (NVRTC has no memcpy), so one template serves every scalar and packed vector type. The
// memory clobber keeps the accesses in order with the kernel's other ones, as plain ones are.
struct HintedWidth {
  int bytes;
  std::string_view suffix;  // the PTX vector and type suffix
  int words;                // registers moved
  std::string_view word;    // their C type
  std::string_view constraint;
};
constexpr HintedWidth kHintedWidths[] = {{16, ".v4.b32", 4, "unsigned int", "r"},
                                         {8, ".v2.b32", 2, "unsigned int", "r"},
                                         {4, ".b32", 1, "unsigned int", "r"},
                                         {2, ".b16", 1, "unsigned short", "h"}};

// "%first" to "%(first + count - 1)", braced when more than one: an asm vector operand.
std::string asm_registers(int first, int count) {
  std::string list;
  for (int i = 0; i < count; ++i) list += (i ? ", %" : "%") + std::to_string(first + i);
  return count > 1 ? "{" + list + "}" : list;
}

// The union's words as asm operands: "=r"(u.w[0]), ... (outputs) or "r"(u.w[0]), ...
std::string asm_words(const HintedWidth& w, bool outputs) {
  std::string list;
  for (int i = 0; i < w.words; ++i)
    list += std::string(i ? ", " : "") + "\"" + (outputs ? "=" : "") + std::string(w.constraint) +
            "\"(u.w[" + std::to_string(i) + "])";
  return list;
}

// One width's branch: the value's bytes as words, moved by one hinted ld or st.
std::string hinted_branch(const HintedWidth& w, const std::string& eviction, bool load) {
  const std::string op = std::string(load ? "ld" : "st") + ".global.L1::" + eviction +
                         ".L2::cache_hint" + std::string(w.suffix);
  // A load's words are operands 0..words-1 and its address the next; a store's address is 0.
  const std::string access =
      load ? op + " " + asm_registers(0, w.words) + ", [%" + std::to_string(w.words) + "]"
           : op + " [%0], " + asm_registers(1, w.words);
  const std::string operands =
      load ? asm_words(w, true) + " : \"l\"(a)" : ": \"l\"(a), " + asm_words(w, false);
  return "    union {\n      T v;\n      " + std::string(w.word) + " w[" + std::to_string(w.words) +
         "];\n    } u" + (load ? "" : "{v}") + ";\n" +
         "    asm volatile(\"{ .reg .b64 p; createpolicy.fractional.L2::" + eviction +
         ".b64 p, 1.0; " + access + ", p; }\" : " + operands + " : \"memory\");\n" +
         (load ? "    return u.v;\n" : "");
}

// The template metile_load_<eviction><T>(address) or metile_store_<eviction><T>(address,
// value): a branch per width, chosen by sizeof(T).
std::string hinted_helper(const std::string& eviction, bool load) {
  std::string text = "template <typename T>\nstatic __device__ __forceinline__ " +
                     std::string(load ? "T metile_load_" : "void metile_store_") + eviction +
                     (load ? "(const void* a) {\n" : "(void* a, T v) {\n");
  for (const HintedWidth& w : kHintedWidths)
    text += std::string(w.bytes == kHintedWidths[0].bytes ? "  if" : "  } else if") +
            " constexpr (sizeof(T) == " + std::to_string(w.bytes) + ") {\n" +
            hinted_branch(w, eviction, load);
  return text + "  }\n}\n";
}

constexpr DialectTable kCuda{
    .language = "CUDA",
    // NVRTC's built-ins (threadIdx, __shfl_sync, expf, ...) are all the source needs: no
    // include keeps the cold compile short.
    .header = "// CUDA C++ from meTile: NVRTC built-ins only, no includes.\n",
    // f16, bf16, f32, i32, u32, i64, i1, i8, u8, i16, u16, f64, f8e4m3, f8e5m2 (the order of
    // ir::DType); the two 16-bit floats are the prelude's own types (declare_dtype), an fp8
    // value is its byte. `char` may be unsigned: i8 is `signed char`.
    .scalar_types = {"metile_half", "metile_bfloat16", "float", "int", "unsigned int", "long long",
                     "bool", "signed char", "unsigned char", "short", "unsigned short", "double",
                     "unsigned char", "unsigned char"},
    // Arithmetic on the narrow floats happens in float; so does their math.
    .math_in_float = {true, true, false, false, false, false, false, false, false, false, false,
                      false, false, false},
    // The narrow floats convert to and from float only (fp8: CDialect::cast).
    .cast_via_float = {true, true, false, false, false, false, false, false, false, false, false,
                       false, false, false},
    .device_space = "",
    .threadgroup_space = "",
    .body_qualifier = "static __device__ __forceinline__",
    // extern "C" keeps the name unmangled, so the driver finds the entry by the kernel's name.
    .entry_qualifier = "extern \"C\" __global__ void",
    .scalar_entry_prefix = "",
    .scalar_entry_suffix = "",
    .binding_prefix = "",
    .binding_suffix = "",
    // Dynamic shared memory: the runtime gives KernelABI::threadgroup_bytes at launch (and
    // opts in above 48 KB with cuFuncSetAttribute).
    .block_declaration = "extern __shared__ __align__(16) unsigned char",
    .block_name = "tg_mem",
    .block_attributes = "",
    .block_dynamic = true,
    .block_type = "unsigned char*",
    // Blocks are 1-D (KernelABI::threads_per_threadgroup is {n, 1, 1}), so a thread's lane in
    // its warp of 32 is threadIdx.x % 32.
    .geometry = {{
        {"threadgroup_position_in_grid", "uint3", "", "blockIdx"},
        {"threadgroups_per_grid", "uint3", "", "gridDim"},
        {"thread_position_in_threadgroup", "uint3", "", "threadIdx"},
        {"threads_per_threadgroup", "uint3", "", "blockDim"},
        {"simd_lane", "unsigned int", "", "threadIdx.x % 32u"},
        {"simd_group", "unsigned int", "", "threadIdx.x / 32u"},
    }},
    .math_functions = {"fabsf", "fminf", "fmaxf", "fmodf", "floorf", "expf", "exp2f", "logf",
                       "sqrtf", "rsqrtf", "tanhf", "sinf", "cosf", "ceilf"},
    .fast_math_prefix = "",
    .precise_math_prefix = "",
    // __shfl_down_sync, like MSL's simd_shuffle_down, leaves a lane whose source is past the
    // warp with its own value.
    .collectives = {"metile_simd_sum", "metile_simd_max", "metile_simd_min", "__shfl_sync",
                    "__shfl_xor_sync", "__shfl_sync", "__shfl_down_sync"},
    // The narrow floats travel through the shuffles as float, 8- and 16-bit integers and fp8
    // bytes as int, doubles as themselves (__shfl_sync has a double overload); i64 and bool
    // values are rejected, as in MSL.
    .collective_routes = {Route::ViaFloat, Route::ViaFloat, Route::Direct, Route::Direct,
                          Route::Direct, Route::Unsupported, Route::Unsupported, Route::ViaInt,
                          Route::ViaInt, Route::ViaInt, Route::ViaInt, Route::Direct, Route::ViaInt,
                          Route::ViaInt},
    .lane_type = "int",
    // Every lane of the warp takes part (the IR's collectives are convergent).
    .collective_members = "0xffffffffu",
    // __syncthreads and __syncwarp order every memory for the threads they wait for.
    .threadgroup_barrier = "__syncthreads",
    .simdgroup_barrier = "__syncwarp",
    .barrier_mem = {"", "", "", ""},
    .nan_literal = "__int_as_float(0x7fffffff)",
    .infinity_literal = "__int_as_float(0x7f800000)",
    .vector_values = false,
    .vector_select = "",
    .pointer_integer_type = "unsigned long long",
    .helper_prefix = "metile_",
    .float_as_bits = "__float_as_uint",
    .bits_as_float = "__uint_as_float",
    .trap_statement = "__trap();",
    .matrix_lane_elements = 2,
    .reserved_words = kCudaReserved,
    .reserved_prefixes = kCudaReservedPrefixes,
};

// The narrow floats as their bits: conversions are the PTX cvt instructions (bf16 to float is
// exact as a shift), and arithmetic goes through float, one rounding per operation as MSL's
// half and bfloat round. cuda_fp16.h and cuda_bf16.h would double NVRTC's compile time.
constexpr std::string_view kHalfType =
    "struct metile_half {\n"
    "  unsigned short bits;\n"
    "  metile_half() = default;\n"
    "  __device__ metile_half(float f) { asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(bits) : "
    "\"f\"(f)); }\n"
    "  __device__ operator float() const {\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(bits));\n"
    "    return f;\n"
    "  }\n"
    "};\n";
constexpr std::string_view kBfloat16Type =
    "struct metile_bfloat16 {\n"
    "  unsigned short bits;\n"
    "  metile_bfloat16() = default;\n"
    "  __device__ metile_bfloat16(float f) { asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(bits) : "
    "\"f\"(f)); }\n"
    "  __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(bits) "
    "<< 16); }\n"
    "};\n";

class CudaDialect final : public CDialect {
 public:
  CudaDialect() : CDialect(kCuda) {}

  void require_dtype(ir::DType t, const target::Target& target) const override {
    if (t == ir::DType::bf16 && !target.supports_bf16)
      throw UserError("bf16 needs sm_80 or newer (target " + target.name + ")");
  }

  void declare_dtype(ir::DType t, Prelude& prelude) const override {
    if (t == ir::DType::f16) prelude.add_type("metile_half", std::string(kHalfType));
    if (t == ir::DType::bf16) prelude.add_type("metile_bfloat16", std::string(kBfloat16Type));
  }

  // float's vectors are CUDA's built-in float2/float4, aligned to their size. The narrow
  // floats' are prelude structs of 32-bit words aligned to theirs, so one access moves the
  // whole vector and a join of two of them (a grouped load and its fallback) stays in whole
  // registers: ptxas unpacks a join of 16-bit values into one register each, with a PRMT per
  // element, where it reads the halves of a loaded word in place.
  std::string packed_vector_type(ir::DType t, int64_t width, Prelude& prelude) const override {
    if (t == ir::DType::f32) return "float" + std::to_string(width);
    const std::string element(scalar_type(t));
    const std::string name = element + "x" + std::to_string(width);
    const std::string words = std::to_string(width / 2);
    prelude.add_type(name, "struct __align__(" + std::to_string(width * ir::dtype_bytes(t)) + ") " +
                               name + " {\n  unsigned int w[" + words + "];\n};\n");
    prelude.add_type(element + "_words",
                     "static __device__ __forceinline__ unsigned int " + element + "_pair(" +
                         element + " lo, " + element +
                         " hi) {\n  return static_cast<unsigned int>(lo.bits) | "
                         "(static_cast<unsigned int>(hi.bits) << 16);\n}\n"
                         "static __device__ __forceinline__ " +
                         element + " " + element + "_of_bits(unsigned int w) {\n  " + element +
                         " v;\n  v.bits = static_cast<unsigned short>(w);\n  return v;\n}\n");
    return name;
  }

  // CUDA's vectors are aggregates: brace initialisation, not a constructor call; the narrow
  // floats' pair up into words.
  std::string packed_literal(ir::DType t, const std::string& type,
                             const std::vector<std::string>& elements) const override {
    if (t == ir::DType::f32) {
      std::string text = type + "{";
      for (size_t i = 0; i < elements.size(); ++i) text += (i ? ", " : "") + elements[i];
      return text + "}";
    }
    const std::string element(scalar_type(t));
    std::string text = type + "{{";
    for (size_t i = 0; i + 1 < elements.size(); i += 2)
      text += (i ? ", " : "") + element + "_pair(" + elements[i] + ", " + elements[i + 1] + ")";
    return text + "}}";
  }

  // One st.global.v* in inline PTX: NVVM splits a store of a CUDA vector aggregate into its
  // elements and, where the grouped store's fallback stores the same elements unmasked (a
  // shape compiled in), merges the two branches into the scalar stores.
  std::string packed_store(ir::DType t, int64_t width, const std::string& type,
                           const std::string& ptr, const std::string& value,
                           Prelude& prelude) const override {
    // f32 vectors store their fields, the narrow floats' structs their 32-bit words.
    const bool floats = t == ir::DType::f32;
    std::vector<std::string> operands;
    for (int64_t i = 0; i < (floats ? width : width / 2); ++i)
      operands.push_back(floats ? "\"f\"(v." + std::string(1, "xyzw"[i]) + ")"
                                : "\"r\"(v.w[" + std::to_string(i) + "])");
    std::string registers, inputs;
    for (size_t i = 0; i < operands.size(); ++i) {
      registers += (i ? ", %" : "%") + std::to_string(i + 1);
      inputs += ", " + operands[i];
    }
    const std::string instruction =
        "st.global" + (operands.size() == 1 ? "" : ".v" + std::to_string(operands.size())) +
        (floats ? ".f32" : ".u32");
    prelude.add("metile_packed_store_" + type, t,
                "static __device__ __forceinline__ void metile_packed_store(void* p, " + type +
                    " v) {\n  asm volatile(\"" + instruction + " [%0], " +
                    (operands.size() == 1 ? registers : "{" + registers + "}") + ";\" :: \"l\"(p)" +
                    inputs + " : \"memory\");\n}\n");
    return "metile_packed_store(" + ptr + ", " + value + ");";
  }

  std::optional<std::string> hinted_load(const std::string& type, const std::string& ptr,
                                         const std::string& eviction,
                                         Prelude& prelude) const override {
    prelude.add("metile_load_" + eviction, ir::DType::i1, hinted_helper(eviction, true));
    return "metile_load_" + eviction + "<" + type + ">(" + ptr + ")";
  }

  std::optional<std::string> hinted_store(const std::string& type, const std::string& ptr,
                                          const std::string& value, const std::string& eviction,
                                          Prelude& prelude) const override {
    prelude.add("metile_store_" + eviction, ir::DType::i1, hinted_helper(eviction, false));
    return "metile_store_" + eviction + "<" + type + ">(" + ptr + ", " + value + ");";
  }

  std::string packed_element(ir::DType t, const std::string& vector, int64_t index) const override {
    if (t == ir::DType::f32) return CDialect::packed_element(t, vector, index);
    const std::string word = vector + ".w[" + std::to_string(index / 2) + "]";
    return std::string(scalar_type(t)) + "_of_bits(" + (index % 2 ? word + " >> 16" : word) + ")";
  }

  // `unsigned int(x)` is not C++: two-word types convert with static_cast.
  std::string convert(const std::string& to, const std::string& expr) const override {
    if (to.find(' ') != std::string::npos) return "static_cast<" + to + ">(" + expr + ")";
    return CDialect::convert(to, expr);
  }

  std::string math_call(MathFn fn, bool fast, const ir::Type& t,
                        const std::vector<std::string>& args, Prelude& prelude) const override {
    // CUDA has no abs of an unsigned value, which is the value itself.
    if (fn == MathFn::Abs && (t.dtype == ir::DType::u32 || t.dtype == ir::DType::u8))
      return args.at(0);
    if (fast && (fn == MathFn::Exp || fn == MathFn::Exp2)) {
      const std::string_view name = kFastFloatMath[static_cast<size_t>(fn)];
      prelude.add(name, ir::DType::f32,
                  fast_exponential(name, fn == MathFn::Exp ? "x * 1.4426950408889634f" : "x"));
    }
    return CDialect::math_call(fn, fast, t, args, prelude);
  }

  // The float names (the fast intrinsics when fast), or the integer overloads.
  std::string math_function(MathFn fn, bool fast, ir::DType t) const override {
    const size_t i = static_cast<size_t>(fn);
    if (t == ir::DType::f32)
      return std::string(fast ? kFastFloatMath[i] : table().math_functions[i]);
    // f64: the double functions, the float names without their f (fabsf -> fabs); CUDA has
    // no fast double variants.
    if (t == ir::DType::f64) {
      const std::string_view name = table().math_functions[i];
      return std::string(name.substr(0, name.size() - 1));
    }
    if (fn == MathFn::Abs && t == ir::DType::i64) return "llabs";
    if (kIntegerMath[i].empty())
      throw InternalError("emit CUDA: math function " + std::to_string(i) + " on " +
                          std::string(ir::dtype_name(t)) + " values");
    return std::string(kIntegerMath[i]);
  }

  // The reductions are prelude helpers; the shuffles are the table's built-ins.
  std::string collective(Collective c, const ir::Type& t, const std::string& value,
                         const std::string& lane, Prelude& prelude) const override {
    if (lane.empty()) add_warp_reduction(c, collective_dtype(t.dtype), prelude);
    return CDialect::collective(c, t, value, lane, prelude);
  }

  // device_assert: the report on the device's stdout (what CUDA offers), then a trap, which the
  // launch reports as an illegal instruction.
  std::string assert_failed(const std::string& kernel, const std::string& message,
                            const SourceLocation& where, const std::string& thread) const override {
    std::string site;
    for (const char c : where.known() ? where.str() + ": " : std::string())
      site += c == '%' ? std::string("%%") : std::string(1, c);
    return "{ printf(" +
           string_literal(site + "device_assert failed in kernel '" + kernel +
                          "' (block (%u, %u, %u), thread %d): %s\n") +
           ", blockIdx.x, blockIdx.y, blockIdx.z, " + thread + ", " + message + "); __trap(); }";
  }
  std::string print(const std::string& format,
                    const std::vector<std::string>& args) const override {
    std::string call = "printf(" + format;
    for (const std::string& a : args) call += ", " + a;
    return call + ");";
  }

  // Matrix fragments: 8x8 in cuda_matrix.h, mma.sync's native shapes in cuda_mma_fragments.h.
  std::string inline_asm(const std::string& result, const ir::Type& result_type,
                         const std::vector<std::pair<std::string, ir::Type>>& operands,
                         const std::string& assembly, const std::string& constraints,
                         bool pure) const override {
    std::vector<std::string> codes;
    for (size_t begin = 0;;) {
      const size_t comma = constraints.find(',', begin);
      codes.push_back(constraints.substr(begin, comma - begin));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (codes.size() != operands.size() + 1 || codes[0].empty() || codes[0][0] != '=')
      throw UserError("inline_asm_elementwise: the constraints \"" + constraints +
                      "\" must name one output (\"=r\", first) and one input per argument (" +
                      std::to_string(operands.size()) + ")");
    // LLVM's operand references ($0, $1; $$ a dollar) become GCC's (%0, %1), and PTX's own %
    // (registers, %tid.x) is written %%.
    std::string text;
    for (size_t i = 0; i < assembly.size(); ++i) {
      const char c = assembly[i];
      if (c == '%') {
        text += "%%";
      } else if (c == '$' && i + 1 < assembly.size() && assembly[i + 1] == '$') {
        text += '$';
        ++i;
      } else if (c == '$' && i + 1 < assembly.size() &&
                 std::isdigit(static_cast<unsigned char>(assembly[i + 1]))) {
        text += '%';
      } else {
        text += c;
      }
    }
    // A float in an integer register ("h", "r", "l") travels as its bits, as Triton's
    // operands do (LLVM bitcasts them).
    auto operand = [](const std::string& code, const std::string& value, const ir::Type& t,
                      bool output) {
      const char letter = code.empty() ? ' ' : code.back();
      const char* bits = letter == 'h'   ? "unsigned short"
                         : letter == 'r' ? "unsigned int"
                         : letter == 'l' ? "unsigned long long"
                                         : nullptr;
      const std::string passed = ir::is_float(t.dtype) && bits
                                     ? std::string("*reinterpret_cast<") +
                                           (output ? "" : "const ") + bits + "*>(&" + value + ")"
                                     : value;
      return string_literal(code) + "(" + passed + ")";
    };
    std::string inputs;
    for (size_t i = 0; i < operands.size(); ++i)
      inputs += std::string(i ? ", " : "") +
                operand(codes[i + 1], operands[i].first, operands[i].second, false);
    return std::string("asm") + (pure ? "" : " volatile") + "(" + string_literal(text) + " : " +
           operand(codes[0], result, result_type, true) + " : " + inputs + ");";
  }

  std::string matrix_type(const ir::Type& t) const override {
    return cuda_mma_fragments::is_native(t)
               ? cuda_mma_fragments::type(t, std::string(scalar_type(t.dtype)))
               : cuda_matrix::type(t.dtype, *this);
  }
  void declare_matrix(const ir::Type& t, Prelude& prelude) const override {
    if (cuda_mma_fragments::is_native(t)) return cuda_mma_fragments::declare(prelude);
    cuda_matrix::declare(prelude);
  }
  std::string matrix_element(const std::string& value, const ir::Type& t,
                             const std::string& index) const override {
    if (cuda_mma_fragments::is_native(t)) return cuda_mma_fragments::element(t, value, index);
    return cuda_matrix::element(value, index);
  }
  std::string matrix_fill(const ir::Type& t, const std::string& value) const override {
    if (cuda_mma_fragments::is_native(t)) return cuda_mma_fragments::fill(t, value);
    return cuda_matrix::fill(t.dtype, value, *this);
  }
  std::string matrix_load(const std::string& result, const ir::Type& t, const std::string& address,
                          const std::string& stride, bool transpose,
                          Prelude& prelude) const override {
    return matrix_access(false, t, result, address, stride, transpose, prelude);
  }
  std::string matrix_store(const std::string& value, const ir::Type& t, const std::string& address,
                           const std::string& stride, bool transpose,
                           Prelude& prelude) const override {
    return matrix_access(true, t, value, address, stride, transpose, prelude);
  }
  std::string matrix_mma(const std::string& result, const std::string& a, const std::string& b,
                         const std::string& c, const ir::Type& a_type, bool tf32,
                         Prelude& prelude) const override {
    if (cuda_mma_fragments::is_native(a_type))
      return cuda_mma_fragments::mma(result, a, b, c, a_type,
                                     std::string(scalar_type(a_type.dtype)), prelude);
    return cuda_matrix::mma(result, a, b, c, a_type.dtype, tf32, *this, prelude);
  }
  std::string matrix_access(bool store, const ir::Type& t, const std::string& fragment,
                            const std::string& address, const std::string& stride, bool transpose,
                            Prelude& prelude) const {
    if (cuda_mma_fragments::is_native(t))
      return cuda_mma_fragments::access(store, t, std::string(scalar_type(t.dtype)), fragment,
                                        address, stride, transpose, prelude);
    return cuda_matrix::access(store, t.dtype, fragment, address, stride, transpose, *this,
                               prelude);
  }
  // plan_schedule gives CUDA targets no Metal 4 tensor ops; a hand-written kernel gets here.
  MppMatmul2dText mpp_matmul2d(const MppMatmul2dCall&, Prelude&) const override {
    throw NotSupported("emit CUDA: mpp_matmul2d is Metal 4's tensor ops, which CUDA C++ lacks");
  }

  // PTX atom with Triton's sem and scope, one prelude helper per form.
  std::string atomic(const std::string& kind, ir::DType t, const std::string& ptr,
                     const std::string& a, const std::string& b, const std::string& sem,
                     const std::string& scope, Prelude& prelude) const override {
    const bool f32 = t == ir::DType::f32, u32 = t == ir::DType::u32, cas = kind == "cas";
    if (f32 && (kind == "max" || kind == "min"))
      return float_extreme(kind, ptr, a, sem, scope, prelude);
    const std::string type = f32 ? "float" : u32 ? "unsigned int" : "int";
    const std::string reg = f32 ? "f" : "r";
    const std::string ptx_type = kind == "add"                    ? (f32   ? "f32"
                                                                     : u32 ? "u32"
                                                                           : "s32")
                                 : kind == "max" || kind == "min" ? (u32 ? "u32" : "s32")
                                                                  : "b32";
    const std::string name = "metile_atom_" + kind + "_" + sem + "_" + scope;
    prelude.add(name, t,
                "static __device__ __forceinline__ " + type + " " + name + "(" + type + "* p, " +
                    type + " a" + (cas ? ", " + type + " b" : "") + ") {\n  " + type +
                    " old;\n  asm volatile(\"atom." + sem + "." + scope + ".global." +
                    (kind == "xchg" ? "exch" : kind) + "." + ptx_type + " %0, [%1], %2" +
                    (cas ? ", %3" : "") + ";\" : \"=" + reg + "\"(old) : \"l\"(p), \"" + reg +
                    "\"(a)" + (cas ? ", \"" + reg + "\"(b)" : "") +
                    " : \"memory\");\n  return old;\n}\n");
    return name + "(" + ptr + ", " + a + (cas ? ", " + b : "") + ")";
  }
  // PTX has no f32 atom.max/min: a float whose sign bit is clear orders as its bits read as a
  // signed int, one whose sign bit is set in reverse as unsigned bits (Triton's lowering too).
  static std::string float_extreme(const std::string& kind, const std::string& ptr,
                                   const std::string& a, const std::string& sem,
                                   const std::string& scope, Prelude& prelude) {
    const bool max = kind == "max";
    const std::string name = "metile_atom_" + kind + "_" + sem + "_" + scope + "_f32";
    const std::string atom = "atom." + sem + "." + scope + ".global.";
    const std::string operands =
        " %0, [%1], %2;\" : \"=r\"(old) : \"l\"(p), \"r\"(__float_as_int(a)) : \"memory\");\n";
    prelude.add(name, ir::DType::f32,
                "static __device__ __forceinline__ float " + name + "(float* p, float a) {\n" +
                    "  int old;\n  if (__float_as_int(a) >= 0)\n    asm volatile(\"" + atom +
                    (max ? "max" : "min") + ".s32" + operands + "  else\n    asm volatile(\"" +
                    atom + (max ? "min" : "max") + ".u32" + operands +
                    "  return __int_as_float(old);\n}\n");
    return name + "(" + ptr + ", " + a + ")";
  }
  // Copies of 4, 8 or 16 bytes are cp.async (cuda_wgmma.h); others stay synchronous.
  std::string async_copy(const std::string& src, const std::string& dst, const std::string& pred,
                         ir::DType t, int64_t elements, Prelude& prelude) const override {
    const int64_t bytes = elements * ir::dtype_bytes(t);
    if (bytes == 4 || bytes == 8 || bytes == 16)
      return cuda_wgmma::cp_async(src, dst, pred, bytes, prelude);
    return CDialect::async_copy(src, dst, pred, t, elements, prelude);
  }
  std::string async_copy_commit() const override {
    return "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");";
  }
  std::string async_copy_wait(int64_t pending) const override {
    return "asm volatile(\"cp.async.wait_group " + std::to_string(pending) + ";\" ::: \"memory\");";
  }
  // The sm90 asynchronous pipeline ops and tensor maps: cuda_wgmma.h.
  std::string async_statement(const ir::Op& op, const std::vector<std::string>& operands,
                              const std::vector<std::string>& results, ir::DType element,
                              Prelude& prelude) const override {
    return cuda_wgmma::statement(op, operands, results, element, prelude);
  }
  // A warp-specialised kernel (the only one with tensor maps) runs exactly its threads, one
  // block per SM: the register budget setmaxnreg redistributes is 64K / threads each.
  std::string entry_qualifier(int64_t threads, size_t tensor_maps) const override {
    if (!tensor_maps) return std::string(table().entry_qualifier);
    return std::string(table().entry_qualifier) + " __launch_bounds__(" + std::to_string(threads) +
           ", 1)";
  }
  // Tensor maps are __grid_constant__ parameters, so the body may take their addresses.
  std::string tensor_map_param(int64_t index, bool entry) const override {
    return entry ? "const __grid_constant__ metile_tensor_map " + cuda_wgmma::tensor_map_name(index)
                 : "const metile_tensor_map* " + cuda_wgmma::tensor_map_name(index);
  }
  std::string tensor_map_argument(int64_t index) const override {
    return "&" + cuda_wgmma::tensor_map_name(index);
  }
  bool declare_recorded_bounds_checks(Prelude& prelude) const override {
    cuda_bounds::declare(prelude);
    return true;
  }

 private:
  // metile_simd_sum/max/min for dtype t: a butterfly of __shfl_xor_sync, after which every
  // lane holds the whole warp's result (as MSL's simd_sum gives every lane).
  void add_warp_reduction(Collective c, ir::DType t, Prelude& prelude) const {
    const std::string T(scalar_type(t));
    const std::string fn(table().collectives[static_cast<size_t>(c)]);
    const std::string combine =
        c == Collective::Sum
            ? "v + other"
            : math_function(c == Collective::Max ? MathFn::Max : MathFn::Min, false, t) +
                  "(v, other)";
    prelude.add(fn.substr(table().helper_prefix.size()), t,
                std::string(table().body_qualifier) + " " + T + " " + fn + "(" + T +
                    " v) {\n  for (int offset = 16; offset > 0; offset /= 2) {\n    const " + T +
                    " other = __shfl_xor_sync(0xffffffffu, v, offset);\n    v = " + combine +
                    ";\n  }\n  return v;\n}\n");
  }
};

}  // namespace

const CDialect& cuda_dialect() {
  static const CudaDialect dialect;
  return dialect;
}

}  // namespace metile::codegen
