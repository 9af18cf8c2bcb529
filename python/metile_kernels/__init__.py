"""Library kernels written with @metile.kernel (seed 004's register kernels)."""
