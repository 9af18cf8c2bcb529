// The compact FMA scheduler: reordered code computes bit-identical registers (checked by a
// plain C++ interpreter of the test's own instruction list), dependent instructions move
// apart, and unknown controls, disabled instructions and undecoded bytes are barriers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "metile/support/errors.h"
#include "metile/target/agx/compact_fma.h"
#include "metile/target/agx/fma_schedule.h"

namespace metile::target::agx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Registers = std::array<float, kArchitecturalRegisters>;

CompactFma chain(int reg, double multiplier, double addend) {
  return {.reg = reg,
          .multiplier = multiplier,
          .addend_kind = AddendKind::Immediate,
          .addend = addend,
          .last_in_run = false};
}
CompactFma add_register(int reg, int source) {
  CompactFma fma{.reg = reg, .multiplier = 1, .addend_kind = AddendKind::Register};
  fma.addend_register = source;
  fma.last_in_run = false;
  return fma;
}

std::vector<std::uint8_t> assemble(std::vector<CompactFma> program) {
  std::vector<std::uint8_t> code;
  for (std::size_t i = 0; i < program.size(); ++i) {
    program[i].last_in_run = i + 1 == program.size();
    for (std::uint8_t b : encode_compact_fma(program[i])) code.push_back(b);
  }
  return code;
}

std::vector<std::size_t> offsets(std::size_t count, std::size_t start = 0) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(start + i * kCompactFmaLength);
  return out;
}

// The semantics seed 003 measured, applied in f32 with a single rounding per instruction.
void run(const CompactFma& fma, Registers& r) {
  float addend = 0;
  if (fma.addend_kind == AddendKind::Immediate) addend = float(fma.addend);
  if (fma.addend_kind == AddendKind::Register) addend = r[fma.addend_register];
  const float product_sign = fma.negate_product ? -1.0f : 1.0f;
  r[fma.reg] = std::fma(product_sign * r[fma.reg], float(fma.multiplier), addend);
}

Registers interpret(std::span<const std::uint8_t> code, std::span<const std::size_t> at) {
  Registers r;
  for (int i = 0; i < kArchitecturalRegisters; ++i) r[i] = 0.25f * float(i + 1);
  for (std::size_t offset : at) {
    const DecodedFma d = decode_compact_fma(code.subspan(offset).first<kCompactFmaLength>());
    if (!d.disabled) run(d.fma, r);
  }
  return r;
}

std::vector<int> registers_in_order(std::span<const std::uint8_t> code, std::size_t count) {
  std::vector<int> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(code[i * kCompactFmaLength] >> 4);
  return out;
}

TEST(AgxFmaSchedule, InterleavesIndependentChainsAndKeepsTheResult) {
  const std::vector<std::uint8_t> code =
      assemble({chain(1, 2, 1), chain(1, 2, 1), chain(1, 2, 1), chain(2, 1.5, 0.5),
                chain(2, 1.5, 0.5), chain(2, 1.5, 0.5)});
  const auto at = offsets(6);
  const FmaScheduleResult s = schedule_compact_fmas(code, at);
  EXPECT_THAT(registers_in_order(s.code, 6), ElementsAre(1, 2, 1, 2, 1, 2));
  EXPECT_EQ(s.moved, 4);
  EXPECT_THAT(s.runs, ElementsAre(6));
  EXPECT_EQ(interpret(s.code, at), interpret(code, at));
  // "More follow" stays with the slots: set on all but the last.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bool(s.code[i * 8 + 2] & 0x20), i != 5) << i;
}

TEST(AgxFmaSchedule, AnInterleavedRunComesBackByteIdentical) {
  const std::vector<std::uint8_t> code =
      assemble({chain(1, 2, 1), chain(2, 2, 1), chain(1, 2, 1), chain(2, 2, 1)});
  const FmaScheduleResult s = schedule_compact_fmas(code, offsets(4));
  EXPECT_EQ(s.code, code);
  EXPECT_EQ(s.moved, 0);
}

