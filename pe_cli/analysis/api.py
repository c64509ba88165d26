"""`compare` and `identify` for Python: thin entries over compare.run and identify, taking
what a notebook has (a file, a table spec, an array) and returning the results the command
line renders."""

from __future__ import annotations

from .compare import DEFAULT_THRESHOLD, Audit, Comparison, Identification, run
from .identify import identify as _identify
from .tables import Source, reading


def compare(
    a=None, b=None, *, atol: float | None = None, rtol: float | None = None, **table
) -> Comparison | Audit | Identification:
    """What `pe-cli compare [A [B]]` finds, as a result to read: A against B (a Comparison;
    B by default the exact table), the family's audit with no tables (an Audit), or a file's
    identification (an Identification). A and B are files ('x.npy', 'x.safetensors:cos') or
    table specs ('exp-log:float16'); `table` takes the table parameters of pe_cli.build, for
    the built sides:

        pe_cli.compare("exact", "hf-rope", family="rope", d_model=128, seq_len=4096)
    """
    from ..spec import check_keywords

    check_keywords(table)
    found = [None if side is None else str(side) for side in (a, b)]
    return run(*found, table, atol, rtol).result


def identify(source) -> Identification:
    """What table a file or an array is: `source` a path ('x.npy', 'x.safetensors:cos') or
    a numpy array (float16, float32 or float64), read as (positions, dimensions)."""
    if isinstance(source, str) or hasattr(source, "__fspath__"):
        return run(str(source), None, {}).result
    target = _array(source)
    return Identification(target, _identify(target, DEFAULT_THRESHOLD))


def _array(values) -> Source:
    import numpy as np

    from ..core.errors import BadInput

    array = np.asarray(values)
    dtype = {"f8": "float64", "f4": "float32", "f2": "float16"}.get(
        f"{array.dtype.kind}{array.dtype.itemsize}"
    )
    if dtype is None:
        raise BadInput(f"an array of dtype {array.dtype} is not a floating-point table")
    rows, cols, notes = reading(array.shape, "array")
    flat = np.ascontiguousarray(array).reshape(rows, cols)
    return Source(
        "array",
        rows,
        cols,
        dtype,
        None,
        lambda a, b: flat[a:b].astype(np.float64),
        notes=notes,
        dims=tuple(array.shape),
    )
