"""What `show` looks at: a file's table or a built one, as 2-D float64 values with its facts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import build
from ..spec import TableSpec, spec_from_options
from .compare import side
from .metrics import facts


@dataclass
class View:
    label: str
    values: np.ndarray  # (rows, columns)
    dtype: str
    spec: TableSpec | None  # the parameters, for a built table or a file pe-cli wrote
    facts: dict

    @property
    def first_position(self) -> int:
        return self.spec.offset if self.spec is not None else 0


def view(source: str | None, options: dict) -> View:
    """The table in `source` (a file), or the one the options describe when there is none."""
    if source is not None:
        found = side(source, {})
        label, values, dtype, spec = found.label, found.values, found.dtype, found.spec
    else:
        spec = spec_from_options(options)
        label, values, dtype = "table", build(spec).float64().reshape(spec.rows, spec.cols), spec.dtype
    return View(label, values, dtype, spec, facts(values, dtype, spec))
