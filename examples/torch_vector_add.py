"""The README's vector add on torch CUDA tensors: the same kernel, only the tensor type
changes. The tensors are used in place and the launch goes on torch's current stream.

    python examples/torch_vector_add.py     # needs torch with CUDA and an NVIDIA GPU
"""

import sys

import metile


@metile.kernel
def add(x, y, out, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(out + offsets, metile.load(x + offsets, mask) + metile.load(y + offsets, mask), mask)


def main():
    try:
        import torch
    except ImportError:
        print("torch_vector_add: needs torch (with CUDA)")
        return 1
    if not torch.cuda.is_available() or metile.device() != "cuda":
        print(f"torch_vector_add: needs an NVIDIA GPU and the cuda device "
              f"(torch sees a GPU: {torch.cuda.is_available()}, metile.device(): {metile.device()})")
        return 1
    N = 10_000
    x, y = torch.rand(N, device="cuda"), torch.zeros(N, device="cuda")
    out = torch.zeros(N, device="cuda", dtype=torch.float32)
    add[(metile.cdiv(N, 256),)](x, y, out, N, BLOCK=256)
    error = (out - (x + y)).abs().max().item()
    print(f"vector_add on torch CUDA tensors, n = {N}: max error {error:.2e}: "
          f"{'PASS' if error == 0 else 'FAIL'}")
    return 0 if error == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
