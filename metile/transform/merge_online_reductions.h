#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/discovery/reduction_law.h"
#include "metile/ir/pass_result.h"

namespace metile::transform {

// One pair of loops the pass considered: merged under a verified reduction law, or left
// unchanged with the reason.
struct OnlineReductionRecord {
  std::string loops;  // "softmax.py:29 and softmax.py:35"
  bool merged = false;
  std::string law;                       // the law asked for ("log_sum_exp")
  std::vector<std::string> obligations;  // merged: the certificate's verified obligations
  int64_t cases_checked = 0;             // merged: the cases the checker evaluated
  std::string detail;                    // merged: what the loops became; otherwise why not
};

struct OnlineReductionMerge {
  ir::PassResult result;
  std::vector<OnlineReductionRecord> records;
};

// Merges a loop computing a running maximum of loaded data and the next loop, over the same
// range and the same loads, summing exp(x - m) with the first loop's final maximum m, into one
// loop carrying the state (m, d) of `law`, whose merge and lift it instantiates:
//   m' = max(m, x),  d' = d * rescale(m, m') + rescale(x, m'),  rescale(p, q) = exp(p - q),
//   and exactly 1 when p == q (so -inf states do not give exp(-inf - -inf) = NaN).
// The merge happens only when `law` describes the two loops (its reference is the maximum
// and the sum of exp(x - maximum)) and verify(law) returns a certificate.
// Three forms are recognised: scalar accumulators (m = max(m, max(x)), s = s + sum(exp(x - m))),
// the same per slice of a 2-D tile (max(x, axis), sum(exp(x - m[:, None]), axis)), and tiles
// of per-element running values reduced after the loops (m = max(m, x) and
// s = s + exp(x - max(m))), whose per-element sums are merged to the row's maximum after the
// loop. The maximum may run over where(mask, x, c) when the sum is of
// where(mask, exp(x - m), 0) with the same mask. Where the original sum is NaN (an element equal to
// an infinite maximum) the merged one is made NaN too, so the kernel computes what it did outside
// the law's domain as well. Every other pair of a running maximum (or minimum) loop and a summing
// loop is left unchanged and recorded with the reason: another reduction, different ranges or
// loads, a write between or inside the loops, another term than exp(x - m), extra carried values,
// initial values other than the identities, a law that does not fit or does not verify.
OnlineReductionMerge merge_online_reductions(
    ir::Kernel kernel, const discovery::ReductionLaw& law = discovery::laws::online_softmax());

}  // namespace metile::transform
