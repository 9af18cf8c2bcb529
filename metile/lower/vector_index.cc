#include "metile/lower/vector_index.h"

#include <bit>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

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

  // The largest value v can hold when it is provably in [0, that], from constants, the thread
  // index (below threads_per_threadgroup) and and/or/shl/shr/add/mul of such values without
  // overflow; nullopt otherwise.
  std::optional<uint64_t> bound(ir::ValueId v, int depth = 0) const {
    if (auto it = term_bounds_.find(v); it != term_bounds_.end()) return it->second;
    const ir::Op* op =
        v >= 0 && v < static_cast<ir::ValueId>(definers_.size()) ? definers_[v] : nullptr;
    if (!op || depth > kMaxDepth || !ir::is_integer(kernel_.type(v).dtype)) return std::nullopt;
    const uint64_t limit = (uint64_t{1} << (bits_of(kernel_.type(v).dtype) - 1)) - 1;
    auto in = [&](size_t i) { return bound(op->operands[i], depth + 1); };
    auto constant = [&](size_t i) -> std::optional<uint64_t> {
      const ir::ValueId operand = op->operands[i];
      const ir::Op* c = operand >= 0 && operand < static_cast<ir::ValueId>(definers_.size())
                            ? definers_[operand]
                            : nullptr;
      if (!c || c->kind != ir::OpKind::Constant) return std::nullopt;
      const int64_t* value = std::get_if<int64_t>(&c->attrs.at("value"));
      if (!value || *value < 0) return std::nullopt;
      return static_cast<uint64_t>(*value);
    };
    auto within = [&](std::optional<uint64_t> b) { return b && *b <= limit ? b : std::nullopt; };
    using K = ir::OpKind;
    if (op->kind == K::Constant) {
      const int64_t* value = std::get_if<int64_t>(&op->attrs.at("value"));
      return value && *value >= 0 ? within(static_cast<uint64_t>(*value)) : std::nullopt;
    }
    if (op->kind == K::ThreadIndex) {
      const auto it = kernel_.attrs.find("threads_per_threadgroup");
      const int64_t* n = it == kernel_.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
      return n && *n > 0 ? std::optional<uint64_t>(*n - 1) : std::nullopt;
    }
    if (op->kind == K::And) {  // a non-negative mask bounds the result
      const std::optional<uint64_t> a = constant(1);
      return a ? a : constant(0);
    }
    if (op->kind == K::Shl) {
      const std::optional<uint64_t> x = in(0), k = constant(1);
      if (!x || !k || *k >= 63 || *x > (limit >> *k)) return std::nullopt;
      return *x << *k;
    }
    if (op->kind == K::Shr) {
      const std::optional<uint64_t> x = in(0), k = constant(1);
      return x && k && *k < 64 ? std::optional<uint64_t>(*x >> *k) : std::nullopt;
    }
    if (op->kind == K::Add || op->kind == K::Or) {  // a | b <= a + b for a, b >= 0
      const std::optional<uint64_t> a = in(0), b = in(1);
      return a && b ? within(*a + *b) : std::nullopt;
    }
    if (op->kind == K::Mul) {
      const std::optional<uint64_t> a = in(0), b = in(1);
      if (!a || !b || (*a != 0 && *b > limit / *a)) return std::nullopt;
      return *a * *b;
    }
    return std::nullopt;
  }

  // The bits v may have set, for a provably non-negative v: through and, or, shl and shr of
  // constants and the thread index the set bits are tracked exactly; any other bounded value
  // may set every bit below its bound's. nullopt when v is not bounded.
  std::optional<uint64_t> possible_bits(ir::ValueId v, int depth = 0) const {
    if (auto it = term_bounds_.find(v); it != term_bounds_.end())
      return it->second == 0 ? 0 : std::bit_ceil(it->second + 1) - 1;
    const ir::Op* op =
        v >= 0 && v < static_cast<ir::ValueId>(definers_.size()) ? definers_[v] : nullptr;
    if (!op || depth > kMaxDepth || !ir::is_integer(kernel_.type(v).dtype)) return std::nullopt;
    auto in = [&](size_t i) { return possible_bits(op->operands[i], depth + 1); };
    auto below_bound = [&]() -> std::optional<uint64_t> {
      const std::optional<uint64_t> b = bound(v);
      if (!b) return std::nullopt;
      return *b == 0 ? 0 : std::bit_ceil(*b + 1) - 1;
    };
    using K = ir::OpKind;
    if (op->kind == K::Constant) return bound(v);
    if (op->kind == K::And) {
      const std::optional<uint64_t> a = in(0), b = in(1);
      if (a && b) return *a & *b;
      return a ? a : b;
    }
    if (op->kind == K::Or) {
      const std::optional<uint64_t> a = in(0), b = in(1);
      return a && b ? std::optional<uint64_t>(*a | *b) : std::nullopt;
    }
    if (op->kind == K::Shl || op->kind == K::Shr) {
      const std::optional<uint64_t> x = in(0);
      const std::optional<uint64_t> k = bound(op->operands[1]);
      if (!x || !k || *k >= 64 || !below_bound()) return std::nullopt;
      return op->kind == K::Shl ? *x << *k : *x >> *k;
    }
    return below_bound();
  }

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
  // x as T + c modulo mask + 1: its terms (coefficients masked, zero ones dropped) and its
  // constant, for the dividends of floordiv and rem.
  static std::pair<Affine, uint64_t> terms_and_constant(Affine x, uint64_t mask) {
    const uint64_t c = x.constant & mask;
    x.constant = 0;
    for (auto it = x.terms.begin(); it != x.terms.end();) {
      it->second &= mask;
      it = it->second == 0 ? x.terms.erase(it) : std::next(it);
    }
    return {std::move(x), c};
  }

  // floordiv(x, 2^m) and rem(x, 2^m) of x = T + c, where T, the sum of x's terms, is
  // provably in [0, Tmax] (bound) and c >= 0 with Tmax + c in range: c = q * 2^m + r gives
  // floordiv(T, 2^m) + q and rem(T, 2^m) + r when adding r to T carries nothing past bit m,
  // which holds when T is a multiple of 2^g with r < 2^g, or when the terms that are not
  // multiples of 2^m (by their coefficients and their own known-zero low bits) sum to at
  // most 2^m - 1 - r: T % 2^m is that sum. Every value is non-negative, so C's truncating rem
  // and div are the floor ones (div is read as floordiv: Triton's `//` on tiles), and so are
  // `x & (2^m - 1)` and `x >> m`. floordiv(T, 2^m) and rem(T, 2^m) are terms of their own
  // (negative ids), shared by every x with the same T: row // 32 and row % 32 of four
  // adjacent elements differ by constants.
  std::optional<Affine> divided(ir::OpKind kind, ir::ValueId dividend, uint64_t divisor,
                                ir::DType dtype, int depth) {
    const int bits = bits_of(dtype);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t limit = mask >> 1;
    if (divisor == 0 || divisor > limit || !std::has_single_bit(divisor)) return std::nullopt;
    auto [x, c] = terms_and_constant(read(dividend, depth + 1), mask);
    if (x.terms.empty()) return std::nullopt;
    const int m = std::countr_zero(divisor);
    uint64_t t_max = 0, low_max = 0;
    for (const auto& [v, coefficient] : x.terms) {
      const std::optional<uint64_t> b = bound(v);
      if (!b || coefficient > limit || (*b != 0 && coefficient > limit / *b)) return std::nullopt;
      t_max += coefficient * *b;
      if (t_max > limit) return std::nullopt;
      const std::optional<uint64_t> set = possible_bits(v);
      const int zeros = set && *set ? std::countr_zero(*set) : 0;
      if (!(set && *set == 0) && std::countr_zero(coefficient) + zeros < m)
        low_max += coefficient * *b;
    }
    if (c > limit - t_max) return std::nullopt;
    const ir::OpKind as = kind == ir::OpKind::Rem ? ir::OpKind::Rem : ir::OpKind::FloorDiv;
    if (t_max + c < divisor) {  // x itself, or no quotient
      Affine whole = as == ir::OpKind::Rem ? x : Affine{};
      if (as == ir::OpKind::Rem) whole.constant = c;
      return whole;
    }
    const int g = std::min(known_zero_bits(x), m);
    const uint64_t q = c / divisor, r = c % divisor;
    if (r >= (uint64_t{1} << g) && low_max + r >= divisor) return std::nullopt;
    const auto key = std::make_tuple(static_cast<int>(as), x.terms, divisor);
    auto [it, made] = divided_terms_.try_emplace(key, next_divided_term_);
    if (made) {
      term_bounds_[next_divided_term_] = as == ir::OpKind::Rem ? divisor - 1 : t_max / divisor;
      --next_divided_term_;
    }
    Affine result;
    result.terms[it->second] = 1;
    result.constant = as == ir::OpKind::Rem ? r : q;
    return result;
  }

  // The divisor of floordiv, div and rem by a constant power of two; of `and` by 2^m - 1 and
  // `shr` by m, which divide a non-negative value as rem and floordiv by 2^m do.
  std::optional<Affine> divided(const ir::Op& op, ir::DType dtype, int depth) {
    const int bits = bits_of(dtype);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    auto constant_operand = [&](size_t i) -> std::optional<uint64_t> {
      const Affine a = read(op.operands[i], depth + 1);
      return a.is_constant() ? std::optional<uint64_t>(a.constant & mask) : std::nullopt;
    };
    using K = ir::OpKind;
    if (op.kind == K::And) {
      for (size_t i : {size_t{1}, size_t{0}})
        if (const std::optional<uint64_t> low = constant_operand(i);
            low && *low < mask && std::has_single_bit(*low + 1))
          return divided(K::Rem, op.operands[1 - i], *low + 1, dtype, depth);
      return std::nullopt;
    }
    const std::optional<uint64_t> d = constant_operand(1);
    if (!d) return std::nullopt;
    if (op.kind == K::Shr)
      return *d < static_cast<uint64_t>(bits - 1)
                 ? divided(K::FloorDiv, op.operands[0], uint64_t{1} << *d, dtype, depth)
                 : std::nullopt;
    return divided(op.kind, op.operands[0], *d, dtype, depth);
  }

  // rem(x, n) of x = T + c by a divisor n that is not a constant power of two (a runtime
  // size: Triton's `offs % N`), for a 32-bit x: rem(T, n) + c, rem(T, n) one term shared by
  // every x with the same T and n. This holds only while x's run of values does not cross a
  // multiple of n, so it stands for 32-bit indices alone, whose every group the grouper checks
  // at run time (the widened first and last index exactly the run apart): a crossing drops the
  // sum of the steps by n, fails the check and takes the scalar path.
  std::optional<Affine> runtime_remainder(const ir::Op& op, ir::DType dtype, int depth) {
    if (bits_of(dtype) > 32) return std::nullopt;
    const uint64_t mask = (uint64_t{1} << bits_of(dtype)) - 1;
    const Affine n = read(op.operands[1], depth + 1);
    auto [x, c] = terms_and_constant(read(op.operands[0], depth + 1), mask);
    if (x.terms.empty() || n.is_constant()) return std::nullopt;
    const auto key = std::make_tuple(x.terms, n.terms, n.constant & mask);
    auto [it, made] = remainder_terms_.try_emplace(key, next_divided_term_);
    if (made) --next_divided_term_;
    Affine result;
    result.terms[it->second] = 1;
    result.constant = c;
    return result;
  }

  using Reading = std::pair<std::map<ir::ValueId, uint64_t>, uint64_t>;

  // a * b of two non-constant values: one term per pair of equal readings, so that
  // `row * stride` computed twice from rows that read alike (the same floordiv term plus the
  // same constant) is the same term.
  Affine product(const Affine& a, const Affine& b, ir::DType dtype) {
    std::pair<Reading, Reading> operands{{a.terms, a.constant}, {b.terms, b.constant}};
    if (operands.second < operands.first) std::swap(operands.first, operands.second);
    auto [it, made] = product_terms_.try_emplace({bits_of(dtype), operands}, next_divided_term_);
    if (made) --next_divided_term_;
    Affine result;
    result.terms[it->second] = 1;
    return result;
  }

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
        return product(a, b, dtype);
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
        // Bits that cannot both be set: an addition without carries.
        const std::optional<uint64_t> sa = possible_bits(op->operands[0]),
                                      sb = possible_bits(op->operands[1]);
        if (sa && sb && (*sa & *sb) == 0) return add(a, b);
        return term;
      }
      // Between integers of one width (i32 <-> u32) a cast keeps every bit.
      case K::Cast: {
        const ir::DType from = kernel_.type(op->operands[0]).dtype;
        if (!kernel_.type(op->operands[0]).pointer && !kernel_.type(op->results[0]).pointer &&
            ir::is_integer(from) && ir::is_integer(dtype) && bits_of(from) == bits_of(dtype))
          return in(0);
        return term;
      }
      // Of a non-negative dividend (divided's condition) div rounds down as floordiv does.
      case K::Rem:
      case K::FloorDiv:
      case K::Div:
      case K::And:
      case K::Shr:
        if (std::optional<Affine> a = divided(*op, dtype, depth)) return *a;
        if (op->kind == K::Rem)
          if (std::optional<Affine> a = runtime_remainder(*op, dtype, depth)) return *a;
        return term;
      case K::ThreadgroupIndex:
      case K::ThreadgroupCount:
      case K::ThreadIndex:
      case K::SimdLane:
      case K::SimdGroup:
      case K::Min:
      case K::Max:
      case K::Xor:
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
      case K::InlineAsm:
      case K::Reshape:
      case K::Trans:
      case K::ReduceAxis:
      case K::ReduceCombine:
      case K::Scan:
      case K::XorPermute:
      case K::DeviceAssert:
      case K::DevicePrint:
      case K::AssertTrue:
      case K::Print:
      case K::Dot:
      case K::PtrAdd:
      case K::Load:
      case K::Store:
      case K::AtomicRmw:
      case K::AtomicCas:
      case K::PackedLoad:
      case K::PackedStore:
      case K::Extract:
      case K::Pack:
      case K::IsAligned:
      case K::MatrixFill:
      case K::MatrixLoad:
      case K::MatrixStore:
      case K::MatrixMma:
      case K::DeviceTileLoad:
      case K::DeviceTileStore:
      case K::DescriptorMatmul:
      case K::MppMatmul2d:
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
      case K::AsyncCopy:
      case K::AsyncCopyCommit:
      case K::AsyncCopyWait:
      case K::AsyncProxyFence:
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
      case K::While:
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
  // The terms floordiv(T, 2^m) and rem(T, 2^m), by (op kind, T, 2^m): ids below kNoValue.
  std::map<std::tuple<int, std::map<ir::ValueId, uint64_t>, uint64_t>, ir::ValueId> divided_terms_;
  std::map<std::tuple<std::map<ir::ValueId, uint64_t>, std::map<ir::ValueId, uint64_t>, uint64_t>,
           ir::ValueId>
      remainder_terms_;
  ir::ValueId next_divided_term_ = ir::kNoValue - 1;
  std::map<std::pair<int, std::pair<Reading, Reading>>, ir::ValueId> product_terms_;
  // The bounds of the floordiv and rem terms: 2^m - 1 and Tmax / 2^m.
  std::map<ir::ValueId, uint64_t> term_bounds_;
};

}  // namespace

class AffineReader : public Reader {
 public:
  using Reader::Reader;
};

IndexAnalysis::IndexAnalysis(const ir::Kernel& k) : kernel_(k), definers_(k.types.size()) {
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) definers_[r] = &op;
  });
  reader_ = std::make_unique<AffineReader>(kernel_, definers_);
}

IndexAnalysis::~IndexAnalysis() = default;

const ir::Op* IndexAnalysis::definer(ir::ValueId v) const {
  return v >= 0 && v < static_cast<ir::ValueId>(definers_.size()) ? definers_[v] : nullptr;
}

std::optional<int64_t> IndexAnalysis::constant_difference(ir::ValueId a, ir::ValueId b) const {
  const ir::Type &ta = kernel_.type(a), &tb = kernel_.type(b);
  if (ta != tb || !ta.is_scalar() || !ir::is_integer(ta.dtype)) return std::nullopt;
  const int bits = bits_of(ta.dtype);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const Affine d = add(reader_->read(b), reader_->read(a), ~uint64_t{0});
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
