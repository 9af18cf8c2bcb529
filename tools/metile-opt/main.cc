// metile-opt: reads Tile IR or Metal IR text, verifies it, runs the named pipeline passes in
// order (verifying after each), and prints the result: the IR, or the emitted source when the
// last pass is emit_msl or emit_cuda. The way passes are tested (tests/lit).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/pass_registry.h"
#include "metile/support/debug_dump.h"
#include "metile/target/target.h"

namespace {

using metile::find_pass;
using metile::pass_names;

constexpr int kBadInput = 1;
constexpr int kBadUsage = 2;
constexpr int kCompilerBug = 3;

const char kUsage[] =
    "usage: metile-opt FILE [--pass NAME ...] [--target NAME] [--math MODE]\n"
    "\n"
    "Reads Tile IR or Metal IR text from FILE ('-' for stdin), verifies it, runs the named\n"
    "passes in order (verifying after each), and prints the result: the IR, or the emitted\n"
    "source when the last pass is emit_msl or emit_cuda. With no pass it prints the input\n"
    "back.\n"
    "\n"
    "  --pass NAME     run pass NAME (repeatable; also --pass=NAME)\n"
    "  --target NAME   the target of plan_threads, lower_to_metal and emit_msl/emit_cuda\n"
    "                  (default: the host emulator's)\n"
    "  --math MODE     apply_math_mode's mode: default, strict or relaxed\n"
    "  --list-passes   list the passes, in pipeline order, and exit\n"
    "  --help          show this message\n"
    "\n"
    "METILE_DEBUG=bounds makes emit_cuda write the recorded bounds checks (docs/cuda.md).\n"
    "Exit status: 0 ok, 1 invalid input, 2 bad usage, 3 compiler bug.\n";

void list_passes() {
  for (const std::string& name : pass_names()) {
    std::cout << "  " << name;
    std::cout << std::string(name.size() < 22 ? 22 - name.size() : 1, ' ')
              << find_pass(name).description << "\n";
  }
}

bool read_input(const std::string& file, std::string& text) {
  std::ostringstream s;
  if (file == "-") {
    s << std::cin.rdbuf();
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) return false;
    std::ifstream in(file, std::ios::binary);
    if (!in) return false;
    s << in.rdbuf();
  }
  text = s.str();
  return true;
}

struct Options {
  std::string file;
  std::vector<std::string> passes;
  std::string target;
  std::string math;
};

std::optional<metile::MathMode> math_mode(const std::string& name) {
  if (name.empty()) return metile::MathMode::Default;
  try {
    return metile::math_mode_from_name(name);
  } catch (const metile::UserError&) {
    return std::nullopt;
  }
}

bool is_emit(const std::string& pass) {
  return pass == "emit_msl" || pass == "emit_cuda";
}

// The emit pass that is not the last pass, or "": an emit pass's output is source, not IR, so
// no pass can follow it.
std::string emit_before_last(const std::vector<std::string>& passes) {
  for (size_t i = 0; i + 1 < passes.size(); ++i)
    if (is_emit(passes[i])) return passes[i];
  return "";
}

// Parses the command line; returns an exit status when the program should stop.
std::optional<int> parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--list-passes") {
      list_passes();
      return 0;
    }
    if (arg == "--pass" && i + 1 < argc) {
      o.passes.push_back(argv[++i]);
    } else if (arg == "--target" && i + 1 < argc) {
      o.target = argv[++i];
    } else if (arg.rfind("--target=", 0) == 0) {
      o.target = arg.substr(9);
    } else if (arg == "--math" && i + 1 < argc) {
      o.math = argv[++i];
    } else if (arg.rfind("--math=", 0) == 0) {
      o.math = arg.substr(7);
    } else if (arg.rfind("--pass=", 0) == 0) {
      o.passes.push_back(arg.substr(7));
    } else if ((arg.size() > 1 && arg[0] == '-') || !o.file.empty()) {
      std::cerr << "metile-opt: unexpected argument '" << arg << "'\n" << kUsage;
      return kBadUsage;
    } else {
      o.file = arg;
    }
  }
  if (o.file.empty()) {
    std::cerr << "metile-opt: no input file\n" << kUsage;
    return kBadUsage;
  }
  if (!math_mode(o.math)) {
    std::cerr << "metile-opt: unknown math mode '" << o.math
              << "'; known modes: default, strict, relaxed\n";
    return kBadUsage;
  }
  try {
    // The registry's spelling (emit-msl names emit_msl), so that is_emit sees every emit pass.
    for (std::string& name : o.passes) name = find_pass(name).name;
    if (!o.target.empty()) metile::target::target_by_name(o.target);
  } catch (const metile::UserError& e) {
    std::cerr << "metile-opt: " << e.what() << "\n";
    return kBadUsage;
  }
  if (const std::string emit = emit_before_last(o.passes); !emit.empty()) {
    std::cerr << "metile-opt: " << emit << " prints source, so it must be the last pass\n";
    return kBadUsage;
  }
  return std::nullopt;
}

int run(const Options& o) {
  std::string text;
  if (!read_input(o.file, text)) {
    std::cerr << "metile-opt: cannot read " << o.file << "\n";
    return kBadInput;
  }
  const std::string filename = o.file == "-" ? "<stdin>" : o.file;
  metile::ir::Kernel kernel = metile::ir::parse(text, filename);
  std::vector<metile::ir::Diagnostic> diagnostics = metile::ir::verify(kernel);
  for (const metile::ir::Diagnostic& d : diagnostics)
    std::cerr << filename << ": error: " << d.str() << "\n";
  if (!diagnostics.empty()) return kBadInput;
  const metile::target::Target& target = o.target.empty()
                                             ? metile::target::default_target()
                                             : metile::target::target_by_name(o.target);
  metile::PassContext context(target, *math_mode(o.math));
  context.bounds_checks = metile::bounds_checks_requested();  // emit_cuda's recorded checks
  for (const std::string& name : o.passes) {
    kernel = find_pass(name).run(std::move(kernel), context).kernel;
    metile::ir::verify_or_throw(kernel, name);
  }
  // Only an emit pass leaves source, and it is the last pass (parse_args).
  if (context.emitted)
    std::cout << context.emitted->source;
  else
    std::cout << metile::ir::print(kernel);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto status = parse_args(argc, argv, options)) return *status;
  try {
    return run(options);
  } catch (const metile::UserError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const metile::InternalError& e) {
    std::cerr << e.what() << "\n";
    return kCompilerBug;
  } catch (const std::bad_alloc&) {
    std::cerr << "metile-opt: out of memory\n";
    return kBadInput;
  }
}
