#include "metile/ir/builder.h"

#include <algorithm>

namespace metile::ir {

Builder::Builder(Kernel& kernel) : kernel_(kernel) {}

void Builder::fail(const std::string& op, const std::string& rule) const {
  throw UserError(op + ": " + rule, loc_);
}

const Op* Builder::definer(ValueId v) const {
  const Op* found = nullptr;
  auto search = [&](const Block& block) {
    walk(block, [&](const Op& op) {
      for (ValueId r : op.results)
        if (r == v) found = &op;
    });
  };
  search(kernel_.body);
  for (const OpenRegion& open : open_)
    for (const Block& region : open.op.regions) search(region);
  return found;
}

Block& Builder::insertion_block() {
  return open_.empty() ? kernel_.body : open_.back().op.regions.back();
}

Op& Builder::last_op() {
  Block& block = insertion_block();
  METILE_ASSERT(!block.ops.empty(), "last_op: the insertion block is empty");
  return block.ops.back();
}

ValueId Builder::add_param(const std::string& name, Type type, const std::string& access,
                           int64_t divisibility) {
  ValueId v = kernel_.new_value(std::move(type), name);
  kernel_.params.push_back({name, v, access, divisibility});
  kernel_.body.args.push_back(v);
  return v;
}

std::vector<ValueId> Builder::create(OpKind kind, std::vector<ValueId> operands,
                                     std::vector<Type> result_types, Attrs attrs,
                                     std::vector<Block> regions) {
  Op op;
  op.kind = kind;
  op.operands = std::move(operands);
  for (Type& t : result_types) op.results.push_back(kernel_.new_value(std::move(t)));
  op.attrs = std::move(attrs);
  op.regions = std::move(regions);
  op.loc = loc_;
  std::vector<ValueId> results = op.results;
  insertion_block().ops.push_back(std::move(op));
  return results;
}

ValueId Builder::create1(OpKind kind, std::vector<ValueId> operands, Type result_type,
                         Attrs attrs) {
  return create(kind, std::move(operands), {std::move(result_type)}, std::move(attrs))[0];
}

Builder::ForScope Builder::begin_for(ValueId start, ValueId end, ValueId step,
                                     const std::vector<ValueId>& inits) {
  for (ValueId bound : {start, end, step}) {
    const Type& t = type(bound);
    if (!t.is_scalar() || !is_integer(t.dtype))
      fail("for", "loop bounds must be integer scalars, got " + t.str());
  }
  if (type(start) != type(end) || type(start) != type(step))
    fail("for", "loop bounds must share one dtype, got " + type(start).str() + ", " +
                    type(end).str() + ", " + type(step).str());
  OpenRegion r;
  r.op.kind = OpKind::For;
  r.op.operands = {start, end, step};
  r.op.operands.insert(r.op.operands.end(), inits.begin(), inits.end());
  r.op.loc = loc_;
  Block body;
  ForScope scope;
  scope.induction_var = kernel_.new_value(type(start), "i");
  body.args.push_back(scope.induction_var);
  for (ValueId init : inits) {
    ValueId arg = kernel_.new_value(type(init));
    body.args.push_back(arg);
    scope.carried.push_back(arg);
  }
  r.op.regions.push_back(std::move(body));
  open_.push_back(std::move(r));
  return scope;
}

std::vector<ValueId> Builder::end_for(const std::vector<ValueId>& yields) {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::For, "no open loop");
  Op& op = open_.back().op;
  const size_t carried = op.operands.size() - 3;
  METILE_ASSERT(yields.size() == carried, "loop yields one value per carried value");
  check_carried("for", {op.operands.begin() + 3, op.operands.end()}, yields, "the loop body");
  create(OpKind::Yield, yields, {});
  Op done = std::move(open_.back().op);
  open_.pop_back();
  for (size_t i = 0; i < carried; ++i) done.results.push_back(kernel_.new_value(type(yields[i])));
  std::vector<ValueId> results = done.results;
  insertion_block().ops.push_back(std::move(done));
  return results;
}

void Builder::abandon_for() {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::For, "no open loop");
  open_.pop_back();
}

void Builder::begin_if(ValueId cond) {
  const Type& t = type(cond);
  if (!t.is_scalar() || t.dtype != DType::i1)
    fail("if", "the condition must be an i1 scalar, got " + t.str());
  OpenRegion r;
  r.op.kind = OpKind::If;
  r.op.operands = {cond};
  r.op.loc = loc_;
  r.op.regions.emplace_back();
  open_.push_back(std::move(r));
}

void Builder::begin_else(const std::vector<ValueId>& then_yields) {
  METILE_ASSERT(
      !open_.empty() && open_.back().op.kind == OpKind::If && open_.back().op.regions.size() == 1,
      "no open then-region");
  create(OpKind::Yield, then_yields, {});
  open_.back().yields = then_yields;
  open_.back().op.regions.emplace_back();
}

std::vector<ValueId> Builder::end_if(const std::vector<ValueId>& else_yields) {
  METILE_ASSERT(
      !open_.empty() && open_.back().op.kind == OpKind::If && open_.back().op.regions.size() == 2,
      "no open else-region");
  const std::vector<ValueId> then_yields = open_.back().yields;
  if (then_yields.size() != else_yields.size())
    fail("if", "then and else yield different numbers of values");
  for (size_t i = 0; i < then_yields.size(); ++i)
    if (type(then_yields[i]) != type(else_yields[i]))
      fail("if", "result " + std::to_string(i) + " is " + type(then_yields[i]).str() +
                     " in the then-branch but " + type(else_yields[i]).str() +
                     " in the else-branch");
  create(OpKind::Yield, else_yields, {});
  Op done = std::move(open_.back().op);
  open_.pop_back();
  for (ValueId y : then_yields) done.results.push_back(kernel_.new_value(type(y)));
  std::vector<ValueId> results = done.results;
  insertion_block().ops.push_back(std::move(done));
  return results;
}

