// The rules Tile IR and Metal IR share: definitions and visibility, dialect membership, the
// facts ops.def declares (counts and attribute schema), region structure, and the common
// per-op type rules.
#include "metile/ir/verifier.h"

#include "metile/ir/printer.h"

namespace metile::ir {

std::string Diagnostic::str() const {
  std::string r = loc.known() ? loc.str() + ": " : "";
  r += op + ": " + rule;
  if (!values.empty()) r += " (" + values + ")";
  return r;
}

namespace verifier_detail {

Checker::Checker(const Kernel& k) : k_(k), names_(printed_value_names(k)) {}

bool Checker::valid(ValueId v) const {
  return v >= 0 && static_cast<size_t>(v) < k_.types.size();
}

std::string Checker::describe(const std::vector<ValueId>& values) const {
  std::string r;
  for (ValueId v : values) {
    if (!r.empty()) r += ", ";
    if (!valid(v)) {
      r += "%?" + std::to_string(v);
      continue;
    }
    r += (names_[v].empty() ? "%?" + std::to_string(v) : names_[v]) + ": " + k_.types[v].str();
  }
  return r;
}

void Checker::report(const Op* op, const std::string& rule, const std::vector<ValueId>& values) {
  diagnostics_.push_back({op ? std::string(op_name(op->kind)) : "kernel", rule, describe(values),
                          op ? op->loc : SourceLocation{}});
}

namespace {

// Walks the kernel: definitions, visibility and structure, then the op rules.
class Walker {
 public:
  Walker(Checker& c, const DialectRules& rules)
      : c_(c), rules_(rules), state_(c.kernel().types.size(), State::Undefined) {}

  void run() {
    const Kernel& k = c_.kernel();
    std::vector<ValueId> param_values;
    for (const Param& p : k.params) {
      param_values.push_back(p.value);
      define(nullptr, p.value);
    }
    if (param_values != k.body.args)
      c_.report(nullptr, "the body's arguments must be the parameters' values, in order");
    block(k.body, nullptr);
  }

 private:
  enum class State : uint8_t { Undefined, Visible, OutOfScope };

  bool define(const Op* definer, ValueId v) {
    if (!c_.valid(v)) {
      c_.report(definer, "defines %?" + std::to_string(v) + ", which has no type");
      return false;
    }
    if (state_[v] != State::Undefined) {
      c_.report(definer, "defines a value that is already defined", {v});
      return false;
    }
    state_[v] = State::Visible;
    rules_.check_type(c_, definer, v);
    return true;
  }

  bool use(const Op& op, ValueId v) {
    if (!c_.valid(v)) {
      c_.report(&op, "uses %?" + std::to_string(v) + ", which is not a value");
      return false;
    }
    if (state_[v] == State::Undefined) {
      c_.report(&op, "uses a value before its definition", {v});
      return false;
    }
    if (state_[v] == State::OutOfScope) {
      c_.report(&op, "uses a value outside the region that defines it", {v});
      return false;
    }
    return true;
  }

  void block(const Block& b, const Op* parent) {
    std::vector<ValueId> local;
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = b.ops[i];
      bool ok = true;
      for (ValueId v : op.operands) ok = use(op, v) && ok;
      structure(op, parent, i + 1 == b.ops.size(), ok);
      for (const Block& region : op.regions) {
        std::vector<ValueId> args;
        for (ValueId v : region.args)
          if (define(&op, v)) args.push_back(v);
        block(region, &op);
        for (ValueId v : args) state_[v] = State::OutOfScope;
      }
      for (ValueId v : op.results)
        if (define(&op, v))
          local.push_back(v);
        else
          ok = false;
      if (ok && shape_ok(op)) {
        check_common_op_rules(c_, op);
        rules_.check_op(c_, op);
      }
    }
    if (parent) {
      bool needs_yield = !b.ops.empty() || !parent->results.empty();
      if (needs_yield && (b.ops.empty() || b.ops.back().kind != OpKind::Yield))
        c_.report(parent, "a region must end with yield");
    }
    for (ValueId v : local) state_[v] = State::OutOfScope;
  }

  // Dialect membership and yield placement.
  void structure(const Op& op, const Op* parent, bool last, bool& ok) {
    const OpInfo& info = op_info(op.kind);
    const bool tile = c_.kernel().dialect == Dialect::Tile;
    if (!(tile ? info.in_tile : info.in_metal)) {
      c_.report(&op, std::string("is not an op of ") + (tile ? "Tile IR" : "Metal IR"));
      ok = false;
    }
    if (op.kind == OpKind::Yield && (!parent || !last)) {
      c_.report(&op, "yield must be the last op of a for or if region");
      ok = false;
    }
  }

  // The op's facts (ops.def): operand, result and region counts and the attribute schema.
  // The op rules assume them.
  bool shape_ok(const Op& op) {
    const OpInfo& info = op_info(op.kind);
    bool ok = count_ok(op, info.operands, op.operands.size(), "takes", "operand(s)", op.operands);
    ok = count_ok(op, info.results, op.results.size(), "has", "result(s)", op.results) && ok;
    if (!info.regions.contains(op.regions.size())) {
      c_.report(&op, "has the wrong number of regions (" + std::to_string(op.regions.size()) + ")");
      ok = false;
    }
    return attrs_ok(op, info.attrs) && ok;
  }

