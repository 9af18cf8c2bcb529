// The compact F32 FMA codec; the field map is in compact_fma.h.
#include "metile/target/agx/compact_fma.h"

#include <cmath>
#include <string>

#include "metile/support/errors.h"

namespace metile::target::agx {
namespace {

constexpr std::uint8_t kOpcodeNibble = 0x09;
constexpr std::uint8_t kModeBase = 0x0E;
constexpr std::uint8_t kProductNegate = 0x10;
constexpr std::uint8_t kMoreFollow = 0x20;
constexpr std::uint8_t kControlBase = 0x01;
constexpr std::uint8_t kAddendNegate = 0x10;
constexpr std::uint8_t kAddendImmediate = 0x20;
constexpr std::uint8_t kTail = 0x02;
constexpr std::uint8_t kDisable = 0x20;
// Register 44: above the sixteen the field reaches, so it reads zero (the immediate field has
// no zero).
constexpr int kDefaultZeroRegister = 44;
constexpr int kImmediateBias = 11;
constexpr int kMantissaSteps = 8;

void check_register(int r, const char* field) {
  if (r < 0 || r >= kArchitecturalRegisters)
    throw UserError(std::string("agx compact fma: ") + field + " register r" + std::to_string(r) +
                    " is outside the field (r0..r15)");
}

}  // namespace

double decode_immediate(std::uint8_t byte) {
  const int exponent = (byte >> 4) - kImmediateBias;
  const int mantissa = (byte >> 1) & 0x07;
  return std::ldexp(1.0 + double(mantissa) / kMantissaSteps, exponent);
}

std::uint8_t encode_immediate(double value, bool low_bit) {
  const std::string shown = std::to_string(value);
  if (!(value > 0) || !std::isfinite(value))
    throw UserError("agx immediate " + shown +
                    " has no encoding: the field holds positive finite values only");
  int exponent = int(std::floor(std::log2(value)));
  const double steps = (value / std::ldexp(1.0, exponent) - 1.0) * kMantissaSteps;
  int mantissa = int(std::lround(steps));
  if (mantissa == kMantissaSteps) ++exponent, mantissa = 0;
  const int biased = exponent + kImmediateBias;
  if (biased < 0 || biased > 15)
    throw UserError("agx immediate " + shown + " is outside the field's range [2^-11, 1.875*2^4]");
  const auto byte = std::uint8_t((biased << 4) | (mantissa << 1) | (low_bit ? 1 : 0));
  if (decode_immediate(byte) != value)
    throw UserError("agx immediate " + shown +
                    " is not exactly representable ((1 + m/8) * 2^e, m in 0..7)");
  return byte;
}

CompactFmaBytes encode_compact_fma(const CompactFma& fma) {
  check_register(fma.reg, "destination");
  std::uint8_t mode = kModeBase;
  if (!fma.last_in_run) mode |= kMoreFollow;
  if (fma.negate_product) mode |= kProductNegate;
  std::uint8_t control = kControlBase;
  std::uint8_t addend = 0;
  switch (fma.addend_kind) {
    case AddendKind::Immediate:
      control |= kAddendImmediate;
      if (fma.addend < 0) control |= kAddendNegate;
      addend = encode_immediate(std::fabs(fma.addend), false);
      break;
    case AddendKind::Register:
      check_register(fma.addend_register, "addend");
      addend = std::uint8_t(fma.addend_register << 1);
      break;
    case AddendKind::Zero: {
      const int zero = fma.addend_register >= kArchitecturalRegisters ? fma.addend_register
                                                                      : kDefaultZeroRegister;
      if (zero > 127) throw UserError("agx compact fma: zero-addend register index exceeds 127");
      addend = std::uint8_t(zero << 1);
      break;
    }
  }
  return {std::uint8_t((fma.reg << 4) | kOpcodeNibble),
          std::uint8_t((fma.reg << 1) | 1),
          mode,
          encode_immediate(fma.multiplier, true),
          control,
          addend,
          kTail,
          kTail};
}

DecodedFma decode_compact_fma(std::span<const std::uint8_t, kCompactFmaLength> b) {
  if ((b[0] & 0x0F) != kOpcodeNibble || (b[2] & kModeBase) != kModeBase)
    throw UserError("agx: the bytes at this boundary are not a compact fma (opcode nibble " +
                    std::to_string(b[0] & 0x0F) + ", mode byte " + std::to_string(b[2]) + ")");
  DecodedFma out;
  CompactFma& fma = out.fma;
  fma.reg = b[0] >> 4;
  if (b[1] != ((fma.reg << 1) | 1))
    throw UserError("agx: a compact fma disagrees with itself about its register: byte 0 says r" +
                    std::to_string(fma.reg) + ", byte 1 says r" + std::to_string(b[1] >> 1));
  fma.negate_product = b[2] & kProductNegate;
  fma.last_in_run = !(b[2] & kMoreFollow);
  fma.multiplier = decode_immediate(b[3]);
  if (b[4] & kAddendImmediate) {
    fma.addend_kind = AddendKind::Immediate;
    fma.addend = decode_immediate(b[5]);
    if (b[4] & kAddendNegate) fma.addend = -fma.addend;
  } else {
    fma.addend_register = b[5] >> 1;
    fma.addend_kind =
        fma.addend_register < kArchitecturalRegisters ? AddendKind::Register : AddendKind::Zero;
  }
  out.disabled = b[6] & kDisable;
  // Bits outside the measured fields: byte 2's 0x01 redirects an operand (seen, never pinned
  // down), 0x40/0x80; byte 4 beyond its two flags; the shared low bits of the operand bytes; a
  // negated register addend; bytes 6 and 7 beyond the retire flag.
  const bool addend_low_ok = (b[5] & 1) == 0;
  const bool negate_ok = (b[4] & kAddendImmediate) || !(b[4] & kAddendNegate);
  out.controls_known = (b[2] & ~(kModeBase | kProductNegate | kMoreFollow)) == 0 &&
                       (b[3] & 1) == 1 &&
                       (b[4] & ~(kAddendImmediate | kAddendNegate)) == kControlBase &&
                       addend_low_ok && negate_ok && (b[6] & ~kDisable) == kTail && b[7] == kTail;
  return out;
}

}  // namespace metile::target::agx
