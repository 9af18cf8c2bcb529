"""A probe of the sm90 facilities the tensor_ops backend emits (TMA tensor maps, mbarrier rings,
wgmma on 128-byte-swizzled shared memory, setmaxnreg, warp specialisation, a persistent grouped
tile order), as one hand-written CUDA kernel compiled with NVRTC for sm_90a and launched through
the driver API with ctypes. It checks the product against torch.matmul and times it beside
cuBLAS, so the PTX encodings the CUDA dialect writes are validated on the GPU on their own.

    python benchmarks/hopper_probe.py --out probe.json
"""

import argparse
import ctypes
import glob
import json
import os
import sys
import time


def kernel_source(bm, bn, bk, stages, consumers, dtype, group_m):
    ptx_type = {"bf16": "bf16", "f16": "f16"}[dtype]
    c_type = "unsigned short"
    regs = bn // 2  # f32 accumulator registers per thread of a consumer warp group
    a_bytes = bm * bk * 2
    b_bytes = bk * bn * 2
    stage_bytes = a_bytes + b_bytes
    outs = ", ".join(f"%{i}" for i in range(regs))
    constraints = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    convert = {
        "bf16": 'asm("cvt.rn.bf16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));',
        "f16": 'asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));',
    }[dtype]
    rows_per_consumer = bm // consumers
    assert rows_per_consumer == 64
    return f"""
struct __align__(64) metile_tensor_map {{ unsigned long long opaque[16]; }};

static __device__ __forceinline__ unsigned int metile_smem(const void* p) {{
  return (unsigned int)__cvta_generic_to_shared(p);
}}
static __device__ __forceinline__ void metile_mbarrier_init(unsigned int bar, unsigned int count) {{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}}
static __device__ __forceinline__ void metile_mbarrier_expect_tx(unsigned int bar, unsigned int bytes) {{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}}
static __device__ __forceinline__ void metile_mbarrier_arrive(unsigned int bar) {{
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}}
static __device__ __forceinline__ void metile_mbarrier_wait(unsigned int bar, unsigned int parity) {{
  asm volatile("{{\\n"
               ".reg .pred p;\\n"
               "WAIT:\\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n"
               "@!p bra WAIT;\\n"
               "}}\\n" :: "r"(bar), "r"(parity) : "memory");
}}
static __device__ __forceinline__ void metile_tma_load_2d(unsigned int dst, const metile_tensor_map* map,
                                                          unsigned int bar, int c0, int c1) {{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {{%3, %4}}], [%2];"
               :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}}
static __device__ __forceinline__ unsigned long long metile_wgmma_desc(unsigned int addr, unsigned int lbo, unsigned int sbo) {{
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}}
static __device__ __forceinline__ void metile_wgmma(float* d, unsigned long long a, unsigned long long b) {{
  asm volatile("{{\\n"
               ".reg .pred p;\\n"
               "setp.ne.b32 p, %{regs + 2}, 0;\\n"
               "wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.{ptx_type}.{ptx_type} {{{outs}}}, %{regs}, %{regs + 1}, p, 1, 1, 0, 1;\\n"
               "}}\\n"
               : {constraints}
               : "l"(a), "l"(b), "r"(1));
}}

extern "C" __global__ void __launch_bounds__({128 * (consumers + 1)}, 1)
probe_gemm(const __grid_constant__ metile_tensor_map map_a, const __grid_constant__ metile_tensor_map map_b,
           {c_type}* c, int rows, int columns, int inner) {{
  extern __shared__ __align__(1024) unsigned char tg_mem[];
  const unsigned int base = (metile_smem(tg_mem) + 1023u) & ~1023u;
  const unsigned int bars = base + {stages * stage_bytes};
  const int warp_group = threadIdx.x / 128;
  if (threadIdx.x == 0) {{
    for (int s = 0; s < {stages}; ++s) {{
      metile_mbarrier_init(bars + 8 * s, 1);
      metile_mbarrier_init(bars + 8 * ({stages} + s), {consumers});
    }}
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }}
  __syncthreads();
  const int tiles_m = (rows + {bm - 1}) / {bm}, tiles_n = (columns + {bn - 1}) / {bn};
  const int tiles = tiles_m * tiles_n, k_steps = (inner + {bk - 1}) / {bk};
  const int group = {group_m} * tiles_n;
  if (warp_group == 0) {{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0) {{
      int it = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {{
        const int first_m = tile / group * {group_m};
        const int size_m = min(tiles_m - first_m, {group_m});
        const int tm = first_m + (tile % group) % size_m, tn = (tile % group) / size_m;
        for (int k = 0; k < k_steps; ++k, ++it) {{
          const int s = it % {stages};
          const unsigned int round = it / {stages};
          metile_mbarrier_wait(bars + 8 * ({stages} + s), (round & 1u) ^ 1u);
          const unsigned int full = bars + 8 * s;
          metile_mbarrier_expect_tx(full, {stage_bytes});
          const unsigned int a = base + s * {stage_bytes};
          metile_tma_load_2d(a, &map_a, full, k * {bk}, tm * {bm});
          for (int j = 0; j < {bn // 64}; ++j)
            metile_tma_load_2d(a + {a_bytes} + j * {64 * bk * 2}, &map_b, full, tn * {bn} + 64 * j, k * {bk});
        }}
      }}
    }}
  }} else {{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int consumer = warp_group - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {{
      const int first_m = tile / group * {group_m};
      const int size_m = min(tiles_m - first_m, {group_m});
      const int tm = first_m + (tile % group) % size_m, tn = (tile % group) / size_m;
      float d[{regs}];
#pragma unroll
      for (int i = 0; i < {regs}; ++i) d[i] = 0.0f;
      int previous = -1;
      for (int k = 0; k < k_steps; ++k, ++it) {{
        const int s = it % {stages};
        const unsigned int round = it / {stages};
        metile_mbarrier_wait(bars + 8 * s, round & 1u);
        const unsigned int a = base + s * {stage_bytes} + consumer * {64 * bk * 2};
        const unsigned int b = base + s * {stage_bytes} + {a_bytes};
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < {bk // 16}; ++kk)
          metile_wgmma(d, metile_wgmma_desc(a + 32 * kk, 16, 1024),
                       metile_wgmma_desc(b + kk * 2048, {64 * bk * 2}, 1024));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        if (previous >= 0 && t == 0) metile_mbarrier_arrive(bars + 8 * ({stages} + previous));
        previous = s;
      }}
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      if (previous >= 0 && t == 0) metile_mbarrier_arrive(bars + 8 * ({stages} + previous));
      const int row0 = tm * {bm} + consumer * 64 + warp * 16 + lane / 4;
#pragma unroll
      for (int i = 0; i < {regs}; i += 2) {{
        const int row = row0 + 8 * ((i / 2) % 2);
        const int column = tn * {bn} + 8 * (i / 4) + 2 * (lane % 4);
        if (row < rows) {{
          const float lo = d[i], hi = d[i + 1];
          unsigned int r;
          {convert}
          {c_type}* p = c + (long long)row * columns + column;
          if (column + 1 < columns && (columns % 2) == 0) {{
            *(unsigned int*)p = r;
          }} else {{
            if (column < columns) p[0] = (unsigned short)(r & 0xffffu);
            if (column + 1 < columns) p[1] = (unsigned short)(r >> 16);
          }}
        }}
      }}
    }}
  }}
}}
"""


