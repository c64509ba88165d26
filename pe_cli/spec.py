"""One validated description of a table: everything the engine, writers and renderers need."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .conventions import CONVENTIONS
from .dtypes import DTYPE_NAMES, FORMATS
from .errors import BadInput
from .families import FAMILIES, longrope_factors, parse_grid, rope_parameters, rotary_dim
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
    family: str = "sinusoidal"
    part: str | None = None  # which of the family's tables; None: its first
    rope: tuple = ()  # rope: Hugging Face rope_parameters other than rope_theta, as (key, value)
    heads: int = 8  # alibi
    grid: tuple | None = None  # sincos2d: (rows, columns) of patches
    cls_token: bool = False  # sincos2d: a zero row for the class token first (MAE)

    def __post_init__(self) -> None:
        _choice("family", self.family, FAMILIES)
        family = FAMILIES[self.family]
        _whole("--d-model", self.d_model, 1)
        _whole("--seq-len", self.seq_len, 1)
        _whole("--offset", self.offset, 0)
        _whole("--heads", self.heads, 1)
        _choice("variant", self.variant, VARIANT_NAMES)
        library = LIBRARY_VARIANTS.get(self.variant)
        variant_family = library.family if library else "sinusoidal"
        if self.variant != "exact" and variant_family != self.family:
            raise BadInput(
                f"variant {self.variant!r} builds {variant_family} tables; "
                f"use --family {variant_family}, or another variant"
            )
        if library is not None:
            if self.convention not in (None, *library.conventions):
                raise BadInput(
                    f"variant {self.variant!r} is the {' or '.join(library.conventions)} "
                    f"convention; drop --convention {self.convention}"
                )
            object.__setattr__(self, "convention", self.convention or library.conventions[0])
            object.__setattr__(self, "shape", self.shape or library.shape)
            object.__setattr__(self, "part", self.part or library.part)
        object.__setattr__(self, "convention", self.convention or next(iter(family.conventions)))
        object.__setattr__(self, "shape", self.shape or "2d")
        object.__setattr__(self, "part", self.part or next(iter(family.parts)))
        _choice(f"{self.family} convention", self.convention, family.conventions)
        _choice(f"{self.family} part", self.part, family.parts)
        self._check_family()
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
        convention = CONVENTIONS.get(self.convention)
        if convention is not None:
            convention.check(self.d_model)
        if self.padding_idx is not None:
            _whole("--padding-idx", self.padding_idx, 0)
            if convention is None or not convention.padding:
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

    def _check_family(self) -> None:
        """Each family's own parameters: given where they belong, valid, refused elsewhere."""
        name = self.family
        rope = self.rope.items() if isinstance(self.rope, dict) else self.rope
        object.__setattr__(self, "rope", rope_parameters(rope) if rope or name == "rope" else ())
        if self.grid is not None:
            object.__setattr__(self, "grid", parse_grid(self.grid))
        owned = {
            "--rope": (bool(self.rope), "rope"),
            "--grid": (self.grid is not None, "sincos2d"),
            "--cls-token": (bool(self.cls_token), "sincos2d"),
            "--heads": (self.heads != 8, "alibi"),
            "--min-timescale": (self.min_timescale != 1.0, "sinusoidal"),
        }
        for option, (given, owner) in owned.items():
            if given and owner != name:
                raise BadInput(f"{option} belongs to --family {owner}, not {name}")
        if name != "sinusoidal" and self.shape not in ("2d", "batch-first"):
            raise BadInput(f"--shape {self.shape} is for sinusoidal tables")
        if name == "rope":
            dim = rotary_dim(self.d_model, self.rope_parameters)
            if dim < 2 or dim % 2:
                raise BadInput(
                    f"the rotary dim int(d_model * partial_rotary_factor) = {dim} must be even "
                    "and at least 2 (cos and sin come in pairs)"
                )
            kind = self.rope_parameters.get("rope_type", "default")
            if kind == "dynamic" and dim < 4:
                raise BadInput("dynamic NTK divides by rotary dim - 2: it needs a rotary dim >= 4")
            if kind == "longrope":
                longrope_factors(self.rope_parameters, dim // 2, self.last_position + 1)
        elif name == "alibi":
            if self.offset:
                raise BadInput("ALiBi biases depend on distances only: --offset does not apply")
            if self.base != 10000.0:
                raise BadInput("ALiBi slopes have no --base")
        elif name == "sincos2d":
            if self.grid is None:
                raise BadInput("--family sincos2d needs --grid ROWSxCOLUMNS (e.g. 14x14)")
            if self.d_model % 4:
                raise BadInput(
                    f"2-D sin-cos tables need --d-model divisible by 4 (got {self.d_model}): "
                    "sin and cos of two coordinates, d/4 frequencies each"
                )
            if self.offset:
                raise BadInput("2-D tables start at patch (0, 0): --offset does not apply")

    @property
    def rope_parameters(self) -> dict:
        return dict(self.rope)

    def _check_library(self, library) -> None:
        """What the library itself cannot do is refused, with the library's reason."""
        name = self.variant
        if self.compute_dtype is not None and not library.lowered:
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
        refusal = library.refuse(self)
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
    def rows(self) -> int:
        """Rows of the table seen as 2-D, the way the engine builds it in row blocks."""
        if self.part in ("inv_freq", "slopes"):
            return 1
        if self.family == "alibi":
            return self.heads * self.seq_len
        if self.family == "sincos2d":
            return self.grid[0] * self.grid[1] + self.cls_token
        return self.seq_len

    @property
    def cols(self) -> int:
        if self.family == "rope":
            dim = rotary_dim(self.d_model, self.rope_parameters)
            return dim // 2 if self.part == "inv_freq" else dim
        if self.family == "alibi":
            return self.heads if self.part == "slopes" else self.seq_len
        return self.d_model

    @property
    def dims(self) -> tuple[int, ...]:
        """The table's shape as written and returned."""
        if self.part in ("inv_freq", "slopes"):
            return (self.cols,)
        if self.family == "alibi":
            return (self.heads, self.seq_len, self.seq_len)
        rows, cols = self.rows, self.cols
        return {"2d": (rows, cols), "batch-first": (1, rows, cols), "seq-first": (rows, 1, cols)}[
            self.shape
        ]

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.format.itemsize

    def describe(self) -> dict[str, str]:
        """Every parameter as a string (for safetensors metadata): names as they are, other
        values as JSON."""
        import json

        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in asdict(self).items()}
