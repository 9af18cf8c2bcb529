// Reorders compact FMAs (compact_fma.h) inside AGX machine code so dependent instructions sit
// further apart, preserving every register dependence, as seed 003's native scheduler does.
// Pure logic over caller-supplied instruction boundaries: no Mac needed to run or test it.
//
// The instruction stream cannot be walked (no length field survived measurement), so the
// caller supplies the offsets it confirmed behaviourally. Anything the scheduler cannot prove
// it understands is a barrier nothing crosses: undecoded bytes between records, an FMA with
// unknown control bits, a disabled FMA. Instructions are moved, never rewritten, except
// byte 2's positional "more follow" bit, which belongs to the slot, not the instruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace metile::target::agx {

struct FmaScheduleResult {
  std::vector<std::uint8_t> code;  // same length as the input
  int moved = 0;                   // records whose slot changed
  std::vector<int> runs;           // lengths of the reorderable runs, in code order
  int barriers = 0;                // records left in place: unknown controls or disabled
};

// `offsets` are the byte offsets of confirmed compact FMAs, in any order. Throws UserError for
// an offset past the end, overlapping records, or bytes that are not the form.
FmaScheduleResult schedule_compact_fmas(std::span<const std::uint8_t> code,
                                        std::span<const std::size_t> offsets);

}  // namespace metile::target::agx
