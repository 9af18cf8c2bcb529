// plan_schedule on kernels with matrix work (Tile IR dot): the backend and the Target's
// strategy for it, the WM x WN tiling, staging against threadgroup capacity, the controls
// each backend cannot honour, and legacy NUM_SG / WM / WN. The plan is checked directly:
// lowering a matrix plan is the matrix lowerings' work.
#include <gtest/gtest.h>

#include <string>

#include "metile/ir/parser.h"
#include "metile/schedule/plan_schedule.h"
#include "metile/support/errors.h"

namespace metile {
namespace {

using schedule::Backend;
using schedule::MatrixStrategy;
using schedule::SchedulePlan;
using schedule::Staging;

// c = a @ b for S x S tiles of `dtype`, with extra kernel attributes ("NUM_SG = 2").
ir::Kernel square_dot(int s, const std::string& dtype = "f16", const std::string& attrs = "") {
  const std::string n = std::to_string(s), tile = "tile<" + n + "x" + n + "x";
  const std::string text =
      "tile.kernel @square_dot(%a: ptr<" + dtype + "> {access = \"read\"}, %b: ptr<" + dtype +
      "> {access = \"read\"}, %c: ptr<f32> {access = \"write\"})" +
      (attrs.empty() ? "" : " attributes {" + attrs + "}") + " {\n" +
      "  %i = arange {end = " + std::to_string(s * s) + ", start = 0} : tile<" +
      std::to_string(s * s) + "xi32>\n" + "  %ab = reshape %i : " + tile + "i32>\n" +
      "  %pa = splat %a : " + tile + "ptr<" + dtype + ">>\n" +
      "  %pa2 = ptr_add %pa, %ab : " + tile + "ptr<" + dtype + ">>\n" +
      "  %x = load %pa2 : " + tile + dtype + ">\n" + "  %pb = splat %b : " + tile + "ptr<" + dtype +
      ">>\n" + "  %pb2 = ptr_add %pb, %ab : " + tile + "ptr<" + dtype + ">>\n" +
      "  %y = load %pb2 : " + tile + dtype + ">\n" + "  %zero = constant {value = 0.0} : f32\n" +
      "  %acc = splat %zero : " + tile + "f32>\n" + "  %d = dot %x, %y, %acc : " + tile + "f32>\n" +
      "  %pc = splat %c : " + tile + "ptr<f32>>\n" + "  %pc2 = ptr_add %pc, %ab : " + tile +
      "ptr<f32>>\n" + "  store %pc2, %d\n}\n";
  return ir::parse(text, "square_dot");
}

SchedulePlan plan(const ir::Kernel& k, const std::string& target, const Schedule& s) {
  const target::Target& t = target::target_by_name(target);
  return schedule::plan_schedule(k, t, lower::plan_threads(k, t), s);
}

template <typename Error = UserError>
std::string error_of(const ir::Kernel& k, const std::string& target, const Schedule& s) {
  try {
    plan(k, target, s);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

Schedule backend(Backend b) {
  Schedule s;
  s.backend = b;
  return s;
}

TEST(PlanMatrixSchedule, AutomaticDotsTakeFragmentsWhereTheSimdGroupsTileThem) {
  const SchedulePlan tiled = plan(square_dot(16), "host", Schedule{});
  EXPECT_EQ(tiled.backend, Backend::Simdgroup);
  EXPECT_EQ(tiled.strategy, MatrixStrategy::SimdgroupMatrix);
  expect_contains(tiled.backend_reason,
                  "auto: the SIMD groups tile the output of the kernel's 1 dot op(s) in 8x8 "
                  "matrix fragments");
  EXPECT_EQ(tiled.simdgroups_m, 1);
  EXPECT_EQ(tiled.simdgroups_n, 2);
  const SchedulePlan generic = plan(square_dot(8, "f16", "num_threads = 64"), "host", Schedule{});
  EXPECT_EQ(generic.backend, Backend::Elementwise);
  EXPECT_EQ(generic.strategy, MatrixStrategy::None);
  expect_contains(generic.backend_reason,
                  "auto: the kernel's 1 dot op(s) are lowered generically (operands through one "
                  "threadgroup exchange, FP32 multiply-adds per thread): no SIMD-group matrices "
                  "tile every dot's output on target host");
}

// On sm90 a dot outside the canonical K loop stays on mma.sync when it is the kernel's only
// dot of a loaded a (not measured on wgmma_staged yet), and the plan says why; attention's two
// dots take wgmma_staged (tests/codegen: CudaCompile.AttentionsDotsRunOnWgmmaWithAFromRegisters).
TEST(PlanMatrixSchedule, OneLoadedDotOutsideALoopStaysOnMmaSync) {
  const SchedulePlan p = plan(square_dot(128, "bf16", "num_threads = 256"), "sm90", Schedule{});
  EXPECT_EQ(p.strategy, MatrixStrategy::MmaSync);
  expect_contains(p.double_buffer_reason,
                  "not wgmma_staged: one dot of a loaded a stays on mma.sync");
  const SchedulePlan f32 = plan(square_dot(128, "f32", "num_threads = 256"), "sm90", Schedule{});
  expect_contains(f32.double_buffer_reason,
                  "not wgmma_staged: a dot's operands are not both f16 or both bf16");
}

TEST(PlanMatrixSchedule, SimdgroupTilesTheOutputOnEachTargetsFacility) {
  const SchedulePlan host = plan(square_dot(32), "host", backend(Backend::Simdgroup));
  EXPECT_EQ(host.backend, Backend::Simdgroup);
  EXPECT_EQ(host.strategy, MatrixStrategy::SimdgroupMatrix);
  expect_contains(host.backend_reason, "simdgroup_matrix 8x8 on target host");
  EXPECT_EQ(host.num_simdgroups, 8);
  EXPECT_EQ(host.threads_per_threadgroup, 256);
  EXPECT_EQ(host.simdgroups_m, 2);
  EXPECT_EQ(host.simdgroups_n, 4);
  expect_contains(host.geometry_reason,
                  "the traced lane geometry: 256 threads per threadgroup, 8 SIMD groups of 32");
  expect_contains(host.geometry_reason,
                  "the first dot's output in 8x8 fragments over WM=2 x WN=4 SIMD groups");
  EXPECT_EQ(host.staging, Staging::Threadgroup);
  expect_contains(host.staging_reason,
                  "auto: operand tiles through threadgroup memory, 4096 bytes of operand tiles "
                  "against target host's 32768");
  EXPECT_FALSE(host.double_buffer.has_value());
  expect_contains(host.double_buffer_reason, "auto: a single operand buffer");

  const SchedulePlan sm90 = plan(square_dot(32), "sm90", backend(Backend::Simdgroup));
  EXPECT_EQ(sm90.strategy, MatrixStrategy::MmaSync);
  expect_contains(sm90.backend_reason, "mma.sync warp fragments on target sm90");
}

TEST(PlanMatrixSchedule, AnExplicitWidthOrDoubleBufferSelectsTheControllablePath) {
  Schedule s;
  s.double_buffer = true;
  const SchedulePlan p = plan(square_dot(32), "apple-m5", s);
  EXPECT_EQ(p.backend, Backend::Simdgroup);
  expect_contains(p.backend_reason, "the controllable SIMD-group path");
  EXPECT_EQ(p.double_buffer, true);
  expect_contains(p.staging_reason, "8192 bytes of operand tiles (double-buffered)");
  s.double_buffer.reset();
  s.vector_width = 4;
  EXPECT_EQ(plan(square_dot(32), "apple-m5", s).vector_width, 4);
}

TEST(PlanMatrixSchedule, TensorOpsOnlyWhereTheTargetHasThem) {
  const SchedulePlan m5 = plan(square_dot(32), "apple-m5", backend(Backend::TensorOps));
  EXPECT_EQ(m5.strategy, MatrixStrategy::MppMatmul2d);
  EXPECT_EQ(m5.staging, Staging::Device);
  expect_contains(m5.staging_reason, "the tensor backend reads its operands from device memory");
  expect_contains(error_of<NotSupported>(square_dot(32), "apple-m3", backend(Backend::TensorOps)),
                  "Schedule(backend='tensor_ops') cannot be met for kernel 'square_dot': target "
                  "apple-m3 has no tensor ops (it offers simdgroup-8x8)");
  expect_contains(error_of<NotSupported>(square_dot(32), "sm90", backend(Backend::TensorOps)),
                  "target sm90's tensor backend (wgmma_tma) cannot lower it: the kernel was not "
                  "matched against the canonical descriptor GEMM; use backend='simdgroup' "
                  "(mma.sync)");
}

TEST(PlanMatrixSchedule, TensorOpsRejectControlsItCannotHonour) {
  Schedule s = backend(Backend::TensorOps);
  s.vector_width = 1;
  expect_contains(error_of(square_dot(32), "apple-m5", s),
                  "Schedule(vector_width=1) cannot be met for kernel 'square_dot': the tensor "
                  "backend's accesses are opaque");
  s.vector_width.reset();
  s.staging = Staging::Threadgroup;
  expect_contains(error_of(square_dot(32), "apple-m5", s),
                  "Schedule(staging='threadgroup') cannot be met for kernel 'square_dot': the "
                  "tensor backend reads its operands from device memory itself");
  s.staging = Staging::Auto;
  s.double_buffer = true;
  expect_contains(error_of(square_dot(32), "apple-m5", s),
                  "Schedule(double_buffer=True) cannot be met for kernel 'square_dot': only the "
                  "simdgroup backend materialises a software double buffer");
}

TEST(PlanMatrixSchedule, SimdgroupRunsOnTheTracedLanesAndMustTileEveryDot) {
  Schedule s = backend(Backend::Simdgroup);
  s.num_simdgroups = 4;
  expect_contains(error_of(square_dot(16), "host", s),
                  "Schedule(num_simdgroups=4) cannot be met for kernel 'square_dot': a simdgroup "
                  "kernel runs on its traced lane geometry, 64 threads per threadgroup = 2 SIMD "
                  "groups of 32");
  expect_contains(
      error_of(square_dot(8, "f16", "num_threads = 64"), "host", backend(Backend::Simdgroup)),
      "Schedule(backend='simdgroup') cannot be met for kernel 'square_dot': 2 SIMD "
      "groups do not tile the dot's [8, 8] output in whole 8x8 fragments");
}

TEST(PlanMatrixSchedule, ThreadgroupStagingMustFit) {
  Schedule s = backend(Backend::Simdgroup);
  s.staging = Staging::Threadgroup;
  s.double_buffer = true;
  expect_contains(error_of<OutOfResources>(square_dot(64, "f32"), "host", s),
                  "Schedule(staging='threadgroup') cannot be met for kernel 'square_dot': "
                  "staging needs 65536 bytes of operand tiles (double-buffered) against target "
                  "host's 32768");
}

TEST(PlanMatrixSchedule, LegacyConstexprsAreCheckedAgainstTheGeometry) {
  EXPECT_EQ(
      plan(square_dot(32, "f16", "NUM_SG = 8, WM = 2, WN = 4"), "host", backend(Backend::Simdgroup))
          .num_simdgroups,
      8);
  expect_contains(error_of(square_dot(32, "f16", "NUM_SG = 4"), "host", Schedule{}),
                  "plan_schedule: kernel 'square_dot': NUM_SG=4 disagrees with the selected "
                  "geometry of 8 SIMD groups");
  Schedule s = backend(Backend::Simdgroup);
  s.num_simdgroups = 8;
  expect_contains(error_of(square_dot(32, "f16", "WM = 1, WN = 4"), "host", s),
                  "plan_schedule: kernel 'square_dot': WM=1 x WN=4 disagrees with the selected "
                  "geometry of 8 SIMD groups (Schedule(num_simdgroups=8))");
}

TEST(PlanMatrixSchedule, SimdgroupInlineRunsOnTheTracedLanes) {
  Schedule s = backend(Backend::SimdgroupInline);
  const SchedulePlan p = plan(square_dot(8, "f16", "num_threads = 64"), "host", s);
  EXPECT_EQ(p.strategy, MatrixStrategy::SimdgroupMatrix);
  EXPECT_EQ(p.num_simdgroups, 2);
  expect_contains(p.geometry_reason, "the traced lane geometry: 64 threads per threadgroup");
  s.vector_width = 4;
  expect_contains(error_of<NotSupported>(square_dot(8, "f16", "num_threads = 64"), "host", s),
                  "vector_width=4 cannot be forced on a simdgroup_inline kernel");
}

}  // namespace
}  // namespace metile
