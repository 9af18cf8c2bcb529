"""The cases: inputs, float64 references, the torch functions, each candidate's launch,
the correctness check, and one case's run (check every candidate, time those that passed)."""

from __future__ import annotations

import time

import metile
import torch
import triton

from memory_bound.kernels import METILE_KERNELS, TRITON_KERNELS, tutorial_num_warps
from memory_bound.timing import L2_BYTES, SHIELD_CYCLES, time_interleaved

DTYPES = ("f16", "bf16", "f32")
LARGE_ELEMENTS = 1 << 28  # 0.5 GB (f16) to 1 GB (f32) per tensor
ROWS, COLS = 65536, 4096  # 2^28 elements
DECODE_COLS = 4096
EPS = 1e-6
# ||out - ref|| / ||ref|| against float64, by the inputs' dtype (METHOD.md's ranges).
TOLERANCE = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5}
MAX_ERROR_FACTOR = 8  # the largest element error may be this many tolerances


def torch_functions():
    F = torch.nn.functional

    def vector_add(x, y):
        return x + y

    def softmax(x):
        return torch.softmax(x, dim=-1)

    def rms_norm(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)

    def add_rms_norm(x, r, w):
        h = x + r
        return F.rms_norm(h, (h.shape[-1],), w, EPS), h

    def row_sum(x):
        return x.sum(dim=1, dtype=torch.float32)

    return {"vector_add": vector_add, "softmax": softmax, "rms_norm": rms_norm,
            "add_rms_norm": add_rms_norm, "row_sum": row_sum}


def rms_reference(h, w):
    h = h.double()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * w.double()


