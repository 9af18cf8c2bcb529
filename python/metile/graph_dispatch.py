"""Measured dispatch of a graph (issue 29, seed 000 "Measured Dispatch"):
``plan.compile(dispatch="measured")``.

Each region of the plan is decided on its own: its fused meTile kernels (the region as a
graph of its own, planned and compiled) are a candidate beside the unfused ops run by the
framework (numpy for numpy arrays, torch for torch tensors: the CUDA peer), through
``metile.select``'s numerical gate
and tournament with the graph boundary's 10% headroom. The fused kernels run only where they
are correct and measurably faster; elsewhere the framework runs the region's ops one by one.
Decisions are keyed by the region's text and the arguments' types and persist like every
``metile.select`` decision; ``explain()`` lists each region's decision with its gate errors
and timings.

View regions (transpose, reshape, slice alone) need no decision: the framework's views cost
nothing, so they run natively.
"""

import functools
import json
import re

import numpy as np

from . import _core, dtypes
from .buffer import device as current_device
from .errors import CompilationError, InternalCompilerError, NotSupportedError
from .graph import bind_inputs
from .tune import Candidate, select

_VIEW_OPS = {"transpose", "reshape", "slice"}
_LINE = re.compile(r"^\s*(%\w+) = (\w+)\((.*?)\)\s*(\{.*\})?\s*:\s*(\(.*\)) (\w+)\s*$")
_INPUT = re.compile(r"^\s*(%\w+) = input : (\(.*\)) (\w+)\s*$")


class _Op:
    def __init__(self, result, name, operands, attrs, shape, dtype):
        self.result, self.name, self.operands = result, name, operands
        self.attrs, self.shape, self.dtype = attrs, shape, dtype

    def line(self, rename):
        attrs = ""
        if self.attrs:
            attrs = " {" + ", ".join(f"{k} = {v}" for k, v in self.attrs.items()) + "}"
        operands = ", ".join(rename(o) for o in self.operands)
        result = f"{rename(self.result)} = {self.name}({operands}){attrs}"
        return f"{result} : {_shape_text(self.shape)} {self.dtype}"


def _shape_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _shape(text):
    return tuple(int(d) for d in text.strip("()").split(",") if d.strip())


def _number(text):
    return float(text) if any(c in text for c in ".eEn") else int(text)


def parse_graph_text(text):
    """(inputs {name: (shape, dtype)}, ops [_Op], outputs [name]) of Graph.__str__."""
    inputs, ops, outputs = {}, [], []
    for line in text.splitlines():
        if m := _INPUT.match(line):
            inputs[m.group(1)] = (_shape(m.group(2)), m.group(3))
        elif m := _LINE.match(line):
            attrs = {}
            if m.group(4):
                for item in m.group(4)[1:-1].split(","):
                    key, value = (s.strip() for s in item.split("="))
                    attrs[key] = value
            operands = [o.strip() for o in m.group(3).split(",") if o.strip()]
            ops.append(_Op(m.group(1), m.group(2), operands, attrs, _shape(m.group(5)), m.group(6)))
        elif line.strip().startswith("outputs("):
            outputs = [o.strip() for o in line.strip()[8:-1].split(",")]
    return inputs, ops, outputs


# ---- the region as a graph of its own ---------------------------------------------------------

def _input_name(value):
    name = value[1:]
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else "v" + name


def region_text(specs, ops, inputs, outputs):
    """The text of a graph computing `ops` from `inputs`; flash_attention (made by discovery,
    never written) is written as the chain it was discovered from, so the region's plan
    discovers it again."""
    renamed = {v: "%" + _input_name(v) for v in inputs}

    def rename(v):
        return renamed.get(v, v)

    lines = ["graph {"]
    lines += [f"  {rename(v)} = input : {_shape_text(specs[v][0])} {specs[v][1]}" for v in inputs]
    for op in ops:
        if op.name != "flash_attention":
            lines.append("  " + op.line(rename))
            continue
        q, kt, v = op.operands
        batch = np.broadcast_shapes(specs[q][0][:-2], specs[kt][0][:-2])
        scores = tuple(batch) + (specs[q][0][-2], specs[kt][0][-1])
        chain = [("matmul", [q, kt], {}), ("scale", None, {"factor": op.attrs["scale"]})]
        if op.attrs.get("causal") == "1":
            chain.append(("causal_mask", None, {}))
        chain.append(("softmax", None, {"axis": str(len(scores) - 1)}))
        previous = None
        for i, (name, operands, attrs) in enumerate(chain):
            step = _Op(f"{op.result}_{i}", name, operands or [previous], attrs, scores, op.dtype)
            lines.append("  " + step.line(rename))
            previous = step.result
        lines.append("  " + _Op(op.result, "matmul", [previous, v], {}, op.shape,
                                op.dtype).line(rename))
    lines.append("  outputs(" + ", ".join(outputs) + ")")
    return "\n".join(lines + ["}"]) + "\n"