void Builder::check_carried(const std::string& op, const std::vector<ValueId>& carried,
                            const std::vector<ValueId>& values, const std::string& where) const {
  for (size_t i = 0; i < carried.size(); ++i)
    if (type(values[i]) != type(carried[i]))
      fail(op, "loop-carried value " + std::to_string(i) + " changes type from " +
                   type(carried[i]).str() + " to " + type(values[i]).str() + " in " + where);
}

std::vector<ValueId> Builder::begin_while(const std::vector<ValueId>& inits) {
  OpenRegion r;
  r.op.kind = OpKind::While;
  r.op.operands = inits;
  r.op.loc = loc_;
  Block before;
  for (ValueId init : inits) before.args.push_back(kernel_.new_value(type(init)));
  r.op.regions.push_back(before);
  open_.push_back(std::move(r));
  return before.args;
}

std::vector<ValueId> Builder::begin_while_body(ValueId cond, const std::vector<ValueId>& passed) {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::While &&
                    open_.back().op.regions.size() == 1,
                "no open before-region of a while");
  const Type& c = type(cond);
  if (!c.is_scalar() || c.dtype != DType::i1)
    fail("while", "the condition must be an i1 scalar, got " + c.str());
  const std::vector<ValueId> inits = open_.back().op.operands;
  METILE_ASSERT(passed.size() == inits.size(), "a while passes on one value per carried value");
  check_carried("while", inits, passed, "the loop condition");
  std::vector<ValueId> yields = {cond};
  yields.insert(yields.end(), passed.begin(), passed.end());
  create(OpKind::Yield, yields, {});
  Block after;
  for (ValueId init : inits) after.args.push_back(kernel_.new_value(type(init)));
  open_.back().op.regions.push_back(after);
  return after.args;
}

std::vector<ValueId> Builder::end_while(const std::vector<ValueId>& yields) {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::While &&
                    open_.back().op.regions.size() == 2,
                "no open after-region of a while");
  const std::vector<ValueId> inits = open_.back().op.operands;
  METILE_ASSERT(yields.size() == inits.size(), "a while yields one value per carried value");
  check_carried("while", inits, yields, "the loop body");
  create(OpKind::Yield, yields, {});
  Op done = std::move(open_.back().op);
  open_.pop_back();
  for (ValueId init : inits) done.results.push_back(kernel_.new_value(type(init)));
  std::vector<ValueId> results = done.results;
  insertion_block().ops.push_back(std::move(done));
  return results;
}

void Builder::abandon_while() {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::While, "no open while");
  open_.pop_back();
}

std::vector<ValueId> Builder::begin_reduce_combine(const std::vector<ValueId>& tiles,
                                                   int64_t axis) {
  if (tiles.empty()) fail("reduce_combine", "needs at least one tile");
  const Type first = type(tiles[0]);
  for (ValueId t : tiles) {
    const Type& x = type(t);
    if (!x.is_tile() || x.pointer || x.dtype == DType::i1 || x.shape.size() > 2)
      fail("reduce_combine", "the inputs must be 1-D or 2-D tiles of numbers, got " + x.str());
    if (x.shape != first.shape)
      fail("reduce_combine",
           "the input tiles must have one shape, got " + first.str() + " and " + x.str());
  }
  if (axis < 0 || axis >= static_cast<int64_t>(first.shape.size()))
    fail("reduce_combine", "axis " + std::to_string(axis) + " is out of range for " + first.str());
  OpenRegion r;
  r.op.kind = OpKind::ReduceCombine;
  r.op.operands = tiles;
  r.op.attrs["axis"] = axis;
  r.op.loc = loc_;
  Block body;
  for (int side = 0; side < 2; ++side)
    for (ValueId t : tiles) body.args.push_back(kernel_.new_value(type(t).element()));
  r.op.regions.push_back(body);
  open_.push_back(std::move(r));
  return body.args;
}

std::vector<ValueId> Builder::end_reduce_combine(const std::vector<ValueId>& yields) {
  METILE_ASSERT(!open_.empty() && open_.back().op.kind == OpKind::ReduceCombine,
                "no open reduce_combine");
  const std::vector<ValueId> tiles = open_.back().op.operands;
  if (yields.size() != tiles.size())
    fail("reduce_combine", "the combine yields " + std::to_string(yields.size()) +
                               " value(s) but there are " + std::to_string(tiles.size()) +
                               " input(s)");
  for (size_t i = 0; i < tiles.size(); ++i)
    if (type(yields[i]) != type(tiles[i]).element())
      fail("reduce_combine", "combined value " + std::to_string(i) + " must be " +
                                 type(tiles[i]).element().str() + ", got " + type(yields[i]).str());
  create(OpKind::Yield, yields, {});
  Op done = std::move(open_.back().op);
  open_.pop_back();
  const Type& t = type(tiles[0]);
  const int64_t axis = std::get<int64_t>(done.attrs.at("axis"));
  for (ValueId tile : tiles) {
    const DType dtype = type(tile).dtype;
    done.results.push_back(kernel_.new_value(
        t.shape.size() == 1 ? Type::scalar(dtype) : Type::tile(dtype, {t.shape[1 - axis]})));
  }
  std::vector<ValueId> results = done.results;
  insertion_block().ops.push_back(std::move(done));
  return results;
}

}  // namespace metile::ir
