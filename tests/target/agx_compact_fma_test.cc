// The compact F32 FMA codec against seed 003's measured field map: known bytes, round trips
// over every representable immediate, and refusals that name the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "metile/support/errors.h"
#include "metile/target/agx/compact_fma.h"

namespace metile::target::agx {
namespace {

using ::testing::HasSubstr;

// `a = fma(a, 2, 1)` on r0 in the middle of a run, as the compiler writes it.
constexpr CompactFmaBytes kTwoAPlusOne = {0x09, 0x01, 0x2e, 0xc1, 0x21, 0xb0, 0x02, 0x02};

TEST(AgxImmediate, DecodesTheMeasuredFormat) {
  EXPECT_EQ(decode_immediate(0xb0), 1.0);   // e = 11, m = 0
  EXPECT_EQ(decode_immediate(0xc1), 2.0);   // shared low bit ignored
  EXPECT_EQ(decode_immediate(0xb4), 1.25);  // m = 2
  EXPECT_EQ(decode_immediate(0x00), std::ldexp(1.0, -11));
  EXPECT_EQ(decode_immediate(0xfe), 1.875 * 16);
}

TEST(AgxImmediate, EveryByteRoundTrips) {
  for (int byte = 0; byte < 256; ++byte) {
    const bool low = byte & 1;
    EXPECT_EQ(encode_immediate(decode_immediate(std::uint8_t(byte)), low), byte) << byte;
  }
}

TEST(AgxImmediate, RefusesValuesWithNoExactEncoding) {
  for (double bad : {0.0, -1.0, 1.0 / 0.0, 0.3, 64.0, 1e-5}) {
    try {
      encode_immediate(bad, true);
      ADD_FAILURE() << bad << " encoded";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("agx immediate")) << bad;
    }
  }
  EXPECT_THROW(encode_immediate(1.0625, true), UserError);  // between mantissa steps
}

TEST(AgxCompactFma, AssemblesTheCompilersOwnBytes) {
  CompactFma fma{.reg = 0, .multiplier = 2, .addend_kind = AddendKind::Immediate, .addend = 1};
  fma.last_in_run = false;
  EXPECT_EQ(encode_compact_fma(fma), kTwoAPlusOne);
  fma.last_in_run = true;
  EXPECT_EQ(encode_compact_fma(fma)[2], 0x0e);  // the end of a run clears "more follow"
}

TEST(AgxCompactFma, FlagsLandInTheirMeasuredBits) {
  CompactFma fma{.reg = 3, .multiplier = 1.5, .addend_kind = AddendKind::Immediate, .addend = -2};
  fma.negate_product = true;
  const CompactFmaBytes b = encode_compact_fma(fma);
  EXPECT_EQ(b[0], 0x39);
  EXPECT_EQ(b[1], 0x07);
  EXPECT_EQ(b[2], 0x1e);  // product negate, last in run
  EXPECT_EQ(b[3], 0xb9);  // 1.5 with the low bit set
  EXPECT_EQ(b[4], 0x31);  // immediate addend, negated
  EXPECT_EQ(b[5], 0xc0);  // 2.0 with the low bit clear
  CompactFma add{.reg = 5, .multiplier = 1, .addend_kind = AddendKind::Register};
  add.addend_register = 7;
  const CompactFmaBytes r = encode_compact_fma(add);
  EXPECT_EQ(r[4], 0x01);  // register addend
  EXPECT_EQ(r[5], 0x0e);  // r7 << 1
  CompactFma zero{.reg = 1, .multiplier = 7};
  EXPECT_EQ(encode_compact_fma(zero)[5], 0x58);  // r44, beyond the file, reads zero
}

TEST(AgxCompactFma, DecodeInvertsEncodeAcrossTheForm) {
  int checked = 0;
  for (int reg = 0; reg < kArchitecturalRegisters; reg += 5)
    for (int m = 0; m < 256; m += 7)
      for (int kind = 0; kind < 3; ++kind)
        for (bool negate : {false, true})
          for (bool last : {false, true}) {
            CompactFma fma{.reg = reg, .multiplier = decode_immediate(std::uint8_t(m | 1))};
            fma.addend_kind = AddendKind(kind);
            if (fma.addend_kind == AddendKind::Immediate)
              fma.addend = (negate ? -1 : 1) * decode_immediate(std::uint8_t((255 - m) & ~1));
            if (fma.addend_kind == AddendKind::Register) fma.addend_register = (reg + 3) % 16;
            if (fma.addend_kind == AddendKind::Zero) fma.addend_register = 44;
            fma.negate_product = negate;
            fma.last_in_run = last;
            const CompactFmaBytes bytes = encode_compact_fma(fma);
            const DecodedFma decoded = decode_compact_fma(bytes);
            EXPECT_EQ(decoded.fma, fma);
            EXPECT_TRUE(decoded.controls_known);
            EXPECT_FALSE(decoded.disabled);
            EXPECT_EQ(encode_compact_fma(decoded.fma), bytes);
            ++checked;
          }
  EXPECT_GT(checked, 1000);
}

TEST(AgxCompactFma, UnknownBitsAreReportedNotGuessed) {
  for (auto [byte, bit] : {std::pair{2, 0x01}, {2, 0x40}, {4, 0x02}, {6, 0x40}, {7, 0x20}}) {
    CompactFmaBytes b = kTwoAPlusOne;
    b[byte] |= bit;
    EXPECT_FALSE(decode_compact_fma(b).controls_known) << byte << " " << bit;
  }
  CompactFmaBytes disabled = kTwoAPlusOne;
  disabled[6] |= 0x20;
  const DecodedFma d = decode_compact_fma(disabled);
  EXPECT_TRUE(d.disabled);
  EXPECT_TRUE(d.controls_known);
}

TEST(AgxCompactFma, RefusesBytesThatAreNotTheForm) {
  CompactFmaBytes nop = {0x06, 0x00, 0x0e, 0, 0, 0, 0, 0};
  EXPECT_THAT([&] { decode_compact_fma(nop); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("not a compact fma")));
  CompactFmaBytes split = kTwoAPlusOne;
  split[1] = 0x05;  // byte 1 names r2, byte 0 r0
  EXPECT_THAT([&] { decode_compact_fma(split); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("disagrees with itself")));
  CompactFma out_of_file{.reg = 16, .multiplier = 1};
  EXPECT_THAT([&] { encode_compact_fma(out_of_file); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("destination register r16")));
}

}  // namespace
}  // namespace metile::target::agx
