#include "metal_kernels.h"

namespace metile::codegen::testing {

using ir::DType;
using ir::OpKind;
using ir::Type;

ir::ValueId MetalBuilder::i32(int64_t v) {
  return create1(OpKind::Constant, {}, Type::scalar(DType::i32), {{"value", v}});
}
ir::ValueId MetalBuilder::f32(double v) {
  return constant(v, DType::f32);
}
ir::ValueId MetalBuilder::constant(double v, DType t) {
  return create1(OpKind::Constant, {}, Type::scalar(t), {{"value", v}});
}
ir::ValueId MetalBuilder::thread_index() {
  return create1(OpKind::ThreadIndex, {}, Type::scalar(DType::i32), {{"axis", int64_t{0}}});
}
ir::ValueId MetalBuilder::threadgroup_index() {
  return create1(OpKind::ThreadgroupIndex, {}, Type::scalar(DType::i32), {{"axis", int64_t{0}}});
}
ir::ValueId MetalBuilder::op(OpKind kind, ir::ValueId a, ir::ValueId b) {
  return create1(kind, {a, b}, type(a));
}
ir::ValueId MetalBuilder::unary(OpKind kind, ir::ValueId a, bool fast) {
  ir::Attrs attrs;
  if (fast) attrs["fast"] = int64_t{1};
  return create1(kind, {a}, type(a), attrs);
}
ir::ValueId MetalBuilder::cmp(const std::string& pred, ir::ValueId a, ir::ValueId b) {
  return create1(OpKind::Cmp, {a, b}, type(a).with_dtype(DType::i1), {{"pred", pred}});
}
ir::ValueId MetalBuilder::ptr_add(ir::ValueId p, ir::ValueId i) {
  return create1(OpKind::PtrAdd, {p, i}, type(p));
}
ir::ValueId MetalBuilder::load(ir::ValueId p, ir::ValueId mask, ir::ValueId other) {
  std::vector<ir::ValueId> operands{p};
  if (mask != ir::kNoValue) operands.insert(operands.end(), {mask, other});
  return create1(OpKind::Load, operands, Type::scalar(type(p).dtype));
}
ir::ValueId MetalBuilder::load_vec(ir::ValueId p, int64_t width) {
  return create1(OpKind::Load, {p}, Type::vector(type(p).dtype, width));
}
void MetalBuilder::store(ir::ValueId p, ir::ValueId v, ir::ValueId mask) {
  std::vector<ir::ValueId> operands{p, v};
  if (mask != ir::kNoValue) operands.push_back(mask);
  create(OpKind::Store, operands, {});
}
void MetalBuilder::barrier(const std::string& scope, const std::string& mem) {
  create(OpKind::Barrier, {}, {}, {{"scope", scope}, {"mem", mem}});
}
ir::ValueId MetalBuilder::named(ir::ValueId v, const std::string& name) {
  kernel().value_names[v] = name;
  return v;
}

ir::Kernel metal_kernel(const std::string& name, int64_t threads, int64_t threadgroup_bytes) {
  ir::Kernel k;
  k.dialect = ir::Dialect::Metal;
  k.name = name;
  k.attrs["threads_per_threadgroup"] = threads;
  k.attrs["threadgroup_bytes"] = threadgroup_bytes;
  return k;
}

ir::Kernel vector_add_kernel() {
  ir::Kernel k = metal_kernel("vector_add", 256, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto y = b.add_param("y", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  // One builder call per statement: argument evaluation order would otherwise decide value ids.
  auto group = b.threadgroup_index();
  auto base = b.op(OpKind::Mul, group, b.i32(256));
  auto idx = b.named(b.op(OpKind::Add, base, tid), "idx");
  auto mask = b.named(b.cmp("lt", idx, n), "mask");
  auto zero = b.f32(0.0);
  auto xv = b.load(b.ptr_add(x, idx), mask, zero);
  auto yv = b.load(b.ptr_add(y, idx), mask, zero);
  auto sum = b.named(b.op(OpKind::Add, xv, yv), "sum");
  b.store(b.ptr_add(out, idx), sum, mask);
  return k;
}

ir::Kernel reduction_kernel() {
  ir::Kernel k = metal_kernel("block_sum", 64, 16);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  auto lane = b.named(b.create1(OpKind::SimdLane, {}, Type::scalar(DType::i32)), "lane");
  auto group = b.create1(OpKind::SimdGroup, {}, Type::scalar(DType::i32));
  auto zero = b.f32(0.0);
  auto in_range = b.cmp("lt", tid, n);
  auto v = b.load(b.ptr_add(x, tid), in_range, zero);
  auto partial = b.named(b.create1(OpKind::SimdSum, {v}, Type::scalar(DType::f32)), "partial");
  auto scratch = b.named(
      b.create1(OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::f32, ir::AddressSpace::Threadgroup),
                {{"offset", int64_t{0}}, {"size", int64_t{2}}}),
      "scratch");
  auto first_lane = b.cmp("eq", lane, b.i32(0));
  b.store(b.ptr_add(scratch, group), partial, first_lane);
  b.barrier("threadgroup", "threadgroup");
  auto lane_has_partial = b.cmp("lt", lane, b.i32(2));
  auto p = b.load(b.ptr_add(scratch, lane), lane_has_partial, zero);
  auto total = b.named(b.create1(OpKind::SimdSum, {p}, Type::scalar(DType::f32)), "total");
  b.store(out, total, b.cmp("eq", tid, b.i32(0)));
  b.barrier("simdgroup", "none");
  return k;
}

ir::Kernel fibonacci_kernel() {
  ir::Kernel k = metal_kernel("fibonacci", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto zero = b.i32(0);
  auto one = b.i32(1);
  auto loop = b.begin_for(zero, n, one, {zero, one, zero});
  b.named(loop.carried[0], "a");
  b.named(loop.carried[1], "b");
  b.named(loop.carried[2], "steps");
  auto next = b.named(b.op(OpKind::Add, loop.carried[0], loop.carried[1]), "next");
  // (a, b) -> (b, a + b): the first yield reads the second carried variable.
  auto results = b.end_for({loop.carried[1], next, b.op(OpKind::Add, loop.carried[2], one)});
  b.store(out, results[0]);
  b.store(b.ptr_add(out, one), results[1]);
  b.store(b.ptr_add(out, b.i32(2)), results[2]);
  return k;
}

ir::Kernel if_results_kernel() {
  ir::Kernel k = metal_kernel("if_results", 128, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  auto in_range = b.named(b.cmp("lt", tid, n), "in_range");
  b.begin_if(in_range);
  auto loaded = b.load(b.ptr_add(x, tid));
  auto doubled = b.op(OpKind::Mul, loaded, b.f32(2.0));
  b.begin_else({doubled, tid});
  auto results = b.end_if({b.f32(-1.0), b.i32(0)});
  b.named(results[0], "value");
  b.named(results[1], "offset");
  auto as_float = b.create1(OpKind::Cast, {results[1]}, Type::scalar(DType::f32));
  auto sum = b.op(OpKind::Add, results[0], as_float);
  b.store(b.ptr_add(out, tid), sum);
  return k;
}

ir::Kernel half_bfloat_kernel() {
  ir::Kernel k = metal_kernel("half_bfloat", 64, 0);
  MetalBuilder b(k);
  auto a = b.add_param("a", Type::ptr(DType::f16), "read");
  auto c = b.add_param("c", Type::ptr(DType::bf16), "read");
  auto out_h = b.add_param("out_h", Type::ptr(DType::f16), "write");
  auto out_b = b.add_param("out_b", Type::ptr(DType::bf16), "read_write");
  auto tid = b.named(b.thread_index(), "tid");
  auto h = b.named(b.load(b.ptr_add(a, tid)), "h");
  auto e = b.unary(OpKind::Exp, h);
  auto fast = b.unary(OpKind::Exp2, h, true);
  auto smaller = b.op(OpKind::Min, e, fast);
  auto m = b.op(OpKind::Max, smaller, b.constant(0.5, DType::f16));
  auto r = b.op(OpKind::Rem, m, b.constant(65504.0, DType::f16));
  auto shifted = b.op(OpKind::Add, r, b.unary(OpKind::Neg, h));
  b.store(b.ptr_add(out_h, tid), shifted);
  auto bf = b.named(b.load(b.ptr_add(c, tid)), "bf");
  auto t = b.unary(OpKind::Tanh, bf);
  auto from_half = b.create1(OpKind::Cast, {h}, Type::scalar(DType::bf16));
  auto both = b.op(OpKind::Add, t, from_half);
  auto s = b.op(OpKind::Mul, both, b.constant(0.1, DType::bf16));
  auto shuffled = b.create1(OpKind::SimdShuffleXor, {s, b.i32(1)}, Type::scalar(DType::bf16));
  auto out_ptr = b.ptr_add(out_b, tid);
  b.store(out_ptr, b.op(OpKind::Add, b.load(out_ptr), shuffled));
  return k;
}

ir::Kernel vec4_kernel() {
  ir::Kernel k = metal_kernel("vec4_square", 64, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  auto offset = b.named(b.op(OpKind::Mul, tid, b.i32(4)), "offset");
  auto v = b.named(b.load_vec(b.ptr_add(x, offset), 4), "v");
  auto sq = b.named(b.op(OpKind::Mul, v, v), "sq");
  auto bigger = b.cmp("gt", sq, v);
  auto picked = b.create1(OpKind::Select, {bigger, sq, v}, Type::vector(DType::f32, 4));
  auto e = b.unary(OpKind::Exp, picked, true);
  auto dst = b.ptr_add(out, offset);
  b.store(dst, e, b.cmp("lt", offset, n));
  return k;
}

ir::Kernel packed_kernel() {
  ir::Kernel k = metal_kernel("convert_packed", 64, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f16), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto first = b.named(b.op(OpKind::Mul, b.thread_index(), b.i32(4)), "first");
  auto last = b.named(b.op(OpKind::Add, first, b.i32(3)), "last");
  auto whole = b.named(b.cmp("lt", last, n), "whole");
  auto src = b.named(b.ptr_add(x, first), "src");
  auto dst = b.named(b.ptr_add(out, first), "dst");
  auto aligned = b.create1(OpKind::IsAligned, {src}, Type::scalar(DType::i1), {{"bytes", 16}});
  auto ok = b.named(b.op(OpKind::And, whole, aligned), "ok");
  b.begin_if(ok);
  auto v = b.named(b.create1(OpKind::PackedLoad, {src}, Type::vector(DType::f32, 4)), "v");
  std::vector<ir::ValueId> halves;
  for (int64_t i = 0; i < 4; ++i) {
    auto e = b.create1(OpKind::Extract, {v}, Type::scalar(DType::f32), {{"index", i}});
    halves.push_back(b.create1(OpKind::Cast, {e}, Type::scalar(DType::f16)));
  }
  b.create(OpKind::PackedStore, {dst, halves[0], halves[1], halves[2], halves[3]}, {});
  b.begin_else({});
  b.end_if({});
  return k;
}

ir::Kernel bytes_kernel() {
  ir::Kernel k = metal_kernel("bytes", 64, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::i8), "read");
  auto f = b.add_param("f", Type::ptr(DType::f32), "read");
  auto h = b.add_param("h", Type::ptr(DType::f16), "read");
  auto out = b.add_param("out", Type::ptr(DType::i8), "write");
  auto out_u = b.add_param("out_u", Type::ptr(DType::u8), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto byte = [&](int64_t v, DType t) {
    return b.create1(OpKind::Constant, {}, Type::scalar(t), {{"value", v}});
  };
  auto tid = b.named(b.thread_index(), "tid");
  auto in = b.named(b.cmp("lt", tid, n), "in");
  auto v = b.named(b.load(b.ptr_add(x, tid), in, byte(-128, DType::i8)), "v");
  auto sum = b.named(b.op(OpKind::Add, v, byte(100, DType::i8)), "sum");  // wraps in 8 bits
  auto q = b.op(OpKind::FloorDiv, sum, byte(-3, DType::i8));
  auto shifted = b.op(OpKind::Shr, q, byte(1, DType::i8));
  auto smaller = b.op(OpKind::Min, shifted, b.unary(OpKind::Abs, v));
  auto lane = b.create1(OpKind::SimdShuffleXor, {smaller, b.i32(1)}, Type::scalar(DType::i8));
  auto total = b.create1(OpKind::SimdSum, {lane}, Type::scalar(DType::i8));
  auto saturated = b.create1(OpKind::Cast, {b.load(b.ptr_add(f, tid))}, Type::scalar(DType::i8));
  auto from_half = b.create1(OpKind::Cast, {b.load(b.ptr_add(h, tid))}, Type::scalar(DType::u8));
  b.store(b.ptr_add(out, tid), b.op(OpKind::Xor, total, saturated), in);
  auto u = b.create1(OpKind::Cast, {v}, Type::scalar(DType::u8));
  auto larger = b.op(OpKind::Max, b.op(OpKind::Shl, u, byte(4, DType::u8)), from_half);
  b.store(b.ptr_add(out_u, tid), b.op(OpKind::Sub, larger, byte(255, DType::u8)), in);
  return k;
}

ir::Kernel float8_kernel() {
  ir::Kernel k = metal_kernel("float8", 64, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto h = b.add_param("h", Type::ptr(DType::f16), "read");
  auto e5 = b.add_param("e5", Type::ptr(DType::f8e5m2), "read");
  auto out = b.add_param("out", Type::ptr(DType::f8e4m3), "write");
  auto wide = b.add_param("wide", Type::ptr(DType::f32), "write");
  auto s = b.add_param("s", Type::ptr(DType::i16), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  auto in = b.named(b.cmp("lt", tid, n), "in");
  auto v = b.named(b.load(b.ptr_add(e5, tid), in, b.constant(-1.5, DType::f8e5m2)), "v");
  auto from_x = b.create1(OpKind::Cast, {b.load(b.ptr_add(x, tid))}, Type::scalar(DType::f8e4m3));
  auto from_h = b.create1(OpKind::Cast, {b.load(b.ptr_add(h, tid))}, Type::scalar(DType::f8e4m3));
  auto from_e5 = b.create1(OpKind::Cast, {v}, Type::scalar(DType::f8e4m3));
  auto lane = b.create1(OpKind::SimdShuffleXor, {from_e5, b.i32(1)}, Type::scalar(DType::f8e4m3));
  auto low = b.cmp("lt", tid, b.i32(32));
  auto either = b.create1(OpKind::Select, {low, from_x, from_h}, Type::scalar(DType::f8e4m3));
  auto odd = b.cmp("lt", tid, b.i32(16));
  b.store(b.ptr_add(out, tid),
          b.create1(OpKind::Select, {odd, lane, either}, Type::scalar(DType::f8e4m3)), in);
  auto back = b.create1(OpKind::Cast, {v}, Type::scalar(DType::f32));
  b.store(b.ptr_add(wide, tid), back, in);
  auto saturated = b.create1(OpKind::Cast, {back}, Type::scalar(DType::i16));
  auto sum = b.op(OpKind::Add, saturated,
                  b.create1(OpKind::Constant, {}, Type::scalar(DType::i16), {{"value", 30000}}));
  b.store(b.ptr_add(s, tid), sum, in);  // wraps in 16 bits
  return k;
}

const std::vector<NamedKernel>& golden_kernels() {
  static const std::vector<NamedKernel> kernels = {
      {"vector_add", vector_add_kernel},   {"reduction", reduction_kernel},
      {"fibonacci", fibonacci_kernel},     {"if_results", if_results_kernel},
      {"half_bfloat", half_bfloat_kernel}, {"vec4", vec4_kernel},
      {"packed", packed_kernel},           {"bytes", bytes_kernel},
      {"float8", float8_kernel},
  };
  return kernels;
}

std::vector<NamedKernel> cuda_golden_kernels() {
  std::vector<NamedKernel> kernels;
  for (const NamedKernel& k : golden_kernels())
    if (k.name != "vec4") kernels.push_back(k);
  return kernels;
}

}  // namespace metile::codegen::testing
