// The SoftwarePipeline record: the dependency sequence of seed 004's two-stage pipeline, the
// same sequence for a longer ring, the sequence with a read in flight, and the JSON entry of
// execution_report.pipelines.
#include "metile/schedule/software_pipeline.h"

#include <gtest/gtest.h>

namespace metile::schedule {
namespace {

using A = PipelineAction;
using P = PipelinePhase;

TEST(SoftwarePipeline, TwoStagesFollowTheSeedSequence) {
  const std::vector<PipelineStep> expected = {
      {P::Prologue, A::Copy, 0, 0, false},     // 1. copy the first tiles
      {P::Prologue, A::Publish, 0, 0, false},  //    and publish them
      {P::Steady, A::Copy, 1, 1, true},        // 2. copy the next tiles into the free slots
      {P::Steady, A::Consume, 0, 0, false},    // 3. consume the current tiles,
      {P::Steady, A::Publish, 1, 1, true},     //    publish the next slots,
      {P::Steady, A::Release, 0, 0, false},    //    release the current ones
      {P::Steady, A::Rotate, 1, 1, false},     //    and rotate
      {P::Drain, A::Consume, 0, 0, false},     // 4. consume and release the final tiles
      {P::Drain, A::Release, 0, 0, false},
  };
  EXPECT_EQ(dependency_sequence(2), expected);
}

TEST(SoftwarePipeline, ARingKeepsStagesMinusOneTilesInFlight) {
  const std::vector<PipelineStep> ring = dependency_sequence(4);
  int prologue_copies = 0, drains = 0;
  for (const PipelineStep& s : ring) {
    prologue_copies += s.phase == P::Prologue && s.action == A::Copy;
    drains += s.phase == P::Drain && s.action == A::Consume;
    if (s.phase == P::Steady && s.action == A::Copy) {
      EXPECT_EQ(s.tile, 3);
      EXPECT_TRUE(s.guarded);
    }
  }
  EXPECT_EQ(prologue_copies, 3);
  EXPECT_EQ(drains, 3);
}

TEST(SoftwarePipeline, AReadInFlightReleasesThePreviousSlotBeforeTheCopy) {
  const std::vector<PipelineStep> expected = {
      {P::Prologue, A::Copy, 0, 0, false},  // 1. copy tiles 0 and 1,
      {P::Prologue, A::Copy, 1, 1, false},
      {P::Prologue, A::Publish, 0, 0, false},  //    publish tile 0
      {P::Steady, A::Consume, 0, 0, false},    // 2. start consuming the current slot,
      {P::Steady, A::Release, -1, 2, false},   //    finish the previous step's reads,
      {P::Steady, A::Publish, 1, 1, true},     //    publish the next tile
      {P::Steady, A::Copy, 2, 2, true},        //    and refill the released slot
      {P::Steady, A::Rotate, 1, 1, false},
      {P::Drain, A::Consume, 0, 0, false},
      {P::Drain, A::Release, 0, 0, false},
      {P::Drain, A::Consume, 1, 1, false},
      {P::Drain, A::Release, 1, 1, false},
  };
  EXPECT_EQ(dependency_sequence(3, 1), expected);
}

TEST(SoftwarePipeline, JsonShowsStorageAndSequence) {
  SoftwarePipeline p;
  p.loop = "for %k";
  p.buffers = {{"a", "pipeline a", "f16", 2, 64, 16, 0, 0},
               {"b", "pipeline b", "f16", 2, 16, 64, 72, 4096}};
  p.sequence = dependency_sequence(2);
  p.verified = {"types"};
  EXPECT_EQ(p.bytes(), 2 * (64 * 16 * 2) + 2 * (16 * 72 * 2));
  const nlohmann::json j = p.to_json();
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["copy"], "synchronous");
  EXPECT_EQ(j["sync"], "threadgroup_barrier");
  EXPECT_EQ(j["reads_in_flight"], 0);
  EXPECT_EQ(j["buffers"][0]["row_stride"], 16);  // unpadded
  EXPECT_EQ(j["buffers"][1]["row_stride"], 72);  // each row padded by 8 elements
  EXPECT_EQ(j["buffers"][1]["slot_bytes"], 16 * 72 * 2);
  EXPECT_EQ(j["buffers"][1]["offset"], 4096);
  EXPECT_EQ(j["sequence"][2]["action"], "copy");
  EXPECT_EQ(j["sequence"][2]["guard"], "the tile exists");
  EXPECT_EQ(j["verified"][0], "types");
}

}  // namespace
}  // namespace metile::schedule
