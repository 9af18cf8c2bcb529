"""benchmarks/h200_transpose.py's numpy side on the device (the host target by default): each
tile size's owned, registers (16x16 and up) and scatter kernels give numpy's transpose bit for
bit; the owned one exchanges through threadgroup scratch, the registers one by shuffles. Its timing is not checked; the H200 run is in
docs/cuda.md."""

import sys
from pathlib import Path

import pytest

import metile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import h200_transpose  # noqa: E402


@pytest.mark.parametrize("tile", h200_transpose.TILES)
def test_transpose_benchmark_kernels_are_bit_exact(tile):
    result = h200_transpose.numpy_case(tile, "f16", 2, rounds=1)
    assert result["status"] == "ok" and result["failures"] == {}
    assert [c["mechanism"] for c in result["conversions"]] == ["threadgroup scratch"]
    assert set(result["owned_over"]) == ({"registers", "scatter"} if tile >= 16 else {"scatter"})


def test_register_layouts_hold_four_adjacent_elements_on_both_sides():
    assert h200_transpose.register_layouts(8) is None  # 16 threads: below one SIMD group
    source, destination = h200_transpose.register_layouts(32)
    assert source == metile.ThreadLayout((8, 9, 0, 1, 2, 3, 4, 5, 6, 7), elements_per_thread=4)
    assert destination == metile.ThreadLayout((0, 1, 2, 3, 4, 8, 9, 5, 6, 7),
                                              elements_per_thread=4)


def test_transpose_layout_swaps_row_and_column_bits():
    assert h200_transpose.transpose_layout(8) == metile.ThreadLayout((3, 4, 5, 0, 1, 2))
    assert h200_transpose.transpose_layout(32) == metile.ThreadLayout(
        (5, 6, 7, 8, 9, 0, 1, 2, 3, 4))