def load_library(names):
    for name in names:
        for path in ([name] if "/" not in name else glob.glob(name)):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    raise RuntimeError("none of %s loads" % names)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="")
    parser.add_argument("--sizes", default="4096,8192")
    parser.add_argument("--configs", default="128x256x64x4,128x128x64x5,128x256x64x3")
    args = parser.parse_args()
    import torch

    torch.cuda.init()
    torch.zeros(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    site = os.path.dirname(os.path.dirname(torch.__file__))
    nvrtc = load_library(["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                          site + "/nvidia/cuda_nvrtc/lib/libnvrtc.so*",
                          site + "/nvidia/cu13/lib/libnvrtc.so*",
                          torch_lib + "/libnvrtc*.so*", "/usr/local/cuda/lib64/libnvrtc.so*"])
    results = {"device": torch.cuda.get_device_name(), "cases": []}

    def check(r, what):
        if r != 0:
            raise RuntimeError("%s failed: %d" % (what, r))

    def compile_source(src, name):
        prog = ctypes.c_void_p()
        check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"probe.cu", 0, None,
                                       None), "nvrtcCreateProgram")
        opts = [b"--gpu-architecture=sm_90a", b"-std=c++17", b"-default-device"]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        start = time.perf_counter()
        r = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
        seconds = time.perf_counter() - start
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if r != 0:
            raise RuntimeError("nvrtc: " + log.value.decode()[-4000:])
        nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        module = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
        fn = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()),
              "cuModuleGetFunction")
        return fn, seconds, log.value.decode()

    def tensor_map(t, box_inner, box_outer, dtype_code):
        m = (ctypes.c_ubyte * 128)()
        rows, cols = t.shape
        dims = (ctypes.c_uint64 * 2)(cols, rows)
        strides = (ctypes.c_uint64 * 1)(t.stride(0) * t.element_size())
        box = (ctypes.c_uint32 * 2)(box_inner, box_outer)
        estr = (ctypes.c_uint32 * 2)(1, 1)
        check(cuda.cuTensorMapEncodeTiled(m, dtype_code, 2, ctypes.c_void_p(t.data_ptr()), dims,
                                          strides, box, estr, 0, 3, 2, 0),
              "cuTensorMapEncodeTiled")
        return m

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for config in args.configs.split(","):
        bm, bn, bk, stages = (int(x) for x in config.split("x"))
        consumers = bm // 64
        for dtype in ("bf16", "f16"):
            tdtype = torch.bfloat16 if dtype == "bf16" else torch.float16
            code = 9 if dtype == "bf16" else 6
            src = kernel_source(bm, bn, bk, stages, consumers, dtype, 8)
            try:
                fn, compile_s, log = compile_source(src, "probe_gemm")
            except RuntimeError as e:
                results["cases"].append({"config": config, "dtype": dtype, "error": str(e)})
                print(config, dtype, "compile error", str(e)[:3000])
                continue
            smem = stages * (bm * bk + bk * bn) * 2 + 1024 + 2 * stages * 8
            check(cuda.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute")
            shapes = [(int(s), int(s), int(s)) for s in args.sizes.split(",")]
            shapes += [(300, 200, 72), (1, 4096, 4096), (16, 4096, 4096), (129, 257, 1000),
                       (77, 64, 8)] if dtype == "bf16" or config.startswith("128x256") else []
            for (m_, n_, k_) in shapes:
                a = torch.randn(m_, k_, device="cuda", dtype=tdtype)
                b = torch.randn(k_, n_, device="cuda", dtype=tdtype)
                c = torch.zeros(m_, n_, device="cuda", dtype=tdtype)
                if (k_ * 2) % 16 or (n_ * 2) % 16:
                    continue  # TMA needs 16-byte strides
                map_a = tensor_map(a, bk, bm, code)
                map_b = tensor_map(b, 64, bk, code)
                cptr = ctypes.c_uint64(c.data_ptr())
                mi, ni, ki = ctypes.c_int(m_), ctypes.c_int(n_), ctypes.c_int(k_)
                params = (ctypes.c_void_p * 6)(
                    ctypes.cast(map_a, ctypes.c_void_p), ctypes.cast(map_b, ctypes.c_void_p),
                    ctypes.cast(ctypes.pointer(cptr), ctypes.c_void_p),
                    ctypes.cast(ctypes.pointer(mi), ctypes.c_void_p),
                    ctypes.cast(ctypes.pointer(ni), ctypes.c_void_p),
                    ctypes.cast(ctypes.pointer(ki), ctypes.c_void_p))
                tiles = ((m_ + bm - 1) // bm) * ((n_ + bn - 1) // bn)
                grid = min(tiles, sms)
                stream = torch.cuda.current_stream().cuda_stream

                def launch():
                    check(cuda.cuLaunchKernel(fn, grid, 1, 1, 128 * (consumers + 1), 1, 1, smem,
                                              ctypes.c_void_p(stream), params, None),
                          "cuLaunchKernel")

                launch()
                torch.cuda.synchronize()
                ref = (a.float() @ b.float())
                err = ((c.float() - ref).abs().max() / (ref.abs().max() + 1e-6)).item()
                case = {"config": config, "dtype": dtype, "shape": [m_, n_, k_],
                        "rel_err": err, "compile_s": compile_s}
                if m_ == n_ == k_ and m_ >= 4096:
                    def timed(f, reps=20):
                        f()
                        torch.cuda.synchronize()
                        s = torch.cuda.Event(enable_timing=True)
                        e = torch.cuda.Event(enable_timing=True)
                        best = []
                        for _ in range(5):
                            s.record()
                            for _ in range(reps):
                                f()
                            e.record()
                            torch.cuda.synchronize()
                            best.append(s.elapsed_time(e) / reps)
                        return sorted(best)[len(best) // 2]
                    ours = timed(launch)
                    cublas = timed(lambda: torch.matmul(a, b))
                    flops = 2.0 * m_ * n_ * k_
                    case.update(ours_ms=ours, cublas_ms=cublas,
                                ours_tflops=flops / ours / 1e9, cublas_tflops=flops / cublas / 1e9,
                                ratio=cublas / ours)
                print(json.dumps(case), flush=True)
                results["cases"].append(case)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
