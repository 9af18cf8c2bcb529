// The per-op type rules both dialects share (verifier.h): each TypeRule's operand, result,
// attribute and region checks, for an op whose operands and results are valid values.
#include <string>
#include <vector>

#include "metile/ir/verifier.h"

#include "metile/ir/printer.h"

namespace metile::ir::verifier_detail {

namespace {

std::string shape_text(const Type& t) {
  std::string r = "[";
  if (t.is_tile() || t.is_vector())
    for (size_t i = 0; i < t.shape.size(); ++i) r += (i ? ", " : "") + std::to_string(t.shape[i]);
  return r + "]";
}

bool same_shape(const Type& a, const Type& b) {
  bool a_scalar = a.kind == TypeKind::Scalar, b_scalar = b.kind == TypeKind::Scalar;
  if (a_scalar || b_scalar) return a_scalar && b_scalar;
  return a.kind == b.kind && a.shape == b.shape;
}

bool is_number(const Type& t) {
  return !t.pointer && !t.is_desc();
}

// fp8 values are bytes to move, convert and select; arithmetic on them is done in a wider
// float, where the frontends put it (docs/python.md, "8-bit floats").
std::string fp8_rule(const Type& t) {
  return std::string(dtype_name(t.dtype)) +
         " values are only loaded, stored, converted and selected; convert them to a wider "
         "float (f16, bf16, f32) to compute";
}

// The per-op type rules both dialects share, for an op with valid operands and results.
class CommonOpRules : OpRuleChecks {
 public:
  using OpRuleChecks::OpRuleChecks;

  void check() {
    using R = TypeRule;
    switch (op_info(op_.kind).rule) {
      case R::Constant:
        return constant();
      case R::GridGeometry:
        return geometry(2);
      case R::ThreadGeometry:
        return geometry(0);
      case R::SimdGeometry:
        return geometry(-1);
      case R::Arithmetic:
        return binary();
      case R::UnaryMath:
        return unary();
      case R::Compare:
        return cmp();
      case R::Select:
        return select();
      case R::Cast:
        return cast();
      case R::InlineAsm:
        return inline_asm();
      case R::PtrAdd:
        return ptr_add();
      case R::Load:
        return load();
      case R::Store:
        return store();
      case R::Atomic:
        return atomic();
      case R::SimdCollective:
        return simd();
      case R::For:
        return for_loop();
      case R::If:
        return if_else();
      case R::While:
        return while_loop();
      case R::DescriptorMatmul:
      case R::MppMatmul2d:
        return descriptor_matmul();
      // Only their counts and attributes (checked before) are shared; the dialect's own
      // rules check the rest.
      case R::Arange:
      case R::Splat:
      case R::ExpandDims:
      case R::Broadcast:
      case R::MakeTensor:
      case R::TensorLoad:
      case R::TensorStore:
      case R::SharedAlloc:
      case R::ThreadgroupBuffer:
      case R::Reduce:
      case R::ReduceAxis:
      case R::ReduceCombine:
      case R::Scan:
      case R::XorPermute:
      case R::DeviceAssert:
      case R::DevicePrint:
      case R::AssertTrue:
      case R::Print:
      case R::Dot:
      case R::Reshape:
      case R::Trans:
      case R::ConvertLayout:
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
      case R::DeviceTile:
      case R::AsyncPipeline:
      case R::Yield:
        return;
    }
  }

 private:
  void constant() {
    const Type& t = out();
    if (!t.is_scalar()) return fail("the result must be a number scalar", {r()});
    const Attr& value = op_.attrs.at("value");
    const int64_t* i = std::get_if<int64_t>(&value);
    if (!is_float(t.dtype) && !i)
      return fail("an integer constant needs an integer value, got " + print_attr(value), {r()});
    if (is_float(t.dtype)) return;
    if (t.dtype == DType::i1 && *i != 0 && *i != 1)
      return fail("an i1 constant must be 0 or 1, got " + std::to_string(*i), {r()});
    const IntegerRange range = integer_range(t.dtype);
    if (!range.contains(*i))
      fail("value " + std::to_string(*i) + " does not fit " + std::string(dtype_name(t.dtype)) +
               " (range " + std::to_string(range.min) + ".." + std::to_string(range.max) + ")",
           {r()});
  }

