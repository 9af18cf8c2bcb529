// Tile IR for Python: the Type of a value, a traced Kernel (print, parse, verify), and
// KernelTrace, the tracing core (metile/trace/kernel_trace.h) the tracer in
// metile/tracing.py drives. Every rule is checked by the core or its TileBuilder; a broken
// one raises CompilationError at the location set_location gave.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "dtype_names.h"
#include "init.h"
#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/trace/kernel_trace.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {

// How to fix a value used outside the loop body or `if` branch that defined it, in Python's
// terms.
constexpr const char* kEscapeHint =
    "assign the variable before the loop so it is carried (a value leaves an `if` on a traced "
    "value through a variable bound before the `if` or assigned in both branches)";

ir::OpKind op_from_name(const std::string& name) {
  if (std::optional<ir::OpKind> k = ir::parse_op_name(name)) return *k;
  throw nb::value_error(("unknown Tile IR op '" + name + "'").c_str());
}

std::string kind_name(ir::TypeKind k) {
  switch (k) {
    case ir::TypeKind::Scalar:
      return "scalar";
    case ir::TypeKind::Tile:
      return "tile";
    case ir::TypeKind::Vector:
      return "vector";
    case ir::TypeKind::TensorDesc:
      return "desc";
    case ir::TypeKind::Matrix:
      return "matrix";
  }
  return "?";
}

nb::dict attrs_dict(const ir::Attrs& attrs) {
  nb::dict d;
  for (const auto& [name, value] : attrs) {
    if (const int64_t* i = std::get_if<int64_t>(&value))
      d[name.c_str()] = *i;
    else if (const double* f = std::get_if<double>(&value))
      d[name.c_str()] = *f;
    else
      d[name.c_str()] = ir::print_attr(value);
  }
  return d;
}

void bind_type(nb::module_& m) {
  nb::class_<ir::Type>(m, "Type",
                       "The type of a Tile IR value: scalar, tile, pointer or descriptor.")
      .def_prop_ro(
          "kind", [](const ir::Type& t) { return kind_name(t.kind); },
          "'scalar', 'tile', 'vector' or 'desc'")
      .def_prop_ro(
          "dtype", [](const ir::Type& t) { return std::string(ir::dtype_name(t.dtype)); },
          "The element dtype name ('f32'); for pointers, the pointee's.")
      .def_prop_ro(
          "shape", [](const ir::Type& t) { return t.is_tile() ? t.shape : std::vector<int64_t>{}; },
          "The tile shape; [] for scalars and pointers.")
      .def_prop_ro(
          "pointer", [](const ir::Type& t) { return t.pointer; },
          "Whether the elements are pointers.")
      .def_prop_ro(
          "threadgroup", [](const ir::Type& t) { return t.space == ir::AddressSpace::Threadgroup; },
          "Whether pointers address threadgroup memory.")
      .def("__str__", &ir::Type::str, "The text form: 'tile<256xf32>'.")
      .def("__repr__", [](const ir::Type& t) { return "Type(" + t.str() + ")"; })
      .def(
          "__eq__", [](const ir::Type& a, const ir::Type& b) { return a == b; }, "other"_a);
}

void bind_kernel(nb::module_& m) {
  nb::class_<ir::Kernel>(m, "Kernel", "A Tile IR (or Metal IR) kernel.")
      .def_prop_ro(
          "name", [](const ir::Kernel& k) { return k.name; }, "The kernel's name.")
      .def_prop_ro(
          "params",
          [](const ir::Kernel& k) {
            std::vector<std::tuple<std::string, std::string, std::string>> r;
            for (const ir::Param& p : k.params)
              r.emplace_back(p.name, k.type(p.value).str(), p.access);
            return r;
          },
          "The parameters as (name, type, access) tuples; access is '' for scalars.")
      .def_prop_ro(
          "attrs", [](const ir::Kernel& k) { return attrs_dict(k.attrs); },
          "Kernel attributes, e.g. the constexpr values it was specialised with.")
      .def(
          "print", [](const ir::Kernel& k) { return ir::print(k); }, "The IR text form.")
      .def("__str__", [](const ir::Kernel& k) { return ir::print(k); })
      .def(
          "verify",
          [](const ir::Kernel& k) {
            std::vector<std::string> r;
            for (const ir::Diagnostic& d : ir::verify(k)) r.push_back(d.str());
            return r;
          },
          "Every broken rule of the kernel, one message each; [] when it is valid.")
      .def_static(
          "parse",
          [](const std::string& text, const std::string& filename) {
            return ir::parse(text, filename);
          },
          "text"_a, "filename"_a = "<input>",
          "Reads a kernel from its text form (CompilationError when the text is malformed).");
}

