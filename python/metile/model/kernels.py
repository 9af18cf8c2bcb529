"""The kernels of a compiled model's regions, framework-free: each region kind is a GraphBuilder
graph (planned by plan_graph_fusion, compiled by plan.compile()) or a metile_kernels kernel,
called on numpy arrays (or torch CUDA tensors on the cuda device). A graph is built and compiled
once per kind, shapes, dtypes and parameters; `on_compile(label, seconds)` hears of each."""

import time

import numpy as np

from .. import dtypes
from ..buffer import describe
from .._core import GraphBuilder, TensorSpec, plan_graph_fusion


def _spec(value, name):
    return tuple(int(d) for d in value.shape), describe(value, name)[1]


class RegionKernels:
    """Compiled graphs by key, shared by every region of a model (the layers of a model share
    their shapes, so one kernel serves them all)."""

    def __init__(self, device="", on_compile=None):
        self.device = device
        self.on_compile = on_compile
        self.graphs = {}  # key -> GraphExecutable
        self.compile_seconds = 0.0
        self.current = None  # the Region whose candidate is running: it lists its kernels

    def _graph(self, key, label, build):
        run = self.graphs.get(key)
        if run is None:
            started = time.perf_counter()
            run = plan_graph_fusion(build()).compile(device=self.device)
            seconds = time.perf_counter() - started
            self.compile_seconds += seconds
            self.graphs[key] = run
            if self.on_compile is not None:
                self.on_compile(label, seconds)
        return run

    def _note(self, label):
        if self.current is not None and label not in self.current.kernels:
            self.current.kernels.append(label)

    def _run(self, op, params, inputs, body):
        """Runs the graph `body(builder, values) -> outputs` over the named `inputs` (a dict of
        arrays); its key is the op, the parameters and every input's shape and dtype."""
        specs = {name: _spec(value, name) for name, value in inputs.items()}
        key = (op, params, tuple(sorted(specs.items())))

        def build():
            b = GraphBuilder()
            values = {name: b.input(name, TensorSpec(shape, dtype))
                      for name, (shape, dtype) in specs.items()}
            return b.build(list(body(b, values)))

        label = f"{op} " + " ".join(f"{n}{list(s)}:{d}" for n, (s, d) in specs.items())
        self._note(label)
        return self._graph(key, label, build)(**inputs)

    def rms_norm(self, x, weight, eps):
        """x [M, D] normalised over rows, times weight [D]."""
        return self._run("rms_norm", (float(eps),), {"x": x, "weight": weight},
                         lambda b, v: [b.rms_norm(v["x"], v["weight"], float(eps))])[0]

    def linear(self, x, weight, bias=None):
        """x [M, K] @ weight.T for weight [N, K] (torch's and MLX's Linear layout) + bias [N]."""
        inputs = {"x": x, "weight": weight}
        if bias is not None:
            inputs["bias"] = bias

        def body(b, v):
            y = b.matmul(v["x"], b.transpose(v["weight"]))
            return [b.add(y, v["bias"]) if bias is not None else y]

        return self._run("linear", (), inputs, body)[0]

    def swiglu_mlp(self, x, gate, up, down):
        """down(silu(gate(x)) * up(x)) for Linear weights gate, up [I, H] and down [H, I]: the
        ParallelEpilogueRule region (gate and up share x; the product feeds down)."""

        def body(b, v):
            def proj(a, w):
                return b.matmul(a, b.transpose(v[w]))

            hidden = b.multiply(b.silu(proj(v["x"], "gate")), proj(v["x"], "up"))
            return [proj(hidden, "down")]

        return self._run("swiglu_mlp", (), {"x": x, "gate": gate, "up": up, "down": down},
                         body)[0]

    def rotary(self, x, cos, sin):
        """Llama's half rotation of x [..., T, D] by cos, sin [T, D/2]."""
        return self._run("rotary", (), {"x": x, "cos": cos, "sin": sin},
                         lambda b, v: [b.rotary(v["x"], v["cos"], v["sin"])])[0]

    def embedding(self, table, ids):
        """table[ids] for ids of i32."""
        return self._run("embedding", (), {"table": table, "ids": ids},
                         lambda b, v: [b.embedding(v["table"], v["ids"])])[0]


    def attention(self, q, k, v, mask, scale, causal):
        """softmax(scale * q @ k^T [+ mask] [causal]) @ v over the last two axes, for q
        [N, G, L, D] and k, v [N, 1, S, D] (G query heads per key/value head), mask [N, 1, L, S]
        additive or None."""
        inputs = {"q": q, "k": k, "v": v}
        if mask is not None:
            inputs["mask"] = mask

        def body(b, x):
            scores = b.scale(b.matmul(x["q"], b.transpose(x["k"])), float(scale))
            if causal:
                scores = b.causal_mask(scores)
            if mask is not None:
                scores = b.add(scores, x["mask"])
            return [b.matmul(b.softmax(scores), x["v"])]

        return self._run("attention", (float(scale), bool(causal)), inputs, body)[0]

    def quantized_linear(self, x, wq, scales, biases, group_size, bits):
        """x [M, K] @ dequantize(wq, scales, biases).T in MLX's affine layout
        (metile_kernels.quantized_matmul)."""
        from metile_kernels.quantized_matmul import quantized_linear

        self._note(f"metile_kernels.quantized_linear x{list(x.shape)} w{list(wq.shape)} "
                   f"bits={bits} group={group_size}")
        return quantized_linear(x, wq, scales, biases, group_size=group_size, bits=bits)

    def quantized_mlp(self, x, gate, up, down, group_size, bits):
        """down(silu(gate(x)) * up(x)), each a (wq, scales, biases) triple
        (metile_kernels.quantized_mlp)."""
        from metile_kernels.quantized_mlp import quantized_swiglu_mlp

        self._note(f"metile_kernels.quantized_swiglu_mlp x{list(x.shape)} "
                   f"gate{list(gate[0].shape)} bits={bits} group={group_size}")
        return quantized_swiglu_mlp(x, gate, up, down, group_size=group_size, bits=bits)


def rope_tables(positions, dims, base, dtype):
    """cos and sin [T, dims / 2] of positions * base^(-2i / dims) (Llama's and MLX's RoPE with
    traditional=False), computed in float64 and rounded once to the activation dtype."""
    half = dims // 2
    angles = np.asarray(positions, np.float64)[:, None] * float(base) ** (-np.arange(half) / half)
    numpy_dtype = dtypes.to_numpy(dtype)
    return np.cos(angles).astype(numpy_dtype), np.sin(angles).astype(numpy_dtype)
