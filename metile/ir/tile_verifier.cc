// Tile IR's own rules: tile shapes, the tile construction ops, layout conversions, tensor
// descriptors, threadgroup allocations and reductions.
#include "metile/ir/verifier.h"
#include "metile/support/bits.h"

namespace metile::ir::verifier_detail {

namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

void check_type(Checker& c, const Op* definer, ValueId v) {
  const Type& t = c.type(v);
  if (t.is_vector()) return c.report(definer, "vectors are Metal IR types", {v});
  if (t.is_matrix()) return check_matrix_type(c, definer, v, false);
  if (t.is_desc() && (t.shape.size() != 1 || t.shape[0] < 1 || t.shape[0] > 3))
    return c.report(definer, "a tensor descriptor has rank 1, 2 or 3", {v});
  if (!t.is_tile()) return;
  if (t.shape.empty() || t.shape.size() > 2) return c.report(definer, "tiles are 1-D or 2-D", {v});
  for (int64_t d : t.shape)
    if (!is_power_of_two(d))
      return c.report(definer, "tile dimensions must be powers of two, got " + dims_text(t.shape),
                      {v});
}

class TileOpRules : OpRuleChecks {
 public:
  using OpRuleChecks::OpRuleChecks;

  void check() {
    using R = TypeRule;
    switch (op_info(op_.kind).rule) {
      case R::Arange:
        return arange();
      case R::Splat:
        return splat();
      case R::ExpandDims:
        return expand_dims();
      case R::Broadcast:
        return broadcast();
      case R::MakeTensor:
        return make_tensor();
      case R::TensorLoad:
        return tensor_access(op_.operands.size() - 1, c_.type(op_.results[0]), op_.results[0]);
      case R::TensorStore:
        return tensor_access(op_.operands.size() - 2, in(op_.operands.size() - 1),
                             op_.operands.back());
      case R::SharedAlloc:
        return shared_alloc();
      case R::Reduce:
        return reduce();
      case R::ReduceAxis:
        return reduce_axis();
      case R::ReduceCombine:
        return reduce_combine();
      case R::Scan:
        return scan();
      case R::XorPermute:
        return xor_permute();
      case R::DeviceAssert:
        return device_assert();
      case R::DevicePrint:
        return device_print();
      case R::Dot:
        return dot();
      case R::Reshape:
        return reshape();
      case R::Trans:
        return trans();
      case R::ConvertLayout:
        return convert_layout();
      case R::DeviceTile:
        return device_tile();
      // The shared rules (verifier.cc) cover these.
      case R::Constant:
      case R::GridGeometry:
      case R::ThreadGeometry:
      case R::SimdGeometry:
      case R::Arithmetic:
      case R::UnaryMath:
      case R::Compare:
      case R::Select:
      case R::Cast:
      case R::InlineAsm:
      case R::PtrAdd:
      case R::Load:
      case R::Store:
      case R::Atomic:
      case R::SimdCollective:
      case R::ThreadgroupBuffer:
      case R::Barrier:
      case R::PackedLoad:
      case R::PackedStore:
      case R::Extract:
      case R::Pack:
      case R::IsAligned:
      case R::MatrixFill:
      case R::MatrixLoad:
      case R::MatrixStore:
      case R::MatrixMma:
      case R::AsyncPipeline:
        return check_matrix_op(c_, op_);
      case R::AssertTrue:  // Metal IR ops: the dialect check rejects them here
      case R::Print:
      case R::For:
      case R::If:
      case R::While:
      case R::Yield:
      case R::DescriptorMatmul:
      case R::MppMatmul2d:  // the dialect check rejects it in Tile IR
        return;
    }
  }

 private:
  void arange() {
    const int64_t size = op_.int_attr("end") - op_.int_attr("start");
    if (out() != Type::tile(DType::i32, {size}))
      return fail("the result must be tile<" + std::to_string(size) + "xi32>", {r()});
    layout_covers(size);
  }

  // A layout attribute, when present, owns exactly `elements` logical elements.
  void layout_covers(int64_t elements) {
    const ThreadLayout* layout = op_.layout_attr("layout");
    if (layout && layout->size() != elements)
      fail("the layout " + layout->str() + " has " + std::to_string(layout->size()) +
               " elements but the tile has " + std::to_string(elements),
           {r()});
  }

  void convert_layout() {
    if (!in(0).is_tile()) return fail("the operand must be a tile", {a(0)});
    if (out() != in(0)) return fail("the result must have the operand's type", {a(0), r()});
    layout_covers(in(0).num_elements());
  }

  void splat() {
    if (in(0).kind != TypeKind::Scalar) return fail("the operand must be a scalar", {a(0)});
    if (!out().is_tile() || out().element() != in(0))
      fail("the result must be a tile of the operand's type", {a(0), r()});
  }

