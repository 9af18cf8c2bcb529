// The tracing core's own rules: parameters, kernel attributes, regions and descriptors.
#include "metile/trace/kernel_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace metile::trace {
namespace {

using ir::DType;
using ir::ValueId;
using ::testing::HasSubstr;

// The rule of the UserError `f` raises ("" when it raises none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.rule();
  }
  return "";
}

TEST(KernelTrace, StartsATileKernelOfTheName) {
  KernelTrace t("k", "hint");
  EXPECT_EQ(t.kernel().name, "k");
  EXPECT_EQ(t.kernel().dialect, ir::Dialect::Tile);
  EXPECT_EQ(t.next_value_id(), 0);
}

TEST(KernelTrace, ParametersComeFirstWithUniqueNames) {
  KernelTrace t("k", "hint");
  t.add_buffer("x", DType::f32, "read");
  EXPECT_THAT(error_of([&] { t.add_scalar("x", DType::i32); }),
              HasSubstr("scalar 'x': a parameter of that name exists"));
  EXPECT_THAT(error_of([&] { t.add_buffer("", DType::f32, "read"); }),
              HasSubstr("a parameter needs a name"));
  EXPECT_THAT(error_of([&] { t.add_buffer("b", DType::i1, ""); }),
              HasSubstr("buffer 'b': i1 buffers are not supported"));
  EXPECT_THAT(error_of([&] { t.add_buffer("m", DType::f32, "rw"); }),
              HasSubstr("access must be read, write or read_write, got 'rw'"));
}

TEST(KernelTrace, LateParametersAreNumberedFirst) {
  KernelTrace t("k", "hint");
  ValueId x = t.add_buffer("x", DType::f32, "read");
  ValueId pid = t.builder().program_id(0);
  ValueId n = t.add_scalar("n", DType::i32);
  t.builder().binary(ir::OpKind::Add, pid, n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(t.use(n, "add"), n);
  ir::Kernel k = t.finish();
  EXPECT_EQ(k.params[0].value, x);
  EXPECT_EQ(k.params[1].value, 1);
  EXPECT_EQ(k.body.args, (std::vector<ValueId>{0, 1}));
  ASSERT_EQ(k.body.ops.size(), 2u);
  EXPECT_EQ(k.body.ops[0].results[0], 2);  // program_id moved after the parameters
  EXPECT_EQ(k.body.ops[1].operands, (std::vector<ValueId>{2, 1}));
  EXPECT_EQ(k.types[1], ir::Type::scalar(DType::i32));
  EXPECT_TRUE(k.types[2].is_scalar());
}

TEST(KernelTrace, ConstexprsAndThreadCountAreKernelAttributes) {
  KernelTrace t("k", "hint");
  t.set_constexpr("BLOCK", int64_t{256});
  t.set_num_threads(64);
  EXPECT_THAT(error_of([&] { t.set_constexpr("num_threads", int64_t{1}); }),
              HasSubstr("the name is reserved"));
  EXPECT_THAT(error_of([&] { t.set_num_threads(0); }), HasSubstr("positive thread count"));
  ir::Kernel k = t.finish();
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("BLOCK")), 256);
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("num_threads")), 64);
}

TEST(KernelTrace, AValueOfAClosedLoopBodyCannotBeUsedAfterIt) {
  KernelTrace t("k", "carry it out");
  ir::TileBuilder& b = t.builder();
  ValueId zero = b.constant_int(0), four = b.constant_int(4), one = b.constant_int(1);
  auto loop = t.begin_for(zero, four, one, {zero}, "the loop at line 3");
  ValueId inner = b.binary(ir::OpKind::Add, loop.induction_var, one);
  EXPECT_TRUE(t.usable(inner));
  std::vector<ValueId> results = t.end_for({inner});
  EXPECT_TRUE(t.usable(results[0]));
  EXPECT_FALSE(t.usable(inner));
  EXPECT_FALSE(t.usable(loop.induction_var));
  EXPECT_TRUE(t.usable(zero));
  EXPECT_EQ(t.use(results[0], "store"), results[0]);
  EXPECT_EQ(error_of([&] { t.use(inner, "store"); }),
            "store: value %" + std::to_string(inner) +
                " was defined inside the loop at line 3 and cannot be used outside it; carry it "
                "out");
}

TEST(KernelTrace, AnAbandonedLoopLeavesNoUsableValue) {
  KernelTrace t("k", "hint");
  ir::TileBuilder& b = t.builder();
  ValueId zero = b.constant_int(0);
  auto loop = t.begin_for(zero, zero, zero, {}, "a loop");
  ValueId inner = b.binary(ir::OpKind::Add, loop.induction_var, zero);
  t.abandon_for();
  EXPECT_THAT(error_of([&] { t.use(inner, "add"); }),
              HasSubstr("was defined inside an abandoned trace of a loop"));
  EXPECT_TRUE(t.finish().body.ops.size() == 1u);  // the constant only
}

TEST(KernelTrace, ALoopCarriedValueKeepsItsType) {
  KernelTrace t("k", "hint");
  ir::TileBuilder& b = t.builder();
  ValueId zero = b.constant_int(0);
  ValueId m = b.constant(0.0, DType::f32);
  t.begin_for(zero, zero, zero, {m}, "a loop");
  ValueId tile = b.full({8}, 0.0, DType::f32);
  EXPECT_THAT(error_of([&] { t.end_for({tile}); }),
              HasSubstr("tile_range: loop-carried value 0 changes type from f32 to tile<8xf32>"));
}

TEST(KernelTrace, EachBranchOfAnIfIsItsOwnRegion) {
  KernelTrace t("k", "hint");
  ir::TileBuilder& b = t.builder();
  ValueId cond = b.cmp("lt", b.program_id(0), b.constant_int(1));
  t.begin_if(cond, "the then-branch");
  ValueId then_value = b.constant_int(1);
  t.begin_else({then_value}, "the else-branch");
  EXPECT_THAT(error_of([&] { t.use(then_value, "yield"); }),
              HasSubstr("was defined inside the then-branch"));
  ValueId else_value = b.constant_int(2);
  std::vector<ValueId> results = t.end_if({else_value});
  EXPECT_FALSE(t.usable(else_value));
  EXPECT_TRUE(t.usable(results[0]));
}

TEST(KernelTrace, ADescriptorKeepsToItsDeclaredAccess) {
  KernelTrace t("k", "hint");
  ValueId x = t.add_buffer("x", DType::f32, "");
  ir::TileBuilder& b = t.builder();
  ValueId n = b.constant_int(16);
  ValueId ro = t.make_tensor(x, {n}, {b.constant_int(1)}, "read");
  ValueId wo = t.make_tensor(x, {n}, {b.constant_int(1)}, "write");
  ValueId offs = b.arange(0, 16);
  EXPECT_THAT(error_of([&] { t.tensor_store(ro, {offs}, b.full({16}, 1.0, DType::f32)); }),
              HasSubstr("tensor.store: the tensor was declared with access='read'"));
  EXPECT_THAT(error_of([&] { t.tensor_load(wo, {offs}); }),
              HasSubstr("tensor.load: the tensor was declared with access='write'"));
  t.tensor_store(wo, {offs}, t.tensor_load(ro, {offs}));
  EXPECT_EQ(t.finish().params[0].access, "read_write");
}

}  // namespace
}  // namespace metile::trace
