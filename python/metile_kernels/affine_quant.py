"""MLX's affine quantisation layout, in numpy: the reference the quantised kernels are checked
against, and the weights they take.

A weight matrix w [N, K] (out_features x in_features, as MLX's ``nn.QuantizedLinear`` holds it)
is quantised along the input dimension K in groups of ``group_size`` (32, 64 or 128)
consecutive values. Each group has a scale and a bias in w's dtype, and each value a code q of
``bits`` (4 or 8) bits with ``w ~= scale * q + bias``. The codes are packed into uint32 words,
low bits first: 8 four-bit or 4 eight-bit codes a word, code j of a word in bits
[j * bits, (j + 1) * bits). So

    wq      uint32          [N, K * bits // 32]
    scales  w.dtype         [N, K // group_size]
    biases  w.dtype         [N, K // group_size]

exactly as ``mx.quantize(w, group_size, bits)`` returns them (mode "affine"), and
``dequantize`` computes what ``mx.dequantize`` does. The grouping follows MLX's CPU kernel: the
scale spans the group's range over 2**bits - 1 steps, its sign and the bias chosen so that the
edge of larger magnitude is represented exactly.
"""

import numpy as np

GROUP_SIZES = (32, 64, 128)
BITS = (4, 8)
_EPS = np.float32(1e-7)  # the smallest scale MLX gives a constant group


def values_per_word(bits):
    return 32 // bits


def _check_bits_and_group(op, group_size, bits):
    if bits not in BITS:
        raise ValueError(f"{op}: bits must be 4 or 8 (MLX's affine layout), got {bits}")
    if group_size not in GROUP_SIZES:
        raise ValueError(f"{op}: group_size must be 32, 64 or 128, got {group_size}")


def check_layout(op, wq_shape, scales_shape, biases_shape, group_size, bits, inner=None):
    """The input dimension K of weights in MLX's layout, after checking that the packed words,
    scales and biases agree with each other, with ``bits`` and ``group_size`` and, when
    ``inner`` is given, with the activations' K. Raises ValueError naming ``op`` and the rule."""
    _check_bits_and_group(op, group_size, bits)
    per_word = values_per_word(bits)
    if len(wq_shape) != 2:
        raise ValueError(f"{op}: the packed weights must be 2-D [N, K * bits // 32], got shape "
                         f"{tuple(wq_shape)}")
    n, words = wq_shape
    k = words * per_word
    if inner is not None and inner != k:
        raise ValueError(f"{op}: packed weights [N, {words}] hold {per_word} {bits}-bit values a "
                         f"word, so K = {k}, but the activations have K = {inner}: the packing "
                         f"does not match bits={bits}")
    if k % group_size != 0:
        raise ValueError(f"{op}: group_size={group_size} does not divide the input dimension "
                         f"K = {k}")
    groups = k // group_size
    for name, shape in (("scales", scales_shape), ("biases", biases_shape)):
        if tuple(shape) != (n, groups):
            raise ValueError(f"{op}: {name} must have shape [N, K // group_size] = "
                             f"[{n}, {groups}] (K = {k}, group_size={group_size}, bits={bits}), "
                             f"got {tuple(shape)}")
    return k


def quantize(w, group_size=64, bits=4):
    """(wq, scales, biases) of w [N, K] (f16, bf16 or f32) in MLX's affine layout, as
    ``mx.quantize(w, group_size, bits)`` gives them."""
    _check_bits_and_group("quantize", group_size, bits)
    w = np.asarray(w)
    if w.ndim != 2:
        raise ValueError(f"quantize: w must be 2-D [N, K], got shape {w.shape}")
    n, k = w.shape
    if k % group_size != 0:
        raise ValueError(f"quantize: group_size={group_size} does not divide the input "
                         f"dimension K = {k}")
    steps = np.float32((1 << bits) - 1)
    groups = w.astype(np.float32).reshape(n, k // group_size, group_size)
    w_max, w_min = groups.max(axis=-1), groups.min(axis=-1)
    # MLX's choice: the scale's sign makes the edge of larger magnitude a whole multiple of it
    # (q0 steps from 0), and that edge is then the bias, so it round-trips exactly.
    negative_edge = np.abs(w_min) > np.abs(w_max)
    scale = np.maximum((w_max - w_min) / steps, _EPS)
    scale = np.where(negative_edge, scale, -scale)
    edge = np.where(negative_edge, w_min, w_max)
    q0 = np.rint(edge / scale)
    exact = q0 != 0
    scale = np.where(exact, edge / np.where(exact, q0, 1), scale).astype(np.float32)
    bias = np.where(exact, edge, np.float32(0)).astype(np.float32)
    codes = np.rint((groups - bias[..., None]) / scale[..., None])
    codes = np.clip(codes, 0, steps).astype(np.uint32).reshape(n, k)
    return pack(codes, bits), scale.astype(w.dtype), bias.astype(w.dtype)


def pack(codes, bits):
    """uint32 words [N, K * bits // 32] of codes [N, K] (each < 2**bits), low bits first."""
    codes = np.asarray(codes, dtype=np.uint32)
    per_word = values_per_word(bits)
    n, k = codes.shape
    if k % per_word != 0:
        raise ValueError(f"pack: K = {k} is not a multiple of the {per_word} {bits}-bit values "
                         "a uint32 word holds")
    shifts = (np.arange(per_word, dtype=np.uint32) * bits)
    return np.bitwise_or.reduce(codes.reshape(n, k // per_word, per_word) << shifts, axis=-1)


def unpack(wq, bits):
    """The codes [N, K] of packed words wq [N, K * bits // 32]."""
    wq = np.asarray(wq, dtype=np.uint32)
    per_word = values_per_word(bits)
    shifts = (np.arange(per_word, dtype=np.uint32) * bits)
    codes = (wq[..., None] >> shifts) & np.uint32((1 << bits) - 1)
    return codes.reshape(wq.shape[0], wq.shape[1] * per_word)


def dequantize(wq, scales, biases, group_size=64, bits=4):
    """w [N, K] = scale * q + bias in the scales' dtype, as ``mx.dequantize`` computes it (the
    product and the sum each rounded to that dtype)."""
    scales, biases = np.asarray(scales), np.asarray(biases)
    check_layout("dequantize", np.shape(wq), scales.shape, biases.shape, group_size, bits)
    codes = unpack(wq, bits)
    expand = lambda a: np.repeat(a, group_size, axis=1)  # noqa: E731
    dtype = scales.dtype
    product = (expand(scales).astype(np.float32) * codes.astype(np.float32)).astype(dtype)
    return (product.astype(np.float32) + expand(biases).astype(np.float32)).astype(dtype)


def quantized_matmul_reference(x, wq, scales, biases, group_size=64, bits=4):
    """x [M, K] @ dequantize(wq, scales, biases).T in f32 (the products and sums the kernels
    compute, before their output's rounding)."""
    w = dequantize(wq, scales, biases, group_size, bits).astype(np.float32)
    return np.asarray(x).astype(np.float32) @ w.T