  void expand_dims() {
    const int64_t axis = op_.int_attr("axis");
    const Type& t = in(0);
    if (!t.is_tile() || t.shape.size() != 1) return fail("the operand must be a 1-D tile", {a(0)});
    if (axis != 0 && axis != 1) return fail("axis must be 0 or 1, got " + std::to_string(axis));
    Type expected = t;
    expected.shape =
        axis == 0 ? std::vector<int64_t>{1, t.shape[0]} : std::vector<int64_t>{t.shape[0], 1};
    if (out() != expected) fail("the result must be " + expected.str(), {a(0), r()});
  }

  void broadcast() {
    const Type &t = in(0), &res = out();
    if (!t.is_tile() || !res.is_tile() || t.element() != res.element())
      return fail("operand and result must be tiles of one element type", {a(0), r()});
    bool ok = t.shape.size() == res.shape.size();
    for (size_t i = 0; ok && i < t.shape.size(); ++i)
      ok = t.shape[i] == res.shape[i] || t.shape[i] == 1;
    if (!ok)
      fail("cannot broadcast shape " + dims_text(t.shape) + " to " + dims_text(res.shape),
           {a(0), r()});
  }

  void make_tensor() {
    const Type& base = in(0);
    if (!base.is_pointer() || base.space != AddressSpace::Device)
      return fail("the base must be a device pointer", {a(0)});
    if (op_.operands.size() % 2 == 0)
      return fail("takes a base, then one size and one stride per dimension");
    const int64_t rank = static_cast<int64_t>(op_.operands.size() - 1) / 2;
    for (size_t i = 1; i < op_.operands.size(); ++i)
      if (in(i) != Type::scalar(DType::i32)) fail("sizes and strides must be i32 scalars", {a(i)});
    if (out() != Type::desc(base.dtype, rank))
      fail("the result must be " + Type::desc(base.dtype, rank).str(), {a(0), r()});
  }

  // tensor_load and tensor_store: a descriptor, `rank` coordinates of one shape, and the
  // value loaded or stored, of that shape and the descriptor's dtype.
  void tensor_access(size_t rank, const Type& value, ValueId value_id) {
    const Type& desc = in(0);
    if (!desc.is_desc()) return fail("the first operand must be a tensor descriptor", {a(0)});
    if (static_cast<int64_t>(rank) != desc.shape[0])
      return fail("the tensor has rank " + std::to_string(desc.shape[0]) + " but " +
                      std::to_string(rank) + " coordinate(s) were given",
                  {a(0)});
    const Type& first = in(1);
    for (size_t i = 1; i <= rank; ++i) {
      if (in(i).pointer || in(i).dtype != DType::i32)
        return fail("coordinates must be i32", {a(i)});
      if (in(i) != first) return fail("coordinates must have one shape", {a(1), a(i)});
    }
    Type expected = first.with_dtype(desc.dtype);
    if (value != expected)
      fail("the value must be " + expected.str() + " (the coordinates' shape, the tensor's dtype)",
           {value_id, a(0)});
  }

  // device_tile_load (p, row, column, rows, columns, scratch) or device_tile_store (m, p,
  // ...): a device pointer to the fragment's f16 or f32, i32 coordinates and extents, scratch
  // a threadgroup pointer of that dtype, strides positive with one of them 1.
  void device_tile() {
    const bool store = op_.kind == OpKind::DeviceTileStore;
    const size_t first = store ? 1 : 0;
    const Type& m = store ? in(0) : out();
    if (!m.is_matrix() || (m.dtype != DType::f16 && m.dtype != DType::f32))
      return fail("the fragment must be an f16 or f32 matrix", {store ? a(0) : r()});
    const Type& p = in(first);
    if (!p.is_pointer() || p.space != AddressSpace::Device || p.dtype != m.dtype)
      return fail("the address must be a device pointer to the fragment's dtype", {a(first)});
    for (size_t i = first + 1; i < first + 5; ++i)
      if (in(i) != Type::scalar(DType::i32))
        return fail("the row, column and extents must be i32 scalars", {a(i)});
    const Type& scratch = in(first + 5);
    if (!scratch.is_pointer() || scratch.space != AddressSpace::Threadgroup ||
        scratch.dtype != m.dtype)
      return fail("the scratch must be a threadgroup pointer to the fragment's dtype",
                  {a(first + 5)});
    const int64_t rs = op_.int_attr("row_stride"), cs = op_.int_attr("column_stride");
    if (rs <= 0 || cs <= 0 || (rs != 1 && cs != 1))
      fail("the strides must be positive, one of them 1 (row- or column-major), got (" +
           std::to_string(rs) + ", " + std::to_string(cs) + ")");
  }

