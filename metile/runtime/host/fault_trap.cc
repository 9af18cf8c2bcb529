#include "metile/runtime/host/fault_trap.h"

#include <ucontext.h>

#include <mutex>
#include <vector>

namespace metile::runtime::host {

namespace {

constexpr int kTrappedSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction previous_actions[NSIG];
thread_local FaultTrap* this_thread_trap = nullptr;

std::uintptr_t faulting_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

void on_fault(int signal, siginfo_t* info, void* context) {
  FaultTrap* trap = this_thread_trap;
  if (trap && trap->armed) {
    trap->armed = 0;
    trap->signal = signal;
    trap->code = info->si_code;
    trap->address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    trap->pc = faulting_pc(context);
    siglongjmp(trap->jump, 1);
  }
  // Not a kernel's fault: restore the previous disposition; the faulting instruction
  // runs again and faults into it.
  sigaction(signal, &previous_actions[signal], nullptr);
}

void install_handler_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = &on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int s : kTrappedSignals) sigaction(s, &action, &previous_actions[s]);
  });
}

// The handler must run off the faulting stack, which may be the exhausted fiber stack.
// Installed only where the thread has none; removed when the thread exits.
class AlternateStack {
 public:
  AlternateStack() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
    memory_.resize(64 * 1024);
    stack_t ours{};
    ours.ss_sp = memory_.data();
    ours.ss_size = memory_.size();
    sigaltstack(&ours, nullptr);
  }
  ~AlternateStack() {
    if (memory_.empty()) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }

 private:
  std::vector<unsigned char> memory_;
};

void ensure_alternate_stack() {
  static thread_local AlternateStack stack;
}

}  // namespace

FaultTrap& FaultTrap::for_this_thread() {
  static thread_local FaultTrap trap;
  if (!this_thread_trap) {
    install_handler_once();
    ensure_alternate_stack();
    this_thread_trap = &trap;
  }
  return trap;
}

}  // namespace metile::runtime::host
