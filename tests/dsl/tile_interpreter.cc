#include "tests/dsl/tile_interpreter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "metile/ir/scalar_eval.h"

namespace metile::test {

using ir::DType;
using ir::OpKind;

double round_to(DType dtype, double x) {
  return ir::Scalar::of(dtype, x).number();
}

namespace {
// A runtime value: the elements of a scalar or tile (row-major); pointers hold element
// offsets into buffer `buffer`.
struct RtValue {
  std::vector<double> data;
  int buffer = -1;
};

class Interpreter {
 public:
  Interpreter(const ir::Kernel& k, std::vector<HostBuffer>& buffers)
      : kernel_(k), buffers_(buffers), values_(k.types.size()) {}

  void run(int64_t grid, const std::vector<Arg>& args) {
    if (args.size() != kernel_.params.size()) throw std::runtime_error("wrong argument count");
    grid_ = grid;
    for (program_ = 0; program_ < grid; ++program_) {
      for (size_t i = 0; i < args.size(); ++i) values_[kernel_.params[i].value] = bind(args[i]);
      run_block(kernel_.body);
    }
  }

 private:
  static RtValue bind(const Arg& a) {
    if (auto* b = std::get_if<BufferArg>(&a)) return {{0.0}, b->index};
    if (auto* i = std::get_if<int64_t>(&a)) return {{static_cast<double>(*i)}};
    return {{std::get<double>(a)}};
  }

  const ir::Type& type(ir::ValueId v) const { return kernel_.type(v); }
  const RtValue& at(ir::ValueId v) const { return values_.at(v); }
  static size_t size_of(const ir::Type& t) { return static_cast<size_t>(t.num_elements()); }

  // Runs a block; returns the values of its yield (if any).
  std::vector<RtValue> run_block(const ir::Block& b) {
    for (const ir::Op& op : b.ops) {
      if (op.kind == OpKind::Yield) {
        std::vector<RtValue> r;
        for (ir::ValueId v : op.operands) r.push_back(at(v));
        return r;
      }
      run_op(op);
    }
    return {};
  }

  void set(const ir::Op& op, RtValue v) { values_[op.results.at(0)] = std::move(v); }

