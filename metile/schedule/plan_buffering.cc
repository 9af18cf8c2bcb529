// plan_schedule's vector width of the dot operands and the K loop's double buffering.
#include <algorithm>

#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

namespace {
// Triton's default num_stages on CUDA.
constexpr int kDefaultAsyncStages = 3;
}  // namespace

void Planner::choose_vector_width() {
  if (!asked_.vector_width) {
    plan_.vector_width = 0;
    plan_.vector_width_reason =
        plan_.backend == Backend::TensorOps
            ? "auto: the tensor backend's accesses are opaque"
            : "auto: group_vector_accesses groups four consecutive accesses of a thread "
              "where their addresses are proven consecutive and in bounds";
    return;
  }
  if (plan_.backend == Backend::TensorOps)
    reject("vector_width",
           "the tensor backend's accesses are opaque and cannot satisfy an "
           "explicit width");
  if (*asked_.vector_width == 4 && plan_.backend != Backend::Simdgroup)
    reject<NotSupported>(
        "vector_width",
        "vector_width=4 cannot be forced on " +
            std::string(plan_.backend == Backend::SimdgroupInline ? "a simdgroup_inline"
                                                                  : "an elementwise") +
            " kernel: accesses are grouped only where four consecutive addresses are "
            "proven, so leave vector_width unset (automatic) or set it to 1 (no grouping)");
  plan_.vector_width = *asked_.vector_width;
  plan_.vector_width_reason =
      *asked_.vector_width == 1
          ? "required: no compiler vectorization (every access scalar)"
          : "required: vectorized aligned operand interiors (masked tails may stay scalar)";
}

void Planner::choose_double_buffer() {
  plan_.double_buffer = asked_.double_buffer;
  if (plan_.backend == Backend::Simdgroup && plan_.staging == Staging::Device) {
    plan_.double_buffer_reason =
        std::string(asked_.double_buffer ? "prohibited" : "auto") +
        ": staging='device' keeps no threadgroup operand buffer, so nothing is double-buffered";
    return;
  }
  if (plan_.backend == Backend::Simdgroup) {
    // num_stages (the launch option, Triton's) sets the depth; 1 asks for no pipeline.
    const std::optional<int64_t> stages = attr("pipeline_stages");
    const bool async = target_.has_async_copy;
    if (asked_.double_buffer == true) {
      plan_.pipeline_stages = static_cast<int>(std::max<int64_t>(2, stages.value_or(2)));
      plan_.double_buffer_reason = "required: a materialised software pipeline of " +
                                   std::to_string(plan_.pipeline_stages) + " stages";
    } else if (asked_.double_buffer == false) {
      plan_.double_buffer_reason = "prohibited: a single operand buffer";
    } else if (stages == 1) {
      plan_.double_buffer_reason = "auto: num_stages=1, a single operand buffer";
    } else if (async) {
      plan_.pipeline_stages = static_cast<int>(stages.value_or(kDefaultAsyncStages));
      plan_.double_buffer_reason =
          "auto: a K loop of the canonical form (acc = dot(a, b, acc) with its operand "
          "copies) stages its operand tiles through " +
          std::to_string(plan_.pipeline_stages) + " shared-memory slots filled by " + target_.name +
          "'s asynchronous copies (" +
          (stages ? "num_stages" : "Triton's default depth") +
          "; fewer where threadgroup memory does not hold them); other loops keep a single "
          "operand buffer";
    } else {
      plan_.double_buffer_reason =
          "auto: a single operand buffer (a two-stage software pipeline is materialised only "
          "when required: target " + target_.name +
          " has no asynchronous copies, and shared-memory staging is not assumed faster)";
    }
    return;
  }
  if (asked_.double_buffer == true)
    reject("double_buffer",
           plan_.backend == Backend::Elementwise
               ? "an elementwise kernel has no software pipeline to double-buffer; a "
                 "materialised double buffer needs a matrix backend (backend='simdgroup')"
               : "only the simdgroup backend materialises a software double buffer");
  plan_.double_buffer_reason = std::string(asked_.double_buffer ? "prohibited" : "auto") +
                               ": the " + std::string(backend_name(plan_.backend)) +
                               " backend has no software pipeline, so nothing is double-buffered";
}

}  // namespace metile::schedule::planning
