#include "metile/flow/dimacs.h"

#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

#include "metile/support/errors.h"

namespace metile::flow {

namespace {

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

std::optional<int64_t> parse_integer(std::string_view word) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

// A word of the input as a message quotes it: a long bad token is cut, not echoed whole.
std::string quote(std::string_view word) {
  constexpr size_t kShown = 40;
  if (word.size() <= kShown) return "'" + std::string(word) + "'";
  return "'" + std::string(word.substr(0, kShown)) + "...' (" + std::to_string(word.size()) +
         " characters)";
}

// Declared vertices a problem may have beyond those its arcs and terminals can touch: the
// solvers allocate per declared vertex, so a header alone must not size them.
constexpr int64_t kUntouchedVertexAllowance = int64_t{1} << 20;

}  // namespace

DimacsProblem read_dimacs_max_flow(std::istream& in, const std::string& name) {
  int line_number = 0;
  auto fail = [&](const std::string& what) -> UserError {
    return UserError(name + ":" + std::to_string(line_number) + ": " + what);
  };
  std::optional<FlowNetwork::Builder> builder;
  int64_t vertices = 0, declared_arcs = 0, arcs = 0;
  int problem_line = 0, source_line = 0, sink_line = 0;
  int source = -1, sink = -1;
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    const std::vector<std::string_view> w = split(line);
    if (w.empty() || w[0] == "c") continue;
    auto integer = [&](size_t i, const char* what) {
      std::optional<int64_t> v = parse_integer(w[i]);
      if (!v) throw fail(std::string(what) + " " + quote(w[i]) + " is not an integer");
      return *v;
    };
    auto vertex = [&](size_t i, const char* what) {
      const int64_t id = integer(i, what);
      if (id < 1 || id > vertices)
        throw fail(std::string(what) + " " + std::to_string(id) + " is out of range 1.." +
                   std::to_string(vertices));
      return static_cast<int>(id - 1);
    };
    if (w[0] == "p") {
      if (builder)
        throw fail("second problem line (the first is on line " + std::to_string(problem_line) +
                   ")");
      if (w.size() != 4 || w[1] != "max")
        throw fail("problem line must be 'p max <vertices> <arcs>'");
      vertices = integer(2, "vertex count");
      declared_arcs = integer(3, "arc count");
      if (vertices < 2 || vertices > (int64_t{1} << 30))
        throw fail("vertex count must be in 2..2^30");
      if (declared_arcs < 0 || declared_arcs > (int64_t{1} << 30))
        throw fail("arc count must be in 0..2^30");
      builder.emplace(static_cast<int>(vertices));
      problem_line = line_number;
    } else if (w[0] == "n") {
      if (!builder) throw fail("node line before the problem line 'p max N M'");
      if (w.size() != 3 || (w[2] != "s" && w[2] != "t"))
        throw fail("node line must be 'n <id> s' or 'n <id> t'");
      const int v = vertex(1, "node id");
      if (w[2] == "s") {
        if (source_line)
          throw fail("second source (the first is on line " + std::to_string(source_line) + ")");
        source = v;
        source_line = line_number;
      } else {
        if (sink_line)
          throw fail("second sink (the first is on line " + std::to_string(sink_line) + ")");
        sink = v;
        sink_line = line_number;
      }
    } else if (w[0] == "a") {
      if (!builder) throw fail("arc line before the problem line 'p max N M'");
      if (w.size() != 4) throw fail("arc line must be 'a <from> <to> <capacity>'");
      const int u = vertex(1, "arc tail"), v = vertex(2, "arc head");
      const int64_t capacity = integer(3, "capacity");
      if (capacity < 0) throw fail("negative capacity " + std::to_string(capacity));
      if (++arcs > declared_arcs)
        throw fail("more arcs than the " + std::to_string(declared_arcs) + " declared on line " +
                   std::to_string(problem_line));
      builder->add_arc(u, v, capacity);
    } else {
      throw fail("unknown line type " + quote(w[0]) + " (expected c, p, n or a)");
    }
  }
  if (in.bad()) throw fail("cannot read the input");
  if (!builder) throw fail("no problem line 'p max N M' (end of input)");
  if (arcs != declared_arcs) {
    line_number = problem_line;
    throw fail("problem line declares " + std::to_string(declared_arcs) +
               " arcs but the input has " + std::to_string(arcs));
  }
  if (source < 0) throw fail("no source line 'n <id> s' (end of input)");
  if (sink < 0) throw fail("no sink line 'n <id> t' (end of input)");
  if (vertices > 2 * arcs + 2 + kUntouchedVertexAllowance) {
    line_number = problem_line;
    throw fail("the problem line declares " + std::to_string(vertices) + " vertices but its " +
               std::to_string(arcs) + " arcs and two terminals touch at most " +
               std::to_string(2 * arcs + 2) + "; more than 2^20 untouched vertices are refused " +
               "(they cannot change the flow)");
  }
  if (source == sink) {
    line_number = sink_line;
    throw fail("source and sink are the same vertex " + std::to_string(source + 1));
  }
  return DimacsProblem{std::move(*builder).build(), source, sink};
}

}  // namespace metile::flow
