#include "metile/transform/merge_online_reductions.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "metile/support/errors.h"

namespace metile::transform {

namespace {

using discovery::Expr;
using discovery::ExprKind;
using ir::Block;
using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

constexpr size_t kNone = static_cast<size_t>(-1);

// Writes memory, or holds an op that does in a region.
bool writes_memory(const Op& op) {
  if (ir::op_info(op.kind).has(ir::Trait::WritesMemory)) return true;
  for (const Block& r : op.regions)
    for (const Op& inner : r.ops)
      if (writes_memory(inner)) return true;
  return false;
}

std::string where(const SourceLocation& loc) {
  if (!loc.known()) return "an unknown line";
  return std::filesystem::path(loc.file).filename().string() + ":" + std::to_string(loc.line);
}

// Why `law` does not describe the two loops, or nullopt when it does: its reference is what
// they compute (the maximum, then the sum of exp(x - maximum)), its state finalises to both,
// and its maximum merges by max, which the first loop already computes.
std::optional<std::string> law_mismatch(const discovery::ReductionLaw& law) {
  using discovery::list_max;
  using discovery::list_sum;
  const Expr x = Expr::var("x"), row_max = list_max(x);
  auto text = [](const std::vector<Expr>& es) {
    std::string t;
    for (const Expr& e : es) t += (t.empty() ? "" : ", ") + e.str();
    return "(" + t + ")";
  };
  const std::string reference = text({row_max, list_sum(discovery::exp(x - row_max))});
  const std::string state = text({Expr::var("m"), Expr::var("d")});
  const std::string merged_max = discovery::max(Expr::var("a.m"), Expr::var("b.m")).str();
  if (law.element.size() != 1 || law.element[0].name != "x" || text(law.reference) != reference)
    return "law '" + law.name + "' computes " + text(law.reference) + ", not the loops' " +
           reference;
  if (law.state != std::vector<std::string>{"m", "d"} || text(law.finalise) != state ||
      law.merge.size() != 2 || law.merge[0].str() != merged_max || law.lift.size() != 2 ||
      law.lift[0].str() != "x" || law.identity.size() != 2 ||
      law.identity[1].kind() != ExprKind::Const || law.identity[1].value() != 0.0)
    return "law '" + law.name +
           "' is not a state (m, d) finalised as itself, with m = " + merged_max +
           ", x lifted to m and d starting at 0 as the loops' sum does";
  return std::nullopt;
}

std::vector<std::string> obligations(const discovery::Certificate& c) {
  std::vector<std::string> out;
  for (const discovery::DischargedObligation& d : c.obligations) {
    std::string how = d.method == discovery::ProofMethod::Symbolic
                          ? "proved symbolically"
                          : "checked on " + std::to_string(d.cases) + " cases";
    out.push_back(std::string(discovery::obligation_name(d.obligation)) + " (" +
                  std::string(discovery::obligation_statement(d.obligation)) + "): " + how);
  }
  return out;
}

// A matched pair of loops, by position in their block and the values the rewrite reads.
struct Plan {
  size_t first = 0, second = 0;
  bool per_element = false;           // tiles of running values, reduced after the loops
  std::optional<int64_t> axis;        // reduced per iteration along this axis (reduce_axis)
  ValueId element = ir::kNoValue;     // what the first loop's maximum runs over: x or
                                      // where(mask, x, c)
  ValueId value = ir::kNoValue;       // x
  ValueId mask = ir::kNoValue;        // the mask of where(mask, x, c), if any
  ValueId tile_max = ir::kNoValue;    // reduced forms: the first loop's max(x)
  ValueId next_max = ir::kNoValue;    // the first loop's m' = max(m, ...)
  ValueId max = ir::kNoValue;         // the first loop's carried m
  ValueId max_result = ir::kNoValue;  // the first loop's final m
  ValueId maximum = ir::kNoValue;     // the maximum the sum subtracts (a scalar)
  ValueId sum_result = ir::kNoValue;  // the second loop's final s
  ir::Attrs exp_attrs;                // the user's exp (its fast flag)
  SourceLocation loc;                 // the user's exp
};

// What matching a pair of loops found: a plan, or why they stay.
struct Match {
  std::optional<Plan> plan;
  std::string rejection;
};

class Merger {
 public:
  Merger(ir::Kernel& k, const discovery::ReductionLaw& law) : k_(k), law_(&law) {}

