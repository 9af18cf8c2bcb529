#include "metile/graph/graph_parser.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "metile/graph/graph_builder.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {

struct OpLine {
  int line = 0;
  std::string result, op, text;
  std::vector<std::string> operands;
  std::map<std::string, AttrValue> attrs;
  std::string type;  // "(4, 8) f32"
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

[[noreturn]] void fail(int line, const std::string& what) {
  throw UserError("parse_graph: line " + std::to_string(line) + ": " + what);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    if (!trim(part).empty()) parts.push_back(trim(part));
  return parts;
}

TensorSpec parse_type(int line, const std::string& text) {
  size_t close = text.find(')');
  if (text.empty() || text[0] != '(' || close == std::string::npos)
    fail(line, "expected a type like (4, 8) f32, got '" + text + "'");
  Shape shape;
  for (const std::string& d : split(text.substr(1, close - 1), ',')) {
    char* end = nullptr;
    long long n = std::strtoll(d.c_str(), &end, 10);
    if (*end != '\0') fail(line, "bad dimension '" + d + "' in '" + text + "'");
    shape.push_back(n);
  }
  return TensorSpec(shape, trim(text.substr(close + 1)));
}

std::optional<OpKind> op_kind(const std::string& name) {
#define GRAPH_OP(kind, text, fusion_class, doc) \
  if (name == text) return OpKind::kind;
#include "metile/graph/graph_ops.def"
  return std::nullopt;
}

std::string known_ops() {
  std::string s;
#define GRAPH_OP(kind, text, fusion_class, doc) s += std::string(s.empty() ? "" : ", ") + text;
#include "metile/graph/graph_ops.def"
  return s;
}

// "%3 = add(%a, %b) {axis = 1} : (4, 8) f32"
OpLine parse_op(int line, const std::string& text) {
  OpLine op;
  op.line = line;
  op.text = text;
  size_t eq = text.find('='), open = text.find('('), colon = text.rfind(':');
  if (eq == std::string::npos || open == std::string::npos || colon == std::string::npos ||
      colon < open)
    fail(line, "expected '%name = op(%operands) {attrs} : type', got '" + text + "'");
  op.result = trim(text.substr(0, eq));
  op.op = trim(text.substr(eq + 1, open - eq - 1));
  size_t close = text.find(')', open);
  if (close == std::string::npos) fail(line, "unclosed operand list in '" + text + "'");
  op.operands = split(text.substr(open + 1, close - open - 1), ',');
  std::string rest = trim(text.substr(close + 1, colon - close - 1));
  if (!rest.empty()) {
    if (rest.front() != '{' || rest.back() != '}')
      fail(line, "expected attributes in braces, got '" + rest + "'");
    for (const std::string& kv : split(rest.substr(1, rest.size() - 2), ',')) {
      size_t e = kv.find('=');
      if (e == std::string::npos) fail(line, "expected key = value, got '" + kv + "'");
      std::string key = trim(kv.substr(0, e)), value = trim(kv.substr(e + 1));
      bool is_float = value.find_first_of(".eE") != std::string::npos && key != "axis" &&
                      key != "keepdims" && key != "causal";
      if (is_float || key == "eps" || key == "factor" || key == "scale")
        op.attrs[key] = std::strtod(value.c_str(), nullptr);
      else
        op.attrs[key] = static_cast<int64_t>(std::strtoll(value.c_str(), nullptr, 10));
    }
  }
  op.type = trim(text.substr(colon + 1));
  return op;
}

class Replay {
 public:
  Replay(std::map<std::string, OpLine> ops, std::map<std::string, Value> inputs)
      : ops_(std::move(ops)), values_(std::move(inputs)) {}

  Value value(const std::string& name, const OpLine* user) {
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    auto op = ops_.find(name);
    if (op == ops_.end()) {
      std::string where =
          user ? "line " + std::to_string(user->line) + ": " + user->text : "outputs(...)";
      throw UserError("parse_graph: " + name + " is neither an input nor an op result (a missing " +
                      "input), used by " + where);
    }
    if (visiting_.count(name))
      fail(op->second.line, "a cycle: " + name + " depends on itself through " +
                                (user ? user->result : name) + " (" + op->second.text + ")");
    visiting_.insert({name, 1});
    Value v = add(op->second);
    visiting_.erase(name);
    values_[name] = v;
    return v;
  }

  GraphBuilder& builder() { return builder_; }
  void define_input(const std::string& name, Value v) { values_[name] = v; }

 private:
  Value add(const OpLine& line) {
    std::optional<OpKind> kind = op_kind(line.op);
    if (!kind)
      fail(line.line,
           "unknown op '" + line.op + "' in " + line.text + "; known ops: " + known_ops());
    if (*kind == OpKind::FlashAttention)
      fail(line.line,
           "flash_attention is made by discovery under a certificate and cannot be "
           "parsed: write the attention chain (matmul, scale, causal_mask, softmax, "
           "matmul) instead, in " +
               line.text);
    std::vector<Value> in;
    for (const std::string& operand : line.operands) in.push_back(value(operand, &line));
    Op op;
    op.kind = *kind;
    op.attrs = line.attrs;
    static const Graph no_certificates;
    Value v;
    try {
      v = builder_.copy_op(no_certificates, op, in);
    } catch (const UserError& e) {
      fail(line.line, e.rule() + " (written " + line.text + ")");
    } catch (const InternalError&) {
      fail(line.line, "missing or mistyped attribute or operand in " + line.text);
    }
    TensorSpec want = parse_type(line.line, line.type);
    if (!(builder_.spec(v) == want))
      fail(line.line, line.result + " = " + line.op + " computes " + builder_.spec(v).str() +
                          ", but the line says " + want.str());
    return v;
  }

  std::map<std::string, OpLine> ops_;
  std::map<std::string, Value> values_;
  std::map<std::string, int> visiting_;
  GraphBuilder builder_;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  std::map<std::string, OpLine> ops;
  std::vector<std::pair<int, std::string>> inputs;  // line, text
  std::vector<std::string> outputs;
  int outputs_line = 0;
  std::istringstream in{std::string(text)};
  std::string raw;
  for (int n = 1; std::getline(in, raw); ++n) {
    std::string line = trim(raw);
    if (line.empty() || line == "graph {" || line == "}") continue;
    if (line.rfind("outputs(", 0) == 0) {
      if (line.back() != ')') fail(n, "expected outputs(%a, ...), got '" + line + "'");
      outputs = split(line.substr(8, line.size() - 9), ',');
      outputs_line = n;
    } else if (line.find("= input") != std::string::npos &&
               line.find("= input(") == std::string::npos) {
      inputs.push_back({n, line});
    } else {
      OpLine op = parse_op(n, line);
      if (ops.count(op.result)) fail(n, op.result + " is defined twice");
      ops[op.result] = op;
    }
  }
  if (!outputs_line) throw UserError("parse_graph: no outputs(...) line");
  Replay replay(ops, {});
  for (const auto& [n, line] : inputs) {
    size_t eq = line.find('='), colon = line.find(':');
    std::string name = trim(line.substr(0, eq));
    if (name.size() < 2 || name[0] != '%' || colon == std::string::npos)
      fail(n, "expected '%name = input : type', got '" + line + "'");
    if (ops.count(name)) fail(n, name + " is defined twice");
    replay.define_input(
        name, replay.builder().input(name.substr(1), parse_type(n, trim(line.substr(colon + 1)))));
  }
  std::vector<Value> results;
  for (const std::string& name : outputs) results.push_back(replay.value(name, nullptr));
  return replay.builder().build(results);
}

}  // namespace metile::graph
