"""meTile: a tile-level GPU kernel compiler. Write a kernel as a Python function,

    @metile.kernel
    def add(x, y, out, n, BLOCK: metile.constexpr):
        offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
        mask = offs < n
        metile.store(out + offs, metile.load(x + offs, mask) + metile.load(y + offs, mask), mask)

and launch it with ``add[(metile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)``. See
docs/python.md.
"""

__version__ = "0.1.0"

from . import dtypes
from .buffer import Buffer, device
from .dtypes import bfloat16, float16, float32, int1, int32, int64, uint32
from .errors import (CompilationError, InternalCompilerError, KernelFaultError,
                     NotSupportedError, OutOfResources)
from .host import cdiv, next_power_of_2
from .kernel import KernelFunction, constexpr, kernel
from .language import (abs, arange, barrier, broadcast_to, convert_layout, cos, dot, exp,
                       exp2, expand_dims, fast_cos, fast_exp, fast_exp2, fast_log, fast_rsqrt,
                       fast_sin, fast_sqrt, fast_tanh, full, load, log, loop_state, max,
                       maximum, min, minimum, num_programs, program_id, rsqrt, scalar, shared,
                       simd_broadcast, simd_lane_id, simd_max, simd_min, simd_shuffle,
                       simd_shuffle_down, simd_shuffle_xor, simd_sum, simdgroup_role, sin, sqrt,
                       store, sum, tanh, thread_id, tile_load, tile_store, tile_swizzle, where,
                       zeros)
from .loops import tile_range
from .schedule import Schedule
from .tensor import Tensor, tensor
from .values import Value, cast

from ._core import GraphBuilder, TensorSpec, plan_graph_fusion  # noqa: E402
