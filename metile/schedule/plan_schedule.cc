#include "metile/schedule/plan_schedule.h"

#include <cstdint>
#include <string>

#include "metile/lower/threadgroup_allocator.h"
#include "metile/support/errors.h"

namespace metile::schedule {

namespace {

// The ops that only a matrix backend lowers. Every op is listed, so a new op must say.
bool is_matrix_op(ir::OpKind kind) {
  using K = ir::OpKind;
  switch (kind) {
    case K::Constant:
    case K::ProgramId:
    case K::NumPrograms:
    case K::ThreadId:
    case K::ThreadIndex:
    case K::ThreadgroupIndex:
    case K::ThreadgroupCount:
    case K::SimdLane:
    case K::SimdGroup:
    case K::Arange:
    case K::Splat:
    case K::ExpandDims:
    case K::Broadcast:
    case K::ConvertLayout:
    case K::Reshape:
    case K::Trans:
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div:
    case K::Rem:
    case K::FloorDiv:
    case K::Min:
    case K::Max:
    case K::And:
    case K::Or:
    case K::Xor:
    case K::Shl:
    case K::Shr:
    case K::Cmp:
    case K::Select:
    case K::Cast:
    case K::Neg:
    case K::Abs:
    case K::Exp:
    case K::Exp2:
    case K::Log:
    case K::Sqrt:
    case K::Rsqrt:
    case K::Tanh:
    case K::Sin:
    case K::Cos:
    case K::Floor:
    case K::Ceil:
    case K::PtrAdd:
    case K::Load:
    case K::Store:
    case K::MakeTensor:
    case K::TensorLoad:
    case K::TensorStore:
    case K::PackedLoad:
    case K::PackedStore:
    case K::Extract:
    case K::IsAligned:
    case K::SharedAlloc:
    case K::ThreadgroupBuffer:
    case K::Reduce:
    case K::ReduceAxis:
    case K::Scan:
    case K::SimdShuffle:
    case K::SimdShuffleXor:
    case K::SimdShuffleDown:
    case K::SimdBroadcast:
    case K::SimdSum:
    case K::SimdMax:
    case K::SimdMin:
    case K::Barrier:
    case K::For:
    case K::If:
    case K::Yield:
      return false;
  }
  throw InternalError("plan_schedule: unknown op kind");
}

// The first op only a matrix backend lowers, by name; empty when there is none.
std::string first_matrix_op(const ir::Kernel& k) {
  std::string found;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (found.empty() && is_matrix_op(op.kind)) found = std::string(ir::op_name(op.kind));
  });
  return found;
}

std::string show(const Schedule& s, const std::string& control) {
  if (control == "backend") return "backend='" + std::string(backend_name(s.backend)) + "'";
  if (control == "staging") return "staging='" + std::string(staging_name(s.staging)) + "'";
  if (control == "num_simdgroups") return "num_simdgroups=" + std::to_string(*s.num_simdgroups);
  if (control == "vector_width") return "vector_width=" + std::to_string(*s.vector_width);
  return std::string("double_buffer=") + (*s.double_buffer ? "True" : "False");
}

// One planning run: the kernel, the Target, what was asked, and the plan so far.
class Planner {
 public:
  Planner(const ir::Kernel& k, const target::Target& t, const lower::ThreadPlan& lanes,
          const std::optional<Schedule>& requested)
      : k_(k), target_(t), lanes_(lanes), asked_(requested.value_or(Schedule{})) {
    plan_.requested = requested;
    plan_.simd_width = t.simd_width;
  }

  SchedulePlan run() {
    if (plan_.requested) check_schedule(asked_);
    choose_backend();
    choose_geometry();
    choose_staging();
    choose_vector_width();
    choose_double_buffer();
    return std::move(plan_);
  }

 private:
  // The error for a requirement that cannot be met: the control, the kernel and why.
  template <typename Error = UserError>
  [[noreturn]] void reject(const std::string& control, const std::string& why) const {
    throw Error("plan_schedule: Schedule(" + show(asked_, control) +
                ") cannot be met for kernel '" + k_.name + "': " + why);
  }

  void choose_backend() {
    const std::string matrix_op = first_matrix_op(k_);
    if (asked_.backend == Backend::Nax)
      reject<NotSupported>("backend",
                           "no meTile target has Apple's neural accelerator (NAX); target " +
                               target_.name + " offers " + facilities());
    if (matrix_op.empty()) {
      if (asked_.backend != Backend::Auto && asked_.backend != Backend::Elementwise)
        reject("backend",
               "the kernel has no matrix work (no metile.dot, no matrix fragments) for a "
               "matrix backend to lower; omit backend or use backend='elementwise'");
      plan_.backend = Backend::Elementwise;
      plan_.backend_reason =
          std::string(asked_.backend == Backend::Auto ? "auto" : "required") +
          ": the kernel has no matrix work (no metile.dot, no matrix fragments), so its tiles "
          "are lowered elementwise to per-thread registers";
      return;
    }
    throw NotSupported("plan_schedule: kernel '" + k_.name + "' has the matrix op '" + matrix_op +
                       "', which no backend lowers yet");
  }

