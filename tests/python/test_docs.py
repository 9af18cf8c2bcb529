"""Every code block of README.md and docs/*.md says what it is (tests/docs/doc_blocks.py), and
every complete Python program among them runs (the C++ ones run in the CTest
docs_cpp_programs_against_the_install)."""

import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "docs"))
import doc_blocks  # noqa: E402

BLOCKS = doc_blocks.all_blocks()
PYTHON = [b for b in BLOCKS if b.runs and b.language == "python"]


def test_every_block_names_its_language():
    untagged = [f"{b.path.relative_to(REPO)}:{b.line}" for b in BLOCKS if not b.language]
    assert not untagged, ("code blocks without a language (python, cpp, sh, text, ...; add "
                          f"'fragment' to an excerpt): {', '.join(untagged)}")


def test_the_docs_have_programs_of_both_languages():
    assert len(PYTHON) >= 3
    assert len([b for b in BLOCKS if b.runs and b.language == "cpp"]) >= 4


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.name)
def test_python_program_runs(block, tmp_path):
    program = tmp_path / f"{block.name}.py"
    # Blank lines first, so that tracebacks give the line in the Markdown file.
    program.write_text("\n" * block.line + block.code, encoding="utf-8")
    result = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, (f"{block.path.relative_to(REPO)}:{block.line}: the program "
                                    f"failed\n{result.stdout}\n{result.stderr}")
