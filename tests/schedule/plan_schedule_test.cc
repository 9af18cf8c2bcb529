// plan_schedule through the pipeline: the automatic plan of elementwise kernels on the host,
// Apple and sm90 targets with its reasons, and every Schedule requirement that an
// elementwise kernel or a target cannot meet, rejected with a message naming the control,
// the kernel and why.
#include <gtest/gtest.h>

#include <string>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/kernels/vector_add.h"
#include "metile/pipeline.h"
#include "metile/schedule/schedule.h"

namespace metile {
namespace {

using namespace metile::dsl;
using schedule::Backend;
using schedule::Staging;

// out[i] = x[i] for one block of 256 elements through 256 floats of threadgroup memory.
ir::Kernel staged_copy(int64_t shared_elements = 256) {
  return dsl::trace("staged_copy", [shared_elements](KernelContext& k) {
    k.set_num_threads(64);
    auto x = k.buffer("x", f32, "read");
    auto out = k.buffer("out", f32, "write");
    auto scratch = shared(shared_elements, f32);
    auto i = arange(0, 256);
    store(scratch + i, load(x + i));
    barrier();
    store(out + i, load(scratch + i));
  });
}

// A vector add that declares the legacy GEMM constexprs NUM_SG, WM and WN.
ir::Kernel legacy_geometry(int64_t num_sg, int64_t wm, int64_t wn) {
  return dsl::trace("legacy",
                    [](KernelContext& k) {
                      k.constexpr_int("NUM_SG");
                      k.constexpr_int("WM");
                      k.constexpr_int("WN");
                      k.set_num_threads(64);
                      auto x = k.buffer("x", f32, "read_write");
                      auto i = arange(0, 64);
                      store(x + i, load(x + i) + 1.0);
                    },
                    {{"NUM_SG", num_sg}, {"WM", wm}, {"WN", wn}});
}

schedule::SchedulePlan plan_of(ir::Kernel k, const std::string& target,
                               std::optional<Schedule> schedule = std::nullopt) {
  PipelineOptions options;
  options.target = &target::target_by_name(target);
  options.schedule = schedule;
  return compile_to_source(std::move(k), options).report.schedule_plan;
}

// The message of the error compiling `k` with `schedule` on the host target raises.
template <typename Error = UserError>
std::string error_of(ir::Kernel k, const Schedule& schedule) {
  try {
    plan_of(std::move(k), "host", schedule);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

Schedule with_simdgroups(int n) {
  Schedule s;
  s.num_simdgroups = n;
  return s;
}

Schedule with_backend(Backend b) {
  Schedule s;
  s.backend = b;
  return s;
}

Schedule with_staging(Staging staging) {
  Schedule s;
  s.staging = staging;
  return s;
}

TEST(PlanSchedule, ElementwiseKernelsOnEveryTargetKindWithReasons) {
  for (const char* target : {"host", "apple-m3", "apple-m5", "sm90"}) {
    SCOPED_TRACE(target);
    const schedule::SchedulePlan plan = plan_of(kernels::vector_add(ir::DType::f32), target);
    EXPECT_EQ(plan.backend, Backend::Elementwise);
    EXPECT_EQ(plan.strategy, schedule::MatrixStrategy::None);
    expect_contains(plan.backend_reason, "auto: the kernel has no matrix work");
    EXPECT_EQ(plan.threads_per_threadgroup, 256);
    EXPECT_EQ(plan.num_simdgroups, 8);
    EXPECT_EQ(plan.simd_width, 32);
    EXPECT_EQ(plan.simdgroups_m * plan.simdgroups_n, 1);
    expect_contains(plan.geometry_reason, "the traced lane geometry: 256 threads per threadgroup");
    EXPECT_EQ(plan.staging, Staging::Device);
    expect_contains(plan.staging_reason, "device loads and stores only");
    EXPECT_EQ(plan.vector_width, 0);
    expect_contains(plan.vector_width_reason, "auto: group_vector_accesses");
    EXPECT_FALSE(plan.double_buffer.has_value());
    expect_contains(plan.double_buffer_reason, "no software pipeline");
    EXPECT_FALSE(plan.requested.has_value());
  }
}

TEST(PlanSchedule, TheKernelsOwnThreadgroupMemoryIsItsStaging) {
  const schedule::SchedulePlan plan = plan_of(staged_copy(), "host");
  EXPECT_EQ(plan.staging, Staging::Threadgroup);
  expect_contains(plan.staging_reason, "1024 bytes of threadgroup memory it declares");
  EXPECT_EQ(plan.num_simdgroups, 2);
}

TEST(PlanSchedule, RequirementsTheKernelMeetsAreAcceptedAndSaySo) {
  Schedule s = with_staging(Staging::Threadgroup);
  s.backend = Backend::Elementwise;
  s.num_simdgroups = 2;
  s.vector_width = 1;
  s.double_buffer = false;
  const schedule::SchedulePlan plan = plan_of(staged_copy(), "host", s);
  expect_contains(plan.backend_reason, "required: the kernel has no matrix work");
  expect_contains(plan.geometry_reason, "required and the traced lane geometry");
  expect_contains(plan.staging_reason, "required, and the kernel stages");
  EXPECT_EQ(plan.vector_width, 1);
  EXPECT_EQ(plan.double_buffer, false);
  EXPECT_EQ(plan.requested, s);
}

TEST(PlanSchedule, AnAllAutomaticScheduleIsRecordedAsRequested) {
  const schedule::SchedulePlan plan =
      plan_of(kernels::vector_add(ir::DType::f32), "host", Schedule{});
  ASSERT_TRUE(plan.requested.has_value());
  EXPECT_EQ(plan.requested->key(),
            "backend=auto num_simdgroups=None staging=auto vector_width=None double_buffer=None");
}

TEST(PlanSchedule, NumSimdgroupsMustMatchTheTracedLanes) {
  const std::string e = error_of(kernels::vector_add(ir::DType::f32), with_simdgroups(4));
  expect_contains(e,
                  "plan_schedule: Schedule(num_simdgroups=4) cannot be met for kernel "
                  "'vector_add_f32': an elementwise kernel runs on its traced lane geometry, "
                  "256 threads per threadgroup = 8 SIMD groups of 32; declare "
                  "num_threads=128");
}

TEST(PlanSchedule, StagingMustMatchTheKernelsMemoryOperations) {
  expect_contains(error_of(kernels::vector_add(ir::DType::f32), with_staging(Staging::Threadgroup)),
                  "Schedule(staging='threadgroup') cannot be met for kernel 'vector_add_f32': "
                  "elementwise staging must match the kernel's memory operations, and the "
                  "kernel's memory operations are device loads and stores only");
  expect_contains(error_of(staged_copy(), with_staging(Staging::Device)),
                  "Schedule(staging='device') cannot be met for kernel 'staged_copy': "
                  "elementwise staging must match the kernel's memory operations, and the "
                  "kernel stages through the 1024 bytes of threadgroup memory");
}

TEST(PlanSchedule, RequiredThreadgroupStagingMustFitTheTarget) {
  expect_contains(error_of<OutOfResources>(staged_copy(10000), with_staging(Staging::Threadgroup)),
                  "Schedule(staging='threadgroup') cannot be met for kernel 'staged_copy': its "
                  "40000 bytes of threadgroup memory exceed target host's 32768");
}

TEST(PlanSchedule, VectorWidthFourCannotBeForcedOnElementwiseKernels) {
  Schedule s;
  s.vector_width = 4;
  expect_contains(error_of<NotSupported>(kernels::vector_add(ir::DType::f32), s),
                  "Schedule(vector_width=4) cannot be met for kernel 'vector_add_f32': "
                  "vector_width=4 cannot be forced");
}

TEST(PlanSchedule, ElementwiseKernelsHaveNothingToDoubleBuffer) {
  Schedule s;
  s.double_buffer = true;
  expect_contains(error_of(kernels::vector_add(ir::DType::f32), s),
                  "Schedule(double_buffer=True) cannot be met for kernel 'vector_add_f32': an "
                  "elementwise kernel has no software pipeline to double-buffer");
}

TEST(PlanSchedule, MatrixBackendsNeedMatrixWork) {
  for (Backend b : {Backend::Simdgroup, Backend::SimdgroupInline, Backend::TensorOps}) {
    const std::string e = error_of(kernels::vector_add(ir::DType::f32), with_backend(b));
    expect_contains(e, "Schedule(backend='" + std::string(schedule::backend_name(b)) +
                           "') cannot be met for kernel 'vector_add_f32': the kernel has no "
                           "matrix work");
  }
}

TEST(PlanSchedule, NoTargetHasNax) {
  expect_contains(
      error_of<NotSupported>(kernels::vector_add(ir::DType::f32), with_backend(Backend::Nax)),
      "Schedule(backend='nax') cannot be met for kernel 'vector_add_f32': no meTile "
      "target has Apple's neural accelerator (NAX); target host offers "
      "simdgroup-8x8, apple-tensor-ops");
}

TEST(PlanSchedule, LegacyGeometryConstexprsAreChecked) {
  EXPECT_EQ(plan_of(legacy_geometry(2, 2, 1), "host").num_simdgroups, 2);
  expect_contains(error_of(legacy_geometry(4, 2, 2), Schedule{}),
                  "plan_schedule: kernel 'legacy': NUM_SG=4 disagrees with the selected "
                  "geometry of 2 SIMD groups");
  expect_contains(error_of(legacy_geometry(2, 2, 2), with_simdgroups(2)),
                  "plan_schedule: kernel 'legacy': WM=2 x WN=2 disagrees with the selected "
                  "geometry of 2 SIMD groups (Schedule(num_simdgroups=2))");
}

TEST(Schedule, EachControlIsCheckedAgainstItsContract) {
  const auto message = [](const Schedule& s) {
    try {
      schedule::check_schedule(s);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  expect_contains(message(with_simdgroups(0)),
                  "Schedule: num_simdgroups is an integer from 1 through 32, got 0");
  expect_contains(message(with_simdgroups(33)), "got 33");
  Schedule width;
  width.vector_width = 2;
  expect_contains(message(width), "Schedule: vector_width is None, 1 or 4, got 2");
  width.vector_width = 4;
  width.double_buffer = true;
  expect_contains(message(width),
                  "Schedule: vector_width=4 and double_buffer=True cannot be combined");
  EXPECT_THROW(schedule::backend_from_name("wgmma"), UserError);
  expect_contains(message(with_simdgroups(32)), "no error");
}

TEST(Schedule, CompileRejectsAScheduleOutsideItsContract) {
  CompileOptions options;
  options.schedule = with_simdgroups(64);
  EXPECT_THROW(compile(kernels::vector_add(ir::DType::f32), options), UserError);
}

TEST(Schedule, JsonRoundTripsEveryControl) {
  Schedule s = with_staging(Staging::Threadgroup);
  s.backend = Backend::TensorOps;
  s.num_simdgroups = 4;
  s.vector_width = 1;
  s.double_buffer = false;
  EXPECT_EQ(Schedule::from_json(s.to_json()), s);
  EXPECT_EQ(Schedule::from_json(Schedule{}.to_json()), Schedule{});
}

TEST(Schedule, TheCompileCacheKeysOnTheSchedule) {
  const ir::Kernel k = kernels::vector_add(ir::DType::f32);
  CompileOptions automatic, one;
  one.schedule.emplace().vector_width = 1;
  const auto a = compile(k, automatic), b = compile(k, one), c = compile(k, one);
  EXPECT_NE(a, b);
  EXPECT_EQ(b, c);
  EXPECT_EQ(b->schedule_plan().vector_width, 1);
  expect_contains(b->explain(), "\"schedule_plan\"");
}

}  // namespace
}  // namespace metile
