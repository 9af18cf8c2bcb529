"""Decode-shaped matmul (M = 1-16): output [M, N] = epilogue(x [M, K] @ weight [K, N]); the
kernels are in decode_kernels.py, their plans and launches here.

At decode batch sizes a matmul is a read of the weights, so the kernels here are shaped to
stream them at memory bandwidth on every SM rather than to feed the matrix units:

- ``gemv``: up to four activation rows and BLOCK_N output columns a program, as 1-D tiles
  only, so the compiler gives each thread runs of adjacent columns and reads each run of a
  weight row as one 16-byte vector, used for every row; a K step reads UNROLL weight rows with
  independent loads and each thread accumulates its own columns in f32 (no reduction across
  threads).
- ``split_k``: BLOCK_M (16) rows and BLOCK_N columns a program, ``metile.dot`` over one K chunk.

Both split K over the grid's third axis so that every SM has work (N / BLOCK_N column blocks
alone give 16-64 programs at N = 4096). A split's partial sums are reduced by one of:

- ``"atomic"``: f32 ``atomic_add`` into a zeroed [M, N] workspace, zeroed again by the second
  pass once read;
- ``"two_pass"``: each split stores its [M, N] f32 slice of a [splits, M, N] workspace, and
  the second pass sums the slices in a fixed order (deterministic);
- ``"last_split"``: one launch: each split stores its slice and takes a ticket per element;
  the split that draws the last one sums the slices in order and applies the epilogue.

In each the bias, activation and residual are applied once, to the reduced sum (never to a
partial), which rounds once to the output dtype. With one split the first kernel applies the
epilogue itself and there is no workspace and no second kernel.

The epilogue is ``activation(acc + bias) + residual``: bias [N], activation one of
``ACTIVATIONS``, residual [M, N]; each optional. x, weight, bias and residual share one dtype
(f16, bf16 or f32), the output is x's dtype. Any shape is exact: elements past the edges of
x and weight count as 0 and stores never write past those of the output (ragged N and K
included).

``plan(rows, columns, inner, dtype)`` picks the strategy, the blocks and the split count and
says why; ``decode_matmul`` runs a plan; ``candidates`` gives the strategies as metile.select
candidates, so the guarded runtime measures them against the framework's matmul on the device
(the GPU decides among the reductions and the strategies); ``linear`` is that selector;
``prepare`` binds a plan's launches once (a DecodeDispatch).
"""

import metile

from .decode_kernels import ACTIVATIONS, REDUCTIONS, finish, gemv, split_k

DECODE_ROWS = 16  # up to this many rows the decode strategies apply
# Most splits a plan gives two_pass and last_split, which read every slice of every element
# (finish 16 at a time, the last split 8): more and that read is the kernel's tail.
MAX_SLICES = 32
STRATEGIES = ("gemv", "split_k")
_DTYPES = ("f16", "bf16", "f32")


def _processors():
    """Programs that run at once, roughly: the GPU's SMs on the cuda device (132 on the H200),
    else a small number (the host emulator's worker pool)."""
    if metile.device() == "cuda":
        import torch

        return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    return 4


def blocks(strategy, dtype, rows):
    """The blocks of ``strategy`` for ``rows`` rows of ``dtype`` on the default device, a dict:
    BLOCK_M (gemv: rows a program, up to 4, sharing each weight load), BLOCK_N, BLOCK_K (K rows
    a step). gemv's BLOCK_N columns are 64 threads' 16-byte vectors on the cuda device (512
    16-bit or 256 f32 columns) and a step reads 8 weight rows; split_k's tile is 16 rows
    (mma.sync's) by 64 columns by 64. The host emulator's blocks are small (it runs every
    thread)."""
    cuda = metile.device() == "cuda"
    if strategy == "gemv":
        return {"BLOCK_M": min(4, metile.next_power_of_2(rows)),
                "BLOCK_N": (512 if dtype != "f32" else 256) if cuda else 32,
                "BLOCK_K": 8 if cuda else 4}
    return {"BLOCK_M": 16, "BLOCK_N": 64 if cuda else 32, "BLOCK_K": 64 if cuda else 16}


