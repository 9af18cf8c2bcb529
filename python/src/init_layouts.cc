// metile.ThreadLayout: the ownership algebra of seed 004 (metile/ir/thread_layout.h) as an
// immutable, hashable Python value. A broken rule (not a bijection, an index out of range)
// raises ValueError with the C++ rule's text.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>

#include "init.h"
#include "metile/ir/thread_layout.h"
#include "metile/support/errors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {

using ir::ThreadLayout;

// Runs f, turning the algebra's UserError into ValueError.
template <typename F>
auto checked(F&& f) {
  try {
    return f();
  } catch (const metile::UserError& e) {
    throw nb::value_error(e.rule().c_str());
  }
}

nb::tuple bit_order(const ThreadLayout& l) {
  nb::list bits;
  for (int b : l.bit_order()) bits.append(b);
  return nb::tuple(bits);
}

std::string repr(const ThreadLayout& l) {
  std::string bits;
  for (size_t i = 0; i < l.bit_order().size(); ++i)
    bits += (i ? ", " : "") + std::to_string(l.bit_order()[i]);
  if (l.bit_order().size() == 1) bits += ",";
  return "ThreadLayout((" + bits + "), xor_mask=" + std::to_string(l.xor_mask()) +
         ", elements_per_thread=" + std::to_string(l.elements_per_thread()) + ")";
}

size_t hash(const ThreadLayout& l) {
  size_t h =
      std::hash<int64_t>()(l.xor_mask()) * 31 + std::hash<int64_t>()(l.elements_per_thread());
  for (int b : l.bit_order()) h = h * 131 + std::hash<int>()(b);
  return h;
}

}  // namespace

void init_layouts(nb::module_& m) {
  nb::class_<ThreadLayout>(
      m, "ThreadLayout",
      "An immutable bijection between a tile's logical indices and (thread, register slot) "
      "(seed 004). Physical coordinates pack the thread bits first, then the register bits: "
      "physical = thread + register * thread_count. bit_order[logical_bit] names the physical "
      "bit placed at that logical bit position; xor_mask is then applied to the logical index.")
      .def(
          "__init__",
          [](ThreadLayout* self, std::vector<int> bits, int64_t xor_mask, int64_t per_thread) {
            checked([&] { return new (self) ThreadLayout(std::move(bits), xor_mask, per_thread); });
          },
          "bit_order"_a, "xor_mask"_a = 0, "elements_per_thread"_a = 1,
          "bit_order: a permutation of 0..n-1 (a layout of 2**n elements); xor_mask in "
          "[0, 2**n); elements_per_thread: a power of two, the register slots of each thread.")
      .def_static(
          "identity",
          [](int64_t size, int64_t per_thread) {
            return checked([&] { return ThreadLayout::identity(size, per_thread); });
          },
          "size"_a, "elements_per_thread"_a = 1,
          "The striped default: thread t owns logical indices t + r * thread_count.")
      .def(
          "logical_index",
          [](const ThreadLayout& l, int64_t thread, int64_t reg) {
            return checked([&] { return l.logical_index(thread, reg); });
          },
          "thread"_a, "register"_a = 0, "The logical index held by (thread, register).")
      .def(
          "owner",
          [](const ThreadLayout& l, int64_t index) {
            return checked([&] { return l.owner(index); });
          },
          "index"_a, "The thread holding a logical index.")
      .def(
          "register",
          [](const ThreadLayout& l, int64_t index) {
            return checked([&] { return l.register_of(index); });
          },
          "index"_a, "The register slot holding a logical index in its owner.")
      .def_prop_ro("size", &ThreadLayout::size, "The number of logical elements.")
      .def_prop_ro("thread_count", &ThreadLayout::thread_count, "The number of physical threads.")
      .def_prop_ro("elements_per_thread", &ThreadLayout::elements_per_thread,
                   "The register slots of each thread.")
      .def_prop_ro("bit_order", &bit_order, "The bit permutation, as a tuple.")
      .def_prop_ro("xor_mask", &ThreadLayout::xor_mask, "The XOR applied to logical indices.")
      .def(
          "__eq__",
          [](const ThreadLayout& a, nb::handle b) {
            return nb::isinstance<ThreadLayout>(b) && a == nb::cast<const ThreadLayout&>(b);
          },
          "other"_a.none())
      .def(
          "__ne__",
          [](const ThreadLayout& a, nb::handle b) {
            return !nb::isinstance<ThreadLayout>(b) || !(a == nb::cast<const ThreadLayout&>(b));
          },
          "other"_a.none())
      .def("__hash__", &hash)
      .def(
          "__reduce__",
          [](const ThreadLayout& l) {
            return nb::make_tuple(
                nb::type<ThreadLayout>(),
                nb::make_tuple(bit_order(l), l.xor_mask(), l.elements_per_thread()));
          },
          "Pickles and copies by value.")
      .def("__repr__", &repr)
      .def("__str__", &ThreadLayout::str, "'identity(1024 elements, 256 threads, 4 per thread)'.");
}

}  // namespace metile::python