@functools.lru_cache(maxsize=None)
def _fused(text, device, schedule=""):
    return _core.plan_graph_fusion(_core.parse_graph(text)).compile(device, schedule=schedule)


def _dense(arrays):
    # Framework views (the native side of view regions) reach the fused kernels contiguous.
    return [a.contiguous() if hasattr(a, "is_contiguous") and not a.is_contiguous() else a
            for a in arrays]


def run_fused(text, device, *arrays):
    """The region's fused meTile kernels: the metile.select candidate."""
    return tuple(_fused(text, device)(*_dense(arrays)))


def run_register_fused(text, device, *arrays):
    """A SwiGLU region's fused kernels, gate and up accumulators live together."""
    return tuple(_fused(text, device, "register-fused")(*_dense(arrays)))


def run_scratch_spilled(text, device, *arrays):
    """A SwiGLU region's fused kernels with the low-register schedule: the gate result waits
    in threadgroup scratch while the up reduction reuses the accumulator. Where the compiler
    rejects this schedule (sm90 today: an internal check on its two pipelined loops), the
    candidate is reported unsupported with that message, and the others still compete."""
    try:
        fused = _fused(text, device, "scratch-spilled")
    except InternalCompilerError as e:
        raise NotSupportedError(f"the scratch-spilled schedule does not compile for this "
                                f"device yet: {e}") from e
    return tuple(fused(*_dense(arrays)))


# ---- the unfused ops, one framework call each ---------------------------------------------------

def _np_dtype(name):
    return np.dtype(dtypes.to_numpy(name))


def _numpy_op(op, x):
    a = op.attrs
    if op.name in ("add", "subtract", "multiply", "divide"):
        return getattr(np, op.name)(x[0], x[1])
    if op.name == "scale":
        return x[0] * float(a["factor"])
    if op.name == "exp":
        return np.exp(x[0])
    if op.name == "silu":
        return x[0] / (1 + np.exp(-x[0]))
    if op.name == "cast":
        return x[0]  # rounded to the result's dtype below
    if op.name == "causal_mask":
        rows, cols = x[0].shape[-2:]
        return np.where(np.tril(np.ones((rows, cols), bool)), x[0], -np.inf)
    if op.name == "rms_norm":
        y = x[0]
        return y / np.sqrt((y * y).mean(-1, keepdims=True) + float(a["eps"])) * x[1]
    if op.name == "softmax":
        axis = int(a["axis"])
        e = np.exp(x[0] - x[0].max(axis, keepdims=True))
        return e / e.sum(axis, keepdims=True)
    if op.name in ("sum", "max", "mean"):
        return getattr(np, op.name)(x[0], axis=int(a["axis"]), keepdims=a["keepdims"] == "1")
    if op.name == "matmul":
        return x[0] @ x[1]
    if op.name == "transpose":
        return np.swapaxes(x[0], int(a.get("axis0", -2)), int(a.get("axis1", -1)))
    if op.name == "reshape":
        return x[0].reshape(op.shape)
    if op.name == "slice":
        index = [slice(None)] * x[0].ndim
        index[int(a["axis"])] = slice(int(a["start"]), int(a["stop"]))
        return x[0][tuple(index)]
    if op.name == "concat":
        return np.concatenate(x, axis=int(a["axis"]))
    if op.name == "rotary":
        half = x[0].shape[-1] // 2
        x1, x2 = x[0][..., :half], x[0][..., half:]
        return np.concatenate([x1 * x[1] - x2 * x[2], x2 * x[1] + x1 * x[2]], -1)
    if op.name == "embedding":
        return x[0][x[1]]
    if op.name == "cache_update":
        out, p = x[0].copy(), int(x[2][0])
        out[..., p:p + x[1].shape[-2], :] = x[1]
        return out
    if op.name == "flash_attention":
        s = x[0] @ x[1] * float(a["scale"])
        if a.get("causal") == "1":
            s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ x[2]
    raise NotImplementedError(f"measured dispatch: no numpy form of {op.name}")


