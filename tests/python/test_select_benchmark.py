"""benchmarks/h200_select.py's host mode (against numpy, one timing per round): every family
and shape is decided by metile.select, every kernel passes the gate, and each decision's
report and reason are in the JSON. Which side wins is not checked (that is timing); the H200
run is the lead's."""

import json
import subprocess
import sys

from conftest import REPO


def test_the_host_mode_decides_every_case(tmp_path):
    out = tmp_path / "select.json"
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "h200_select.py"),
                             "--device", "host", "--quick", "--samples", "1", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [(c["family"], c["shape_name"]) for c in report["cases"]] == [
        (f, s) for f in ("rms_norm", "softmax", "add_rms_norm", "vector_add")
        for s in ("large", "decode")]
    for case in report["cases"]:
        assert case["decision"] in ("native", "generated"), case["reason"]
        assert case["reason"] == case["report"]["reason"]
        gates = case["report"]["gate"]
        assert len(gates) == 2 and all(g["passed"] for per in gates.values() for g in per)
    assert "rms_norm large f32" in result.stdout
