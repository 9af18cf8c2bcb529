// plan_schedule's staging of the dots' operands: threadgroup memory or straight from device
// memory.
#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

void Planner::choose_staging() {
  if (whole_tile()) return choose_matrix_staging();
  const int64_t declared = lower::ThreadgroupAllocator::user_bytes(k_);
  const Staging own = declared > 0 ? Staging::Threadgroup : Staging::Device;
  plan_.staging = own;
  plan_.staging_reason =
      declared > 0 ? "the kernel stages through the " + text(declared) +
                         " bytes of threadgroup memory it declares (metile.shared)"
                   : "the kernel's memory operations are device loads and stores only (no "
                     "metile.shared)";
  if (asked_.staging == Staging::Auto) return;
  if (asked_.staging != own)
    reject("staging", std::string(plan_.backend == Backend::SimdgroupInline
                                      ? "a simdgroup_inline kernel places its own tiles, so "
                                        "staging"
                                      : "elementwise staging") +
                          " must match the kernel's memory operations, and " +
                          plan_.staging_reason);
  if (declared > target_.threadgroup_memory_bytes)
    reject<OutOfResources>("staging",
                           "its " + text(declared) + " bytes of threadgroup memory exceed target " +
                               target_.name + "'s " + text(target_.threadgroup_memory_bytes));
  plan_.staging_reason = "required, and " + plan_.staging_reason;
}

void Planner::choose_matrix_staging() {
  int64_t bytes = 0;
  for (const ir::Op* dot : dots_)
    for (int operand : {0, 1}) {
      const ir::Type& t = k_.type(dot->operands[operand]);
      bytes += t.num_elements() * ir::dtype_bytes(t.dtype);
    }
  if (asked_.double_buffer == true) bytes *= 2;
  bytes += lower::ThreadgroupAllocator::user_bytes(k_);
  const bool fits = bytes <= target_.threadgroup_memory_bytes;
  const std::string need = text(bytes) + " bytes of operand tiles" +
                           (asked_.double_buffer == true ? " (double-buffered)" : "") +
                           " against target " + target_.name + "'s " +
                           text(target_.threadgroup_memory_bytes);
  if (plan_.backend == Backend::TensorOps) {
    if (asked_.staging == Staging::Threadgroup)
      reject("staging", "the tensor backend reads its operands from device memory itself");
    plan_.staging = Staging::Device;
    plan_.staging_reason = std::string(asked_.staging == Staging::Auto ? "auto" : "required") +
                           ": the tensor backend reads its operands from device memory";
    return;
  }
  switch (asked_.staging) {
    case Staging::Auto:
      // The SIMD-group lowering built stages operands through threadgroup memory only;
      // lower_to_metal checks the capacity of what it allocates.
      plan_.staging = Staging::Threadgroup;
      plan_.staging_reason = "auto: operand tiles through threadgroup memory, " + need;
      return;
    case Staging::Threadgroup:
      if (!fits) reject<OutOfResources>("staging", "staging needs " + need);
      plan_.staging = Staging::Threadgroup;
      plan_.staging_reason = "required: operand tiles through threadgroup memory, " + need;
      return;
    case Staging::Device:
      choose_device_staging();
      return;
  }
}

void Planner::choose_device_staging() {
  if (asked_.double_buffer == true)
    reject("staging",
           "staging='device' reads each operand fragment straight from device memory, so "
           "there is no threadgroup operand buffer for Schedule(double_buffer=True) to "
           "double-buffer; drop one of the two");
  if (asked_.vector_width == 4)
    reject<NotSupported>(
        "staging",
        "staging='device' reads operand fragments with matrix loads, not the scalar "
        "operand copies that Schedule(vector_width=4) vectorises; use "
        "staging='threadgroup' with vector_width=4, or drop vector_width");
  for (const ir::Op* dot : dots_)
    for (int operand : {0, 1})
      if (const std::string why = lower::device_operand_unfit(k_, *dot, operand); !why.empty())
        reject<NotSupported>("staging",
                             "its operand fragments cannot be read straight from "
                             "device memory: " +
                                 why);
  plan_.staging = Staging::Device;
  plan_.staging_reason =
      "required: each SIMD group reads its operand fragments straight from device memory "
      "(complete blocks by matrix loads, ragged tails through 64 elements of tail scratch "
      "per SIMD group), no threadgroup operand tiles";
}

}  // namespace metile::schedule::planning
