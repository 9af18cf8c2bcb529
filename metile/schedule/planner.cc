// plan_schedule's planner: what its decisions read, and the order it makes them in.
#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

std::vector<const ir::Op*> matrix_ops(const ir::Kernel& k) {
  const auto is_fragment = [&](ir::ValueId v) { return k.type(v).is_matrix(); };
  std::vector<const ir::Op*> found;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Dot || op.kind == ir::OpKind::DescriptorMatmul ||
        std::any_of(op.operands.begin(), op.operands.end(), is_fragment) ||
        std::any_of(op.results.begin(), op.results.end(), is_fragment))
      found.push_back(&op);
  });
  return found;
}

std::vector<const ir::Op*> tile_dots(const ir::Kernel& k, const std::vector<const ir::Op*>& ops) {
  std::vector<const ir::Op*> dots;
  for (const ir::Op* op : ops)
    if (op->kind == ir::OpKind::Dot && k.type(op->operands[0]).is_tile()) dots.push_back(op);
  return dots;
}

std::string show(const Schedule& s, const std::string& control) {
  if (control == "backend") return "backend='" + std::string(backend_name(s.backend)) + "'";
  if (control == "staging") return "staging='" + std::string(staging_name(s.staging)) + "'";
  if (control == "num_simdgroups") return "num_simdgroups=" + std::to_string(*s.num_simdgroups);
  if (control == "vector_width") return "vector_width=" + std::to_string(*s.vector_width);
  return std::string("double_buffer=") + (*s.double_buffer ? "True" : "False");
}

SchedulePlan Planner::run() {
  if (plan_.requested) check_schedule(asked_);
  choose_backend();
  if (plan_.strategy == MatrixStrategy::WgmmaTma) {
    choose_wgmma_pipeline();
    return std::move(plan_);
  }
  if (plan_.backend == Backend::Simdgroup || plan_.backend == Backend::TensorOps)
    choose_matrix_tiling();
  else
    choose_lane_geometry();
  check_legacy_geometry();
  choose_staging();
  choose_vector_width();
  choose_double_buffer();
  return std::move(plan_);
}

}  // namespace metile::schedule::planning
