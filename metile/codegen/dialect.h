// What distinguishes one C-like target language from another: a data table of spellings
// plus hooks for every call shape (DESIGN.md, Practices 4). The C-style emitter (c_emitter.h)
// walks the op list and renders only language-neutral structure (declarations, for/if,
// pointer access); every word and call it writes comes from here. The defaults of the hooks
// render the table the way MSL needs it; a dialect overrides the hooks whose shape differs
// (docs/emitter.md, "What a new dialect must provide").
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metile/codegen/prelude.h"
#include "metile/ir/ir.h"
#include "metile/ir/types.h"
#include "metile/support/errors.h"
#include "metile/target/target.h"

namespace metile::codegen {

// The library functions the walker calls. Exp..Cos have a precise and a fast variant.
enum class MathFn { Abs, Min, Max, Fmod, Floor, Exp, Exp2, Log, Sqrt, Rsqrt, Tanh, Sin, Cos, Ceil };
inline constexpr size_t kMathFnCount = 14;
static_assert(static_cast<size_t>(MathFn::Ceil) + 1 == kMathFnCount);

// SIMD-group collectives: the reductions take (value), the others (value, lane or mask).
enum class Collective { Sum, Max, Min, Shuffle, ShuffleXor, Broadcast, ShuffleDown };
inline constexpr size_t kCollectiveCount = 7;
static_assert(static_cast<size_t>(Collective::ShuffleDown) + 1 == kCollectiveCount);

enum class BarrierScope { Threadgroup, Simdgroup };
// Which memory a barrier orders besides the execution rendezvous.
enum class BarrierMem { None, Threadgroup, Device, All };

enum class SpecialFloat { NaN, Infinity, NegativeInfinity };

// One mpp_matmul2d (ops.def) as the dialect spells it: `prefix` starts every local it declares.
struct MppMatmul2dCall {
  std::string prefix;
  int64_t m = 0, n = 0, simdgroups = 0;
  bool reduced_precision = false;  // precision = tf32
  ir::DType operand_dtype = ir::DType::f32, output_dtype = ir::DType::f32;
  // a, b, c, rows, columns, inner, a_stride, b_stride, c_stride, row, column (the op's order).
  std::array<std::string, 11> operands;
};
// The statements around its epilogue: `setup` runs the product into a destination whose
// `capacity` elements the calling thread holds; element i (`index`) exists where `is_valid`
// holds, is read as `element` and receives the epilogue's value as `result`; `finish` stores
// the destination.
struct MppMatmul2dText {
  std::vector<std::string> setup;
  std::string index, capacity, is_valid, element, result;
  std::vector<std::string> finish;
};

// How a family of library functions takes values of one dtype: as they are, converted to
// float or to int (and the result back), or not at all.
enum class Route { Direct, ViaFloat, ViaInt, Unsupported };

// The body's coordinate arguments, in kernel_abi.h order (DialectTable::geometry's index);
// the first four have x, y and z components, the SIMD ones are scalars.
enum class Geometry {
  ThreadgroupPosition,
  ThreadgroupsPerGrid,
  ThreadPosition,
  ThreadsPerThreadgroup,
  SimdLane,
  SimdGroup
};

// One coordinate argument of the body function; names and order come from kernel_abi.h.
struct GeometryArg {
  std::string_view name;  // the body parameter, e.g. "thread_position_in_threadgroup"
  std::string_view type;  // "uint3"
  // MSL: the entry receives the argument as a parameter with this attribute,
  // "[[thread_position_in_threadgroup]]". Empty when the language computes it instead (see
  // `entry_value`).
  std::string_view entry_attribute;
  // Languages without attributes (CUDA): the expression the entry initialises it with.
  std::string_view entry_value;
};

struct DialectTable {
  std::string_view language;                                   // "MSL", used in messages
  std::string_view header;                                     // the first lines of every source
  std::array<std::string_view, ir::kDTypeCount> scalar_types;  // indexed by ir::DType
  // Dtypes whose math functions are computed in float and converted back.
  std::array<bool, ir::kDTypeCount> math_in_float;
  // Dtypes that convert only to and from float: a cast to or from any other type goes
  // through float.
  std::array<bool, ir::kDTypeCount> cast_via_float;
  std::string_view device_space;       // pointer qualifier, with a trailing space: "device "
  std::string_view threadgroup_space;  // "threadgroup "
  std::string_view body_qualifier;     // "static inline"
  std::string_view entry_qualifier;    // "kernel void"
  // How the entry receives a scalar parameter: "<scalar_entry_prefix>T<scalar_entry_suffix> n".
  std::string_view scalar_entry_prefix;  // "constant "
  std::string_view scalar_entry_suffix;  // "&"
  // Binding of entry parameter i: prefix + i + suffix, e.g. " [[buffer(" 0 ")]]".
  std::string_view binding_prefix;
  std::string_view binding_suffix;
  // The kernel's threadgroup block: the entry declares
  // "<block_declaration> <block_name>[<bytes, or nothing when dynamic>]<block_attributes>;"
  // and passes it to the body as a <block_type>.
  std::string_view block_declaration;   // "threadgroup uchar"
  std::string_view block_name;          // "tg_mem"
  std::string_view block_attributes;    // " __attribute__((aligned(16)))"
  bool block_dynamic;                   // sized at launch (CUDA's extern __shared__)
  std::string_view block_type;          // "threadgroup uchar*"
  std::array<GeometryArg, 6> geometry;  // indexed by Geometry
  std::array<std::string_view, kMathFnCount> math_functions;  // indexed by MathFn
  std::string_view fast_math_prefix;                          // "fast::"
  std::string_view precise_math_prefix;                       // "precise::"
  // SIMD-group collectives, indexed by Collective; a lane or mask argument is converted to
  // `lane_type`. `collective_routes` says how each dtype reaches them.
  std::array<std::string_view, kCollectiveCount> collectives;
  std::array<Route, ir::kDTypeCount> collective_routes;
  std::string_view lane_type;
  // The first argument of the collectives that take a lane, naming the SIMD group's threads
  // that take part (CUDA's member mask "0xffffffffu"); empty when the language has none.
  std::string_view collective_members;
  std::string_view threadgroup_barrier;         // "threadgroup_barrier"
  std::string_view simdgroup_barrier;           // "simdgroup_barrier"
  std::array<std::string_view, 4> barrier_mem;  // indexed by BarrierMem
  std::string_view nan_literal;                 // an f32 NaN: "NAN"
  std::string_view infinity_literal;            // f32 +infinity: "INFINITY"
  // Whether the language has vector values with operators (MSL's float4); without them a
  // vector value is NotSupported.
  bool vector_values;
  std::string_view vector_select;  // per-element select(false_value, true_value, cond)
  // The unsigned integer a pointer converts to for an alignment test: "ulong".
  std::string_view pointer_integer_type;
  std::string_view helper_prefix;  // prefix of prelude helper names: "metile_"
  // Reinterpreting a float's 32 bits as an unsigned int and back (the fp8 conversions):
  // "as_type<uint>", "as_type<float>".
  std::string_view float_as_bits;
  std::string_view bits_as_float;
  // A statement that stops the kernel with a fault the runtime reports: "__trap();" on
  // CUDA; in MSL "__builtin_trap();", which the host emulator reports as a KernelFaultError.
  std::string_view trap_statement;
  // How many elements of an 8x8 matrix fragment each lane holds (matrix_element's indices);
  // which ones is the language's secret.
  int matrix_lane_elements;
  // Words a local may not take beyond the C++ keywords and the names above (namespaces,
  // types and functions of the language's library), and prefixes no local may start with.
  std::span<const std::string_view> reserved_words;
  std::span<const std::string_view> reserved_prefixes;
};

class CDialect {
 public:
  explicit CDialect(const DialectTable& table) : table_(table) {}
  virtual ~CDialect() = default;

