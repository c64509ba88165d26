"""One validated description of a table: everything the engine, writers and renderers need."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .conventions import CONVENTIONS
from .dtypes import DTYPE_NAMES, FORMATS
from .errors import BadInput
from .variants import LIBRARY_VARIANTS, SEED_VARIANTS

# The exact engine multiplies positions by 21-bit pieces of each frequency in float64; below
# 2**32 every such product is exact (see exact.py).
POSITION_BITS = 32
MAX_POSITION = 2**POSITION_BITS - 1

VARIANT_NAMES = ("exact", *SEED_VARIANTS, *LIBRARY_VARIANTS)
SHAPES = {
    "2d": "(seq_len, d_model)",
    "batch-first": "(1, seq_len, d_model), as the Annotated Transformer's buffer",
    "seq-first": "(seq_len, 1, d_model), as the PyTorch tutorial's buffer",
}
DEVICES = ("cpu", "cuda", "mps", "auto")


def _whole(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise BadInput(f"{name} must be >= {minimum}, got {value}")
    return value


def did_you_mean(value, choices) -> str:
    """' (did you mean 'x'?)' for a close choice, else ''."""
    from difflib import get_close_matches

    close = get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _choice(name: str, value, choices) -> str:
    if value not in choices:
        raise BadInput(
            f"unknown {name} {value!r}{did_you_mean(value, choices)}; choose from {', '.join(choices)}"
        )
    return value


@dataclass(frozen=True)
class TableSpec:
    d_model: int = 512
    seq_len: int = 1024
    convention: str | None = None  # None: the library variant's, else vaswani
    variant: str = "exact"
    dtype: str = "float32"
    compute_dtype: str | None = None  # seed variants only; None means float32 there
    base: float = 10000.0
    offset: int = 0
    padding_idx: int | None = None
    shape: str | None = None  # None: the library variant's, else 2d
    device: str = "cpu"
    min_timescale: float = 1.0  # tensor2tensor: frequencies run from 1/min_timescale down

    def __post_init__(self) -> None:
        _whole("--d-model", self.d_model, 1)
        _whole("--seq-len", self.seq_len, 1)
        _whole("--offset", self.offset, 0)
        _choice("variant", self.variant, VARIANT_NAMES)
        library = LIBRARY_VARIANTS.get(self.variant)
        if library is not None:
            if self.convention not in (None, library.convention):
                raise BadInput(
                    f"variant {self.variant!r} is the {library.convention} convention; "
                    f"drop --convention {self.convention}"
                )
            object.__setattr__(self, "convention", library.convention)
            object.__setattr__(self, "shape", self.shape or library.shape)
        object.__setattr__(self, "convention", self.convention or "vaswani")
        object.__setattr__(self, "shape", self.shape or "2d")
        _choice("convention", self.convention, CONVENTIONS)
        _choice("dtype", self.dtype, DTYPE_NAMES)
        _choice("shape", self.shape, SHAPES)
        device = self.device.split(":")[0] if isinstance(self.device, str) else self.device
        _choice("device", device, DEVICES)
        if isinstance(self.base, bool) or not isinstance(self.base, (int, float)):
            raise BadInput(f"--base must be a number, got {self.base!r}")
        object.__setattr__(self, "base", float(self.base))
        if not (math.isfinite(self.base) and self.base > 1):
            raise BadInput(f"--base must be a finite number > 1, got {self.base}")
        if self.last_position > MAX_POSITION:
            raise BadInput(
                f"positions up to {self.last_position} requested; pe-cli computes positions "
                f"below 2**32 (offset + seq_len <= {MAX_POSITION + 1})"
            )
        convention = CONVENTIONS[self.convention]
        convention.check(self.d_model)
        if self.padding_idx is not None:
            _whole("--padding-idx", self.padding_idx, 0)
            if not convention.padding:
                padded = ", ".join(c.name for c in CONVENTIONS.values() if c.padding)
                raise BadInput(
                    f"--padding-idx belongs to the {padded} convention, not {self.convention!r}"
                )
        if isinstance(self.min_timescale, bool) or not isinstance(self.min_timescale, (int, float)):
            raise BadInput(f"--min-timescale must be a number, got {self.min_timescale!r}")
        object.__setattr__(self, "min_timescale", float(self.min_timescale))
        if self.min_timescale != 1.0:
            if self.convention != "tensor2tensor":
                raise BadInput("--min-timescale belongs to the tensor2tensor convention")
            if not (0 < self.min_timescale < self.base):
                raise BadInput(
                    f"--min-timescale must be between 0 and --base, got {self.min_timescale}"
                )
        if self.variant == "exact":
            if self.compute_dtype is not None:
                raise BadInput(
                    "--compute-dtype applies to the seed variants; "
                    "the exact variant always computes in extended precision"
                )
        elif library is not None:
            self._check_library(library)
        else:
            _choice("compute dtype", self.compute_dtype or "float32", DTYPE_NAMES)
            if self.convention != "vaswani":
                raise BadInput(
                    f"variant {self.variant!r} is a seed notebook's formula and is defined for the "
                    f"vaswani convention only; use --variant exact with --convention {self.convention}"
                )

    def _check_library(self, library) -> None:
        """What the library itself cannot do is refused, with the library's reason."""
        name = self.variant
        if self.compute_dtype is not None:
            raise BadInput(f"variant {name!r} computes in the library's own dtypes; drop --compute-dtype")
        fixed = {
            "base": (self.base != 10000.0, "hardcodes base 10000"),
            "offset": (self.offset != 0, "always starts at position 0"),
            "padding_idx": (self.padding_idx is not None, "has no padding row"),
            "min_timescale": (self.min_timescale != 1.0, "has no min_timescale"),
        }
        for parameter, (given, reason) in fixed.items():
            if given and parameter not in library.parameters:
                raise BadInput(f"variant {name!r} {reason} ({library.source})")
        refusal = library.refuse(self.d_model)
        if refusal:
            raise BadInput(f"{refusal} (got --d-model {self.d_model})")
        if self.padding_idx is not None and self.padding_idx >= self.seq_len:
            raise BadInput(
                f"variant {name!r} indexes row --padding-idx {self.padding_idx} of a table of "
                f"{self.seq_len} rows (the library raises IndexError)"
            )

    @property
    def last_position(self) -> int:
        return self.offset + self.seq_len - 1

    @property
    def format(self):
        return FORMATS[self.dtype]

    @property
    def dims(self) -> tuple[int, ...]:
        """The table's shape as written and returned."""
        rows, cols = self.seq_len, self.d_model
        return {"2d": (rows, cols), "batch-first": (1, rows, cols), "seq-first": (rows, 1, cols)}[
            self.shape
        ]

    @property
    def nbytes(self) -> int:
        return self.seq_len * self.d_model * self.format.itemsize

    def describe(self) -> dict[str, str]:
        """Every parameter as strings (for safetensors metadata and summaries)."""
        return {k: "" if v is None else str(v) for k, v in asdict(self).items()}