  bool count_ok(const Op& op, Count expected, size_t n, const std::string& verb,
                const std::string& noun, const std::vector<ValueId>& values) {
    if (expected.contains(n)) return true;
    const std::string range =
        expected.max == kMany ? "at least " + std::to_string(expected.min)
        : expected.min == expected.max
            ? std::to_string(expected.min)
            : std::to_string(expected.min) + " to " + std::to_string(expected.max);
    c_.report(&op, verb + " " + range + " " + noun + ", got " + std::to_string(n), values);
    return false;
  }

  bool attrs_ok(const Op& op, const AttrSchema& schema) {
    bool ok = true;
    for (const auto& [name, value] : op.attrs)
      if (!schema.find(name)) {
        c_.report(&op, "takes no attribute " + name);
        ok = false;
      }
    for (const AttrSpec& spec : schema) {
      auto it = op.attrs.find(std::string(spec.name));
      if (it == op.attrs.end() && !spec.required) continue;
      const std::string rule = attr_rule(spec, it == op.attrs.end() ? nullptr : &it->second);
      if (rule.empty()) continue;
      c_.report(&op, rule);
      ok = false;
    }
    return ok;
  }

  // The broken rule of an attribute (nullptr: missing), or "".
  static std::string attr_rule(const AttrSpec& spec, const Attr* value) {
    const std::string name(spec.name);
    const int64_t* i = value ? std::get_if<int64_t>(value) : nullptr;
    switch (spec.kind) {
      case AttrKind::Int:
        return i ? "" : "needs an integer attribute " + name;
      case AttrKind::Bool:
        return i && (*i == 0 || *i == 1) ? "" : "attribute " + name + " must be 0 or 1";
      case AttrKind::Number:
        return i || (value && std::holds_alternative<double>(*value))
                   ? ""
                   : "needs a number attribute " + name;
      case AttrKind::String: {
        const std::string* s = value ? std::get_if<std::string>(value) : nullptr;
        const std::string choices(spec.choices);
        if (!s)
          return "needs a string attribute " + name + (choices.empty() ? "" : " (" + choices + ")");
        if (spec.allows(*s)) return "";
        return "attribute " + name + " = \"" + *s + "\" is not one of " + choices;
      }
      case AttrKind::Layout:
        return value && std::holds_alternative<ThreadLayout>(*value)
                   ? ""
                   : "needs a layout attribute " + name + " (#layout<...>)";
    }
    return "";
  }

  Checker& c_;
  const DialectRules& rules_;
  std::vector<State> state_;
};

}  // namespace

std::vector<Diagnostic> verify_with(const Kernel& k, const DialectRules& rules) {
  Checker c(k);
  for (const Param& p : k.params) {
    if (!c.valid(p.value)) continue;
    const Type& t = c.type(p.value);
    const std::string what = "parameter " + p.name;
    if (t.is_pointer()) {
      if (t.space != AddressSpace::Device)
        c.report(nullptr, what + " must point to device memory", {p.value});
      if (p.access != "read" && p.access != "write" && p.access != "read_write")
        c.report(nullptr,
                 what + " needs access read, write or read_write, got \"" + p.access + "\"",
                 {p.value});
    } else if (!t.is_scalar()) {
      c.report(nullptr, what + " must be a buffer or a scalar", {p.value});
    } else if (!p.access.empty()) {
      c.report(nullptr, what + " is a scalar and takes no access", {p.value});
    }
    if (p.divisibility < 1 || (p.divisibility & (p.divisibility - 1)) != 0 ||
        (t.is_scalar() && !is_integer(t.dtype) && p.divisibility != 1))
      c.report(nullptr,
               what + " has divisibility " + std::to_string(p.divisibility) +
                   "; it is a power of two, and 1 for a scalar that is no integer",
               {p.value});
  }
  rules.check_kernel(c);
  Walker(c, rules).run();
  return c.take();
}

}  // namespace verifier_detail

std::vector<Diagnostic> verify(const Kernel& k) {
  return k.dialect == Dialect::Tile ? verifier_detail::verify_tile(k)
                                    : verifier_detail::verify_metal(k);
}

void verify_or_throw(const Kernel& k, const std::string& after_pass) {
  std::vector<Diagnostic> diagnostics = verify(k);
  if (diagnostics.empty()) return;
  const std::string dialect = k.dialect == Dialect::Tile ? "Tile IR" : "Metal IR";
  std::string list;
  for (const Diagnostic& d : diagnostics) list += "\n  " + d.str();
  if (after_pass.empty())
    throw UserError("invalid " + dialect + " in kernel " + k.name + ":" + list,
                    diagnostics.front().loc);
  throw InternalError("pass " + after_pass + " produced invalid " + dialect + " in kernel " +
                      k.name + ":" + list + "\n" + print(k));
}

}  // namespace metile::ir