  // max_axis: the largest allowed axis attribute; -1 for ops without one.
  void geometry(int max_axis) {
    if (out() != Type::scalar(DType::i32)) fail("the result must be i32", {r()});
    if (max_axis < 0) return;
    const int64_t axis = op_.int_attr("axis");
    if (axis < 0 || axis > max_axis)
      fail("axis must be in [0, " + std::to_string(max_axis) + "], got " + std::to_string(axis));
  }

  void binary() {
    const OpKind k = op_.kind;
    if (in(0) != in(1) || in(0) != out())
      return fail("operands and result must have one type", {a(0), a(1), r()});
    const Type& t = in(0);
    if (!is_number(t)) return fail("operands must be numbers (use ptr_add for pointers)", {a(0)});
    if (is_fp8(t.dtype)) return fail(fp8_rule(t), {a(0), a(1)});
    bool bitwise = k == OpKind::And || k == OpKind::Or || k == OpKind::Xor;
    bool shift = k == OpKind::Shl || k == OpKind::Shr;
    if ((bitwise || shift) && is_float(t.dtype))
      fail("bitwise operations need integer or i1 operands", {a(0), a(1)});
    else if (shift && t.dtype == DType::i1)
      fail("shifts need integer operands", {a(0), a(1)});
    else if (!bitwise && !shift && k != OpKind::Min && k != OpKind::Max && t.dtype == DType::i1)
      fail("arithmetic on i1 values is not defined", {a(0), a(1)});
  }

  void unary() {
    if (in(0) != out()) return fail("operand and result must have one type", {a(0), r()});
    if (!is_number(in(0))) return fail("the operand must be a number", {a(0)});
    if (is_fp8(in(0).dtype)) return fail(fp8_rule(in(0)), {a(0)});
    bool integer_ok = op_.kind == OpKind::Neg || op_.kind == OpKind::Abs;
    if (!is_float(in(0).dtype) && !(integer_ok && is_integer(in(0).dtype)))
      fail("needs a floating-point operand", {a(0)});
  }

  void cmp() {
    if (in(0) != in(1)) return fail("operands must have one type", {a(0), a(1)});
    if (!is_number(in(0))) return fail("operands must be numbers", {a(0), a(1)});
    if (is_fp8(in(0).dtype)) return fail(fp8_rule(in(0)), {a(0), a(1)});
    if (out() != in(0).with_dtype(DType::i1))
      fail("the result must be i1 of the operand shape " + shape_text(in(0)), {a(0), r()});
  }

  void select() {
    if (in(1) != in(2) || in(1) != out())
      return fail("both choices and the result must have one type", {a(1), a(2), r()});
    const Type& c = in(0);
    if (c.pointer || c.dtype != DType::i1) return fail("the condition must be i1", {a(0)});
    // A scalar condition may pick between whole vectors (Metal IR).
    if (!same_shape(c, out()) && !(c.is_scalar() && out().is_vector()))
      fail("condition shape " + shape_text(c) + " does not match result shape " + shape_text(out()),
           {a(0), r()});
  }

  void cast() {
    // i64 to a device pointer and back (Triton's int_to_ptr and ptr_to_int).
    const bool address = (in(0).pointer && in(0).space == AddressSpace::Device && !out().pointer &&
                          out().dtype == DType::i64) ||
                         (out().pointer && out().space == AddressSpace::Device && !in(0).pointer &&
                          in(0).dtype == DType::i64);
    if (!address && (!is_number(in(0)) || !is_number(out())))
      return fail("casts convert numbers, and i64 to and from device pointers, only", {a(0), r()});
    if (!same_shape(in(0), out()))
      fail("operand shape " + shape_text(in(0)) + " differs from result shape " + shape_text(out()),
           {a(0), r()});
  }

  void inline_asm() {
    if (!is_number(out())) return fail("the result must be a number", {r()});
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      if (!is_number(in(i))) return fail("operands must be numbers", {a(i)});
      if (!same_shape(in(i), out()))
        return fail("operand shape " + shape_text(in(i)) + " differs from result shape " +
                        shape_text(out()),
                    {a(i), r()});
    }
  }

