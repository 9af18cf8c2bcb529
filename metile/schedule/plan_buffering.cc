// plan_schedule's vector width of the dot operands and the K loop's double buffering.
#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

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
    plan_.double_buffer_reason =
        !asked_.double_buffer   ? "auto: a single operand buffer (a two-stage software "
                                  "pipeline is materialised only when required: shared-memory "
                                  "staging is not assumed faster)"
        : *asked_.double_buffer ? "required: a materialised two-stage software pipeline"
                                : "prohibited: a single operand buffer";
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
