// convert_layout and explicit layouts: seed 004's batched transpose8 (read contiguous
// elements, change ownership, write transposed coordinates) in every layout family, checked
// bit for bit in the interpreter, with the mechanism the owner map asks for.
#include <gtest/gtest.h>

#include <cstring>

#include "metile/ir/builder.h"
#include "tests/lower/lowering_harness.h"

namespace metile::lower_test {
namespace {

using ir::DType;
using ir::OpKind;
using ir::ThreadLayout;
using ir::ValueId;

// transpose8(source, destination, batches) with OUTPUT_LAYOUT = `layout`, as in the seed, for
// a square tile of side x side elements (side * side = layout.size()).
ir::Kernel transpose(const ThreadLayout& layout, int64_t side, DType dtype) {
  ir::Kernel k;
  k.name = "transpose8";
  ir::TileBuilder b(k);
  ValueId source = b.add_param("source", ir::Type::ptr(dtype), "read");
  ValueId destination = b.add_param("destination", ir::Type::ptr(dtype), "write");
  ValueId batches = b.add_param("batches", ir::Type::scalar(DType::i32));
  ValueId n = b.constant_int(side), one = b.constant_int(1), area = b.constant_int(side * side);
  ValueId inputs = b.make_tensor(source, {batches, n, n}, {area, n, one}, "read");
  ValueId outputs = b.make_tensor(destination, {batches, n, n}, {area, n, one}, "write");
  ValueId batch = b.program_id(0);
  ValueId positions = b.arange(0, side * side);
  ValueId values = b.tensor_load(inputs, {batch, b.binary(OpKind::FloorDiv, positions, n),
                                          b.binary(OpKind::Rem, positions, n)});
  ValueId converted = b.convert_layout(values, layout);
  ValueId owned = b.arange(0, side * side, layout);
  b.tensor_store(outputs,
                 {batch, b.binary(OpKind::Rem, owned, n), b.binary(OpKind::FloorDiv, owned, n)},
                 converted);
  return k;
}

// Input values with signed zeros among them; the transpose must move their bits exactly.
std::vector<float> inputs(int64_t count) {
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = i % 7 == 0 ? -0.0f : i % 5 == 0 ? 0.0f : 0.5f * i - 40;
  return x;
}

void expect_transposes(const ir::Kernel& metal, int64_t side, int batches) {
  const int64_t area = side * side;
  const std::vector<float> x = inputs(area * batches);
  std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::zeros(DType::f32, area * batches)};
  run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(batches)}, {batches, 1, 1});
  const std::vector<float> got = buffers[1].floats();
  for (int b = 0; b < batches; ++b)
    for (int64_t i = 0; i < side; ++i)
      for (int64_t j = 0; j < side; ++j) {
        const float want = x[b * area + i * side + j], have = got[b * area + j * side + i];
        ASSERT_EQ(std::memcmp(&want, &have, sizeof(float)), 0)
            << "batch " << b << " (" << i << ", " << j << "): " << have << " for " << want;
      }
}

struct Case {
  ThreadLayout layout;
  int64_t side;
  std::string mechanism;
};

std::vector<Case> cases() {
  return {
      {ThreadLayout({3, 4, 5, 0, 1, 2}), 8, "threadgroup scratch"},  // the seed's transpose
      {ThreadLayout::identity(64), 8, "forward"},
      {ThreadLayout({1, 0, 2, 3, 4, 5}), 8, "simd_shuffle"},           // a swap inside a SIMD group
      {ThreadLayout({0, 1, 2, 3, 5, 4}), 8, "threadgroup scratch"},    // across groups
      {ThreadLayout({0, 1, 2, 3, 4, 5}, 0b10110), 8, "simd_shuffle"},  // XOR inside groups
      {ThreadLayout({0, 1, 2, 3, 4, 5}, 0b100001), 8, "threadgroup scratch"},  // XOR across
      {ThreadLayout({4, 3, 2, 1, 0, 5, 6, 7}), 16, "simd_shuffle"},            // lane bits reversed
      {ThreadLayout::identity(64, 2), 8, "forward"},  // 2 registers: identity only forwards
      // a register bit traded for lane bits in one SIMD group: shuffles and a select per slot
      {ThreadLayout({5, 0, 1, 2, 3, 4}, 0, 2), 8, "simd_shuffle"},
      {ThreadLayout({1, 0, 2, 3, 4, 5}, 0, 2), 8, "simd_shuffle"},
  };
}

