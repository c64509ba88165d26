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
    "VARIANT_NAMES": "spec",
    "PeError": "errors",
    "write": "io",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
