#include "metile/schedule/software_pipeline.h"

#include "metile/support/errors.h"

namespace metile::schedule {

std::string_view pipeline_copy_name(PipelineCopy c) {
  switch (c) {
    case PipelineCopy::Synchronous:
      return "synchronous";
    case PipelineCopy::Asynchronous:
      return "asynchronous";
  }
  throw InternalError("pipeline_copy_name: unknown copy");
}

std::string_view pipeline_sync_name(PipelineSync s) {
  switch (s) {
    case PipelineSync::ThreadgroupBarrier:
      return "threadgroup_barrier";
    case PipelineSync::Mbarrier:
      return "mbarrier";
  }
  throw InternalError("pipeline_sync_name: unknown synchronisation");
}

std::string_view pipeline_phase_name(PipelinePhase p) {
  switch (p) {
    case PipelinePhase::Prologue:
      return "prologue";
    case PipelinePhase::Steady:
      return "steady";
    case PipelinePhase::Drain:
      return "drain";
  }
  throw InternalError("pipeline_phase_name: unknown phase");
}

std::string_view pipeline_action_name(PipelineAction a) {
  switch (a) {
    case PipelineAction::Copy:
      return "copy";
    case PipelineAction::Publish:
      return "publish";
    case PipelineAction::Consume:
      return "consume";
    case PipelineAction::Release:
      return "release";
    case PipelineAction::Rotate:
      return "rotate";
  }
  throw InternalError("pipeline_action_name: unknown action");
}

std::vector<PipelineStep> dependency_sequence(int stages, int reads_in_flight) {
  METILE_ASSERT(stages >= 2, "a software pipeline has at least two stages");
  METILE_ASSERT(reads_in_flight == 0 || (reads_in_flight == 1 && stages >= 3),
                "a read in flight needs a ring of three or more slots");
  using A = PipelineAction;
  using P = PipelinePhase;
  std::vector<PipelineStep> steps;
  const int ahead = stages - 1;  // tiles in flight beyond the current one
  for (int t = 0; t < ahead; ++t) steps.push_back({P::Prologue, A::Copy, t, t, false});
  if (reads_in_flight) {
    // Consume, then release the previous step's slot (its reads are complete now), publish
    // the next tile and refill the released slot.
    steps.push_back({P::Prologue, A::Publish, 0, 0, false});
    steps.push_back({P::Steady, A::Consume, 0, 0, false});
    steps.push_back({P::Steady, A::Release, -1, ahead, false});
    steps.push_back({P::Steady, A::Publish, 1, 1, true});
    steps.push_back({P::Steady, A::Copy, ahead, ahead, true});
  } else {
    for (int t = 0; t < ahead; ++t) steps.push_back({P::Prologue, A::Publish, t, t, false});
    steps.push_back({P::Steady, A::Copy, ahead, ahead, true});
    steps.push_back({P::Steady, A::Consume, 0, 0, false});
    steps.push_back({P::Steady, A::Publish, ahead, ahead, true});
    steps.push_back({P::Steady, A::Release, 0, 0, false});
  }
  steps.push_back({P::Steady, A::Rotate, 1, 1, false});
  for (int t = 0; t < ahead; ++t) {
    steps.push_back({P::Drain, A::Consume, t, t, false});
    steps.push_back({P::Drain, A::Release, t, t, false});
  }
  return steps;
}

int64_t SoftwarePipeline::bytes() const {
  int64_t total = 0;
  for (const PipelineBuffer& b : buffers) total += b.slot_bytes() * stages;
  return total;
}

nlohmann::json SoftwarePipeline::to_json() const {
  nlohmann::json j;
  j["loop"] = loop;
  j["stages"] = stages;
  j["copy"] = pipeline_copy_name(copy);
  j["sync"] = pipeline_sync_name(sync);
  j["reads_in_flight"] = reads_in_flight;
  j["bytes"] = bytes();
  j["buffers"] = nlohmann::json::array();
  for (const PipelineBuffer& b : buffers)
    j["buffers"].push_back({{"operand", b.operand},
                            {"allocation", b.allocation},
                            {"dtype", b.dtype},
                            {"slot_shape", {b.rows, b.columns}},
                            {"row_stride", b.row_stride ? b.row_stride : b.columns},
                            {"slot_bytes", b.slot_bytes()},
                            {"slots", stages},
                            {"offset", b.offset}});
  j["sequence"] = nlohmann::json::array();
  for (const PipelineStep& s : sequence) {
    nlohmann::json step = {{"phase", pipeline_phase_name(s.phase)},
                           {"action", pipeline_action_name(s.action)},
                           {"tile", s.tile},
                           {"slot", s.slot}};
    if (s.guarded) step["guard"] = "the tile exists";
    j["sequence"].push_back(std::move(step));
  }
  j["empty_loop"] = "skips the pipeline";
  j["verified"] = verified;
  return j;
}

}  // namespace metile::schedule
