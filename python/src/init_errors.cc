// C++ exceptions become Python exceptions: UserError -> CompilationError, NotSupported ->
// NotSupportedError, runtime::KernelFaultError -> KernelFaultError and OutOfResources ->
// OutOfResources (all CompilationErrors), InternalError -> InternalCompilerError. Each
// carries the user's source location (file, line) and the rule without the location.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "init.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"

namespace nb = nanobind;

namespace metile::python {

namespace {
PyObject* compilation_error = nullptr;
PyObject* not_supported_error = nullptr;
PyObject* out_of_resources = nullptr;
PyObject* internal_compiler_error = nullptr;
PyObject* kernel_fault_error = nullptr;

void raise(PyObject* type, const std::string& message, const SourceLocation& where,
           const std::string& rule) {
  nb::object error = nb::borrow(type)(message);
  error.attr("file") = where.known() ? nb::cast(where.file) : nb::none();
  error.attr("line") = where.known() ? nb::cast(where.line) : nb::none();
  error.attr("rule") = rule;
  PyErr_SetObject(type, error.ptr());
}

PyObject* new_exception(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  std::string qualified = std::string("metile._core.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::borrow(type);
  return type;
}
}  // namespace

void init_errors(nb::module_& m) {
  compilation_error = new_exception(
      m, "CompilationError", PyExc_Exception,
      "A kernel broke a rule of meTile. The message names the op, the rule and the user's "
      "source line; the attributes file, line and rule hold them separately.");
  not_supported_error =
      new_exception(m, "NotSupportedError", compilation_error,
                    "A feature of the meTile specification that is not built yet.");
  kernel_fault_error = new_exception(
      m, "KernelFaultError", compilation_error,
      "A kernel touched memory it does not own or faulted otherwise while it ran; on the GPU "
      "the message names the last kernel launched, and the CUDA context is unusable after it.");
  out_of_resources = new_exception(
      m, "OutOfResources", compilation_error,
      "A kernel or launch needs more than the device offers (tile elements, registers per "
      "thread, threads per threadgroup, threadgroup memory, grid size); the message names the "
      "kernel, the requested geometry and the limit.");
  internal_compiler_error =
      new_exception(m, "InternalCompilerError", PyExc_Exception,
                    "A bug in meTile itself; the message carries what is needed to reproduce it.");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const runtime::KernelFaultError& e) {
      raise(kernel_fault_error, e.what(), e.where(), e.rule());
    } catch (const NotSupported& e) {
      raise(not_supported_error, e.what(), e.where(), e.rule());
    } catch (const OutOfResources& e) {
      raise(out_of_resources, e.what(), e.where(), e.rule());
    } catch (const UserError& e) {
      raise(compilation_error, e.what(), e.where(), e.rule());
    } catch (const InternalError& e) {
      raise(internal_compiler_error, e.what(), {}, e.what());
    }
  });
}

}  // namespace metile::python
