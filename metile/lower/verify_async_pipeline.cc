#include "metile/lower/verify_async_pipeline.h"

#include <map>
#include <set>
#include <string>

#include "metile/support/errors.h"

namespace metile::lower {

namespace {

using K = ir::OpKind;

class Verifier {
 public:
  explicit Verifier(const ir::Kernel& k) : k_(k) {
    ir::walk(k.body, [&](const ir::Op& op) {
      for (ir::ValueId r : op.results) def_[r] = &op;
    });
  }

  void run() { block(k_.body); }

 private:
  struct Barrier {
    bool empty = false;
    ir::ValueId stage = ir::kNoValue;
    int64_t stages = 0;
  };

  [[noreturn]] void fail(const ir::Op& op, const std::string& rule) const {
    throw InternalError("verify_async_pipeline: kernel '" + k_.name +
                        "': " + std::string(ir::op_name(op.kind)) + ": " + rule);
  }

  const ir::Op* def(ir::ValueId v, K kind) const {
    const auto it = def_.find(v);
    return it != def_.end() && it->second->kind == kind ? it->second : nullptr;
  }

  std::optional<int64_t> constant(ir::ValueId v) const {
    const ir::Op* c = def(v, K::Constant);
    if (!c) return std::nullopt;
    return static_cast<int64_t>(c->float_attr("value"));
  }

  std::string name(ir::ValueId v) const { return "%" + std::to_string(v); }

  // bars + X (full) or bars + (X + S) (empty), bars an i64 buffer of 2S mbarriers.
  Barrier barrier(const ir::Op& op, ir::ValueId ptr) const {
    const ir::Op* add = def(ptr, K::PtrAdd);
    const ir::Op* bars = add ? def(add->operands[0], K::ThreadgroupBuffer) : nullptr;
    if (!bars || k_.type(bars->results[0]).dtype != ir::DType::i64)
      fail(op, "its mbarrier " + name(ptr) + " is not an element of an mbarrier buffer");
    Barrier b;
    b.stages = bars->int_attr("size") / 2;
    b.stage = add->operands[1];
    if (const ir::Op* shifted = def(b.stage, K::Add);
        shifted && constant(shifted->operands[1]) == b.stages) {
      b.empty = true;
      b.stage = shifted->operands[0];
    }
    return b;
  }

  // The stage X of a pointer into a ring: ring + X * stage_elements (+ more offsets). A
  // software pipeline's or prefetch ring's slots (threadgroup_buffer {scratch = "pipeline" or
  // "prefetch"}) are no mbarrier ring: barriers publish them.
  std::optional<ir::ValueId> ring_stage(ir::ValueId ptr) const {
    const ir::Op* add = def(ptr, K::PtrAdd);
    while (add) {
      if (const ir::Op* buffer = def(add->operands[0], K::ThreadgroupBuffer)) {
        if (buffer->has_attr("scratch") && (buffer->str_attr("scratch") == "pipeline" ||
                                            buffer->str_attr("scratch") == "prefetch"))
          return std::nullopt;
        const ir::Op* mul = def(add->operands[1], K::Mul);
        if (!mul) return std::nullopt;
        return mul->operands[0];
      }
      add = def(add->operands[0], K::PtrAdd);
    }
    return std::nullopt;
  }

  // and(div(i, S), 1) for the stage rem(i, S); complement: xor(that, 1).
  bool parity_of(ir::ValueId parity, ir::ValueId stage, int64_t stages, bool complement) const {
    if (complement) {
      const ir::Op* x = def(parity, K::Xor);
      if (!x || constant(x->operands[1]) != 1) return false;
      parity = x->operands[0];
    }
    const ir::Op* a = def(parity, K::And);
    const ir::Op* d = a && constant(a->operands[1]) == 1 ? def(a->operands[0], K::Div) : nullptr;
    const ir::Op* r = def(stage, K::Rem);
    return d && r && d->operands[0] == r->operands[0] && constant(d->operands[1]) == stages &&
           constant(r->operands[1]) == stages;
  }

  // Whether the block (or a branch in it) arrives on an empty barrier.
  bool releases(const ir::Block& b) const {
    bool found = false;
    for (const ir::Op& op : b.ops) {
      if (op.kind == K::MbarrierArrive && barrier(op, op.operands[0]).empty) found = true;
      if (op.kind == K::If)
        for (const ir::Block& r : op.regions) found = found || releases(r);
    }
    return found;
  }

  void block(const ir::Block& b) {
    std::set<ir::ValueId> published, owned, expected;
    const ir::Op* consumer_wait = nullptr;
    for (const ir::Op& op : b.ops) {
      for (const ir::Block& r : op.regions) block(r);
      if (op.kind == K::MbarrierWait) {
        const Barrier bar = barrier(op, op.operands[0]);
        if (!parity_of(op.operands[1], bar.stage, bar.stages, bar.empty))
          fail(op, std::string("waits on the ") + (bar.empty ? "empty" : "full") +
                       " barrier of stage " + name(bar.stage) + " with parity " +
                       name(op.operands[1]) + ", not " +
                       (bar.empty ? "((i / S) & 1) ^ 1" : "(i / S) & 1") +
                       " for the stage rem(i, S)");
        (bar.empty ? owned : published).insert(bar.stage);
        if (!bar.empty) consumer_wait = &op;
      } else if (op.kind == K::MbarrierArriveExpectTx) {
        const Barrier bar = barrier(op, op.operands[0]);
        if (bar.empty) fail(op, "expects bytes on an empty barrier; copies complete on full ones");
        if (!owned.count(bar.stage))
          fail(op, "announces stage " + name(bar.stage) +
                       "'s copies before waiting on its empty barrier (the slot is not owned)");
        expected.insert(bar.stage);
      } else if (op.kind == K::TmaLoad) {
        const std::optional<ir::ValueId> stage = ring_stage(op.operands[0]);
        const Barrier bar = barrier(op, op.operands[1]);
        if (!stage) fail(op, "its destination is not a stage of a ring");
        if (!owned.count(*stage))
          fail(op, "writes ring stage " + name(*stage) +
                       " before waiting on its empty barrier (the consumers may still read it)");
        if (bar.empty || bar.stage != *stage)
          fail(op, "completes on a barrier other than stage " + name(*stage) + "'s full barrier");
        if (!expected.count(*stage))
          fail(op, "copies into stage " + name(*stage) +
                       " before mbarrier_arrive_expect_tx announces the bytes on its full barrier");
      } else if (op.kind == K::WgmmaMma) {
        for (size_t i = 0; i < 2; ++i) {
          const std::optional<ir::ValueId> stage = ring_stage(op.operands[i]);
          if (stage && !published.count(*stage))
            fail(op, "reads ring stage " + name(*stage) +
                         " before waiting on its full barrier (its copies may not have landed)");
        }
      }
    }
    if (consumer_wait && !releases(b))
      fail(*consumer_wait,
           "the block consumes ring stages but never arrives on an empty barrier, so no stage "
           "is released for reuse");
  }

  const ir::Kernel& k_;
  std::map<ir::ValueId, const ir::Op*> def_;
};

}  // namespace

void verify_async_pipeline(const ir::Kernel& metal) {
  if (metal.dialect != ir::Dialect::Metal)
    throw UserError("verify_async_pipeline: kernel '" + metal.name + "' is not Metal IR");
  Verifier(metal).run();
}

}  // namespace metile::lower
