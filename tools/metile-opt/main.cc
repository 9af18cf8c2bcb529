// metile-opt: reads Tile IR or Metal IR text, verifies it, runs the named passes in order
// (verifying after each), and prints the result. The way passes are tested (tests/lit).
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/lower/lower.h"
#include "metile/target/target.h"
#include "metile/transform/apply_math_mode.h"
#include "metile/transform/pass_registry.h"

namespace {

using metile::transform::pass_names;

constexpr int kBadInput = 1;
constexpr int kBadUsage = 2;
constexpr int kCompilerBug = 3;

const char kUsage[] =
    "usage: metile-opt FILE [--pass NAME ...] [--target NAME]\n"
    "\n"
    "Reads Tile IR or Metal IR text from FILE ('-' for stdin), verifies it, runs the named\n"
    "passes in order (verifying after each), and prints the result. With no pass it prints\n"
    "the input back.\n"
    "\n"
    "  --pass NAME     run pass NAME (repeatable; also --pass=NAME)\n"
    "  --target NAME   the target `lower` lowers for (default: the host emulator's)\n"
    "  --list-passes   list the passes and exit\n"
    "  --help          show this message\n"
    "\n"
    "Exit status: 0 ok, 1 invalid input, 2 bad usage, 3 compiler bug.\n";

void list_passes() {
  for (const std::string& name : pass_names()) {
    std::cout << "  " << name;
    std::cout << std::string(name.size() < 16 ? 16 - name.size() : 1, ' ')
              << metile::transform::find_pass(name).description << "\n";
  }
}

bool read_input(const std::string& file, std::string& text) {
  std::ostringstream s;
  if (file == "-") {
    s << std::cin.rdbuf();
  } else {
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
};

// The target `lower` uses; set from --target before any pass runs.
const metile::target::Target* lowering_target = nullptr;

void register_tool_passes() {
  using metile::ir::Kernel;
  metile::transform::register_pass(
      {"expand-tensor-access",
       "rewrites tensor descriptor loads/stores as bounds-masked pointer accesses",
       [](Kernel k) { return metile::lower::expand_tensor_access(std::move(k)); }});
  metile::transform::register_pass(
      {"strict-math", "drops every fast-math flag (STRICT_MATH)",
       [](Kernel k) { return metile::transform::apply_math_mode(std::move(k), true, false); }});
  metile::transform::register_pass(
      {"relaxed-math", "marks every transcendental fast (RELAXED_PRECISION)",
       [](Kernel k) { return metile::transform::apply_math_mode(std::move(k), false, true); }});
  metile::transform::register_pass(
      {"lower", "lowers Tile IR to Metal IR for the target (--target)", [](metile::ir::Kernel k) {
         return metile::lower::lower_to_metal_ir(std::move(k), *lowering_target);
       }});
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
  try {
    for (const std::string& name : o.passes) metile::transform::find_pass(name);
    lowering_target = o.target.empty() ? &metile::target::default_target()
                                       : &metile::target::target_by_name(o.target);
  } catch (const metile::UserError& e) {
    std::cerr << "metile-opt: " << e.what() << "\n";
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
  for (const std::string& name : o.passes) {
    kernel = metile::transform::find_pass(name).run(std::move(kernel));
    metile::ir::verify_or_throw(kernel, name);
  }
  std::cout << metile::ir::print(kernel);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  register_tool_passes();
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
  }
}
