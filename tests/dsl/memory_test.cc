// Pointers, loads, stores, tensor descriptors and threadgroup memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using namespace metile::dsl;
using ir::OpKind;
using ir::Type;
using ::testing::HasSubstr;

TEST(Memory, PointerPlusOffsetsIsPtrAddEitherWay) {
  ir::Kernel k = trace("ptr", [](KernelContext& c) {
    auto x = c.buffer("x", f16, "read");
    auto a = x + arange(0, 8);
    auto b = arange(0, 8) + x;
    auto d = x - 4;
    EXPECT_EQ(a.type(), Type::ptr_tile(ir::DType::f16, {8}));
    EXPECT_EQ(b.type(), Type::ptr_tile(ir::DType::f16, {8}));
    EXPECT_EQ(d.type(), Type::ptr(ir::DType::f16));
  });
  EXPECT_EQ(test::ops_of(k, OpKind::PtrAdd).size(), 3u);
  EXPECT_EQ(test::ops_of(k, OpKind::Neg).size(), 1u);
}

TEST(Memory, MaskedLoadWithANumberForOther) {
  ir::Kernel k = trace("load", [](KernelContext& c) {
    auto x = c.buffer("x", f16, "read");
    auto offs = arange(0, 16);
    auto v = load(x + offs, offs < 10, -1.5);
    EXPECT_EQ(v.type(), Type::tile(ir::DType::f16, {16}));
  });
  const ir::Op& load = *test::ops_of(k, OpKind::Load)[0];
  ASSERT_EQ(load.operands.size(), 3u);
  EXPECT_EQ(k.type(load.operands[2]), Type::tile(ir::DType::f16, {16}));
}

TEST(Memory, StoreOfANumberAdoptsThePointeeDtype) {
  ir::Kernel k = trace("store", [](KernelContext& c) {
    auto y = c.buffer("y", bf16, "write");
    store(y + arange(0, 4), 2);
  });
  const ir::Op& store = *test::ops_of(k, OpKind::Store)[0];
  EXPECT_EQ(k.type(store.operands[1]), Type::tile(ir::DType::bf16, {4}));
}

TEST(Memory, TensorDescriptorWithDefaultStridesAndAccess) {
  ir::Kernel k = trace("tensor", [](KernelContext& c) {
    auto a = c.buffer("a", f32, "read");
    auto out = c.buffer("out", f32, "write");
    auto rows = c.scalar("rows", i32);
    auto src = tensor(a, {rows, 64});
    auto dst = tensor(out, {rows, 64}, {64, 1});
    auto r = arange(0, 4).col();
    auto cols = arange(0, 64).row();
    auto v = src.load({r, cols});
    EXPECT_EQ(v.type(), Type::tile(ir::DType::f32, {4, 64}));
    dst.store({r, cols}, v * 2.0f);
  });
  auto descs = test::ops_of(k, OpKind::MakeTensor);
  ASSERT_EQ(descs.size(), 2u);
  EXPECT_EQ(descs[0]->str_attr("access"), "read");
  EXPECT_EQ(descs[1]->str_attr("access"), "write");
  EXPECT_EQ(k.type(descs[0]->results[0]), Type::desc(ir::DType::f32, 2));
  EXPECT_EQ(test::ops_of(k, OpKind::TensorLoad).size(), 1u);
  EXPECT_EQ(test::ops_of(k, OpKind::TensorStore).size(), 1u);
}

TEST(Memory, SharedMemoryAndBarrier) {
  ir::Kernel k = trace("shared", [](KernelContext&) {
    auto scratch = shared(64, f32);
    EXPECT_EQ(scratch.type(), Type::ptr(ir::DType::f32, ir::AddressSpace::Threadgroup));
    store(scratch + thread_id(), 1.0f);
    barrier();
    auto v = load(scratch + (thread_id() ^ 1));
    (void)v;
  });
  EXPECT_EQ(test::ops_of(k, OpKind::SharedAlloc)[0]->int_attr("size"), 64);
  EXPECT_EQ(test::ops_of(k, OpKind::Barrier).size(), 1u);
}

TEST(Memory, EmptyValueIsAUserError) {
  try {
    trace("empty", [](KernelContext& c) {
      auto x = c.buffer("x", f32, "read");
      Value never_set;
      load(x + never_set);
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("add: got an empty Value"));
  }
}

}  // namespace
}  // namespace metile
