"""`torch.compile(module, backend="metile")`: torch's own graph capture (TorchDynamo's FX graph)
and meTile's regions. Each FX node carries the stack of modules it was traced in
(`nn_module_stack`); the nodes of one RMSNorm, Linear, SwiGLU MLP or Embedding module (the
outermost such module around a node) are one region: they become one call of a RegionRunner
whose native side is those nodes as a GraphModule of their own and whose candidate is meTile's
kernel (kernels.py), under the guarded runtime as in metile.compile. Everything else in the
graph runs as traced (eagerly; no other compiler is involved)."""

import operator

from .dispatch import RegionRunner
from .kernels import RegionKernels
from .regions import BOUNDARIES

NAME = "metile"
_KERNELS = RegionKernels()
LAST = []  # (path, kind, runner) of the regions of the most recent compile
KEPT = []  # (path, kind, why) of the region modules it left as traced


def torch_backend(decide="measured", persist=True):
    """A backend for torch.compile with metile.compile's choices:
    `torch.compile(model, backend=metile.torch_backend(decide="generated"))`."""

    def compile_graph(gm, example_inputs):
        return backend(gm, example_inputs, decide=decide, persist=persist)

    return compile_graph


def register():
    """Makes backend="metile" known to torch.compile (also registered through the
    torch_dynamo_backends entry point of an installed wheel)."""
    from torch._dynamo import list_backends, register_backend

    if NAME not in list_backends(exclude_tags=()):
        register_backend(compiler_fn=backend, name=NAME)


def _kind(module_type):
    import torch

    name = module_type.__name__
    if "MLP" in name:
        return "swiglu_mlp"
    if "RMSNorm" in name or issubclass(module_type, getattr(torch.nn, "RMSNorm", ())):
        return "rms_norm"
    if issubclass(module_type, torch.nn.Linear):
        return "linear"
    if issubclass(module_type, torch.nn.Embedding):
        return "embedding"
    return None


def _region_of(node):
    """(path, kind) of the outermost region module around a node, or None."""
    for path, module_type in (node.meta.get("nn_module_stack") or {}).values():
        kind = _kind(module_type)
        if kind is not None:
            return path, kind
    return None


def _groups(graph):
    groups = {}
    for node in graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            found = _region_of(node)
            if found is not None:
                groups.setdefault(found, []).append(node)
    return groups


def _subgraph(gm, nodes, inputs, output):
    """The nodes as a GraphModule of their own, taking `inputs`, returning `output`."""
    import torch.fx as fx

    graph = fx.Graph()
    env = {n: graph.placeholder(f"in{i}") for i, n in enumerate(inputs)}
    for n in nodes:
        env[n] = graph.node_copy(n, lambda a: env[a])
    graph.output(env[output])
    return fx.GraphModule(gm, graph)


def _linear_calls(nodes):
    import torch

    return [n for n in nodes if n.op == "call_function" and
            n.target in (torch._C._nn.linear, torch.nn.functional.linear)]


def _adds():
    import torch

    return (operator.add, "add", torch.add)


def _eps(nodes):
    """The float added to the mean of squares (variance + eps) in an RMSNorm's nodes."""
    for n in nodes:
        if n.op in ("call_function", "call_method") and n.target in _adds():
            floats = [a for a in n.args if isinstance(a, float)]
            if floats:
                return floats[0]
    return None


