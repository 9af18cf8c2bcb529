// The case set the law checker evaluates an obligation on when normalisation cannot decide
// it. Fixed and deterministic (no clock, no global seed); docs/discovery.md lists it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "metile/discovery/reduction_law.h"

namespace metile::discovery {

using Element = std::map<std::string, double>;  // element component -> value

struct LawCases {
  std::vector<Element> elements;            // every value of every component appears
  std::vector<std::vector<Element>> lists;  // lengths 1 to kMaxListLength
};

inline constexpr int kRandomLists = 48;
inline constexpr int kMaxListLength = 6;

// The values of a domain: 0, 1, -1, 2.5, -3.75, 1e-6, 40, -40, 700, -700, then -inf
// (FiniteOrNegInf, Extended) and +inf (Extended). 700 is near the largest argument whose exp
// a double holds, so a law that exponentiates without subtracting the maximum overflows.
std::vector<double> domain_values(Domain d);

// Elements: element j has component k's value number (j + 3k) mod |values of k|, for j up
// to the largest value count. Lists: every element alone, every ordered pair, and
// kRandomLists lists of length 3 to kMaxListLength drawn with splitmix64 from a fixed seed.
LawCases generate_cases(const ReductionLaw& law);

// True when, for every FiniteOrNegInf component, some element of `list` is finite there (a
// fully masked list is outside such a law's domain: its reference is NaN).
bool in_domain(const ReductionLaw& law, const std::vector<Element>& list);

}  // namespace metile::discovery
