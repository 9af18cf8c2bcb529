"""The fields of a decision key (seed 002, "Tuning and measurement"; docs/tuning.md): the
device, the toolchain and framework versions, the source/compiler fingerprints of every
entrant, the arguments' dtypes, shapes and strides, the compile-policy overrides, the
candidate family and boundary and the gate's tolerances. A decision is reused only for
equal fields, so a winner for another dtype or numerical policy never is."""

import functools
import os
import sys
import types

import numpy as np

from .. import _core, disk_cache
from .arrays import describe


# Settings that change what a measurement measures: the host target's compiler, its flags, its
# worker threads and race checking; MLX's TF32 policy (seed 002).
_RELEVANT_ENVIRONMENT = ("METILE_HOST_CXX", "METILE_HOST_CXXFLAGS", "METILE_HOST_THREADS",
                         "METILE_HOST_RACECHECK", "MLX_ENABLE_TF32")


def _version(module_name):
    module = sys.modules.get(module_name)
    return getattr(module, "__version__", None) if module is not None else None


def environment():
    """The device, the versions (of frameworks already imported) and the settings a
    measurement depends on."""
    from .. import __version__, device

    fields = {"metile": __version__, "compiler": disk_cache._core_stamp(), "device": device(),
              "python": sys.version.split()[0], "numpy": np.__version__}
    for name in ("torch", "mlx.core"):
        version = _version(name)
        if version is not None:
            fields[name] = version
    fields["settings"] = {k: os.environ[k] for k in _RELEVANT_ENVIRONMENT if k in os.environ}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        fields["cuda_device"] = torch.cuda.get_device_name()
        fields["torch_cuda"] = torch.version.cuda
    return fields


def fingerprint(fn):
    """A stable text for a callable's source (a hash of it and of what it reads), or None when
    it has none (then its decisions are kept in this process only)."""
    if isinstance(fn, functools.partial):
        inner = fingerprint(fn.func)
        try:
            bound = repr(describe(list(fn.args))) + repr(sorted(
                (k, describe(v)) for k, v in fn.keywords.items()))
        except TypeError:
            return None
        return None if inner is None else f"partial:{inner}:{bound}"
    if isinstance(fn, types.FunctionType):
        return disk_cache.function_fingerprint(fn)
    if isinstance(getattr(fn, "fn", None), types.FunctionType):  # a @metile.kernel
        return disk_cache.function_fingerprint(fn.fn)
    if isinstance(fn, (types.BuiltinFunctionType, types.MethodWrapperType)) or type(
            fn).__name__ == "nb_func" or isinstance(fn, np.ufunc):
        # A framework's compiled function: its name; the framework's version is in the key.
        return f"builtin:{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', fn)}"
    return None


def tolerances():
    """The gate's tolerance table (the numerical policy a decision was gated under)."""
    return {d: _core.gate_tolerance(d) for d in ("f64", "f32", "f16", "bf16")}
