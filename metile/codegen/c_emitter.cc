#include "metile/codegen/c_emitter.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "metile/codegen/c_types.h"
#include "metile/codegen/literals.h"
#include "metile/codegen/msl/msl_dialect.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// Pointers that must be declared to const: those reached from a read-only buffer through
// ptr_add, select, loop-carried values and if results. Grows to a fixed point because a loop
// body may feed a carried pointer before the loop's results are seen.
std::set<ir::ValueId> read_only_pointers(const ir::Kernel& k) {
  std::set<ir::ValueId> ro;
  for (const ir::Param& p : k.params)
    if (p.access == "read") ro.insert(p.value);
  auto any = [&](std::initializer_list<ir::ValueId> vs) {
    for (ir::ValueId v : vs)
      if (ro.count(v)) return true;
    return false;
  };
  auto mark = [&](ir::ValueId v, bool cond, bool& changed) {
    if (cond && k.type(v).pointer && ro.insert(v).second) changed = true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (op.kind == ir::OpKind::PtrAdd) mark(op.results[0], any({op.operands[0]}), changed);
      if (op.kind == ir::OpKind::Select)
        mark(op.results[0], any({op.operands[1], op.operands[2]}), changed);
      if (op.kind == ir::OpKind::For) {
        const ir::Block& body = op.regions.at(0);
        const ir::Op& yield = body.ops.back();
        for (size_t i = 0; i < op.results.size(); ++i) {
          bool c = any({op.operands[3 + i], yield.operands[i], body.args[1 + i]});
          mark(body.args[1 + i], c, changed);
          mark(op.results[i], c, changed);
        }
      }
      if (op.kind == ir::OpKind::While) {
        for (size_t i = 0; i < op.results.size(); ++i) {
          const std::array<ir::ValueId, 6> group = ir::while_carried(op, i);
          bool c = false;
          for (ir::ValueId v : group) c = c || ro.count(v);
          for (ir::ValueId v : group) mark(v, c, changed);
        }
      }
      if (op.kind == ir::OpKind::If)
        for (const ir::Block& region : op.regions)
          for (size_t i = 0; i < op.results.size(); ++i)
            mark(op.results[i], any({region.ops.back().operands[i]}), changed);
    });
  }
  return ro;
}

}  // namespace

CEmitter::CEmitter(const ir::Kernel& kernel, const CDialect& dialect, const target::Target& target,
                   const EmitOptions& options)
    : kernel_(kernel),
      dialect_(dialect),
      names_(kernel, dialect),
      read_only_(read_only_pointers(kernel)) {
  for (const ir::Type& t : kernel.types) {
    dialect.require_dtype(t.dtype, target);
    dialect.declare_dtype(t.dtype, prelude_);
    if (t.is_matrix()) {
      if (!target.matrix_facilities.has(target::MatrixFacility::SimdgroupMatrix8x8) &&
          !target.matrix_facilities.has(target::MatrixFacility::MmaSync))
        throw NotSupported("emit " + std::string(dialect.table().language) + ": kernel '" +
                           kernel.name + "' holds matrix fragments (" + t.str() + "), but target " +
                           target.name + " has no SIMD-group matrix facility");
      dialect.declare_matrix(t, prelude_);
    }
  }
  // The host emulator's metal_stdlib has the checks' helpers (msl/bounds.h).
  if (target.name == "host" && &dialect == &msl_dialect())
    enable_bounds_checks();
  else if (options.bounds_checks)
    enable_recorded_bounds_checks(target);
}

std::string CEmitter::body() {
  out_.clear();
  indent_ = 1;
  lines_ = 0;
  source_lines_.clear();
  declare_extents();
  emit_block(kernel_.body);
  return out_;
}

void CEmitter::line(const std::string& text) {
  out_ += std::string(2 * indent_, ' ') + text + "\n";
  ++lines_;
  if (current_ && current_->loc.known()) source_lines_.push_back({lines_, current_->loc});
}