def run_numpy(text, *arrays):
    """The region's ops one numpy call each (f32 math, each result rounded to its dtype):
    the native side of the host device's decision."""
    inputs, ops, outputs = parse_graph_text(text)
    env = {}
    for name, array in zip(inputs, arrays):
        array = np.asarray(array)
        env[name] = array.astype(np.float32) if array.dtype.kind == "f" else array
    for op in ops:
        value = np.asarray(_numpy_op(op, [env[o] for o in op.operands]))
        rounded = value.astype(_np_dtype(op.dtype))
        env[op.result] = rounded.astype(np.float32) if rounded.dtype.kind == "f" else rounded
    dtype_of = {op.result: op.dtype for op in ops}
    return tuple(env[o].astype(_np_dtype(dtype_of[o])) for o in outputs)


def _torch_op(op, x):
    import torch
    import torch.nn.functional as F
    a = op.attrs
    if op.name in ("add", "subtract", "multiply", "divide"):
        return getattr(torch, {"subtract": "sub", "multiply": "mul", "divide": "div"}.get(
            op.name, op.name))(x[0], x[1])
    if op.name == "scale":
        return x[0] * float(a["factor"])
    if op.name == "exp":
        return torch.exp(x[0])
    if op.name == "silu":
        return F.silu(x[0])
    if op.name == "cast":
        return x[0].to(_TORCH_DTYPES[op.dtype])
    if op.name == "causal_mask":
        rows, cols = x[0].shape[-2:]
        keep = torch.ones(rows, cols, dtype=torch.bool, device=x[0].device).tril()
        return x[0].masked_fill(~keep, float("-inf"))
    if op.name == "rms_norm":
        y = x[0].float()
        return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + float(a["eps"]))).to(
            x[0].dtype) * x[1]
    if op.name == "softmax":
        return torch.softmax(x[0], int(a["axis"]))
    if op.name in ("sum", "mean"):
        return getattr(torch, op.name)(x[0], int(a["axis"]), keepdim=a["keepdims"] == "1")
    if op.name == "max":
        return torch.amax(x[0], int(a["axis"]), keepdim=a["keepdims"] == "1")
    if op.name == "matmul":
        return x[0] @ x[1]
    if op.name == "transpose":
        return x[0].transpose(int(a.get("axis0", -2)), int(a.get("axis1", -1)))
    if op.name == "reshape":
        return x[0].reshape(op.shape)
    if op.name == "slice":
        return x[0].narrow(int(a["axis"]), int(a["start"]), int(a["stop"]) - int(a["start"]))
    if op.name == "concat":
        return torch.cat(x, int(a["axis"]))
    if op.name == "rotary":
        half = x[0].shape[-1] // 2
        x1, x2 = x[0][..., :half], x[0][..., half:]
        return torch.cat([x1 * x[1] - x2 * x[2], x2 * x[1] + x1 * x[2]], -1)
    if op.name == "embedding":
        return F.embedding(x[1].long(), x[0])
    if op.name == "cache_update":
        out, p = x[0].clone(), int(x[2][0])
        out[..., p:p + x[1].shape[-2], :] = x[1]
        return out
    if op.name == "flash_attention":
        q, kt, v = x  # kt and v broadcast over q's batch axes (grouped-query heads)
        k = kt.transpose(-1, -2)
        k = k.expand(*q.shape[:-2], *k.shape[-2:])
        v = v.expand(*q.shape[:-2], *v.shape[-2:])
        return F.scaled_dot_product_attention(q, k, v, is_causal=a.get("causal") == "1",
                                              scale=float(a["scale"]))
    raise NotImplementedError(f"measured dispatch: no torch form of {op.name}")


_TORCH_DTYPES = {}


def run_torch(text, *tensors):
    """The region's ops one torch call each: the native side of the cuda device's decision."""
    import torch
    _TORCH_DTYPES.update(f16=torch.float16, bf16=torch.bfloat16, f32=torch.float32,
                         i32=torch.int32)
    inputs, ops, outputs = parse_graph_text(text)
    env = dict(zip(inputs, tensors))
    for op in ops:
        env[op.result] = _torch_op(op, [env[o] for o in op.operands])
    return tuple(env[o].contiguous() for o in outputs)


# ---- the executor --------------------------------------------------------------------------

