// Records what the pipeline compiled so a refactor can prove it changes no generated kernel
// (DESIGN.md, Practices 6: a replay diff). With METILE_REPLAY_DIR set, every compile writes
// <dir>/<key>.json holding the input Tile IR, the options and the emitted source;
// metile-replay compiles the inputs again and diffs the sources.
#pragma once

#include <optional>
#include <string>

#include "metile/pipeline.h"

namespace metile {

// The options of one recorded compile, as text, so a later build can rebuild them.
struct ReplayEntry {
  std::string kernel;
  std::string target;  // a target::target_by_name name
  std::string math;    // "default" | "strict" | "relaxed"
  std::string tile_ir;
  std::string source;
  // PipelineOptions::schedule (older entries hold only a vector_width, 0 for none).
  std::optional<schedule::Schedule> schedule;
};

// The directory METILE_REPLAY_DIR names, or "" when recording is off.
std::string replay_dir();
// Writes the entry under `dir` atomically (tests record in parallel); keyed by its inputs.
void write_replay_entry(const std::string& dir, const ReplayEntry& entry);
// Reads one file written by write_replay_entry; UserError naming the file when malformed.
ReplayEntry read_replay_entry(const std::string& path);

}  // namespace metile