void CEmitter::fail(const ir::Op& op, const std::string& rule) const {
  throw UserError("emit " + std::string(dialect_.table().language) + ": " +
                      std::string(ir::op_name(op.kind)) + ": " + rule,
                  op.loc);
}

std::string CEmitter::type_of(ir::ValueId v) const {
  return type_name(type(v), dialect_, read_only_.count(v) != 0);
}

void CEmitter::emit_block(const ir::Block& block) {
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const ir::Op& op = block.ops[i];
    if (op.kind == ir::OpKind::Yield && i + 1 == block.ops.size()) break;  // the parent's
    emit_op(op);
  }
}

void CEmitter::declare(const ir::Op& op, const std::string& expr) {
  METILE_ASSERT(op.results.size() == 1, std::string(ir::op_name(op.kind)) + " has one result");
  if (!element_types_.empty()) return declare_matrix_elements(op, expr);
  const ir::ValueId r = op.results[0];
  // Pointers are declared without a top-level const: "device const float* const p" reads
  // worse and buys nothing in SSA form.
  line((type(r).pointer ? "" : "const ") + type_of(r) + " " + name(r) + " = " + expr + ";");
}

void CEmitter::require_vectors_if_used(const ir::Op& op) const {
  // A packed access's vector has the dialect's packed type: made by a packed load or a pack,
  // joined by an if, read by extracts.
  if (dialect_.table().vector_values || op.kind == ir::OpKind::PackedLoad ||
      op.kind == ir::OpKind::Extract || op.kind == ir::OpKind::Pack || op.kind == ir::OpKind::If ||
      op.kind == ir::OpKind::Yield)
    return;
  for (const std::vector<ir::ValueId>* values : {&op.operands, &op.results})
    for (ir::ValueId v : *values)
      if (type(v).is_vector())
        throw NotSupported("emit " + std::string(dialect_.table().language) + ": " +
                               std::string(ir::op_name(op.kind)) + ": vector values (" +
                               type(v).str() + ") are not supported in " +
                               std::string(dialect_.table().language),
                           op.loc);
}

void CEmitter::emit_op(const ir::Op& op) {
  const ir::Op* parent = std::exchange(current_, &op);
  check_accesses(op);
  emit_op_lines(op);
  end_redirects();
  current_ = parent;
}