  void choose_geometry() {
    const int threads = lanes_.threads_per_threadgroup;
    const int groups = threads / target_.simd_width;
    plan_.threads_per_threadgroup = threads;
    plan_.num_simdgroups = groups;
    plan_.geometry_reason = "the traced lane geometry: " + std::to_string(threads) +
                            " threads per threadgroup, " + std::to_string(groups) +
                            " SIMD groups of " + std::to_string(target_.simd_width) + " (" +
                            lanes_.reason + ")";
    if (asked_.num_simdgroups && *asked_.num_simdgroups != groups)
      reject("num_simdgroups",
             "an elementwise kernel runs on its traced lane geometry, " + std::to_string(threads) +
                 " threads per threadgroup = " + std::to_string(groups) + " SIMD groups of " +
                 std::to_string(target_.simd_width) + "; declare num_threads=" +
                 std::to_string(*asked_.num_simdgroups * target_.simd_width) +
                 " on the kernel, or omit num_simdgroups");
    if (asked_.num_simdgroups) plan_.geometry_reason = "required and " + plan_.geometry_reason;
    check_legacy_geometry();
  }

  // NUM_SG, WM and WN constexprs of GEMM kernels written before Schedule: they must agree
  // with the geometry (and so with any Schedule requirement, which the geometry meets).
  void check_legacy_geometry() const {
    const auto attr = [&](const char* name) -> std::optional<int64_t> {
      const auto it = k_.attrs.find(name);
      if (it == k_.attrs.end()) return std::nullopt;
      const int64_t* v = std::get_if<int64_t>(&it->second);
      return v ? std::optional<int64_t>(*v) : std::nullopt;
    };
    const auto legacy_error = [&](const std::string& what) {
      throw UserError("plan_schedule: kernel '" + k_.name + "': " + what +
                      " disagrees with the selected geometry of " +
                      std::to_string(plan_.num_simdgroups) + " SIMD groups" +
                      (asked_.num_simdgroups ? " (Schedule(num_simdgroups=" +
                                                   std::to_string(*asked_.num_simdgroups) + "))"
                                             : std::string()));
    };
    if (const auto num_sg = attr("NUM_SG"); num_sg && *num_sg != plan_.num_simdgroups)
      legacy_error("NUM_SG=" + std::to_string(*num_sg));
    const auto wm = attr("WM"), wn = attr("WN");
    if (wm && wn && *wm * *wn != plan_.num_simdgroups)
      legacy_error("WM=" + std::to_string(*wm) + " x WN=" + std::to_string(*wn));
  }

  void choose_staging() {
    const int64_t declared = lower::ThreadgroupAllocator::user_bytes(k_);
    const Staging own = declared > 0 ? Staging::Threadgroup : Staging::Device;
    plan_.staging = own;
    plan_.staging_reason =
        declared > 0 ? "the kernel stages through the " + std::to_string(declared) +
                           " bytes of threadgroup memory it declares (metile.shared)"
                     : "the kernel's memory operations are device loads and stores only (no "
                       "metile.shared)";
    if (asked_.staging == Staging::Auto) return;
    if (asked_.staging != own)
      reject("staging", "elementwise staging must match the kernel's memory operations, and " +
                            plan_.staging_reason);
    if (declared > target_.threadgroup_memory_bytes)
      reject<OutOfResources>("staging", "its " + std::to_string(declared) +
                                            " bytes of threadgroup memory exceed target " +
                                            target_.name + "'s " +
                                            std::to_string(target_.threadgroup_memory_bytes));
    plan_.staging_reason = "required, and " + plan_.staging_reason;
  }

  void choose_vector_width() {
    if (!asked_.vector_width) {
      plan_.vector_width = 0;
      plan_.vector_width_reason =
          "auto: group_vector_accesses groups four consecutive accesses of a thread where "
          "their addresses are proven consecutive and in bounds";
      return;
    }
    if (*asked_.vector_width == 4)
      reject<NotSupported>(
          "vector_width",
          "vector_width=4 cannot be forced on an elementwise kernel: accesses are grouped "
          "only where four consecutive addresses are proven, so leave vector_width unset "
          "(automatic) or set it to 1 (no grouping)");
    plan_.vector_width = 1;
    plan_.vector_width_reason = "required: no compiler vectorization (every access scalar)";
  }

  void choose_double_buffer() {
    if (asked_.double_buffer == true)
      reject("double_buffer",
             "an elementwise kernel has no software pipeline to double-buffer; a materialised "
             "double buffer needs a matrix backend (backend='simdgroup')");
    plan_.double_buffer = asked_.double_buffer;
    plan_.double_buffer_reason =
        std::string(asked_.double_buffer ? "prohibited" : "auto") +
        ": an elementwise kernel has no software pipeline, so nothing is double-buffered";
  }

  std::string facilities() const {
    std::string names;
    for (target::MatrixFacility f :
         {target::MatrixFacility::SimdgroupMatrix8x8, target::MatrixFacility::AppleTensorOps,
          target::MatrixFacility::MmaSync, target::MatrixFacility::Wgmma})
      if (target_.matrix_facilities.has(f))
        names += (names.empty() ? "" : ", ") + std::string(target::matrix_facility_name(f));
    return names.empty() ? "no matrix facility" : names;
  }

  const ir::Kernel& k_;
  const target::Target& target_;
  const lower::ThreadPlan& lanes_;
  const Schedule asked_;
  SchedulePlan plan_;
};

}  // namespace

SchedulePlan plan_schedule(const ir::Kernel& tile, const target::Target& target,
                           const lower::ThreadPlan& lanes,
                           const std::optional<Schedule>& requested) {
  return Planner(tile, target, lanes, requested).run();
}

}  // namespace metile::schedule