  void run_op(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::ProgramId:
        return set(op, {{op.int_attr("axis") == 0 ? static_cast<double>(program_) : 0.0}});
      case OpKind::NumPrograms:
        return set(op, {{op.int_attr("axis") == 0 ? static_cast<double>(grid_) : 1.0}});
      case OpKind::Arange: {
        RtValue r;
        for (int64_t i = op.int_attr("start"); i < op.int_attr("end"); ++i) r.data.push_back(i);
        return set(op, r);
      }
      case OpKind::Splat: {
        const RtValue& s = at(op.operands[0]);
        return set(op, {std::vector<double>(size_of(type(op.results[0])), s.data[0]), s.buffer});
      }
      case OpKind::ExpandDims:
      case OpKind::Reshape:        // the row-major order stays
      case OpKind::ConvertLayout:  // the logical values stay; only their owners change
        return set(op, at(op.operands[0]));
      case OpKind::Broadcast:
        return set(op, broadcast(op));
      case OpKind::Select: {  // moves values of any type, pointers included
        const RtValue &c = at(op.operands[0]), &a = at(op.operands[1]), &b = at(op.operands[2]);
        RtValue r{a.data, a.buffer};
        for (size_t i = 0; i < r.data.size(); ++i)
          if (c.data[i] == 0) r.data[i] = b.data[i];
        return set(op, r);
      }
      case OpKind::PtrAdd: {
        RtValue r = at(op.operands[0]);
        const RtValue& offs = at(op.operands[1]);
        for (size_t i = 0; i < r.data.size(); ++i) r.data[i] += offs.data[i];
        return set(op, r);
      }
      case OpKind::Load:
        return set(op, load(op));
      case OpKind::Store:
        return store(op);
      case OpKind::Reduce:
        return set(op, reduce(op));
      case OpKind::ReduceAxis:
        return set(op, reduce_axis(op));
      case OpKind::ReduceCombine:
        return reduce_combine(op);
      case OpKind::Scan:
        return set(op, scan(op));
      case OpKind::XorPermute:
        return set(op, xor_permute(op));
      case OpKind::Dot:
        return set(op, dot(op));
      case OpKind::Trans:
        return set(op, trans(op));
      case OpKind::For:
        return run_for(op);
      case OpKind::While:
        return run_while(op);
      case OpKind::If: {
        const size_t branch = at(op.operands[0]).data[0] != 0 ? 0 : 1;
        if (branch == op.regions.size()) return;  // no else region (an if without results)
        std::vector<RtValue> ys = run_block(op.regions[branch]);
        for (size_t i = 0; i < op.results.size(); ++i) values_[op.results[i]] = ys[i];
        return;
      }
      case OpKind::Constant:
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::Rem:
      case OpKind::FloorDiv:
      case OpKind::Min:
      case OpKind::Max:
      case OpKind::And:
      case OpKind::Or:
      case OpKind::Xor:
      case OpKind::Shl:
      case OpKind::Shr:
      case OpKind::Cmp:
      case OpKind::Cast:
      case OpKind::Neg:
      case OpKind::Abs:
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Log:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Tanh:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Floor:
      case OpKind::Ceil:
        return set(op, evaluate(op));
      case OpKind::ThreadId:
      case OpKind::ThreadIndex:
      case OpKind::ThreadgroupIndex:
      case OpKind::ThreadgroupCount:
      case OpKind::SimdLane:
      case OpKind::SimdGroup:
      case OpKind::AtomicRmw:  // atomics run on the host emulator (test_atomics.py)
      case OpKind::AtomicCas:
      case OpKind::MakeTensor:
      case OpKind::TensorLoad:
      case OpKind::TensorStore:
      case OpKind::SharedAlloc:
      case OpKind::ThreadgroupBuffer:
      case OpKind::PackedLoad:
      case OpKind::PackedStore:
      case OpKind::Extract:
      case OpKind::Pack:
      case OpKind::IsAligned:
      case OpKind::MatrixFill:
      case OpKind::MatrixLoad:
      case OpKind::MatrixStore:
      case OpKind::MatrixMma:
      case OpKind::DeviceTileLoad:
      case OpKind::DeviceTileStore:
      case OpKind::DescriptorMatmul:
      case OpKind::MppMatmul2d:
      case OpKind::MbarrierInit:
      case OpKind::MbarrierFence:
      case OpKind::MbarrierArrive:
      case OpKind::MbarrierArriveExpectTx:
      case OpKind::MbarrierWait:
      case OpKind::TmaLoad:
      case OpKind::WgmmaFence:
      case OpKind::WgmmaMma:
      case OpKind::WgmmaCommit:
      case OpKind::WgmmaWait:
      case OpKind::SetMaxNReg:
      case OpKind::InlineAsm:
      case OpKind::AsyncCopy:
      case OpKind::AsyncCopyCommit:
      case OpKind::AsyncCopyWait:
      case OpKind::AsyncProxyFence:
      case OpKind::SimdShuffle:
      case OpKind::SimdShuffleXor:
      case OpKind::SimdShuffleDown:
      case OpKind::SimdBroadcast:
      case OpKind::SimdSum:
      case OpKind::SimdMax:
      case OpKind::SimdMin:
      case OpKind::Barrier:
      case OpKind::Yield:
      case OpKind::DeviceAssert:
      case OpKind::DevicePrint:
      case OpKind::AssertTrue:
      case OpKind::Print:
        break;
    }
    throw std::runtime_error("tile interpreter: unsupported op " +
                             std::string(ir::op_name(op.kind)));
  }

  // An op on numbers, element by element through the shared scalar evaluator.
  RtValue evaluate(const ir::Op& op) {
    const ir::Type& result = type(op.results.at(0));
    std::vector<ir::Scalar> x(op.operands.size());
    RtValue r;
    for (size_t e = 0; e < size_of(result); ++e) {
      for (size_t j = 0; j < x.size(); ++j)
        x[j] = ir::Scalar::of(type(op.operands[j]).dtype, at(op.operands[j]).data[e]);
      const ir::Evaluation v = ir::evaluate(op.kind, op.attrs, x, result.dtype);
      if (!v.has_value())
        throw std::runtime_error("tile interpreter: " + std::string(ir::op_name(op.kind)) +
                                 " in program " + std::to_string(program_) + ": " + v.reason);
      r.data.push_back(v.value.number());
    }
    return r;
  }

