#include "metile/runtime/host/emitted_line.h"

#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "metile/runtime/host/subprocess.h"

namespace metile::runtime::host {

std::vector<int> emitted_lines_of(std::uintptr_t pc) {
  Dl_info info{};
  if (pc == 0 || dladdr(reinterpret_cast<void*>(pc), &info) == 0 || !info.dli_fname ||
      !info.dli_fbase)
    return {};
  // A module <key>.so is compiled from <key>.cc; frames in the metal_stdlib headers and in
  // the emulator itself are skipped.
  const std::string source = std::filesystem::path(info.dli_fname).stem().string() + ".cc";
  char offset[32];
  std::snprintf(
      offset, sizeof offset, "%#llx",
      static_cast<unsigned long long>(pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase)));
  const ProcessResult r = run_process({"addr2line", "-i", "-e", info.dli_fname, offset});
  std::vector<int> found;
  if (r.exit_code != 0) return found;
  std::istringstream lines(r.output);
  for (std::string frame; std::getline(lines, frame);) {
    // "<path>:<line>" or "<path>:<line> (discriminator N)"
    const auto colon = frame.rfind(':', frame.find(" ("));
    if (colon == std::string::npos) continue;
    if (std::filesystem::path(frame.substr(0, colon)).filename() != source) continue;
    const int line = std::atoi(frame.c_str() + colon + 1);
    if (line > 0) found.push_back(line);
  }
  return found;
}

}  // namespace metile::runtime::host