  const DialectTable& table() const { return table_; }
  std::string_view scalar_type(ir::DType t) const {
    return table_.scalar_types[static_cast<int>(t)];
  }

  // Throws UserError when the target cannot hold values of dtype t.
  virtual void require_dtype(ir::DType t, const target::Target& target) const = 0;

  // Types and conversions.
  // Adds to `prelude` what the source needs to name dtype t (CUDA's own half type); the
  // default needs nothing.
  virtual void declare_dtype(ir::DType t, Prelude& prelude) const;
  // "float4" for a vector of 4 f32; NotSupported without `vector_values`.
  virtual std::string vector_type(ir::DType t, int64_t width) const;
  // The type of a packed vector access of `width` elements of dtype t, which needs only the
  // element's alignment where the language allows (MSL's packed_float4); helpers it needs go
  // into `prelude`.
  virtual std::string packed_vector_type(ir::DType t, int64_t width, Prelude& prelude) const;
  // A packed vector (of packed_vector_type `type`, elements of dtype t) made of `elements`:
  // "packed_float4(a, b, c, d)".
  virtual std::string packed_literal(ir::DType t, const std::string& type,
                                     const std::vector<std::string>& elements) const;
  // The packed vector of packed_vector_type `type` at device pointer `ptr`, as an lvalue (or
  // a const one): "((device packed_float4*)(p))[0]".
  std::string packed_access(const std::string& ptr, const std::string& type, bool read_only) const;
  // The statement writing `value` (a packed_literal of packed_vector_type `type`, `width`
  // elements of dtype t) to the device pointer `ptr` as one vector access:
  // "((device packed_float4*)(p))[0] = v;".
  virtual std::string packed_store(ir::DType t, int64_t width, const std::string& type,
                                   const std::string& ptr, const std::string& value,
                                   Prelude& prelude) const;
  // Cache hints (ops.def: load's eviction, "evict_first" or "evict_last"): the load of the
  // value of C type `type` (a scalar or a packed vector) at device pointer `ptr` with that
  // eviction priority, and the statement storing `value` there. nullopt (the default) where
  // the language has no cache controls (MSL): the access is written without the hint.
  virtual std::optional<std::string> hinted_load(const std::string& type, const std::string& ptr,
                                                 const std::string& eviction,
                                                 Prelude& prelude) const;
  virtual std::optional<std::string> hinted_store(const std::string& type, const std::string& ptr,
                                                  const std::string& value,
                                                  const std::string& eviction,
                                                  Prelude& prelude) const;
  // Element `index` of the packed vector `vector` of dtype t: "v.x".
  virtual std::string packed_element(ir::DType t, const std::string& vector, int64_t index) const;
  // Whether the address `ptr` is a multiple of `bytes` (a power of two), as a bool.
  virtual std::string address_is_aligned(const std::string& ptr, int64_t bytes) const;
  // An expression of type `to` made from `expr` (a float or a narrower float type).
  virtual std::string convert(const std::string& to, const std::string& expr) const;
  // `expr` of type `from` converted to `to` with C++ conversion rules (round to nearest,
  // truncation float -> int), except that a float scalar converts to i8 or u8 saturating, NaN
  // to 0, through a helper in `prelude` (C leaves an out-of-range conversion undefined).
  virtual std::string cast(const ir::Type& from, const ir::Type& to, const std::string& expr,
                           Prelude& prelude) const;

