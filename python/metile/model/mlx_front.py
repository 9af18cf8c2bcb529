"""metile.compile for MLX models (mlx.nn.Module, mlx-lm's llama and qwen3 among them): finds the
regions among the model's modules, converts MLX arrays to and from the kernels' numpy arrays,
and runs the model for verification (a prompt through a KV cache, then greedy steps)."""

import numpy as np

from .kernels import rope_tables
from .regions import Kept, Region, original_call, stateful_region

CALL = "__call__"
FRAMEWORK = "mlx"


def is_model(model):
    return type(model).__module__.startswith("mlx") or any(
        c.__module__.startswith("mlx.nn") for c in type(model).__mro__)


def _mx():
    import mlx.core as mx

    return mx


def to_numpy(a):
    """An MLX array as a numpy array (bf16 as ml_dtypes' bfloat16), without a copy where numpy
    can read MLX's memory."""
    mx = _mx()
    if a.dtype == mx.bfloat16:
        from ..dtypes import to_numpy as numpy_dtype

        return np.asarray(a.view(mx.uint16)).view(numpy_dtype("bf16"))
    return np.asarray(a)


def from_numpy(array):
    mx = _mx()
    if array.dtype.name == "bfloat16":
        return mx.array(array.view(np.uint16)).view(mx.bfloat16)
    return mx.array(array)


_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def _dtype_name(a):
    return str(a.dtype).split(".")[-1]


def _rows(x):
    return to_numpy(x.reshape(-1, x.shape[-1]))


def _linear_weights(module):
    """(weight, bias) of a plain nn.Linear, or None for another layer."""
    import mlx.nn as nn

    if type(module) is not nn.Linear and getattr(type(module), "_metile_original_class",
                                                 None) is not nn.Linear:
        return None
    return module.weight, module.get("bias")


def _quantized(module):
    """(weight, scales, biases, group_size, bits, bias) of an affine nn.QuantizedLinear."""
    import mlx.nn as nn

    if not isinstance(module, nn.QuantizedLinear) or getattr(module, "mode", "affine") != "affine":
        return None
    return (module.weight, module.scales, module["biases"], module.group_size, module.bits,
            module.get("bias"))


def _mlp_projections(module):
    """gate_proj, up_proj, down_proj of a SwiGLU MLP, all plain or all quantised, no biases."""
    names = ("gate_proj", "up_proj", "down_proj")
    if "MLP" not in type(module).__name__ or \
            not all(isinstance(module.get(n), dict) for n in names):
        return None
    layers = [module[n] for n in names]
    if all(_linear_weights(layer) is not None and _linear_weights(layer)[1] is None
           for layer in layers):
        return "swiglu_mlp", layers
    quantized = [_quantized(layer) for layer in layers]
    if all(q is not None and q[5] is None for q in quantized) and \
            len({(q[3], q[4]) for q in quantized}) == 1:
        return "quantized_mlp", layers
    return None


def _rope_reason(module):
    import mlx.nn as nn

    if type(module) is not nn.RoPE:
        return f"no meTile region for {type(module).__name__} (a scaled or other RoPE variant)"
    if module.traditional:
        return "RoPE with traditional=True (interleaved pairs): the graph's rotary rotates halves"
    if module.scale != 1.0:
        return f"RoPE with scale {module.scale}: the graph's rotary takes positions unscaled"
    return None


def _candidate(kind, module, kernels, layers=None):
    """The region's meTile candidate: takes the native call's arguments, returns MLX arrays."""
    mx = _mx()
    if kind == "rms_norm":
        return lambda x: from_numpy(kernels.rms_norm(_rows(x), to_numpy(module.weight),
                                                     module.eps)).reshape(x.shape)
    if kind == "linear":
        def linear(x):
            weight, bias = _linear_weights(module)
            y = kernels.linear(_rows(x), to_numpy(weight),
                               None if bias is None else to_numpy(bias))
            return from_numpy(y).reshape(*x.shape[:-1], weight.shape[0])
        return linear
    if kind == "swiglu_mlp":
        def mlp(x):
            gate, up, down = (to_numpy(layer.weight) for layer in layers)
            return from_numpy(kernels.swiglu_mlp(_rows(x), gate, up, down)).reshape(x.shape)
        return mlp
    if kind == "rotary":
        def rotary(x, offset):
            position = int(offset.item())
            cos, sin = rope_tables(np.arange(position, position + x.shape[-2]), module.dims,
                                   module.base, _DTYPES[_dtype_name(x)])
            return from_numpy(kernels.rotary(to_numpy(x), cos, sin))
        return rotary
    if kind == "embedding":
        return lambda ids: from_numpy(kernels.embedding(to_numpy(module.weight),
                                                        to_numpy(ids.astype(mx.int32))))
    if kind == "quantized_linear":
        def qlinear(x):
            wq, scales, biases, group, bits, bias = _quantized(module)
            y = kernels.quantized_linear(_rows(x), *(to_numpy(a) for a in (wq, scales, biases)),
                                         group, bits)
            y = from_numpy(y).reshape(*x.shape[:-1], scales.shape[0])
            return y if bias is None else y + bias
        return qlinear

    def qmlp(x):
        weights = [_quantized(layer) for layer in layers]
        triples = [tuple(to_numpy(a) for a in w[:3]) for w in weights]
        y = kernels.quantized_mlp(_rows(x), *triples, weights[0][3], weights[0][4])
        return from_numpy(y).reshape(x.shape)
    return qmlp


