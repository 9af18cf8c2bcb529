// form_descriptor_matmul's epilogue program through the whole pipeline for an M5 with
// Schedule(backend='tensor_ops'): a shared subexpression with runtime scalars is fused, and a
// dimension parameter as a scalar leaf fails compilation naming the op. C++ callers keep
// integer scalars as runtime values (only Python's SCHEDULE specialises them).
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "metile/pipeline.h"

namespace metile {
namespace {

using namespace metile::dsl;

// gemm's K loop (metile/kernels/gemm.cc) with the epilogue `epilogue(acc, alpha, rows)`.
template <typename Epilogue>
ir::Kernel gemm_with(const std::string& name, Epilogue epilogue) {
  auto body = [&](KernelContext& k) {
    auto left = k.buffer("left", f16, "read");
    auto right = k.buffer("right", f16, "read");
    auto out = k.buffer("output", f32, "write");
    auto rows = k.scalar("rows", i32);
    auto columns = k.scalar("columns", i32);
    auto inner = k.scalar("inner", i32);
    auto alpha = k.scalar("alpha", f32);
    auto a = tensor(left, {rows, inner}, {}, "read");
    auto b = tensor(right, {inner, columns}, {}, "read");
    auto c = tensor(out, {rows, columns}, {}, "write");
    auto row = program_id(0) * 32 + arange(0, 32);
    auto column = program_id(1) * 32 + arange(0, 32);
    Value acc = tile_range(0, inner, 16, zeros({32, 32}, f32), [&](Value start, Value& sum) {
      auto ks = start + arange(0, 16);
      sum = dot(a.load({row.col(), ks.row()}), b.load({ks.col(), column.row()}), sum);
    });
    c.store({row.col(), column.row()}, epilogue(acc, alpha, rows));
  };
  return trace(name, body, {});
}

PipelineOptions m5_tensor_ops() {
  PipelineOptions options;
  options.target = &target::target_by_name("apple-m5");
  Schedule s;
  s.backend = schedule::Backend::TensorOps;
  options.schedule = s;
  return options;
}

TEST(DescriptorEpilogue, SharedSubexpressionsAndRuntimeScalarsAreFused) {
  const PipelineResult r =
      compile_to_source(gemm_with("shared",
                                  [](Value acc, Value alpha, Value) {
                                    Value scaled = acc * alpha;
                                    return where(scaled > 0.0, scaled, scaled * scaled);
                                  }),
                        m5_tensor_ops());
  const nlohmann::json e = r.report.to_json()["fused_epilogues"];
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0]["ops"], nlohmann::json::array({"mul", "cmp", "mul", "select"}));
  EXPECT_EQ(e[0]["scalar_parameters"], nlohmann::json::array({"%alpha"}));
  EXPECT_NE(r.emitted.source.find("metile_mpp_op.run("), std::string::npos);
}

TEST(DescriptorEpilogue, ADimensionParameterIsNoScalarLeaf) {
  try {
    compile_to_source(
        gemm_with("by_rows", [](Value acc, Value, Value rows) { return acc * rows.to(f32); }),
        m5_tensor_ops());
    FAIL() << "no error";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("Schedule(backend='tensor_ops') cannot lower kernel "
                                         "'by_rows' on target apple-m5: '%"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("= splat' at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("uses the dimension parameter %rows as an epilogue "
                                         "scalar"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace metile