  // Triton's inline_asm_elementwise: the statement that sets `result` (declared, of type
  // `result_type`) to the output of the inline assembly `assembly` (LLVM's text: $0 the
  // output, $1... the operands) on `operands` (names and types), with LLVM's comma-separated
  // `constraints`, the output's first; `pure` false keeps it (volatile). NotSupported where
  // the dialect has no inline PTX (MSL).
  virtual std::string inline_asm(const std::string& result, const ir::Type& result_type,
                                 const std::vector<std::pair<std::string, ir::Type>>& operands,
                                 const std::string& assembly, const std::string& constraints,
                                 bool pure) const;

  // cast's float -> i8/u8/i16/u16 conversion: the call of the dialect's saturating helper.
  std::string saturating_byte_cast(const ir::Type& from, const ir::Type& to,
                                   const std::string& expr, Prelude& prelude) const;
  // cast's conversions to and from fp8 (float8_dialect.cc): through f32, by prelude helpers.
  std::string float8_cast(const ir::Type& from, const ir::Type& to, const std::string& expr,
                          Prelude& prelude) const;

  // Operators on scalars and vectors of type t: `op` is a C operator ("+", "<", "&&").
  virtual std::string infix(std::string_view op, const ir::Type& t, const std::string& a,
                            const std::string& b) const;
  virtual std::string prefix(std::string_view op, const ir::Type& t, const std::string& a) const;
  // a where c is true, else b; `c_type` says whether c is one condition or one per element.
  virtual std::string select(const ir::Type& c_type, const std::string& c, const std::string& a,
                             const std::string& b) const;