void bind_trace(nb::module_& m) {
  using T = trace::KernelTrace;
  auto b = [](T& t) -> ir::TileBuilder& { return t.builder(); };
  nb::class_<T>(m, "KernelTrace",
                "One kernel being traced: Tile IR, the TileBuilder that validates each op, the "
                "region rules and buffer access inference. Methods return value ids; -1 means "
                "'no value'.")
      .def(
          "__init__", [](T* t, const std::string& name) { new (t) T(name, kEscapeHint); }, "name"_a,
          "Starts an empty Tile IR kernel.")
      .def("type", &T::type, "value"_a, "The type of a value.")
      .def(
          "set_location",
          [b](T& t, const std::string& file, int line) {
            b(t).set_location({file, line});
          },
          "file"_a, "line"_a, "The user's source location recorded on the ops made next.")
      .def(
          "add_buffer",
          [](T& t, const std::string& name, const std::string& dtype, int64_t divisibility) {
            return t.add_buffer(name, dtype_from_name(dtype), "", divisibility);
          },
          "name"_a, "dtype"_a, "divisibility"_a = 1,
          "Appends a device buffer parameter (a pointer to dtype) whose access finish() infers, "
          "its address a multiple of `divisibility` bytes; returns its value.")
      .def(
          "add_scalar",
          [](T& t, const std::string& name, const std::string& dtype, int64_t divisibility) {
            return t.add_scalar(name, dtype_from_name(dtype), divisibility);
          },
          "name"_a, "dtype"_a, "divisibility"_a = 1,
          "Appends a scalar parameter (an integer's value a multiple of `divisibility`); returns "
          "its value.")
      .def(
          "set_attr_int", [](T& t, const std::string& n, int64_t v) { t.set_constexpr(n, v); },
          "name"_a, "value"_a, "Records an integer constexpr as a kernel attribute.")
      .def(
          "set_attr_float", [](T& t, const std::string& n, double v) { t.set_constexpr(n, v); },
          "name"_a, "value"_a, "Records a floating-point constexpr as a kernel attribute.")
      .def(
          "set_attr_layout",
          [](T& t, const std::string& n, const ir::ThreadLayout& v) { t.set_constexpr(n, v); },
          "name"_a, "value"_a, "Records a ThreadLayout constexpr as a kernel attribute.")
      .def("set_num_threads", &T::set_num_threads, "n"_a,
           "Records the threads per threadgroup the author asked for.")
      .def("usable", &T::usable, "value"_a,
           "Whether the value was not defined inside a region that has closed.")
      .def("use", &T::use, "value"_a, "op"_a,
           "The value; CompilationError naming op when it was defined inside a closed region.")
      .def("finish", &T::finish,
           "Ends the trace: infers buffer and descriptor accesses and returns the Kernel.")
      // Scalars and geometry.
      .def(
          "constant_float",
          [b](T& t, double v, const std::string& d) {
            return b(t).constant(v, dtype_from_name(d));
          },
          "value"_a, "dtype"_a, "A scalar constant of dtype from a float.")
      .def(
          "constant_int",
          [b](T& t, int64_t v, const std::string& d) {
            return b(t).constant_int(v, dtype_from_name(d));
          },
          "value"_a, "dtype"_a, "A scalar constant of dtype from an integer.")
      .def(
          "program_id", [b](T& t, int axis) { return b(t).program_id(axis); }, "axis"_a,
          "This program's index in the launch grid (i32).")
      .def(
          "num_programs", [b](T& t, int axis) { return b(t).num_programs(axis); }, "axis"_a,
          "The number of programs along axis (i32).")
      .def(
          "thread_id", [b](T& t, int axis) { return b(t).thread_id(axis); }, "axis"_a,
          "The calling thread's index in its threadgroup (i32, per thread).")
      // Tiles.
      .def(
          "arange",
          [b](T& t, int64_t s, int64_t e, const ir::ThreadLayout* layout) {
            return b(t).arange(s, e,
                               layout ? std::optional<ir::ThreadLayout>(*layout) : std::nullopt);
          },
          "start"_a, "end"_a, "layout"_a.none() = nb::none(),
          "The 1-D i32 tile start .. end-1 (a power-of-two count), owned as layout says.")
      .def(
          "convert_layout",
          [b](T& t, ir::ValueId v, const ir::ThreadLayout& layout) {
            return b(t).convert_layout(v, layout);
          },
          "tile"_a, "layout"_a, "The same logical tile, owned as layout says.")
      .def(
          "full",
          [b](T& t, std::vector<int64_t> shape, double v, const std::string& d) {
            return b(t).full(std::move(shape), v, dtype_from_name(d));
          },
          "shape"_a, "value"_a, "dtype"_a, "A tile of one value.")
      .def(
          "splat",
          [b](T& t, ir::ValueId s, std::vector<int64_t> shape) {
            return b(t).splat(s, std::move(shape));
          },
          "scalar"_a, "shape"_a, "A tile whose every element is the scalar.")
      .def(
          "expand_dims", [b](T& t, ir::ValueId v, int axis) { return b(t).expand_dims(v, axis); },
          "tile"_a, "axis"_a, "Inserts a dimension of size 1 at axis (1-D to 2-D).")
      .def(
          "broadcast_to",
          [b](T& t, ir::ValueId v, std::vector<int64_t> shape) {
            return b(t).broadcast_to(v, std::move(shape));
          },
          "value"_a, "shape"_a, "The value broadcast to shape (numpy rules).")
      // Elementwise.
      .def(
          "binary",
          [b](T& t, const std::string& op, ir::ValueId x, ir::ValueId y) {
            return b(t).binary(op_from_name(op), x, y);
          },
          "op"_a, "a"_a, "b"_a, "An arithmetic or bitwise op by name ('add', 'floordiv', ...).")
      .def(
          "cmp",
          [b](T& t, const std::string& pred, ir::ValueId x, ir::ValueId y) {
            return b(t).cmp(pred, x, y);
          },
          "pred"_a, "a"_a, "b"_a, "A comparison: lt, le, gt, ge, eq or ne; the result is i1.")
      .def(
          "select",
          [b](T& t, ir::ValueId c, ir::ValueId x, ir::ValueId y) { return b(t).select(c, x, y); },
          "cond"_a, "a"_a, "b"_a, "a where cond is true, else b.")
      .def(
          "cast",
          [b](T& t, ir::ValueId v, const std::string& d) {
            return b(t).cast(v, dtype_from_name(d));
          },
          "value"_a, "dtype"_a, "The value converted to dtype.")
      .def(
          "int_to_ptr",
          [b](T& t, ir::ValueId v, const std::string& d) {
            return b(t).int_to_ptr(v, dtype_from_name(d));
          },
          "value"_a, "pointee"_a, "The i64 address (tile) as a device pointer to pointee.")
      .def(
          "ptr_to_int", [b](T& t, ir::ValueId v) { return b(t).ptr_to_int(v); }, "value"_a,
          "The device pointer (tile) as its i64 address.")
      .def(
          "inline_asm",
          [b](T& t, std::vector<ir::ValueId> operands, const std::string& d,
              const std::string& assembly, const std::string& constraints, bool pure) {
            return b(t).inline_asm(std::move(operands), dtype_from_name(d), assembly, constraints,
                                   pure);
          },
          "operands"_a, "dtype"_a, "asm"_a, "constraints"_a, "pure"_a,
          "Triton's inline_asm_elementwise (pack 1): PTX applied to the operands' elements.")
      .def(
          "unary",
          [b](T& t, const std::string& op, ir::ValueId v, bool fast) {
            return b(t).unary(op_from_name(op), v, fast);
          },
          "op"_a, "value"_a, "fast"_a = false, "A unary math op by name ('exp', 'neg', ...).")
      // Memory.
      .def(
          "ptr_add", [b](T& t, ir::ValueId p, ir::ValueId o) { return b(t).ptr_add(p, o); },
          "ptr"_a, "offsets"_a, "The pointer(s) advanced by integer offsets.")
      .def(
          "load",
          [b](T& t, ir::ValueId p, ir::ValueId mask, ir::ValueId other,
              const std::string& eviction) { return b(t).load(p, mask, other, eviction); },
          "ptrs"_a, "mask"_a = ir::kNoValue, "other"_a = ir::kNoValue, "eviction_policy"_a = "",
          "*ptrs; where mask is false, other and no memory access. eviction_policy: '', "
          "'evict_first' or 'evict_last' (a cache hint).")
      .def(
          "store",
          [b](T& t, ir::ValueId p, ir::ValueId v, ir::ValueId mask, const std::string& eviction) {
            b(t).store(p, v, mask, eviction);
          },
          "ptrs"_a, "value"_a, "mask"_a = ir::kNoValue, "eviction_policy"_a = "",
          "*ptrs = value where mask is true. eviction_policy: as load's.")
      .def(
          "atomic_rmw",
          [b](T& t, const std::string& kind, ir::ValueId p, ir::ValueId v, ir::ValueId mask,
              const std::string& sem,
              const std::string& scope) { return b(t).atomic_rmw(kind, p, v, mask, sem, scope); },
          "kind"_a, "ptrs"_a, "value"_a, "mask"_a, "sem"_a, "scope"_a,
          "Atomically *ptrs = kind(*ptrs, value) where mask is true; the old values.")
      .def(
          "atomic_cas",
          [b](T& t, ir::ValueId p, ir::ValueId cmp, ir::ValueId v, const std::string& sem,
              const std::string& scope) { return b(t).atomic_cas(p, cmp, v, sem, scope); },
          "ptrs"_a, "cmp"_a, "value"_a, "sem"_a, "scope"_a,
          "Atomically *ptrs = value where *ptrs == cmp; the old values.")
      .def("make_tensor", &T::make_tensor, "base"_a, "dims"_a, "strides"_a, "access"_a,
           "A tensor descriptor over a buffer; access '' follows the buffer's.")
      .def("tensor_load", &T::tensor_load, "desc"_a, "coords"_a,
           "The elements at the coordinates; out of bounds reads 0.")
      .def("tensor_store", &T::tensor_store, "desc"_a, "coords"_a, "value"_a,
           "Stores at the coordinates; out of bounds is skipped.")
      .def(
          "shared_alloc",
          [b](T& t, int64_t size, const std::string& d) {
            return b(t).shared_alloc(size, dtype_from_name(d));
          },
          "size"_a, "dtype"_a, "A threadgroup allocation; returns its pointer.")
      // Reductions, collectives, synchronisation.
      .def(
          "reduce",
          [b](T& t, const std::string& kind, ir::ValueId v) { return b(t).reduce(kind, v); },
          "kind"_a, "tile"_a, "sum, max or min of a whole tile, as a scalar.")
      .def(
          "reduce_axis",
          [b](T& t, const std::string& kind, ir::ValueId v, int64_t axis) {
            return b(t).reduce_axis(kind, v, axis);
          },
          "kind"_a, "tile"_a, "axis"_a,
          "sum, max or min of a 2-D tile along axis, as the 1-D tile of the other dimension.")
      .def(
          "scan",
          [b](T& t, const std::string& kind, ir::ValueId v, int64_t axis, bool reverse) {
            return b(t).scan(kind, v, axis, reverse);
          },
          "kind"_a, "tile"_a, "axis"_a, "reverse"_a,
          "The inclusive scan (sum or prod) of a tile along axis, of the tile's type.")
      .def(
          "xor_permute",
          [b](T& t, ir::ValueId v, int64_t mask) { return b(t).xor_permute(v, mask); }, "tile"_a,
          "mask"_a, "The tile whose element i is element i ^ mask (row-major logical indices).")
      .def(
          "dot",
          [b](T& t, ir::ValueId a, ir::ValueId other, ir::ValueId acc,
              const std::string& precision) { return b(t).dot(a, other, acc, precision); },
          "a"_a, "b"_a, "acc"_a, "precision"_a,
          "acc + a @ b (f32 accumulator); precision ieee, tf32 or '' for the math mode's choice.")
      .def(
          "matrix_fill", [b](T& t, ir::ValueId s) { return b(t).matrix_fill(s); }, "value"_a,
          "An 8x8 matrix fragment of the scalar's dtype, every element the scalar.")
      .def(
          "fragment_of",
          [b](T& t, ir::ValueId v, const std::string& op) { return b(t).fragment_of(v, op); },
          "value"_a, "op"_a,
          "A fragment as itself; a uniform float 8x8 tile as the fragment of its value.")
      .def(
          "matrix_load",
          [b](T& t, ir::ValueId p, ir::ValueId offset, ir::ValueId stride, bool transpose) {
            return b(t).matrix_load(p, offset, stride, transpose);
          },
          "ptr"_a, "offset"_a, "stride"_a, "transpose"_a,
          "The 8x8 fragment at ptr + offset with row stride `stride` (transposed: column stride).")
      .def(
          "matrix_store",
          [b](T& t, ir::ValueId m, ir::ValueId p, ir::ValueId offset, ir::ValueId stride,
              bool transpose) { b(t).matrix_store(m, p, offset, stride, transpose); },
          "fragment"_a, "ptr"_a, "offset"_a, "stride"_a, "transpose"_a,
          "Stores an 8x8 fragment as matrix_load reads it.")
      .def(
          "device_tile_load",
          [b](T& t, ir::ValueId p, ir::ValueId row, ir::ValueId column, ir::ValueId rows,
              ir::ValueId columns, int64_t row_stride, int64_t column_stride, ir::ValueId scratch,
              int64_t scratch_rows) {
            return b(t).device_tile_load(
                {p, row, column, rows, columns, row_stride, column_stride, scratch, scratch_rows});
          },
          "ptr"_a, "row"_a, "column"_a, "rows"_a, "columns"_a, "row_stride"_a, "column_stride"_a,
          "scratch"_a, "scratch_rows"_a,
          "The 8x8 fragment at (row, column) of a rows x columns device view; elements outside "
          "read 0. Incomplete tiles pass through `scratch` (scratch_rows x 8).")
      .def(
          "device_tile_store",
          [b](T& t, ir::ValueId m, ir::ValueId p, ir::ValueId row, ir::ValueId column,
              ir::ValueId rows, ir::ValueId columns, int64_t row_stride, int64_t column_stride,
              ir::ValueId scratch, int64_t scratch_rows) {
            b(t).device_tile_store(m, {p, row, column, rows, columns, row_stride, column_stride,
                                       scratch, scratch_rows});
          },
          "fragment"_a, "ptr"_a, "row"_a, "column"_a, "rows"_a, "columns"_a, "row_stride"_a,
          "column_stride"_a, "scratch"_a, "scratch_rows"_a,
          "Stores an 8x8 fragment where device_tile_load reads it, only inside the view.")
      .def(
          "reshape",
          [b](T& t, ir::ValueId v, std::vector<int64_t> shape) {
            return b(t).reshape(v, std::move(shape));
          },
          "tile"_a, "shape"_a, "The tile with a new shape of the same size (row-major order kept).")
      .def(
          "trans", [b](T& t, ir::ValueId v) { return b(t).trans(v); }, "tile"_a,
          "The transpose of a 2-D tile.")
      .def(
          "simd",
          [b](T& t, const std::string& op, ir::ValueId v, ir::ValueId lane) {
            return b(t).simd(op_from_name(op), v, lane);
          },
          "op"_a, "value"_a, "lane"_a = ir::kNoValue,
          "A SIMD collective by name ('simd_sum', ...).")
      .def(
          "barrier", [b](T& t) { b(t).barrier(); }, "Every thread of the threadgroup waits here.")
      .def(
          "device_assert",
          [b](T& t, ir::ValueId cond, const std::string& message) {
            b(t).device_assert(cond, message);
          },
          "cond"_a, "message"_a, "A fault naming message where an element of cond is false.")
      .def(
          "device_print",
          [b](T& t, const std::string& prefix, const std::vector<ir::ValueId>& values, bool hex) {
            b(t).device_print(prefix, values, hex);
          },
          "prefix"_a, "values"_a, "hex"_a, "Prints prefix and the values from the device.")
      // Structured loops.
      .def(
          "begin_for",
          [](T& t, ir::ValueId s, ir::ValueId e, ir::ValueId step,
             const std::vector<ir::ValueId>& inits, std::string body) {
            ir::Builder::ForScope scope = t.begin_for(s, e, step, inits, std::move(body));
            return std::make_pair(scope.induction_var, scope.carried);
          },
          "start"_a, "end"_a, "step"_a, "inits"_a, "body"_a,
          "Opens a loop body (named body in errors); returns (induction variable, carried "
          "values).")
      .def(
          "end_for",
          [](T& t, const std::vector<ir::ValueId>& yields, int64_t num_stages) {
            std::vector<ir::ValueId> results = t.end_for(yields);
            if (num_stages > 0) t.builder().last_op().attrs["num_stages"] = num_stages;
            return results;
          },
          "yields"_a, "num_stages"_a = 0,
          "Closes the innermost loop; returns its results. num_stages > 0: the loop's "
          "pipelining depth (tl.range's hint).")
      .def("begin_reduce_combine", &T::begin_reduce_combine, "tiles"_a, "axis"_a, "what"_a,
           "Opens the combine region of a reduction of the tiles along axis; returns its "
           "arguments (a0..ak-1, b0..bk-1), scalars of the tiles' dtypes.")
      .def("end_reduce_combine", &T::end_reduce_combine, "yields"_a,
           "Closes the combine region with the combined scalars; returns the reductions.")
      .def("abandon_for", &T::abandon_for,
           "Drops the innermost open loop and everything built in it.")
      // Structured while (a Python `while` on a traced condition, python/metile/loops.py).
      .def("begin_while", &T::begin_while, "inits"_a, "condition"_a,
           "Opens the condition region of a while loop over the carried inits (condition names "
           "it in errors); returns its arguments.")
      .def("begin_while_body", &T::begin_while_body, "cond"_a, "passed"_a, "body"_a,
           "Closes the condition region with the i1 scalar cond and the carried values passed "
           "on; opens the body (named body in errors) and returns its arguments.")
      .def("end_while", &T::end_while, "yields"_a,
           "Closes the body with the next carried values; returns the loop's results.")
      .def("abandon_while", &T::abandon_while,
           "Drops the innermost open while and everything built in it.")
      // Structured if (a Python `if` on a traced scalar, python/metile/branches.py).
      .def("begin_if", &T::begin_if, "cond"_a, "then_branch"_a,
           "Opens the then-region of an if on the i1 scalar cond (then_branch names it in the "
           "error for a value that escapes it).")
      .def("begin_else", &T::begin_else, "then_yields"_a, "else_branch"_a,
           "Closes the then-region with its results and opens the else-region.")
      .def("end_if", &T::end_if, "else_yields"_a,
           "Closes the else-region with its results (the then-region's types); returns the "
           "if's results.")
      .def(
          "abandon_if",
          [](T& t) {
            // The tracer traces a Python `if` again when its first trace could not know a
            // result's type (a Python number in the then-branch, a value in the else-branch).
            // The if just closed becomes an empty if without results, which dead-code
            // elimination drops; its values stay unusable (their regions are closed).
            ir::Op& op = t.builder().last_op();
            if (op.kind != ir::OpKind::If)
              throw nb::value_error("abandon_if: the last op is not an if");
            op.results.clear();
            for (ir::Block& region : op.regions) {
              region.ops.clear();
              ir::Op yield;
              yield.kind = ir::OpKind::Yield;
              yield.loc = op.loc;
              region.ops.push_back(std::move(yield));
            }
          },
          "Empties the if closed last (no results, no ops but its yields), so that it does "
          "nothing and dead-code elimination drops it.");
}
}  // namespace

void init_ir(nb::module_& m) {
  bind_type(m);
  bind_kernel(m);
  bind_trace(m);
}

}  // namespace metile::python
