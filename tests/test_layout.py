"""The package's shape: imports point one way through the layers (no cycles, imports inside
functions counted); nothing outside a family's own module names a family, convention, part or
variant, and nothing outside a model's own module names the model; building a table never
loads identification."""

import ast
import re
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
    "options",
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
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_registered":
            # the models' registry imports each "module.NAME" it lists with import_module
            found |= {f"{name}.{arg.value.partition('.')[0]}" for arg in node.args}
    return found & set(MODULES)


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_the_graph_is_read():
    assert "pe_cli.families.base" in GRAPH["pe_cli.families.rope.family"]
    assert "pe_cli.families.rope.layouts" in GRAPH["pe_cli.families.rope.models.flux"]
    assert "pe_cli.engine" in GRAPH["pe_cli"]  # imported inside __getattr__
    assert "pe_cli.families.rope.models.ideogram4" in GRAPH["pe_cli.families.rope.models"]
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


def _family(folder: str) -> str | None:
    """The family package a folder is in (pe_cli.families.rope for its models), or None."""
    parts = folder.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[1] == "families" else None


def _kin(folder: str, other: str) -> bool:
    """Folders a module may import beside it in its layer: its own, one inside the other (a
    family's subpackage and the family's modules; the families' registry and a family
    package), or two subpackages of one family (its identification and its models)."""
    inside = folder == other or folder.startswith(other + ".") or other.startswith(folder + ".")
    return inside or (_family(folder) is not None and _family(folder) == _family(other))


def _family_of(name: str) -> str | None:
    """The family a module is part of (sinusoidal for families.sinusoidal, rope for
    families.rope.models.flux), or None."""
    from pe_cli.families import FAMILIES

    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "families" and parts[2] in FAMILIES else None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_layers_point_one_way(name):
    for other in GRAPH[name]:
        beside = _layer(other) == _layer(name) and _kin(_folder(name), _folder(other))
        assert _layer(other) < _layer(name) or beside, f"{name} imports {other}, a layer above it"
        mine, theirs = _family_of(name), _family_of(other)
        assert not (mine and theirs and mine != theirs), f"{name} imports {other}, another family's"


def test_a_subpackage_imports_its_family_not_another():
    """rope's models import rope's layouts (their parent's), the families' registry imports
    the rope package; a module of one family package never imports another's."""
    assert _kin(_folder("pe_cli.families.rope.models.flux"), _folder("pe_cli.families.base"))
    assert _kin(_folder("pe_cli.families"), _folder("pe_cli.families.rope.family"))
    assert _kin("pe_cli.families.rope.identify", "pe_cli.families.rope.models")
    assert not _kin("pe_cli.families.rope.models", "pe_cli.families.sinusoidal")
    assert not _kin("pe_cli.families.rope", "pe_cli.families.sinusoidal.identify")
    assert _family_of("pe_cli.families.rope.models.flux") == "rope"
    assert _family_of("pe_cli.families.sinusoidal") == "sinusoidal"
    assert _family_of("pe_cli.families.base") is None


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


# ---------------------------------------------------------------------------------------------
# One model, one module: a diffusion model's preset and layout names appear (as a string or in
# an identifier) only in its own module under rope/models/ and in their registry.

ROPE = "pe_cli.families.rope"
REGISTRY = f"{ROPE}.models"


def _model_names() -> set[str]:
    from pe_cli.families.rope import PRESETS, split

    layouts = {preset.layout.name for preset in PRESETS.values()}
    return (set(PRESETS) | layouts) - {layout.name for layout in split.LAYOUTS}


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _mentions(tree: ast.AST, name: str) -> list[tuple[int, str]]:
    """Where a module's strings (docstrings aside) hold `name` as a word of its own (flux,
    not flux2 or FLUX.1), and where an identifier is made of it (flux, FLUX2_LAYOUT,
    _ltx_video_place, a module imported as cosmos3)."""
    word = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])")
    parts = name.replace("-", "_").lower().split("_")

    def made_of(identifier: str) -> bool:
        tokens = identifier.lower().split("_")
        return any(tokens[i : i + len(parts)] == parts for i in range(len(tokens)))

    found, docstrings = [], _docstrings(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and word.search(node.value):
                found.append((line, node.value))
            continue
        identifiers = []
        if isinstance(node, ast.Name):
            identifiers = [node.id]
        elif isinstance(node, ast.Attribute):
            identifiers = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            identifiers = [node.name]
        elif isinstance(node, ast.arg):
            identifiers = [node.arg]
        elif isinstance(node, ast.keyword) and node.arg:
            identifiers = [node.arg]
        elif isinstance(node, ast.alias):
            identifiers = [*node.name.split("."), *([node.asname] if node.asname else [])]
        elif isinstance(node, ast.ImportFrom) and node.module:
            identifiers = node.module.split(".")
        found += [(line, i) for i in identifiers if made_of(i)]
    return found


def _other_family(name: str) -> bool:
    """A module of another family than rope, whose own names (sincos3d's cogvideox layout)
    the family test keeps in place."""
    from pe_cli.families import FAMILIES

    parts = name.split(".")
    return len(parts) > 2 and parts[1] == "families" and parts[2] in set(FAMILIES) - {"rope"}


TREES = {
    name: ast.parse(path.read_text()) for name, path in MODULES.items() if not _other_family(name)
}


def test_model_names_are_found():
    names = _model_names()
    assert {"flux", "cosmos3", "ltx2-cross", "qwenimage-image-first"} <= names
    assert "split" not in names
    assert _mentions(ast.parse("x = FLUX2_LAYOUT"), "flux2") and not _mentions(
        ast.parse("x = 'FLUX.2 and flux2-like'"), "flux2"
    )


@pytest.mark.parametrize("model", sorted(_model_names()))
def test_a_model_is_named_in_its_own_module_only(model):
    where = {
        name: found
        for name, tree in TREES.items()
        if name != REGISTRY and (found := _mentions(tree, model))
    }
    assert len(where) == 1, f"{model} is named in {sorted(where)}: {where}"
    (own,) = where
    assert own.startswith(f"{REGISTRY}."), f"{model} is named in {own}, not in a model's module"


# ---------------------------------------------------------------------------------------------
# Building and reading back are two jobs: the modules that build a table (the engine and every
# family's modules but its identification) never import identification, not even in a function.

IDENTIFICATION = {
    name
    for name in MODULES
    if any(part.startswith("identify") for part in name.split(".")[1:])
    or name == "pe_cli.families.readers"
}


def _closure(roots) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += GRAPH[name]
    return seen


def test_identification_modules_are_found():
    assert {"pe_cli.analysis.identify", "pe_cli.families.readers"} <= IDENTIFICATION
    assert any(name.startswith(f"{ROPE}.identify.") for name in IDENTIFICATION)
    assert "pe_cli.families.sinusoidal.identify_timesteps" in IDENTIFICATION
    assert "pe_cli.families.rope.identify" in _closure(["pe_cli.families.readers"])


def test_the_build_path_imports_no_identification():
    builders = [
        name
        for name in MODULES
        if name.startswith("pe_cli.families.") and name not in IDENTIFICATION
    ]
    for root in ["pe_cli.engine", *builders]:
        reached = _closure([root]) & IDENTIFICATION
        assert not reached, f"{root} loads identification: {sorted(reached)}"
