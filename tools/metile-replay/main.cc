// metile-replay: compiles every kernel recorded under METILE_REPLAY_DIR again and diffs the
// emitted source against the recorded one. Run the test suite with the variable set before
// a refactor, then this tool after it: "0 differ" proves no generated kernel changed.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "metile/ir/parser.h"
#include "metile/pipeline.h"
#include "metile/replay_log.h"
#include "metile/support/errors.h"
#include "metile/target/target.h"

namespace {

const char kUsage[] =
    "usage: metile-replay DIR [--show N]\n"
    "\n"
    "Compiles each kernel recorded in DIR (by METILE_REPLAY_DIR=DIR) with its recorded\n"
    "target, math mode and vector width, and compares the emitted source with the recorded\n"
    "one. Prints the first differing lines of up to N kernels (default 5).\n"
    "\n"
    "Exit status: 0 every kernel identical, 1 some differ or fail, 2 bad usage.\n";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first line where the two sources differ, with a little context.
void show_difference(const std::string& name, const std::string& recorded, const std::string& now) {
  const auto a = lines_of(recorded), b = lines_of(now);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::cout << "--- " << name << ": first difference at line " << i + 1 << "\n";
  for (size_t k = i; k < std::min(a.size(), i + 3); ++k) std::cout << "-" << a[k] << "\n";
  for (size_t k = i; k < std::min(b.size(), i + 3); ++k) std::cout << "+" << b[k] << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  ::unsetenv("METILE_REPLAY_DIR");  // replaying must not record
  std::string dir;
  int show = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--show" && i + 1 < argc) {
      show = std::stoi(argv[++i]);
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (dir.empty() && arg[0] != '-') {
      dir = arg;
    } else {
      std::cerr << "metile-replay: unexpected argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (dir.empty() || !fs::is_directory(dir)) {
    std::cerr << "metile-replay: no directory of recorded kernels given\n" << kUsage;
    return 2;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int differ = 0, failed = 0;
  for (const fs::path& file : files) {
    try {
      const metile::ReplayEntry entry = metile::read_replay_entry(file.string());
      metile::PipelineOptions options;
      options.target = &metile::target::target_by_name(entry.target);
      options.math = metile::math_mode_from_name(entry.math);
      options.schedule = entry.schedule;
      const std::string now =
          metile::compile_to_source(metile::ir::parse(entry.tile_ir, file.string()), options)
              .emitted.source;
      if (now != entry.source && differ++ < show)
        show_difference(entry.kernel + " (" + file.filename().string() + ")", entry.source, now);
    } catch (const std::exception& e) {
      ++failed;
      std::cout << "--- " << file.filename().string() << ": " << e.what() << "\n";
    }
  }
  std::cout << files.size() << " kernels replayed, " << differ << " differ, " << failed
            << " failed\n";
  return differ == 0 && failed == 0 ? 0 : 1;
}