  void block(Block& b) {
    for (size_t i = 0; i < b.ops.size(); ++i) {
      if (b.ops[i].kind != OpKind::For) continue;
      const size_t j = next_loop(b, i + 1);
      if (j == kNone) break;
      index();
      std::optional<Match> match = consider(b, i, j);
      if (!match) continue;
      OnlineReductionRecord record;
      record.loops = where(b.ops[i].loc) + " and " + where(b.ops[j].loc);
      record.law = law_->name;
      if (match->plan) match->rejection = license();
      if (match->rejection.empty()) {
        record.merged = true;
        record.obligations = obligations(*verification_->certificate);
        record.cases_checked = verification_->certificate->cases();
        record.detail = merged_detail(*match->plan);
        rewrite(b, *match->plan);
      } else {
        record.detail = match->rejection;
      }
      records_.push_back(std::move(record));
    }
    for (Op& op : b.ops)
      for (Block& r : op.regions) block(r);
  }

  std::vector<OnlineReductionRecord> records() && { return std::move(records_); }
  bool changed() const { return changed_; }

 private:
  static size_t next_loop(const Block& b, size_t from) {
    for (size_t j = from; j < b.ops.size(); ++j)
      if (b.ops[j].kind == OpKind::For) return j;
    return kNone;
  }

