"""The package's shape: imports point one way through the layers (no cycles, imports inside
functions counted), and nothing outside a family's own module names a family, convention,
part or variant."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pe_cli"

# lowest first: a module may import from a lower layer, or from its own folder, a folder inside
# it or one it is inside (a family's package and families.base), never a sibling package
LAYERS = [
    "core",
    "numerics",
    "families",
    "spec",
    "engine",
    "io",
    "analysis",
    "render",
    "plotting",
    "cli",
    "",
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every pe_cli module `name` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("pe_cli")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("pe_cli"):
                continue
            for alias in node.names:  # `from ..numerics import exact` imports the module itself
                found.add(
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                )
    return found & set(MODULES)


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_graph_is_read():
    assert "pe_cli.families.base" in GRAPH["pe_cli.families.rope"]
    assert "pe_cli.engine" in GRAPH["pe_cli"]  # imported inside __getattr__
    assert len(MODULES) > 20


def test_no_import_cycles():
    state = {}

    def visit(name, trail):
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", "import cycle: " + " -> ".join(trail + [name])
        state[name] = "open"
        for other in sorted(GRAPH[name]):
            visit(other, trail + [name])
        state[name] = "done"

    for name in sorted(GRAPH):
        visit(name, [])


def _layer(name: str) -> int:
    parts = name.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 and parts[1] in LAYERS else "")


def _folder(name: str) -> str:
    """The package a module lives in (a package: itself)."""
    return name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]


def _nested(folder: str, other: str) -> bool:
    """The folders are one, or one is inside the other."""
    return folder == other or folder.startswith(other + ".") or other.startswith(folder + ".")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_layers_point_one_way(name):
    for other in GRAPH[name]:
        beside = _layer(other) == _layer(name) and _nested(_folder(other), _folder(name))
        assert _layer(other) < _layer(name) or beside, f"{name} imports {other}, a layer above it"


def _names() -> set[str]:
    from pe_cli.families import CONVENTION_NAMES, FAMILIES, PART_NAMES, VARIANT_NAMES

    # "exact" is no family's, and "table" is the word for any whole table as well as a part name
    return (set(FAMILIES) | set(CONVENTION_NAMES) | set(PART_NAMES) | set(VARIANT_NAMES)) - {
        "exact",
        "table",
    }


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not n.startswith("pe_cli.families")))
def test_no_family_is_named_outside_its_module(name):
    tree = ast.parse(MODULES[name].read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    named = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in _names() and id(node) not in docstrings
    ]
    assert not named, f"{name} names {named}"