class Case:
    """One kernel at one dtype and shape: its tensors, references and candidates."""

    def __init__(self, kernel, dtype, shape, block, decode=False):
        # Rows take the whole row in one tile unless a block is given, as Triton's tutorial
        # kernels do: the row kernels keep their first tile in registers, so it is read once.
        if kernel != "vector_add" and block is None:
            block = triton.next_power_of_2(shape[-1])
        self.kernel, self.dtype, self.shape, self.block = kernel, dtype, shape, block
        self.row_warps = None  # the compiler's thread plan (case_list sets --row-warps)
        self.decode = decode
        self.torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16,
                            "f32": torch.float32}[dtype]
        size = {"f16": 2, "bf16": 2, "f32": 4}[dtype]
        n = 1
        for s in shape:
            n *= s
        cols = shape[-1]
        self.bytes_moved = {  # each input read once, each output written once
            "vector_add": 3 * n * size,
            "softmax": 2 * n * size,
            "rms_norm": 2 * n * size + cols * size,
            "add_rms_norm": 4 * n * size + cols * size,
            "row_sum": n * size + shape[0] * 4,
        }[kernel]
        # Calls that do not move several times the L2 start from a flushed one (decode excepted).
        self.flush = not decode and self.bytes_moved < 4 * L2_BYTES

    def name(self):
        return f"{self.kernel} {self.dtype} {'x'.join(map(str, self.shape))}"

    def make_inputs(self):
        """Fresh random inputs (never zeros: they hide unwritten outputs)."""
        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=self.torch_dtype)

        cols = self.shape[-1]
        if self.kernel == "vector_add":
            return (randn(*self.shape), randn(*self.shape))
        if self.kernel in ("softmax", "row_sum"):
            return (randn(*self.shape),)
        if self.kernel == "rms_norm":
            return (randn(*self.shape), randn(cols))
        return (randn(*self.shape), randn(*self.shape), randn(cols))

    def references(self, inputs):
        if self.kernel == "vector_add":
            return (inputs[0].double() + inputs[1].double(),)
        if self.kernel == "softmax":
            return (torch.softmax(inputs[0].double(), dim=-1),)
        if self.kernel == "rms_norm":
            return (rms_reference(inputs[0], inputs[1]),)
        if self.kernel == "add_rms_norm":
            h = inputs[0] + inputs[1]  # rounded to the dtype, as every candidate stores it
            return (rms_reference(h, inputs[2]), h.double())
        return (inputs[0].double().sum(dim=1),)

    def outputs(self):
        """Poisoned output tensors for meTile and Triton (NaN shows any unwritten element)."""
        out_dtype = torch.float32 if self.kernel == "row_sum" else self.torch_dtype
        out_shape = (self.shape[0],) if self.kernel == "row_sum" else self.shape
        count = 2 if self.kernel == "add_rms_norm" else 1
        return tuple(torch.full(out_shape, float("nan"), device="cuda", dtype=out_dtype)
                     for _ in range(count))

    def metile_launch(self, inputs, outs, specialised=False):
        """specialised: launched with a Schedule, which compiles the integer scalars (the
        shape) in as constants, as torch.compile(dynamic=False) does."""
        k, block = METILE_KERNELS[self.kernel], self.block
        options = {"SCHEDULE": metile.Schedule()} if specialised else {}
        if self.kernel == "vector_add":
            n = inputs[0].numel()
            return k[(metile.cdiv(n, block),)].prepare(*inputs, outs[0], n, BLOCK=block,
                                                       **options)
        rows, cols = self.shape
        # The compiler's thread plan unless --row-warps asks for one.
        if self.row_warps:
            options["num_warps"] = self.row_warps
        if self.kernel == "softmax":
            return k[(rows,)].prepare(inputs[0], outs[0], cols, cols, BLOCK=block, **options)
        if self.kernel == "rms_norm":
            return k[(rows,)].prepare(*inputs, outs[0], cols, cols, EPS, BLOCK=block, **options)
        if self.kernel == "add_rms_norm":
            return k[(rows,)].prepare(*inputs, *outs, cols, cols, EPS, BLOCK=block, **options)
        return k[(rows,)].prepare(inputs[0], outs[0], cols, cols, BLOCK=block, **options)

    def triton_launch(self, inputs, outs):
        k = TRITON_KERNELS[self.kernel]
        if self.kernel == "vector_add":
            n = inputs[0].numel()
            grid = (triton.cdiv(n, 1024),)
            return lambda: k[grid](*inputs, outs[0], n, BLOCK_SIZE=1024)
        rows, cols = self.shape
        block = triton.next_power_of_2(cols)
        warps = tutorial_num_warps(block)
        if self.kernel == "softmax":
            return lambda: k[(rows,)](outs[0], inputs[0], cols, BLOCK_SIZE=block, num_warps=warps)
        if self.kernel == "rms_norm":
            return lambda: k[(rows,)](*inputs, outs[0], cols, EPS, BLOCK_SIZE=block,
                                      num_warps=warps)
        if self.kernel == "add_rms_norm":
            return lambda: k[(rows,)](*inputs, *outs, cols, EPS, BLOCK_SIZE=block,
                                      num_warps=warps)
        return lambda: k[(rows,)](inputs[0], outs[0], cols, BLOCK_SIZE=block, num_warps=warps)