def _candidate(kind, nodes, inputs):
    """meTile's kernel for the region, taking the region's inputs in order; None where the
    nodes are not of the expected form."""
    from .torch_front import from_kernel, to_kernel

    index = {n: i for i, n in enumerate(inputs)}

    def rows(x):
        return to_kernel(x.reshape(-1, x.shape[-1]))

    if kind == "linear":
        calls = _linear_calls(nodes)
        if len(calls) != 1 or not all(a in index for a in calls[0].args[:2]):
            return None
        x, w = (index[a] for a in calls[0].args[:2])
        b = calls[0].args[2] if len(calls[0].args) > 2 else calls[0].kwargs.get("bias")
        b = index.get(b) if b is not None else None

        def linear(*args):
            bias = None if b is None else to_kernel(args[b])
            y = _KERNELS.linear(rows(args[x]), to_kernel(args[w]), bias)
            return from_kernel(y).reshape(*args[x].shape[:-1], args[w].shape[0])
        return linear
    if kind == "swiglu_mlp":
        calls = _linear_calls(nodes)
        if len(calls) != 3 or any(len(c.args) > 2 and c.args[2] is not None for c in calls):
            return None
        roles = ("gate_proj", "up_proj", "down_proj")
        by_role = {r: c for c in calls for r in roles if r in c.args[1].name}
        if len(by_role) != 3 or not all(c.args[1] in index for c in by_role.values()) or \
                by_role["gate_proj"].args[0] not in index:
            return None
        by_name = {r: index[c.args[1]] for r, c in by_role.items()}
        x = index[by_role["gate_proj"].args[0]]

        def mlp(*args):
            g, u, d = (to_kernel(args[by_name[r]]) for r in ("gate_proj", "up_proj", "down_proj"))
            return from_kernel(_KERNELS.swiglu_mlp(rows(args[x]), g, u, d)).reshape(args[x].shape)
        return mlp
    if kind == "rms_norm":
        eps = _eps(nodes)
        weights = [i for n, i in index.items() if "weight" in n.name]
        if eps is None or len(inputs) != 2 or len(weights) != 1:
            return None
        w, x = weights[0], 1 - weights[0]

        def rms_norm(*args):
            weight = args[w].to(args[x].dtype)
            return from_kernel(_KERNELS.rms_norm(rows(args[x]), to_kernel(weight), eps)).reshape(
                args[x].shape)
        return rms_norm
    weights = [i for n, i in index.items() if "weight" in n.name]
    if len(inputs) != 2 or len(weights) != 1:
        return None
    w, ids = weights[0], 1 - weights[0]

    def embedding(*args):
        import torch

        return from_kernel(_KERNELS.embedding(to_kernel(args[w]),
                                              to_kernel(args[ids].to(torch.int32))))
    return embedding


def _path(dynamo_path):
    """A module's path in the model, from dynamo's spelling of it."""
    return dynamo_path.replace("L['args'][0].", "").replace("L['self'].", "")


def backend(gm, example_inputs, decide="measured", persist=True):
    """torch.compile's backend: the graph with its regions through the guarded runtime."""
    regions, kept = [], []
    for (path, kind), nodes in _groups(gm.graph).items():
        members = set(nodes)
        inputs = []
        for n in nodes:
            for a in n.all_input_nodes:
                if a not in members and a not in inputs:
                    inputs.append(a)
        outputs = [n for n in nodes if any(u not in members for u in n.users)]
        candidate = _candidate(kind, nodes, inputs) if len(outputs) == 1 else None
        if candidate is None:
            kept.append((_path(path), kind, f"{len(outputs)} outputs" if len(outputs) != 1
                         else "its nodes are not of the form the region's kernel takes"))
            continue
        native = _subgraph(gm, nodes, inputs, outputs[0])
        runner = RegionRunner(f"model.{kind}", BOUNDARIES[kind], native, candidate, decide,
                              persist)
        def region_call(*args, _runner=runner):
            return _runner(*args)

        region_call.__name__ = f"metile_{kind}"
        with gm.graph.inserting_before(nodes[0]):
            call = gm.graph.call_function(region_call, tuple(inputs))
        outputs[0].replace_all_uses_with(call)
        for n in reversed(nodes):
            gm.graph.erase_node(n)
        regions.append((_path(path), kind, runner))
    gm.graph.lint()
    gm.recompile()
    LAST[:], KEPT[:] = regions, kept
    return gm.forward
