// Turns a hardware fault inside a running kernel (SIGSEGV, SIGBUS, SIGFPE, and SIGILL from
// the checks the host build puts before integer divisions and shifts) into an error
// instead of a crash. A worker arms its trap around kernel execution; the process-wide
// handler (on an alternate signal stack, so a stack overflow can be caught) records the
// fault and siglongjmps back to the worker, which abandons the threadgroup and reports.
// Faults outside an armed region go to the previous handler (the default: a crash).
#pragma once

#include <csetjmp>
#include <csignal>
#include <cstdint>

namespace metile::runtime::host {

struct FaultTrap {
  sigjmp_buf jump;
  volatile std::sig_atomic_t armed = 0;
  int signal = 0;
  int code = 0;
  std::uintptr_t address = 0;
  std::uintptr_t pc = 0;  // the faulting instruction, 0 when unknown

  // This OS thread's trap; installs the handler and an alternate signal stack on first use.
  static FaultTrap& for_this_thread();
};

// Sets the trap's jump point; returns nonzero when a fault came back to it. A macro,
// because sigsetjmp must be called in the frame it returns to.
#define METILE_FAULT_TRAP_SET(trap) sigsetjmp((trap).jump, 1)

}  // namespace metile::runtime::host
