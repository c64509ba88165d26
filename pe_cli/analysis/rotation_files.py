"""`pe-cli compare AFTER --before BEFORE`: two stored activations read in blocks of rows (never
unpickled), the positions of their rows (--positions: START:STOP, or a file of ids, one axis or
several), and the report of rotation_report against the model's layer where one is given."""

from __future__ import annotations

import numpy as np

from ..core.errors import BadInput
from .rotation_report import Report, expected_of, report


def from_files(
    after: str,
    before: str,
    positions: str | None = None,
    rope_config: str | None = None,
    layer: int | None = None,
) -> Report:
    """`pe-cli compare AFTER --before BEFORE`: the two dumps read (never unpickled), the
    positions of their rows, and the report, against the model's layer where one is given."""
    from dataclasses import replace

    from ..core.dtypes import FORMATS
    from ..io.read import open_table
    from .rotation import check_pair, checked, layout

    first, second = open_table(str(before)), open_table(str(after))
    labels = (first.label, second.label)
    check_pair(first.shape, second.shape, labels)
    shape, names = layout(first.shape, first.label)
    dtype = min(first.dtype, second.dtype, key=lambda name: FORMATS[name].precision)
    ids = None if positions is None else read_positions(positions, shape[0])
    act = checked(_reader(first, second, labels), shape, dtype, ids, names)
    act = replace(act, read_native=_reader(first, second, labels, widen=False), labels=labels)
    expected = None
    if rope_config is not None:
        expected = expected_of(rope_config, layer, int(act.positions.max()) + 1, act.ids)
    return report(act, f"{second.label} against {first.label}", expected, labels=labels)


def _reader(first, second, labels, widen: bool = True):
    """Rows start..stop-1 of two stored activations as (rows, vectors, head_dim) float64, inf
    and nan refused (with `widen` False, in the dtype numpy computes them in: Stored.elements,
    unchecked: the pass that reads them (rotation._measure) refuses them), read from the files
    in slices: a block's rows are one run of elements in (positions, ...) layouts, and one run
    a (batch, head) in torch's."""
    shape = first.shape

    def rows(stored, start: int, stop: int) -> np.ndarray:
        if len(shape) < 4:
            width = int(np.prod(shape[1:]))
            flat = stored.elements(start * width, stop * width, widen)
            return flat.reshape(stop - start, -1, shape[-1])
        batch, heads, positions, dim = shape
        runs = [
            stored.elements((v * positions + start) * dim, (v * positions + stop) * dim, widen)
            for v in range(batch * heads)
        ]
        return np.stack([r.reshape(stop - start, dim) for r in runs], axis=1)

    def read(start: int, stop: int):
        x, y = rows(first, start, stop), rows(second, start, stop)
        if not widen:
            return x, y
        # a sum is finite where every element is (and float32 or half values sum far from
        # overflow): each element is looked at only where a sum is not
        if not (np.isfinite(x.sum()) and np.isfinite(y.sum())) and not (
            np.isfinite(x).all() and np.isfinite(y).all()
        ):
            raise BadInput(f"{labels[0]} or {labels[1]} holds inf or nan")
        return x, y

    return read


def read_positions(text: str, rows: int) -> np.ndarray:
    """START:STOP, or a file of ids (.npy of integers, or text: whitespace or commas): one
    position a row, or (axes, rows) where the rows have several (M-RoPE's t, h and w: a .npy
    of that shape, or a text file of a line an axis)."""
    from pathlib import Path

    if ":" in text and not Path(text).exists():
        start, _, stop = text.partition(":")
        try:
            first = int(start or 0)
            last = int(stop) if stop else first + rows
        except ValueError:
            raise BadInput(f"--positions {text}: START:STOP takes integers") from None
        ids = np.arange(first, last)
    else:
        path = Path(text)
        if not path.is_file():
            raise BadInput(f"--positions {text}: neither START:STOP nor a file of ids")
        if path.read_bytes()[:6] == b"\x93NUMPY":
            try:
                ids = np.load(path, allow_pickle=False)
            except ValueError as e:
                raise BadInput(f"--positions {text}: {e}") from None
        else:
            lines = [ln.replace(",", " ").split() for ln in path.read_text().splitlines()]
            lines = [words for words in lines if words]
            try:
                ids = np.array([int(w) for words in lines for w in words])
            except ValueError:
                raise BadInput(f"--positions {text}: a file of ids holds integers") from None
            if 1 < len(lines) <= 4 and all(len(words) == rows for words in lines):
                ids = ids.reshape(len(lines), rows)  # a line an axis
        if ids.dtype.kind not in "iu":
            raise BadInput(f"--positions {text}: ids are integers, not {ids.dtype}")
        if ids.ndim == 2 and ids.shape[1] == rows and 1 < ids.shape[0] <= 4:
            return ids.astype(np.int64)
        if ids.ndim == 2:
            raise BadInput(
                f"--positions {text} has shape {ids.shape}: ids of several axes are "
                f"(axes, {rows}), e.g. M-RoPE's (3, {rows}) of t, h and w"
            )
        ids = ids.reshape(-1)
    if len(ids) != rows:
        raise BadInput(f"--positions {text} gives {len(ids)} positions for {rows} rows")
    return ids.astype(np.int64)
