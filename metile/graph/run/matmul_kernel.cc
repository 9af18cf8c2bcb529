#include "metile/graph/run/matmul_kernel.h"

#include <algorithm>
#include <map>

#include "metile/graph/run/matmul_tiles.h"
#include "metile/graph/run/op_emitters.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
class MatmulEmitter {
 public:
  MatmulEmitter(const Graph& graph, KernelBuffers& buffers, Shape out, const MatmulTiles& tiles,
                bool spill)
      : graph_(graph),
        buffers_(buffers),
        out_(std::move(out)),
        block_m_(tiles.block_m),
        block_n_(tiles.block_n),
        block_k_(tiles.block_k),
        spill_(spill) {
    rank_ = out_.size();
    m_ = out_[rank_ - 2];
    n_ = out_[rank_ - 1];
  }

  void emit(KernelContext& k, const std::vector<int>& ops, const std::vector<int>& inputs,
            const std::vector<int>& outputs) {
    for (int v : inputs) pointers_[v] = buffers_.read(k, v);
    for (int v : outputs) pointers_[v] = buffers_.write(k, v);
    auto row_lanes = arange(0, block_m_);
    rows_ = program_id(0) * block_m_ + row_lanes;
    auto column_lanes = arange(0, block_n_);
    columns_ = program_id(1) * block_n_ + column_lanes;
    batch_ = program_id(2);
    auto row_in = rows_.col() < m_;
    auto column_in = columns_.row() < n_;
    in_tile_ = row_in & column_in;
    accumulate(ops);
    for (int id : ops) {
      const Op& op = graph_.op(id);
      if (op.kind == OpKind::Matmul) continue;
      std::vector<Value> in;
      for (int v : op.inputs) in.push_back(operand(v));
      values_[op.output] = emit_elementwise(op, in, {rows_.col(), columns_.row()});
    }
    for (int v : outputs) {
      auto offsets = tile_offsets(graph_.spec(v).shape);
      Value value = values_.at(v).to(storage_dtype(graph_.spec(v).dtype));
      store(pointers_.at(v) + offsets, value, in_tile_);
    }
  }

 private:
  // The element offset of this program's batch entry in a value whose last two axes are
  // `shape`'s (batch axes broadcast as numpy does).
  Value batch_offset(const Shape& shape) {
    Shape s(rank_ > shape.size() ? rank_ - shape.size() : 0, 1);
    s.insert(s.end(), shape.begin(), shape.end());
    int64_t stride = s[rank_ - 1] * s[rank_ - 2], inner = 1;
    Value offset = batch_ * 0;
    for (size_t k = rank_ - 2; k-- > 0;) {
      if (s[k] != 1) {
        auto q = batch_ / inner;
        auto coordinate = q % out_[k];
        offset = offset + coordinate * stride;
      }
      stride *= s[k];
      inner *= out_[k];
    }
    return offset;
  }

  // The element offset of this program's batch entry in a matmul operand read through its
  // view (batch axes broadcast: an axis of size 1 stays at 0).
  Value view_batch_offset(int v) {
    const Shape& shape = graph_.spec(v).shape;
    View view = buffers_.view(v);
    size_t pad = rank_ - shape.size();
    int64_t inner = 1;
    Value offset = batch_ * 0;
    for (size_t k = rank_ - 2; k-- > 0;) {
      if (k >= pad && shape[k - pad] != 1) {
        auto q = batch_ / inner;
        auto coordinate = q % out_[k];
        offset = offset + coordinate * view.strides[k - pad];
      }
      inner *= out_[k];
    }
    return view.offset == 0 ? offset : offset + view.offset;
  }

  // A matmul operand's last two axes as a tensor descriptor: its view's strides (a transposed
  // operand is read in place), or row-major when it is contiguous.
  Tensor operand_tensor(int v, int64_t rows, int64_t columns) {
    const Shape& shape = graph_.spec(v).shape;
    View view = buffers_.view(v);
    Value base = pointers_.at(v) + view_batch_offset(v);
    std::vector<Operand> strides;
    size_t r = shape.size();
    if (view.strides[r - 1] != 1 || view.strides[r - 2] != shape[r - 1])
      strides = {view.strides[r - 2], view.strides[r - 1]};
    return tensor(base, {rows, columns}, strides, "read");
  }

  // [BLOCK_M, BLOCK_N] offsets of this tile in a value of `shape` broadcast to the output.
  Value tile_offsets(const Shape& shape) {
    int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    int64_t columns = shape.empty() ? 1 : shape.back();
    auto row_term = rows_.col() * (rows == 1 ? 0 : columns);
    auto column_term = columns_.row() * (columns == 1 ? 0 : 1);
    auto base = batch_offset(shape);
    auto tile = row_term + column_term;
    return tile + base;
  }

  Value operand(int v) {
    if (auto it = values_.find(v); it != values_.end()) return it->second;
    const TensorSpec& spec = graph_.spec(v);
    auto offsets = tile_offsets(spec.shape);
    Value loaded = load(pointers_.at(v) + offsets, in_tile_);
    return values_[v] = loaded.to(compute_dtype(spec.dtype));
  }

