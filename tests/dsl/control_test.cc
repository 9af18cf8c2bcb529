// tile_range and if_ build for/if ops with the right carried values and results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using namespace metile::dsl;
using ir::OpKind;
using ir::Type;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Control, LoopWithoutState) {
  ir::Kernel k = trace("loop", [](KernelContext& c) {
    auto out = c.buffer("out", f32, "write");
    auto n = c.scalar("n", i32);
    tile_range(0, n, 64, [&](Value start) { store(out + start + arange(0, 64), 1.0f); });
  });
  auto loops = test::ops_of(k, OpKind::For);
  ASSERT_EQ(loops.size(), 1u);
  const ir::Op& loop = *loops[0];
  EXPECT_EQ(loop.operands.size(), 3u);
  EXPECT_TRUE(loop.results.empty());
  EXPECT_EQ(loop.regions[0].args.size(), 1u);
  EXPECT_EQ(k.type(loop.regions[0].args[0]), Type::scalar(ir::DType::i32));
  EXPECT_EQ(loop.regions[0].ops.back().kind, OpKind::Yield);
  EXPECT_EQ(test::ops_of(k, OpKind::Store).size(), 1u);
}

TEST(Control, CarriedTileUpdatedThroughItsReference) {
  Value result;
  ir::Kernel k = trace("loop", [&](KernelContext& c) {
    auto x = c.buffer("x", f32, "read");
    auto n = c.scalar("n", i32);
    result = tile_range(0, n, 32, full({32}, -1e38f, f32), [&](Value start, Value& m) {
      auto cols = start + arange(0, 32);
      m = maximum(m, load(x + cols, cols < n));
    });
  });
  const ir::Op& loop = *test::ops_of(k, OpKind::For)[0];
  ASSERT_EQ(loop.operands.size(), 4u);
  EXPECT_EQ(k.type(loop.operands[3]), Type::tile(ir::DType::f32, {32}));
  ASSERT_EQ(loop.results.size(), 1u);
  EXPECT_EQ(loop.results[0], result.id());
  const ir::Op& yield = loop.regions[0].ops.back();
  EXPECT_EQ(yield.kind, OpKind::Yield);
  EXPECT_EQ(test::producer(k, yield.operands[0])->kind, OpKind::Max);
}

TEST(Control, CarriedValueReturnedByTheBody) {
  ir::Kernel k = trace("loop", [](KernelContext&) {
    Value s = tile_range(0, 128, 16, zeros({16}, f32), [](Value, Value acc) { return acc + 1.0f; });
    (void)s;
  });
  const ir::Op& loop = *test::ops_of(k, OpKind::For)[0];
  EXPECT_EQ(test::producer(k, loop.regions[0].ops.back().operands[0])->kind, OpKind::Add);
}

TEST(Control, SeveralCarriedValuesDestructure) {
  ir::Kernel k = trace("loop", [](KernelContext& c) {
    auto y = c.buffer("y", f32, "write");
    auto [s, q] = tile_range(0, 64, 8, {zeros({8}, f32), zeros({8}, f32)},
                             [](Value start, Value& s, Value& q) {
                               auto v = (start + arange(0, 8)).to(f32);
                               s += v;
                               q += v * v;
                             });
    store(y, sum(s) + sum(q));
  });
  const ir::Op& loop = *test::ops_of(k, OpKind::For)[0];
  EXPECT_EQ(loop.operands.size(), 5u);
  EXPECT_EQ(loop.results.size(), 2u);
  EXPECT_EQ(loop.regions[0].args.size(), 3u);
}

TEST(Control, VectorOfCarriedValues) {
  ir::Kernel k = trace("loop", [](KernelContext&) {
    std::vector<Value> init = {zeros({4}, f32), zeros({4}, i32), zeros({4}, f32)};
    auto out = tile_range(0, 16, 4, init, [](Value, std::vector<Value>& c) {
      for (Value& v : c) v += 1;
    });
    EXPECT_EQ(out.size(), 3u);
  });
  EXPECT_EQ(test::ops_of(k, OpKind::For)[0]->results.size(), 3u);
}

TEST(Control, NestedLoopsAndScalarBoundsOfAnotherDtype) {
  ir::Kernel k = trace("nested", [](KernelContext& c) {
    auto n = c.scalar("n", i64);
    tile_range(0, n, 2, [&](Value i) {
      tile_range(i, n, 1, [&](Value j) { EXPECT_EQ(j.type(), Type::scalar(ir::DType::i64)); });
    });
  });
  auto loops = test::ops_of(k, OpKind::For);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(k.type(loops[0]->operands[0]), Type::scalar(ir::DType::i64));
}

TEST(Control, IfWithResults) {
  Value r;
  ir::Kernel k = trace("branch", [&](KernelContext& c) {
    auto n = c.scalar("n", i32);
    r = if_(
        n > 0, [&] { return zeros({8}, f32) + 1.0f; }, [&] { return zeros({8}, f32); });
  });
  auto ifs = test::ops_of(k, OpKind::If);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0]->regions.size(), 2u);
  EXPECT_THAT(ifs[0]->results, ElementsAre(r.id()));
  EXPECT_EQ(k.type(r.id()), Type::tile(ir::DType::f32, {8}));
}

TEST(Control, IfWithoutElseAndWithoutResults) {
  ir::Kernel k = trace("branch", [](KernelContext& c) {
    auto out = c.buffer("out", f32, "write");
    if_(program_id(0) == 0, [&] { store(out, 1.0f); });
  });
  const ir::Op& op = *test::ops_of(k, OpKind::If)[0];
  EXPECT_TRUE(op.results.empty());
  EXPECT_EQ(op.regions[1].ops.size(), 1u);  // just the yield
}

TEST(Control, IfWithSeveralResults) {
  ir::Kernel k = trace("branch", [](KernelContext& c) {
    auto n = c.scalar("n", i32);
    auto [a, b] = if_(
        n > 0,
        [&] {
          return std::array<Value, 2>{n, n + 1};
        },
        [&] {
          return std::array<Value, 2>{n - 1, n};
        });
    (void)a;
    (void)b;
  });
  EXPECT_EQ(test::ops_of(k, OpKind::If)[0]->results.size(), 2u);
}

TEST(Control, ValueDefinedInALoopCannotEscapeIt) {
  try {
    trace("escape", [](KernelContext& c) {
      auto out = c.buffer("out", i32, "write");
      Value inner;
      tile_range(0, 4, 1, [&](Value i) { inner = i * 2; });
      store(out, inner);
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("was defined inside a tile_range body and cannot be used "
                                    "outside it"));
  }
}

TEST(Control, ThenValueCannotBeUsedInElse) {
  try {
    trace("escape", [](KernelContext& c) {
      auto n = c.scalar("n", i32);
      Value then_value;
      if_(
          n > 0,
          [&] {
            then_value = n + 1;
            return then_value;
          },
          [&] { return then_value; });
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("was defined inside the then-branch of an if_"));
  }
}

}  // namespace
}  // namespace metile