TEST(AgxFmaSchedule, AnAddendRegisterIsADependence) {
  // r3 += r1 must follow every write of r1 before it and precede every write after it.
  const std::vector<std::uint8_t> code = assemble(
      {chain(1, 2, 1), chain(1, 2, 1), add_register(3, 1), chain(1, 4, 1), chain(2, 2, 1)});
  const auto at = offsets(5);
  const FmaScheduleResult s = schedule_compact_fmas(code, at);
  EXPECT_EQ(interpret(s.code, at), interpret(code, at));
  const std::vector<int> order = registers_in_order(s.code, 5);
  const auto pos3 = std::find(order.begin(), order.end(), 3) - order.begin();
  EXPECT_EQ(std::count(order.begin(), order.begin() + pos3, 1), 2);
}

TEST(AgxFmaSchedule, RandomProgramsKeepEveryRegisterBitExact) {
  std::mt19937 rng(33);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<CompactFma> program;
    const int n = 2 + int(rng() % 14);
    for (int i = 0; i < n; ++i) {
      const int reg = int(rng() % 4);
      if (rng() % 3 == 0) {
        program.push_back(add_register(reg, int(rng() % 4)));
      } else {
        CompactFma fma = chain(reg, decode_immediate(std::uint8_t(0xa1 + 2 * (rng() % 24))),
                               decode_immediate(std::uint8_t(0x90 + 2 * (rng() % 24))));
        fma.negate_product = rng() % 2;
        program.push_back(fma);
      }
    }
    const std::vector<std::uint8_t> code = assemble(program);
    const auto at = offsets(program.size());
    const FmaScheduleResult s = schedule_compact_fmas(code, at);
    ASSERT_EQ(s.code.size(), code.size());
    EXPECT_EQ(interpret(s.code, at), interpret(code, at)) << "trial " << trial;
  }
}

TEST(AgxFmaSchedule, UnknownControlsAndDisabledInstructionsAreBarriers) {
  std::vector<std::uint8_t> code = assemble({chain(1, 2, 1), chain(1, 2, 1), chain(2, 2, 1),
                                             chain(2, 2, 1), chain(1, 2, 1), chain(2, 2, 1)});
  code[2 * 8 + 2] |= 0x01;  // the third instruction has byte 2's unidentified bit
  const auto at = offsets(6);
  const FmaScheduleResult s = schedule_compact_fmas(code, at);
  EXPECT_EQ(s.barriers, 1);
  EXPECT_THAT(s.runs, ElementsAre(2, 3));
  // Nothing crossed the barrier: the first two slots still hold r1's instructions unchanged.
  EXPECT_TRUE(std::equal(code.begin(), code.begin() + 24, s.code.begin()));
  EXPECT_THAT(registers_in_order(s.code, 6), ElementsAre(1, 1, 2, 2, 1, 2));

  std::vector<std::uint8_t> retired = assemble({chain(1, 2, 1), chain(2, 2, 1), chain(1, 2, 1)});
  retired[8 + 6] |= 0x20;
  const FmaScheduleResult r = schedule_compact_fmas(retired, offsets(3));
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.code, retired);
}

TEST(AgxFmaSchedule, UndecodedBytesBetweenRecordsEndARun) {
  std::vector<std::uint8_t> code = assemble({chain(1, 2, 1), chain(1, 2, 1)});
  code.insert(code.end(), {0x06, 0x00});  // a two-byte nop the caller did not list
  const std::vector<std::uint8_t> tail = assemble({chain(2, 2, 1), chain(2, 2, 1)});
  code.insert(code.end(), tail.begin(), tail.end());
  const std::vector<std::size_t> at = {0, 8, 18, 26};
  const FmaScheduleResult s = schedule_compact_fmas(code, at);
  EXPECT_THAT(s.runs, ElementsAre(2, 2));
  EXPECT_EQ(s.code, code);
}

TEST(AgxFmaSchedule, RefusesRecordsOutsideOrOverlapping) {
  const std::vector<std::uint8_t> code = assemble({chain(1, 2, 1)});
  const std::vector<std::size_t> past = {4};
  EXPECT_THAT([&] { schedule_compact_fmas(code, past); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("runs past the end")));
  const std::vector<std::uint8_t> two = assemble({chain(1, 2, 1), chain(1, 2, 1)});
  const std::vector<std::size_t> overlap = {0, 4};
  EXPECT_THAT([&] { schedule_compact_fmas(two, overlap); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("overlap")));
}

}  // namespace
}  // namespace metile::target::agx
