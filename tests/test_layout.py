"""The rules that keep the code readable (docs/architecture.md): no import cycles, no module
over 400 lines, no block of six lines copied from one module to another outside the tests
(the copy check folds white space and passes over imports and signatures: see
``significant``)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pinboard", "shardstore", "toolkit", "bench")
MAX_LINES = 400
COPIED_LINES = 6


def python_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [ROOT / name for name in out.stdout.split() if (ROOT / name).exists()]


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(graph.modules):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Counting imports inside functions and under TYPE_CHECKING: a cycle hidden there is
    still two modules that cannot be read, or changed, one without the other."""
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    assert cycles(graph) == []


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(file.relative_to(ROOT))
        for file in python_files()
        if len(file.read_text().splitlines()) > MAX_LINES
    }
    assert long == set()


def significant(text: str) -> list[str]:
    """A module's lines as the copy check compares them: white space folded, leaving out the
    lines that say nothing of their own (blank, comments, lone punctuation, imports and the
    names inside their parentheses) and functions' signatures (a Protocol's methods are
    restated by each implementation, and mypy checks that they agree)."""
    kept, skipping = [], ""
    for line in text.splitlines():
        folded = " ".join(line.split())
        if skipping == "import":
            skipping = "" if folded.startswith(")") else skipping
            continue
        if skipping == "signature":
            skipping = "" if folded.endswith(":") else skipping
            continue
        if folded.startswith(("import ", "from ")):
            skipping = "import" if folded.endswith("(") else ""
            continue
        if folded.startswith(("def ", "async def ")):
            skipping = "" if folded.endswith(":") else "signature"
            continue
        if folded and not folded.startswith("#") and re.search(r"\w", folded):
            kept.append(folded)
    return kept


def test_no_six_lines_are_copied_between_modules_outside_the_tests() -> None:
    places: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for file in python_files():
        name = str(file.relative_to(ROOT))
        if name.startswith("tests/"):
            continue
        lines = significant(file.read_text())
        for start in range(len(lines) - COPIED_LINES + 1):
            places[tuple(lines[start : start + COPIED_LINES])].add(name)
    copied = {tuple(sorted(files)) for files in places.values() if len(files) > 1}
    assert copied == set()
