// The areas of the extension metile._core; module.cc calls each init_<area> once.
#pragma once

#include <nanobind/nanobind.h>

namespace metile::python {

void init_errors(nanobind::module_& m);  // CompilationError and friends, C++ translation
// The warnings the C++ core reported (metile/support/warnings.h) since the last call, raised
// as Python warnings by metile.disk_cache.core_warning; call with the GIL held, after a call
// into the core that may warn (compiling). init_errors installs the handler collecting them.
void raise_core_warnings();
void init_layouts(nanobind::module_& m);  // ThreadLayout (thread ownership)
void init_ir(nanobind::module_& m);       // Tile IR kernels and the tracer's builder
void init_compile(nanobind::module_& m);  // compile(), CompiledKernel, launch
void init_runtime(nanobind::module_& m);  // device buffers
void init_graph(nanobind::module_& m);    // GraphBuilder, plan_graph_fusion
void init_tune(nanobind::module_& m);     // the guarded runtime's gate and selector
// ReductionLaw, Certificate, LawRefuted
void init_discovery(nanobind::module_& m);

}  // namespace metile::python
