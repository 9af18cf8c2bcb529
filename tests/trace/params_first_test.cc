// Renumbering a kernel so that its parameters are its first values.
#include "metile/trace/params_first.h"

#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/ir/printer.h"

namespace metile::trace {
namespace {

using ir::DType;
using ir::Type;

TEST(NumberParamsFirst, LeavesAKernelWithParametersFirstAlone) {
  ir::Kernel k;
  k.name = "k";
  ir::TileBuilder b(k);
  b.add_param("n", Type::scalar(DType::i32));
  b.program_id(0);
  const std::string before = ir::print(k);
  number_params_first(k);
  EXPECT_EQ(ir::print(k), before);
  EXPECT_EQ(k.params[0].value, 0);
}

TEST(NumberParamsFirst, MovesLateParametersBeforeNestedValuesKeepingTheirOrder) {
  ir::Kernel k;
  k.name = "k";
  ir::TileBuilder b(k);
  ir::ValueId pid = b.program_id(0);                           // %0
  ir::ValueId n = b.add_param("n", Type::scalar(DType::i32));  // %1
  b.binary(ir::OpKind::Add, pid, n);                           // %2
  number_params_first(k);
  EXPECT_EQ(k.params[0].value, 0);
  EXPECT_EQ(k.body.args, (std::vector<ir::ValueId>{0}));
  EXPECT_EQ(k.body.ops[0].results[0], 1);
  EXPECT_EQ(k.body.ops[1].operands, (std::vector<ir::ValueId>{1, 0}));
  EXPECT_EQ(k.body.ops[1].results[0], 2);
  EXPECT_EQ(k.value_names[0], "n");
  EXPECT_EQ(k.types[0], Type::scalar(DType::i32));
}

}  // namespace
}  // namespace metile::trace