  // Every matmul of one inner size in one loop over K; with spill_, one loop per matmul, each
  // finished result but the last waiting in threadgroup scratch (one accumulator live).
  void accumulate(const std::vector<int>& ops) {
    std::map<int64_t, std::vector<int>> by_inner;
    for (int id : ops)
      if (graph_.op(id).kind == OpKind::Matmul)
        by_inner[graph_.spec(graph_.op(id).inputs[0]).shape.back()].push_back(id);
    for (const auto& [inner, matmuls] : by_inner) {
      if (!spill_ || matmuls.size() < 2) {
        reduce(inner, matmuls);
        continue;
      }
      auto tile = arange(0, block_m_).col() * block_n_ + arange(0, block_n_).row();
      std::vector<Value> scratch;
      for (size_t i = 0; i + 1 < matmuls.size(); ++i) {
        reduce(inner, {matmuls[i]});
        scratch.push_back(shared(block_m_ * block_n_, f32));
        store(scratch.back() + tile, values_.at(graph_.op(matmuls[i]).output));
      }
      barrier();
      reduce(inner, {matmuls.back()});
      for (size_t i = 0; i + 1 < matmuls.size(); ++i)
        values_[graph_.op(matmuls[i]).output] = load(scratch[i] + tile);
    }
  }

  // `matmuls` (one inner size) in one loop over K.
  void reduce(int64_t inner, const std::vector<int>& matmuls) {
    std::vector<Tensor> left, right;
    std::vector<Value> init;
    for (int id : matmuls) {
      const Op& op = graph_.op(id);
      left.push_back(operand_tensor(op.inputs[0], m_, inner));
      right.push_back(operand_tensor(op.inputs[1], inner, n_));
      init.push_back(zeros({block_m_, block_n_}, f32));
    }
    std::vector<Value> sums =
        tile_range(0, inner, block_k_, init, [&](Value start, std::vector<Value>& acc) {
          auto ks = start + arange(0, block_k_);
          std::map<int, Value> a_tiles;  // one load per distinct left operand
          for (size_t i = 0; i < matmuls.size(); ++i) {
            int a_value = graph_.op(matmuls[i]).inputs[0];
            if (!a_tiles.count(a_value)) a_tiles[a_value] = left[i].load({rows_.col(), ks.row()});
            auto b_tile = right[i].load({ks.col(), columns_.row()});
            acc[i] = dot(a_tiles[a_value], b_tile, acc[i]);
          }
        });
    for (size_t i = 0; i < matmuls.size(); ++i) values_[graph_.op(matmuls[i]).output] = sums[i];
  }

  const Graph& graph_;
  KernelBuffers& buffers_;
  Shape out_;
  size_t rank_ = 0;
  int64_t m_ = 0, n_ = 0, block_m_ = 0, block_n_ = 0, block_k_ = 0;
  bool spill_ = false;
  std::map<int, Value> pointers_, values_;
  Value rows_, columns_, batch_, in_tile_;
};
}  // namespace

RegionKernel matmul_kernel(const Graph& graph, const ViewPlan& views, const std::vector<int>& ops,
                           const std::vector<int>& inputs, const std::vector<int>& outputs,
                           bool spill, const target::Target& target) {
  Shape out;
  for (int id : ops)
    if (graph.op(id).kind == OpKind::Matmul) out = graph.spec(graph.op(id).output).shape;
  for (int id : ops)
    if (graph.spec(graph.op(id).output).shape != out)
      throw UserError("graph executor: " + op_label(graph, id) + " of shape " +
                      shape_str(graph.spec(graph.op(id).output).shape) +
                      " cannot share a matmul kernel with output " + shape_str(out) +
                      "; not supported");
  size_t rank = out.size();
  int64_t m = out[rank - 2], n = out[rank - 1], batch = 1;
  for (size_t k = 0; k + 2 < rank; ++k) batch *= out[k];
  const MatmulTiles tiles = choose_matmul_tiles(graph, ops, out, spill, target);

  std::string name = "graph";
  for (int id : ops) name += "_" + std::string(graph.op(id).name());
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    if (tiles.threads) k.set_num_threads(tiles.threads);
    MatmulEmitter(graph, buffers, out, tiles, spill).emit(k, ops, inputs, outputs);
  };
  RegionKernel rk;
  rk.form = "matmul";
  rk.kernel = trace(name, body);
  rk.grid = {cdiv(m, tiles.block_m), cdiv(n, tiles.block_n), batch};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = ops;
  rk.decision = tiles.decision;
  if (spill)
    rk.decision +=
        "; scratch-spilled: one K loop per matmul, finished results wait in "
        "threadgroup scratch";
  for (int v : inputs)
    if (views.is_view(v))
      rk.decision +=
          "; " + graph.value(v).ref() + " read in place as " + views.of(graph, v).str(graph);
  return rk;
}

}  // namespace metile::graph