  void ptr_add() {
    if (!in(0).pointer) return fail("the first operand must be a pointer", {a(0)});
    if (in(1).pointer || !is_number(in(1)) || !is_integer(in(1).dtype))
      return fail("the offset must be an integer", {a(1)});
    if (!same_shape(in(0), in(1)))
      return fail("offset shape " + shape_text(in(1)) + " does not match pointer shape " +
                      shape_text(in(0)),
                  {a(1), a(0)});
    if (out() != in(0)) fail("the result must have the pointer's type", {a(0), r()});
  }

  // The shape an access through `ptr` moves: the pointer's own, or a vector (Metal IR).
  bool access_shape_ok(const Type& ptr, const Type& value) {
    return same_shape(ptr, value) || (ptr.is_pointer() && value.is_vector());
  }

  void load() {
    const Type& p = in(0);
    if (!p.pointer) return fail("the address must be a pointer or a tile of pointers", {a(0)});
    if (!is_number(out()) || out().dtype != p.dtype)
      return fail("the result must have the pointee dtype " + std::string(dtype_name(p.dtype)),
                  {a(0), r()});
    if (!access_shape_ok(p, out()))
      return fail(
          "result shape " + shape_text(out()) + " does not match pointer shape " + shape_text(p),
          {r(), a(0)});
    if (op_.operands.size() == 2) return fail("takes (ptr) or (ptr, mask, other)");
    if (op_.operands.size() == 3) {
      mask(a(1));
      if (in(2) != out()) fail("'other' must have the result type " + out().str(), {a(2), r()});
    }
  }

  void mask(ValueId m) {
    const Type& t = c_.type(m);
    const Type& p = in(0);
    if (t.pointer || t.dtype != DType::i1) return fail("the mask must be i1", {m});
    if (!same_shape(t, p))
      fail("mask shape " + shape_text(t) + " does not match pointer shape " + shape_text(p),
           {m, a(0)});
  }

  void store() {
    const Type& p = in(0);
    if (!p.pointer) return fail("the address must be a pointer or a tile of pointers", {a(0)});
    if (!is_number(in(1)) || in(1).dtype != p.dtype)
      return fail("the value must have the pointee dtype " + std::string(dtype_name(p.dtype)),
                  {a(1), a(0)});
    if (!access_shape_ok(p, in(1)))
      return fail(
          "value shape " + shape_text(in(1)) + " does not match pointer shape " + shape_text(p),
          {a(1), a(0)});
    if (op_.operands.size() == 3) mask(a(2));
  }

  // atomic_rmw (p, v[, mask]) and atomic_cas (p, cmp, v): device pointers to i32, u32 or f32
  // (f32 adds, exchanges, and takes maxima and minima), values and the result of the pointee dtype
  // and the pointers' shape.
  void atomic() {
    const Type& p = in(0);
    if (!p.pointer || p.space != AddressSpace::Device)
      return fail("the address must be a device pointer or a tile of them", {a(0)});
    if (p.dtype != DType::i32 && p.dtype != DType::u32 && p.dtype != DType::f32)
      return fail("atomics take i32, u32 or f32 elements, not " + std::string(dtype_name(p.dtype)),
                  {a(0)});
    const bool cas = op_.kind == OpKind::AtomicCas;
    const std::string& kind = cas ? std::string() : op_.str_attr("kind");
    if (!cas && p.dtype == DType::f32 && kind != "add" && kind != "xchg" && kind != "max" &&
        kind != "min")
      return fail(
          "f32 atomics add, exchange, or take the maximum or minimum; " + kind + " takes integers",
          {a(0)});
    const size_t values = cas ? 2 : 1;
    for (size_t i = 1; i <= values; ++i)
      if (!is_number(in(i)) || in(i).dtype != p.dtype || !access_shape_ok(p, in(i)))
        return fail("operand " + std::to_string(i) + " must have the pointee dtype " +
                        std::string(dtype_name(p.dtype)) + " and the pointer's shape",
                    {a(i), a(0)});
    if (!is_number(out()) || out().dtype != p.dtype || !access_shape_ok(p, out()))
      return fail("the result is the old value: the pointee dtype and the pointer's shape",
                  {r(), a(0)});
    if (!cas && op_.operands.size() == 3) mask(a(2));
  }

