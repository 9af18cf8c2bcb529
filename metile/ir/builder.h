// Builders for Tile IR and Metal IR. `Builder` appends ops at an insertion point (a block,
// possibly nested in a loop or if); `TileBuilder` adds the validated Tile IR operations the
// frontends (metile::dsl, the Python tracer) use. Every rule a frontend can break is
// checked here and reported as a UserError naming the op, the rule and the values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::ir {

class Builder {
 public:
  explicit Builder(Kernel& kernel);

  Kernel& kernel() { return kernel_; }
  // A copy: creating an op may grow the kernel's type list, so a reference held across a
  // create would read freed memory.
  Type type(ValueId v) const { return kernel_.type(v); }

  // The location attached to ops created from now on (the user's source line).
  void set_location(SourceLocation loc) { loc_ = std::move(loc); }
  const SourceLocation& location() const { return loc_; }

  // Appends a kernel parameter (and its block argument). Its value comes after those made so
  // far; a tracer that allows late parameters numbers them first (trace/params_first.h).
  ValueId add_param(const std::string& name, Type type, const std::string& access = "",
                    int64_t divisibility = 1);

  // Appends an op with fresh results of the given types; returns the results.
  std::vector<ValueId> create(OpKind kind, std::vector<ValueId> operands,
                              std::vector<Type> result_types, Attrs attrs = {},
                              std::vector<Block> regions = {});
  // The same for an op with exactly one result.
  ValueId create1(OpKind kind, std::vector<ValueId> operands, Type result_type, Attrs attrs = {});

  // Structured control flow. begin_* opens a region and moves the insertion point inside;
  // end_* closes it with a yield of `yields` and returns the op's results.
  struct ForScope {
    ValueId induction_var;
    std::vector<ValueId> carried;  // the region arguments, one per init value
  };
  ForScope begin_for(ValueId start, ValueId end, ValueId step, const std::vector<ValueId>& inits);
  std::vector<ValueId> end_for(const std::vector<ValueId>& yields);
  // Drops the innermost open loop and everything built in it (the Python tracer re-traces a
  // loop body when a carried value changes type).
  void abandon_for();

  void begin_if(ValueId cond);
  // Ends the then-region with `yields` and opens the else-region.
  void begin_else(const std::vector<ValueId>& then_yields);
  std::vector<ValueId> end_if(const std::vector<ValueId>& else_yields);

  // while (scf.while): begin_while opens the before-region and returns its arguments (one per
  // init); begin_while_body ends it with the i1 scalar `cond` and the values passed on (the
  // inits' types), opens the after-region and returns its arguments; end_while ends that with
  // the next carried values and returns the loop's results (the values passed on when cond
  // is false).
  std::vector<ValueId> begin_while(const std::vector<ValueId>& inits);
  std::vector<ValueId> begin_while_body(ValueId cond, const std::vector<ValueId>& passed);
  std::vector<ValueId> end_while(const std::vector<ValueId>& yields);
  // Drops the innermost open while and everything built in it (as abandon_for).
  void abandon_while();

  // metile.reduce: begin_reduce_combine opens the combine region of a reduce_combine of
  // `tiles` (1-D or 2-D tiles of numbers of one shape) along `axis` and returns its arguments
  // (a0..ak-1, b0..bk-1: scalars of the tiles' dtypes); end_reduce_combine closes it with the
  // k combined scalars and returns the op's results.
  std::vector<ValueId> begin_reduce_combine(const std::vector<ValueId>& tiles, int64_t axis);
  std::vector<ValueId> end_reduce_combine(const std::vector<ValueId>& yields);

  int open_regions() const { return static_cast<int>(open_.size()); }
  // The op appended last at the insertion point (after end_if or end_for: that op), to
  // annotate it; an InternalError when the insertion block is empty.
  Op& last_op();

 protected:
  [[noreturn]] void fail(const std::string& op, const std::string& rule) const;
  // The op that defined v, among the ops built so far (open regions included); nullptr for
  // a parameter or region argument.
  const Op* definer(ValueId v) const;

