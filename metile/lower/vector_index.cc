#include "metile/lower/vector_index.h"

#include <bit>
#include <map>

namespace metile::lower {

namespace {

// sum(coefficient * term) + constant, in wrapping 64-bit arithmetic; compared modulo 2^bits.
struct Affine {
  std::map<ir::ValueId, uint64_t> terms;
  uint64_t constant = 0;

  bool is_constant() const { return terms.empty(); }
};

Affine add(Affine a, const Affine& b, uint64_t scale = 1) {
  for (const auto& [v, c] : b.terms) a.terms[v] += c * scale;
  a.constant += b.constant * scale;
  return a;
}

Affine scaled(const Affine& a, uint64_t scale) {
  return add(Affine{}, a, scale);
}

// How many low bits of the value are known to be zero: those of every coefficient and of
// the constant.
int known_zero_bits(const Affine& a) {
  int bits = a.constant == 0 ? 64 : std::countr_zero(a.constant);
  for (const auto& [v, c] : a.terms)
    if (c != 0) bits = std::min(bits, std::countr_zero(c));
  return bits;
}

int bits_of(ir::DType t) {
  return ir::dtype_bytes(t) * 8;
}

// Deep enough for any index lowering writes; deeper expressions become terms.
constexpr int kMaxDepth = 32;

class Reader {
 public:
  Reader(const ir::Kernel& k, const std::vector<const ir::Op*>& definers)
      : kernel_(k), definers_(definers) {}

  // Each value is read once: an index DAG that reuses a value is not walked per path. A
  // value cut off by the depth limit stays one opaque term wherever it appears, which is
  // sound: only the differences of equal terms cancel.
  Affine read(ir::ValueId v, int depth = 0) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    Affine a = read_uncached(v, depth);
    memo_.emplace(v, a);
    return a;
  }

 private:
  Affine read_uncached(ir::ValueId v, int depth) {
    Affine term;
    term.terms[v] = 1;
    const ir::Op* op = v < static_cast<ir::ValueId>(definers_.size()) ? definers_[v] : nullptr;
    if (!op || depth > kMaxDepth) return term;
    const ir::DType dtype = kernel_.type(v).dtype;
    auto in = [&](size_t i) { return read(op->operands[i], depth + 1); };
    using K = ir::OpKind;
    switch (op->kind) {
      case K::Constant:
        if (const int64_t* i = std::get_if<int64_t>(&op->attrs.at("value"))) {
          Affine c;
          c.constant = static_cast<uint64_t>(*i);
          return c;
        }
        return term;
      case K::Add:
        return add(in(0), in(1));
      case K::Sub:
        return add(in(0), in(1), ~uint64_t{0});
      case K::Mul: {
        const Affine a = in(0), b = in(1);
        if (b.is_constant()) return scaled(a, b.constant);
        if (a.is_constant()) return scaled(b, a.constant);
        return term;
      }
      case K::Shl: {
        const Affine b = in(1);
        if (b.is_constant() && b.constant < static_cast<uint64_t>(bits_of(dtype)))
          return scaled(in(0), uint64_t{1} << b.constant);
        return term;
      }
      // (x << k) | c with c < 2^k sets bits that are known zero: it is an addition.
      case K::Or: {
        const Affine a = in(0), b = in(1);
        if (b.is_constant() && known_zero_bits(a) < 64 &&
            b.constant < (uint64_t{1} << known_zero_bits(a)))
          return add(a, b);
        if (a.is_constant() && known_zero_bits(b) < 64 &&
            a.constant < (uint64_t{1} << known_zero_bits(b)))
          return add(a, b);
        return term;
      }
      // Between integers of one width (i32 <-> u32) a cast keeps every bit.
      case K::Cast: {
        const ir::DType from = kernel_.type(op->operands[0]).dtype;
        if (ir::is_integer(from) && ir::is_integer(dtype) && bits_of(from) == bits_of(dtype))
          return in(0);
        return term;
      }
      case K::ThreadgroupIndex:
      case K::ThreadgroupCount:
      case K::ThreadIndex:
      case K::SimdLane:
      case K::SimdGroup:
      case K::Div:
      case K::Rem:
      case K::FloorDiv:
      case K::Min:
      case K::Max:
      case K::And:
      case K::Xor:
      case K::Shr:
      case K::Cmp:
      case K::Select:
      case K::Neg:
      case K::Abs:
      case K::Exp:
      case K::Exp2:
      case K::Log:
      case K::Sqrt:
      case K::Rsqrt:
      case K::Tanh:
      case K::Sin:
      case K::Cos:
      case K::Floor:
      case K::Ceil:
      case K::Reshape:
      case K::Trans:
      case K::ReduceAxis:
      case K::Scan:
      case K::Dot:
      case K::PtrAdd:
      case K::Load:
      case K::Store:
      case K::PackedLoad:
      case K::PackedStore:
      case K::Extract:
      case K::IsAligned:
      case K::MatrixFill:
      case K::MatrixLoad:
      case K::MatrixStore:
      case K::MatrixMma:
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
      case K::ThreadgroupBuffer:
      case K::SimdShuffle:
      case K::SimdShuffleXor:
      case K::SimdShuffleDown:
      case K::SimdBroadcast:
      case K::SimdSum:
      case K::SimdMax:
      case K::SimdMin:
      case K::Barrier:
      case K::For:
      case K::If:
      case K::Yield:
      case K::ProgramId:
      case K::NumPrograms:
      case K::ThreadId:
      case K::Arange:
      case K::Splat:
      case K::ExpandDims:
      case K::Broadcast:
      case K::MakeTensor:
      case K::TensorLoad:
      case K::TensorStore:
      case K::SharedAlloc:
      case K::Reduce:
      case K::ConvertLayout:
        return term;
    }
    return term;
  }

  const ir::Kernel& kernel_;
  const std::vector<const ir::Op*>& definers_;
  std::map<ir::ValueId, Affine> memo_;
};

}  // namespace

IndexAnalysis::IndexAnalysis(const ir::Kernel& k) : kernel_(k), definers_(k.types.size()) {
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) definers_[r] = &op;
  });
}

const ir::Op* IndexAnalysis::definer(ir::ValueId v) const {
  return v >= 0 && v < static_cast<ir::ValueId>(definers_.size()) ? definers_[v] : nullptr;
}

std::optional<int64_t> IndexAnalysis::constant_difference(ir::ValueId a, ir::ValueId b) const {
  const ir::Type &ta = kernel_.type(a), &tb = kernel_.type(b);
  if (ta != tb || !ta.is_scalar() || !ir::is_integer(ta.dtype)) return std::nullopt;
  const int bits = bits_of(ta.dtype);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  Reader reader(kernel_, definers_);
  const Affine d = add(reader.read(b), reader.read(a), ~uint64_t{0});
  for (const auto& [v, c] : d.terms)
    if ((c & mask) != 0) return std::nullopt;
  // Sign-extend the difference from `bits`.
  const uint64_t low = d.constant & mask;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>(bits == 64 ? low : (low ^ sign) - sign);
}

std::optional<PointerParts> IndexAnalysis::pointer_parts(ir::ValueId p) const {
  const ir::Op* op = definer(p);
  if (!op || op->kind != ir::OpKind::PtrAdd) return std::nullopt;
  return PointerParts{op->operands[0], op->operands[1]};
}

}  // namespace metile::lower
