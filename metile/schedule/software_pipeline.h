// SoftwarePipeline: the typed record of a K loop's staged operand buffers and the dependency
// sequence between their copies, publications, reads and releases (seed 004, "Verified
// two-stage matrix pipelines"). A materialiser builds one, a validator checks the generated
// code against it, the emitter consumes its phases, and execution_report.pipelines shows it.
//
// The record is general in the stage count: `stages` slots per buffer form a ring. The
// synchronous SIMD-group pipeline has two (a double buffer) and threadgroup barriers; an
// asynchronous ring (TMA copies completed on mbarriers) has N and the same sequence:
//
//   prologue  copy tiles 0 .. stages-2 into slots 0 .. stages-2, publish them
//   steady    copy tile i + stages-1 into the free slot while slot i % stages stays readable
//             (only while such a tile exists), consume slot i % stages, publish the copied
//             slot and release the consumed one, rotate the slot identities
//   drain     consume and release the last stages-1 tiles
//   empty     a loop without iterations skips the whole pipeline (no copy, no barrier)
//
// A consumer whose reads complete asynchronously (wgmma) may leave one step's reads in flight
// while the next step's copy is issued (reads_in_flight = 1): each step consumes its slot,
// then releases the slot the previous step read, publishes the next tile and copies the tile
// stages-1 ahead into the released slot; the prologue publishes only tile 0.
//
// Slots and tiles in a step are relative: in the steady phase `tile` counts from the
// iteration's current tile and `slot` from its current slot (modulo stages); in the prologue
// both are absolute.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace metile::schedule {

// How a tile reaches its slot.
enum class PipelineCopy : uint8_t {
  Synchronous,   // the threads load it and store it (register staging)
  Asynchronous,  // copies complete in the background (per-thread cp.async, or TMA) and are
                 // waited for before the slot is published
};

// How a slot is published to its readers and released to its next writer.
enum class PipelineSync : uint8_t {
  ThreadgroupBarrier,  // one barrier both publishes the copied slots and releases the read ones
  Mbarrier,            // per-slot full/empty barriers (arrive / wait with a phase bit)
};

enum class PipelinePhase : uint8_t { Prologue, Steady, Drain };

enum class PipelineAction : uint8_t {
  Copy,     // copy `tile` of every buffer into `slot`
  Publish,  // `slot` becomes readable by every consumer
  Consume,  // read `slot` of every buffer into fragments and multiply
  Release,  // the reads of `slot` are complete: it may be overwritten
  Rotate,   // the next iteration's current slot is this one's + 1
};

std::string_view pipeline_copy_name(PipelineCopy c);      // "synchronous", "asynchronous"
std::string_view pipeline_sync_name(PipelineSync s);      // "threadgroup_barrier", "mbarrier"
std::string_view pipeline_phase_name(PipelinePhase p);    // "prologue", "steady", "drain"
std::string_view pipeline_action_name(PipelineAction a);  // "copy", "publish", ...

struct PipelineStep {
  PipelinePhase phase = PipelinePhase::Steady;
  PipelineAction action = PipelineAction::Copy;
  int tile = 0;  // the K tile (relative in steady/drain, absolute in the prologue)
  int slot = 0;  // the slot (relative in steady/drain, absolute in the prologue)
  // Steady copies run only while the tile exists (the last iterations copy nothing).
  bool guarded = false;

  bool operator==(const PipelineStep&) const = default;
};

// One operand's staged storage: `stages` slots of one [rows, columns] tile each, contiguous
// in threadgroup (shared) memory starting at `offset`.
struct PipelineBuffer {
  std::string operand;     // "a" or "b": the dot operand it feeds
  std::string allocation;  // the purpose of its threadgroup allocation (allocation report)
  std::string dtype;       // "f16", "bf16", "f32": the dot operand's element type
  int64_t element_bytes = 0;
  int64_t rows = 0, columns = 0;  // one slot's tile
  int64_t row_stride = 0;         // elements from one row to the next (0: columns, no padding)
  int64_t offset = -1;            // byte offset of slot 0 in threadgroup memory (-1: unplaced)

  int64_t slot_elements() const { return rows * (row_stride ? row_stride : columns); }
  int64_t slot_bytes() const { return slot_elements() * element_bytes; }
  bool operator==(const PipelineBuffer&) const = default;
};

struct SoftwarePipeline {
  std::string loop;  // "for %k at line 12": the K loop it stages
  int stages = 2;    // slots per buffer (2: a double buffer)
  PipelineCopy copy = PipelineCopy::Synchronous;
  PipelineSync sync = PipelineSync::ThreadgroupBarrier;
  std::vector<PipelineBuffer> buffers;
  // The consumer's reads left unfinished at the end of a step (0, or 1 for wgmma groups).
  int reads_in_flight = 0;
  std::vector<PipelineStep> sequence;  // dependency_sequence(stages, reads_in_flight)
  // The validator's checks that passed, in order ("copy ownership", ...); empty until the
  // generated code has been verified against this record.
  std::vector<std::string> verified;

  // Every buffer's slots together.
  int64_t bytes() const;
  bool operator==(const SoftwarePipeline&) const = default;
  // The form of one entry of execution_report.pipelines.
  nlohmann::json to_json() const;
};

// The prologue/steady/drain sequence of a `stages`-slot ring (the header comment's); stages
// must be at least 2, and at least 3 with a read in flight.
std::vector<PipelineStep> dependency_sequence(int stages, int reads_in_flight = 0);

}  // namespace metile::schedule
