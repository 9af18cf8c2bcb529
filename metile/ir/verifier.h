// The verifiers of Tile IR and Metal IR: the executable statement of what a valid kernel is
// in each dialect. They run on frontend output (a failure is the user's error) and after
// every pass (a failure is a compiler bug).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::ir {

// One broken rule: the op, the rule, and the values involved as printed by print()
// ("%4: tile<128xi1>, %3: tile<256xptr<f32>>").
struct Diagnostic {
  std::string op;  // op name, or "kernel" for kernel-level rules
  std::string rule;
  std::string values;
  SourceLocation loc;

  // "[file:line: ]op: rule[ (values)]"
  std::string str() const;
};

// Every broken rule of k, dispatching on k.dialect; empty when k is valid.
std::vector<Diagnostic> verify(const Kernel& k);

// Throws when verify(k) finds anything. after_pass == "": the input was bad (UserError
// listing the diagnostics); otherwise the named pass produced invalid IR (InternalError that
// also carries print(k)).
void verify_or_throw(const Kernel& k, const std::string& after_pass);

// dot's operand rule, shared by TileBuilder::dot and the Tile IR verifier: a [M, K] and b
// [K, N] tiles of one dtype (f16, bf16 or f32), acc tile<MxNxf32>, M, N, K >= 8, tf32 only
// for f32 inputs. The broken rule, or "" when the operands are valid.
std::string dot_rule_violation(const Type& a, const Type& b, const Type& acc,
                               const std::string& precision);
// A dot's precision attribute: "ieee" (also when absent) or "tf32".
std::string dot_precision(const Op& dot);

// The machinery the dialect verifiers share (verifier.cc); tile_verifier.cc and
// metal_verifier.cc add the dialect's own rules through these hooks.
namespace verifier_detail {

class Checker {
 public:
  explicit Checker(const Kernel& k);

  const Kernel& kernel() const { return k_; }
  // Whether v names a value with a type (operands are checked before the dialect hooks run,
  // so hooks may call type() on any operand or result).
  bool valid(ValueId v) const;
  const Type& type(ValueId v) const { return k_.types[v]; }
  // "%4: tile<128xi1>" for each value, joined with ", ".
  std::string describe(const std::vector<ValueId>& values) const;
  void report(const Op* op, const std::string& rule, const std::vector<ValueId>& values = {});

  std::vector<Diagnostic> take() { return std::move(diagnostics_); }

 private:
  const Kernel& k_;
  std::vector<std::string> names_;
  std::vector<Diagnostic> diagnostics_;
};

// The rules of one dialect on top of the shared ones.
struct DialectRules {
  // Every value's type (parameters, results, region arguments).
  std::function<void(Checker&, const Op* definer, ValueId)> check_type;
  // One op whose operands and results are valid values; called after the shared op rules.
  std::function<void(Checker&, const Op&)> check_op;
  // Kernel-level rules (attributes, parameters), called once.
  std::function<void(Checker&)> check_kernel;
};

// The shared rules: definitions and visibility, dialect membership, the facts of ops.def
// (operand, result and region counts, the attribute schema), region structure, and the
// per-op type rules both dialects have in common.
std::vector<Diagnostic> verify_with(const Kernel& k, const DialectRules& rules);

// The type rules both dialects share (common_op_rules.cc), for an op with valid operands.
void check_common_op_rules(Checker& c, const Op& op);

// What a class of per-op rules reads (the op's operand and result types and values) and how
// it reports a broken rule; CommonOpRules and TileOpRules build on it.
class OpRuleChecks {
 public:
  OpRuleChecks(Checker& c, const Op& op) : c_(c), op_(op) {}

 protected:
  const Type& in(size_t i) const { return c_.type(op_.operands[i]); }
  const Type& out(size_t i = 0) const { return c_.type(op_.results[i]); }
  ValueId a(size_t i) const { return op_.operands[i]; }
  ValueId r(size_t i = 0) const { return op_.results[i]; }
  void fail(const std::string& rule, const std::vector<ValueId>& values = {}) {
    c_.report(&op_, rule, values);
  }

  Checker& c_;
  const Op& op_;
};

inline bool is_integer_scalar(const Type& t) {
  return t.is_scalar() && is_integer(t.dtype);
}

// The matrix fragment rules both dialects share (metal_verifier.cc): the fragment type, and
// the types of matrix_fill, matrix_load, matrix_store and matrix_mma. Tile IR's fragments are
// 8x8; Metal IR's may also take mma.sync's native shapes (native_mma_shapes).
void check_matrix_type(Checker& c, const Op* definer, ValueId v, bool native_mma_shapes);
void check_matrix_op(Checker& c, const Op& op);
// The types of the sm90 asynchronous pipeline ops (async_verifier.cc).
void check_async_op(Checker& c, const Op& op);

std::vector<Diagnostic> verify_tile(const Kernel& k);
std::vector<Diagnostic> verify_metal(const Kernel& k);

}  // namespace verifier_detail

}  // namespace metile::ir
