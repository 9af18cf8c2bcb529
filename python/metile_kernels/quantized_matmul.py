"""Matrix products with weights in MLX's affine int4/int8 layout (affine_quant.py), dequantised
inside the main loop: output [M, N] = x [M, K] @ w.T (+ residual) with
w = scale * q + bias of the packed codes q, never materialised in memory.

Each K step loads the step's packed uint32 words once, with their groups' scales and biases, and
for each of the 32 // bits codes a word holds shifts and masks the code out, scales it in f32
(``scale * q + bias``, rounded once to x's dtype) and feeds it, still in registers, to the
product. Two tilings:

- ``quantized_matmul`` (prefill): BLOCK_M x BLOCK_N output tiles, each code position j of the
  step's words one ``metile.dot`` of the activations at K = word * (32 // bits) + j with the
  dequantised [words, BLOCK_N] tile (the matrix instructions);
- ``quantized_matvec`` (decode, M = 1-16): one activation row and BLOCK_N outputs a program, the
  products accumulated elementwise in a [BLOCK_N, words] f32 tile and summed once at the end,
  so the weights stream through at memory bandwidth (MLX's qmv shape; programs of one column
  block and consecutive rows are neighbours in the grid and share the weights in cache).

Both add an optional ``residual`` [M, N] before the store (the transformer residual epilogue of
seed 000) and store in the output buffer's dtype. Rows and columns can be ragged: the descriptors
read 0 past the edges and never write past the output's. K is whole groups (the layout's rule).
``quantized_linear`` checks the layout, allocates the output and picks the tiling.
"""

import metile

from .affine_quant import check_layout, values_per_word

DECODE_ROWS = 16  # up to this many rows, quantized_linear takes the decode path


def dequantized(words, scale, bias, j, BITS, dtype):
    """Code j of each packed word, as scale * q + bias rounded once to ``dtype``."""
    code = (words >> (j * BITS)) & ((1 << BITS) - 1)
    return (code.to("f32") * scale + bias).to(dtype)