def plan(rows, columns, inner, dtype, strategy=None, reduce=None, splits=None, block_m=None,
         block_n=None, block_k=None):
    """The decode plan for x [rows, inner] @ weight [inner, columns] of ``dtype``: a dict with
    the strategy, reduction, blocks, split count and K chunk, and ``reason``, why. Unset choices
    are made here: on a GPU split_k for every M (measured faster than gemv at M = 1-4 on an
    H100); elsewhere gemv for up to four rows (one program reads a weight vector once for all of
    them), split_k's dot for more (one read of the weights for 16 rows); the splits give every
    SM about 16 gemv programs (of 64 threads: ptxas keeps only two or three of a thread's
    16-byte loads in flight, so the latency is covered by resident warps) or four split_k ones
    (256 threads, cp.async stages), and a split owns at least two K steps; the reduction is
    atomic above MAX_SLICES splits and two_pass (deterministic) otherwise, and a plan asking
    for two_pass or last_split gets at most MAX_SLICES splits (metile.select measures them
    against each other on the device, ``candidates``)."""
    if not 1 <= rows <= DECODE_ROWS:
        raise ValueError(f"decode_gemm.plan: the decode strategies take 1 to {DECODE_ROWS} rows, "
                         f"got {rows}; larger M is metile_kernels.gemm.matmul's")
    if dtype not in _DTYPES:
        raise ValueError(f"decode_gemm.plan: operands must be f16, bf16 or f32, got {dtype}")
    if strategy not in (None,) + STRATEGIES:
        raise ValueError(f"decode_gemm.plan: strategy must be one of {STRATEGIES}, got "
                         f"{strategy!r}")
    if reduce not in (None,) + REDUCTIONS:
        raise ValueError(f"decode_gemm.plan: reduce must be one of {REDUCTIONS}, got {reduce!r}")
    reasons = []
    if strategy is None and metile.device() == "cuda":
        # Measured on an H100 (benchmarks/results/h100-decode-gemm-quick-6b72df4.json): split_k
        # read the weights at 0.83-0.91 of cuBLAS's speed at M = 1-4, gemv at 0.20-0.39.
        strategy = "split_k"
        reasons.append(f"split_k: M = {rows} on a GPU: its dot with cp.async stages outran gemv at "
                       "every M measured (H100: 0.83-0.91 of cuBLAS at M = 1-4 against 0.20-0.39)")
    elif strategy is None:
        strategy = "gemv" if rows <= 4 else "split_k"
        reasons.append(f"{strategy}: M = {rows} " + (
            "<= 4: the weights stream through 16-byte vector loads, each load used for every "
            "row" if strategy == "gemv"
            else "> 4: one dot over 16 rows reads the weights once for all of them"))
    else:
        reasons.append(f"{strategy}: asked")
    chosen = blocks(strategy, dtype, rows)
    if block_m is not None and strategy == "gemv" and block_m not in (1, 2, 4):
        raise ValueError(f"decode_gemm.plan: gemv's block_m (rows a program) must be 1, 2 or 4, "
                         f"got {block_m}")
    chosen = dict(chosen, BLOCK_M=block_m or chosen["BLOCK_M"],
                  BLOCK_N=block_n or chosen["BLOCK_N"], BLOCK_K=block_k or chosen["BLOCK_K"])
    block_m, block_n, block_k = chosen["BLOCK_M"], chosen["BLOCK_N"], chosen["BLOCK_K"]
    tiles = metile.cdiv(rows, block_m) * metile.cdiv(columns, block_n)
    steps = metile.cdiv(inner, block_k)
    if splits is None:
        # Enough resident warps to cover the memory latency (ptxas issues about three of a gemv
        # thread's loads ahead of their use, whatever the unrolling).
        per_processor = 16 if strategy == "gemv" else 4
        wanted = metile.cdiv(per_processor * _processors(), tiles)
        splits = max(1, min(wanted, steps // 2))
        if reduce in ("two_pass", "last_split") and splits > MAX_SLICES:
            splits = MAX_SLICES
            reasons.append(f"{reduce} reads every slice: at most {MAX_SLICES} splits")
        chunk = metile.cdiv(steps, splits) * block_k
        splits = metile.cdiv(inner, chunk)  # no split without K to read
        reasons.append(f"{tiles} output tiles for {_processors()} processors: K split {splits} "
                       f"ways of {chunk} rows" if splits > 1 else
                       f"{tiles} output tiles fill the processors: K is not split")
    elif splits < 1:
        raise ValueError(f"decode_gemm.plan: splits must be >= 1, got {splits}")
    chunk = metile.cdiv(steps, splits) * block_k
    splits = metile.cdiv(inner, chunk)  # no split without K to read
    if splits == 1:
        reduce = None
    elif reduce is None and splits > MAX_SLICES:
        reduce = "atomic"
        reasons.append(f"over {MAX_SLICES} splits: partials added by atomics (a second pass "
                       "would read every slice); metile.select measures the others against it")
    elif reduce is None:
        reduce = "two_pass"
        reasons.append("partials reduced in a second pass (deterministic); metile.select "
                       "measures the others against it")
    return {"strategy": strategy, "reduce": reduce, "BLOCK_M": block_m, "BLOCK_N": block_n,
            "BLOCK_K": block_k, "splits": splits, "chunk": chunk, "rows": rows,
            "columns": columns, "inner": inner, "dtype": dtype, "reason": "; ".join(reasons)}


def _is_torch(value):
    return type(value).__module__.split(".")[0] == "torch"


def _workspace(like, shape, zero, dtype="f32"):
    """An f32 (or i32) array on ``like``'s device: zeros where the kernels accumulate into it
    or count in it, else uninitialised."""
    if _is_torch(like):
        import torch

        make = torch.zeros if zero else torch.empty
        return make(shape, dtype=getattr(torch, {"f32": "float32", "i32": "int32"}[dtype]),
                    device=like.device)
    import numpy as np

    return np.zeros(shape, {"f32": np.float32, "i32": np.int32}[dtype])


def empty_output(x, rows, columns):
    """A [rows, columns] array of x's dtype: numpy, or torch on x's device."""
    if _is_torch(x):
        import torch

        return torch.empty((rows, columns), dtype=x.dtype, device=x.device)
    import numpy as np

    return np.empty((rows, columns), dtype=np.asarray(x).dtype)


def _shape_dtype(value, name):
    from metile.buffer import describe

    return tuple(value.shape), describe(value, name)[1]


def check_operands(x, weight, bias=None, residual=None, activation=None):
    """(M, N, K, dtype) of x [M, K] @ weight [K, N] after checking shapes and dtypes;
    ValueError naming the operand and the rule otherwise."""
    x_shape, dtype = _shape_dtype(x, "x")
    w_shape, w_dtype = _shape_dtype(weight, "weight")
    if len(x_shape) != 2 or len(w_shape) != 2:
        raise ValueError(f"decode_matmul: x and weight must be 2-D, got shapes {x_shape} and "
                         f"{w_shape}")
    if x_shape[1] != w_shape[0]:
        raise ValueError(f"decode_matmul: x [M, K] and weight [K, N] disagree on K: {x_shape} "
                         f"and {w_shape}")
    rows, inner, columns = x_shape[0], x_shape[1], w_shape[1]
    operands = [("weight", w_dtype)]
    if bias is not None:
        b_shape, b_dtype = _shape_dtype(bias, "bias")
        if b_shape != (columns,):
            raise ValueError(f"decode_matmul: bias must have shape [N] = [{columns}], got "
                             f"{b_shape}")
        operands.append(("bias", b_dtype))
    if residual is not None:
        r_shape, r_dtype = _shape_dtype(residual, "residual")
        if r_shape != (rows, columns):
            raise ValueError(f"decode_matmul: residual must have shape [M, N] = [{rows}, "
                             f"{columns}], got {r_shape}")
        operands.append(("residual", r_dtype))
    for name, other in operands:
        if other != dtype:
            raise ValueError(f"decode_matmul: {name} must have x's dtype {dtype}, got {other}")
    for name, value in (("x", x), ("weight", weight), ("bias", bias), ("residual", residual)):
        if _is_torch(value) and not value.is_contiguous():  # numpy views are staged contiguous
            raise ValueError(f"decode_matmul: {name} must be contiguous (row-major); call "
                             ".contiguous() first")
    if activation not in ACTIVATIONS:
        raise ValueError(f"decode_matmul: activation must be one of {ACTIVATIONS}, got "
                         f"{activation!r}")
    return rows, columns, inner, dtype


_FINISH_BLOCK = 64  # columns a finish program: [SPLIT_STEP, 64] tiles, many programs


def _launches(p, x, weight, bias, residual, activation, output, workspace):
    """(kernel, grid, args, constexprs) of each launch of plan ``p``, in order."""
    rows, columns, inner = p["rows"], p["columns"], p["inner"]
    reduce, splits = p["reduce"], p["splits"]
    partials, counters = workspace
    common = dict(ACTIVATION=activation, REDUCE=reduce, BLOCK_N=p["BLOCK_N"])
    args = (x, weight, bias, residual, output, partials, counters, rows, columns, inner,
            p["chunk"])
    column_blocks = metile.cdiv(columns, p["BLOCK_N"])
    if p["strategy"] == "gemv":
        launches = [(gemv, (metile.cdiv(rows, p["BLOCK_M"]), column_blocks, splits), args,
                     dict(common, UNROLL=p["BLOCK_K"], ROWS=p["BLOCK_M"],
                          EVEN_N=columns % p["BLOCK_N"] == 0))]
    else:
        launches = [(split_k, (metile.cdiv(rows, p["BLOCK_M"]), column_blocks, splits), args,
                     dict(common, BLOCK_M=p["BLOCK_M"], BLOCK_K=p["BLOCK_K"]))]
    if reduce in ("atomic", "two_pass"):
        slices = splits if reduce == "two_pass" else 1
        launches.append((finish, (rows, metile.cdiv(columns, _FINISH_BLOCK)),
                         (partials, bias, residual, output, rows, columns, slices),
                         dict(ACTIVATION=activation, BLOCK=_FINISH_BLOCK,
                              ZERO=reduce == "atomic")))
    return launches


def _workspace_of(p, x):
    """(partials, counters) of plan ``p``: the atomics' zeroed [1, M, N] sums, the partial
    slices [splits, M, N] of two_pass and last_split, last_split's zeroed i32 [M, N] tickets;
    None where the plan has none."""
    reduce, shape = p["reduce"], (p["rows"], p["columns"])
    if reduce is None:
        return None, None
    if reduce == "atomic":
        return _workspace(x, (1,) + shape, zero=True), None
    partials = _workspace(x, (p["splits"],) + shape, zero=False)
    return partials, (_workspace(x, shape, zero=True, dtype="i32")
                      if reduce == "last_split" else None)


def run_plan(p, x, weight, bias=None, residual=None, activation=None, out=None):
    """Launches plan ``p`` (``plan``'s dict) and returns the output."""
    output = empty_output(x, p["rows"], p["columns"]) if out is None else out
    workspace = _workspace_of(p, x)
    for kernel, grid, args, constexprs in _launches(p, x, weight, bias, residual, activation,
                                                    output, workspace):
        kernel[grid](*args, **constexprs)
    return output


class DecodeDispatch:
    """Plan ``p``'s launches prepared once for fixed operands (``prepare``): calling it runs
    them and returns ``output``; ``explain()`` gives the
    plan, why, and each launch's schedule plan."""

    def __init__(self, p, x, weight, bias, residual, activation, output):
        self.plan, self.output = p, output
        self._workspace = _workspace_of(p, x)
        self._dispatches = [
            kernel[grid].prepare(*args, **constexprs)
            for kernel, grid, args, constexprs in _launches(p, x, weight, bias, residual,
                                                            activation, output, self._workspace)]

    def __call__(self):
        # The atomics' sums and last_split's tickets start zeroed; the kernels zero them again.
        for dispatch in self._dispatches:
            dispatch()
        return self.output

    def explain(self):
        """The plan (strategy, reduction, blocks, splits and the reason) and, per launch, its
        kernel's schedule plan, as a dict."""
        return dict(self.plan, launches=[
            {"kernel": d.kernel_name,
             "schedule_plan": d.schedule_plan} for d in self._dispatches])


def prepare(x, weight, bias=None, residual=None, activation=None, out=None, **choices):
    """A DecodeDispatch of ``decode_matmul``'s launches for these operands (``plan``'s keyword
    choices apply): the launch arguments are bound once, as kernel[grid].prepare does."""
    rows, columns, inner, dtype = check_operands(x, weight, bias, residual, activation)
    p = plan(rows, columns, inner, dtype, **choices)
    output = empty_output(x, rows, columns) if out is None else out
    return DecodeDispatch(p, x, weight, bias, residual, activation, output)


def decode_matmul(x, weight, bias=None, residual=None, activation=None, out=None, **choices):
    """epilogue(x [M, K] @ weight [K, N]) for M = 1-16 by ``plan`` (its keyword choices:
    strategy, reduce, splits, block_m, block_n, block_k): numpy arrays, or torch CUDA tensors on the
    cuda device. The output has x's dtype unless ``out`` is given."""
    rows, columns, inner, dtype = check_operands(x, weight, bias, residual, activation)
    p = plan(rows, columns, inner, dtype, **choices)
    return run_plan(p, x, weight, bias, residual, activation, out)


def candidates(rows, columns, inner, dtype, activation=None):
    """metile.select candidates for these operands, each taking (x, weight, bias, residual):
    the plan's strategy with each reduction, and the other strategy with its planned one, so
    the device measures gemv against split_k and atomics against two passes."""
    chosen = plan(rows, columns, inner, dtype)
    choices = []
    for strategy in STRATEGIES:
        p = plan(rows, columns, inner, dtype, strategy=strategy)
        reductions = REDUCTIONS if p["reduce"] is not None else (None,)
        if strategy != chosen["strategy"]:
            reductions = reductions[:1] if p["reduce"] is None else ("atomic",)
        for reduce in reductions:
            choices.append(p if reduce is None else
                           plan(rows, columns, inner, dtype, strategy=strategy, reduce=reduce))
    result = []
    for p in choices:
        def run(x, weight, bias=None, residual=None, p=p):
            return run_plan(p, x, weight, bias, residual, activation)

        name = (f"decode_gemm.{p['strategy']}[{p['reduce'] or 'one split'}, splits={p['splits']}"
                f", {p['BLOCK_M']}x{p['BLOCK_N']}x{p['BLOCK_K']}]")
        result.append(metile.tune.Candidate(run, name))
    return result


def _native_matmul(activation):
    """The framework's operation: torch on torch tensors, numpy (f32 math) otherwise."""

    def native(x, weight, bias=None, residual=None):
        if _is_torch(x):
            import torch

            value = torch.matmul(x, weight)
            if bias is not None:
                value = value + bias
            value = {None: lambda v: v, "relu": torch.relu, "silu": torch.nn.functional.silu,
                     "gelu_tanh": lambda v: torch.nn.functional.gelu(v, approximate="tanh")}[
                activation](value)
            return value if residual is None else value + residual
        return reference(x, weight, bias, residual, activation)

    return native


def reference(x, weight, bias=None, residual=None, activation=None):
    """numpy: activation(x @ weight + bias) + residual in f32, rounded once to x's dtype."""
    import numpy as np

    x = np.asarray(x)
    value = x.astype(np.float32) @ np.asarray(weight).astype(np.float32)
    if bias is not None:
        value = value + np.asarray(bias).astype(np.float32)
    if activation == "relu":
        value = np.maximum(value, 0.0)
    elif activation == "silu":
        value = value / (1.0 + np.exp(-value))
    elif activation == "gelu_tanh":
        value = 0.5 * value * (1.0 + np.tanh(0.7978845608028654 *
                                             (value + 0.044715 * value ** 3)))
    if residual is not None:
        value = value + np.asarray(residual).astype(np.float32)
    return value.astype(x.dtype)


_SELECTORS = {}


def linear(x, weight, bias=None, residual=None, activation=None, persist=True):
    """The guarded decode matmul: the first call for a shape gates every ``candidates`` entry
    against the framework's matmul and runs the fastest correct one by measured headroom (or
    the framework); ``linear.selector(activation).explain()`` says which and why."""
    rows, columns, inner, dtype = check_operands(x, weight, bias, residual, activation)
    key = (rows, columns, inner, dtype, activation, persist)
    if key not in _SELECTORS:
        _SELECTORS[key] = metile.select(
            native=_native_matmul(activation),
            candidates=candidates(rows, columns, inner, dtype, activation),
            family=f"decode_matmul[{activation or 'none'}]", persist=persist)
    return _SELECTORS[key](x, weight, bias, residual)


def selector(rows, columns, inner, dtype, activation=None, persist=True):
    """The metile.select object ``linear`` uses for these operands (its ``explain()``)."""
    return _SELECTORS[(rows, columns, inner, dtype, activation, persist)]


__all__ = ["gemv", "split_k", "finish", "plan", "run_plan", "prepare", "DecodeDispatch",
           "decode_matmul", "candidates", "linear", "selector", "reference", "check_operands",
           "empty_output",
           "ACTIVATIONS", "REDUCTIONS", "STRATEGIES", "DECODE_ROWS"]
