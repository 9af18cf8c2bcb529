"""The rotary embedding of a transformers attention module as a region. transformers' attention
modules call `apply_rotary_pos_emb(q, k, cos, sin)` from their model file's globals;
metile.compile replaces that name there (file_patches.py) with `dispatch`, which runs the
region of the attention module being called (its forward swapped to set a context variable)
and the file's own function for every other caller. The graph's rotary takes cos and sin
[T, D/2]: transformers' tables are [B, T, D] with the two halves equal, so a call with one
batch row of positions is a region, another goes to the file's function."""

import contextvars

from . import file_patches, regions
from .regions import original_call

NAME = "apply_rotary_pos_emb"
_CURRENT = contextvars.ContextVar("metile_torch_rotary", default=None)


class RotaryRegion:
    def __init__(self, module, kernels, model_file):
        self.module, self.kernels, self.model_file = module, kernels, model_file
        self.region = None

    def native(self, q, k, cos, sin):
        return file_patches.original(self.model_file, NAME)(q, k, cos, sin)

    def candidate(self, q, k, cos, sin):
        from .torch_front import from_kernel, to_kernel

        half = q.shape[-1] // 2
        tables = [to_kernel(t[0, :, :half].to(q.dtype)) for t in (cos, sin)]
        return tuple(from_kernel(self.kernels.rotary(to_kernel(x), *tables)) for x in (q, k))


_DISPATCHERS = {}


def dispatcher(file):
    """The file's apply_rotary_pos_emb while patched: the current module's region, else the
    file's own function."""
    found = _DISPATCHERS.get(file)
    if found is not None:
        return found

    def dispatch(q, k, cos, sin, *args, **kwargs):
        rotary = _CURRENT.get()
        standard = not args and not kwargs and cos.dim() == 3 and cos.shape[0] == 1
        if rotary is None or rotary.model_file != file:
            return file_patches.original(file, NAME)(q, k, cos, sin, *args, **kwargs)
        if not standard or q.shape[-1] != cos.shape[-1]:
            rotary.region.runner.keep("tables of several batch rows of positions, or a partial "
                                      "rotary dimension")
            return file_patches.original(file, NAME)(q, k, cos, sin, *args, **kwargs)
        return rotary.region.runner(q, k, cos, sin)

    _DISPATCHERS[file] = dispatch
    return dispatch


def forward_call(module, runner, *args, **kwargs):
    """The attention module's forward, its rotary region current while it runs."""
    token = _CURRENT.set(module._metile_region.state)
    try:
        return original_call(module, "forward")(*args, **kwargs)
    finally:
        _CURRENT.reset(token)


def model_file(module):
    """The file whose apply_rotary_pos_emb the module's class calls, or None."""
    cls = getattr(type(module), "_metile_original_class", type(module))
    found = file_patches.original(cls.__module__, NAME)
    return cls.__module__ if callable(found) else None


def install(region, call_name):
    regions.install(region, call_name)
    file_patches.patch(region.state.model_file, NAME, dispatcher(region.state.model_file))


def uninstall(region):
    regions.uninstall(region)
    file_patches.unpatch(region.state.model_file, NAME)