void CEmitter::emit_op_lines(const ir::Op& op) {
  using K = ir::OpKind;
  require_vectors_if_used(op);
  std::optional<MatrixElements> elements;
  if (is_matrix_elementwise(op)) elements.emplace(*this, op);
  switch (op.kind) {
    case K::Constant:
      if (ir::is_integer(type(op.results[0]).dtype) && op.int_attr("value") > 0)
        positive_constants_.insert(op.results[0]);
      return declare(op, constant(op));
    case K::ThreadgroupIndex:
      return declare(op, geometry(op, Geometry::ThreadgroupPosition));
    case K::ThreadgroupCount:
      return declare(op, geometry(op, Geometry::ThreadgroupsPerGrid));
    case K::ThreadIndex:
      return declare(op, geometry(op, Geometry::ThreadPosition));
    case K::SimdLane:
      return declare(op, geometry(op, Geometry::SimdLane));
    case K::SimdGroup:
      return declare(op, geometry(op, Geometry::SimdGroup));
    case K::Add:
    case K::PtrAdd:
      return declare(op, infix(op, "+"));
    case K::Sub:
      return declare(op, infix(op, "-"));
    case K::Mul:
      return declare(op, infix(op, "*"));
    case K::Div:
      return declare(op, infix(op, "/"));
    case K::Shl:
      return declare(op, infix(op, "<<"));
    case K::Shr:
      return declare(op, infix(op, ">>"));
    case K::Rem:
      return declare(op, rem(op));
    case K::FloorDiv:
      return declare(op, floordiv(op));
    case K::And:
      return declare(op, bitwise(op, "&", "&&"));
    case K::Or:
      return declare(op, bitwise(op, "|", "||"));
    case K::Xor:
      return declare(op, bitwise(op, "^", "!="));
    case K::Min:
      return declare(op, min_max(op, MathFn::Min, "&&"));
    case K::Max:
      return declare(op, min_max(op, MathFn::Max, "||"));
    case K::Cmp:
      return declare(op, compare(op));
    case K::Select:
      return declare(op, select(op));
    case K::Cast:
      return declare(op, cast(op));
    case K::Neg:
      return declare(op, negate(op));
    case K::Abs:
      return declare(op, math(op, MathFn::Abs));
    case K::Exp:
      return declare(op, math(op, MathFn::Exp));
    case K::Exp2:
      return declare(op, math(op, MathFn::Exp2));
    case K::Log:
      return declare(op, math(op, MathFn::Log));
    case K::Sqrt:
      return declare(op, math(op, MathFn::Sqrt));
    case K::Rsqrt:
      return declare(op, math(op, MathFn::Rsqrt));
    case K::Tanh:
      return declare(op, math(op, MathFn::Tanh));
    case K::Sin:
      return declare(op, math(op, MathFn::Sin));
    case K::Cos:
      return declare(op, math(op, MathFn::Cos));
    case K::Floor:
      return declare(op, math(op, MathFn::Floor));
    case K::Ceil:
      return declare(op, math(op, MathFn::Ceil));
    case K::InlineAsm:
      return emit_inline_asm(op);
    case K::Load:
      return declare(op, load(op));
    case K::ThreadgroupBuffer:
      return declare(op, threadgroup_buffer(op));
    case K::SimdShuffle:
      return declare(op, collective(op, Collective::Shuffle));
    case K::SimdShuffleXor:
      return declare(op, collective(op, Collective::ShuffleXor));
    case K::SimdBroadcast:
      return declare(op, collective(op, Collective::Broadcast));
    case K::SimdShuffleDown:
      return declare(op, collective(op, Collective::ShuffleDown));
    case K::SimdSum:
      return declare(op, collective(op, Collective::Sum));
    case K::SimdMax:
      return declare(op, collective(op, Collective::Max));
    case K::SimdMin:
      return declare(op, collective(op, Collective::Min));
    case K::Store:
      return emit_store(op);
    case K::AtomicRmw:
    case K::AtomicCas:
      return emit_atomic(op);
    case K::PackedLoad:
      return emit_packed_load(op);
    case K::PackedStore:
      return emit_packed_store(op);
    case K::Extract:
      return declare(op, extract(op));
    case K::Pack:
      return emit_pack(op);
    case K::IsAligned:
      return declare(op, dialect_.address_is_aligned(name(op.operands[0]), op.int_attr("bytes")));
    case K::Barrier:
      return emit_barrier(op);
    case K::AssertTrue:
      return line("if (" + name(op.operands[0]) + " && !" + name(op.operands[1]) + ") " +
                  dialect_.assert_failed(kernel_.name, string_literal(op.str_attr("message")),
                                         op.loc, name(op.operands[2])));
    case K::Print:
      return emit_print(op);
    case K::MatrixFill:
      return emit_matrix_fill(op);
    case K::MatrixLoad:
      return emit_matrix_load(op);
    case K::MatrixStore:
      return emit_matrix_store(op);
    case K::MatrixMma:
      return emit_matrix_mma(op);
    case K::MppMatmul2d:
      return emit_mpp_matmul2d(op);
    case K::MbarrierInit:
    case K::MbarrierFence:
    case K::MbarrierArrive:
    case K::MbarrierArriveExpectTx:
    case K::MbarrierWait:
    case K::TmaLoad:
    case K::WgmmaFence:
    case K::WgmmaMma:
    case K::WgmmaCommit:
    case K::WgmmaWait:
    case K::SetMaxNReg:
    case K::AsyncProxyFence:
      return emit_async(op);
    case K::AsyncCopy:
      return line(dialect_.async_copy(name(op.operands[1]), name(op.operands[0]),
                                      op.operands.size() == 3 ? name(op.operands[2]) : "",
                                      type(op.operands[0]).dtype, op.int_attr("elements"),
                                      prelude_));
    case K::AsyncCopyCommit:
      return line(dialect_.async_copy_commit());
    case K::AsyncCopyWait:
      return line(dialect_.async_copy_wait(op.int_attr("pending")));
    case K::For:
      return emit_for(op);
    case K::If:
      return emit_if(op);
    case K::While:
      return emit_while(op);
    case K::Yield:
      fail(op, "a yield must be the last op of a for or if region");
    case K::ProgramId:
    case K::NumPrograms:
    case K::ThreadId:
    case K::Arange:
    case K::Splat:
    case K::ExpandDims:
    case K::Broadcast:
    case K::ConvertLayout:
    case K::MakeTensor:
    case K::TensorLoad:
    case K::TensorStore:
    case K::SharedAlloc:
    case K::Reduce:
    case K::ReduceAxis:
    case K::ReduceCombine:
    case K::Scan:
    case K::XorPermute:
    case K::DeviceAssert:
    case K::DevicePrint:
    case K::Dot:
    case K::Reshape:
    case K::Trans:
    case K::DeviceTileLoad:
    case K::DeviceTileStore:
    case K::DescriptorMatmul:
      fail(op, "is a Tile IR op and has no rendering; lower the kernel to Metal IR first");
  }
  fail(op, "unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

void CEmitter::emit_print(const ir::Op& op) {
  std::vector<std::string> args;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const std::string value = name(op.operands[i]);
    switch (type(op.operands[i]).dtype) {
      case ir::DType::f16:
      case ir::DType::bf16:
      case ir::DType::f32:
        args.push_back("float(" + value + ")");
        break;
      case ir::DType::f64:
        args.push_back("(double)(" + value + ")");
        break;
      // fp8 values are their bytes: a print shows the value.
      case ir::DType::f8e4m3:
      case ir::DType::f8e5m2:
        args.push_back(dialect_.cast(ir::Type::scalar(type(op.operands[i]).dtype),
                                     ir::Type::scalar(ir::DType::f32), value, prelude_));
        break;
      case ir::DType::i1:
      case ir::DType::i8:
      case ir::DType::i16:
      case ir::DType::i32:
        args.push_back("int(" + value + ")");
        break;
      case ir::DType::u8:
      case ir::DType::u16:
      case ir::DType::u32:
        args.push_back("(unsigned)(" + value + ")");
        break;
      case ir::DType::i64:
        args.push_back("(long long)(" + value + ")");
        break;
    }
  }
  line("if (" + name(op.operands[0]) + ") " +
       dialect_.print(string_literal(op.str_attr("format")), args));
}

void CEmitter::emit_store(const ir::Op& op) {
  const ir::ValueId ptr = op.operands[0];
  if (read_only_.count(ptr))
    fail(op, "stores through '" + name(ptr) + "', which points into a read-only buffer");
  const ir::Type& t = type(op.operands[1]);
  const std::optional<std::string> hinted =
      hinted_store(op, type_name(t, dialect_), name(op.operands[1]));
  const std::string assign = hinted ? *hinted : access(ptr, t) + " = " + name(op.operands[1]) + ";";
  if (op.operands.size() == 3)
    line("if (" + name(op.operands[2]) + ") { " + assign + " }");
  else
    line(assign);
}

// An atomic's old value; where its mask is false no access, and 0.
void CEmitter::emit_atomic(const ir::Op& op) {
  const ir::ValueId ptr = op.operands[0];
  if (read_only_.count(ptr))
    fail(op, "updates '" + name(ptr) + "' atomically, which points into a read-only buffer");
  const bool cas = op.kind == ir::OpKind::AtomicCas;
  const ir::Type& t = type(op.results[0]);
  const std::string call = dialect_.atomic(cas ? "cas" : op.str_attr("kind"), t.dtype, name(ptr),
                                           name(op.operands[1]), cas ? name(op.operands[2]) : "",
                                           op.str_attr("sem"), op.str_attr("scope"), prelude_);
  if (!cas && op.operands.size() == 3)
    return declare(op,
                   name(op.operands[2]) + " ? " + call + " : " + type_name(t, dialect_) + "(0)");
  declare(op, call);
}

void CEmitter::emit_packed_load(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const std::string vector = packed_type(type(r));
  const std::optional<std::string> hinted = hinted_load(op, vector);
  line("const " + vector + " " + name(r) + " = " +
       (hinted ? *hinted
               : dialect_.packed_access(name(op.operands[0]), vector,
                                        read_only_.count(op.operands[0]) != 0)) +
       ";");
}

void CEmitter::emit_packed_store(const ir::Op& op) {
  const ir::ValueId ptr = op.operands[0];
  if (read_only_.count(ptr))
    fail(op, "stores through '" + name(ptr) + "', which points into a read-only buffer");
  const int64_t width = static_cast<int64_t>(op.operands.size()) - 1;
  const std::string vector = packed_type(ir::Type::vector(type(ptr).dtype, width));
  std::vector<std::string> elements;
  for (size_t i = 1; i < op.operands.size(); ++i) elements.push_back(name(op.operands[i]));
  const std::string value = dialect_.packed_literal(type(ptr).dtype, vector, elements);
  const std::optional<std::string> hinted = hinted_store(op, vector, value);
  line(hinted ? *hinted
              : dialect_.packed_store(type(ptr).dtype, width, vector, name(ptr), value, prelude_));
}

void CEmitter::emit_pack(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const std::string vector = packed_type(type(r));
  std::vector<std::string> elements;
  for (ir::ValueId e : op.operands) elements.push_back(name(e));
  line("const " + vector + " " + name(r) + " = " +
       dialect_.packed_literal(type(r).dtype, vector, elements) + ";");
}

void CEmitter::emit_barrier(const ir::Op& op) {
  static constexpr std::pair<std::string_view, BarrierScope> kScopes[] = {
      {"threadgroup", BarrierScope::Threadgroup}, {"simdgroup", BarrierScope::Simdgroup}};
  static constexpr std::pair<std::string_view, BarrierMem> kMems[] = {
      {"none", BarrierMem::None},
      {"threadgroup", BarrierMem::Threadgroup},
      {"device", BarrierMem::Device},
      {"all", BarrierMem::All}};
  const std::string& scope = op.str_attr("scope");
  const std::string& mem = op.str_attr("mem");
  const auto s = std::find_if(std::begin(kScopes), std::end(kScopes),
                              [&](const auto& e) { return e.first == scope; });
  if (s == std::end(kScopes)) fail(op, "unknown scope '" + scope + "'");
  const auto m = std::find_if(std::begin(kMems), std::end(kMems),
                              [&](const auto& e) { return e.first == mem; });
  if (m == std::end(kMems)) fail(op, "unknown mem '" + mem + "'");
  line(dialect_.barrier(s->second, m->second));
}

void CEmitter::emit_region(const ir::Block& region, const std::vector<ir::ValueId>& targets) {
  ++indent_;
  emit_block(region);
  if (!targets.empty()) {
    const ir::Op& yield = region.ops.back();
    for (size_t i = 0; i < targets.size(); ++i)
      line(name(targets[i]) + " = " + name(yield.operands[i]) + ";");
  }
  --indent_;
}

void CEmitter::emit_for(const ir::Op& op) {
  const ir::Block& body = op.regions.at(0);
  const ir::ValueId iv = body.args[0];
  const size_t carried = op.results.size();
  for (size_t i = 0; i < carried; ++i)
    line(type_of(body.args[1 + i]) + " " + name(body.args[1 + i]) + " = " +
         name(op.operands[3 + i]) + ";");
  // A step of zero or below never reaches the end. A constant one is refused when traced;
  // one known only at run time is checked once, before the loop, and traps.
  const ir::ValueId step = op.operands[2];
  if (!positive_constants_.count(step))
    line("if (" + name(step) + " <= 0) " + std::string(dialect_.table().trap_statement));
  line("for (" + type_of(iv) + " " + name(iv) + " = " + name(op.operands[0]) + "; " + name(iv) +
       " < " + name(op.operands[1]) + "; " + name(iv) + " += " + name(op.operands[2]) + ") {");
  ++indent_;
  emit_block(body);
  // The yield assigns all carried variables at once: when one yielded value is another
  // carried variable (a swap), assigning in order would read an already updated variable,
  // so every changed value goes through a temporary first.
  const ir::Op& yield = body.ops.back();
  std::vector<size_t> changed;
  bool reads_carried = false;
  for (size_t i = 0; i < carried; ++i) {
    if (yield.operands[i] == body.args[1 + i]) continue;
    changed.push_back(i);
    for (size_t j = 0; j < carried; ++j)
      if (yield.operands[i] == body.args[1 + j]) reads_carried = true;
  }
  const std::string temp = std::string(dialect_.table().helper_prefix) + "next";
  if (reads_carried)
    for (size_t i : changed)
      line((type(body.args[1 + i]).pointer ? "" : "const ") + type_of(body.args[1 + i]) + " " +
           temp + std::to_string(i) + " = " + name(yield.operands[i]) + ";");
  for (size_t i : changed)
    line(name(body.args[1 + i]) + " = " +
         (reads_carried ? temp + std::to_string(i) : name(yield.operands[i])) + ";");
  --indent_;
  line("}");
  for (size_t i = 0; i < carried; ++i)
    line((type(op.results[i]).pointer ? "" : "const ") + type_of(op.results[i]) + " " +
         name(op.results[i]) + " = " + name(body.args[1 + i]) + ";");
}

void CEmitter::emit_if(const ir::Op& op) {
  // A vector result joins packed vectors (a grouped load and its fallback's pack).
  for (ir::ValueId r : op.results)
    line((type(r).is_vector() ? packed_type(type(r)) : type_of(r)) + " " + name(r) + ";");
  line("if (" + name(op.operands[0]) + ") {");
  emit_region(op.regions.at(0), op.results);
  // An else region holding only an empty yield is left out.
  const bool has_else = op.regions.size() > 1 &&
                        !(op.regions[1].ops.empty() ||
                          (op.regions[1].ops.size() == 1 &&
                           op.regions[1].ops[0].kind == ir::OpKind::Yield && op.results.empty()));
  if (has_else) {
    line("} else {");
    emit_region(op.regions[1], op.results);
  }
  line("}");
}

// while (true) { before; passed = ...; if (!cond) break; after; carried = next; }: the
// after-region's arguments hold the values passed on, and after the loop the results. Neither
// region sees the other's values, so each copy reads only values of its own region.
void CEmitter::emit_while(const ir::Op& op) {
  const ir::Block &before = op.regions.at(0), &after = op.regions.at(1);
  const size_t carried = op.results.size();
  for (size_t i = 0; i < carried; ++i) {
    line(type_of(before.args[i]) + " " + name(before.args[i]) + " = " + name(op.operands[i]) + ";");
    line(type_of(after.args[i]) + " " + name(after.args[i]) + " = " + name(op.operands[i]) + ";");
  }
  line("while (true) {");
  ++indent_;
  emit_block(before);
  const ir::Op& passed = before.ops.back();
  for (size_t i = 0; i < carried; ++i)
    line(name(after.args[i]) + " = " + name(passed.operands[1 + i]) + ";");
  line("if (!" + name(passed.operands[0]) + ") break;");
  emit_block(after);
  const ir::Op& next = after.ops.back();
  for (size_t i = 0; i < carried; ++i)
    line(name(before.args[i]) + " = " + name(next.operands[i]) + ";");
  --indent_;
  line("}");
  for (size_t i = 0; i < carried; ++i)
    line((type(op.results[i]).pointer ? "" : "const ") + type_of(op.results[i]) + " " +
         name(op.results[i]) + " = " + name(after.args[i]) + ";");
}

}  // namespace metile::codegen
