// C++ exceptions become Python exceptions: UserError -> CompilationError, NotSupported ->
// NotSupportedError and OutOfResources -> OutOfResources (both CompilationErrors),
// InternalError -> InternalCompilerError, KernelFaultError -> KernelFaultError (a run-time
// fault, not a CompilationError). Each carries the user's source location (file, line) and the rule
// without the location.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <mutex>
#include <vector>

#include "init.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"
#include "metile/support/warnings.h"

namespace nb = nanobind;

namespace metile::python {

namespace {
// Warnings reported by the core (on any thread, without the GIL) and not yet raised.
std::mutex pending_mutex;
std::vector<Warning> pending_warnings;

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

void raise_fault(const runtime::KernelFaultError& e) {
  const runtime::FaultSite& s = e.site();
  nb::object error = nb::borrow(kernel_fault_error)(e.what());
  error.attr("file") = e.where().known() ? nb::cast(e.where().file) : nb::none();
  error.attr("line") = e.where().known() ? nb::cast(e.where().line) : nb::none();
  error.attr("rule") = e.rule();
  error.attr("kernel") = s.kernel;
  error.attr("threadgroup") =
      s.thread ? nb::cast(nb::make_tuple(s.threadgroup[0], s.threadgroup[1], s.threadgroup[2]))
               : nb::none();
  error.attr("thread") = s.thread ? nb::cast(*s.thread) : nb::none();
  error.attr("buffer") = s.buffer.empty() ? nb::none() : nb::cast(s.buffer);
  error.attr("offset") = s.byte_offset ? nb::cast(*s.byte_offset) : nb::none();
  PyErr_SetObject(kernel_fault_error, error.ptr());
}

PyObject* new_exception(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  std::string qualified = std::string("metile._core.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::borrow(type);
  return type;
}
}  // namespace

void raise_core_warnings() {
  std::vector<Warning> warnings;
  {
    std::lock_guard lock(pending_mutex);
    warnings.swap(pending_warnings);
  }
  if (warnings.empty()) return;
  nb::object report = nb::module_::import_("metile.disk_cache").attr("core_warning");
  for (const Warning& w : warnings) report(w.category, w.subject, w.reason, w.message);
}

void init_errors(nb::module_& m) {
  set_warning_handler([](const Warning& warning) {
    std::lock_guard lock(pending_mutex);
    pending_warnings.push_back(warning);
  });
  compilation_error = new_exception(
      m, "CompilationError", PyExc_Exception,
      "A kernel broke a rule of meTile. The message names the op, the rule and the user's "
      "source line; the attributes file, line and rule hold them separately.");
  not_supported_error =
      new_exception(m, "NotSupportedError", compilation_error,
                    "A feature of the meTile specification that is not built yet.");
  out_of_resources = new_exception(
      m, "OutOfResources", compilation_error,
      "A kernel or launch needs more than the device offers (tile elements, registers per "
      "thread, threads per threadgroup, threadgroup memory, grid size); the message names the "
      "kernel, the requested geometry and the limit.");
  internal_compiler_error =
      new_exception(m, "InternalCompilerError", PyExc_Exception,
                    "A bug in meTile itself; the message carries what is needed to reproduce it.");

  kernel_fault_error = new_exception(
      m, "KernelFaultError", PyExc_RuntimeError,
      "A kernel faulted while it ran: an out-of-bounds access, an integer division by zero, "
      "a threadgroup-memory race, a stack overflow. The attributes file and line name the "
      "kernel's source line where it is known; kernel, threadgroup, thread, buffer and offset "
      "say where (None when unknown). The process stays usable on the host; on the GPU the message "
      "names the last kernel launched, and the CUDA context is unusable after it.");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const runtime::KernelFaultError& e) {
      raise_fault(e);
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
