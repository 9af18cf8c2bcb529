#include "metile/ir/printer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

namespace metile::ir {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string quoted(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (c == '\n') {
      r += "\\n";
    } else if (c == '\t') {
      r += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      r += buf;
    } else {
      r += c;
    }
  }
  return r + "\"";
}

// Shortest text that reads back as the same double, always recognisable as a float.
std::string float_text(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string r(buf, end);
  if (r.find_first_of(".e") == std::string::npos) r += ".0";
  return r;
}

std::string key_text(const std::string& key) {
  return is_identifier(key) ? key : quoted(key);
}

std::string attr_dict(const Attrs& attrs) {
  std::string r = "{";
  bool first = true;
  for (const auto& [key, value] : attrs) {
    r += (first ? "" : ", ") + key_text(key) + " = " + print_attr(value);
    first = false;
  }
  return r + "}";
}

// Parameters keep their names when those are unique identifiers; the rest are numbered and
// carry their name as an attribute.
std::vector<bool> params_named(const Kernel& k) {
  std::vector<bool> named;
  std::set<std::string> seen;
  for (const Param& p : k.params)
    named.push_back(is_identifier(p.name) && seen.insert(p.name).second);
  return named;
}

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k), names_(printed_value_names(k)) {}

  std::string kernel() {
    out_ = std::string(dialect_name(k_.dialect)) + ".kernel @" +
           (is_identifier(k_.name) ? k_.name : quoted(k_.name)) + "(";
    std::vector<bool> named = params_named(k_);
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      out_ += (i ? ", " : "") + name(p.value) + ": " + type(p.value);
      Attrs attrs;
      if (!p.access.empty()) attrs["access"] = p.access;
      if (!named[i] && !p.name.empty()) attrs["name"] = p.name;
      if (p.divisibility != 1) attrs["divisibility"] = p.divisibility;
      if (!attrs.empty()) out_ += " " + attr_dict(attrs);
    }
    out_ += ")";
    if (!k_.attrs.empty()) out_ += " attributes " + attr_dict(k_.attrs);
    out_ += " {\n";
    ops(k_.body, 1);
    out_ += "}\n";
    return out_;
  }

 private:
  std::string name(ValueId v) const {
    if (v >= 0 && static_cast<size_t>(v) < names_.size() && !names_[v].empty()) return names_[v];
    return "%?" + std::to_string(v);
  }
  std::string type(ValueId v) const {
    if (v < 0 || static_cast<size_t>(v) >= k_.types.size()) return "<invalid type>";
    return k_.types[v].str();
  }

  void ops(const Block& b, int depth) {
    for (const Op& o : b.ops) op(o, depth);
  }

  void op(const Op& o, int depth) {
    const std::string indent(2 * depth, ' ');
    out_ += indent;
    for (size_t i = 0; i < o.results.size(); ++i)
      out_ += (i ? ", " : "") + name(o.results[i]) + (i + 1 == o.results.size() ? " = " : "");
    out_ += op_name(o.kind);
    for (size_t i = 0; i < o.operands.size(); ++i) out_ += (i ? ", " : " ") + name(o.operands[i]);
    if (!o.attrs.empty()) out_ += " " + attr_dict(o.attrs);
    for (size_t i = 0; i < o.results.size(); ++i) out_ += (i ? ", " : " : ") + type(o.results[i]);
    for (size_t i = 0; i < o.regions.size(); ++i) {
      out_ += !i ? " {\n" : o.kind == OpKind::While ? " do {\n" : " else {\n";
      region(o.regions[i], depth);
      out_ += indent + "}";
    }
    if (o.loc.known())
      out_ += " loc(" + quoted(o.loc.file) + ":" + std::to_string(o.loc.line) + ")";
    out_ += "\n";
  }

  void region(const Block& b, int depth) {
    if (!b.args.empty()) {
      out_ += std::string(2 * depth, ' ') + "^(";
      for (size_t i = 0; i < b.args.size(); ++i)
        out_ += (i ? ", " : "") + name(b.args[i]) + ": " + type(b.args[i]);
      out_ += "):\n";
    }
    ops(b, depth + 1);
  }

  const Kernel& k_;
  std::vector<std::string> names_;
  std::string out_;
};

void number_definitions(const Block& b, std::vector<std::string>& names, int& next) {
  auto define = [&](ValueId v) {
    if (v >= 0 && static_cast<size_t>(v) < names.size() && names[v].empty())
      names[v] = "%" + std::to_string(next++);
  };
  for (const Op& op : b.ops) {
    for (ValueId r : op.results) define(r);
    for (const Block& region : op.regions) {
      for (ValueId a : region.args) define(a);
      number_definitions(region, names, next);
    }
  }
}

}  // namespace

std::string print_attr(const Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return float_text(*d);
  if (auto* s = std::get_if<std::string>(&a)) return quoted(*s);
  if (auto* t = std::get_if<DType>(&a)) return std::string(dtype_name(*t));
  if (auto* layout = std::get_if<ThreadLayout>(&a)) {
    std::string r = "#layout<(";
    for (size_t i = 0; i < layout->bit_order().size(); ++i)
      r += (i ? ", " : "") + std::to_string(layout->bit_order()[i]);
    return r + "), xor " + std::to_string(layout->xor_mask()) + ", ept " +
           std::to_string(layout->elements_per_thread()) + ">";
  }
  const auto& list = std::get<std::vector<int64_t>>(a);
  std::string r = "[";
  for (size_t i = 0; i < list.size(); ++i) r += (i ? ", " : "") + std::to_string(list[i]);
  return r + "]";
}

std::vector<std::string> printed_value_names(const Kernel& k) {
  std::vector<std::string> names(k.types.size());
  std::vector<bool> named = params_named(k);
  int next = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    ValueId v = k.params[i].value;
    if (v < 0 || static_cast<size_t>(v) >= names.size() || !names[v].empty()) continue;
    names[v] = named[i] ? "%" + k.params[i].name : "%" + std::to_string(next++);
  }
  number_definitions(k.body, names, next);
  return names;
}

std::string print(const Kernel& k) {
  return Printer(k).kernel();
}

}  // namespace metile::ir
