#include "metile/codegen/msl/msl_dialect.h"

#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// Metal words a local could clash with, beyond the C++ keywords and the table's own names.
constexpr std::string_view kMslReserved[] = {
    "constant",    "device", "half",    "bfloat", "kernel",  "metal",  "thread",
    "threadgroup", "uchar",  "uint",    "ulong",  "ushort",  "fast",   "precise",
    "mem_flags",   "vec",    "as_type", "atomic", "sampler", "texture"};
constexpr std::string_view kMslReservedPrefixes[] = {"packed_"};

constexpr DialectTable kMsl{
    .language = "MSL",
    .header = "#include <metal_stdlib>\nusing namespace metal;\n",
    // f16, bf16, f32, i32, u32, i64, i1, i8, u8, i16, u16, f64, f8e4m3, f8e5m2 (the order of
    // ir::DType). An fp8 value is its byte; only the host emulator has double (require_dtype).
    .scalar_types = {"half", "bfloat", "float", "int", "uint", "long", "bool", "char", "uchar",
                     "short", "ushort", "double", "uchar", "uchar"},
    // Metal's math library is float-first; half and bfloat go through float so that both
    // take the same (precise or fast) path.
    .math_in_float = {true, true, false, false, false, false, false, false, false, false, false,
                      false, false, false},
    // bfloat converts only to and from float (fp8 has its own conversions: CDialect::cast).
    .cast_via_float = {false, true, false, false, false, false, false, false, false, false, false,
                       false, false, false},
    .device_space = "device ",
    .threadgroup_space = "threadgroup ",
    .body_qualifier = "static inline",
    .entry_qualifier = "kernel void",
    .scalar_entry_prefix = "constant ",
    .scalar_entry_suffix = "&",
    .binding_prefix = " [[buffer(",
    .binding_suffix = ")]]",
    .block_declaration = "threadgroup uchar",
    .block_name = "tg_mem",
    .block_attributes = " __attribute__((aligned(16)))",
    .block_dynamic = false,
    .block_type = "threadgroup uchar*",
    .geometry = {{
        {"threadgroup_position_in_grid", "uint3", "[[threadgroup_position_in_grid]]", ""},
        {"threadgroups_per_grid", "uint3", "[[threadgroups_per_grid]]", ""},
        {"thread_position_in_threadgroup", "uint3", "[[thread_position_in_threadgroup]]", ""},
        {"threads_per_threadgroup", "uint3", "[[threads_per_threadgroup]]", ""},
        {"simd_lane", "uint", "[[thread_index_in_simdgroup]]", ""},
        {"simd_group", "uint", "[[simdgroup_index_in_threadgroup]]", ""},
    }},
    .math_functions = {"abs", "min", "max", "fmod", "floor", "exp", "exp2", "log", "sqrt", "rsqrt",
                       "tanh", "sin", "cos", "ceil"},
    .fast_math_prefix = "fast::",
    .precise_math_prefix = "precise::",
    .collectives = {"simd_sum", "simd_max", "simd_min", "simd_shuffle", "simd_shuffle_xor",
                    "simd_broadcast", "simd_shuffle_down"},
    // bfloat is not among the SIMD-group functions' types; 64-bit and bool values are not
    // either. 8- and 16-bit values travel as int, whose sum wraps back to their width as the
    // dtype's does; fp8 bytes only move (the verifier keeps them from sums and extrema). f64
    // reaches them only on the host emulator (require_dtype rejects it for Apple GPUs), whose
    // SIMD-group functions take any type.
    .collective_routes = {Route::Direct, Route::ViaFloat, Route::Direct, Route::Direct,
                          Route::Direct, Route::Unsupported, Route::Unsupported, Route::ViaInt,
                          Route::ViaInt, Route::ViaInt, Route::ViaInt, Route::Direct, Route::ViaInt,
                          Route::ViaInt},
    .lane_type = "ushort",
    .collective_members = "",
    .threadgroup_barrier = "threadgroup_barrier",
    .simdgroup_barrier = "simdgroup_barrier",
    .barrier_mem = {"mem_flags::mem_none", "mem_flags::mem_threadgroup", "mem_flags::mem_device",
                    "mem_flags::mem_device | mem_flags::mem_threadgroup"},
    .nan_literal = "NAN",
    .infinity_literal = "INFINITY",
    .vector_values = true,
    .vector_select = "select",
    .pointer_integer_type = "ulong",
    .helper_prefix = "metile_",
    .float_as_bits = "as_type<uint>",
    .bits_as_float = "as_type<float>",
    .trap_statement = "__builtin_trap();",
    .matrix_lane_elements = 2,
    .reserved_words = kMslReserved,
    .reserved_prefixes = kMslReservedPrefixes,
};

// MSL is the table as the hooks' defaults render it; only the dtype check is its own.
class MslDialect final : public CDialect {
 public:
  MslDialect() : CDialect(kMsl) {}

  void require_dtype(ir::DType t, const target::Target& target) const override {
    if (t == ir::DType::bf16 && !target.supports_bf16)
      throw UserError("bf16 needs MSL 3.1 (target " + target.name + " has MSL " +
                      std::to_string(target.msl_version_major) + "." +
                      std::to_string(target.msl_version_minor) + ")");
    if (t == ir::DType::f64 && !target.supports_f64)
      throw NotSupported(
          "f64 (float64) is not available on Apple GPUs: MSL has no double "
          "(target " +
          target.name +
          "); the host emulator and the cuda device run f64 kernels, or convert "
          "to f32");
  }
};

}  // namespace

const CDialect& msl_dialect() {
  static const MslDialect dialect;
  return dialect;
}

}  // namespace metile::codegen
