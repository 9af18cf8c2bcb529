"""The attention core of a transformers model as a region: meTile registers itself as an
attention implementation ("metile", transformers' AttentionInterface, with sdpa's masks), and
an attention module compiled by metile.compile runs softmax(scale q k^T + mask) v as a graph
(grouped-query heads broadcast, not repeated) beside torch's scaled_dot_product_attention,
through the guarded runtime, keys padded to a bucket of lengths (attention_shapes.py)."""

from types import SimpleNamespace

from .attention_shapes import decision_shapes, grouped, padded_length

NAME = "metile"


def register():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, attention_forward)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def _sdpa(*args, **kwargs):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward(*args, **kwargs)


def install(model, attention):
    """Routes the module's attention through its region: the model's attention implementation
    becomes "metile" (a module without a region keeps torch's sdpa, by attention_forward's
    fallback)."""
    if getattr(model, "_metile_previous_attention", None) is None:
        register()
        object.__setattr__(model, "_metile_previous_attention", model.config._attn_implementation)
        model.set_attn_implementation(NAME)
    object.__setattr__(attention.module, "_metile_attention", attention)


def uninstall(model, attention):
    if hasattr(attention.module, "_metile_attention"):
        object.__delattr__(attention.module, "_metile_attention")
    previous = getattr(model, "_metile_previous_attention", None)
    if previous is not None:
        model.set_attn_implementation(previous)
        object.__delattr__(model, "_metile_previous_attention")


class AttentionRegion:
    """What one attention module's call needs beside its arguments: the module, and the
    current call's mask, causality and key length (set by attention_forward)."""

    def __init__(self, module, kernels):
        self.module, self.kernels = module, kernels
        self.call = None
        self.region = None  # the compiler's Region (its runner decides)

    def native(self, q, k, v, mask):
        call = self.call
        length = call.length
        return _sdpa(self.module, q, k[:, :, :length], v[:, :, :length], call.mask,
                     scaling=call.scaling, is_causal=call.causal)[0]

    def candidate(self, q, k, v, mask):
        from .torch_front import from_kernel, to_kernel

        call = self.call
        qg, kg, vg, mg = grouped(q, k, v, mask, lambda m, shape: m.expand(*shape))
        out = self.kernels.attention(*(to_kernel(t) for t in (qg, kg, vg)),
                                     None if mg is None else to_kernel(mg), call.scaling,
                                     call.causal)
        out = from_kernel(out).reshape(q.shape)
        if mask is not None:  # a query that may see no key gives 0, as torch's sdpa does
            import torch

            out = out.masked_fill(torch.isneginf(mask).all(-1, keepdim=True), 0)
        return out.transpose(1, 2).contiguous()


def _padded_args(query, key, value, mask, causal, padded):
    """The region's arguments: keys and values padded to `padded` rows, the mask additive
    (0 or -inf) over them; none of it for a causal call (no mask, no padding)."""
    import torch

    if causal:
        return query, key, value, None
    length = key.shape[2]
    if padded > length:
        pad = (0, 0, 0, padded - length)
        key = torch.nn.functional.pad(key, pad)
        value = torch.nn.functional.pad(value, pad)
    b, _, rows, _ = query.shape
    additive = torch.zeros((b, 1, rows, padded), dtype=query.dtype, device=query.device)
    if mask is not None:
        keep = mask if mask.dtype == torch.bool else mask == 0
        additive[..., :length].masked_fill_(~keep.expand(b, 1, rows, length), float("-inf"))
    additive[..., length:] = float("-inf")
    return query, key, value, additive


def _unsupported(dropout, mask, kwargs):
    """Why a call is not the region's (sdpa takes it), or an empty string."""
    if dropout:
        return "dropout"
    for name in ("softcap", "sliding_window", "output_attentions"):
        if kwargs.get(name):
            return name
    return "a mask that is not 4-D" if mask is not None and mask.dim() != 4 else ""


def attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                      is_causal=None, **kwargs):
    """transformers' attention interface: (output [B, L, H, D], None)."""
    attention = getattr(module, "_metile_attention", None)
    unsupported = _unsupported(dropout, attention_mask, kwargs)
    if attention is not None and unsupported:
        attention.region.runner.keep(unsupported)
    if attention is None or unsupported:
        return _sdpa(module, query, key, value, attention_mask, dropout=dropout,
                     scaling=scaling, is_causal=is_causal, **kwargs)
    rows = query.shape[2]
    causal = bool(rows > 1 and attention_mask is None and
                  (is_causal if is_causal is not None else getattr(module, "is_causal", True)))
    if causal:  # transformers' rule: a causal call attends to the first rows keys
        key, value = key[:, :, :rows], value[:, :, :rows]
    length = key.shape[2]
    padded = padded_length(length, causal)
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    attention.call = SimpleNamespace(mask=attention_mask, causal=causal, length=length,
                                  scaling=scale)
    runner = attention.region.runner
    # A decided call goes to its winner without padding for the framework.
    if runner.winner_for(decision_shapes(query, key, value, padded, causal)) is runner.native:
        return _sdpa(module, query, key, value, attention_mask, scaling=scale, is_causal=causal)
    return runner(*_padded_args(query, key, value, attention_mask, causal, padded)), None