  // fn(args) with a result of type t; `fast` picks the fast variant of Exp..Cos. The
  // default computes in float for the dtypes of `math_in_float` and calls `math_function`;
  // helpers a dialect's call needs go into `prelude`.
  virtual std::string math_call(MathFn fn, bool fast, const ir::Type& t,
                                const std::vector<std::string>& args, Prelude& prelude) const;
  // The name math_call calls for fn on values of dtype t (f32 for the dtypes computed in
  // float): the table's name, with the fast or precise prefix for Exp..Cos.
  virtual std::string math_function(MathFn fn, bool fast, ir::DType t) const;
  // The collective of `value` (type t, whose route is not Unsupported); `lane` is empty for
  // the reductions. Helpers it needs go into `prelude`. The default calls the table's
  // function with (value) or (collective_members, value, lane), through float per
  // `collective_routes`.
  virtual std::string collective(Collective c, const ir::Type& t, const std::string& value,
                                 const std::string& lane, Prelude& prelude) const;
  // The dtype values of dtype t take through the collectives (`collective_routes`: t itself,
  // f32 or i32); InternalError for an unsupported one.
  ir::DType collective_dtype(ir::DType t) const;
  // a // b rounding toward negative infinity for a signed integer scalar dtype t.
  virtual std::string integer_floordiv(ir::DType t, const std::string& a, const std::string& b,
                                       Prelude& prelude) const;
  // A complete statement: every thread of `scope` waits here, ordering `mem`.
  virtual std::string barrier(BarrierScope scope, BarrierMem mem) const;
  // NaN or an infinity as a literal of float dtype t.
  virtual std::string special_float(SpecialFloat value, ir::DType t) const;
  // The entry's declaration of the threadgroup block holding `bytes` bytes.
  virtual std::string threadgroup_block(int64_t bytes) const;
  // Whether a local named `name` would be invalid or shadow something the source uses.
  virtual bool is_reserved(const std::string& name) const;

  // device_assert and device_print. A statement that stops kernel `kernel` with a fault naming
  // `message` (a string literal), the source location `where` and the thread (an expression);
  // the default calls the host emulator's metile_device_assert_failed.
  virtual std::string assert_failed(const std::string& kernel, const std::string& message,
                                    const SourceLocation& where, const std::string& thread) const;
  // A statement printing one line: `format` is a printf format as a string literal, `args`
  // the values already converted to what it names (int, unsigned, long long, float); the
  // default calls the host emulator's metile_device_print.
  virtual std::string print(const std::string& format, const std::vector<std::string>& args) const;