def _attention_region(path, module, kernels):
    from . import mlx_attention

    model_file = mlx_attention.model_file(module)
    if model_file is None:
        return None
    state = mlx_attention.AttentionRegion(module, kernels, model_file)
    return stateful_region(path + ".attention", "attention", state, mlx_attention.attention_call,
                           mlx_attention.install, mlx_attention.uninstall)


def _rope_call(module, runner, x, offset=0):
    mx = _mx()
    if not isinstance(offset, int):
        runner.keep("per-sequence offsets (a batch KV cache)")
        return original_call(module)(x, offset=offset)
    return runner(x, mx.array(offset, dtype=mx.int32))


def _plain_call(module, runner, *args, **kwargs):
    if kwargs:
        runner.keep("called with keyword arguments")
        return original_call(module)(*args, **kwargs)
    return runner(*args)


def _kind(module):
    """(kind, layers of a composite region) of a module meTile has a region for, else None."""
    import mlx.nn as nn

    mlp = _mlp_projections(module)
    if mlp is not None:
        return mlp
    if isinstance(module, nn.RMSNorm):
        return "rms_norm", None
    if _linear_weights(module) is not None:
        return "linear", None
    if _quantized(module) is not None:
        return "quantized_linear", None
    if isinstance(module, nn.RoPE) and _rope_reason(module) is None:
        return "rotary", None
    if type(module) is nn.Embedding:
        return "embedding", None
    return None


def find_regions(model, kernels):
    """(regions, kept): a Region per module meTile can run, and what stays in MLX and why."""
    import mlx.nn as nn

    regions, kept, covered = [], [], []
    for path, module in sorted(model.named_modules(), key=lambda item: item[0].count(".")):
        if any(path == c or path.startswith(c + ".") for c in covered):
            continue
        kind = _kind(module)
        if kind is not None:
            kind, layers = kind
            native = original_call(module)
            if kind == "rotary":
                def native_rope(x, offset, call=native):
                    return call(x, offset=int(offset.item()))
                native = native_rope
            regions.append(Region(path or "<model>", kind, module,
                                  _rope_call if kind == "rotary" else _plain_call,
                                  native=native,
                                  candidate=_candidate(kind, module, kernels, layers)))
            covered.append(path)
            continue
        name = type(module).__name__
        children = [k for k, v in module.children().items() if v]
        if all(isinstance(module.get(p), dict) for p in ("q_proj", "k_proj", "v_proj", "o_proj")):
            region = _attention_region(path, module, kernels)
            if region is not None:
                regions.append(region)
                kept.append(Kept(path, name, "the KV cache update runs in MLX (the attention "
                                 "core is a region; the projections, norms and rotary too)"))
            else:
                kept.append(Kept(path, name, "the attention core runs in MLX: its model file "
                                 "does not call mlx-lm's scaled_dot_product_attention"))
        elif isinstance(module, nn.RoPE):
            kept.append(Kept(path, name, _rope_reason(module)))
        elif not children:
            kept.append(Kept(path, name, f"no meTile region for {name}"))
        elif path:
            kept.append(Kept(path, name, "its own operations between its submodules (residual "
                             "adds, reshapes, masks) run in MLX"))
    return (sorted(regions, key=lambda r: _natural(r.path)),
            sorted(kept, key=lambda k: _natural(k.path)))


def _natural(path):
    """model.layers.10 after model.layers.9."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split(".")]


def forward(model, tokens, cache):
    """Logits [L, V] (float64 numpy) of the model on `tokens` (a list of ints) after `cache`."""
    mx = _mx()
    logits = model(mx.array([tokens], dtype=mx.int32), cache=cache)[0]
    return np.array(logits.astype(mx.float32), dtype=np.float64)


def new_cache(model):
    from mlx_lm.models.cache import make_prompt_cache

    return make_prompt_cache(model)


def activation_dtype(model):
    """The dtype name of the model's first floating parameter ("f32", "f16", "bf16")."""
    from mlx.utils import tree_flatten

    mx = _mx()
    for _, value in tree_flatten(model.parameters()):
        if value.dtype in (mx.float32, mx.float16, mx.bfloat16):
            return _DTYPES[_dtype_name(value)]
    return "f32"
