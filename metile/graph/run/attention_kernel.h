// The flash_attention node as one kernel: one program per BLOCK_M query rows of one batch
// entry; K and V are walked in BLOCK_N tiles with the online softmax (running max m, sum l,
// and the accumulator rescaled by exp(m_old - m_new): the weighted-softmax merge the node's
// certificate proves). With `causal`, the loop stops at the block holding the program's last
// row, so key blocks wholly above the diagonal are never loaded; the diagonal block is masked.
// Query and key lengths need not be multiples of the blocks (ragged tails are masked).
// q, kt and v are read through their views (views.h), so kt = transpose(k) is read in place;
// a kt and v batch axis of size 1 is shared by every q entry along it (grouped-query heads);
// when that axis is the innermost batch axis and the queries are shorter than a block, the
// group's heads are packed along M in one program (K/V loaded once per group).
#pragma once

#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

RegionKernel attention_kernel(const Graph& graph, const ViewPlan& views, int op_id,
                              const target::Target& target);

}  // namespace metile::graph