  Kernel& kernel_;
  SourceLocation loc_;

 private:
  struct OpenRegion {
    Op op;                        // the for/if/while being built
    std::vector<ValueId> yields;  // if: the then-yields once the else region is open
  };
  Block& insertion_block();
  // Fails `op` unless each of `values` has the type of the carried value `carried` holds at its
  // index ("changes type from ... to ... in `where`").
  void check_carried(const std::string& op, const std::vector<ValueId>& carried,
                     const std::vector<ValueId>& values, const std::string& where) const;
  std::vector<OpenRegion> open_;
};

class TileBuilder : public Builder {
 public:
  explicit TileBuilder(Kernel& kernel);

  // Scalars and geometry.
  ValueId constant(double value, DType dtype);
  ValueId constant_int(int64_t value, DType dtype = DType::i32);
  ValueId program_id(int axis);
  ValueId num_programs(int axis);
  ValueId thread_id(int axis = 0);

  // Tiles.
  // With a layout (of end - start elements), the tile is owned as the layout says.
  ValueId arange(int64_t start, int64_t end,
                 const std::optional<ThreadLayout>& layout = std::nullopt);
  ValueId zeros(std::vector<int64_t> shape, DType dtype);
  ValueId full(std::vector<int64_t> shape, double value, DType dtype);
  ValueId splat(ValueId scalar, std::vector<int64_t> shape);
  ValueId expand_dims(ValueId tile, int axis);
  ValueId broadcast_to(ValueId value, std::vector<int64_t> shape);
  // The same elements in the same row-major order, with a new shape of the same size.
  ValueId reshape(ValueId tile, std::vector<int64_t> shape);
  // The transpose of a 2-D tile.
  ValueId trans(ValueId tile);
  // The same logical tile, owned as `layout` says (of the tile's element count).
  ValueId convert_layout(ValueId tile, const ThreadLayout& layout);

  // Elementwise. Operands may be scalars or tiles whose shapes broadcast (numpy rules);
  // dtypes must match (frontends convert Python numbers first).
  ValueId binary(OpKind kind, ValueId a, ValueId b);
  ValueId cmp(const std::string& pred, ValueId a, ValueId b);  // lt le gt ge eq ne
  ValueId select(ValueId cond, ValueId a, ValueId b);
  ValueId cast(ValueId a, DType to);
  // Triton's int_to_ptr and ptr_to_int: an i64 (tile) as a device pointer (tile) to `pointee`,
  // and a device pointer (tile) as its i64 address.
  ValueId int_to_ptr(ValueId a, DType pointee);
  ValueId ptr_to_int(ValueId a);
  // Triton's inline_asm_elementwise (pack 1, one result): the PTX `assembly` applied to the
  // elements of the operands, broadcast to one shape; the result's dtype is `to`.
  ValueId inline_asm(std::vector<ValueId> operands, DType to, const std::string& assembly,
                     const std::string& constraints, bool pure);
  ValueId unary(OpKind kind, ValueId a, bool fast = false);

  // Memory.
  ValueId ptr_add(ValueId ptr, ValueId offsets);
  // `eviction` is Triton's eviction_policy: "" (normal), "evict_first" or "evict_last".
  ValueId load(ValueId ptrs, ValueId mask = kNoValue, ValueId other = kNoValue,
               const std::string& eviction = "");
  void store(ValueId ptrs, ValueId value, ValueId mask = kNoValue,
             const std::string& eviction = "");
  // Triton's tl.atomic_* (kind add|max|min|and|or|xor|xchg) and tl.atomic_cas; sem
  // relaxed|acquire|release|acq_rel, scope gpu|cta|sys. They return the old values.
  ValueId atomic_rmw(const std::string& kind, ValueId ptrs, ValueId value, ValueId mask,
                     const std::string& sem, const std::string& scope);
  ValueId atomic_cas(ValueId ptrs, ValueId cmp, ValueId value, const std::string& sem,
                     const std::string& scope);
  ValueId make_tensor(ValueId base, const std::vector<ValueId>& dims,
                      const std::vector<ValueId>& strides, const std::string& access);
  ValueId tensor_load(ValueId desc, const std::vector<ValueId>& coords);
  void tensor_store(ValueId desc, const std::vector<ValueId>& coords, ValueId value);
  ValueId shared_alloc(int64_t size, DType dtype);

