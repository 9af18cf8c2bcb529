"""Vector add: out = x + y over n elements in BLOCK-wide programs:

    vector_add[(metile.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=...)
"""

import metile


@metile.kernel
def vector_add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask),
                 mask)
