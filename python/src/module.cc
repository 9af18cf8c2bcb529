// metile._core: the C++ core as seen from Python. The package metile wraps it; users never
// import _core directly.
#include <cstdlib>
#include <cstring>

#include "init.h"

NB_MODULE(_core, m) {
  m.doc() = "meTile's C++ core: Tile IR tracing, compilation and launch (used by metile)";
  // At exit nanobind reports every binding object still referenced as leaked. meTile drops its
  // own caches at exit (kernel.py), but what other libraries keep alive through shutdown
  // (torch.compile's guards hold the globals of the modules they compiled: user-defined
  // layouts, reduction laws, kernels) is not a leak a user can act on, so the report is off
  // unless METILE_LEAK_WARNINGS=1 (tests/python/test_shutdown.py sets it).
  const char* warnings = std::getenv("METILE_LEAK_WARNINGS");
  nanobind::set_leak_warnings(warnings && std::strcmp(warnings, "1") == 0);
  metile::python::init_errors(m);
  metile::python::init_layouts(m);
  metile::python::init_ir(m);
  metile::python::init_compile(m);
  metile::python::init_runtime(m);
  metile::python::init_graph(m);
  metile::python::init_tune(m);
  metile::python::init_discovery(m);
}
