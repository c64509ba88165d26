"""Layouts of tables of several position axes, as two types.

`Mrope`: transformers' M-RoPE and vision RoPE. One power law over the rotary dim; each column
takes one axis and one frequency, as the model recomposes its frequencies (mrope.py).

`Split`: diffusers' multi-axis RoPE. Axis a takes axes_dim[a] columns of its own power law
theta_a**(-2i/axes_dim[a]), laid out by the convention within its block: interleaved
(get_1d_rotary_pos_embed's repeat_interleave: FLUX, Wan, HunyuanVideo, CogVideoX), half (its
cat: Allegro) or single (the complex tables of use_real=False: Lumina, QwenImage). Its tokens are
text tokens and a grid's, row-major, or rows of --ids; a model places them its own way (each
model's module under models/). Exact positions are integers over a denominator per axis, which
moves into that axis's frequencies.

Each layout declares what it takes (the model's --rope keys, its capabilities), so that the
checks and the arithmetic that serve every layout name none. LAYOUTS holds them all by name,
filled by the registry (models/__init__.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from ...core.errors import BadInput
from ..positions import parse_grid


class Plan(NamedTuple):
    """A multi-axis table's frequencies and columns: the power laws, each (dim, theta), and
    the (axis, frequency) of each column; frequency j counts through the laws' frequencies in
    order."""

    laws: list[tuple[int, float]]
    columns: list[tuple[int, int]]


@dataclass(frozen=True, kw_only=True)
class Layout:
    name: str
    summary: str
    axes: tuple[str, ...]  # the position axes, in the order of a grid's dimensions
    convention: str | None = "half"  # how the columns pair up when rotated (None: --convention's)
    keys: tuple = ()  # the --rope keys (keys.Key) of its models it takes: fps, axes_scale, ...
    merged: bool = False  # patches come in spatial-merge blocks (the model's token order)

    split: ClassVar[bool] = False

    @property
    def vision(self) -> bool:
        return "row" in self.axes


@dataclass(frozen=True, kw_only=True)
class Mrope(Layout):
    """transformers' M-RoPE (positions (t, h, w)) and vision RoPE (a patch's (row, column))."""

    dim: Callable  # (head dim, rope parameters) -> the dim of the power law (arange(0, dim, 2))
    columns: Callable  # (frequencies, sections) -> ((axis, frequency) of each column)
    whole: bool = True  # mrope_section splits all the frequencies (else it bounds where h, w reach)
    # the mrope_section that gives t, h and w these many frequencies (identification reads them)
    sections: Callable = lambda t, h, w: (t, h, w)

    def plan(self, spec) -> Plan:
        rope = dict(spec.rope)
        dim = self.dim(spec.d_model, rope)
        n = (dim + 1) // 2
        sections = (
            mrope_sections(n, rope.get("mrope_section"), self.whole) if not self.vision else ()
        )
        return Plan([(dim, spec.base)], self.columns(n, sections))


@dataclass(frozen=True)
class Law:
    """A split layout's own frequencies, where they are not theta**(-2i/dim) on each axis:
    exactly, (spec, axis, dim, theta) -> [Decimal] (None: that power law, computed another way),
    and in diffusers' arithmetic, (torch, spec, axis, dim, theta) -> tensor, in one of `dtypes`
    (--freqs-dtype; the first is its model's)."""

    torch: Callable
    exact: Callable | None = None
    dtypes: tuple[str, ...] = ("float32",)
    empty_axes: str = ""  # whose axes take no columns (axes_dim 0), which this law allows
    # the --rope key its frequencies are multiplied by, which identification reads from the
    # spacing of the positions the unscaled law reads (Kandinsky 6's audio: freqs_scaling)
    scaled_by: str = ""
    library: str = "diffusers"  # whose arithmetic `torch` is: the --variant that computes it


@dataclass(frozen=True)
class Tail:
    """Tokens a model puts after its grid (Cosmos 3's sound and action tokens)."""

    # (spec, each axis's denominator) -> (their integer positions over the denominators, the
    # float32 ones diffusers computes)
    tokens: Callable
    # (spec, runs, step) -> [(rope settings, tokens)]: what a table's last tokens at (t, 0, 0)
    # may be, from the lengths of their runs (each starting back at one time) and the step in t
    # of the first run (None where it has no step): identification's reading of them
    settings: Callable


@dataclass(frozen=True, kw_only=True)
class Split(Layout):
    """diffusers' multi-axis RoPE: each axis its own power law over its axes_dim share, blocks
    side by side; `place` gives each grid axis's positions, `text` the text tokens'."""

    convention: str | None = None
    place: Callable  # (spec, axis, size) -> (integer numerators, denominator)
    floats: Callable | None = None  # (spec, axis, size) -> the float32 positions diffusers holds
    # (laws, convention) -> (axis, frequency) of each column; default: each axis's block in turn
    columns: Callable | None = None
    text: Callable | None = None  # (spec, text tokens, axes) -> their integer positions
    text_after: bool = False  # text tokens follow the grid (HiDream), rather than lead
    origin: Callable | None = None  # (spec) -> where the axes a grid leaves out are (default 0)
    trailing: int = 0  # last axes a grid never covers (at 0 on image tokens: FLUX.2's text axis)
    divisors: tuple[float, ...] = ()  # each axis's positions divided by this (Allegro's scales)
    law: Law | None = None  # its own frequencies (LTX-Video's, Cosmos 3's, Kandinsky 5's)
    tail: Tail | None = None  # tokens after the grid
    angles32: bool = False  # diffusers rounds the angles to float32 before torch.polar (Z-Image)
    angle_scale: bool = False  # --rope axes_scale divides the float32 angles (Kandinsky 5)
    once: bool = False  # --convention single takes each column pair's angle once (LTX-2's "split")
    check: Callable | None = None  # (spec) -> None: the model's own refusals (BadInput)

    split: ClassVar[bool] = True

    def plan(self, spec) -> Plan:
        laws = split_laws(spec)
        return Plan(laws, (self.columns or block_columns)(laws, spec.convention))


# every layout by name, in --rope-axes's order; the registry (models/__init__.py) fills it
LAYOUTS: dict[str, Layout] = {}


def layout_of(spec) -> Layout | None:
    """The layout a spec names (--rope-axes), or None for a 1-D table."""
    return LAYOUTS[spec.axes] if spec.axes else None


def axes_plan(spec) -> Plan:
    """The power laws and the (axis, frequency) of each column of a multi-axis table."""
    return layout_of(spec).plan(spec)


def mrope_sections(n: int, sections, whole: bool) -> list[int]:
    if not sections:
        raise BadInput(
            "M-RoPE needs mrope_section (--rope mrope_section=16,24,24; a --rope-config "
            "gives the model's own)"
        )
    sections = [int(s) for s in sections]
    if whole and sum(sections) != n:
        raise BadInput(f"mrope_section {sections} must add up to the {n} frequencies")
    return sections


def split_laws(spec) -> list[tuple[int, float]]:
    rope = dict(spec.rope)
    dims = rope.get("axes_dim")
    if not dims:
        raise BadInput(
            f"--rope-axes {spec.axes} needs each axis's share of the head dim: "
            "--rope axes_dim=16,56,56 (or a --preset)"
        )
    thetas = rope.get("axes_theta") or (spec.base,) * len(dims)
    if len(thetas) != len(dims):
        raise BadInput(f"rope parameter axes_theta has {len(thetas)} values for {len(dims)} axes")
    return list(zip(dims, thetas))


def first_frequencies(laws) -> list[int]:
    """Each law's first frequency j (j counting through the laws' frequencies in order)."""
    return [sum(dim // 2 for dim, _ in laws[:a]) for a in range(len(laws))]


def block_columns(laws, convention: str, order=None) -> list[tuple[int, int]]:
    """Each axis's block (in `order`, default axis order) of its frequencies, paired within the
    block by the convention."""
    firsts = first_frequencies(laws)
    columns = []
    for axis in order or range(len(laws)):
        block = [(axis, firsts[axis] + j) for j in range(laws[axis][0] // 2)]
        columns += (
            [c for c in block for _ in (0, 1)]
            if convention == "interleaved"
            else block * 2
            if convention == "half"
            else block
        )
    return columns


def axis_names(spec) -> tuple[str, ...]:
    style = layout_of(spec)
    return style.axes[len(style.axes) - len(split_laws(spec)) :] if style.split else style.axes


def grid_shape(spec) -> tuple[int, ...]:
    """The --grid of a multi-axis table, checked against its layout and merge size. A split
    layout's grid may leave out leading axes, which stay at position 0 (FLUX's image index)."""
    style = layout_of(spec)
    names = tuple(a.upper() for a in axis_names(spec))
    if style.split:  # the axes a grid can cover, its given number of them the last
        names = names[: len(names) - style.trailing]
        given = (
            len(spec.grid)
            if isinstance(spec.grid, (tuple, list))
            else len(str(spec.grid).lower().replace("*", "x").split("x"))
        )
        names = names[max(len(names) - given, 0) :]
    shape, m = parse_grid(spec.grid, names), spec.merge
    if style.vision and m > 1 and (shape[-2] % m or shape[-1] % m):
        raise BadInput(
            f"--grid {spec.grid}: the encoder merges {m}x{m} patches; rows and columns "
            f"must be multiples of {m}"
        )
    return shape


@dataclass(frozen=True, kw_only=True)
class Preset:
    """A diffusion model's RoPE as its diffusers 0.42 module and pipeline set it up (--preset):
    its tokens are given by --grid (and --text-tokens) or --ids."""

    name: str
    summary: str  # the model and where diffusers builds its table
    head_dim: int
    theta: float
    layout: Split
    axes_dim: tuple[int, ...]
    convention: str
    freqs_dtype: str  # get_1d_rotary_pos_embed's, as the model calls it
    axes_theta: tuple[float, ...] = ()  # each axis's theta, where they differ (Cosmos's NTK)
    tries: tuple[dict, ...] = ({},)  # rope settings identification tries beside the preset's

    @property
    def axes(self) -> str:
        """Its layout's name (--rope-axes)."""
        return self.layout.name

    @property
    def rope(self) -> dict:
        thetas = {"axes_theta": ",".join(map(repr, self.axes_theta))} if self.axes_theta else {}
        return {"axes_dim": ",".join(map(str, self.axes_dim)), **thetas}
