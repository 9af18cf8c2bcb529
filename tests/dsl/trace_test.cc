// trace(): parameters, constexprs and kernel attributes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <regex>

#include "metile/dsl/dsl.h"
#include "metile/ir/printer.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using namespace metile::dsl;
using ir::OpKind;
using ::testing::HasSubstr;

void vector_add(KernelContext& k) {
  auto x = k.buffer("x", f32, "read");
  auto y = k.buffer("y", f32, "read");
  auto out = k.buffer("out", f32, "write");
  auto n = k.scalar("n", i32);
  const int64_t BLOCK = k.constexpr_int("BLOCK");
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

TEST(Trace, VectorAddBuildsTheExpectedOps) {
  ir::Kernel k = trace("vector_add", vector_add, {{"BLOCK", 256}});
  EXPECT_EQ(k.name, "vector_add");
  EXPECT_EQ(k.dialect, ir::Dialect::Tile);
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[0].name, "x");
  EXPECT_EQ(k.params[0].access, "read");
  EXPECT_EQ(k.params[2].access, "write");
  EXPECT_EQ(k.type(k.params[0].value), ir::Type::ptr(ir::DType::f32));
  EXPECT_EQ(k.type(k.params[3].value), ir::Type::scalar(ir::DType::i32));
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("BLOCK")), 256);

  // C++ leaves the evaluation order of an expression's operands open, so the op order within
  // one statement is not asserted; the ops and their number are.
  auto count = [&](OpKind kind) { return test::ops_of(k, kind).size(); };
  EXPECT_EQ(count(OpKind::ProgramId), 1u);
  EXPECT_EQ(count(OpKind::Arange), 1u);
  EXPECT_EQ(count(OpKind::Mul), 1u);
  EXPECT_EQ(count(OpKind::Add), 2u);
  EXPECT_EQ(count(OpKind::Cmp), 1u);
  EXPECT_EQ(count(OpKind::PtrAdd), 3u);
  EXPECT_EQ(count(OpKind::Load), 2u);
  EXPECT_EQ(count(OpKind::For) + count(OpKind::If), 0u);
  const ir::Op* mul = test::ops_of(k, OpKind::Mul)[0];
  EXPECT_EQ(k.type(mul->results[0]), ir::Type::scalar(ir::DType::i32));
  EXPECT_EQ(test::producer(k, mul->operands[1])->kind, OpKind::Constant);
  for (const ir::Op* load : test::ops_of(k, OpKind::Load)) {
    EXPECT_EQ(load->operands.size(), 3u);  // masked; 'other' defaults to 0
    EXPECT_EQ(k.type(load->results[0]), ir::Type::tile(ir::DType::f32, {256}));
  }
  const ir::Op& store = k.body.ops.back();
  EXPECT_EQ(store.operands.size(), 3u);
  EXPECT_EQ(k.type(store.operands[0]), ir::Type::ptr_tile(ir::DType::f32, {256}));
  EXPECT_EQ(k.type(store.operands[2]), ir::Type::tile(ir::DType::i1, {256}));
}

TEST(Trace, OpsCarryTheCallersSourceLine) {
  int line = 0;
  ir::Kernel k = trace("lines", [&](KernelContext&) {
    line = __LINE__ + 1;
    auto t = arange(0, 8) + 1;
    (void)t;
  });
  for (const ir::Op& op : k.body.ops) {
    EXPECT_EQ(op.loc.line, line) << ir::op_name(op.kind);
    EXPECT_THAT(op.loc.file, HasSubstr("trace_test.cc"));
  }
}

TEST(Trace, DifferentConstexprsGiveDifferentKernels) {
  ir::Kernel small = trace("vector_add", vector_add, {{"BLOCK", 64}});
  ir::Kernel large = trace("vector_add", vector_add, {{"BLOCK", 1024}});
  EXPECT_EQ(std::get<int64_t>(small.attrs.at("BLOCK")), 64);
  EXPECT_EQ(std::get<int64_t>(large.attrs.at("BLOCK")), 1024);
  const ir::Op* small_range = test::ops_of(small, OpKind::Arange)[0];
  const ir::Op* large_range = test::ops_of(large, OpKind::Arange)[0];
  EXPECT_EQ(small.type(small_range->results[0]).shape, std::vector<int64_t>{64});
  EXPECT_EQ(large.type(large_range->results[0]).shape, std::vector<int64_t>{1024});
}

TEST(Trace, ConstexprDefaultsAndFloatsAreRecorded) {
  double eps = 0;
  int64_t block = 0;
  ir::Kernel k = trace("defaults",
                       [&](KernelContext& c) {
                         block = c.constexpr_int("BLOCK", 128);
                         eps = c.constexpr_float("EPS");
                       },
                       {{"EPS", 1e-5}});
  EXPECT_EQ(block, 128);
  EXPECT_DOUBLE_EQ(eps, 1e-5);
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("BLOCK")), 128);
  EXPECT_DOUBLE_EQ(std::get<double>(k.attrs.at("EPS")), 1e-5);
}

TEST(Trace, UnknownConstexprIsAnError) {
  try {
    trace("vector_add", vector_add, {{"BLOCK", 64}, {"BLOKC", 32}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("constexpr 'BLOKC' is not used by the kernel"));
  }
}

TEST(Trace, NumThreadsIsAKernelAttribute) {
  ir::Kernel k = trace("threads", [](KernelContext& c) { c.set_num_threads(128); });
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("num_threads")), 128);
}

// Parameters are not ops, so one may be declared after the first op (as an operand
// evaluated in either order, `arange(0, 4) < c.scalar("n", i32)`, may be): the kernel is the
// one that declares it first.
TEST(Trace, ALateParameterGivesTheKernelOfAnEarlyOne) {
  ir::Kernel early = trace("k", [](KernelContext& c) {
    auto x = c.buffer("x", f32, "read");
    auto n = c.scalar("n", i32);
    auto offs = arange(0, 4);
    load(x + offs, offs < n);
  });
  ir::Kernel late = trace("k", [](KernelContext& c) {
    auto offs = arange(0, 4);
    auto x = c.buffer("x", f32, "read");
    load(x + offs, offs < c.scalar("n", i32));
  });
  // The same text but for the source lines.
  auto without_lines = [](const ir::Kernel& k) {
    return std::regex_replace(ir::print(k), std::regex(" loc\\([^)]*\\)"), "");
  };
  EXPECT_EQ(without_lines(late), without_lines(early));
  EXPECT_EQ(late.params[0].value, 0);
  EXPECT_EQ(late.params[1].value, 1);
}

// A parameter belongs to the kernel, not to the region it was declared in.
TEST(Trace, AParameterDeclaredInALoopIsUsableAfterIt) {
  ir::Kernel k = trace("k", [](KernelContext& c) {
    Value n;
    tile_range(0, 4, 1, [&](const Value&) { n = c.scalar("n", i32); });
    store(c.buffer("out", i32, "write"), n + 1);
  });
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].name, "n");
  EXPECT_EQ(k.params[0].value, 0);
}

TEST(Trace, OperationsOutsideATraceAreUserErrors) {
  EXPECT_THROW(program_id(0), UserError);
}

TEST(Trace, ValuesCannotCrossTraces) {
  Value leaked;
  trace("first", [&](KernelContext&) { leaked = arange(0, 4); });
  try {
    trace("second", [&](KernelContext&) { leaked + 1; });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.rule(), HasSubstr("belongs to another kernel's trace"));
  }
}

}  // namespace
}  // namespace metile
