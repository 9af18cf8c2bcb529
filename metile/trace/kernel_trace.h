// The tracing core both frontends drive: metile::dsl (C++) and @metile.kernel (Python, through
// python/src/init_ir.cc). One kernel being traced: its Tile IR, the TileBuilder that checks
// each op, and the rules no single op can check: parameters have unique names,
// a value is not used outside the region that defined it, a loop-carried value keeps its
// type, and buffer and descriptor accesses follow what the body does (infer_access.h).
//
// The frontend sets the user's source line on builder() before each call; user errors
// raised here carry it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "metile/ir/builder.h"
#include "metile/ir/ir.h"

namespace metile::trace {

class KernelTrace {
 public:
  // `escape_hint` ends the error for a value used outside its region: how to fix that in the
  // frontend's own terms.
  KernelTrace(const std::string& name, std::string escape_hint);
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  ir::TileBuilder& builder();
  const ir::Kernel& kernel() const { return kernel_; }
  const ir::Type& type(ir::ValueId v) const { return kernel_.type(v); }
  // The id the next value gets: values with ids in [a, b) were made between two calls.
  ir::ValueId next_value_id() const { return static_cast<ir::ValueId>(kernel_.types.size()); }

  // Parameters, declared at any point (finish() numbers them first). A buffer's access is read,
  // write or read_write, checked against what the body does; "" takes the access the body implies.
  // divisibility: a power of two the argument is a multiple of (a buffer's address in bytes;
  // an integer's value), as the specialisation found it; 1 when nothing is known.
  ir::ValueId add_buffer(const std::string& name, ir::DType dtype, const std::string& access,
                         int64_t divisibility = 1);
  ir::ValueId add_scalar(const std::string& name, ir::DType dtype, int64_t divisibility = 1);

  // A constexpr the kernel is specialised with, recorded as a kernel attribute.
  void set_constexpr(const std::string& name, ir::Attr value);
  // Threads per threadgroup asked for by the author (attribute num_threads, read by the
  // thread planner).
  void set_num_threads(int64_t n);

  // `v`, after checking it was not defined inside a region that has closed; `op` names the
  // operation in the error.
  ir::ValueId use(ir::ValueId v, const std::string& op) const;
  bool usable(ir::ValueId v) const;

  // A descriptor over the buffer `base`; access "" follows the buffer's. Loads and stores
  // through a descriptor must fit the access it was declared with.
  ir::ValueId make_tensor(ir::ValueId base, const std::vector<ir::ValueId>& dims,
                          const std::vector<ir::ValueId>& strides, const std::string& access);
  ir::ValueId tensor_load(ir::ValueId desc, const std::vector<ir::ValueId>& coords);
  void tensor_store(ir::ValueId desc, const std::vector<ir::ValueId>& coords, ir::ValueId value);

  // Structured control flow. `body`, `then_branch`, `else_branch` name the region in the
  // error for a value that escapes it ("a tile_range body").
  ir::Builder::ForScope begin_for(ir::ValueId start, ir::ValueId end, ir::ValueId step,
                                  const std::vector<ir::ValueId>& inits, std::string body);
  std::vector<ir::ValueId> end_for(const std::vector<ir::ValueId>& yields);
  // Drops the innermost open loop (the Python tracer re-traces a body whose carried types
  // changed); its values stay unusable.
  void abandon_for();
  void begin_if(ir::ValueId cond, std::string then_branch);
  void begin_else(const std::vector<ir::ValueId>& then_yields, std::string else_branch);
  std::vector<ir::ValueId> end_if(const std::vector<ir::ValueId>& else_yields);

  // A while loop (Builder::begin_while): `condition` and `body` name its regions in the error
  // for a value that escapes them.
  std::vector<ir::ValueId> begin_while(const std::vector<ir::ValueId>& inits,
                                       std::string condition);
  std::vector<ir::ValueId> begin_while_body(ir::ValueId cond,
                                            const std::vector<ir::ValueId>& passed,
                                            std::string body);
  std::vector<ir::ValueId> end_while(const std::vector<ir::ValueId>& yields);
  // Drops the innermost open while; its values stay unusable.
  void abandon_while();

  // metile.reduce's combine region (Builder::begin_reduce_combine); `what` names it in the error
  // for a value that escapes it.
  std::vector<ir::ValueId> begin_reduce_combine(const std::vector<ir::ValueId>& tiles, int64_t axis,
                                                std::string what);
  std::vector<ir::ValueId> end_reduce_combine(const std::vector<ir::ValueId>& yields);

  // Ends the trace: fixes the inferred accesses, checks the declared ones, and hands the
  // kernel over. The trace cannot be used afterwards.
  ir::Kernel finish();

 private:
  [[noreturn]] void fail(const std::string& op, const std::string& rule) const;
  void check_open() const;
  bool is_param(ir::ValueId v) const;
  void check_new_param(const std::string& what, const std::string& name) const;
  void check_descriptor_access(ir::ValueId desc, const char* needed, const std::string& op) const;
  void close_region(ir::ValueId end, std::string what);
  void infer_accesses();

  ir::Kernel kernel_;
  ir::TileBuilder builder_;
  std::string escape_hint_;
  bool finished_ = false;
  std::set<int> inferred_params_;                            // buffers declared with access ""
  std::set<ir::ValueId> inferred_descriptors_;               // descriptors made with access ""
  std::map<ir::ValueId, std::string> declared_descriptors_;  // the others, with their access
  // Regions that have closed: a use of their values outside would break SSA dominance.
  struct ClosedRegion {
    ir::ValueId first, end;
    std::string what;
  };
  std::vector<ClosedRegion> closed_;
  // The regions being built, innermost last: where their values start, their name, and for
  // loops the carried types.
  struct OpenRegion {
    ir::ValueId first;
    std::string what;
    std::vector<ir::Type> carried_types;
  };
  std::vector<OpenRegion> open_;
};

}  // namespace metile::trace
