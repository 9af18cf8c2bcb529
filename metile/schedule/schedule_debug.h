// METILE_DEBUG=schedule: the schedule plan and the execution report of every compile,
// printed to stderr and saved as <debug dir>/schedule/<kernel>-<hash>.json (seed 002).
#pragma once

#include <string>

#include "metile/schedule/execution_report.h"

namespace metile::schedule {

// Prints the plan and the report, writes the report (which holds the plan) and returns the
// file's path. `identity` distinguishes the kernel's specialisations (its emitted source);
// the file name holds its hash. UserError when the file cannot be written.
std::string write_schedule_debug(const ExecutionReport& report, const std::string& debug_dir,
                                 const std::string& identity);

}  // namespace metile::schedule