  RtValue broadcast(const ir::Op& op) {
    const std::vector<int64_t>& from = type(op.operands[0]).shape;
    const std::vector<int64_t>& to = type(op.results[0]).shape;
    const RtValue& s = at(op.operands[0]);
    RtValue r{{}, s.buffer};
    const int64_t cols = to.size() == 2 ? to[1] : to[0], rows = to.size() == 2 ? to[0] : 1;
    const int64_t from_cols = from.size() == 2 ? from[1] : from[0];
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        int64_t si = from.size() == 2 && from[0] == 1 ? 0 : i;
        int64_t sj = from_cols == 1 ? 0 : j;
        r.data.push_back(s.data[si * from_cols + sj]);
      }
    return r;
  }

  double& element(const RtValue& ptrs, size_t i) {
    HostBuffer& b = buffers_.at(ptrs.buffer);
    const double offset = ptrs.data[i];
    if (offset < 0 || offset >= static_cast<double>(b.data.size()))
      throw std::runtime_error("tile interpreter: out-of-bounds access at element " +
                               std::to_string(offset) + " of a buffer of " +
                               std::to_string(b.data.size()) + " in program " +
                               std::to_string(program_));
    return b.data[static_cast<size_t>(offset)];
  }

  RtValue load(const ir::Op& op) {
    const RtValue& ptrs = at(op.operands[0]);
    RtValue r;
    for (size_t i = 0; i < ptrs.data.size(); ++i) {
      bool on = op.operands.size() == 1 || at(op.operands[1]).data[i] != 0;
      r.data.push_back(on ? element(ptrs, i) : at(op.operands[2]).data[i]);
    }
    return r;
  }

  void store(const ir::Op& op) {
    const RtValue &ptrs = at(op.operands[0]), &v = at(op.operands[1]);
    DType t = buffers_.at(ptrs.buffer).dtype;
    for (size_t i = 0; i < ptrs.data.size(); ++i)
      if (op.operands.size() == 2 || at(op.operands[2]).data[i] != 0)
        element(ptrs, i) = round_to(t, v.data[i]);
  }

  RtValue reduce(const ir::Op& op) {
    const RtValue& t = at(op.operands[0]);
    const std::string& kind = op.str_attr("kind");
    double r = t.data[0];
    for (size_t i = 1; i < t.data.size(); ++i)
      r = kind == "sum"   ? r + t.data[i]
          : kind == "max" ? std::max(r, t.data[i])
                          : std::min(r, t.data[i]);
    return {{round_to(type(op.results[0]).dtype, r)}};
  }

  RtValue reduce_axis(const ir::Op& op) {
    const RtValue& t = at(op.operands[0]);
    const std::vector<int64_t>& shape = type(op.operands[0]).shape;
    const std::string& kind = op.str_attr("kind");
    const int64_t axis = op.int_attr("axis"), outputs = shape[1 - axis];
    RtValue r;
    for (int64_t o = 0; o < outputs; ++o) {
      double acc = 0;
      for (int64_t k = 0; k < shape[axis]; ++k) {
        const double v = t.data[axis == 0 ? k * shape[1] + o : o * shape[1] + k];
        acc = k == 0          ? v
              : kind == "sum" ? acc + v
              : kind == "max" ? std::max(acc, v)
                              : std::min(acc, v);
      }
      r.data.push_back(round_to(type(op.results[0]).dtype, acc));
    }
    return r;
  }

  // Each line combined in sequence, element 0 first, by running the combine region.
  void reduce_combine(const ir::Op& op) {
    const size_t k = op.operands.size();
    const std::vector<int64_t>& shape = type(op.operands[0]).shape;
    const int64_t axis = op.int_attr("axis");
    const int64_t outputs = shape.size() == 1 ? 1 : shape[1 - axis];
    const ir::Block& combine = op.regions[0];
    std::vector<RtValue> results(k);
    for (int64_t o = 0; o < outputs; ++o) {
      std::vector<RtValue> acc;
      for (int64_t e = 0; e < shape[axis]; ++e) {
        const int64_t at_index = shape.size() == 1 ? e
                                 : axis == 0       ? e * shape[1] + o
                                                   : o * shape[1] + e;
        std::vector<RtValue> element;
        for (ir::ValueId t : op.operands) element.push_back({{at(t).data[at_index]}});
        if (e == 0) {
          acc = element;
          continue;
        }
        for (size_t i = 0; i < k; ++i) {
          values_[combine.args[i]] = acc[i];
          values_[combine.args[k + i]] = element[i];
        }
        acc = run_block(combine);
      }
      for (size_t i = 0; i < k; ++i) results[i].data.push_back(acc[i].data[0]);
    }
    for (size_t i = 0; i < k; ++i) values_[op.results[i]] = results[i];
  }

