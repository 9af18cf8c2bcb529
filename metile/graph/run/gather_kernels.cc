#include "metile/graph/run/gather_kernels.h"

#include <algorithm>

#include "metile/graph/run/op_emitters.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
constexpr int64_t kMaxBlock = 1024;
}  // namespace

// Program (i, j): columns [j * block, (j + 1) * block) of the row of id i. An id outside
// [0, V) reads outside the table: an out-of-bounds error on the host, undefined on a GPU
// (as torch.embedding's device assert, which meTile does not emit).
RegionKernel embedding_kernel(const Graph& graph, const ViewPlan& views, int op_id) {
  const Op& op = graph.op(op_id);
  const TensorSpec& table = graph.spec(op.inputs[0]);
  const int64_t hidden = table.shape[1], ids = graph.spec(op.inputs[1]).num_elements();
  const int64_t block = std::min(next_power_of_2(hidden), kMaxBlock);
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    auto table_ptr = buffers.read(k, op.inputs[0]);
    auto ids_ptr = buffers.read(k, op.inputs[1]);
    auto out_ptr = buffers.write(k, op.output);
    View tv = buffers.view(op.inputs[0]), iv = buffers.view(op.inputs[1]);
    auto i = program_id(0);
    // ids may be any view: its flat index i as a multi-index.
    const Shape& id_shape = graph.spec(op.inputs[1]).shape;
    std::vector<Value> index(id_shape.size());
    int64_t inner = 1;
    for (size_t a = id_shape.size(); a-- > 0;) {
      Value q = inner == 1 ? Value(i) : i / inner;
      index[a] = a == 0 ? q : q % id_shape[a];
      inner *= id_shape[a];
    }
    auto id = load(ids_ptr + view_offset(iv, index));
    auto lanes = arange(0, block);
    auto columns = program_id(1) * block + lanes;
    auto valid = columns < hidden;
    auto row = load(table_ptr + view_offset(tv, {id, columns}), valid);
    auto at = i * hidden + columns;
    store(out_ptr + at, row, valid);
  };
  RegionKernel rk;
  rk.form = "embedding";
  rk.kernel = trace("graph_embedding", body);
  rk.grid = {ids, cdiv(hidden, block), 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision = "one id per program row, " + std::to_string(block) + " columns per program";
  return rk;
}

namespace {
// The index of element (batch row `batch`, `columns`) of a [..., S, D] tensor of `shape`, the
// batch axes flattened into `batch` (the cache's and the update's batch shapes are equal);
// the row axis is left for the caller.
std::vector<Value> batch_index(const Shape& shape, Value batch, Value columns) {
  const size_t rank = shape.size();
  std::vector<Value> index(rank);
  int64_t inner = 1;
  for (size_t a = rank - 2; a-- > 0;) {
    Value q = inner == 1 ? batch : batch / inner;
    index[a] = a == 0 ? q : q % shape[a];
    inner *= shape[a];
  }
  index[rank - 1] = columns;
  return index;
}

// In place: program (r, j) writes columns block j of update row r into the cache's own buffer
// at row position + r (per batch entry); the cache's other rows are not touched.
RegionKernel cache_write_kernel(const Graph& graph, const ViewPlan& views, int op_id) {
  const Op& op = graph.op(op_id);
  const TensorSpec& cache = graph.spec(op.inputs[0]);
  const TensorSpec& update = graph.spec(op.inputs[1]);
  const size_t rank = cache.shape.size();
  const int64_t s_size = cache.shape[rank - 2], t_size = update.shape[rank - 2],
                d_size = cache.shape[rank - 1];
  const int64_t rows = update.num_elements() / d_size;
  const int64_t block = std::min(next_power_of_2(d_size), kMaxBlock);
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    auto update_ptr = buffers.read(k, op.inputs[1]);
    auto position_ptr = buffers.read(k, op.inputs[2]);
    auto cache_ptr = buffers.write(k, op.output);  // the cache input's buffer
    View cv = buffers.view(op.output), uv = buffers.view(op.inputs[1]),
         pv = buffers.view(op.inputs[2]);
    auto r = program_id(0);
    auto batch = r / t_size;
    auto t = r % t_size;
    auto position = load(position_ptr + pv.offset);
    auto s = position + t;
    auto lanes = arange(0, block);
    auto columns = program_id(1) * block + lanes;
    auto in_row = columns < d_size;
    auto in_cache = s < s_size;
    auto valid = in_row & in_cache;
    const std::vector<Value> index = batch_index(cache.shape, batch, columns);
    std::vector<Value> cache_index = index, update_index = index;
    cache_index[rank - 2] = s;
    update_index[rank - 2] = t;
    auto row = load(update_ptr + view_offset(uv, update_index), valid);
    store(cache_ptr + view_offset(cv, cache_index), row, valid);
  };
  RegionKernel rk;
  rk.form = "cache_update";
  rk.kernel = trace("graph_cache_write", body);
  rk.grid = {rows, cdiv(d_size, block), 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision = "in place: the " + std::to_string(t_size) + " new rows written into " +
                graph.value(op.inputs[0]).ref() + "'s buffer at [position, position + " +
                std::to_string(t_size) + "), one row per program; the cache is not copied";
  return rk;
}
}  // namespace

