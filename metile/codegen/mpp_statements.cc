// The statements of mpp_matmul2d (ops.def): the dialect's product into a destination tensor,
// then the epilogue region once per destination element the calling thread holds, then the
// store. The region's ops render as ordinary scalar statements.
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/c_types.h"

namespace metile::codegen {

void CEmitter::emit_mpp_matmul2d(const ir::Op& op) {
  if (read_only_.count(op.operands[2]))
    fail(op, "stores through '" + name(op.operands[2]) + "', which points into a read-only buffer");
  MppMatmul2dCall call;
  call.prefix = std::string(dialect_.table().helper_prefix) + "mpp_";
  call.m = op.int_attr("m");
  call.n = op.int_attr("n");
  call.simdgroups = op.int_attr("simdgroups");
  call.reduced_precision = op.has_attr("precision") && op.str_attr("precision") == "tf32";
  call.operand_dtype = type(op.operands[0]).dtype;
  call.output_dtype = type(op.operands[2]).dtype;
  for (size_t i = 0; i < call.operands.size(); ++i) call.operands[i] = name(op.operands[i]);
  const MppMatmul2dText text = dialect_.mpp_matmul2d(call, prelude_);
  const ir::Block& epilogue = op.regions.at(0);
  line("{");
  ++indent_;
  for (const std::string& statement : text.setup) line(statement);
  line("for (int " + text.index + " = 0; " + text.index + " < int(" + text.capacity + "); ++" +
       text.index + ") {");
  ++indent_;
  line("if (!" + text.is_valid + ") continue;");
  line("const float " + name(epilogue.args[0]) + " = " + text.element + ";");
  emit_block(epilogue);
  line(text.result + " = " + name(epilogue.ops.back().operands[0]) + ";");
  --indent_;
  line("}");
  for (const std::string& statement : text.finish) line(statement);
  --indent_;
  line("}");
}

}  // namespace metile::codegen
