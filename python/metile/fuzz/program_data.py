"""A generated program's launch data (``programs.Program`` mixes it in): the input and output
arrays, the reference outputs over each whole buffer, and the launch's argument list."""

import numpy as np

from . import reference as ref
from .reference import FLOATS

SENTINEL = {"f16": -77.0, "bf16": -77.0, "f32": -77.0, "i32": -77, "u32": 77777}


class ProgramData:
    def arrays(self, rng):
        """The launch's input and output arrays (numpy), by parameter name."""
        arrays = {}
        size = self.M * self.N if self.two_d else self.n
        for name, kind, dtype in self.params:
            if kind == "out":
                pattern = next(p for o, _, p in self.outputs if o == name)
                count = {"tile": size, "scalar": self.grid}.get(pattern) or (
                    self.N if pattern == "row" else self.M)
                arrays[name] = np.full(count, SENTINEL[dtype], ref_numpy(dtype))
                continue
            pattern = self.inputs[name][1]
            count = {"tile": size, "chunks": max(self.K, 1) * size}.get(pattern) or (
                self.N if pattern == "row" else self.M)
            arrays[name] = random_data(rng, dtype, count, self.data_kinds.get(name))
        return arrays

    def expected(self, arrays):
        """The reference outputs: {name: (values, errors, unknown)} over each whole buffer."""
        ctx = {"tiles": {}, "stored": {}}
        results = {name: None for name, _, _ in self.outputs}
        for pid in range(self.grid):
            ctx.update(pid=pid, tiles=self._tiles(arrays, pid), stored={})
            env = {"alpha": ref.R("f32", self.scalars["alpha"]),
                   "beta": ref.R("i32", self.scalars["beta"])}
            for step in self.blocks[0][1]:
                step(env, ctx)
            for name, dtype, pattern in self.outputs:
                results[name] = self._place(results[name], ctx["stored"][name], arrays[name],
                                            dtype, pattern, pid)
        return results

    def _tiles(self, arrays, pid):
        """Each input as the kernel's loads see it: (values of the tile, which are in bounds)."""
        tiles = {}
        for name, (dtype, pattern) in self.inputs.items():
            data = np.asarray(arrays[name]).astype(np.float64 if dtype in FLOATS else np.int64)
            if self.two_d:
                rows, cols = np.arange(self.BM)[:, None], np.arange(self.BN)[None, :]
                if pattern == "row":
                    valid = np.arange(self.BN) < self.N
                    index = np.where(valid, np.arange(self.BN), 0)
                elif pattern == "col":
                    valid = np.arange(self.BM) < self.M
                    index = np.where(valid, np.arange(self.BM), 0)
                else:
                    valid = (rows < self.M) & (cols < self.N)
                    index = np.where(valid, rows * self.N + cols, 0)
            else:
                offsets = pid * self.B + np.arange(self.B)
                valid = offsets < self.n
                index = np.where(valid, offsets, 0)
            if pattern == "chunks":
                size = self.M * self.N if self.two_d else self.n
                chunks = data.reshape(max(self.K, 1), size)
                tiles[name] = (chunks[:, index], valid)
            else:
                tiles[name] = (data[index], valid)
        return tiles

    def _place(self, result, stored, array, dtype, pattern, pid):
        if result is None:
            sentinel = np.asarray(array).astype(np.float64 if dtype in FLOATS else np.int64)
            result = (sentinel.copy(), np.zeros(sentinel.shape), np.zeros(sentinel.shape, bool))
        values, errors, unknown = result
        v, e, u = (np.broadcast_to(x, stored.v.shape) for x in (stored.v, stored.e, stored.u))
        if pattern == "scalar":
            values[pid], errors[pid], unknown[pid] = v, e, u
        elif pattern == "tile":
            if self.two_d:
                for i in range(self.M):
                    sl = slice(i * self.N, (i + 1) * self.N)
                    values[sl], errors[sl], unknown[sl] = v[i, :self.N], e[i, :self.N], u[
                        i, :self.N]
            else:
                count = min(self.B, self.n - pid * self.B)
                sl = slice(pid * self.B, pid * self.B + count)
                values[sl], errors[sl], unknown[sl] = v[:count], e[:count], u[:count]
        else:
            count = self.N if pattern == "row" else self.M
            values[:count], errors[:count], unknown[:count] = v[:count], e[:count], u[:count]
        return values, errors, unknown

    def launch_arguments(self, arrays):
        return [arrays[p[0]] for p in self.params] + list(self.scalars.values())


def ref_numpy(dtype):
    from ..dtypes import to_numpy

    return to_numpy(dtype)


def random_data(rng, dtype, count, kind=None):
    if kind == "nonzero":
        values = rng.integers(1, 21, count)
        if dtype == "i32":  # negative ones too, but not -1 (INT_MIN // -1 overflows)
            values = np.where((values > 1) & (rng.random(count) < 0.5), -values, values)
        return values.astype(ref_numpy(dtype))
    if kind == "shift":
        return rng.integers(0, 32, count).astype(ref_numpy(dtype))
    if dtype in FLOATS:
        values = rng.uniform(-2.0, 2.0, count)
        whole = rng.random(count) < 0.2
        values = np.where(whole, rng.integers(-3, 4, count), values)
        return values.astype(ref_numpy(dtype))
    wide = rng.random() < 0.15
    if dtype == "i32":
        low, high = (-(2**31), 2**31) if wide else (-20, 21)
    else:
        low, high = (0, 2**32) if wide else (0, 41)
    return rng.integers(low, high, count, dtype=np.int64).astype(ref_numpy(dtype))
