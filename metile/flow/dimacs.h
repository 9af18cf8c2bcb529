// Reader for the DIMACS max-flow format (1-based vertex ids):
//   c comment            p max N M            n ID s | n ID t            a U V CAP
#pragma once

#include <istream>
#include <string>

#include "metile/flow/flow_network.h"

namespace metile::flow {

struct DimacsProblem {
  FlowNetwork network;  // vertex i of the file is vertex i - 1 here
  int source = 0;
  int sink = 0;
};

// UserError "<name>:<line>: <what is wrong>" on malformed input: missing or bad problem line,
// ids out of range, negative or non-integer capacities, missing or repeated terminals, an arc
// count that disagrees with the problem line, more than 2^20 declared vertices beyond those
// the arcs can touch (the solvers allocate per vertex), an unreadable stream. Bad tokens are
// quoted cut to 40 characters.
DimacsProblem read_dimacs_max_flow(std::istream& in, const std::string& name = "<input>");

}  // namespace metile::flow