def relative_errors(outputs, references):
    """Per output: ||out - ref|| / ||ref|| ("norm") and max|out - ref| / max|ref| ("max",
    which a few wrong rows cannot hide in); NaN (unwritten or wrong) stays NaN."""
    errors = []
    for out, ref in zip(outputs, references):
        if out.shape != ref.shape:
            raise ValueError(f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
        diff = out.double() - ref
        norm = torch.linalg.vector_norm(diff) / torch.linalg.vector_norm(ref)
        errors.append({"norm": float(norm), "max": float(diff.abs().max() / ref.abs().max())})
        del diff
    return errors


def within_tolerance(errors, dtype):
    """Written so that NaN fails."""
    tol = TOLERANCE[dtype]
    return all(e["norm"] <= tol and e["max"] <= MAX_ERROR_FACTOR * tol for e in errors)


# ---------------------------------------------------------------------------------------------
# One case: check every candidate, then time those that passed.


def run_case(case, torch_fns, compiled, rounds, inner, flush):
    result = {"kernel": case.kernel, "dtype": case.dtype, "shape": list(case.shape),
              "bytes_moved": case.bytes_moved, "metile_block": case.block,
              "metile_row_warps": case.row_warps,
              "l2": ("hot (decode: back-to-back calls)" if case.decode else
                     "flushed before each sample" if case.flush else "data >> L2"),
              "calls_per_sample": inner, "rounds": rounds,
              "shield_cycles": 0 if case.decode else SHIELD_CYCLES,
              "failures": {}, "errors": {},
              "setup_s": {}}
    inputs = case.make_inputs()
    references = case.references(inputs)
    fn = torch_fns[case.kernel]
    key = (case.kernel, case.dtype)
    launches, outputs = {}, {}

    def setup(name, make):
        start = time.perf_counter()
        try:
            launches[name], outputs[name] = make()
            for _ in range(2):  # warm-up: compiles stay out of the timed region
                launches[name]()
            torch.cuda.synchronize()
        except Exception as e:  # recorded; the other candidates go on
            result["failures"][name] = f"{type(e).__name__}: {e}"[:2000]
            launches.pop(name, None)
        result["setup_s"][name] = time.perf_counter() - start

    def ours(specialised=False):
        outs = case.outputs()
        return case.metile_launch(inputs, outs, specialised), outs

    def theirs():
        outs = case.outputs()
        return case.triton_launch(inputs, outs), outs

    def returned(f):
        holder = {}

        def call():
            r = f(*inputs)
            holder["out"] = r if isinstance(r, tuple) else (r,)
        return call, holder

    def compiled_fn():
        if key not in compiled:
            compiled[key] = torch.compile(fn, dynamic=False)
        return returned(compiled[key])

    setup("metile", ours)
    setup("metile_specialised", lambda: ours(specialised=True))
    setup("triton", theirs)
    setup("compile", compiled_fn)
    setup("eager", lambda: returned(fn))
    for name in list(launches):
        got = outputs[name]
        got = got["out"] if isinstance(got, dict) else got
        try:
            errors = relative_errors(got, references)
        except Exception as e:
            errors, result["failures"][name] = None, f"{type(e).__name__}: {e}"
        if errors is not None:
            result["errors"][name] = errors
            if not within_tolerance(errors, case.dtype):
                result["failures"][name] = (f"relative errors {errors} over the {case.dtype} "
                                            f"tolerance {TOLERANCE[case.dtype]} (max: x"
                                            f"{MAX_ERROR_FACTOR})")
        if name in result["failures"]:
            launches.pop(name)
    del references
    for name in ("metile", "metile_specialised"):  # the thread plan each launch runs
        if name in launches:
            result.setdefault("metile_threads", {})[name] = (
                launches[name].abi["threads_per_threadgroup"][0])
    if "metile" not in launches:
        result["status"] = "failed"
        return result
    result["times"] = time_interleaved(launches, rounds, inner, flush, not case.decode)
    ours_ms = result["times"]["metile"]["median_ms"]
    result["metile_GBps"] = case.bytes_moved / (ours_ms * 1e-3) / 1e9
    result["metile_over"] = {name: ours_ms / t["median_ms"]
                             for name, t in result["times"].items() if name != "metile"}
    result["status"] = "ok"
    return result


def case_list(quick, block, row_block=None, kernels=None, shapes="all", row_warps=None):
    """The cases to run: every kernel (or those named in `kernels`) at the large shape and
    the decode row (`shapes` "large" or "decode" keeps one of them)."""
    cases = [c for c in all_cases(quick, block, row_block)
             if (kernels is None or c.kernel in kernels)
             and (shapes == "all" or (shapes == "decode") == c.decode)]
    for c in cases:
        c.row_warps = row_warps
    return cases


def all_cases(quick, block, row_block):
    if quick:  # every kernel once, dtypes rotated, small shapes and one decode row
        shapes = {"vector_add": (1 << 22,), "softmax": (1024, COLS), "rms_norm": (1, DECODE_COLS),
                  "add_rms_norm": (1024, COLS), "row_sum": (1024, COLS)}
        return [Case(k, DTYPES[i % 3], s, block if k == "vector_add" else row_block,
                     decode=s[0] == 1)
                for i, (k, s) in enumerate(shapes.items())]
    cases = []
    for kernel in ("vector_add", "softmax", "rms_norm", "add_rms_norm", "row_sum"):
        large = (LARGE_ELEMENTS,) if kernel == "vector_add" else (ROWS, COLS)
        decode = (DECODE_COLS,) if kernel == "vector_add" else (1, DECODE_COLS)
        for dtype in DTYPES:
            b = block if kernel == "vector_add" else row_block
            cases += [Case(kernel, dtype, large, b), Case(kernel, dtype, decode, b, decode=True)]
    return cases

