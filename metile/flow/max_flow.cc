#include "metile/flow/dispatch.h"
#include "metile/flow/flow_network.h"
#include "metile/flow/solver.h"

namespace metile::flow {

MaxFlowResult max_flow(const FlowNetwork& net, int source, int sink, SolverKind kind) {
  switch (kind) {
    case SolverKind::Dinic:
      return SolverRegistry::global().get("dinic").solve(net, source, sink);
    case SolverKind::PushRelabel:
      return SolverRegistry::global().get("push-relabel").solve(net, source, sink);
    case SolverKind::Auto:
      break;
  }
  return dispatch_max_flow(net, source, sink);
}

}  // namespace metile::flow
