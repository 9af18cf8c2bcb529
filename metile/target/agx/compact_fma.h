// The compact F32 FMA of Apple's AGX (G17) machine code, as seed 003 measured it: the one
// instruction form meTile can assemble and decode. Every field below was established by
// patching a binary archive and predicting the result on the GPU; nothing else of the
// instruction set is claimed. A byte whose meaning is unknown is never guessed: the decoder
// reports it (`controls_known`), and the scheduler (fma_schedule.h) treats it as a barrier.
//
// Form, eight bytes on an eight-byte stride, computing `r = (+/-) r * multiplier (+/-) addend`:
//   0  (r << 4) | 9            opcode nibble 9, register high nibble
//   1  (r << 1) | 1            the register again
//   2  0x0E | flags            0x10 negates the product; 0x20 "more follow in this run"
//   3  immediate, low bit 1    the multiplier
//   4  0x01 | flags            0x20 addend slot is an immediate (clear: a register); 0x10 negates
//   it 5  addend                  immediate with low bit 0, or register `a << 1` 6  0x02 0x20
//   retires (disables) the instruction 7  0x02                    other values were seen on chain
//   heads; meaning unknown
// Immediates hold (1 + m/8) * 2^(e - 11) as (e << 4) | (m << 1) | low_bit: positive only, no
// zero. Register indices at or above 16 read zero, which is how a zero addend is written.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace metile::target::agx {

inline constexpr std::size_t kCompactFmaLength = 8;
inline constexpr int kArchitecturalRegisters = 16;
using CompactFmaBytes = std::array<std::uint8_t, kCompactFmaLength>;

// Encodes a positive float into the eight-bit operand field. `low_bit` is the bit the field
// shares with its neighbour (1 for the multiplier slot, 0 for the addend slot). Throws
// UserError for a value with no exact encoding (zero, negative, non-finite, out of range,
// between representable steps): the nearest byte would corrupt a kernel silently.
std::uint8_t encode_immediate(double value, bool low_bit);
double decode_immediate(std::uint8_t byte);

enum class AddendKind { Immediate, Register, Zero };

// One compact FMA's meaning. `addend` is signed (a negative one sets the addend-negate flag).
struct CompactFma {
  int reg = 0;
  double multiplier = 1.0;
  AddendKind addend_kind = AddendKind::Zero;
  double addend = 0.0;      // AddendKind::Immediate
  int addend_register = 0;  // AddendKind::Register, below kArchitecturalRegisters
  bool negate_product = false;
  bool last_in_run = true;  // clears byte 2's "more follow" bit

  // The registers the instruction reads; `reg` is always both read and written.
  bool reads(int r) const {
    return r == reg || (addend_kind == AddendKind::Register && r == addend_register);
  }
  bool operator==(const CompactFma&) const = default;
};

// Assembles the eight bytes. Throws UserError naming the field a value does not fit.
CompactFmaBytes encode_compact_fma(const CompactFma& fma);

// What the decoder read from eight bytes at a caller-confirmed boundary.
struct DecodedFma {
  CompactFma fma;
  // Every bit outside the measured fields holds the value the compiler writes. False when
  // any does not: the instruction may mean something else and must not move.
  bool controls_known = true;
  bool disabled = false;  // byte 6's retire flag: executes as a nop
};

// Decodes bytes the caller has confirmed to be a compact FMA (seed 003: boundaries come from
// behavioural probes, never from pattern matching). Throws UserError when the bytes are not
// the form at all (wrong opcode nibble, the two register copies disagree, an operand byte
// with the wrong shared bit).
DecodedFma decode_compact_fma(std::span<const std::uint8_t, kCompactFmaLength> bytes);

}  // namespace metile::target::agx
