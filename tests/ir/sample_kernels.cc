#include "sample_kernels.h"

#include <cmath>
#include <limits>

#include "metile/ir/builder.h"

namespace metile::ir::samples {

namespace {
Kernel tile_kernel(const std::string& name) {
  Kernel k;
  k.dialect = Dialect::Tile;
  k.name = name;
  return k;
}
}  // namespace

Kernel vector_add() {
  Kernel k = tile_kernel("vector_add");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "read");
  ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ValueId n = b.add_param("n", Type::scalar(DType::i32));
  k.attrs["BLOCK"] = int64_t{256};
  // One builder call per statement: argument evaluation order is unspecified.
  ValueId pid = b.program_id(0);
  ValueId block = b.constant_int(256);
  ValueId start = b.binary(OpKind::Mul, pid, block);
  ValueId offs = b.binary(OpKind::Add, b.arange(0, 256), start);
  ValueId mask = b.cmp("lt", offs, n);
  ValueId xs = b.load(b.ptr_add(x, offs), mask);
  ValueId ys = b.load(b.ptr_add(y, offs), mask);
  ValueId sum = b.binary(OpKind::Add, xs, ys);
  b.store(b.ptr_add(out, offs), sum, mask);
  return k;
}

Kernel softmax_like() {
  Kernel k = tile_kernel("softmax_like");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "write");
  ValueId n = b.add_param("n", Type::scalar(DType::i32));
  ValueId offs = b.arange(0, 128);
  ValueId m0 = b.constant(-1e38, DType::f32);
  ValueId acc0 = b.zeros({128}, DType::f32);
  auto loop = b.begin_for(b.constant_int(0), b.constant_int(4), b.constant_int(1), {m0, acc0});
  ValueId idx =
      b.binary(OpKind::Add, offs, b.binary(OpKind::Mul, loop.induction_var, b.constant_int(128)));
  ValueId mask = b.cmp("lt", idx, n);
  ValueId neg_inf = b.constant(-std::numeric_limits<double>::infinity(), DType::f32);
  ValueId v = b.load(b.ptr_add(x, idx), mask, neg_inf);
  ValueId m = b.binary(OpKind::Max, loop.carried[0], b.reduce("max", v));
  ValueId acc = b.binary(OpKind::Add, loop.carried[1], b.unary(OpKind::Exp, v, true));
  std::vector<ValueId> results = b.end_for({m, acc});
  ValueId total = b.reduce("sum", results[1]);
  ValueId normalized = b.binary(OpKind::Div, results[1], total);
  ValueId shifted = b.binary(OpKind::Sub, normalized, results[0]);
  b.store(b.ptr_add(y, offs), shifted, b.cmp("lt", offs, n));
  return k;
}

Kernel if_with_results() {
  Kernel k = tile_kernel("if_with_results");
  TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ValueId c = b.cmp("gt", b.program_id(0), b.constant_int(0));
  b.begin_if(c);
  ValueId a = b.constant(0.1, DType::f32);
  b.begin_else({a, b.constant_int(1)});
  std::vector<ValueId> r = b.end_if({b.constant(std::nan(""), DType::f32), b.constant_int(2)});
  b.store(b.ptr_add(out, r[1]), r[0]);
  return k;
}

Kernel tensor_descriptors() {
  Kernel k = tile_kernel("tensor_descriptors");
  TileBuilder b(k);
  ValueId src = b.add_param("src", Type::ptr(DType::f16), "read");
  ValueId dst = b.add_param("dst", Type::ptr(DType::f16), "write");
  ValueId rows = b.add_param("rows", Type::scalar(DType::i32));
  ValueId cols = b.add_param("cols", Type::scalar(DType::i32));
  ValueId one = b.constant_int(1);
  ValueId in = b.make_tensor(src, {rows, cols}, {cols, one}, "read");
  ValueId out = b.make_tensor(dst, {rows, cols}, {cols, one}, "write");
  ValueId r = b.expand_dims(b.arange(0, 16), 1);
  ValueId c = b.expand_dims(b.arange(0, 32), 0);
  ValueId tile = b.tensor_load(in, {r, c});
  b.tensor_store(out, {r, c}, tile);
  return k;
}

