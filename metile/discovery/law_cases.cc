#include "metile/discovery/law_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace metile::discovery {

std::vector<double> domain_values(Domain d) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values{0.0, 1.0, -1.0, 2.5, -3.75, 1e-6, 40.0, -40.0, 700.0, -700.0};
  switch (d) {
    case Domain::Finite:
      break;
    case Domain::FiniteOrNegInf:
      values.push_back(-inf);
      break;
    case Domain::Extended:
      values.push_back(-inf);
      values.push_back(inf);
      break;
  }
  return values;
}

namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

LawCases generate_cases(const ReductionLaw& law) {
  LawCases cases;
  std::vector<std::vector<double>> values;
  size_t count = 0;
  for (const ElementComponent& c : law.element) {
    values.push_back(domain_values(c.domain));
    count = std::max(count, values.back().size());
  }
  for (size_t j = 0; j < count; ++j) {
    Element e;
    for (size_t k = 0; k < law.element.size(); ++k)
      e[law.element[k].name] = values[k][(j + 3 * k) % values[k].size()];
    cases.elements.push_back(std::move(e));
  }
  for (const Element& x : cases.elements) cases.lists.push_back({x});
  for (const Element& x : cases.elements)
    for (const Element& y : cases.elements) cases.lists.push_back({x, y});
  uint64_t seed = 0x6d6554696c65ull;  // "meTile"
  for (int i = 0; i < kRandomLists; ++i) {
    int length = 3 + static_cast<int>(splitmix64(seed) % (kMaxListLength - 2));
    std::vector<Element> list;
    for (int j = 0; j < length; ++j)
      list.push_back(cases.elements[splitmix64(seed) % cases.elements.size()]);
    cases.lists.push_back(std::move(list));
  }
  return cases;
}

bool in_domain(const ReductionLaw& law, const std::vector<Element>& list) {
  for (const ElementComponent& c : law.element) {
    if (c.domain != Domain::FiniteOrNegInf) continue;
    bool finite = std::any_of(list.begin(), list.end(),
                              [&](const Element& e) { return std::isfinite(e.at(c.name)); });
    if (!finite) return false;
  }
  return true;
}

}  // namespace metile::discovery
