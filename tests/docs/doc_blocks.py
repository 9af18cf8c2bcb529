"""The fenced code blocks of README.md and docs/*.md, for the tests that run them.

A block's info string names its language: ``python`` and ``cpp`` (or ``c++``) blocks are
complete programs that the tests run, unless the info string also says ``fragment`` (an
excerpt: it names things defined elsewhere, or needs a GPU); any other language (``sh``,
``text``, ``json``) is not a program. A block without a language is an error, so that every
block says which it is.
"""

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAM_LANGUAGES = {"python": "python", "cpp": "cpp", "c++": "cpp"}
_FENCE = re.compile(r"^```(.*)$")


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence
    info: str
    code: str

    @property
    def language(self):
        words = self.info.split()
        return PROGRAM_LANGUAGES.get(words[0], words[0]) if words else ""

    @property
    def runs(self):
        return self.language in ("python", "cpp") and "fragment" not in self.info.split()[1:]

    @property
    def name(self):
        stem = self.path.relative_to(REPO).with_suffix("").as_posix().replace("/", "_")
        return f"{stem}_{self.line}"


def documents():
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(path):
    found, lines = [], path.read_text(encoding="utf-8").splitlines()
    opening = None
    for number, text in enumerate(lines, 1):
        match = _FENCE.match(text)
        if not match:
            continue
        if opening is None:
            opening = (number, match.group(1).strip())
        else:
            found.append(Block(path, opening[0], opening[1],
                               "\n".join(lines[opening[0]:number - 1]) + "\n"))
            opening = None
    if opening is not None:
        raise ValueError(f"{path}:{opening[0]}: a code block is not closed")
    return found


def all_blocks():
    return [b for path in documents() for b in blocks(path)]