def _layout(wq, scales, biases, columns, inner, GROUP, BITS):
    """The descriptors of the packed words and of the per-group scales and biases."""
    per_word = 32 // BITS
    packed = metile.tensor(wq, shape=(columns, inner // per_word), access="read")
    s = metile.tensor(scales, shape=(columns, inner // GROUP), access="read")
    b = metile.tensor(biases, shape=(columns, inner // GROUP), access="read")
    return packed, s, b


def _step(packed, s, b, word, column, GROUP, BITS, transposed):
    """The words of one K step and their scales and biases in f32: [words, columns] tiles, or
    [columns, words] ones when ``transposed``."""
    group = word // (GROUP // (32 // BITS))
    if transposed:
        at, group_at = (column[:, None], word[None, :]), (column[:, None], group[None, :])
    else:
        at, group_at = (column[None, :], word[:, None]), (column[None, :], group[:, None])
    return packed.load(at), s.load(group_at).to("f32"), b.load(group_at).to("f32")


def _store(output, residual, rows, columns, row, column, value):
    if residual is not None:
        r = metile.tensor(residual, shape=(rows, columns), access="read")
        value = value + r.load((row, column)).to("f32")
    c = metile.tensor(output, shape=(rows, columns), access="write")
    c.store((row, column), value)


@metile.kernel
def quantized_product(x, wq, scales, biases, rows, columns, inner, GROUP: metile.constexpr,
                      BITS: metile.constexpr, BLOCK_M: metile.constexpr,
                      BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    """The [BLOCK_M, BLOCK_N] f32 tile of x @ w.T at this program's output tile (traced inside
    a kernel), and its row and column indices."""
    per_word = 32 // BITS
    a = metile.tensor(x, shape=(rows, inner), access="read")
    packed, s, b = _layout(wq, scales, biases, columns, inner, GROUP, BITS)
    row = metile.program_id(0) * BLOCK_M + metile.arange(0, BLOCK_M)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    words = metile.arange(0, BLOCK_K // per_word)
    acc = metile.zeros((BLOCK_M, BLOCK_N), dtype="f32")
    for kw in metile.tile_range(0, inner // per_word, BLOCK_K // per_word):
        word = kw + words
        packed_words, scale, bias = _step(packed, s, b, word, column, GROUP, BITS, False)
        for j in metile.static_range(per_word):
            w = dequantized(packed_words, scale, bias, j, BITS, x.dtype.element_ty)
            acc = metile.dot(a.load((row[:, None], (word * per_word + j)[None, :])), w, acc)
    return acc, row, column


@metile.kernel
def quantized_matmul(x, wq, scales, biases, output, residual, rows, columns, inner,
                     GROUP: metile.constexpr, BITS: metile.constexpr, BLOCK_M: metile.constexpr,
                     BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    acc, row, column = quantized_product(x, wq, scales, biases, rows, columns, inner, GROUP,
                                         BITS, BLOCK_M, BLOCK_N, BLOCK_K)
    _store(output, residual, rows, columns, row[:, None], column[None, :], acc)


@metile.kernel
def quantized_row(x, wq, scales, biases, rows, columns, inner, GROUP: metile.constexpr,
                  BITS: metile.constexpr, BLOCK_N: metile.constexpr, BLOCK_K: metile.constexpr):
    """x[row] @ w.T over this program's BLOCK_N columns, in f32 (traced inside a kernel), and
    the row and column indices: program_id(0) is the row, program_id(1) the column block."""
    per_word = 32 // BITS
    a = metile.tensor(x, shape=(rows, inner), access="read")
    packed, s, b = _layout(wq, scales, biases, columns, inner, GROUP, BITS)
    row = metile.program_id(0)
    column = metile.program_id(1) * BLOCK_N + metile.arange(0, BLOCK_N)
    words = metile.arange(0, BLOCK_K // per_word)
    acc = metile.zeros((BLOCK_N, BLOCK_K // per_word), dtype="f32")
    for kw in metile.tile_range(0, inner // per_word, BLOCK_K // per_word):
        word = kw + words
        packed_words, scale, bias = _step(packed, s, b, word, column, GROUP, BITS, True)
        for j in metile.static_range(per_word):
            w = dequantized(packed_words, scale, bias, j, BITS, "f32")
            xj = a.load((row, word * per_word + j)).to("f32")
            acc += w * xj[None, :]
    return metile.sum(acc, axis=1), row, column


@metile.kernel
def quantized_matvec(x, wq, scales, biases, output, residual, rows, columns, inner,
                     GROUP: metile.constexpr, BITS: metile.constexpr, BLOCK_N: metile.constexpr,
                     BLOCK_K: metile.constexpr):
    acc, row, column = quantized_row(x, wq, scales, biases, rows, columns, inner, GROUP, BITS,
                                     BLOCK_N, BLOCK_K)
    _store(output, residual, rows, columns, row, column, acc)


def prefill_blocks():
    """(BLOCK_M, BLOCK_N, BLOCK_K) of quantized_matmul for the default device."""
    if metile.device() == "cuda":
        return 64, 128, 64
    return 32, 32, 64


def decode_blocks():
    """(BLOCK_N, BLOCK_K) of quantized_matvec for the default device."""
    if metile.device() == "cuda":
        return 16, 512
    return 32, 256


_ACTIVATIONS = ("f16", "bf16", "f32")


def _describe(value, name):
    """(shape, meTile dtype) of an array argument (numpy, torch, metile.Buffer)."""
    from metile.buffer import describe

    return tuple(value.shape), describe(value, name)[1]


def check_operands(op, x, wq, scales, biases, group_size, bits):
    """(M, N, K) of x [M, K] times affine-quantised weights [N, K], after checking the dtypes and
    the layout (affine_quant.check_layout); ValueError naming ``op`` and the rule otherwise."""
    x_shape, x_dtype = _describe(x, "x")
    if len(x_shape) != 2:
        raise ValueError(f"{op}: x must be 2-D [M, K], got shape {tuple(x_shape)}")
    if x_dtype not in _ACTIVATIONS:
        raise ValueError(f"{op}: x must be f16, bf16 or f32, got {x_dtype}")
    wq_shape, wq_dtype = _describe(wq, "wq")
    if wq_dtype != "u32":
        raise ValueError(f"{op}: the packed weights must be uint32 (MLX's layout), got "
                         f"{wq_dtype}")
    s_shape, s_dtype = _describe(scales, "scales")
    b_shape, b_dtype = _describe(biases, "biases")
    for name, dtype in (("scales", s_dtype), ("biases", b_dtype)):
        if dtype != x_dtype:
            raise ValueError(f"{op}: {name} must be in the activation dtype {x_dtype}, got "
                             f"{dtype}")
    k = check_layout(op, wq_shape, s_shape, b_shape, group_size, bits, inner=x_shape[1])
    return x_shape[0], wq_shape[0], k


def empty_like_rows(x, rows, columns):
    """A [rows, columns] array (numpy) or tensor (torch, on x's device) of x's dtype."""
    if type(x).__module__.split(".")[0] == "torch":
        import torch

        return torch.empty((rows, columns), dtype=x.dtype, device=x.device)
    import numpy as np

    return np.empty((rows, columns), dtype=np.asarray(x).dtype)


def launch_linear(x, weights, output, residual, rows, columns, inner, group_size, bits,
                  decode=None):
    """Launches the decode or prefill tiling (by the row count unless ``decode`` says)."""
    wq, scales, biases = weights
    if decode is None:
        decode = rows <= DECODE_ROWS
    if decode:
        block_n, block_k = decode_blocks()
        quantized_matvec[(rows, metile.cdiv(columns, block_n))](
            x, wq, scales, biases, output, residual, rows, columns, inner, GROUP=group_size,
            BITS=bits, BLOCK_N=block_n, BLOCK_K=block_k)
    else:
        block_m, block_n, block_k = prefill_blocks()
        quantized_matmul[(metile.cdiv(rows, block_m), metile.cdiv(columns, block_n))](
            x, wq, scales, biases, output, residual, rows, columns, inner, GROUP=group_size,
            BITS=bits, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)


def quantized_linear(x, wq, scales, biases, group_size=64, bits=4, residual=None, out=None,
                     decode=None):
    """x [M, K] @ dequantize(wq, scales, biases).T (+ residual [M, N]), MLX's
    ``mx.quantized_matmul(x, wq, scales, biases, transpose=True, group_size, bits)``: numpy
    arrays, or torch CUDA tensors on the cuda device. The output has x's dtype unless ``out``
    is given. ``decode`` forces the decode (True) or prefill (False) tiling; by default M <= 16
    decodes."""
    rows, columns, inner = check_operands("quantized_linear", x, wq, scales, biases, group_size,
                                          bits)
    if residual is not None and tuple(_describe(residual, "residual")[0]) != (rows, columns):
        raise ValueError(f"quantized_linear: residual must have shape [M, N] = [{rows}, "
                         f"{columns}], got {tuple(_describe(residual, 'residual')[0])}")
    output = empty_like_rows(x, rows, columns) if out is None else out
    launch_linear(x, (wq, scales, biases), output, residual, rows, columns, inner, group_size,
                  bits, decode)
    return output


__all__ = ["quantized_matmul", "quantized_matvec", "quantized_linear", "quantized_product",
           "quantized_row", "dequantized", "check_operands", "values_per_word"]
