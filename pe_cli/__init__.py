"""pe-cli: exact, inspectable positional-encoding tables.

    >>> import pe_cli
    >>> table = pe_cli.build(d_model=512, seq_len=1024)
    >>> table.numpy().shape
    (1024, 512)

The names below are loaded on first use, so `import pe_cli` (and `pe-cli --help`) stays fast.
"""

__version__ = "0.1.0"

_EXPORTS = {
    "build": "engine",
    "blocks": "engine",
    "Table": "engine",
    "TableSpec": "spec",
    "CONVENTIONS": "conventions",
    "SEED_VARIANTS": "variants",
    "LIBRARY_VARIANTS": "variants",
    "VARIANT_NAMES": "spec",
    "PeError": "errors",
    "write": "io",
}

__all__ = ["__version__", *_EXPORTS]


def main() -> None:
    """The `pe-cli` command. `--version` is answered before the CLI framework loads."""
    import sys

    if sys.argv[1:] == ["--version"]:
        print(f"pe-cli {__version__}")
        return
    _defer_markdown()
    from .cli import app

    app()


def _defer_markdown() -> None:
    """typer's help imports rich.markdown, and with it markdown-it (0.1 s of a 0.3 s --help),
    for its "markdown" markup mode, which pe-cli does not use. In the pe-cli process only,
    a stand-in class loads the real one the first time it is used."""
    import sys
    import types

    if "rich.markdown" in sys.modules:
        return

    class Markdown:
        def __new__(cls, *args, **kwargs):
            del sys.modules["rich.markdown"]
            from rich.markdown import Markdown as real

            return real(*args, **kwargs)

    stand_in = types.ModuleType("rich.markdown")
    stand_in.Markdown = Markdown
    sys.modules["rich.markdown"] = stand_in


def __getattr__(name: str):
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