  RtValue scan(const ir::Op& op) {
    const RtValue& t = at(op.operands[0]);
    const std::vector<int64_t>& shape = type(op.operands[0]).shape;
    const bool sum = op.str_attr("kind") == "sum", reverse = op.int_attr("reverse") != 0;
    const int64_t axis = op.int_attr("axis"), n = shape[axis];
    const int64_t stride = axis + 1 < static_cast<int64_t>(shape.size()) ? shape[1] : 1;
    RtValue r{t.data, -1};
    for (int64_t line = 0; line < static_cast<int64_t>(t.data.size()) / n; ++line) {
      const int64_t base = stride == 1 ? line * n : line;
      double acc = sum ? 0 : 1;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = base + (reverse ? n - 1 - k : k) * stride;
        acc = sum ? acc + t.data[i] : acc * t.data[i];
        r.data[i] = round_to(type(op.results[0]).dtype, acc);
      }
    }
    return r;
  }

  RtValue xor_permute(const ir::Op& op) {
    const RtValue& t = at(op.operands[0]);
    const size_t mask = static_cast<size_t>(op.int_attr("mask"));
    RtValue r{t.data, -1};
    for (size_t i = 0; i < t.data.size(); ++i) r.data[i] = t.data[i ^ mask];
    return r;
  }

  // acc + a @ b, every product and sum rounded to f32 as the lowerings compute them.
  RtValue dot(const ir::Op& op) {
    const RtValue &a = at(op.operands[0]), &b = at(op.operands[1]), &acc = at(op.operands[2]);
    const std::vector<int64_t>& a_shape = type(op.operands[0]).shape;
    const int64_t m = a_shape[0], k = a_shape[1], n = type(op.operands[1]).shape[1];
    RtValue r{acc.data, -1};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = static_cast<float>(acc.data[i * n + j]);
        for (int64_t p = 0; p < k; ++p)
          sum = std::fma(static_cast<float>(a.data[i * k + p]),
                         static_cast<float>(b.data[p * n + j]), sum);
        r.data[i * n + j] = sum;
      }
    return r;
  }

  RtValue trans(const ir::Op& op) {
    const RtValue& t = at(op.operands[0]);
    const std::vector<int64_t>& shape = type(op.operands[0]).shape;
    RtValue r{{}, t.buffer};
    for (int64_t i = 0; i < shape[1]; ++i)
      for (int64_t j = 0; j < shape[0]; ++j) r.data.push_back(t.data[j * shape[1] + i]);
    return r;
  }

  void run_for(const ir::Op& op) {
    const ir::Block& body = op.regions[0];
    const double start = at(op.operands[0]).data[0], end = at(op.operands[1]).data[0],
                 step = at(op.operands[2]).data[0];
    std::vector<RtValue> carried;
    for (size_t i = 3; i < op.operands.size(); ++i) carried.push_back(at(op.operands[i]));
    for (double iv = start; iv < end; iv += step) {
      values_[body.args[0]] = {{iv}};
      for (size_t i = 0; i < carried.size(); ++i) values_[body.args[i + 1]] = carried[i];
      carried = run_block(body);
    }
    for (size_t i = 0; i < op.results.size(); ++i) values_[op.results[i]] = carried[i];
  }

  void run_while(const ir::Op& op) {
    const ir::Block &before = op.regions[0], &after = op.regions[1];
    std::vector<RtValue> carried;
    for (ir::ValueId v : op.operands) carried.push_back(at(v));
    for (;;) {
      for (size_t i = 0; i < carried.size(); ++i) values_[before.args[i]] = carried[i];
      std::vector<RtValue> passed = run_block(before);
      const bool cond = passed[0].data[0] != 0;
      passed.erase(passed.begin());
      if (!cond) {
        carried = passed;
        break;
      }
      for (size_t i = 0; i < passed.size(); ++i) values_[after.args[i]] = passed[i];
      carried = run_block(after);
    }
    for (size_t i = 0; i < op.results.size(); ++i) values_[op.results[i]] = carried[i];
  }

  const ir::Kernel& kernel_;
  std::vector<HostBuffer>& buffers_;
  std::vector<RtValue> values_;
  int64_t program_ = 0, grid_ = 0;
};
}  // namespace

void run_tile_ir(const ir::Kernel& kernel, int64_t grid, const std::vector<Arg>& args,
                 std::vector<HostBuffer>& buffers) {
  Interpreter(kernel, buffers).run(grid, args);
}

}  // namespace metile::test
