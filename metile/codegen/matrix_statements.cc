// The statements of matrix fragment ops (docs/fragments.md). Elementwise ops on fragments
// reach each fragment only through the dialect's matrix_element, one lane's share at a
// time, so the emitted code is the same whatever lane holds whatever element.
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/c_types.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {
// The loop variable over a lane's elements: the helper prefix keeps it clear of every local.
std::string element_index(const CDialect& dialect) {
  return std::string(dialect.table().helper_prefix) + "element";
}
}  // namespace

bool CEmitter::is_matrix_elementwise(const ir::Op& op) const {
  return ir::is_elementwise(op.kind) && op.results.size() == 1 &&
         kernel_.type(op.results[0]).is_matrix();
}

CEmitter::MatrixElements::MatrixElements(CEmitter& emitter, const ir::Op& op) : emitter_(emitter) {
  const std::string index = element_index(emitter.dialect_);
  for (ir::ValueId v : op.operands) {
    const ir::Type& t = emitter.kernel_.type(v);
    if (!t.is_matrix()) continue;
    emitter.element_names_[v] = emitter.dialect_.matrix_element(emitter.names_[v], t, index);
    emitter.element_types_[v] = ir::Type::scalar(t.dtype);
  }
  emitter.element_types_[op.results[0]] =
      ir::Type::scalar(emitter.kernel_.type(op.results[0]).dtype);
}

CEmitter::MatrixElements::~MatrixElements() {
  emitter_.element_names_.clear();
  emitter_.element_types_.clear();
}

void CEmitter::declare_matrix_elements(const ir::Op& op, const std::string& expr) {
  const ir::ValueId r = op.results[0];
  const ir::Type& t = kernel_.type(r);
  const std::string index = element_index(dialect_);
  line(type_name(t, dialect_) + " " + names_[r] + ";");
  line("for (int " + index + " = 0; " + index + " < " +
       std::to_string(dialect_.matrix_lane_elements(t)) + "; ++" + index + ") " +
       dialect_.matrix_element(names_[r], t, index) + " = " + expr + ";");
}

std::string CEmitter::matrix_address(ir::ValueId ptr, ir::ValueId offset) const {
  return name(ptr) + " + " + name(offset);
}

void CEmitter::emit_matrix_fill(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  line(type_of(r) + " " + name(r) + " = " + dialect_.matrix_fill(type(r), name(op.operands[0])) +
       ";");
}

void CEmitter::emit_matrix_load(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  line(type_of(r) + " " + name(r) + ";");
  line(dialect_.matrix_load(name(r), type(r), matrix_address(op.operands[0], op.operands[1]),
                            name(op.operands[2]), op.int_attr_or("transpose", 0) != 0, prelude_));
}

void CEmitter::emit_matrix_store(const ir::Op& op) {
  const ir::ValueId ptr = op.operands[1];
  if (read_only_.count(ptr))
    fail(op, "stores through '" + name(ptr) + "', which points into a read-only buffer");
  line(dialect_.matrix_store(name(op.operands[0]), type(op.operands[0]),
                             matrix_address(ptr, op.operands[2]), name(op.operands[3]),
                             op.int_attr_or("transpose", 0) != 0, prelude_));
}

void CEmitter::emit_matrix_mma(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  line(type_of(r) + " " + name(r) + ";");
  line(dialect_.matrix_mma(name(r), name(op.operands[0]), name(op.operands[1]),
                           name(op.operands[2]), type(op.operands[0]),
                           op.has_attr("precision") && op.str_attr("precision") == "tf32",
                           prelude_));
}

void CEmitter::emit_async(const ir::Op& op) {
  std::vector<std::string> operands, results;
  for (ir::ValueId v : op.operands) operands.push_back(name(v));
  // wgmma_mma's accumulators follow a and b; wgmma_wait's are all its operands.
  const size_t first = op.kind == ir::OpKind::WgmmaMma ? ir::wgmma_b_operand(op) + 1 : 0;
  for (size_t i = 0; i < op.results.size(); ++i) {
    const ir::ValueId r = op.results[i];
    line(type_of(r) + " " + name(r) + " = " + name(op.operands[first + i]) + ";");
    results.push_back(name(r));
  }
  const ir::DType element = op.operands.empty() ? ir::DType::f32
                            : op.kind == ir::OpKind::WgmmaMma
                                ? type(op.operands[ir::wgmma_b_operand(op)]).dtype
                                : type(op.operands[0]).dtype;
  line(dialect_.async_statement(op, operands, results, element, prelude_));
}

}  // namespace metile::codegen
