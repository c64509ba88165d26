"""pe-cli: exact, inspectable positional-encoding tables.

    >>> import pe_cli
    >>> table = pe_cli.build(d_model=512, seq_len=1024)
    >>> table.numpy().shape
    (1024, 512)
    >>> pe_cli.compare("exp-log", "exact", d_model=512, seq_len=1024).difference.max_abs > 0
    True

build, blocks, Table and TableSpec make tables; write and read move them to and from files;
compare, identify and plot look at them (as `pe-cli compare` and `pe-cli show --plot` do).
The names are loaded on first use, so that `import pe_cli` (and `pe-cli --help`) does not load
numpy or torch.
"""

from .core.version import __version__

__all__ = [
    "__version__",
    "build",
    "blocks",
    "Table",
    "TableSpec",
    "FAMILIES",
    "VARIANT_NAMES",
    "PeError",
    "write",
    "read",
    "compare",
    "identify",
    "plot",
    "probe",
]


def main() -> None:
    """The `pe-cli` command. `--version` is answered before the CLI framework loads."""
    import sys

    if sys.argv[1:] == ["--version"]:
        print(f"pe-cli {__version__}")
        return
    from .cli.app import app

    app()


def __getattr__(name: str):
    if name in ("build", "blocks", "Table"):
        from . import engine

        return getattr(engine, name)
    if name == "TableSpec":
        from .spec import TableSpec

        return TableSpec
    if name in ("FAMILIES", "VARIANT_NAMES"):
        from . import families

        return getattr(families, name)
    if name == "PeError":
        from .core.errors import PeError

        return PeError
    if name == "write":
        from .io.write import write

        return write
    if name == "read":
        from .io.read import read

        return read
    if name == "plot":
        from .plotting import plot

        return plot
    if name == "probe":
        from .analysis.probe import probe

        return probe
    if name in ("compare", "identify"):
        from .analysis import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names beside what is loaded: dir() and help() list them without loading
    them first."""
    return sorted(set(globals()) | set(__all__))