class MeasuredGraph:
    """``plan.compile(dispatch="measured")``: the graph run region by region, each region by
    the winner of its fused kernels against the framework's unfused ops."""

    def __init__(self, plan, device=""):
        self.plan = plan
        self.device = device or current_device()
        text = str(plan.graph)
        specs, ops, self.outputs = parse_graph_text(text)
        self.input_names = [_input_name(v) for v in specs]
        self._graph_inputs = list(specs)
        self._specs = dict(specs)
        for op in ops:
            specs[op.result] = (op.shape, op.dtype)
            if op.name == "cache_update" and op.attrs.get("in_place") == "1":
                # Its region would be a graph of its own with the cache as an output.
                raise NotSupportedError(
                    f"plan.compile(dispatch='measured'): {op.result} = cache_update writes its "
                    f"cache in place, which a region measured on its own cannot; use "
                    f"dispatch='fused'")
        report = json.loads(plan.explain())
        self.regions = []
        for region in report["regions"]:
            region_ops = [ops[i] for i in region["op_ids"]]
            entry = {"id": region["id"], "ops": [f"{o.result} = {o.name}" for o in region_ops],
                     "inputs": region["inputs"], "outputs": region["outputs"]}
            text = region_text(specs, region_ops, region["inputs"], region["outputs"])
            entry["text"] = text
            if all(o.name in _VIEW_OPS for o in region_ops):
                entry["selected"] = None  # a framework view: nothing to decide
            else:
                candidates = [Candidate(functools.partial(run_fused, text, self.device), "fused")]
                if region.get("rule") == "parallel_epilogue":  # both schedules compete
                    candidates = [
                        Candidate(functools.partial(run_register_fused, text, self.device),
                                  "register_fused"),
                        Candidate(functools.partial(run_scratch_spilled, text, self.device),
                                  "scratch_spilled")]
                entry["selected"] = select(
                    functools.partial(run_native, text), candidates,
                    family="graph_region:" + "+".join(o.name for o in region_ops),
                    boundary="graph")
            self.regions.append(entry)

    @property
    def kernel_count(self):
        return sum(_fused(r["text"], self.device).kernel_count
                   for r in self.regions if r["selected"])  # as fused, per region

    def __call__(self, *args, **kwargs):
        bound = bind_inputs(self.input_names, args, kwargs)
        env = {}
        for name in bound:
            if name not in self.input_names:
                raise CompilationError(f"graph input '{name}' is not an input of the graph "
                                       f"(inputs: {', '.join(self.input_names)})")
        for value, name in zip(self._graph_inputs, self.input_names):
            shape, dtype = self._specs[value]
            if name not in bound:
                raise CompilationError(f"graph input '{name}' ({_shape_text(shape)} {dtype}) "
                                       "is missing")
            _check_input(name, bound[name], shape, dtype)
            env[value] = bound[name]
        for region in self.regions:
            arrays = [env[v] for v in region["inputs"]]
            if region["selected"] is None:
                results = run_native(region["text"], *arrays)
            else:
                results = region["selected"](*arrays)
            env.update(zip(region["outputs"], results))
        return tuple(env[v] for v in self.outputs)

    def explain(self):
        """JSON: every region with its ops and its decision (the winner, why, the gate errors
        and the timings of the tournament, and whether it was measured, stored or reused)."""
        regions = []
        for r in self.regions:
            entry = {k: r[k] for k in ("id", "ops", "inputs", "outputs")}
            if r["selected"] is None:
                entry["decision"] = {"decision": "native", "reason": "a view: the framework's "
                                     "view costs nothing"}
            else:
                entry["decision"] = r["selected"].report or {
                    "decision": None, "reason": "not called yet: decided on the first call"}
            regions.append(entry)
        return json.dumps({"dispatch": "measured", "boundary": "graph", "regions": regions},
                          indent=2)


def _check_input(name, value, shape, dtype):
    got_shape = tuple(getattr(value, "shape", ()))
    got = str(getattr(value, "dtype", type(value).__name__))
    want = {"f16": ("float16",), "bf16": ("bfloat16",), "f32": ("float32",),
            "i32": ("int32",)}[dtype]
    if got_shape != tuple(shape) or not any(got.endswith(w) for w in want):
        raise CompilationError(f"graph input '{name}': expected {_shape_text(shape)} {dtype}, "
                               f"got {got_shape} {got}")


def run_native(text, *arrays):
    """The region's unfused ops in the framework the arguments come from: torch for torch
    tensors (the cuda device's peer), else numpy."""
    if any(type(a).__module__.startswith("torch") for a in arrays):
        return run_torch(text, *arrays)
    return run_numpy(text, *arrays)