Kernel shared_and_barrier() {
  Kernel k = tile_kernel("shared_and_barrier");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read_write");
  ValueId shared = b.shared_alloc(64, DType::f32);
  ValueId t = b.thread_id(0);
  b.store(b.ptr_add(shared, t), b.load(b.ptr_add(x, t)));
  b.barrier();
  ValueId lane = b.binary(OpKind::Xor, t, b.constant_int(1));
  ValueId v = b.load(b.ptr_add(shared, lane));
  ValueId s = b.simd(OpKind::SimdSum, b.simd(OpKind::SimdShuffleXor, v, b.constant_int(16)));
  b.store(b.ptr_add(x, t), s);
  return k;
}

Kernel two_d_tiles() {
  Kernel k = tile_kernel("two_d_tiles");
  TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  ValueId rows = b.expand_dims(b.arange(0, 8), 1);
  ValueId cols = b.expand_dims(b.arange(0, 16), 0);
  ValueId flat = b.binary(OpKind::Add, b.binary(OpKind::Mul, rows, b.constant_int(16)), cols);
  ValueId wide = b.broadcast_to(b.arange(0, 16), {8, 16});
  ValueId values = b.select(b.cmp("ge", flat, wide), flat, wide);
  b.store(b.ptr_add(out, flat), b.cast(b.cast(values, DType::f32), DType::i32));
  return k;
}

Kernel metal_kernel() {
  Kernel k;
  k.dialect = Dialect::Metal;
  k.name = "metal_kernel";
  k.attrs["threads_per_threadgroup"] = int64_t{256};
  k.attrs["threadgroup_bytes"] = int64_t{1024};
  Builder b(k);
  const Type i32 = Type::scalar(DType::i32), f32 = Type::scalar(DType::f32);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "write");
  ValueId n = b.add_param("n", i32);
  ValueId tid = b.create1(OpKind::ThreadIndex, {}, i32, {{"axis", int64_t{0}}});
  ValueId group = b.create1(OpKind::ThreadgroupIndex, {}, i32, {{"axis", int64_t{0}}});
  ValueId lane = b.create1(OpKind::SimdLane, {}, i32);
  ValueId buf =
      b.create1(OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::f32, AddressSpace::Threadgroup),
                {{"offset", int64_t{0}}, {"size", int64_t{256}}});
  ValueId four = b.create1(OpKind::Constant, {}, i32, {{"value", int64_t{4}}});
  ValueId base = b.create1(OpKind::Mul, {tid, four}, i32);
  ValueId p = b.create1(OpKind::PtrAdd, {x, base}, Type::ptr(DType::f32));
  ValueId v4 = b.create1(OpKind::Load, {p}, Type::vector(DType::f32, 4));
  ValueId doubled = b.create1(OpKind::Add, {v4, v4}, Type::vector(DType::f32, 4));
  b.create(OpKind::Store, {p, doubled}, {});
  ValueId v = b.create1(OpKind::Load, {p}, f32);
  ValueId one = b.create1(OpKind::Constant, {}, i32, {{"value", int64_t{1}}});
  ValueId shuffled = b.create1(OpKind::SimdShuffleXor, {v, one}, f32);
  ValueId sum = b.create1(OpKind::SimdSum, {shuffled}, f32);
  b.create(OpKind::Store, {b.create1(OpKind::PtrAdd, {buf, lane}, k.type(buf)), sum}, {});
  b.create(OpKind::Barrier, {}, {},
           {{"scope", std::string("threadgroup")}, {"mem", std::string("threadgroup")}});
  ValueId zero = b.create1(OpKind::Constant, {}, i32, {{"value", int64_t{0}}});
  ValueId init = b.create1(OpKind::Constant, {}, f32, {{"value", 0.0}});
  auto loop = b.begin_for(zero, n, one, {init});
  ValueId elem = b.create1(
      OpKind::Load, {b.create1(OpKind::PtrAdd, {buf, loop.induction_var}, k.type(buf))}, f32);
  ValueId total = b.end_for({b.create1(OpKind::Add, {loop.carried[0], elem}, f32)})[0];
  ValueId first =
      b.create1(OpKind::Cmp, {group, zero}, Type::scalar(DType::i1), {{"pred", std::string("eq")}});
  b.begin_if(first);
  b.begin_else({total});
  ValueId result = b.end_if({init})[0];
  b.create(OpKind::Store, {b.create1(OpKind::PtrAdd, {y, tid}, Type::ptr(DType::f32)), result}, {});
  return k;
}

}  // namespace metile::ir::samples