TEST(LowerConvertLayout, Transpose8InEveryLayoutFamily) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.layout.str());
    const lower::LoweringResult r = lower_checked(transpose(c.layout, c.side, DType::f32));
    EXPECT_EQ(r.plan.threads_per_threadgroup, c.layout.thread_count());
    EXPECT_TRUE(r.plan.explicit_layouts);
    ASSERT_EQ(r.layout_conversions.size(), 1u);
    EXPECT_EQ(r.layout_conversions[0].mechanism, c.mechanism);
    const int barriers = count_ops(r.metal, OpKind::Barrier);
    EXPECT_EQ(barriers, c.mechanism == "threadgroup scratch" ? 2 : 0);
    EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffle) > 0, c.mechanism == "simd_shuffle");
    for (int batches : {1, 3}) expect_transposes(r.metal, c.side, batches);
  }
}

TEST(LowerConvertLayout, IntegerAndBoolTilesConvert) {
  // out[i] = (x[i] > 0) as i32, computed in the converted layout: both an i32 and an i1 tile
  // cross threads.
  for (const ThreadLayout& layout :
       {ThreadLayout({3, 4, 5, 0, 1, 2}), ThreadLayout({1, 0, 2, 3, 4, 5})}) {
    ir::Kernel k;
    k.name = "positive";
    ir::TileBuilder b(k);
    ValueId x = b.add_param("x", ir::Type::ptr(DType::i32), "read");
    ValueId out = b.add_param("out", ir::Type::ptr(DType::i32), "write");
    ValueId positions = b.arange(0, 64);
    ValueId values = b.load(b.ptr_add(x, positions));
    ValueId positive = b.convert_layout(b.cmp("gt", values, b.constant_int(0)), layout);
    ValueId moved = b.convert_layout(values, layout);
    ValueId owned = b.arange(0, 64, layout);
    b.store(b.ptr_add(out, owned), b.select(positive, moved, b.constant_int(-1)));
    const lower::LoweringResult r = lower_checked(k);
    ASSERT_EQ(r.layout_conversions.size(), 2u);
    std::vector<int32_t> xs(64);
    for (int i = 0; i < 64; ++i) xs[i] = (i * 37) % 19 - 9;
    std::vector<Buffer> buffers = {Buffer::i32(xs), Buffer::zeros(DType::i32, 64)};
    run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
    for (int i = 0; i < 64; ++i)
      EXPECT_EQ(buffers[1].ints()[i], xs[i] > 0 ? xs[i] : -1) << layout.str() << " " << i;
  }
}

TEST(LowerConvertLayout, ExplicitLayoutsAllowOnlyFp32Sums) {
  for (const std::string kind : {"sum", "max"}) {
    for (DType dtype : {DType::f32, DType::i32}) {
      ir::Kernel k;
      k.name = "reduce_owned";
      ir::TileBuilder b(k);
      ValueId x = b.add_param("x", ir::Type::ptr(dtype), "read");
      ValueId out = b.add_param("out", ir::Type::ptr(dtype), "write");
      ValueId v = b.load(b.ptr_add(x, b.arange(0, 1024, ThreadLayout::identity(1024, 4))));
      b.store(out, b.reduce(kind, v));
      if (kind == "sum" && dtype == DType::f32) {
        const lower::LoweringResult r = lower_checked(k);
        ASSERT_EQ(r.register_reductions.size(), 1u);
        EXPECT_EQ(r.register_reductions[0].registers, 4);
        std::vector<float> xs(1024);
        for (int i = 0; i < 1024; ++i) xs[i] = static_cast<float>(i % 13) - 6;
        std::vector<Buffer> buffers = {Buffer::f32(xs), Buffer::zeros(DType::f32, 1)};
        run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
        float want = 0;
        for (float e : xs) want += e;
        EXPECT_EQ(buffers[1].floats()[0], want);
        continue;
      }
      try {
        lower_checked(k);
        FAIL() << kind;
      } catch (const NotSupported& e) {
        EXPECT_NE(std::string(e.what()).find("cast to FP32 before summing"), std::string::npos)
            << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace metile::lower_test
