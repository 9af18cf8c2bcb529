// Graph-level discovery: the materialised attention chain becomes one flash_attention node,
// only under a verified weighted-softmax certificate (seed 001, "Proof-Carrying Discovery").
//
// The chain, anchored at each softmax:
//   s = matmul(q, kt)   t = scale(s, f)   [u = causal_mask(t)]   p = softmax(.)   o = matmul(p, v)
// A softmax whose input is not (optionally masked) scaled scores of a matmul, or whose result is
// not the left operand of a matmul, is not an attention chain and is not reported. A chain that
// is one is rewritten, or kept with the reason in the report, when
//   - an intermediate (s, t, u, p) escapes: a graph output, or read by an op outside the chain;
//   - the softmax does not reduce the last axis (the key axis);
//   - the shapes are incompatible: q, kt and v must have equal batch dimensions (the node
//     does not broadcast);
//   - the law does not describe the chain (its reference is not softmax-weighted sum of
//     values), does not admit -inf scores when the chain is masked, or fails an obligation;
//   - the node's kernel estimate exceeds the target's registers or threadgroup memory.
// The rewritten graph keeps every other op, in order; the certificate rides on the node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/discovery/reduction_law.h"
#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/graph_ir.h"

namespace metile::graph {

struct AttentionRewrite {
  std::vector<int> replaced;                 // op ids of the chain in the original graph
  std::vector<std::string> replaced_labels;  // "%4 = matmul", ...
  int node = -1;                             // the flash_attention op's id in the rewritten graph
  double scale = 1;
  bool causal = false;
  int64_t bytes_saved = 0;  // intermediates no longer written and read back
  int launches_saved = 0;   // chain ops - 1
  discovery::Certificate certificate;
};

struct RejectedRewrite {
  std::string rewrite;                 // "flash_attention"
  std::vector<std::string> op_labels;  // the chain as far as it matched, original graph
  std::string reason;
};

struct DiscoveryOptions {
  bool attention = true;
  // The law that must license the rewrite; tests pass wrong ones to see the rewrite refused.
  discovery::ReductionLaw attention_law = discovery::laws::weighted_softmax();
};

struct DiscoveryResult {
  Graph graph;  // the input graph when nothing was rewritten
  std::vector<AttentionRewrite> rewrites;
  std::vector<RejectedRewrite> rejected;
};

DiscoveryResult discover_attention(const Graph& graph, const CostModel& cost,
                                   const DiscoveryOptions& options = {});

}  // namespace metile::graph
