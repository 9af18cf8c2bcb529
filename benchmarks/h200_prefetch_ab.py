"""prefetch_dot_operands on and off, on an NVIDIA GPU: the library GEMM, the Triton corpus
matmul and attention (tests/python/triton_corpus/) at several tiles, each compiled with
Schedule() (the pass on, where its register budget allows) and Schedule(double_buffer=False)
(the pass off; both specialise the integer arguments alike). Outputs checked against torch in
f32 first; times are triton.testing.do_bench medians in milliseconds.

    python benchmarks/h200_prefetch_ab.py --out F.json
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
os.environ.setdefault("METILE_DEVICE", "cuda")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the raw JSON here")
    args = parser.parse_args()
    import torch
    from triton.testing import do_bench

    import metile
    from metile_kernels.gemm import grid, matmul
    from triton_corpus.load import load

    mm, _ = load("matmul", "metile")
    at, _ = load("attention", "metile")
    results = {}

    def bench(name, launch, error):
        out = {}
        for mode, schedule in (("prefetch", metile.Schedule()),
                               ("none", metile.Schedule(double_buffer=False))):
            launch(schedule)
            torch.cuda.synchronize()
            out[mode] = {"median_ms": do_bench(lambda: launch(schedule), return_mode="median"),
                         "max_relative_error": error()}
        results[name] = out
        print(name, out, flush=True)

    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ref = a.float() @ b.float()
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    c16 = torch.empty(n, n, device="cuda", dtype=torch.float16)

    def error(x):
        return float((x.float() - ref).abs().max() / ref.abs().max())

    for bm, bn, bk, w in ((64, 64, 16, None), (128, 128, 32, 8), (64, 128, 32, 4)):
        options = {} if w is None else {"num_warps": w}
        bench(f"lib {bm}x{bn}x{bk} w{w}",
              lambda s: matmul[grid(n, n, bm, bn)](a, b, c, n, n, n, BLOCK_M=bm, BLOCK_N=bn,
                                                   BLOCK_K=bk, SCHEDULE=s, **options),
              lambda: error(c))
    for bm, bn, bk, w in ((128, 256, 64, 8), (128, 128, 32, 8), (64, 128, 32, 4)):
        bench(f"tutorial {bm}x{bn}x{bk} w{w}",
              lambda s: mm.matmul(a, b, c16, bm, bn, bk, 8, num_warps=w, SCHEDULE=s),
              lambda: error(c16))
    q, k, v = (torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    o = torch.empty_like(q)
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                            scale=128 ** -0.5)
    for bm, bn, w in ((128, 64, 8), (64, 32, 4)):
        bench(f"attention {bm}x{bn} w{w}",
              lambda s: at.attention(q, k, v, o, 128 ** -0.5, False, bm, bn, num_warps=w,
                                     SCHEDULE=s),
              lambda: float((o.float() - want).abs().max() / want.abs().max()))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