  void shared_alloc() {
    const int64_t size = op_.int_attr("size");
    if (size <= 0) fail("size must be positive, got " + std::to_string(size));
    if (!out().is_pointer() || out().space != AddressSpace::Threadgroup)
      fail("the result must be a threadgroup pointer", {r()});
  }

  void reduce() {
    const Type& t = in(0);
    if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || is_fp8(t.dtype))
      return fail("the operand must be a tile of numbers (not i1 or fp8)", {a(0)});
    if (out() != Type::scalar(t.dtype))
      fail("the result must be a " + std::string(dtype_name(t.dtype)) + " scalar", {a(0), r()});
  }

  void reduce_axis() {
    const Type& t = in(0);
    if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || is_fp8(t.dtype) || t.shape.size() != 2)
      return fail("the operand must be a 2-D tile of numbers (not i1 or fp8)", {a(0)});
    const int64_t axis = op_.int_attr("axis");
    if (axis != 0 && axis != 1) return fail("axis must be 0 or 1, got " + std::to_string(axis));
    const Type expected = Type::tile(t.dtype, std::vector<int64_t>(1, t.shape[1 - axis]));
    if (out() != expected) fail("the result must be " + expected.str(), {a(0), r()});
  }

  // k tiles of numbers of one shape; the region ^(a0..ak-1, b0..bk-1) of their element types,
  // pure scalar code, yields k scalars of those types; the results as reduce or reduce_axis.
  void reduce_combine() {
    const size_t k = op_.operands.size();
    const Type& t = in(0);
    for (size_t i = 0; i < k; ++i) {
      const Type& x = in(i);
      if (!x.is_tile() || x.pointer || x.dtype == DType::i1 || x.shape.size() > 2)
        return fail("the operands must be 1-D or 2-D tiles of numbers", {a(i)});
      if (x.shape != t.shape) return fail("the operands must have one shape", {a(0), a(i)});
    }
    const int64_t axis = op_.int_attr("axis");
    if (axis < 0 || axis >= static_cast<int64_t>(t.shape.size()))
      return fail("axis " + std::to_string(axis) + " is out of range for " + t.str(), {a(0)});
    if (op_.results.size() != k)
      return fail("has " + std::to_string(k) + " operand(s) but " +
                  std::to_string(op_.results.size()) + " result(s); one result per operand");
    for (size_t i = 0; i < k; ++i) {
      const Type expected = t.shape.size() == 1 ? Type::scalar(in(i).dtype)
                                                : Type::tile(in(i).dtype, {t.shape[1 - axis]});
      if (c_.type(op_.results[i]) != expected)
        return fail("result " + std::to_string(i) + " must be " + expected.str(),
                    {a(i), op_.results[i]});
    }
    const Block& combine = op_.regions[0];
    if (combine.args.size() != 2 * k)
      return fail("the combine region takes 2 x " + std::to_string(k) +
                  " scalar arguments (a0..ak-1, b0..bk-1), got " +
                  std::to_string(combine.args.size()));
    for (size_t i = 0; i < 2 * k; ++i)
      if (c_.type(combine.args[i]) != in(i % k).element())
        return fail("combine argument " + std::to_string(i) + " must be " +
                        in(i % k).element().str() + ", the element type of operand " +
                        std::to_string(i % k),
                    {combine.args[i]});
    for (const Op& inner : combine.ops) {
      if (inner.kind == OpKind::Yield) continue;
      bool scalar = op_info(inner.kind).has(Trait::Pure) && inner.regions.empty();
      for (ValueId v : inner.operands) scalar = scalar && c_.type(v).is_scalar();
      for (ValueId v : inner.results) scalar = scalar && c_.type(v).is_scalar();
      if (!scalar)
        return fail(
            "the combine region holds pure scalar code (one element of each input), "
            "got " +
            std::string(op_name(inner.kind)));
    }
    if (combine.ops.empty() || combine.ops.back().kind != OpKind::Yield) return;
    const std::vector<ValueId>& yields = combine.ops.back().operands;
    if (yields.size() != k)
      return fail("the combine yields " + std::to_string(yields.size()) + " value(s) but " +
                      std::to_string(k) + " are reduced",
                  yields);
    for (size_t i = 0; i < k; ++i)
      if (c_.type(yields[i]) != in(i).element())
        return fail("combined value " + std::to_string(i) + " must be " + in(i).element().str(),
                    {yields[i]});
  }

  void scan() {
    const Type& t = in(0);
    if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || is_fp8(t.dtype) || t.shape.size() > 2)
      return fail("the operand must be a 1-D or 2-D tile of numbers (not i1 or fp8)", {a(0)});
    const int64_t axis = op_.int_attr("axis");
    if (axis < 0 || axis >= static_cast<int64_t>(t.shape.size()))
      return fail("axis " + std::to_string(axis) + " is out of range for " + t.str(), {a(0)});
    if (out() != t) fail("the result must be " + t.str(), {a(0), r()});
  }

  void xor_permute() {
    const Type& t = in(0);
    if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || t.shape.size() > 2)
      return fail("the operand must be a 1-D or 2-D tile of numbers", {a(0)});
    const int64_t mask = op_.int_attr("mask");
    if (mask <= 0 || mask >= t.num_elements())
      return fail("mask " + std::to_string(mask) + " must lie in [1, " +
                      std::to_string(t.num_elements()) + ")",
                  {a(0)});
    if (out() != t) fail("the result must be " + t.str(), {a(0), r()});
  }

  void device_assert() {
    if (in(0).dtype != DType::i1 || in(0).pointer || in(0).is_matrix())
      fail("the condition must be an i1 scalar or tile", {a(0)});
  }

  void device_print() {
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      const Type& t = in(i);
      if (t.pointer || t.is_matrix())
        return fail("prints scalars and tiles of numbers, got " + t.str(), {a(i)});
      if (t.shape != in(0).shape) return fail("the tiles must have one shape", {a(0), a(i)});
    }
  }

  void dot() {
    const std::string rule = dot_rule_violation(in(0), in(1), in(2), dot_precision(op_));
    if (!rule.empty()) return fail(rule, {a(0), a(1), a(2)});
    if (out() != in(2))
      fail("the result must have the accumulator's type " + in(2).str(), {a(2), r()});
  }

  void reshape() {
    const Type &t = in(0), &res = out();
    if (!t.is_tile() || !res.is_tile() || t.element() != res.element() ||
        t.num_elements() != res.num_elements())
      fail("the result must be a tile of the operand's element type and element count",
           {a(0), r()});
  }

  void trans() {
    const Type& t = in(0);
    if (!t.is_tile() || t.shape.size() != 2) return fail("the operand must be a 2-D tile", {a(0)});
    Type expected = t;
    expected.shape = {t.shape[1], t.shape[0]};
    if (out() != expected) fail("the result must be " + expected.str(), {a(0), r()});
  }
};

}  // namespace

