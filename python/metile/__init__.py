"""meTile: a tile-level GPU kernel compiler. Write a kernel as a Python function,

    @metile.kernel
    def add(x, y, out, n, BLOCK: metile.constexpr):
        offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        mask = offs < n
        metile.store(out + offs, metile.load(x + offs, mask) + metile.load(y + offs, mask), mask)

and launch it with ``add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)``. The language
follows Triton's (``tl.*`` names and signatures, type promotion); see docs/python.md for
what differs. ``__all__`` lists the API.
"""

__version__ = "0.1.0"

from types import ModuleType as _ModuleType

from . import dtypes
from .block_pointers import (BlockPointer, TensorDescriptor, advance, load_tensor_descriptor,
                             make_block_ptr, make_tensor_descriptor, store_tensor_descriptor)
from .buffer import Buffer, device
from .dtypes import (bfloat16, dtype, float8e4nv, float8e5, float16, float32, float64, int1,
                     int8, int16, int32, int64, pointer_type, uint8, uint16, uint32)
from .elementwise import (ceil, clamp, erf, fdiv, floor, fma, log2, sigmoid, swizzle2d,
                          umulhi)
from .errors import (CompilationError, InternalCompilerError, KernelFaultError,
                     NotSupportedError, OutOfResources)
from .gather import gather
from .host import cdiv, next_power_of_2
from .inline_asm import inline_asm_elementwise
from .kernel import BufferArg, KernelFunction, constexpr, heuristics, jit, kernel
from .launch import synchronize
from .layouts import ThreadLayout
from .language import (abs, arange, atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min,
                       atomic_or, atomic_xchg, atomic_xor, barrier, broadcast_to, convert_layout, cos, debug_barrier,
                       dot, exp, exp2, expand_dims, fast_cos, fast_exp, fast_exp2, fast_log,
                       fast_rsqrt, fast_sin, fast_sqrt, fast_tanh, full, full_like, load, log,
                       loop_state, maximum, minimum, num_programs, program_id, rsqrt, scalar,
                       shared, simd_broadcast, simd_lane_id, simd_max, simd_min, simd_shuffle,
                       simd_shuffle_down, simd_shuffle_xor, simd_sum, simdgroup_role, sin, sqrt,
                       store, tanh, thread_id, tile_load, tile_store, tile_swizzle, where,
                       zeros, zeros_like)
from .loops import range_, tile_range
from .random import rand, randint, randint4x, randn
from .combine import associative_scan, flip, reduce, sort, xor_sum
from .reductions import argmax, argmin, cumprod, cumsum, histogram, max, min, sum
from .reports import CompiledKernel
from .schedule import Schedule
from .shapes import cat, interleave, join, permute, ravel, reshape, split, trans, view
from .static import (assume, device_assert, device_print, max_constancy, max_contiguous, multiple_of,
                     static_assert, static_print, static_range)
from .tensor import Tensor, tensor
from .values import Value, cast

from ._core import FusionPlan as _FusionPlan  # noqa: E402
from ._core import GraphBuilder, TensorSpec, parse_graph, plan_graph_fusion  # noqa: E402
from .graph import GraphExecutable, compile_plan as _compile_plan  # noqa: E402
from ._core import Certificate, LawRefuted, ReductionLaw  # noqa: E402
from . import extra, math, tune  # noqa: E402
from .tune import Config, autotune, select  # noqa: E402
from .model import CompiledModel, compile_model as compile, torch_backend  # noqa: E402

_FusionPlan.compile = _compile_plan  # plan.compile(): the graph as a callable
tensor_descriptor = TensorDescriptor  # Triton's tl.tensor_descriptor (the type)
_experimental_make_tensor_descriptor = make_tensor_descriptor  # Triton 3.3's name
range = range_  # Triton's tl.range: a device loop (kept out of __all__: it shadows range)
del range_

__all__ = sorted(name for name, value in globals().items() if not name.startswith("_")
                 and name not in ("range", "compile") and (name == "dtypes" or not isinstance(value, _ModuleType)))
