"""benchmarks/h200_gemm.py's numpy side on the device (the host target by default): the GEMM,
the fused epilogue and GEMM + separate pointwise launch pass the script's own output check on
ragged shapes, and its table prints. Its timing is not checked; the H200 run is the lead's."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import h200_gemm  # noqa: E402


@pytest.mark.parametrize("kind,candidates", [("gemm", {"metile"}),
                                             ("epilogue", {"fused", "separate"})])
def test_benchmark_candidates_pass_their_check(kind, candidates):
    result = h200_gemm.numpy_case(kind, "bf16", (70, 45, 37), rounds=1)
    assert result["status"] == "ok" and result["failures"] == {}
    assert set(result["times"]) == candidates
    assert all(error <= h200_gemm.TOLERANCE["bf16"] for error in result["errors"].values())


def test_table_names_every_case(capsys):
    cases = [h200_gemm.numpy_case("gemm", "f16", (1, 64, 48), rounds=1)]
    h200_gemm.print_table({"machine": {"host": "test", "metile_device": "host"},
                           "gemm_candidates": ["metile"], "epilogue_candidates": ["fused"],
                           "cases": cases})
    assert "| gemm | f16 | 1x64x48 |" in capsys.readouterr().out
