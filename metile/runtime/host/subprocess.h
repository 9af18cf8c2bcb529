// Runs a program and captures what it prints (stdout and stderr together).
#pragma once

#include <string>
#include <vector>

namespace metile::runtime::host {

struct ProcessResult {
  int exit_code = -1;  // -1: could not be started, or died of a signal
  std::string output;
};

// argv[0] is looked up in PATH.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace metile::runtime::host