// Program (r, j): columns block j of row r of the result, taken from the update when the
// row lies in [position, position + T), else from the cache. Rows of the window past S are
// not written (position + T <= S is the caller's contract, as for torch's index_copy_).
RegionKernel cache_update_kernel(const Graph& graph, const ViewPlan& views, int op_id) {
  const Op& op = graph.op(op_id);
  if (op.attrs.count("in_place") && op.int_attr("in_place")) {
    if (!views.is_view(op.output))
      throw InternalError("cache_update_kernel: the in-place " + op_label(graph, op_id) +
                          " has no view of its cache");
    return cache_write_kernel(graph, views, op_id);
  }
  const TensorSpec& cache = graph.spec(op.inputs[0]);
  const TensorSpec& update = graph.spec(op.inputs[1]);
  const size_t rank = cache.shape.size();
  const int64_t s_size = cache.shape[rank - 2], t_size = update.shape[rank - 2],
                d_size = cache.shape[rank - 1];
  const int64_t rows = cache.num_elements() / d_size;
  const int64_t block = std::min(next_power_of_2(d_size), kMaxBlock);
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    auto cache_ptr = buffers.read(k, op.inputs[0]);
    auto update_ptr = buffers.read(k, op.inputs[1]);
    auto position_ptr = buffers.read(k, op.inputs[2]);
    auto out_ptr = buffers.write(k, op.output);
    View cv = buffers.view(op.inputs[0]), uv = buffers.view(op.inputs[1]),
         pv = buffers.view(op.inputs[2]);
    auto r = program_id(0);
    auto batch = r / s_size;
    auto s = r % s_size;
    auto position = load(position_ptr + pv.offset);
    auto lanes = arange(0, block);
    auto columns = program_id(1) * block + lanes;
    auto valid = columns < d_size;
    auto from = s - position;
    auto above = s >= position;
    auto below = from < t_size;
    auto in_window = above & below;
    const std::vector<Value> index = batch_index(cache.shape, batch, columns);
    std::vector<Value> cache_index = index, update_index = index;
    cache_index[rank - 2] = s;
    update_index[rank - 2] = from;
    auto keep = ~in_window;
    auto old_mask = valid & keep;
    auto new_mask = valid & in_window;
    auto old_row = load(cache_ptr + view_offset(cv, cache_index), old_mask);
    auto new_row = load(update_ptr + view_offset(uv, update_index), new_mask);
    auto row = where(in_window, new_row, old_row);
    auto at = r * d_size + columns;
    store(out_ptr + at, row, valid);
  };
  RegionKernel rk;
  rk.form = "cache_update";
  rk.kernel = trace("graph_cache_update", body);
  rk.grid = {rows, cdiv(d_size, block), 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision = "a copy of the cache, one row per program, rows [position, position + " +
                std::to_string(t_size) + ") from the update";
  return rk;
}

}  // namespace metile::graph
