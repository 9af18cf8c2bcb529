// The emitter of a work-group function (workgroup_emitter.h), shared by its three files:
// workgroup_emitter.cc plans where each value lives, workgroup_thread_loops.cc writes the
// thread loops (with their guarded second version) and workgroup_rendezvous.cc the barriers,
// collectives and uniform control flow between them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "metile/codegen/c_emitter.h"
#include "metile/codegen/host/workgroup_steps.h"

namespace metile::codegen::workgroup {

// Per-thread arrays live on the worker's stack (8 MiB); a kernel needing more runs on fibers.
constexpr int64_t kMaxArrayBytes = int64_t{2} << 20;
// The host compiler spends milliseconds on each thread loop, and more per loop the more loops
// one function holds (a straight-line chain of 1,000 reductions: 75 s, against 4 s on
// fibers; benchmarks/compile_scaling.py); a kernel needing more loops runs on fibers.
constexpr int kMaxThreadLoops = 256;
// Each op of a thread loop is compiled three times (the body function and the loop's two
// versions), and the host compiler's time per op grows with the size of the function holding
// it (a straight-line kernel of 10,000 exps: 387 s); past this many ops in its thread loops a
// kernel runs on fibers, and its module calls the math functions out of line (math_functions.h).
constexpr int64_t kMaxThreadLoopOps = 16384;

// Where each value lives in the work-group function.
enum class Storage : uint8_t {
  Scalar,  // one C variable for the threadgroup: parameters, uniform ops, loop counters
  Local,   // a C variable inside one thread loop
  Array,   // one element per thread, read and written at [thread]
};

class WorkgroupEmitter : public CEmitter {
 public:
  WorkgroupEmitter(const ir::Kernel& k, const CDialect& d, const target::Target& t,
                   const KernelABI& abi, std::vector<bool> uniform);

  // Plans storage; returns why the function would be too large to build, or "".
  std::string plan();
  // The function's statements; plan() first.
  std::string statements();

 private:
  // ---- planning (workgroup_emitter.cc): the same walk as emission, counting thread loops ----
  void use(ir::ValueId v, int segment);
  void define(ir::ValueId v, int segment, Storage s);
  // A uniform op computed once, before the thread loop.
  bool hoistable(const ir::Op& op, bool after_a_write) const;
  void plan_block(const ir::Block& block);

  // ---- names (workgroup_emitter.cc) ----
  std::string array(ir::ValueId v) const { return "metile_wg_" + name(v); }
  // v as the thread `thread` sees it.
  std::string per_thread(ir::ValueId v, const std::string& thread = "metile_tid") const {
    return storage_[v] == Storage::Array ? array(v) + "[" + thread + "]" : name(v);
  }
  // A uniform value: every thread holds the same, so thread 0's stands for all.
  std::string uniform_value(ir::ValueId v) const {
    return storage_[v] == Storage::Array ? array(v) + "[0]" : name(v);
  }
  std::string declared(ir::ValueId v) const {
    return (type(v).pointer ? "" : "const ") + type_of(v) + " ";
  }
  void declare_array(ir::ValueId v);

  // ---- thread loops (workgroup_thread_loops.cc) ----
  struct Guards {
    std::set<ir::ValueId> values;
    std::set<const ir::Op*> slice;
    std::set<const ir::Op*> accesses;
  };
  void open_thread_loop();
  void close_loop();
  void emit_steps(const ir::Block& block);
  Guards guards_of(const std::vector<const ir::Op*>& looped) const;
  void emit_reads(int segment);
  void emit_thread_loop(const std::vector<const ir::Op*>& looped, int segment,
                        const std::set<ir::ValueId>& known_true);

  // ---- rendezvous and uniform control flow (workgroup_rendezvous.cc) ----
  void emit_rendezvous(const ir::Op& op);
  void copy_yields(const ir::Block& region, const std::vector<ir::ValueId>& targets);
  void emit_uniform_for(const ir::Op& op);
  void emit_uniform_if(const ir::Op& op);
  void emit_collective(const ir::Op& op);
  void emit_shuffle(const ir::Op& op);

  const KernelABI& abi_;
  const int64_t threads_;
  const std::vector<bool> uniform_;
  std::vector<Storage> storage_;
  std::vector<int> defined_in_;      // the thread loop (segment) defining a value, or -1
  std::set<const ir::Op*> hoisted_;  // uniform ops computed once, before the thread loop
  std::set<ir::ValueId> escapes_;
  std::map<int, std::set<ir::ValueId>> reads_;  // per segment: values of other segments
  int segments_ = 0;
  int thread_loops_ = 0;         // the thread loops plan() counted
  int64_t thread_loop_ops_ = 0;  // and the ops in them
};

}  // namespace metile::codegen::workgroup
