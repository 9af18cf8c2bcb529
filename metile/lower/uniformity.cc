#include "metile/lower/uniformity.h"

namespace metile::lower {

namespace {

class Analysis {
 public:
  explicit Analysis(const ir::Kernel& k) : k_(k), uniform_(k.types.size(), true) {}

  std::vector<bool> run() {
    // Optimistic start, then only true -> false changes: reaches the fixed point.
    do {
      changed_ = false;
      block(k_.body);
    } while (changed_);
    for (size_t v = 0; v < uniform_.size(); ++v)
      if (k_.types[v].is_tile()) uniform_[v] = false;
    return uniform_;
  }

 private:
  void set(ir::ValueId v, bool u) {
    if (uniform_[v] && !u) {
      uniform_[v] = false;
      changed_ = true;
    }
  }

  bool all(const std::vector<ir::ValueId>& values) const {
    for (ir::ValueId v : values)
      if (!uniform_[v]) return false;
    return true;
  }

  void block(const ir::Block& b) {
    for (const ir::Op& op : b.ops) this->op(op);
  }

  void op(const ir::Op& op) {
    const ir::OpInfo& info = ir::op_info(op.kind);
    if (info.regions.max > 0) return control_flow(op);
    if (info.has(ir::Trait::UniformResult)) return;
    // A scalar atomic that every thread reaches with the same operands is the program's: one
    // thread updates, every thread gets its old value (lower_memory.cc).
    if ((op.kind == ir::OpKind::AtomicRmw || op.kind == ir::OpKind::AtomicCas) &&
        !k_.types[op.results[0]].is_tile())
      return set(op.results[0], divergent_ == 0 && all(op.operands));
    const bool uniform = !info.has(ir::Trait::Varying) && all(op.operands);
    for (ir::ValueId r : op.results) set(r, uniform);
  }

  // The ops with regions: for, if, while and the descriptor GEMMs (ops.def;
  // tests/ir/op_facts_test.cc keeps it so).
  void control_flow(const ir::Op& op) {
    if (op.kind == ir::OpKind::For) return loop(op);
    if (op.kind == ir::OpKind::While) return while_loop(op);
    if (op.kind == ir::OpKind::ReduceCombine) {
      // The combine's arguments are elements of tiles; a whole-tile result is uniform.
      for (ir::ValueId a : op.regions[0].args) set(a, false);
      return block(op.regions[0]);
    }
    if (op.kind == ir::OpKind::DescriptorMatmul || op.kind == ir::OpKind::MppMatmul2d) {
      // The epilogue's accumulator element differs between threads.
      set(op.regions[0].args[0], false);
      return block(op.regions[0]);
    }
    METILE_ASSERT(op.kind == ir::OpKind::If, std::string(ir::op_name(op.kind)) +
                                                 " has regions that the uniformity analysis "
                                                 "does not know");
    const bool cond = uniform_[op.operands[0]];
    divergent_ += !cond;
    for (const ir::Block& region : op.regions) {
      block(region);
      if (region.ops.empty()) continue;
      const std::vector<ir::ValueId>& yields = region.ops.back().operands;
      for (size_t i = 0; i < op.results.size(); ++i)
        set(op.results[i], cond && uniform_[yields[i]]);
    }
    divergent_ -= !cond;
  }

  void loop(const ir::Op& op) {
    const ir::Block& body = op.regions[0];
    if (body.ops.empty()) return;
    const std::vector<ir::ValueId>& yields = body.ops.back().operands;
    // Per-thread bounds give per-thread trip counts, so the carried values differ too.
    const bool bounds = all({op.operands[0], op.operands[1], op.operands[2]});
    set(body.args[0], bounds);
    for (size_t i = 0; i + 1 < body.args.size(); ++i)
      set(body.args[i + 1], bounds && uniform_[op.operands[3 + i]] && uniform_[yields[i]]);
    divergent_ += !bounds;
    block(body);
    divergent_ -= !bounds;
    for (size_t i = 0; i < op.results.size(); ++i)
      set(op.results[i], bounds && uniform_[body.args[i + 1]] && uniform_[yields[i]]);
  }

  // A condition that differs between threads gives each its own trip count: the carried
  // values, and everything in the regions after the first test, differ too.
  void while_loop(const ir::Op& op) {
    const ir::Block &before = op.regions[0], &after = op.regions[1];
    if (before.ops.empty() || after.ops.empty()) return;
    const std::vector<ir::ValueId>& passed = before.ops.back().operands;  // cond, values...
    const std::vector<ir::ValueId>& next = after.ops.back().operands;
    const bool cond = uniform_[passed[0]];
    for (size_t i = 0; i < before.args.size(); ++i)
      set(before.args[i], cond && uniform_[op.operands[i]] && uniform_[next[i]]);
    divergent_ += !cond;
    block(before);
    for (size_t i = 0; i < after.args.size(); ++i)
      set(after.args[i], uniform_[passed[0]] && uniform_[passed[1 + i]]);
    block(after);
    divergent_ -= !cond;
    for (size_t i = 0; i < op.results.size(); ++i)
      set(op.results[i], uniform_[passed[0]] && uniform_[passed[1 + i]]);
  }

  const ir::Kernel& k_;
  std::vector<bool> uniform_;
  bool changed_ = false;
  // How many enclosing regions run per thread (a condition or loop bounds not uniform).
  int divergent_ = 0;
};

}  // namespace

std::vector<bool> analyze_uniformity(const ir::Kernel& tile) {
  return Analysis(tile).run();
}

}  // namespace metile::lower
