"""The rules that keep the code readable (docs/architecture.md): no import cycles, no module
over 400 lines, no block of six lines copied from one module to another outside the tests
(the copy check folds white space and passes over imports and signatures: see
``significant``); and the layers' arrows point down only: ``shardstore`` imports neither
the social model nor the site, ``social`` never the site nor Django, the site's data plane
(``pinboard.plane``) never Django, and ``shardstore`` names nothing of the site's model (its
tables, pools, fields or Redis keys), nor do its tests; and who may see what, and where a
pin goes, is read from a board's or a save's flag in one module only (``social.rules``)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pinboard", "shardstore", "social", "toolkit", "bench")
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


def import_graph() -> grimp.ImportGraph:
    """Every import of the packages (and what they import from outside), counting imports
    inside functions and under TYPE_CHECKING."""
    sys.path.insert(0, str(ROOT))
    try:
        return grimp.build_graph(*PACKAGES, cache_dir=None, include_external_packages=True)
    finally:
        sys.path.remove(str(ROOT))


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Counting imports inside functions and under TYPE_CHECKING: a cycle hidden there is
    still two modules that cannot be read, or changed, one without the other."""
    assert cycles(import_graph()) == []


#: Who may not import whom: the library knows neither the social model nor the site, the
#: social model knows no site and no web framework, and the site's data plane is built
#: without Django (its settings are handed in).
FORBIDDEN_ARROWS = {
    "shardstore": ("social", "pinboard", "django", "toolkit", "bench"),
    "social": ("pinboard", "django", "toolkit", "bench"),
    "pinboard.plane": ("django",),
}


def test_the_layers_import_only_downwards() -> None:
    graph = import_graph()
    arrows = {
        (module, imported)
        for package, below in FORBIDDEN_ARROWS.items()
        for module in graph.find_descendants(package) | {package}
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.split(".")[0] in below
    }
    assert arrows == set()


def site_names() -> dict[str, str]:
    """What is the site's own, as patterns: its catalog's tables and pools, the fields the
    social model reads, and the social model's Redis key prefixes."""
    from pinboard.catalog import CACHE_POOLS, CATALOG
    from social.redis_keys import BOARD_PREFIX, USER_PREFIXES

    names = {
        table: rf"\b{table}\b"
        for table in [*CATALOG.relations, *(lk.table for lk in CATALOG.lookups.values())]
    }
    own = {"lists"}  # the library's own pool, of mapping lists
    for quoted in {t.table for t in CATALOG.types.values()} | set(CACHE_POOLS) - own:
        names[quoted] = rf"[\"']{quoted}[\"']"
    for field in ("owner_id", "secret", "saved_from"):
        names[field] = rf"\b{field}\b"
    for prefix in (*USER_PREFIXES, BOARD_PREFIX):
        names[prefix] = rf"[\"'`]{re.escape(prefix)}"
    return names


def named_in(folder: Path, names: dict[str, str]) -> set[str]:
    """Where the modules under ``folder`` name one of ``names`` (name -> pattern)."""
    patterns = {name: re.compile(pattern) for name, pattern in names.items()}
    return {
        f"{file.relative_to(ROOT)}:{number}: {name}"
        for file in sorted(folder.rglob("*.py"))
        for number, line in enumerate(file.read_text().splitlines(), 1)
        for name, pattern in patterns.items()
        if pattern.search(line)
    }


def test_the_library_names_nothing_of_the_sites_model() -> None:
    """shardstore is driven by the catalog (and the functions) it is handed: a table, a
    pool, a field or a Redis key of the site's is named in ``social`` or ``pinboard``."""
    assert named_in(ROOT / "shardstore", site_names()) == set()


def test_the_librarys_tests_name_nothing_of_the_sites_model() -> None:
    """The library's tests open their stores with a catalog of their own
    (tests/shardstore/catalog.py): besides what the library may not name, they name none
    of the site's object types or lookups (as strings) nor the fields its objects hold."""
    from pinboard.catalog import CATALOG

    names = site_names()
    for name in [*CATALOG.types, *CATALOG.lookups]:
        names[name] = rf"[\"']{name}[\"']"
    for field in ("board_id", "username"):
        names[field] = rf"\b{field}\b"
    assert named_in(ROOT / "tests" / "shardstore", names) == set()


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


#: The one module that reads a board's ``secret`` flag and a save's ``saved_from_secret``.
RULES = "social/rules.py"
#: A read of either flag: ``x["secret"]``, ``x.get("secret"...)``, or the save's field named
#: at all; the name before it is the dict read.
FLAG_READ = re.compile(r"""(\w*)(?:\[\s*|\.get\(\s*)["']secret["']|["']saved_from_secret["']""")
#: Where ``secret`` is a request's field, not a board's: the board form, the API's body, an
#: edit's fields (as the form or the API gives them), by file and the dict read.
REQUEST_FIELDS = {
    ("pinboard/boards/views.py", "post"),
    ("pinboard/boards/views.py", "values"),
    ("pinboard/api/views/boards.py", "data"),
    ("pinboard/boards/actions.py", "changes"),
}


def flag_reads(name: str, text: str) -> list[str]:
    """The lines of module ``name`` that read a board's or a save's flag themselves."""
    return [
        f"{name}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        for match in FLAG_READ.finditer(line)
        if (name, match.group(1)) not in REQUEST_FIELDS
    ]


def test_the_flag_check_finds_reads_and_passes_over_request_fields() -> None:
    module = "pinboard/boards/views.py"
    assert flag_reads(module, 'if board.get("secret"):') != []
    assert flag_reads(module, "flag = board['secret']") != []
    assert flag_reads(module, 'pins.update(i, {"saved_from_secret": True})') != []
    assert flag_reads("pinboard/pins/views.py", 'post.get("secret") == "on"') != []
    assert flag_reads(module, 'secret = post.get("secret") == "on"') == []
    assert flag_reads(module, "if rules.is_secret(board):") == []


def test_only_the_rules_module_reads_the_secret_flags() -> None:
    """The pages, the API, fan-out and the rebuilds decide by the same rules: none reads
    ``secret`` or ``saved_from_secret`` itself (``social.rules`` does, and sets them)."""
    found = [
        read
        for file in python_files()
        if (name := str(file.relative_to(ROOT))).startswith(("pinboard/", "social/"))
        and name != RULES
        for read in flag_reads(name, file.read_text())
    ]
    assert found == []