  void simd() {
    const Type& v = in(0);
    if (!is_number(v) || v.is_tile() || v.is_matrix())
      return fail("operates on per-thread scalars or vectors", {a(0)});
    const bool combines =
        op_.kind == OpKind::SimdSum || op_.kind == OpKind::SimdMax || op_.kind == OpKind::SimdMin;
    if (combines && is_fp8(v.dtype)) return fail(fp8_rule(v), {a(0)});
    if (out() != v) fail("the result must have the operand's type", {a(0), r()});
    if (op_.operands.size() == 2 && !is_integer_scalar(in(1)))
      fail("the lane must be an integer scalar", {a(1)});
  }

  // Each yield of `regions` must pass values of `types`.
  void yields_match(const std::vector<Type>& types, const std::string& what) {
    for (const Block& region : op_.regions) {
      if (region.ops.empty() || region.ops.back().kind != OpKind::Yield) continue;
      const Op& y = region.ops.back();
      if (y.operands.size() != types.size()) {
        fail("yield passes " + std::to_string(y.operands.size()) + " value(s) but " + what +
                 " expects " + std::to_string(types.size()),
             y.operands);
        continue;
      }
      for (size_t i = 0; i < types.size(); ++i)
        if (c_.valid(y.operands[i]) && c_.type(y.operands[i]) != types[i])
          fail(
              "yield value " + std::to_string(i) + " must be " + types[i].str() + " (" + what + ")",
              {y.operands[i]});
    }
  }

  void for_loop() {
    const Type& start = in(0);
    if (!is_integer_scalar(start) || in(1) != start || in(2) != start)
      return fail("loop bounds must be integer scalars of one dtype", {a(0), a(1), a(2)});
    const size_t carried = op_.operands.size() - 3;
    if (op_.results.size() != carried)
      return fail("has " + std::to_string(carried) + " carried value(s) but " +
                  std::to_string(op_.results.size()) + " result(s)");
    std::vector<Type> types;
    for (size_t i = 0; i < carried; ++i) {
      types.push_back(in(3 + i));
      if (out(i) != in(3 + i))
        fail("result " + std::to_string(i) + " must have the type of its initial value",
             {a(3 + i), r(i)});
    }
    const Block& body = op_.regions[0];
    if (body.args.size() != carried + 1)
      return fail("the body takes the induction variable and " + std::to_string(carried) +
                  " carried value(s), got " + std::to_string(body.args.size()) + " argument(s)");
    if (c_.type(body.args[0]) != start)
      fail("the induction variable must have the bounds' type", {body.args[0], a(0)});
    for (size_t i = 0; i < carried; ++i)
      if (c_.type(body.args[1 + i]) != types[i])
        fail(
            "region argument " + std::to_string(1 + i) + " must have the type of its initial value",
            {body.args[1 + i], a(3 + i)});
    yields_match(types, "the loop carries it");
  }

  void if_else() {
    if (!op_.results.empty() && op_.regions.size() != 2)
      return fail("an if with results needs an else region");
    const Type& c = in(0);
    if (!c.is_scalar() || c.dtype != DType::i1) fail("the condition must be an i1 scalar", {a(0)});
    for (const Block& region : op_.regions)
      if (!region.args.empty()) return fail("an if's regions take no arguments");
    std::vector<Type> types;
    for (ValueId v : op_.results) types.push_back(c_.type(v));
    yields_match(types, "the if's results");
  }

