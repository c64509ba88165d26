"""Which tests need a reference library (transformers, diffusers, ...), read from their bytecode,
for tests/conftest.py's `conformance` marker.

A test needs one when its module cannot be imported without it, or when the test function, its
parameters (the lambdas and functions of a parametrize list) or its fixtures import it, or call
a function of tests/ or tools/ that does, however deep. Functions of other packages (pe_cli,
torch, numpy) are not followed: they never import a reference library.
"""

import dis
import functools
import importlib
import itertools
import re
import types
from pathlib import Path

# the libraries the conformance tests compare pe-cli with, by import name (the test extra), and
# the engines built from source that tests/ calls through a harness of its own (HARNESSES)
REFERENCES = frozenset(
    {
        "transformers",
        "diffusers",
        "positional_encodings",
        "x_transformers",
        "rotary_embedding_torch",
        "tensorflow",
        "timm",
        "mlx",
        "mlx_lm",
        "gguf",
        "ggml",
        "vllm",
        "megatron",
        "llama_models",
        "framework",
        "keras_hub",
        "kerashub",
        "onnxruntime_genai",
        "jax",
        "ortgenai",
    }
)
# modules of ours that stand for an engine, each named after it up to an underscore (tests/
# vllm_tables.py runs vLLM in a venv of its own): using one is using that engine
HARNESSES = frozenset({"tests.ggml", "tests.vllm_tables", "tests.framework_tables"})
HARNESSES |= {"tests.kerashub_tables", "tests.ortgenai_tables", "tests.vllm_probe"}
# the packages whose functions are followed
OURS = frozenset({"tests", "tools"})
ROOT = Path(__file__).resolve().parents[1]

# calls that import the module a string names: pytest.importorskip, importlib.import_module
_IMPORTERS = frozenset({"importorskip", "import_module"})


def _top(name) -> str:
    return name.partition(".")[0] if isinstance(name, str) else ""


def _engine(harness: str) -> str:
    """The engine a harness stands for: its module's name up to an underscore."""
    return harness.rpartition(".")[2].partition("_")[0]


