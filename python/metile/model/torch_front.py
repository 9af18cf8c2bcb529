"""metile.compile for torch models (torch.nn.Module; Hugging Face transformers' Llama and Qwen3
among them): finds the regions among the model's modules by their structure, passes torch
tensors to the kernels (CUDA tensors in place on the cuda device, CPU tensors through numpy on
the host target), and runs the model for verification (a prompt through a KV cache, then
greedy steps)."""

import inspect

import numpy as np

from .regions import Kept, Region, original_call, stateful_region

CALL = "forward"
FRAMEWORK = "torch"
_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def is_model(model):
    return any(c.__module__.startswith("torch.nn") for c in type(model).__mro__)


def _torch():
    import torch

    return torch


def to_kernel(t):
    """A tensor as the kernels take it: CUDA tensors as they are, CPU ones as numpy arrays
    sharing their memory (bf16 as ml_dtypes' bfloat16)."""
    if t.is_cuda:
        return t.contiguous()
    t = t.detach().contiguous()
    if t.dtype == _torch().bfloat16:
        from ..dtypes import to_numpy as numpy_dtype

        return t.view(_torch().int16).numpy().view(numpy_dtype("bf16"))
    return t.numpy()


def from_kernel(value):
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return value
    if value.dtype.name == "bfloat16":
        return torch.from_numpy(value.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(value)


def _rows(x):
    return to_kernel(x.reshape(-1, x.shape[-1]))


def _is_linear(module):
    nn = _torch().nn
    return type(module) is nn.Linear or getattr(type(module), "_metile_original_class",
                                                None) is nn.Linear


def _rms_eps(module):
    """The epsilon of an RMSNorm module (HF's variance_epsilon, torch's eps), or None."""
    nn = _torch().nn
    if isinstance(module, nn.RMSNorm):
        return module.eps if module.eps is not None else float(np.finfo(np.float32).eps)
    if "RMSNorm" in type(module).__name__ and isinstance(getattr(module, "weight", None),
                                                          _torch().Tensor):
        eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
        return float(eps) if eps is not None else None
    return None


def _is_swiglu_mlp(module):
    names = ("gate_proj", "up_proj", "down_proj")
    if "MLP" not in type(module).__name__ or not all(hasattr(module, n) for n in names):
        return False
    act = getattr(module, "act_fn", None)
    silu = type(act).__name__ in ("SiLU", "SiLUActivation")
    return silu and all(_is_linear(getattr(module, n)) and getattr(module, n).bias is None
                        for n in names)


def _kind(module):
    nn = _torch().nn
    if _is_swiglu_mlp(module):
        return "swiglu_mlp"
    if _rms_eps(module) is not None and module.weight.dim() == 1:
        return "rms_norm"
    if _is_linear(module):
        return "linear"
    if type(module) is nn.Embedding and module.max_norm is None:
        return "embedding"
    return None


def _candidate(kind, module, kernels):
    torch = _torch()
    if kind == "rms_norm":
        eps = _rms_eps(module)

        def rms_norm(x):
            weight = module.weight.to(x.dtype)
            return from_kernel(kernels.rms_norm(_rows(x), to_kernel(weight), eps)).reshape(x.shape)
        return rms_norm
    if kind == "linear":
        def linear(x):
            bias = None if module.bias is None else to_kernel(module.bias)
            y = kernels.linear(_rows(x), to_kernel(module.weight), bias)
            return from_kernel(y).reshape(*x.shape[:-1], module.out_features)
        return linear
    if kind == "swiglu_mlp":
        def mlp(x):
            gate, up, down = (to_kernel(getattr(module, n).weight)
                              for n in ("gate_proj", "up_proj", "down_proj"))
            return from_kernel(kernels.swiglu_mlp(_rows(x), gate, up, down)).reshape(x.shape)
        return mlp

    def embedding(ids):
        return from_kernel(kernels.embedding(to_kernel(module.weight),
                                             to_kernel(ids.to(torch.int32))))
    return embedding


def _attention_region(model, path, module, kernels):
    from . import torch_attention

    attention = torch_attention.AttentionRegion(module, kernels)
    return stateful_region(path + ".attention", "attention", attention, None,
                           lambda r, _call: torch_attention.install(model, attention),
                           lambda r: torch_attention.uninstall(model, attention))


def _rotary_region(path, module, kernels):
    from . import torch_rotary

    model_file = torch_rotary.model_file(module)
    if model_file is None:
        return None
    state = torch_rotary.RotaryRegion(module, kernels, model_file)
    return stateful_region(path + ".rotary", "rotary", state, torch_rotary.forward_call,
                           torch_rotary.install, torch_rotary.uninstall)


def _call(module, runner, *args, **kwargs):
    if kwargs or len(args) != 1:
        runner.keep("called with keyword arguments or more than one argument")
        return original_call(module, CALL)(*args, **kwargs)
    return runner(*args)


def find_regions(model, kernels):
    """(regions, kept): a Region per module meTile can run, and what stays in torch and why."""
    regions, kept, covered = [], [], []
    for path, module in model.named_modules():
        if any(path.startswith(c + ".") for c in covered):
            continue
        kind = _kind(module)
        name = type(module).__name__
        if kind is not None:
            regions.append(Region(path or "<model>", kind, module, _call,
                                  native=original_call(module, CALL),
                                  candidate=_candidate(kind, module, kernels)))
            covered.append(path)
        elif all(hasattr(module, p) for p in ("q_proj", "k_proj", "v_proj", "o_proj")):
            if hasattr(model, "set_attn_implementation"):
                regions.append(_attention_region(model, path, module, kernels))
            rotary = _rotary_region(path, module, kernels)
            if rotary is not None:
                regions.append(rotary)
            kept.append(Kept(path, name, "the KV cache update runs in torch (the attention core "
                             "is a region, through transformers' attention interface; the "
                             "rotary embedding, projections and norms are regions)"))
        elif not any(True for _ in module.children()):
            if any(True for _ in module.parameters(recurse=False)) or "Rotary" in name:
                kept.append(Kept(path, name, f"no meTile region for {name}"))
        elif path and name not in ("ModuleList", "ModuleDict", "Sequential"):
            kept.append(Kept(path, name, "its own operations between its submodules (residual "
                             "adds, reshapes, masks) run in torch"))
    return regions, kept


def forward(model, tokens, cache):
    """Logits [L, V] (float64 numpy) of the model on `tokens` after `cache` (a transformers
    DynamicCache, updated in place)."""
    torch = _torch()
    device = next(model.parameters()).device
    ids = torch.tensor([tokens], device=device)
    # transformers 5.x renames past_key_values to cache (deprecated from 5.2x, removed in 5.40)
    name = "cache" if "cache" in inspect.signature(type(model).forward).parameters \
        else "past_key_values"
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True, **{name: cache})
    return out.logits[0].float().cpu().numpy().astype(np.float64)


def new_cache(model):
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def activation_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return _DTYPES.get(str(p.dtype).split(".")[-1], "f32")
    return "f32"
