"""A compiled model's regions: which module of the model a meTile kernel may replace, and how
it is swapped in. A region's module keeps its parameters, names and place in the model; only
its class becomes a subclass whose call goes through the region's runner (dispatch.py), so
restoring the model is setting the class back."""

from dataclasses import dataclass, field

# The guarded runtime's headroom per region kind (seed 001: 5% for isolated primitives, 10% for
# graph or quantised-MLP boundaries).
BOUNDARIES = {"rms_norm": "primitive", "linear": "primitive", "rotary": "primitive",
              "embedding": "primitive", "quantized_linear": "primitive",
              "swiglu_mlp": "graph", "attention": "graph", "quantized_mlp": "quantized_mlp"}


@dataclass
class Region:
    path: str  # the module's path in the model ("model.layers.0.mlp")
    kind: str  # a key of BOUNDARIES
    module: object
    call: object  # call(module, runner, *args, **kwargs): the module's call through the runner
    native: object = None  # the framework's own call of the region, on positional arguments
    candidate: object = None  # meTile's: the same arguments, the same outputs
    runner: object = None  # dispatch.RegionRunner, set by the compiler
    kernels: list = field(default_factory=list)  # labels of the kernels it launched
    install: object = None  # install(region, call_name) if not by swapping its class
    state: object = None  # what a kind keeps between the module's call and the runner's
    uninstall: object = None

    @property
    def boundary(self):
        return BOUNDARIES[self.kind]


def stateful_region(path, kind, state, call, install, uninstall):
    """A region whose native and candidate sides are methods of `state` (the module's and the
    current call's facts between the module's call and the runner's), told its Region."""
    region = Region(path, kind, state.module, call, native=state.native,
                    candidate=state.candidate, install=install, uninstall=uninstall, state=state)
    state.region = region
    return region


@dataclass
class Kept:
    """What stays in the framework, and why (explain() lists it)."""
    path: str
    module: str
    reason: str


_SUBCLASSES = {}


def _dispatching_call(self, *args, **kwargs):
    region = self._metile_region
    return region.call(self, region.runner, *args, **kwargs)


def install(region, call_name="__call__"):
    """Routes the region module's `call_name` (MLX: __call__, torch: forward) through its
    runner."""
    module = region.module
    cls = type(module)
    sub = _SUBCLASSES.get((cls, call_name))
    if sub is None:
        sub = type(cls.__name__, (cls,), {call_name: _dispatching_call,
                                          "_metile_original_class": cls,
                                          "__module__": cls.__module__})
        _SUBCLASSES[(cls, call_name)] = sub
    object.__setattr__(module, "_metile_region", region)
    module.__class__ = sub


def uninstall(region):
    module = region.module
    original = getattr(type(module), "_metile_original_class", None)
    if original is not None:
        module.__class__ = original
        object.__delattr__(module, "_metile_region")


def original_call(module, call_name="__call__"):
    """The module's own call, bypassing its region (the native operation)."""
    cls = getattr(type(module), "_metile_original_class", type(module))
    return getattr(cls, call_name).__get__(module)