std::vector<Diagnostic> verify_tile(const Kernel& k) {
  DialectRules rules;
  rules.check_type = check_type;
  rules.check_op = [](Checker& c, const Op& op) { TileOpRules(c, op).check(); };
  rules.check_kernel = [](Checker&) {};
  return verify_with(k, rules);
}

}  // namespace metile::ir::verifier_detail

namespace metile::ir {

std::string dot_precision(const Op& dot) {
  return dot.has_attr("precision") ? dot.str_attr("precision") : "ieee";
}

std::string dot_rule_violation(const Type& a, const Type& b, const Type& acc,
                               const std::string& precision) {
  // Fragments (docs/fragments.md): 8x8 by 8x8 into an f32 fragment.
  if (a.is_matrix() || b.is_matrix()) {
    if (a != b || !is_float(a.dtype) || is_fp8(a.dtype) || a.dtype == DType::f64)
      return "fragment operands a and b must be float fragments of one dtype, got " + a.str() +
             " and " + b.str() + "; cast one of them first";
    if (acc != Type::matrix(DType::f32))
      return "the accumulator of a fragment dot must be an f32 fragment, got " + acc.str();
    if (precision == "tf32" && a.dtype != DType::f32)
      return "precision tf32 applies to f32 inputs only, got " + a.str();
    return "";
  }
  const auto matrix = [](const Type& t) {
    return t.is_tile() && t.shape.size() == 2 && !t.pointer;
  };
  if (!matrix(a) || !matrix(b))
    return "a and b must be 2-D tiles, got " + a.str() + " and " + b.str();
  if (a.dtype != b.dtype)
    return "a and b must have one dtype, got " + a.str() + " and " + b.str() +
           "; cast one of them first";
  if (a.dtype != DType::f16 && a.dtype != DType::bf16 && a.dtype != DType::f32)
    return "a and b must be f16, bf16 or f32 tiles, got " + a.str();
  if (a.shape[1] != b.shape[0])
    return "the inner dimensions differ: a is " + a.str() + " ([M, K]) and b is " + b.str() +
           " ([K, N])";
  const int64_t m = a.shape[0], n = b.shape[1], k = a.shape[1];
  if (m < 8 || n < 8 || k < 8)
    return "M, N and K must be at least 8, got M=" + std::to_string(m) +
           ", N=" + std::to_string(n) + ", K=" + std::to_string(k);
  const Type expected = Type::tile(DType::f32, {m, n});
  if (acc != expected)
    return "the accumulator must be " + expected.str() + " (f32, [M, N]), got " + acc.str();
  if (precision == "tf32" && a.dtype != DType::f32)
    return "precision tf32 applies to f32 inputs only, got " + a.str();
  return "";
}

}  // namespace metile::ir
