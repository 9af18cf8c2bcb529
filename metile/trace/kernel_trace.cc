#include "metile/trace/kernel_trace.h"

#include "metile/trace/infer_access.h"
#include "metile/trace/params_first.h"

namespace metile::trace {

namespace {
bool is_access(const std::string& a) {
  return a == "read" || a == "write" || a == "read_write";
}
}  // namespace

KernelTrace::KernelTrace(const std::string& name, std::string escape_hint)
    : builder_(kernel_), escape_hint_(std::move(escape_hint)) {
  kernel_.dialect = ir::Dialect::Tile;
  kernel_.name = name;
}

void KernelTrace::fail(const std::string& op, const std::string& rule) const {
  throw UserError(op + ": " + rule, builder_.location());
}

void KernelTrace::check_open() const {
  METILE_ASSERT(!finished_, "the trace of kernel " + kernel_.name + " has finished");
}

ir::TileBuilder& KernelTrace::builder() {
  check_open();
  return builder_;
}

void KernelTrace::check_new_param(const std::string& what, const std::string& name) const {
  check_open();
  if (name.empty()) fail(what, "a parameter needs a name");
  for (const ir::Param& p : kernel_.params)
    if (p.name == name) fail(what + " '" + name + "'", "a parameter of that name exists");
}

ir::ValueId KernelTrace::add_buffer(const std::string& name, ir::DType dtype,
                                    const std::string& access, int64_t divisibility) {
  check_new_param("buffer", name);
  if (!access.empty() && !is_access(access))
    fail("buffer '" + name + "'", "access must be read, write or read_write, got '" + access + "'");
  if (dtype == ir::DType::i1) fail("buffer '" + name + "'", "i1 buffers are not supported");
  // An inferred access is provisional until finish() sees what the body did.
  if (access.empty()) inferred_params_.insert(static_cast<int>(kernel_.params.size()));
  return builder_.add_param(name, ir::Type::ptr(dtype), access.empty() ? "read" : access,
                            divisibility);
}

ir::ValueId KernelTrace::add_scalar(const std::string& name, ir::DType dtype,
                                    int64_t divisibility) {
  check_new_param("scalar", name);
  return builder_.add_param(name, ir::Type::scalar(dtype), "", divisibility);
}

void KernelTrace::set_constexpr(const std::string& name, ir::Attr value) {
  check_open();
  if (name == "num_threads")
    fail("constexpr '" + name + "'", "the name is reserved for the threads per threadgroup");
  kernel_.attrs[name] = std::move(value);
}

void KernelTrace::set_num_threads(int64_t n) {
  check_open();
  if (n <= 0) fail("num_threads", "needs a positive thread count, got " + std::to_string(n));
  kernel_.attrs["num_threads"] = n;
}

bool KernelTrace::is_param(ir::ValueId v) const {
  for (const ir::Param& p : kernel_.params)
    if (p.value == v) return true;
  return false;
}

bool KernelTrace::usable(ir::ValueId v) const {
  if (is_param(v)) return true;  // declared inside a region, a parameter still outlives it
  for (const ClosedRegion& r : closed_)
    if (v >= r.first && v < r.end) return false;
  return true;
}

ir::ValueId KernelTrace::use(ir::ValueId v, const std::string& op) const {
  if (is_param(v)) return v;
  for (const ClosedRegion& r : closed_)
    if (v >= r.first && v < r.end)
      fail(op, "value %" + std::to_string(v) + " was defined inside " + r.what +
                   " and cannot be used outside it; " + escape_hint_);
  return v;
}

ir::ValueId KernelTrace::make_tensor(ir::ValueId base, const std::vector<ir::ValueId>& dims,
                                     const std::vector<ir::ValueId>& strides,
                                     const std::string& access) {
  // A placeholder access for an inferred one; finish() replaces it.
  ir::ValueId d =
      builder().make_tensor(base, dims, strides, access.empty() ? "read_write" : access);
  if (access.empty())
    inferred_descriptors_.insert(d);
  else
    declared_descriptors_[d] = access;
  return d;
}

void KernelTrace::check_descriptor_access(ir::ValueId desc, const char* needed,
                                          const std::string& op) const {
  auto declared = declared_descriptors_.find(desc);
  if (declared != declared_descriptors_.end() && declared->second.find(needed) == std::string::npos)
    fail(op, "the tensor was declared with access='" + declared->second + "'");
}

ir::ValueId KernelTrace::tensor_load(ir::ValueId desc, const std::vector<ir::ValueId>& coords) {
  check_descriptor_access(desc, "read", "tensor.load");
  return builder().tensor_load(desc, coords);
}

void KernelTrace::tensor_store(ir::ValueId desc, const std::vector<ir::ValueId>& coords,
                               ir::ValueId value) {
  check_descriptor_access(desc, "write", "tensor.store");
  builder().tensor_store(desc, coords, value);
}

ir::Builder::ForScope KernelTrace::begin_for(ir::ValueId start, ir::ValueId end, ir::ValueId step,
                                             const std::vector<ir::ValueId>& inits,
                                             std::string body) {
  OpenRegion region{next_value_id(), std::move(body), {}};
  for (ir::ValueId v : inits) region.carried_types.push_back(type(v));
  ir::Builder::ForScope scope = builder().begin_for(start, end, step, inits);
  open_.push_back(std::move(region));
  return scope;
}

void KernelTrace::close_region(ir::ValueId end, std::string what) {
  closed_.push_back({open_.back().first, end, std::move(what)});
  open_.pop_back();
}

std::vector<ir::ValueId> KernelTrace::end_for(const std::vector<ir::ValueId>& yields) {
  METILE_ASSERT(!open_.empty() && open_.back().carried_types.size() == yields.size(),
                "end_for yields one value per carried value");
  const std::vector<ir::Type>& types = open_.back().carried_types;
  for (size_t i = 0; i < yields.size(); ++i)
    if (type(yields[i]) != types[i])
      fail("tile_range",
           "loop-carried value " + std::to_string(i) + " changes type from " + types[i].str() +
               " to " + type(yields[i]).str() +
               " in the loop body; a carried value keeps one type (start tile state with "
               "full(shape, value, dtype), or cast)");
  const ir::ValueId end = next_value_id();  // the loop's results are usable after it
  std::vector<ir::ValueId> results = builder().end_for(yields);
  close_region(end, open_.back().what);
  return results;
}

void KernelTrace::abandon_for() {
  METILE_ASSERT(!open_.empty(), "no open loop to abandon");
  builder().abandon_for();
  close_region(next_value_id(), "an abandoned trace of " + open_.back().what);
}

void KernelTrace::begin_if(ir::ValueId cond, std::string then_branch) {
  builder().begin_if(cond);
  open_.push_back({next_value_id(), std::move(then_branch), {}});
}

void KernelTrace::begin_else(const std::vector<ir::ValueId>& then_yields, std::string else_branch) {
  const ir::ValueId end = next_value_id();
  builder().begin_else(then_yields);
  close_region(end, open_.back().what);
  open_.push_back({next_value_id(), std::move(else_branch), {}});
}

std::vector<ir::ValueId> KernelTrace::end_if(const std::vector<ir::ValueId>& else_yields) {
  const ir::ValueId end = next_value_id();
  std::vector<ir::ValueId> results = builder().end_if(else_yields);
  close_region(end, open_.back().what);
  return results;
}

std::vector<ir::ValueId> KernelTrace::begin_while(const std::vector<ir::ValueId>& inits,
                                                  std::string condition) {
  const ir::ValueId first = next_value_id();
  std::vector<ir::ValueId> args = builder().begin_while(inits);
  open_.push_back({first, std::move(condition), {}});
  return args;
}

std::vector<ir::ValueId> KernelTrace::begin_while_body(ir::ValueId cond,
                                                       const std::vector<ir::ValueId>& passed,
                                                       std::string body) {
  const ir::ValueId end = next_value_id();
  std::vector<ir::ValueId> args = builder().begin_while_body(cond, passed);
  close_region(end, open_.back().what);
  open_.push_back({end, std::move(body), {}});
  return args;
}

std::vector<ir::ValueId> KernelTrace::end_while(const std::vector<ir::ValueId>& yields) {
  const ir::ValueId end = next_value_id();
  std::vector<ir::ValueId> results = builder().end_while(yields);
  close_region(end, open_.back().what);
  return results;
}

void KernelTrace::abandon_while() {
  METILE_ASSERT(!open_.empty(), "no open while to abandon");
  builder().abandon_while();
  close_region(next_value_id(), "an abandoned trace of " + open_.back().what);
}

std::vector<ir::ValueId> KernelTrace::begin_reduce_combine(const std::vector<ir::ValueId>& tiles,
                                                           int64_t axis, std::string what) {
  const ir::ValueId first = next_value_id();
  std::vector<ir::ValueId> args = builder().begin_reduce_combine(tiles, axis);
  open_.push_back({first, std::move(what), {}});
  return args;
}

std::vector<ir::ValueId> KernelTrace::end_reduce_combine(const std::vector<ir::ValueId>& yields) {
  const ir::ValueId end = next_value_id();
  std::vector<ir::ValueId> results = builder().end_reduce_combine(yields);
  close_region(end, open_.back().what);
  return results;
}

void KernelTrace::infer_accesses() {
  const BufferUses uses = find_buffer_uses(kernel_, inferred_descriptors_);
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    ir::Param& p = kernel_.params[i];
    const BufferUse& use = uses.params[i];
    if (inferred_params_.count(static_cast<int>(i))) {
      p.access = implied_access(use);
      continue;
    }
    // A declared access must allow what the body does.
    const std::string fix = "; declare it read_write, or leave the access out to infer it";
    if (p.access == "read" && use.writes)
      throw UserError(
          "store: buffer '" + p.name + "' is declared read but the kernel writes it" + fix,
          use.first_write);
    if (p.access == "write" && use.reads)
      throw UserError(
          "load: buffer '" + p.name + "' is declared write but the kernel reads it" + fix,
          use.first_read);
  }
  // A descriptor without an access of its own takes its buffer's (read_write for several).
  ir::walk(kernel_.body, [&](ir::Op& op) {
    if (op.kind != ir::OpKind::MakeTensor || !inferred_descriptors_.count(op.results[0])) return;
    std::set<std::string> accesses;
    for (int i : uses.descriptor_buffers.at(op.results[0]))
      accesses.insert(kernel_.params[i].access);
    op.attrs["access"] = accesses.size() == 1 ? *accesses.begin() : "read_write";
  });
}

ir::Kernel KernelTrace::finish() {
  check_open();
  METILE_ASSERT(open_.empty() && builder_.open_regions() == 0,
                "a region of kernel " + kernel_.name + " is open");
  infer_accesses();
  number_params_first(kernel_);
  finished_ = true;
  return std::move(kernel_);
}

}  // namespace metile::trace