def _home(value) -> str:
    """The top-level package a module, class or function is defined in (a harness's engine for
    a harness's)."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
    else:
        try:
            name = getattr(value, "__module__", None)
        except Exception:  # an object whose attribute lookup runs code
            return ""
    if isinstance(name, str) and name in HARNESSES:
        return _engine(name)
    return _top(name)


def _module_file(name: str, level: int, importer: Path) -> Path | None:
    """The file of one of our modules, found without importing it."""
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
    elif _top(name) in OURS:
        base = ROOT
    else:
        return None
    path = base.joinpath(*name.split(".")) if name else base
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def file_needs(path: Path) -> str | None:
    """The reference library a module of ours imports when it is imported: from its source,
    without importing it, so that a module needing one can be left uncollected."""
    for harness in HARNESSES:
        if path == ROOT.joinpath(*harness.split(".")).with_suffix(".py"):
            return _engine(harness)
    code = compile(path.read_text(), str(path), "exec")
    instructions = list(dis.get_instructions(code))
    names = {i.argval for i in instructions if isinstance(i.argval, str)}
    for at, instruction in enumerate(instructions):
        argument = instruction.argval
        if instruction.opname == "IMPORT_NAME":
            level, fromlist = instructions[at - 2].argval, instructions[at - 1].argval
            if not level and _top(argument) in REFERENCES:
                return _top(argument)
            module = _module_file(argument, level, path)
            # `from . import figures` imports the module figures.py, `from .x import f` only x
            submodules = [
                _module_file(f"{argument}.{n}".lstrip("."), level, path) for n in fromlist or ()
            ]
            for found in map(file_needs, filter(None, [module, *submodules])):
                if found:
                    return found
        elif isinstance(argument, str) and _top(argument) in REFERENCES and names & _IMPORTERS:
            return _top(argument)
    return None


class Reader:
    """Reads what objects reach; each object is read once."""

    def __init__(self):
        self.memo = {}  # id -> (object, library or None); the object keeps its id from reuse

    def test(self, item) -> str | None:
        """The reference library a pytest Function needs, or None."""
        found = file_needs(Path(item.module.__file__)) or self.value(item.function)
        callspec = getattr(item, "callspec", None)
        if not found and callspec is not None:
            found = self.value(list(callspec.params.values()))
        if not found:
            definitions = item._fixtureinfo.name2fixturedefs.values()
            found = self.value([d.func for ds in definitions for d in ds])
        return found

    def value(self, value) -> str | None:
        home = _home(value)
        if home in REFERENCES:
            return home
        key = id(value)
        if key in self.memo:
            return self.memo[key][1]
        self.memo[key] = (value, None)  # a cycle reads as nothing
        found = next(filter(None, map(self.value, _parts(value, home))), None)
        if not found and isinstance(value, types.FunctionType) and home in OURS:
            found = self.code(value.__code__, value.__globals__)
        self.memo[key] = (value, found)
        return found

    def code(self, code: types.CodeType, namespace: dict) -> str | None:
        """What a function's code reaches: the modules it imports (ours by what importing them
        needs and by the names taken from them), the modules its importorskip calls name, the
        globals it loads (of one of our modules, only the attribute it loads where it loads
        one) and the lambdas, functions and comprehensions defined in it."""
        instructions = list(dis.get_instructions(code))
        names = {i.argval for i in instructions if isinstance(i.argval, str)}
        for at, instruction in enumerate(instructions):
            operation, argument = instruction.opname, instruction.argval
            found = None
            if operation == "IMPORT_NAME":
                level, fromlist = instructions[at - 2].argval, instructions[at - 1].argval
                found = self._import(argument, level, fromlist or (), namespace)
            elif operation == "LOAD_CONST" and isinstance(argument, types.CodeType):
                found = self.code(argument, namespace)
            elif isinstance(argument, str) and _top(argument) in REFERENCES and names & _IMPORTERS:
                found = _top(argument)
            elif operation in ("LOAD_GLOBAL", "LOAD_NAME") and argument in namespace:
                target = namespace[argument]
                following = instructions[at + 1] if at + 1 < len(instructions) else None
                if (
                    isinstance(target, types.ModuleType)
                    and _home(target) in OURS
                    and following is not None
                    and following.opname in ("LOAD_ATTR", "LOAD_METHOD")
                ):
                    target = getattr(target, following.argval, None)
                found = self.value(target)
            if found:
                return found
        return None

    def _import(self, name, level, fromlist, namespace) -> str | None:
        if not level and _top(name) in REFERENCES:
            return _top(name)
        package = namespace.get("__package__") or ""
        if not (level and _top(package) in OURS) and _top(name) not in OURS:
            return None
        module = importlib.import_module("." * (level or 0) + name, package or None)
        taken = [_attribute_or_submodule(module, n) for n in fromlist]
        return file_needs(Path(module.__file__)) or self.value(taken or [module])


def _attribute_or_submodule(module, name):
    """What `from module import name` takes: `from tools import transformers_models` imports
    the submodule where the package does not hold it yet."""
    if hasattr(module, name):
        return getattr(module, name)
    try:
        return importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return None


def _parts(value, home):
    """What a value holds that may reach a library."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return value
    if isinstance(value, dict):
        return value.values()
    if isinstance(value, functools.partial):
        return (value.func, *value.args, *value.keywords.values())
    if isinstance(value, (staticmethod, classmethod)):
        return (value.__func__,)
    if home not in OURS:
        return ()
    if isinstance(value, types.ModuleType):
        return [v for v in vars(value).values() if getattr(v, "__module__", 0) == value.__name__]
    if hasattr(value, "__dict__") and not isinstance(value, types.FunctionType):
        return [v for v in vars(value).values() if not isinstance(v, str)]  # our classes, objects
    return ()


def leaves_out(markexpr: str, marker: str) -> bool:
    """Whether `-m markexpr` deselects every test marked `marker`, whatever its other markers."""
    if not markexpr:
        return False
    try:
        from _pytest.mark.expression import Expression  # pytest's own -m parser

        expression = Expression.compile(markexpr)
    except Exception:  # another pytest's internals, or a bad expression pytest reports itself
        return False
    others = sorted(set(re.findall(r"[A-Za-z_][\w.+-]*", markexpr)) - {"and", "or", "not", marker})
    if len(others) > 10:
        return False
    for values in itertools.product((False, True), repeat=len(others)):
        markers = {marker: True, **dict(zip(others, values))}
        if expression.evaluate(functools.partial(_has, markers)):
            return False
    return True


def _has(markers: dict, name: str, **_) -> bool:
    return markers.get(name, False)
