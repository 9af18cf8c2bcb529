// metile._core: the C++ core as seen from Python. The package metile wraps it; users never
// import _core directly.
#include "init.h"

NB_MODULE(_core, m) {
  m.doc() = "meTile's C++ core: Tile IR tracing, compilation and launch (used by metile)";
  metile::python::init_errors(m);
  metile::python::init_layouts(m);
  metile::python::init_ir(m);
  metile::python::init_compile(m);
  metile::python::init_runtime(m);
  metile::python::init_graph(m);
  metile::python::init_tune(m);
  metile::python::init_discovery(m);
}