  // Matrix fragments (docs/fragments.md; matrix_dialect.cc holds the defaults, which render
  // MSL's simdgroup_matrix). `t` is the fragment's type: its dtype and shape (8x8, or on
  // targets with mma.sync its native 16x16 and 16x8, which MSL does not have). The type of
  // fragment t ("simdgroup_float8x8").
  virtual std::string matrix_type(const ir::Type& t) const;
  // Adds to `prelude` what a fragment of type t needs; the default needs nothing.
  virtual void declare_matrix(const ir::Type& t, Prelude& prelude) const;
  // Element `index` (0 .. matrix_lane_elements(t) - 1) of this lane's share of fragment `value`.
  virtual std::string matrix_element(const std::string& value, const ir::Type& t,
                                     const std::string& index) const;
  // How many elements of fragment t each lane holds: matrix_lane_elements per 64.
  int matrix_lane_elements(const ir::Type& t) const;
  // A fragment of type t whose every element is `value`.
  virtual std::string matrix_fill(const ir::Type& t, const std::string& value) const;
  // A statement loading fragment `result` (declared, of type t) whose element (r, c) is
  // address[r * stride + c], or address[c * stride + r] when `transpose`.
  virtual std::string matrix_load(const std::string& result, const ir::Type& t,
                                  const std::string& address, const std::string& stride,
                                  bool transpose, Prelude& prelude) const;
  // A statement storing fragment `value` of type t the way matrix_load reads it.
  virtual std::string matrix_store(const std::string& value, const ir::Type& t,
                                   const std::string& address, const std::string& stride,
                                   bool transpose, Prelude& prelude) const;
  // A statement setting the f32 fragment `result` (declared) to a @ b + c, where a has type
  // `a_type` (b the same dtype); `fast` allows rounding f32 operands to a narrower format.
  virtual std::string matrix_mma(const std::string& result, const std::string& a,
                                 const std::string& b, const std::string& c, const ir::Type& a_type,
                                 bool fast, Prelude& prelude) const;

  // Metal 4 tensor ops (mpp_dialect.cc holds the default, MSL's MetalPerformancePrimitives
  // matmul2d; a language without them throws NotSupported).
  virtual MppMatmul2dText mpp_matmul2d(const MppMatmul2dCall& call, Prelude& prelude) const;
  // The asynchronous pipeline ops (ops.def's AsyncPipeline rule, docs/hopper.md): the statement
  // of `op` from its operands' and results' names; `element` is the dtype of its first pointer
  // operand. Only the CUDA dialect renders them: the default is an internal error, since
  // plan_schedule picks them for sm90 alone.
  virtual std::string async_statement(const ir::Op& op, const std::vector<std::string>& operands,
                                      const std::vector<std::string>& results, ir::DType element,
                                      Prelude& prelude) const;
  // An atomic update of *ptr (ops.def's atomic_rmw {kind} and, kind "cas", atomic_cas) as an
  // expression giving the old value: `a` is the operand (cas: the compared value) and `b`
  // cas's new value. The default is MSL's (relaxed atomics of <metal_atomic>, fenced for the
  // other orders); the CUDA dialect issues PTX atom.
  virtual std::string atomic(const std::string& kind, ir::DType t, const std::string& ptr,
                             const std::string& a, const std::string& b, const std::string& sem,
                             const std::string& scope, Prelude& prelude) const;
  // The per-thread asynchronous copies (ops.def's AsyncCopy, AsyncCopyCommit, AsyncCopyWait):
  // by default the copy is synchronous, `elements` assignments from src (zeros where `pred`,
  // when not empty, is false) that are complete when issued, and commit and wait are comments.
  virtual std::string async_copy(const std::string& src, const std::string& dst,
                                 const std::string& pred, ir::DType t, int64_t elements,
                                 Prelude& prelude) const;
  virtual std::string async_copy_commit() const;
  virtual std::string async_copy_wait(int64_t pending) const;
  // The words before the entry's name for a kernel of `threads` threads per threadgroup that
  // takes tensor maps (`tensor_maps` > 0); the table's entry_qualifier by default.
  virtual std::string entry_qualifier(int64_t threads, size_t tensor_maps) const;
  // The entry's and the body's declarations of tensor map parameter `index`, and the argument
  // the entry passes for it; InternalError by default.
  virtual std::string tensor_map_param(int64_t index, bool entry) const;
  virtual std::string tensor_map_argument(int64_t index) const;
  // Recorded bounds checks (METILE_DEBUG=bounds, bounds_checks.cc): adds the helpers of
  // codegen/cuda/cuda_bounds.h to the prelude; false (the default) for a language whose runtime
  // reads no fault record.
  virtual bool declare_recorded_bounds_checks(Prelude& prelude) const;

 private:
  const DialectTable& table_;
};

}  // namespace metile::codegen