  // Where every value is defined; rebuilt before each match, since rewrites move ops.
  void index() {
    defs_.clear();
    ir::walk(k_.body, [&](const Op& op) {
      for (ValueId r : op.results) defs_[r] = &op;
    });
  }
  const Op* def(ValueId v) const {
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  const Op* def_of(ValueId v, OpKind kind) const {
    const Op* op = def(v);
    return op && op->kind == kind ? op : nullptr;
  }
  static bool defined_in(const Block& body, ValueId v) {
    for (const Op& op : body.ops)
      for (ValueId r : op.results)
        if (r == v) return true;
    return false;
  }
  // The other operand of a two-operand op one of whose operands is `v`.
  static std::optional<ValueId> other_operand(const Op& op, ValueId v) {
    if (op.operands.size() != 2) return std::nullopt;
    if (op.operands[0] == v) return op.operands[1];
    if (op.operands[1] == v) return op.operands[0];
    return std::nullopt;
  }
  // The number a scalar constant, or a splat of one, holds.
  std::optional<double> constant(ValueId v) const {
    if (const Op* s = def_of(v, OpKind::Splat)) v = s->operands[0];
    const Op* c = def_of(v, OpKind::Constant);
    if (!c) return std::nullopt;
    return c->float_attr("value");
  }

  // The reduce or reduce_axis of `kind` defining v, or nullptr.
  const Op* reduction(ValueId v, const std::string& kind) const {
    const Op* op = def(v);
    if (!op || (op->kind != OpKind::Reduce && op->kind != OpKind::ReduceAxis)) return nullptr;
    return op->str_attr("kind") == kind ? op : nullptr;
  }
  static std::optional<int64_t> axis_of(const Op& reduction) {
    if (reduction.kind == OpKind::Reduce) return std::nullopt;
    return reduction.int_attr("axis");
  }
  // The value v repeats: s of splat(s), or t of broadcast(expand_dims(t, axis)).
  std::optional<ValueId> spread_of(ValueId v, std::optional<int64_t> axis) const {
    if (!axis) {
      const Op* splat = def_of(v, OpKind::Splat);
      return splat ? std::optional(splat->operands[0]) : std::nullopt;
    }
    const Op* broadcast = def_of(v, OpKind::Broadcast);
    const Op* expand = broadcast ? def_of(broadcast->operands[0], OpKind::ExpandDims) : nullptr;
    if (!expand || expand->int_attr("axis") != *axis) return std::nullopt;
    return expand->operands[0];
  }

  // The carried slot whose yield is `kind`(carried, something), with that something.
  struct Accumulator {
    size_t slot;
    OpKind kind;
    ValueId other;
  };
  std::optional<Accumulator> accumulator(const Op& loop,
                                         std::initializer_list<OpKind> kinds) const {
    const Block& body = loop.regions[0];
    const Op& yield = body.ops.back();
    for (size_t slot = 0; slot < yield.operands.size(); ++slot) {
      const Op* update = def(yield.operands[slot]);
      if (!update || !defined_in(body, yield.operands[slot])) continue;
      for (OpKind kind : kinds)
        if (update->kind == kind)
          if (auto other = other_operand(*update, body.args[1 + slot]))
            return Accumulator{slot, kind, *other};
    }
    return std::nullopt;
  }

  // Whether a (in the second loop's body) computes what b (in the first's) does: the same
  // outer value, the induction variables, or the same pure op or load of such values.
  bool same(ValueId a, ValueId b) {
    if (a == b) return true;
    if (a == iv_second_ && b == iv_first_) return true;
    auto key = std::make_pair(a, b);
    if (auto it = same_.find(key); it != same_.end()) return it->second;
    const Op* x = def(a);
    const Op* y = def(b);
    bool equal = x && y && x->kind == y->kind && x->attrs == y->attrs && x->regions.empty() &&
                 y->regions.empty() && x->results.size() == 1 && y->results.size() == 1 &&
                 k_.type(a) == k_.type(b) && x->operands.size() == y->operands.size() &&
                 (ir::op_info(x->kind).has(ir::Trait::Pure) || x->kind == OpKind::Load);
    for (size_t i = 0; equal && i < x->operands.size(); ++i)
      equal = same(x->operands[i], y->operands[i]);
    same_[key] = equal;
    return equal;
  }

  // nullopt: not a max-then-sum pair; a Match with a plan or the reason it does not merge.
  std::optional<Match> consider(const Block& b, size_t i, size_t j) {
    const Op& first = b.ops[i];
    const Op& second = b.ops[j];
    auto running = accumulator(first, {OpKind::Max, OpKind::Min});
    if (!running || second.results.empty()) return std::nullopt;
    auto reject = [](std::string why) { return Match{std::nullopt, std::move(why)}; };
    auto sum = accumulator(second, {OpKind::Add});
    if (!sum) return reject("the second loop's carried value is not a sum s + t");
    if (running->kind == OpKind::Min)
      return reject(
          "the first loop keeps a running minimum; the online softmax law pairs a running "
          "maximum with a sum of exp(x - max)");
    if (first.results.size() != 1 || second.results.size() != 1)
      return reject("the loops carry other values besides the running maximum and the sum");
    for (size_t o = 0; o < 3; ++o)
      if (first.operands[o] != second.operands[o])
        return reject("the loops' ranges differ (start, end and step must be the same values)");

    Plan p;
    p.first = i;
    p.second = j;
    const Block& body1 = first.regions[0];
    const Block& body2 = second.regions[0];
    iv_first_ = body1.args[0];
    iv_second_ = body2.args[0];
    same_.clear();
    p.max = body1.args[1];
    p.next_max = body1.ops.back().operands[0];
    p.max_result = first.results[0];
    // The elements the maximum runs over: x, or where(mask, x, c) for a constant c; reduced
    // per iteration (max(x), max(x, axis)) or kept per element.
    p.element = running->other;
    const Op* max_reduction = reduction(p.element, "max");
    p.per_element = max_reduction == nullptr;
    if (max_reduction) {
      p.axis = axis_of(*max_reduction);
      p.tile_max = p.element;
      p.element = max_reduction->operands[0];
    }
    p.value = p.element;
    if (const Op* masked = def_of(p.element, OpKind::Select)) {
      auto c = constant(masked->operands[2]);
      if (c && !std::isnan(*c)) {
        p.mask = masked->operands[0];
        p.value = masked->operands[1];
      }
    }
    if (!defined_in(body1, p.value))
      return reject("the first loop's running maximum is not of values it computes");

    // The sum's term: exp(x - m), summed per element or reduced as the maximum is.
    ValueId term = sum->other;
    const Op* sum_reduction = reduction(term, "sum");
    if ((sum_reduction == nullptr) != p.per_element ||
        (sum_reduction && axis_of(*sum_reduction) != p.axis))
      return reject(
          "the maximum and the sum accumulate differently (per element, over the whole tile "
          "or along an axis)");
    if (sum_reduction) term = sum_reduction->operands[0];
    // where(mask, exp(x - m), 0) sums only the elements the maximum's mask keeps.
    ValueId mask = ir::kNoValue;
    if (const Op* masked = def_of(term, OpKind::Select)) {
      auto zero = constant(masked->operands[2]);
      if (zero && *zero == 0.0) {
        mask = masked->operands[0];
        term = masked->operands[1];
      }
    }
    const Op* exp = def_of(term, OpKind::Exp);
    const Op* sub = exp ? def_of(exp->operands[0], OpKind::Sub) : nullptr;
    auto maximum = sub ? spread_of(sub->operands[1], p.axis) : std::nullopt;
    if (!maximum) return reject("the second loop sums something other than exp(x - m)");
    p.exp_attrs = exp->attrs;
    p.loc = exp->loc;
    p.maximum = *maximum;
    if (!is_first_loops_maximum(p))
      return reject("the second loop's exp(x - m) does not subtract the first loop's maximum");
    if (!same(sub->operands[0], p.value))
      return reject("the loops load different data (the pointers, masks or other values differ)");
    if ((mask == ir::kNoValue) != (p.mask == ir::kNoValue) ||
        (mask != ir::kNoValue && !same(mask, p.mask)))
      return reject(
          "the loops mask the data differently (where(mask, x, c) in the maximum needs "
          "where(mask, exp(x - m), 0) with the same mask in the sum)");

    if (writes_memory(first) || writes_memory(second))
      return reject("a loop writes memory, which the merged loop would reorder");
    for (size_t between = i + 1; between < j; ++between)
      if (writes_memory(b.ops[between]))
        return reject("the write at " + where(b.ops[between].loc) +
                      " between the loops may change the data the second loop reads");
    auto s0 = constant(second.operands[3]);
    if (!s0 || *s0 != 0.0 || std::signbit(*s0))
      return reject("the sum does not start at 0, the identity of a sum");
    auto m0 = constant(first.operands[3]);
    if (!m0 || std::isnan(*m0))
      return reject("the running maximum does not start at a constant (not NaN)");
    p.sum_result = second.results[0];
    return Match{p, ""};
  }

  // Reduced forms: the sum subtracts the first loop's result; per-element ones: the max
  // reduction of it.
  bool is_first_loops_maximum(const Plan& p) const {
    if (!p.per_element) return p.maximum == p.max_result;
    const Op* r = def_of(p.maximum, OpKind::Reduce);
    return r && r->str_attr("kind") == "max" && r->operands[0] == p.max_result;
  }

  // "" when the law describes the loops and verifies, else why not (verify remembers its
  // verdict per law for the process).
  std::string license() {
    if (auto mismatch = law_mismatch(*law_)) return *mismatch;
    if (!verification_) verification_ = discovery::verify(*law_);
    if (!verification_->verified())
      return "the law did not verify: " + verification_->refutation->str();
    return "";
  }

  std::string merged_detail(const Plan& p) const {
    if (p.per_element)
      return "one loop carries per-element (m, d) = merge((m, d), lift(x)); after it each "
             "element's d is merged to the row maximum and the tile is summed: the data is read "
             "once instead of twice";
    const std::string along =
        p.axis ? " per slice along axis " + std::to_string(*p.axis) + " of the tile" : "";
    return "one loop carries (m, d) = merge((m, d), state of the tile)" + along +
           "; the data is read once instead of twice";
  }

  ValueId emit(std::vector<Op>& out, OpKind kind, std::vector<ValueId> operands, Type type,
               ir::Attrs attrs = {}, ValueId result = ir::kNoValue) {
    if (result == ir::kNoValue) result = k_.new_value(std::move(type));
    out.push_back(Op{kind, std::move(operands), {result}, std::move(attrs), {}, loc_});
    return result;
  }
  ValueId constant_like(std::vector<Op>& out, double value, const Type& type) {
    const ValueId c = emit(out, OpKind::Constant, {}, Type::scalar(type.dtype), {{"value", value}});
    return like(out, c, type);
  }
  ValueId like(std::vector<Op>& out, ValueId scalar, const Type& type) {
    return type.is_tile() ? emit(out, OpKind::Splat, {scalar}, type) : scalar;
  }
  // v, a scalar or a tile reduced along `axis`, repeated to `type`.
  ValueId spread(std::vector<Op>& out, ValueId v, const Type& type, std::optional<int64_t> axis) {
    if (!axis) return like(out, v, type);
    std::vector<int64_t> shape = k_.type(v).shape;
    shape.insert(shape.begin() + *axis, 1);
    const ValueId expanded =
        emit(out, OpKind::ExpandDims, {v}, Type::tile(type.dtype, shape), {{"axis", *axis}});
    return emit(out, OpKind::Broadcast, {expanded}, type);
  }

  // The law's expression as ops of one type (a tile or a scalar) over the bound variables;
  // `known` holds values already computing a subexpression (by its text).
  class LawEmitter {
   public:
    LawEmitter(Merger& m, std::vector<Op>& out, Type type, ir::Attrs exp_attrs,
               std::map<std::string, ValueId> vars)
        : m_(m),
          out_(out),
          type_(std::move(type)),
          exp_attrs_(std::move(exp_attrs)),
          vars_(std::move(vars)) {}

    void known(const Expr& e, ValueId v) { memo_[e.str()] = v; }

    ValueId value(const Expr& e) {
      const std::string key = e.str();
      if (auto it = memo_.find(key); it != memo_.end()) return it->second;
      const ValueId v = compute(e);
      memo_[key] = v;
      return v;
    }

   private:
    ValueId compute(const Expr& e) {
      const auto& x = e.operands();
      auto binary = [&](OpKind kind) {
        const ValueId a = value(x[0]), b = value(x[1]);
        return m_.emit(out_, kind, {a, b}, type_);
      };
      switch (e.kind()) {
        case ExprKind::Var:
          if (auto it = vars_.find(e.name()); it != vars_.end()) return it->second;
          throw InternalError("merge_online_reductions: the law reads '" + e.name() +
                              "', which the merged loop does not bind");
        case ExprKind::Const:
          return m_.constant_like(out_, e.value(), type_);
        case ExprKind::Add:
          return binary(OpKind::Add);
        case ExprKind::Sub:
          return binary(OpKind::Sub);
        case ExprKind::Mul:
          return binary(OpKind::Mul);
        case ExprKind::Div:
          return binary(OpKind::Div);
        case ExprKind::Max:
          return binary(OpKind::Max);
        case ExprKind::Min:
          return binary(OpKind::Min);
        case ExprKind::Exp:
          return m_.emit(out_, OpKind::Exp, {value(x[0])}, type_, exp_attrs_);
        case ExprKind::Log:
          return m_.emit(out_, OpKind::Log, {value(x[0])}, type_);
        case ExprKind::Less:
        case ExprKind::Equal:
          return m_.emit(out_, OpKind::Cast, {condition(e)}, type_);
        case ExprKind::Select: {
          const ValueId c = condition(x[0]), a = value(x[1]), b = value(x[2]);
          return m_.emit(out_, OpKind::Select, {c, a, b}, type_);
        }
        case ExprKind::ListSum:
        case ExprKind::ListMax:
        case ExprKind::ListMin:
          throw InternalError(
              "merge_online_reductions: a list reduction in a law's merge or "
              "lift (check_well_formed rejects it)");
      }
      throw InternalError("merge_online_reductions: unknown law expression " + e.str());
    }

    // A select's condition as i1: a comparison, or any value compared with 0.
    ValueId condition(const Expr& e) {
      const Type i1 = type_.with_dtype(DType::i1);
      const bool compare = e.kind() == ExprKind::Less || e.kind() == ExprKind::Equal;
      const ValueId a = value(compare ? e.operands()[0] : e);
      const ValueId b = compare ? value(e.operands()[1]) : m_.constant_like(out_, 0.0, type_);
      const std::string pred = !compare ? "ne" : e.kind() == ExprKind::Less ? "lt" : "eq";
      return m_.emit(out_, OpKind::Cmp, {a, b}, i1, {{"pred", pred}});
    }

    Merger& m_;
    std::vector<Op>& out_;
    Type type_;
    ir::Attrs exp_attrs_;
    std::map<std::string, ValueId> vars_;
    std::map<std::string, ValueId> memo_;
  };

  // The d component of merge((m, d), (other_m, other_d)), as ops of m's type, where
  // `merged_max` already holds max(m, other_m) (the law's m component, law_mismatch).
  ValueId merged_sum(std::vector<Op>& out, const Plan& p, ValueId m, ValueId d, ValueId other_m,
                     ValueId other_d, ValueId merged_max) {
    LawEmitter law(*this, out, k_.type(m), p.exp_attrs,
                   {{"a.m", m}, {"a.d", d}, {"b.m", other_m}, {"b.d", other_d}});
    law.known(law_->merge[0], merged_max);
    return law.value(law_->merge[1]);
  }

  // The d component of the lifts of the tile's elements; where a mask leaves an element out,
  // the identity's d (the state (c, 0) of where(mask, x, c) then adds nothing).
  ValueId lifted_sum(std::vector<Op>& out, const Plan& p) {
    const Type type = k_.type(p.value);
    LawEmitter lift(*this, out, type, p.exp_attrs, {{"x", p.value}});
    const ValueId d = lift.value(law_->lift[1]);
    if (p.mask == ir::kNoValue) return d;
    const ValueId identity = constant_like(out, law_->identity[1].value(), type);
    return emit(out, OpKind::Select, {p.mask, d, identity}, type);
  }

  // Where the original sum is NaN (an element equal to an infinite maximum: exp(inf - inf)),
  // the law's rescale gives a count instead; this brings the NaN back so that the merged
  // kernel computes what the original did outside the law's domain too.
  ValueId as_original(std::vector<Op>& out, ValueId sum, ValueId maximum, ValueId result) {
    const Type type = k_.type(sum);
    const Type i1 = type.with_dtype(DType::i1);
    const ValueId inf = constant_like(out, std::numeric_limits<double>::infinity(), type);
    const ValueId zero = constant_like(out, 0.0, type);
    const ValueId magnitude = emit(out, OpKind::Abs, {maximum}, type);
    const ValueId infinite = emit(out, OpKind::Cmp, {magnitude, inf}, i1, {{"pred", "eq"}});
    const ValueId counted = emit(out, OpKind::Cmp, {sum, zero}, i1, {{"pred", "ne"}});
    const ValueId both = emit(out, OpKind::And, {infinite, counted}, i1);
    // m - m is NaN exactly when m is infinite, the only case in which it is chosen.
    const ValueId nan = emit(out, OpKind::Sub, {maximum, maximum}, type);
    return emit(out, OpKind::Select, {both, nan, sum}, type, {}, result);
  }

  void rewrite(Block& b, const Plan& p) {
    changed_ = true;
    Op first = std::move(b.ops[p.first]);
    loc_ = p.loc;
    const Type state = k_.type(p.max);
    const Type data = k_.type(p.element);

    std::vector<Op> before;
    const ValueId sum_identity = constant_like(before, law_->identity[1].value(), state);

    // The body: the first loop's, then the sum merged with the lifts of this tile's elements.
    Block& body = first.regions[0];
    Op yield = std::move(body.ops.back());
    body.ops.pop_back();
    const ValueId sum = k_.new_value(state);
    body.args.push_back(sum);
    std::vector<Op>& ops = body.ops;
    ValueId next_sum;
    if (p.per_element) {
      next_sum = merged_sum(ops, p, p.max, sum, p.element, lifted_sum(ops, p), p.next_max);
    } else {
      // The tile's own state: its maximum (the first loop's), and its lanes' lifts merged at
      // that maximum, where states of one maximum merge by adding their sums.
      const ValueId tile_max = spread(ops, p.tile_max, data, p.axis);
      const ValueId zeros = constant_like(ops, law_->identity[1].value(), data);
      const ValueId lanes =
          merged_sum(ops, p, p.element, lifted_sum(ops, p), tile_max, zeros, tile_max);
      ir::Attrs sum_attrs = {{"kind", std::string("sum")}};
      if (p.axis) sum_attrs["axis"] = *p.axis;
      const ValueId tile_sum =
          emit(ops, p.axis ? OpKind::ReduceAxis : OpKind::Reduce, {lanes}, state, sum_attrs);
      next_sum = merged_sum(ops, p, p.max, sum, p.tile_max, tile_sum, p.next_max);
    }
    yield.operands.push_back(next_sum);
    ops.push_back(std::move(yield));
    first.operands.push_back(sum_identity);
    const ValueId loop_sum = k_.new_value(state);
    first.results.push_back(loop_sum);

    // Where the second loop was: its result. Per element, each lane's sum is brought to the
    // row's maximum (reducing the tile then adds them).
    std::vector<Op> after;
    ValueId final_sum = loop_sum;
    const ValueId maximum = p.per_element ? like(after, p.maximum, state) : p.maximum;
    if (p.per_element) {
      const ValueId zeros = constant_like(after, law_->identity[1].value(), state);
      final_sum = merged_sum(after, p, p.max_result, loop_sum, maximum, zeros, maximum);
    }
    as_original(after, final_sum, maximum, p.sum_result);

    std::vector<Op> out;
    for (size_t n = 0; n < b.ops.size(); ++n) {
      if (n == p.first) {
        for (Op& op : before) out.push_back(std::move(op));
        out.push_back(std::move(first));
      } else if (n == p.second) {
        for (Op& op : after) out.push_back(std::move(op));
      } else {
        out.push_back(std::move(b.ops[n]));
      }
    }
    b.ops = std::move(out);
  }

  ir::Kernel& k_;
  const discovery::ReductionLaw* law_;
  std::optional<discovery::Verification> verification_;
  std::map<ValueId, const Op*> defs_;
  std::map<std::pair<ValueId, ValueId>, bool> same_;
  ValueId iv_first_ = ir::kNoValue, iv_second_ = ir::kNoValue;
  SourceLocation loc_;
  std::vector<OnlineReductionRecord> records_;
  bool changed_ = false;
};

}  // namespace

OnlineReductionMerge merge_online_reductions(ir::Kernel kernel,
                                             const discovery::ReductionLaw& law) {
  if (kernel.dialect != ir::Dialect::Tile)
    throw UserError("merge_online_reductions: kernel '" + kernel.name + "' is not Tile IR");
  Merger merger(kernel, law);
  merger.block(kernel.body);
  const bool changed = merger.changed();
  std::vector<OnlineReductionRecord> records = std::move(merger).records();
  return {{std::move(kernel), changed}, std::move(records)};
}

}  // namespace metile::transform