  // One type list: the inits, both regions' arguments, the values the before-region passes
  // on (after its i1 scalar condition), the after-region's yields and the results.
  void while_loop() {
    std::vector<Type> types;
    for (size_t i = 0; i < op_.operands.size(); ++i) types.push_back(in(i));
    if (op_.results.size() != types.size())
      return fail("has " + std::to_string(types.size()) + " carried value(s) but " +
                  std::to_string(op_.results.size()) + " result(s)");
    for (size_t i = 0; i < types.size(); ++i)
      if (out(i) != types[i])
        fail("result " + std::to_string(i) + " must have the type of its initial value",
             {a(i), r(i)});
    const char* names[] = {"before", "after"};
    for (size_t k = 0; k < 2; ++k) {
      const Block& region = op_.regions[k];
      if (region.args.size() != types.size())
        return fail("the " + std::string(names[k]) + "-region takes " +
                    std::to_string(types.size()) + " carried value(s), got " +
                    std::to_string(region.args.size()) + " argument(s)");
      for (size_t i = 0; i < types.size(); ++i)
        if (c_.type(region.args[i]) != types[i])
          fail("argument " + std::to_string(i) + " of the " + names[k] +
                   "-region must have the type of its initial value",
               {region.args[i], a(i)});
    }
    const Block& before = op_.regions[0];
    if (before.ops.empty() || before.ops.back().kind != OpKind::Yield) return;
    const Op& y = before.ops.back();
    for (const Block& region : op_.regions)
      for (const Op& inner : region.ops)
        if (inner.kind == OpKind::Yield)
          for (ValueId v : inner.operands)
            if (!c_.valid(v)) return;
    if (y.operands.size() != types.size() + 1)
      return fail("the before-region yields " + std::to_string(y.operands.size()) +
                      " value(s) but passes on the condition and " + std::to_string(types.size()) +
                      " carried value(s)",
                  y.operands);
    const Type& cond = c_.type(y.operands[0]);
    if (!cond.is_scalar() || cond.dtype != DType::i1)
      fail("the condition (the before-region's first yield) must be an i1 scalar", {y.operands[0]});
    for (size_t i = 0; i < types.size(); ++i)
      if (c_.type(y.operands[1 + i]) != types[i])
        fail("passed value " + std::to_string(i) + " must be " + types[i].str() +
                 " (the loop carries it)",
             {y.operands[1 + i]});
    const Block& after = op_.regions[1];
    if (after.ops.empty() || after.ops.back().kind != OpKind::Yield) return;
    const Op& next = after.ops.back();
    if (next.operands.size() != types.size())
      return fail("the after-region yields " + std::to_string(next.operands.size()) +
                      " value(s) but the loop carries " + std::to_string(types.size()),
                  next.operands);
    for (size_t i = 0; i < types.size(); ++i)
      if (c_.type(next.operands[i]) != types[i])
        fail("yield value " + std::to_string(i) + " must be " + types[i].str() +
                 " (the loop carries it)",
             {next.operands[i]});
  }

  // Both dialects' descriptor GEMM: three pointers of float dtypes (a and b of one), eight
  // i32 scalars, and an epilogue region from the accumulator (an [M, N] f32 tile in Tile IR,
  // one f32 element in Metal IR) to c's dtype.
  void descriptor_matmul() {
    for (size_t i = 0; i < 3; ++i)
      if (!in(i).is_pointer() || !is_float(in(i).dtype))
        return fail("operand " + std::to_string(i) + " must be a pointer to floats", {a(i)});
    if (in(0).dtype != in(1).dtype) return fail("a and b must have one dtype", {a(0), a(1)});
    for (size_t i = 3; i < op_.operands.size(); ++i)
      if (in(i) != Type::scalar(DType::i32))
        return fail("operand " + std::to_string(i) + " must be an i32 scalar", {a(i)});
    const Block& body = op_.regions[0];
    if (body.args.size() != 1) return fail("the epilogue takes one argument, the accumulator");
    Type acc = c_.type(body.args[0]);
    if (acc.dtype != DType::f32 || acc.pointer || (!acc.is_scalar() && !acc.is_tile()) ||
        (acc.is_tile() && (acc.shape.size() != 2 || acc.shape[0] < 8 || acc.shape[1] < 8)))
      return fail("the accumulator must be f32 (an [M, N] tile of M, N >= 8 in Tile IR)",
                  {body.args[0]});
    acc.dtype = in(2).dtype;
    yields_match({acc}, "the epilogue stores it to c");
  }
};

}  // namespace

void check_common_op_rules(Checker& c, const Op& op) {
  CommonOpRules(c, op).check();
}

}  // namespace metile::ir::verifier_detail
