// Dependence-preserving list scheduling of compact FMA runs; the contract is in fma_schedule.h.
#include "metile/target/agx/fma_schedule.h"

#include <algorithm>
#include <limits>
#include <string>

#include "metile/support/errors.h"
#include "metile/target/agx/compact_fma.h"

namespace metile::target::agx {
namespace {

constexpr std::uint8_t kMoreFollow = 0x20;  // byte 2

struct Record {
  std::size_t offset;
  DecodedFma decoded;
  bool movable() const { return decoded.controls_known && !decoded.disabled; }
};

// Whether `later` must stay after `earlier`: each writes its own register and reads it and
// possibly an addend register, so any shared register other than two reads orders them.
bool depends(const CompactFma& earlier, const CompactFma& later) {
  return later.reads(earlier.reg) || earlier.reads(later.reg);
}

// The order that maximises, at each slot, the distance from the chosen instruction to its
// latest already-placed predecessor; ties go to the original order, so a run with no better
// order comes back unchanged.
std::vector<int> list_schedule(const std::vector<const Record*>& run) {
  const int n = int(run.size());
  std::vector<int> placed_at(n, -1), order;
  for (int slot = 0; slot < n; ++slot) {
    int best = -1;
    long best_gap = -1;
    for (int i = 0; i < n; ++i) {
      if (placed_at[i] >= 0) continue;
      bool ready = true;
      long latest = -1;
      for (int p = 0; p < i && ready; ++p) {
        if (!depends(run[p]->decoded.fma, run[i]->decoded.fma)) continue;
        ready = placed_at[p] >= 0;
        latest = std::max<long>(latest, placed_at[p]);
      }
      if (!ready) continue;
      const long gap = latest < 0 ? std::numeric_limits<long>::max() : slot - latest;
      if (gap > best_gap) best = i, best_gap = gap;
    }
    METILE_ASSERT(best >= 0, "a dependence cycle among straight-line instructions");
    placed_at[best] = slot;
    order.push_back(best);
  }
  return order;
}

}  // namespace

FmaScheduleResult schedule_compact_fmas(std::span<const std::uint8_t> code,
                                        std::span<const std::size_t> offsets) {
  std::vector<std::size_t> sorted(offsets.begin(), offsets.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<Record> records;
  for (std::size_t offset : sorted) {
    if (offset + kCompactFmaLength > code.size())
      throw UserError("agx schedule: the record at offset " + std::to_string(offset) +
                      " runs past the end of the code (" + std::to_string(code.size()) + " bytes)");
    if (!records.empty() && offset < records.back().offset + kCompactFmaLength)
      throw UserError("agx schedule: records at offsets " + std::to_string(records.back().offset) +
                      " and " + std::to_string(offset) + " overlap");
    records.push_back(
        {offset, decode_compact_fma(code.subspan(offset).first<kCompactFmaLength>())});
  }

  FmaScheduleResult result{std::vector<std::uint8_t>(code.begin(), code.end()), 0, {}, 0};
  auto flush = [&](std::vector<const Record*>& run) {
    if (run.empty()) return;
    result.runs.push_back(int(run.size()));
    const std::vector<int> order = list_schedule(run);
    for (std::size_t slot = 0; slot < run.size(); ++slot) {
      const Record& moved = *run[order[slot]];
      if (order[slot] != int(slot)) ++result.moved;
      std::uint8_t* to = result.code.data() + run[slot]->offset;
      std::copy_n(code.data() + moved.offset, kCompactFmaLength, to);
      to[2] = std::uint8_t((to[2] & ~kMoreFollow) | (code[run[slot]->offset + 2] & kMoreFollow));
    }
    run.clear();
  };
  std::vector<const Record*> run;
  for (const Record& record : records) {
    // Undecoded bytes between two records might be anything, so they end the run.
    if (!run.empty() && record.offset != run.back()->offset + kCompactFmaLength) flush(run);
    if (!record.movable()) {
      ++result.barriers;
      flush(run);
      continue;
    }
    run.push_back(&record);
  }
  flush(run);
  return result;
}

}  // namespace metile::target::agx