  // Reductions, collectives, synchronisation.
  ValueId reduce(const std::string& kind, ValueId tile);  // sum | max | min
  // A 2-D tile combined along axis 0 or 1 into a 1-D tile of the other dimension.
  ValueId reduce_axis(const std::string& kind, ValueId tile, int64_t axis);
  // The inclusive scan (kind sum or prod) of a 1-D or 2-D tile along axis.
  ValueId scan(const std::string& kind, ValueId tile, int64_t axis, bool reverse);
  // The tile whose element i is element i ^ mask of `tile` (row-major logical indices).
  ValueId xor_permute(ValueId tile, int64_t mask);
  // Stops the kernel with a fault naming `message` where an element of cond (i1) is false.
  void device_assert(ValueId cond, const std::string& message);
  // Prints `prefix` and the values (scalars, or tiles of one shape) from the device.
  void device_print(const std::string& prefix, const std::vector<ValueId>& values, bool hex);
  ValueId simd(OpKind kind, ValueId value, ValueId lane_or_mask = kNoValue);
  void barrier();

  // Matrix product: acc + a @ b (ops.def). precision "ieee" or "tf32"; "" leaves it to the
  // kernel's math mode (apply_math_mode).
  ValueId dot(ValueId a, ValueId b, ValueId acc, const std::string& precision = "");

  // Matrix fragments (docs/fragments.md): an 8x8 fragment of the scalar's dtype filled with
  // it; the fragment at ptr + offset with row stride `stride` (element (r, c) at offset +
  // r * stride + c, or c * stride + r when transposed); its store.
  ValueId matrix_fill(ValueId scalar);
  // A fragment as itself; a uniform float 8x8 tile (a splat, such as zeros((8, 8))) as the
  // fragment of its value; anything else fails naming `op`.
  ValueId fragment_of(ValueId value, const std::string& op);
  ValueId matrix_load(ValueId ptr, ValueId offset, ValueId stride, bool transpose);
  void matrix_store(ValueId fragment, ValueId ptr, ValueId offset, ValueId stride, bool transpose);
  // Device tiles (ops.def: device_tile_load / device_tile_store): the 8x8 tile at (row,
  // column) of the rows x columns view of device pointer ptr with constant strides; scratch
  // the shared allocation incomplete tiles pass through, viewed as scratch_rows x 8.
  struct DeviceTile {
    ValueId ptr, row, column, rows, columns;
    int64_t row_stride, column_stride;
    ValueId scratch;
    int64_t scratch_rows;
  };
  ValueId device_tile_load(const DeviceTile& tile);
  void device_tile_store(ValueId fragment, const DeviceTile& tile);

  // The shape two operands broadcast to; fails naming `op` when they do not.
  std::vector<int64_t> broadcast_shape(const std::string& op, const Type& a, const Type& b) const;

 private:
  // Brings a scalar or tile to `shape` (splat / expand / broadcast as needed).
  ValueId to_shape(const std::string& op, ValueId v, const std::vector<int64_t>& shape);
  std::string describe(ValueId v) const;  // "%3: tile<256xf32>"
  // A load's or store's attributes for Triton's eviction_policy; fails on an unknown policy.
  Attrs eviction_attrs(const std::string& op, ValueId ptrs, const std::string& eviction) const;
  // When an operand is a fragment: fills every scalar operand into a fragment and returns
  // true (a tile operand fails naming `op`); false when none is.
  bool as_fragments(const std::string& op, std::vector<ValueId>& operands);
};

}  // namespace metile::ir
