// PtxWriter: structured control flow as labels and predicated branches; the values a loop or
// an if carries move through their registers.
#include "metile/codegen/ptx/ptx_writer.h"

#include "metile/codegen/ptx/ptx_instructions.h"
#include "metile/support/errors.h"

namespace metile::codegen::ptx {

using ir::DType;
using ir::OpKind;

void PtxWriter::move(ir::ValueId to, ir::ValueId from) {
  const ir::Type& t = type(to);
  const std::string bits = t.is_pointer() ? "b64" : std::string(ptx::bits_suffix(t.dtype));
  if (!t.is_scalar() && !t.is_pointer())
    throw NotSupported("emit PTX: a loop or if carries a vector value in kernel '" + kernel_.name +
                       "', which the PTX route does not support");
  line("mov." + bits + " " + reg(to) + ", " + reg(from) + ";");
}

void PtxWriter::assign_yield(const ir::Block& region, const std::vector<ir::ValueId>& targets) {
  const ir::Op& yield = region.ops.back();
  struct Move {
    std::string to, from, bits, temp;
  };
  std::vector<Move> moves;
  for (size_t i = 0; i < targets.size(); ++i) {
    const ir::Type& t = type(targets[i]);
    const std::string rt = t.is_pointer() ? ".u64" : ptx::register_type(t.dtype);
    const std::string bits = t.is_pointer() ? "b64" : std::string(ptx::bits_suffix(t.dtype));
    if (t.is_scalar() || t.is_pointer()) {
      moves.push_back({reg(targets[i]), reg(yield.operands[i]), bits, temp(rt)});
      continue;
    }
    for (int e = 0; e < static_cast<int>(t.shape.at(0)); ++e)
      moves.push_back({reg(targets[i], e), reg(yield.operands[i], e), bits, temp(rt)});
  }
  for (const Move& m : moves) line("mov." + m.bits + " " + m.temp + ", " + m.from + ";");
  for (const Move& m : moves) line("mov." + m.bits + " " + m.to + ", " + m.temp + ";");
}

void PtxWriter::emit_for(const ir::Op& op) {
  const ir::Block& body = op.regions.at(0);
  const ir::ValueId iv = body.args.at(0);
  const DType t = type(iv).dtype;
  const std::string s = suffix(op, t);
  move(iv, op.operands[0]);
  for (size_t i = 3; i < op.operands.size(); ++i) move(body.args[i - 2], op.operands[i]);
  const std::string head = label("for_head"), done = label("for_end");
  const std::string exit = temp(".pred");
  body_ += head + ":\n";
  line("setp.ge." + s + " " + exit + ", " + reg(iv) + ", " + in(op, 1) + ";");
  line("@" + exit + " bra " + done + ";");
  emit_block(body);
  assign_yield(body, std::vector<ir::ValueId>(body.args.begin() + 1, body.args.end()));
  line("add." + s + " " + reg(iv) + ", " + reg(iv) + ", " + in(op, 2) + ";");
  line("bra " + head + ";");
  body_ += done + ":\n";
  for (size_t i = 0; i < op.results.size(); ++i) move(op.results[i], body.args[i + 1]);
}

void PtxWriter::emit_if(const ir::Op& op) {
  const std::string otherwise = label("else"), done = label("endif");
  line("@!" + in(op, 0) + " bra " + otherwise + ";");
  emit_block(op.regions[0]);
  assign_yield(op.regions[0], op.results);
  line("bra " + done + ";");
  body_ += otherwise + ":\n";
  if (op.regions.size() > 1) {
    emit_block(op.regions[1]);
    assign_yield(op.regions[1], op.results);
  }
  body_ += done + ":\n";
}

}  // namespace metile::codegen::ptx
