"""The rope family: rotary embeddings' cos and sin tables, cos(p*w_i) and sin(p*w_i) times an
attention factor, each frequency in two columns, and the frequencies themselves (inv_freq).

Frequencies and factor are Hugging Face modeling_rope_utils' for each rope_type, computed
exactly here. The two columns of frequency i are i and i + dim/2 (half: GPT-NeoX, Hugging
Face's rotate_half) or 2i and 2i + 1 (interleaved: GPT-J, RoFormer, Meta's llama); `_pairs`
is the one place that says so.

Tables of several position axes are one mechanism, AXES: transformers' M-RoPE and vision
RoPE (one power law, each column on one axis), and diffusers' split layouts (each axis its
own power law over its share of the head dim, tokens from a grid, text tokens or an ids
file), with a --preset for each diffusion model whose table diffusers builds from a formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from decimal import Decimal
from functools import lru_cache

from ..core.dtypes import DTYPE_ALIASES, FORMATS
from ..core.errors import BadInput
from ..core.limits import MAX_POSITION, one_thread
from ..core.names import choice, unknown
from ..core.params import Param
from ..numerics.frequencies import PI, context
from .base import TEXT_TOKENS, Family, Library, Norm, variant
from .hf_config import LayerTypes, read
from .positions import ids_positions as ids_tokens
from .positions import parse_grid
from .reading import plausible_bases

# ---------------------------------------------------------------------------------------------
# RoPE parameters, named and typed as in Hugging Face's rope_parameters

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional", "axial")
ROPE_KEYS = {
    "rope_type": str,
    "partial_rotary_factor": float,
    "factor": float,
    "max_position_embeddings": int,
    "original_max_position_embeddings": int,
    "attention_factor": float,
    "beta_fast": float,
    "beta_slow": float,
    "mscale": float,
    "mscale_all_dim": float,
    "truncate": bool,
    "low_freq_factor": float,
    "high_freq_factor": float,
    "short_factor": list,
    "long_factor": list,
    # M-RoPE's split of the frequencies over (t, h, w) positions (--grid): a text token has
    # t = h = w, so a table of 1-D positions is the same with or without it
    "mrope_section": list,
    # a config flag transformers 5.23's modules do not read (the model type says the layout)
    "mrope_interleaved": bool,
    # the attention's position-dependent query scaling (Ministral 3, Mistral 4), not the table's
    "llama_4_scaling_beta": float,
    # diffusers' multi-axis RoPE (--rope-axes split and the models' layouts): each position
    # axis's share of the head dim (FLUX: 16,56,56) and its own theta (default --base)
    "axes_dim": list,
    "axes_theta": list,
    # diffusers' get_1d_rotary_pos_embed ntk_factor: theta times it (Lumina-Next)
    "ntk_factor": float,
    # Cosmos: a video's frame rate; frame k sits at k * 24 / fps (images: k)
    "fps": float,
    # Cosmos 3's joint sequence: sound and action tokens after the video, at (t, 0, 0) from its
    # first frame's time; with --rope fps, sound token k at k * 24 / sound_fps (its config's
    # sound_latent_fps, 25) and action token k at (k + 1) * 6 / fps
    "sound_tokens": int,
    "action_tokens": int,
    "sound_fps": float,
    # Kandinsky 5: each axis's positions divided by this (its scale_factor: 1,2,2 at 480p)
    "axes_scale": list,
    # Kandinsky 6's audio RoPE1D: its frequencies times this (audio_freqs_scaling)
    "freqs_scaling": float,
    # FramePack's and Helios's history tables: cos and sin averaged over blocks of this many
    # tokens per axis, an axis padded at its end by repeating its last position
    "pool": list,
    # AnyFlow-FAR's compressed frames: each axis's complex table pooled on its own, then each
    # (cos, sin) mean over its length
    "pool_unit": bool,
}
# what scales the frequencies (or says for which context), as against the layout's keys
_SCALING = (
    "rope_type",
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "low_freq_factor",
    "high_freq_factor",
    "short_factor",
    "long_factor",
    "ntk_factor",
)
_REQUIRED = {
    "linear": ("factor",),
    "dynamic": ("factor", "max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "longrope": ("original_max_position_embeddings",),  # and the factor list its positions use
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
}


def _typed(key: str, value):
    kind = ROPE_KEYS[key]
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                return value.lower() in ("true", "1")
            return bool(value)
        if kind is list:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(float(v) for v in items)
        if kind is int:
            number = float(value)
            if not number.is_integer():
                raise ValueError
            return int(number)
        if kind is float:
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return number
        return str(value)
    except (TypeError, ValueError):
        raise BadInput(f"rope parameter {key} = {value!r} is not a {kind.__name__}") from None


def rope_parameters(items) -> tuple:
    """Check and normalize rope parameters (pairs or a dict) into sorted (key, value) pairs."""
    pairs = dict(items.items() if isinstance(items, dict) else items)
    out = {}
    for key, value in pairs.items():
        if key == "type":  # the old name in configs
            key = "rope_type"
        if key not in ROPE_KEYS:
            raise BadInput(unknown("rope parameter", key, ROPE_KEYS))
        if value is None:
            continue
        out[key] = _typed(key, value)
    kind = out.get("rope_type", "default")
    if kind not in ROPE_TYPES:
        raise BadInput(unknown("rope_type", kind, ROPE_TYPES))
    missing = [k for k in _REQUIRED.get(kind, ()) if k not in out]
    if missing:
        raise BadInput(f"rope_type {kind} needs {', '.join(missing)} (pass --rope KEY=VALUE)")
    for key in (
        "factor",
        "partial_rotary_factor",
        "max_position_embeddings",
        "original_max_position_embeddings",
        "low_freq_factor",
        "high_freq_factor",
        "ntk_factor",
        "fps",
        "sound_fps",
    ):
        if key in out and out[key] <= 0:
            raise BadInput(f"rope parameter {key} must be > 0, got {out[key]}")
    if "partial_rotary_factor" in out and out["partial_rotary_factor"] > 1:
        raise BadInput("rope parameter partial_rotary_factor must be at most 1")
    if kind == "llama3" and out["high_freq_factor"] <= out["low_freq_factor"]:
        raise BadInput("llama3 needs high_freq_factor > low_freq_factor")
    if kind == "longrope" and "factor" not in out and "max_position_embeddings" not in out:
        raise BadInput("rope_type longrope needs factor, or max_position_embeddings to derive it")
    if "axes_dim" in out:
        dims = out["axes_dim"]
        if not all(d.is_integer() and d >= 0 and d % 2 == 0 for d in dims) or not any(dims):
            raise BadInput(
                f"rope parameter axes_dim {','.join(f'{d:g}' for d in dims)}: each axis's "
                "share of the head dim must be an even whole number"
            )
        out["axes_dim"] = tuple(int(d) for d in dims)
    if "axes_theta" in out and not all(t > 1 for t in out["axes_theta"]):
        raise BadInput("rope parameter axes_theta: each axis's theta must be > 1")
    if "axes_scale" in out and not all(0 < t for t in out["axes_scale"]):
        raise BadInput("rope parameter axes_scale: each axis's scale must be > 0")
    if "pool" in out:
        if not all(k.is_integer() and 1 <= k <= _LARGEST_POOL for k in out["pool"]):
            raise BadInput(
                f"rope parameter pool {','.join(f'{k:g}' for k in out['pool'])}: each axis's block "
                f"is a whole number of tokens from 1 to {_LARGEST_POOL}"
            )
        out["pool"] = tuple(int(k) for k in out["pool"])
    return tuple(sorted(out.items()))


def rotary_dim(d_model: int, rope: dict) -> int:
    """Hugging Face's dim = int(head_dim * partial_rotary_factor): the exponents are 2i/dim,
    i < ceil(dim / 2). Proportional RoPE keeps the exponents 2i/head_dim and sets the
    frequencies past int(head_dim * partial_rotary_factor // 2) to zero instead."""
    if rope.get("rope_type") == "proportional":
        return d_model
    return int(d_model * rope.get("partial_rotary_factor", 1.0))


def frequency_count(d_model: int, rope: dict) -> int:
    """How many frequencies (columns of a single-column table): transformers' arange(0, dim, 2)."""
    return (rotary_dim(d_model, rope) + 1) // 2


def rotated_count(d_model: int, rope: dict) -> int:
    """How many of them are not zero (all but proportional RoPE's unrotated tail)."""
    if rope.get("rope_type") == "proportional":
        return int(rope.get("partial_rotary_factor", 1.0) * d_model // 2)
    return frequency_count(d_model, rope)


def longrope_factors(rope: dict, n: int, positions_end: int) -> tuple:
    """The LongRoPE factors a table uses: long once positions pass the original length, as
    Hugging Face's forward switches; one per frequency."""
    original = rope["original_max_position_embeddings"]
    key = "long_factor" if positions_end > original else "short_factor"
    if key not in rope:  # the other list changes nothing in this table
        reach = "past" if key == "long_factor" else "up to"
        raise BadInput(
            f"rope_type longrope needs {key}: the positions run {reach} "
            f"original_max_position_embeddings = {original}"
        )
    chosen = rope[key]
    if len(chosen) != n:
        raise BadInput(
            f"longrope factors must have rotary dim / 2 = {n} entries, got {len(chosen)}"
        )
    return chosen


@lru_cache(maxsize=4)
def line_ids(spec):
    """A 1-D table's positions where --ids lists them (int64; OmniGen's rows at 0 where its batch
    pads the prompt, then 0 .. N), else None: --offset onwards. Kept per spec: every block of
    rows asks."""
    if spec.axes or spec.ids is None:
        return None
    return ids_tokens(spec.ids, 1)[0][:, 0]


def line_positions(spec, start: int = 0, stop: int | None = None):
    """A 1-D table's positions of rows start .. stop (int64): --ids's, else --offset onwards."""
    import numpy as np

    ids = line_ids(spec)
    if ids is not None:
        return ids[start:stop]
    return np.arange(
        spec.offset + start, spec.offset + (spec.seq_len if stop is None else stop), dtype=np.int64
    )


def positions_end(spec) -> int:
    """One past a table's largest position (dynamic NTK and LongRoPE depend on it)."""
    ids = line_ids(spec)
    if ids is not None:
        return int(ids.max()) + 1
    if spec.axes and (spec.grid is not None or spec.ids is not None or AXES[spec.axes].split):
        return int(axes_positions(spec).max()) + 1
    return spec.last_position + 1


def rope_frequencies(
    d_model: int, base: float, rope: dict, positions_end: int
) -> tuple[list[Decimal], Decimal]:
    """The exact w_i and attention factor of a rope_type, for a table whose positions run up to
    positions_end - 1 (dynamic NTK and LongRoPE depend on it, as in Hugging Face's forward)."""
    dim = rotary_dim(d_model, rope)
    with context():
        n = frequency_count(d_model, rope)
        kind = rope.get("rope_type", "default")
        theta = Decimal(base) * Decimal(
            rope.get("ntk_factor", 1.0)
        )  # diffusers' NTK: theta times it
        one = Decimal(1)

        def power_law(b: Decimal) -> list[Decimal]:
            log_b = b.ln()
            return [(-(Decimal(2 * i) / dim) * log_b).exp() for i in range(n)]

        factor = Decimal(rope["factor"]) if "factor" in rope else None
        attention = one
        if kind in ("default", "axial"):  # axial: the default law, over each position axis
            return power_law(theta), attention
        if kind == "proportional":
            rotated = rotated_count(d_model, rope)
            factor = factor or one
            return [
                w / factor if i < rotated else Decimal(0) for i, w in enumerate(power_law(theta))
            ], attention
        if kind == "linear":
            return [w / factor for w in power_law(theta)], attention
        if kind == "dynamic":
            limit = rope["max_position_embeddings"]
            length = Decimal(max(positions_end, limit))
            grown = factor * length / limit - (factor - 1)
            return power_law(
                theta * (grown.ln() * Decimal(dim) / Decimal(dim - 2)).exp()
            ), attention
        original = rope["original_max_position_embeddings"]
        if kind == "yarn":
            two_pi = 2 * PI

            def correction_dim(rotations: Decimal) -> Decimal:
                return dim * (Decimal(original) / (rotations * two_pi)).ln() / (2 * theta.ln())

            low = correction_dim(Decimal(rope.get("beta_fast") or 32))
            high = correction_dim(Decimal(rope.get("beta_slow") or 1))
            if rope.get("truncate", True):
                low, high = Decimal(math.floor(low)), Decimal(math.ceil(high))
            low, high = max(low, Decimal(0)), min(high, Decimal(dim - 1))
            if low == high:
                high += Decimal("0.001")
            frequencies = []
            for i, w in enumerate(power_law(theta)):
                ramp = min(max((i - low) / (high - low), Decimal(0)), one)
                frequencies.append(w * (one - ramp) + w / factor * ramp)
            if "attention_factor" in rope:
                attention = Decimal(rope["attention_factor"])
            else:
                mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")

                def get_mscale(scale: Decimal, m) -> Decimal:
                    return one if scale <= 1 else Decimal("0.1") * Decimal(m) * scale.ln() + 1

                if mscale and all_dim:
                    attention = get_mscale(factor, mscale) / get_mscale(factor, all_dim)
                else:
                    attention = get_mscale(factor, 1)
            return frequencies, attention
        if kind == "longrope":
            if factor is None:
                factor = Decimal(rope["max_position_embeddings"]) / original
            chosen = longrope_factors(rope, n, positions_end)
            frequencies = [w / Decimal(f) for w, f in zip(power_law(theta), chosen)]
            if "attention_factor" in rope:
                attention = Decimal(rope["attention_factor"])
            elif factor > 1:
                attention = (one + factor.ln() / Decimal(original).ln()).sqrt()
            return frequencies, attention
        # llama3: long wavelengths divided by factor, short ones kept, a smooth blend between
        low_factor, high_factor = (
            Decimal(rope["low_freq_factor"]),
            Decimal(rope["high_freq_factor"]),
        )
        low_wavelength, high_wavelength = original / low_factor, original / high_factor
        frequencies = []
        for w in power_law(theta):
            wavelength = 2 * PI / w
            if wavelength > low_wavelength:
                frequencies.append(w / factor)
            elif wavelength < high_wavelength:
                frequencies.append(w)
            else:
                smooth = (original / wavelength - low_factor) / (high_factor - low_factor)
                frequencies.append((1 - smooth) * w / factor + smooth * w)
        return frequencies, attention


# ---------------------------------------------------------------------------------------------
# The layout: which two columns hold frequency i


def _pairs(n: int, convention: str) -> tuple[slice, slice]:
    """The first and second column of each frequency in a part of 2n columns."""
    if convention == "half":
        return slice(0, n), slice(n, 2 * n)
    if convention == "single":
        return slice(0, n), slice(0, n)
    return slice(0, 2 * n, 2), slice(1, 2 * n, 2)


def _lay_out(plane, convention: str):
    """A (rows, n) plane, numpy or torch, as the part's (rows, 2n) columns."""
    import numpy as np

    rows, n = plane.shape
    if convention == "single":
        return plane
    if isinstance(plane, np.ndarray):
        out = np.empty((rows, 2 * n), dtype=plane.dtype)
    else:
        out = plane.new_empty((rows, 2 * n))
    for columns in _pairs(n, convention):
        out[:, columns] = plane
    return out


def _rotation(cos, sin):
    """Interleaved cos and sin planes, numpy or torch, as each pair's 2x2 rotation
    [[cos, -sin], [sin, cos]] flattened row-major: columns 2c and 2c + 1 hold column c's
    (HiDream, Kandinsky 5, FLUX's original EmbedND)."""
    pieces = (cos[:, 0::2], -sin[:, 0::2], sin[:, 1::2], cos[:, 1::2])
    if hasattr(cos, "numpy"):
        import torch

        return torch.stack(pieces, dim=-1).reshape(len(cos), -1)
    import numpy as np

    return np.stack(pieces, axis=-1).reshape(len(cos), -1)


def _part(part: str, cos, sin, angle):
    """The part asked for, of planes made when called."""
    if part == "rotation":
        return _rotation(cos(), sin())
    return {"cos": cos, "sin": sin, "angle": angle}[part]()


def _both_parts(compute):
    """A variant that builds cos or sin, made to build the rotation part from both."""

    def run(spec, device):
        if spec.part != "rotation":
            return compute(spec, device)
        return _rotation(
            compute(spec.replace(part="cos"), device), compute(spec.replace(part="sin"), device)
        )

    return run


# ---------------------------------------------------------------------------------------------
# Several position axes: M-RoPE's (t, h, w) of image and video tokens, and the (row, column)
# of a vision encoder's patches. Each column of such a table takes one axis and one
# frequency; a model's recomposition of its frequencies is one entry of AXES, which says
# which, from the head dim and mrope_section.


@dataclass(frozen=True)
class Axes:
    name: str
    summary: str
    axes: tuple[str, ...]  # the position axes, in the order of a grid's dimensions
    dim: (
        Callable | None
    )  # (head dim, rope parameters) -> the dim of the power law (arange(0, dim, 2))
    columns: Callable | None  # (frequencies, sections) -> ((axis, frequency) of each column); split
    #                           layouts: (laws, convention) -> the same, frequency j counting through the laws
    convention: str | None = "half"  # how the columns pair up when rotated (None: --convention's)
    merged: bool = False  # patches come in spatial-merge blocks (the model's token order)
    whole: bool = True  # mrope_section splits all the frequencies (else it bounds where h, w reach)
    # split layouts (diffusers): each axis its own power law over its axes_dim share, blocks side
    # by side; `place` gives each grid axis's positions, `text` the text tokens before the grid
    place: Callable | None = None  # (spec, axis, size) -> (integer numerators, denominator)
    floats: Callable | None = (
        None  # (spec, axis, size) -> the float32 positions diffusers computes there
    )
    text: Callable | None = (
        None  # (spec, text tokens, axes) -> their integer positions (tokens, axes)
    )
    origin: Callable | None = None  # (spec) -> where the axes a grid leaves out are (default 0)
    trailing: int = 0  # last axes a grid never covers (at 0 on image tokens: FLUX.2's text axis)
    divisors: tuple[
        float, ...
    ] = ()  # each axis's positions divided by this (Allegro's interpolation scales)
    angles32: bool = (
        False  # diffusers' arithmetic rounds the angles to float32 before torch.polar (Z-Image)
    )
    # an axis's frequencies when they are not theta**(-2i/dim) (LTX-Video): exactly, (spec, axis,
    # dim, theta) -> [Decimal], and in diffusers' arithmetic, (torch, spec, axis, dim, theta) -> tensor
    law: Callable | None = None
    torch_law: Callable | None = None
    text_after: bool = False  # text tokens follow the grid (HiDream), rather than lead
    # (spec, each axis's denominator) -> the tokens after the grid (Cosmos 3's sound and action):
    # (their integer positions over the denominators, the float32 ones diffusers computes)
    tail: Callable | None = None
    # (spec, the table's rows, read_at(rows) -> their positions) -> rope settings the tokens after
    # a grid may have been made with (tail's), with how many tokens each takes
    read_tail: Callable | None = None
    angle_scale: bool = (
        False  # --rope axes_scale divides diffusers' float32 angles, not positions (Kandinsky 5)
    )
    once: bool = (
        False  # --convention single takes each column pair's angle once (LTX-2's rope_type "split")
    )
    law_dtypes: tuple[str, ...] = (
        "float32",
    )  # the --freqs-dtype its torch_law takes (LTX-2's double_precision)

    @property
    def vision(self) -> bool:
        return "row" in self.axes

    @property
    def split(self) -> bool:
        return self.place is not None

    def split_columns(self, laws, convention: str) -> list[tuple[int, int]]:
        return (self.columns or _split_columns)(laws, convention)


def _sections(n: int, sections, whole: bool) -> list[int]:
    if not sections:
        raise BadInput(
            "M-RoPE needs mrope_section (--rope mrope_section=16,24,24; a --rope-config "
            "gives the model's own)"
        )
    sections = [int(s) for s in sections]
    if whole and sum(sections) != n:
        raise BadInput(f"mrope_section {sections} must add up to the {n} frequencies")
    return sections


def _contiguous(n, sections):  # frequency j takes the axis of the section holding it
    return [a for a, size in enumerate(sections) for _ in range(size)]


def _qwen3(n, sections):  # Qwen3-VL: h and w interleave with t, each up to 3 * its section
    return [
        1 if j % 3 == 1 and j < 3 * sections[1] else 2 if j % 3 == 2 and j < 3 * sections[2] else 0
        for j in range(n)
    ]


def _ernie(n, sections):  # ERNIE 4.5 VL: h, w alternate over the first s0 + s1, then t
    hw = sections[0] + sections[1]
    return [(1 if j % 2 == 0 else 2) if j < hw else 0 for j in range(n)]


def _doubled(axis_of):  # cat((a, a)) of one column per frequency
    return lambda n, sections: [(axis, j) for axis, j in zip(axis_of(n, sections), range(n))] * 2


def _repeated(axis_of):  # repeat_interleave(2) of one column per frequency
    return lambda n, sections: [
        (axis, j) for axis, j in zip(axis_of(n, sections), range(n)) for _ in (0, 1)
    ]


def _hunyuan(
    n, sections
):  # HunYuan-VL: cat((f, f)) cut into chunks of 2 * s_i, chunk i on axis i % len
    axis = [i % len(sections) for i, size in enumerate(sections) for _ in range(2 * size)]
    return [(axis[c], c % n) for c in range(2 * n)]


def _each_axis(*order):  # every frequency on each axis in turn, then doubled: cat((f0, f1, f0, f1))
    return lambda n, sections: [(axis, j) for axis in order for j in range(n)] * 2


def _each_axis_repeated(*order):  # cat((f0, f1)).repeat_interleave(2)
    return lambda n, sections: [(axis, j) for axis in order for j in range(n) for _ in (0, 1)]


def _firsts(laws) -> list[int]:
    """Each law's first frequency j (j counting through the laws' frequencies in order)."""
    return [sum(dim // 2 for dim, _ in laws[:a]) for a in range(len(laws))]


def _split_columns(laws, convention: str, order=None) -> list[tuple[int, int]]:
    """Each axis's block (in `order`, default axis order) of its frequencies, paired within the
    block by the convention."""
    firsts = _firsts(laws)
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


def _doubled_row(
    laws, convention
):  # CogView4, Cosmos: every axis's frequencies once, the row doubled
    return _split_columns(laws, "single") * 2


def _counting(spec, axis: int, size: int):
    """Positions 0 .. size-1 (diffusers' arange, or a pipeline's integer ids)."""
    import numpy as np

    return np.arange(size, dtype=np.int64), 1


def _floor_of_256(spec, axis: int, size: int):
    """CogView4: patch i of an axis of G at floor(i * 256 / G), its rope_axes_dim (256, 256)."""
    import numpy as np

    return np.arange(size, dtype=np.int64) * 256 // size, 1


def _crop(spec, base: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (start, stop) of rows and of columns: the grid's aspect ratio fitted into the base
    grid (rows, columns) the model was trained at, centred (diffusers' pipelines'
    get_resize_crop_region_for_grid, in Python floats as they compute it)."""
    rows, cols = _rows_columns(spec)
    th, tw = base
    if rows / cols > th / tw:
        height, width = th, int(round(th / rows * cols))
    else:
        height, width = int(round(tw / cols * rows)), tw
    top, left = int(round((th - height) / 2.0)), int(round((tw - width) / 2.0))
    return (top, top + height), (left, left + width)


def _cropped(base):
    """Positions of the grid's last two axes: linspace(start, stop (G - 1)/G, G) over the crop
    region, exactly (CogVideoX 1.0, HunyuanDiT); earlier axes count 0, 1, ..."""
    from fractions import Fraction

    def place(spec, axis: int, size: int):
        import numpy as np

        lead = len(split_laws(spec)) - 2
        if axis < lead:
            return _counting(spec, axis, size)
        start, stop = _crop(spec, base)[axis - lead]
        end = Fraction(stop * (size - 1), size)
        step = (end - start) / (size - 1) if size > 1 else Fraction(0)
        q = step.denominator
        return np.array([int((start + k * step) * q) for k in range(size)], dtype=np.int64), q

    return place


def _cropped_floats(base):
    def floats(spec, axis: int, size: int):  # the pipeline's float32 torch.linspace
        import torch

        lead = len(split_laws(spec)) - 2
        start, stop = (0, size) if axis < lead else _crop(spec, base)[axis - lead]
        return torch.linspace(start, stop * (size - 1) / size, size, dtype=torch.float32).numpy()

    return floats


def _rows_columns(spec) -> tuple[int, int]:
    """The grid's rows and columns, for the layouts whose positions depend on both."""
    shape = grid_shape(spec)
    if len(shape) < 2:
        raise BadInput(
            f"--rope-axes {spec.axes} places patches by rows and columns: --grid needs both (HxW)"
        )
    return shape[-2], shape[-1]


def _centred(spec, axis: int, size: int):
    """QwenImage's scale_rope: patch k of G at k - ceil(G/2) (its rows and columns; frames count)."""
    import numpy as np

    if axis == 0:
        return _counting(spec, axis, size)
    return np.arange(size, dtype=np.int64) - (size - size // 2), 1


def _divided_floats(spec, axis: int, size: int):
    """Allegro's float32 positions: linspace(0, G (G - 1)/G, G) divided by its interpolation scale."""
    import torch

    divisor = divisors(spec)[axis]
    return (
        torch.linspace(0, size * (size - 1) / size, size, dtype=torch.float32) / divisor
    ).numpy()


def _after_text(spec, axis: int, size: int):
    """Z-Image: frames after the caption (N + 1 + f for N caption tokens), rows and columns count."""
    numbers, q = _counting(spec, axis, size)
    return (numbers + spec.text_tokens + 1 if axis == 0 else numbers), q


def _cosmos_place(spec, axis: int, size: int):
    """Cosmos: a video's frame k at k * 24 / fps (its base_fps), exactly; rows, columns and an
    image's frames count."""
    from fractions import Fraction

    import numpy as np

    fps = dict(spec.rope).get("fps")
    if axis or fps is None:
        return _counting(spec, axis, size)
    step = Fraction(24) / Fraction(fps)
    return np.arange(size, dtype=np.int64) * step.numerator, step.denominator


def _cosmos_floats(spec, axis: int, size: int):  # its float32 seq / fps * base_fps
    import torch

    fps = dict(spec.rope).get("fps")
    positions = torch.arange(size, dtype=torch.float32)
    return (positions if axis or fps is None else positions / fps * 24).numpy()


_COSMOS3_MARGIN = 15000  # Cosmos 3's unified_3d_mrope_temporal_modality_margin: the vision tokens' frames past the text
_COSMOS3_SOUND_FPS = 25.0  # its transformer config's sound_latent_fps


def _cosmos3_segments(spec) -> list[tuple]:
    """Cosmos 3's runs of tokens on the time axis after its text: the video's frames, then its
    sound and action tokens, each (tokens, frame rate or None, first index, temporal
    compression, base compression). With --rope fps (its fps modulation, on more than one
    token) token k sits at (k + first) / (rate / compression) * (24 / base), else at k + first."""
    rope = dict(spec.rope)
    fps, shape = rope.get("fps"), grid_shape(spec)
    found = [(shape[0] if len(shape) == 3 else 1, fps, 0, 4, 4)]
    if rope.get("sound_tokens"):
        found.append(
            (
                rope["sound_tokens"],
                rope.get("sound_fps", _COSMOS3_SOUND_FPS) if fps else None,
                0,
                1,
                1,
            )
        )
    if rope.get("action_tokens"):
        found.append((rope["action_tokens"], fps, 1, 1, 4))
    return [(count, rate if count > 1 else None, *rest) for count, rate, *rest in found]


def _cosmos3_step(segment):
    """A run's step per token, exactly: 24 * compression / (rate * base), or 1."""
    from fractions import Fraction

    _, rate, _, compression, base = segment
    return Fraction(1) if rate is None else Fraction(24 * compression) / (Fraction(rate) * base)


def _cosmos3_place(spec, axis: int, size: int):
    """Cosmos 3's vision tokens: frame k at L + 15000 + k (L text tokens, then its modality
    margin), or with --rope fps a video's at L + 15000 + k * 24 / fps (its fps modulation),
    exactly, over the denominator its sound and action tokens share; rows and columns count
    from 0 (its reset spatial ids)."""
    import numpy as np

    if axis:
        return _counting(spec, axis, size)
    segments = _cosmos3_segments(spec)
    denominator = math.lcm(*(_cosmos3_step(segment).denominator for segment in segments))
    start = (spec.text_tokens + _COSMOS3_MARGIN) * denominator
    last = max(
        start + _cosmos3_step(segment) * denominator * (segment[0] - 1 + segment[2])
        for segment in segments
    )
    if last > MAX_POSITION:
        raise BadInput(
            f"--preset cosmos3: its times at these frame rates are fractions too fine for exact positions "
            f"(over their denominator {denominator} they pass 2^32)"
        )
    return np.arange(size, dtype=np.int64) * int(
        _cosmos3_step(segments[0]) * denominator
    ) + start, denominator


def _cosmos3_times(
    spec, segment
):  # its float32 (k + first) / (rate / compression) * (24 / base) + offset
    import torch

    count, rate, first, compression, base = segment
    k = torch.arange(count, dtype=torch.float32)
    offset = spec.text_tokens + _COSMOS3_MARGIN
    if rate is None:
        return (k + (offset + first)).numpy()
    return ((k + first) / (rate / compression) * (24.0 / base) + offset).numpy()


def _cosmos3_floats(spec, axis: int, size: int):
    import numpy as np

    return (
        np.arange(size, dtype=np.float32)
        if axis
        else _cosmos3_times(spec, _cosmos3_segments(spec)[0])
    )


def _cosmos3_tail(spec, denominators):
    """Cosmos 3's sound and action tokens, at (t, 0, 0): (integer positions over each axis's
    denominator, the float32 ones its pipeline computes)."""
    import numpy as np

    numerators, floats = [np.zeros((0, 3), np.int64)], [np.zeros((0, 3), np.float32)]
    offset = spec.text_tokens + _COSMOS3_MARGIN
    for segment in _cosmos3_segments(spec)[1:]:
        count, step, first = segment[0], _cosmos3_step(segment), segment[2]
        times = np.array(
            [int((offset + step * (k + first)) * denominators[0]) for k in range(count)], np.int64
        )
        numerators.append(np.stack([times, *[np.zeros(count, np.int64)] * 2], axis=1))
        floats.append(
            np.stack([_cosmos3_times(spec, segment), *[np.zeros(count, np.float32)] * 2], axis=1)
        )
    return np.concatenate(numerators), np.concatenate(floats)


def _cosmos3_read_tail(spec, length: int, read_at) -> list[tuple[dict, int]]:
    """Cosmos 3's sound and action tokens a table may end with: its last rows at (t, 0, 0),
    cut where t falls back (each run starts at the video's first frame's time); two runs are
    sound then action, one either (or one sound token then actions). A sound run's rate is
    read from its step (with --rope fps)."""
    import numpy as np

    rows = list(range(max(0, length - _TAIL), length))
    found = np.asarray(read_at(rows))
    if not len(found):
        return []
    at_zero = np.all(np.abs(found[:, 1:]) < _CLOSE, axis=1)[::-1]
    count = int(np.argmin(at_zero)) if not at_zero.all() else len(at_zero)
    times = found[len(found) - count :, 0]
    cuts = np.flatnonzero(np.diff(times) < -_CLOSE) + 1
    runs = [len(run) for run in np.split(times, cuts)] if count else []
    sound_fps = {}
    if runs and runs[0] > 1 and "fps" in dict(spec.rope) and times[1] - times[0] > _CLOSE:
        sound_fps = {"sound_fps": float(f"{24 / (times[1] - times[0]):.3g}")}
    if len(runs) == 2:
        return [({"sound_tokens": runs[0], "action_tokens": runs[1], **sound_fps}, count)]
    if len(runs) != 1:
        return []
    # one run: sound, actions, or one sound token then actions (which a step of 1 also reads as):
    # sound first where its rate is its config's
    whole, others = {"sound_tokens": count, **sound_fps}, [{"action_tokens": count}]
    if count > 1:
        others.append({"sound_tokens": 1, "action_tokens": count - 1})
    usual = sound_fps.get("sound_fps", _COSMOS3_SOUND_FPS) == _COSMOS3_SOUND_FPS
    return [(rope, count) for rope in ([whole, *others] if usual else [*others, whole])]


def _interleaved_axes(laws):
    """Qwen3-VL's interleaved M-RoPE over split axes of sections axes_dim / 2: frequency i of the
    one power law over the whole head dim on axis _qwen3's."""
    sections = [dim // 2 for dim, _ in laws]
    return _qwen3(sum(sections), sections)


def _interleaved_law(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    laws = split_laws(spec)
    every = rope_frequencies(sum(d for d, _ in laws), theta, {}, 0)[0]
    return [w for w, a in zip(every, _interleaved_axes(laws)) if a == axis]


def _interleaved_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # Cosmos3VLTextRotaryEmbedding: float32 1 / theta**(arange(0, head dim, 2) / head dim), each axis its own
    laws = split_laws(spec)
    head = sum(d for d, _ in laws)
    inv_freq = 1.0 / (theta ** (torch.arange(0, head, 2, dtype=torch.float32) / head))
    return inv_freq[torch.tensor([a == axis for a in _interleaved_axes(laws)])]


def _interleaved_columns(laws, convention):
    """Column i takes frequency i on its axis (frequency j counting through the axes' own
    lists), doubled: cat((freqs, freqs))."""
    firsts = _firsts(laws)
    seen = [0] * len(laws)
    columns = []
    for axis in _interleaved_axes(laws):
        columns.append((axis, firsts[axis] + seen[axis]))
        seen[axis] += 1
    return columns * 2


def _ltx_ratio(spec, axis: int):
    """LTX-Video's scale of patch k on an axis (patch size 1): frames k * (8/fps) / 20 (its VAE's
    temporal compression over the frame rate, over base_num_frames), rows and columns k * 32 /
    2048 (spatial compression over base_height and base_width)."""
    from fractions import Fraction

    if axis == 0:
        return Fraction(8) / Fraction(dict(spec.rope).get("fps", 25.0)) / 20
    return Fraction(32, 2048)


def _ltx_place(spec, axis: int, size: int):
    """LTX-Video's positions 2p - 1 (in [-1, 1)) of p = k * ratio, exactly."""
    import numpy as np

    twice = 2 * _ltx_ratio(spec, axis)
    q = twice.denominator
    return np.arange(size, dtype=np.int64) * twice.numerator - q, q


def _ltx_floats(spec, axis: int, size: int):  # its float32 grid * scale * patch / base, then 2p - 1
    import torch

    grid = torch.arange(size, dtype=torch.float32)
    if axis == 0:
        grid = grid * (8 / dict(spec.rope).get("fps", 25.0)) * 1 / 20
    else:
        grid = grid * 32 * 1 / 2048
    return (grid * 2 - 1).numpy()


def _ltx_count(spec) -> int:
    """LTX's frequencies per axis: n = d_model // (2 * axes) (682 for LTX-2's video, 1024 for
    its audio and its cross-attention's frames, whose rows and columns take no columns: axes_dim
    0); the d_model % (2 * axes) columns left are padding."""
    return spec.d_model // (2 * sum(1 for dim, _ in split_laws(spec) if dim))


def _ltx_law(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    """(pi/2) * theta**(j/(n-1)), n = _ltx_count, on every axis; the first axis's block also
    holds the padding columns (frequency 0: cos 1, sin 0)."""
    n = _ltx_count(spec)
    if not dim:
        return []
    with context():
        log_theta = Decimal(theta).ln()
        law = [PI / 2 * (log_theta * j / (n - 1)).exp() for j in range(n)]
    return [Decimal(0)] * (dim // 2 - n) + law


def _ltx_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # LTXVideoRotaryPosEmbed: theta ** linspace(log_theta(1), log_theta(theta), n) in float32,
    # times pi, over 2; zeros for the padding
    n = _ltx_count(spec)
    if not dim:
        return torch.zeros(0)
    freqs = theta ** torch.linspace(
        math.log(1.0, theta), math.log(theta, theta), n, dtype=torch.float32
    )
    freqs = freqs * math.pi / 2.0
    return torch.cat([torch.zeros(dim // 2 - n), freqs])


def _ltx2_place(spec, axis: int, size: int):
    """LTX-2's positions 2p - 1, exactly, of p = each patch's midpoint in pixels over its base:
    frames over the causal VAE's [max(8k - 7, 0), 8k + 1), in seconds at --rope fps (24), over
    20; rows and columns over [32k, 32k + 32), over 2048."""
    from fractions import Fraction

    import numpy as np

    if axis == 0:
        fps = Fraction(dict(spec.rope).get("fps", 24.0))
        middles = [Fraction(max(8 * k - 7, 0) + 8 * k + 1, 2) / fps / 20 for k in range(size)]
    else:
        middles = [Fraction(32 * k + 16, 2048) for k in range(size)]
    values = [2 * m - 1 for m in middles]
    q = math.lcm(*(v.denominator for v in values))
    return np.array([int(v * q) for v in values], dtype=np.int64), q


def _ltx2_floats(
    spec, axis: int, size: int
):  # its float32 pixel bounds, seconds, midpoints, 2p - 1
    import torch

    k = torch.arange(size, dtype=torch.float32)
    if axis == 0:
        fps = dict(spec.rope).get("fps", 24.0)
        start, end, base = (
            (k * 8 + 1 - 8).clamp(min=0) / fps,
            ((k + 1) * 8 + 1 - 8).clamp(min=0) / fps,
            20,
        )
    else:
        start, end, base = k * 32, (k + 1) * 32, 2048
    return ((start + end) / 2.0 / base * 2 - 1).numpy()


def _ltx2_audio_place(spec, axis: int, size: int):
    """LTX-2's audio: 2p - 1, exactly, of each latent frame's midpoint in seconds over 20: its
    mel frames [max(4k - 3, 0), 4k + 1) at 160 / 16000 s each (hop length over sampling rate)."""
    from fractions import Fraction

    import numpy as np

    values = [
        2 * (Fraction(max(4 * k - 3, 0) + 4 * k + 1, 2) * Fraction(160, 16000) / 20) - 1
        for k in range(size)
    ]
    q = math.lcm(*(v.denominator for v in values))
    return np.array([int(v * q) for v in values], dtype=np.int64), q


def _ltx2_audio_floats(
    spec, axis: int, size: int
):  # its float32 mel frames, seconds, midpoints, 2p - 1
    import torch

    k = torch.arange(size, dtype=torch.float32)
    start = (k * 4 + 1 - 4).clip(min=0) * 160 / 16000
    end = ((k + 1) * 4 + 1 - 4).clip(min=0) * 160 / 16000
    return ((start + end) / 2.0 / 20 * 2 - 1).numpy()


def _ltx2_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # LTX2AudioVideoRotaryPosEmbed: theta ** linspace(0, 1, n) and pi/2 in float64 (its default
    # double_precision; --freqs-dtype float32 without it), then float32; zeros for the padding
    n = _ltx_count(spec)
    if not dim:
        return torch.zeros(0)
    dtype = getattr(torch, spec.freqs_dtype or "float64")
    freqs = (theta ** torch.linspace(0.0, 1.0, n, dtype=dtype) * math.pi / 2.0).float()
    return torch.cat([torch.zeros(dim // 2 - n), freqs])


def _ltx_columns(laws, convention):
    """The padding columns first, then per frequency each axis's angle, twice: [t0 t0 h0 h0 w0
    w0 t1 ...] (one axis: [t0 t0 t1 t1 ...]); once each with --convention single (LTX-2's
    rope_type "split": [t0 h0 w0 t1 ...], which its module cuts into heads)."""
    turning = [axis for axis, (dim, _) in enumerate(laws) if dim]  # axes with columns
    n = sum(dim for dim, _ in laws) // (2 * len(turning))
    pad = laws[0][0] // 2 - n
    # axis a's frequencies start past the earlier axes' (the first axis's, past its padding)
    firsts = [
        sum(dim for dim, _ in laws[:axis]) // 2 + (pad if axis == 0 else 0)
        for axis in range(len(laws))
    ]
    times = range(1 if convention == "single" else 2)
    padding = [(0, z) for z in range(pad) for _ in times]
    return padding + [(axis, firsts[axis] + j) for j in range(n) for axis in turning for _ in times]


def _kandinsky_law(torch, spec, axis: int, dim: int, theta: float):
    # Kandinsky 5's get_freqs: exp(-ln(theta) * arange(n) / n) in float32, n = dim / 2 (the
    # power law theta**(-2i/dim), computed another way); Kandinsky 6's audio: times freqs_scaling
    n = dim // 2
    freqs = torch.exp(-math.log(theta) * torch.arange(n, dtype=torch.float32) / n)
    scale = dict(spec.rope).get("freqs_scaling")
    return freqs if scale is None else freqs * scale


def _text_at_zero(spec, count: int, axes: int):  # FLUX: txt_ids = zeros
    import numpy as np

    return np.zeros((count, axes), dtype=np.int64)


def _text_on(*on: int, first: int = 0):
    """Text token k at first + k on these axes, 0 on the others (FLUX.2: (0, 0, 0, l); Lumina2:
    (k, 0, 0); Z-Image: (1 + k, 0, 0); Ovis-Image, LongCat-Image: (0, k, k))."""

    def text(spec, count: int, axes: int):
        import numpy as np

        ids = np.zeros((count, axes), dtype=np.int64)
        ids[:, list(on)] = first + np.arange(count)[:, None]
        return ids

    return text


def _halved(spec, axis: int, size: int):
    """FLUX.3: rows and columns at k / 2 (its image_rope_scale 0.5); frames count."""
    numbers, _ = _counting(spec, axis, size)
    return numbers, (1 if axis == 0 else 2)


def _after_512(spec, axis: int, size: int):
    """LongCat-Image: rows and columns from 512 (its tokenizer_max_length) on, past the text's."""
    numbers, q = _counting(spec, axis, size)
    return (numbers + 512 if axis else numbers), q


def _text_after_image(spec, count: int, axes: int):
    """QwenImage: text token k at max(H//2, W//2) + k on every axis."""
    import numpy as np

    rows, cols = _rows_columns(spec)
    return np.repeat(
        (max(rows // 2, cols // 2) + np.arange(count, dtype=np.int64))[:, None], axes, axis=1
    )


def _alternating(laws, convention):  # Lumina-Next: h and w alternate per frequency, one column each
    n = laws[0][0] // 2
    return [(axis, axis * n + j) for j in range(n) for axis in (0, 1)]


_MROPE = dict(axes=("t", "h", "w"), dim=lambda d, rope: rotary_dim(d, rope))
_AXIAL = dict(axes=("row", "column"), dim=lambda d, rope: d // 2)
AXES = {
    a.name: a
    for a in (
        Axes(
            "mrope",
            "Qwen2-VL's M-RoPE: contiguous t | h | w sections of the frequencies, doubled",
            columns=_doubled(_contiguous),
            **_MROPE,
        ),
        Axes(
            "mrope-glm",
            "GLM-4V's M-RoPE: contiguous sections, each frequency in two adjacent columns",
            columns=_repeated(_contiguous),
            convention="interleaved",
            **_MROPE,
        ),
        Axes(
            "mrope-interleaved",
            "Qwen3-VL's interleaved M-RoPE: t h w t h w ..., doubled",
            columns=_doubled(_qwen3),
            whole=False,
            **_MROPE,
        ),
        Axes(
            "mrope-ernie",
            "ERNIE 4.5 VL: h and w alternating, then t, each in two adjacent columns",
            columns=_repeated(_ernie),
            convention="interleaved",
            **_MROPE,
        ),
        Axes(
            "mrope-hunyuan",
            "HunYuan-VL: the doubled frequencies cut into one chunk per section",
            columns=_hunyuan,
            **_MROPE,
        ),
        Axes(
            "axial",
            "Qwen-VL vision encoders: rows then columns, doubled, patches in merge blocks",
            columns=_each_axis(0, 1),
            merged=True,
            **_AXIAL,
        ),
        Axes(
            "axial-column-first",
            "Step 3 vision: columns then rows, doubled",
            columns=_each_axis(1, 0),
            **_AXIAL,
        ),
        Axes(
            "axial-sam",
            "SAM 2, SAM 3, EdgeTAM: columns then rows, each frequency in two adjacent columns",
            columns=_each_axis_repeated(1, 0),
            convention="interleaved",
            **_AXIAL,
        ),
        Axes(
            "axial-kimi",
            "Kimi-K2.5 vision: column and row alternating per frequency, doubled",
            columns=lambda n, sections: [(axis, j) for j in range(n) for axis in (1, 0)] * 2,
            **_AXIAL,
        ),
        Axes(
            "axial-pixtral",
            "Pixtral: even frequencies on rows, odd on columns, doubled",
            axes=("row", "column"),
            dim=lambda d, rope: d,
            columns=lambda n, sections: (
                ([(0, j) for j in range(0, n, 2)] + [(1, j) for j in range(1, n, 2)]) * 2
            ),
        ),
        Axes(
            "axial-gemma",
            "Gemma 4 vision: columns doubled, then rows doubled (two rotated halves)",
            columns=lambda n, sections: (
                [(1, j) for j in range(n)] * 2 + [(0, j) for j in range(n)] * 2
            ),
            **_AXIAL,
        ),
        Axes(
            "axial-video",
            "MiniMax-M3-VL vision: frames, rows, columns on a third of the head each, doubled",
            axes=("t", "row", "column"),
            dim=lambda d, rope: 2 * ((d // 3) // 2),
            columns=_each_axis(0, 1, 2),
            merged=True,
        ),
        Axes(
            "split",
            "diffusers' multi-axis RoPE, each axis its own power law over its axes_dim columns",
            axes=("i", "t", "h", "w"),
            dim=None,
            columns=None,
            convention=None,
            place=_counting,
            text=_text_at_zero,
        ),
        Axes(
            "split-text-last",
            "FLUX.2's split axes (t, h, w, l), text token l at (0, 0, 0, l)",
            axes=("t", "h", "w", "l"),
            dim=None,
            columns=None,
            convention=None,
            place=_counting,
            text=_text_on(-1),
            trailing=1,
        ),
        Axes(
            "lumina-next",
            "Lumina-Next: complex, rows and columns alternating per frequency",
            axes=("h", "w"),
            dim=None,
            columns=_alternating,
            convention="single",
            place=_counting,
        ),
        Axes(
            "lumina2",
            "Lumina2: split axes, caption token k at (k, 0, 0), image patches at (captions, row, column)",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="single",
            place=_counting,
            text=_text_on(0),
            origin=lambda spec: spec.text_tokens,
        ),
        Axes(
            "qwenimage",
            "QwenImage: split axes, rows and columns centred (k - ceil(G/2)), text tokens after "
            "max(H/2, W/2) on every axis",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="single",
            place=_centred,
            text=_text_after_image,
        ),
        Axes(
            "allegro",
            "Allegro: split axes, each block doubled, positions k / 2.2 (frames), k / 2 (rows, columns)",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="half",
            place=_counting,
            floats=_divided_floats,
            divisors=(2.2, 2.0, 2.0),
        ),
        Axes(
            "z-image",
            "Z-Image: split axes, complex, caption token k at (1 + k, 0, 0), patches at "
            "(captions + 1 + frame, row, column); angles rounded to float32 before torch.polar",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="single",
            place=_after_text,
            text=_text_on(0, first=1),
            origin=lambda spec: spec.text_tokens + 1,
            angles32=True,
        ),
        Axes(
            "cosmos",
            "Cosmos: as split-doubled, a video's frames at k * 24/fps (--rope fps=F)",
            axes=("t", "h", "w"),
            dim=None,
            columns=_doubled_row,
            place=_cosmos_place,
            floats=_cosmos_floats,
        ),
        Axes(
            "ltx-video",
            "LTX-Video: (pi/2) theta^(j/(n-1)) over the whole inner dim, frames, rows and columns "
            "alternating per frequency, at 2p - 1 of p = k * 8/fps / 20 (frames), k * 32/2048 (rows, columns)",
            axes=("t", "h", "w"),
            dim=None,
            columns=_ltx_columns,
            convention="interleaved",
            place=_ltx_place,
            floats=_ltx_floats,
            law=_ltx_law,
            torch_law=_ltx_torch_law,
        ),
        Axes(
            "flux3",
            "FLUX.3's split axes (t, h, w, l): rows and columns at k / 2, text token l at (0, 0, 0, l)",
            axes=("t", "h", "w", "l"),
            dim=None,
            columns=None,
            convention=None,
            place=_halved,
            text=_text_on(-1),
            trailing=1,
        ),
        Axes(
            "ernie-image",
            "ERNIE-Image: split axes, the image's patches first at (N, row, column) for N text tokens, "
            "then text token k at (k, 0, 0)",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_counting,
            text=_text_on(0),
            origin=lambda spec: spec.text_tokens,
            text_after=True,
        ),
        Axes(
            "qwenimage-image-first",
            "NucleusMoE-Image: QwenImage's axes with the image's tokens first, then the text's",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="single",
            place=_centred,
            text=_text_after_image,
            text_after=True,
        ),
        Axes(
            "ovis-image",
            "Ovis-Image: split axes, text token k at (0, k, k), patches at (0, row, column)",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_counting,
            text=_text_on(1, 2),
        ),
        Axes(
            "longcat-image",
            "LongCat-Image: split axes, text token k at (0, k, k), patches at (1, 512 + row, "
            "512 + column)",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_after_512,
            text=_text_on(1, 2),
            origin=lambda spec: 1,
        ),
        Axes(
            "hidream",
            "HiDream-I1: split axes (0, row, column), the image's tokens first, then its text (and "
            "padding) tokens at 0",
            axes=("i", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_counting,
            text=_text_at_zero,
            text_after=True,
        ),
        Axes(
            "kandinsky5",
            "Kandinsky 5: split axes over frames, rows, columns, positions divided by --rope "
            "axes_scale (its scale_factor); diffusers divides the float32 angles",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_counting,
            torch_law=_kandinsky_law,
            angle_scale=True,
        ),
        Axes(
            "kandinsky5-text",
            "Kandinsky 5's text tokens: one axis of positions 0, 1, ...",
            axes=("i",),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_counting,
            torch_law=_kandinsky_law,
        ),
        Axes(
            "ltx2",
            "LTX-2's video: LTX-Video's columns and law (float64, then float32), at 2p - 1 of each patch's "
            "midpoint: frames over the causal VAE's [max(8k - 7, 0), 8k + 1) at fps (24) over 20, rows and columns "
            "(32k + 16) / 2048",
            axes=("t", "h", "w"),
            dim=None,
            columns=_ltx_columns,
            convention="interleaved",
            place=_ltx2_place,
            floats=_ltx2_floats,
            law=_ltx_law,
            torch_law=_ltx2_torch_law,
            once=True,
            law_dtypes=("float64", "float32"),
        ),
        Axes(
            "ltx2-audio",
            "LTX-2's audio: its law over one axis, at 2p - 1 of each latent frame's midpoint in seconds "
            "over 20 (mel frames [max(4k - 3, 0), 4k + 1), 160 / 16000 s each)",
            axes=("t",),
            dim=None,
            columns=_ltx_columns,
            convention="interleaved",
            place=_ltx2_audio_place,
            floats=_ltx2_audio_floats,
            law=_ltx_law,
            torch_law=_ltx2_torch_law,
            once=True,
            law_dtypes=("float64", "float32"),
        ),
        Axes(
            "cosmos3",
            "Cosmos 3: Qwen3-VL's interleaved M-RoPE over the whole head dim (axes_dim is twice its "
            "sections), text token k at (k, k, k), vision tokens at (L + 15000 + frame, row, column) (frames at "
            "k * 24/fps with --rope fps), then sound and action tokens at (L + 15000 + time, 0, 0)",
            axes=("t", "h", "w"),
            dim=None,
            columns=_interleaved_columns,
            convention="half",
            place=_cosmos3_place,
            floats=_cosmos3_floats,
            text=_text_on(0, 1, 2),
            law=_interleaved_law,
            torch_law=_interleaved_torch_law,
            tail=_cosmos3_tail,
            read_tail=_cosmos3_read_tail,
        ),
        Axes(
            "split-doubled",
            "split axes, every axis's frequencies once and the row doubled (GLM-Image, Cosmos)",
            axes=("t", "h", "w"),
            dim=None,
            columns=_doubled_row,
            place=_counting,
        ),
        Axes(
            "cogview4",
            "CogView4: rows and columns doubled as split-doubled, patch i of G at floor(i * 256/G)",
            axes=("h", "w"),
            dim=None,
            columns=_doubled_row,
            place=_floor_of_256,
        ),
        Axes(
            "cogvideox",
            "CogVideoX 1.0: split axes, rows and columns over the crop of the 30 x 45 base grid",
            axes=("t", "h", "w"),
            dim=None,
            columns=None,
            convention="interleaved",
            place=_cropped((30, 45)),
            floats=_cropped_floats((30, 45)),
        ),
        Axes(
            "hunyuan-dit",
            "HunyuanDiT: the column block first, rows and columns over the crop of a 32 x 32 base grid",
            axes=("h", "w"),
            dim=None,
            columns=lambda laws, convention: _split_columns(laws, convention, (1, 0)),
            convention="interleaved",
            place=_cropped((32, 32)),
            floats=_cropped_floats((32, 32)),
        ),
    )
}


def axes_plan(spec):
    """(the power laws, each (dim, theta), and the (axis, frequency) of each column) of a
    multi-axis table; frequency j counts through the laws' frequencies in order."""
    style = AXES[spec.axes]
    rope = dict(spec.rope)
    if style.split:
        laws = split_laws(spec)
        return laws, style.split_columns(laws, spec.convention)
    dim = style.dim(spec.d_model, rope)
    n = (dim + 1) // 2
    sections = _sections(n, rope.get("mrope_section"), style.whole) if not style.vision else ()
    return [(dim, spec.base)], style.columns(n, sections)


def axis_names(spec) -> tuple[str, ...]:
    style = AXES[spec.axes]
    return style.axes[len(style.axes) - len(split_laws(spec)) :] if style.split else style.axes


def grid_shape(spec) -> tuple[int, ...]:
    """The --grid of a multi-axis table, checked against its layout and merge size. A split
    layout's grid may leave out leading axes, which stay at position 0 (FLUX's image index)."""
    style = AXES[spec.axes]
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


def axes_positions(spec, start: int = 0, stop: int | None = None):
    """The (rows, axes) positions of the table's tokens: a grid's tokens in the model's order
    (t, h, w row-major, offset by --offset; patches row-major, in spatial-merge blocks for the
    encoders that merge), or text tokens, every axis at the same position. A split layout's are
    integers over each axis's denominator (`split_tokens`)."""
    import numpy as np

    style = AXES[spec.axes]
    stop = spec.rows if stop is None else stop
    if style.split:
        return split_tokens(spec)[0][start:stop]
    if spec.ids is not None:  # whole positions, each token's (Cosmos 3's M-RoPE ids)
        return ids_tokens(spec.ids, len(style.axes))[0][start:stop]
    if spec.grid is None:
        index = np.arange(start, stop, dtype=np.int64) + spec.offset
        return np.repeat(index[:, None], len(style.axes), axis=1)
    shape, m = grid_shape(spec), spec.merge
    grids = np.meshgrid(*[np.arange(size) for size in shape], indexing="ij")
    if style.vision and m > 1:  # per frame, (block row, block column, i, j) order
        rows, cols = shape[-2:]
        frames = shape[:-2]
        order = tuple(range(len(frames))) + tuple(len(frames) + k for k in (0, 2, 1, 3))
        grids = [g.reshape(*frames, rows // m, m, cols // m, m).transpose(order) for g in grids]
    positions = np.stack([g.reshape(-1) for g in grids], axis=1) + spec.offset
    return positions[start:stop]


# ---------------------------------------------------------------------------------------------
# Split layouts: diffusers' multi-axis RoPE. Axis a takes axes_dim[a] columns of its own power
# law theta_a**(-2i/axes_dim[a]), laid out by the convention within its block: interleaved
# (get_1d_rotary_pos_embed's repeat_interleave: FLUX, Wan, HunyuanVideo, CogVideoX), half (its
# cat: Allegro) or single (the complex tables of use_real=False: Lumina, QwenImage). Tokens
# are text tokens, then a grid's, row-major; or rows of an --ids file. Exact positions are
# integers over a denominator per axis, which moves into that axis's frequencies.


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


def _grid_tokens(spec, per_axis):
    """(tokens, axes) of a split layout's grid from each grid axis's positions: the leading
    axes the grid leaves out (and its trailing ones) at 0, tokens row-major."""
    import numpy as np

    style = AXES[spec.axes]
    k, shape = len(split_laws(spec)), grid_shape(spec)
    lead = k - style.trailing - len(shape)
    values = [per_axis(lead + a, size) for a, size in enumerate(shape)]
    index = [
        g.reshape(-1) for g in np.meshgrid(*[np.arange(size) for size in shape], indexing="ij")
    ]
    tokens = np.zeros((len(index[0]), k), dtype=values[0].dtype)
    if lead and style.origin is not None:
        tokens[:, :lead] = style.origin(spec)
    for a, (at, found) in enumerate(zip(index, values)):
        tokens[:, lead + a] = found[at]
    return tokens


@lru_cache(maxsize=4)
def split_tokens(spec):
    """(integer positions (tokens, axes), the denominator of each axis, the float32 positions
    diffusers holds (tokens, axes), computed when asked) of a split layout's table."""
    import numpy as np

    style = AXES[spec.axes]
    k = len(split_laws(spec))
    if spec.ids is not None:
        return ids_tokens(spec.ids, k)
    if spec.grid is None:
        raise BadInput(
            f"--rope-axes {spec.axes} needs its tokens: a --grid (and --text-tokens), or --ids FILE"
        )
    denominators = [1] * k

    def exact(axis, size):
        numbers, denominators[axis] = style.place(spec, axis, size)
        return numbers

    grid = _grid_tokens(spec, exact)
    tail, tail_floats = style.tail(spec, denominators) if style.tail else (grid[:0], grid[:0])

    def floats():  # the float32 positions diffusers holds
        found = (
            grid / np.array(denominators)
            if style.floats is None
            else _grid_tokens(spec, lambda axis, size: style.floats(spec, axis, size))
        )
        return np.concatenate(
            [*[text, found][:: -1 if style.text_after else 1], tail_floats]
        ).astype(np.float32)

    text = np.zeros((0, k), dtype=np.int64)
    if spec.text_tokens:
        if style.text is None:
            raise BadInput(
                f"--text-tokens: --rope-axes {spec.axes} gives text tokens no rotary positions"
            )
        text = style.text(spec, spec.text_tokens, k)
    numerators = np.concatenate(
        [*[text * np.array(denominators), grid][:: -1 if style.text_after else 1], tail]
    )
    if len(numerators) and np.abs(numerators).max() > MAX_POSITION:
        raise BadInput(
            f"--rope-axes {spec.axes}: its positions are fractions too fine for exact positions "
            f"(over their denominators {', '.join(map(str, denominators))} they pass 2^32)"
        )
    return numerators, tuple(denominators), floats


@lru_cache(maxsize=64)
def law_frequencies(spec) -> tuple[tuple[Decimal, ...], ...]:
    """A split layout's frequencies per unit of position: each axis's (its power law, or its
    layout's own law). Kept per spec: identification asks for them often."""
    style = AXES[spec.axes]
    rope = {k: v for k, v in spec.rope if k != "partial_rotary_factor"}
    scale = Decimal(repr(rope.get("freqs_scaling", 1.0)))
    with context():  # its own digits, whoever asks first
        return tuple(
            tuple(
                w * scale
                for w in (
                    style.law(spec, axis, dim, theta)
                    if style.law
                    else rope_frequencies(dim, theta, rope, 0)[0]
                )
            )
            for axis, (dim, theta) in enumerate(split_laws(spec))
        )


_LARGEST_POOL = 64  # tokens along one axis of a pooling block


@lru_cache(maxsize=4)
def pool_blocks(spec):
    """A pooled table's blocks (--rope pool): for each axis, (pooled tokens, its block size)
    integer positions, each pooled token's block along that axis, the grid's last position
    repeated past its end (FramePack's replicate padding, then avg_pool3d); pooled tokens
    row-major. None for a table not pooled. Its tokens must make one row-major grid."""
    import numpy as np

    sizes = dict(spec.rope).get("pool")
    if sizes is None:
        return None
    numerators = split_tokens(spec)[0]
    if len(sizes) != numerators.shape[1]:
        raise BadInput(
            f"rope parameter pool has {len(sizes)} block sizes for {numerators.shape[1]} axes"
        )
    values = _row_major(numerators)
    if values is None:
        raise BadInput(
            "rope parameter pool averages over blocks of a grid: the tokens (--grid, or --ids) "
            "must make one row-major grid, with no text tokens"
        )
    pooled = [-(-len(v) // k) for v, k in zip(values, sizes)]
    index = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    blocks = []
    for v, k, at in zip(values, sizes, index):
        taken = np.minimum(at.reshape(-1)[:, None] * k + np.arange(k), len(v) - 1)
        blocks.append(v[taken])
    return blocks


def _distinct(axis):
    """An axis's distinct values in the order the rows first take them."""
    import numpy as np

    return axis[np.sort(np.unique(axis, return_index=True)[1])]


def _row_major(tokens):
    """Each axis's distinct values in the order the rows first take them, where the rows
    (tokens, axes) are the row-major grid of those; else None."""
    import numpy as np

    values = [_distinct(axis) for axis in tokens.T]
    grid = np.meshgrid(*values, indexing="ij")
    if math.prod(len(v) for v in values) != len(tokens) or not np.array_equal(
        np.stack([g.reshape(-1) for g in grid], axis=1), tokens
    ):
        return None
    return values


def _token_rows(spec) -> int:
    """A split layout's rows before its padding rows: its tokens, or its pooled blocks."""
    blocks = pool_blocks(spec)
    return len(split_tokens(spec)[0] if blocks is None else blocks[0])


def split_positions(spec):
    """A split layout's token positions as float64 (tokens, axes): integers over each axis's
    denominator, divided by its divisor (a pooled table's: each block's mean)."""
    import numpy as np

    numerators, denominators, _ = split_tokens(spec)
    blocks = pool_blocks(spec)
    if blocks is not None:
        numerators = np.stack([b.mean(axis=1) for b in blocks], axis=1)
    return numerators / np.array(denominators) / np.array(divisors(spec))


def divisors(spec) -> tuple[float, ...]:
    """What each axis's positions are divided by: the layout's (Allegro's interpolation
    scales), or --rope axes_scale (Kandinsky 5's scale_factor), or 1."""
    scales = AXES[spec.axes].divisors or dict(spec.rope).get("axes_scale")
    return tuple(scales) if scales else (1.0,) * len(split_laws(spec))


def _entry(start: int, size: int, step: int) -> str:
    if size == 1:
        return str(start)
    return f"{start}:{start + size * step}" + ("" if step == 1 else f":{step}")


def _box(positions, r: int, unsigned: bool = False) -> tuple[int, str]:
    """The longest row-major grid (product of steady ranges, the last axis fastest) starting at
    row r: (its tokens, its run). unsigned: positions known up to their signs (a cos table's
    |p|), matched by |p|: a centred range -2:2 reads 2, 1, 0, 1, its run 2:-2:-1."""
    import numpy as np

    def equal(a, b):
        return np.abs(a) == np.abs(b) if unsigned else a == b

    n, k = positions.shape
    start, sizes, steps, stride = positions[r], [1] * k, [1] * k, 1
    for a in range(k - 1, -1, -1):
        if r + stride >= n:
            break
        step = int(positions[r + stride, a] - start[a])
        if step == 0:
            continue
        unit = np.zeros(k, dtype=positions.dtype)
        unit[a] = step
        at = r + stride * np.arange(1, (n - r - 1) // stride + 1)
        steady = np.all(
            equal(positions[at], start + np.arange(1, len(at) + 1)[:, None] * unit), axis=1
        )
        sizes[a] = 1 + (int(np.argmin(steady)) if not steady.all() else len(at))
        steps[a] = step
        stride *= sizes[a]
    grids = np.meshgrid(
        *[start[a] + steps[a] * np.arange(sizes[a]) for a in range(k)], indexing="ij"
    )
    expected = np.stack([g.reshape(-1) for g in grids], axis=1)
    same = np.all(equal(positions[r : r + len(expected)], expected[: n - r]), axis=1)
    length = int(np.argmin(same)) if not same.all() else len(same)
    outer = next(a for a in range(k) if sizes[a] > 1 or a == k - 1)
    inner = len(expected) // sizes[outer]  # only whole slices of the outermost axis that moves
    sizes[outer] = length // inner
    if sizes[outer] < 1:
        return 1, ",".join(map(str, start))
    return sizes[outer] * inner, ",".join(
        _entry(int(start[a]), sizes[a], steps[a]) for a in range(k)
    )


def _line(positions, r: int) -> tuple[int, str]:
    """The longest run of tokens a steady step apart starting at row r: (its tokens, its run)."""
    import numpy as np

    n, start = len(positions), positions[r]
    if r + 1 == n:
        return 1, ",".join(map(str, start))
    step = positions[r + 1] - start
    steady = np.all(np.diff(positions[r:], axis=0) == step, axis=1)
    length = 1 + (int(np.argmin(steady)) if not steady.all() else len(steady))
    return length, f"{length}*" + ",".join(
        _entry(int(s), length if d else 1, int(d)) for s, d in zip(start, step)
    )


def runs_of(positions, most: int, denominators=None, unsigned: bool = False) -> str | None:
    """Positions (tokens, axes), integers over each axis's denominator (default 1), as inline
    --ids runs (`token_runs`), each the longer of the grid and the line starting where the last
    ended; None past `most` runs. unsigned: positions known only up to sign, whose runs give
    the same |p| (`_box`)."""
    runs, r = [], 0
    while r < len(positions):
        if len(runs) == most:
            return None
        grid, line = _box(positions, r, unsigned), _line(positions, r)
        length, run = grid if grid[0] >= line[0] or line[0] < 3 else line  # no line of two tokens
        count, star, body = run.rpartition("*")
        runs.append(
            count
            + star
            + ",".join(
                _over(e, q)
                for e, q in zip(body.split(","), denominators or [1] * positions.shape[1])
            )
        )
        r += length
    return "; ".join(runs)


def _over(entry: str, q: int) -> str:
    """A run's entry of numerators over q: V/Q or START:STOP[:STEP]/Q; a whole V as itself."""
    if q == 1:
        return entry
    if ":" not in entry and int(entry) % q == 0:
        return str(int(entry) // q)
    return f"{entry}/{q}"


# ---------------------------------------------------------------------------------------------
# Rotary tables as Hugging Face transformers 5.23 computes them: modeling_rope_utils'
# ROPE_INIT_FUNCTIONS for inv_freq and the attention factor (GPT-NeoX's default, which honours
# partial_rotary_factor), then the rotary embedding's forward: float32 angles p*w,
# cat((freqs, freqs)), cos/sin times the attention factor.

VARIANTS: dict = {}


def _hf_rope_inv_freq(torch, spec, dim: int | None = None):
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    base, dim = spec.base * rope.get("ntk_factor", 1.0), dim or rotary_dim(spec.d_model, rope)
    factor = rope.get("factor")
    attention_factor = 1.0
    exponents = _hf_exponents(torch, dim)
    if kind == "dynamic":
        limit = rope["max_position_embeddings"]
        end = positions_end(spec)
        if end > limit:  # the forward pass regrows base from the int64 tensor max(position) + 1
            length = torch.maximum(torch.tensor(end), torch.tensor(limit, dtype=torch.int64))
        else:  # the frequencies made at construction, from max_position_embeddings
            length = limit
        base = base * ((factor * length / limit) - (factor - 1)) ** (dim / (dim - 2))
    if kind == "yarn":
        return _hf_yarn(torch, rope, base, dim, factor)
    if (
        kind == "proportional"
    ):  # Gemma 4: the first int(p * head_dim // 2) angles rotate, the rest are 0
        rotated = rotated_count(spec.d_model, rope)
        exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.int64).float() / dim
        inv_freq = torch.cat((1.0 / (base**exponents), torch.zeros(dim // 2 - rotated)))
        return inv_freq / (factor or 1.0), attention_factor
    if kind == "longrope":
        original = rope["original_max_position_embeddings"]
        if factor is None:
            factor = rope["max_position_embeddings"] / original
        attention_factor = rope.get("attention_factor")
        if attention_factor is None:
            attention_factor = _longrope_attention(factor, original)
        long = positions_end(spec) > original
        ext = torch.tensor(rope["long_factor" if long else "short_factor"], dtype=torch.float32)
        return _longrope_inv_freq(ext, base**exponents), attention_factor
    inv_freq = 1.0 / (base**exponents)
    if kind == "linear":
        inv_freq /= factor
    if kind == "llama3":
        inv_freq = _hf_llama3(torch, rope, inv_freq)
    return inv_freq, attention_factor


def _hf_exponents(torch, dim: int):  # 2i / dim in float32, from int64 arange(0, dim, 2)
    return torch.arange(0, dim, 2, dtype=torch.int64).float() / dim


def _longrope_attention(factor: float, original: int) -> float:  # Phi-3's, in Python floats
    return 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))


def _longrope_inv_freq(ext, powers):  # 1 / (factor * base**(2i / dim)), each step in float32
    return 1.0 / (ext * powers)


def _hf_part(freqs, part: str, attention_factor):  # cos or sin of the angles, times the factor
    return (freqs.cos() if part == "cos" else freqs.sin()) * attention_factor


def _hf_yarn(torch, rope, base, dim, factor):
    original = rope["original_max_position_embeddings"]
    attention_factor = rope.get("attention_factor")
    if attention_factor is None:

        def m_scale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")
        if mscale and all_dim:
            attention_factor = float(m_scale(factor, mscale) / m_scale(factor, all_dim))
        else:
            attention_factor = m_scale(factor)

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32)
    high = correction_dim(rope.get("beta_slow") or 1)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** _hf_exponents(torch, dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - ramp.to(dtype=torch.float)
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def _hf_llama3(torch, rope, inv_freq):
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    original = rope["original_max_position_embeddings"]
    low_wavelength, high_wavelength = original / low, original / high
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = (original / wavelength - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < high_wavelength) * ~(wavelength > low_wavelength)
    return torch.where(medium, smoothed, scaled)


def _rope_table(spec, lowered: str | None = None):
    # lowered: which stage runs in --compute-dtype (the precision failures reported in ports)
    import torch

    low = getattr(torch, spec.compute_dtype or "bfloat16")
    laws, columns = axes_plan(spec) if spec.axes else ([(None, None)], None)
    inv_freq, attention_factor = _hf_rope_inv_freq(torch, spec, laws[0][0])
    if lowered == "inv_freq":  # the buffer cast by model.to(dtype), widened again in forward
        inv_freq = inv_freq.to(low)
    if spec.part == "inv_freq":
        return inv_freq.float()[None, :]
    if spec.axes:  # (tokens, axes): every axis's angles, then each column's axis and frequency
        positions = torch.from_numpy(axes_positions(spec))
    else:
        positions = torch.from_numpy(line_positions(spec))[None, :]
    if lowered == "positions":
        positions = positions.to(low)
    freqs = positions[..., None].float() * inv_freq.float()
    if lowered == "table":  # angles and cos/sin in the low dtype (autocast without a guard)
        freqs = freqs.to(low)
    if spec.part == "angle":  # the angles themselves (Stable Audio 3's cat((freqs, freqs)))
        plane = freqs
    elif spec.arithmetic == "polar":  # DeepSeek-V2, Llama 4: torch.polar(1, angle) in complex64
        value = torch.polar(torch.ones_like(freqs), freqs) * attention_factor
        plane = value.real if spec.part == "cos" else value.imag
    else:  # cos and sin of each angle (the same numbers in cat((freqs, freqs)) or repeat_interleave)
        plane = _hf_part(freqs, spec.part, attention_factor)
    if columns is not None:
        axis, frequency = (torch.tensor(list(c)) for c in zip(*columns))
        return plane[:, axis, frequency].float()
    return _lay_out(plane[0], spec.convention).float()


_HF = dict(parameters=frozenset({"base", "offset"}))


@variant(
    VARIANTS,
    "hf-rope",
    source="transformers 5.23 modeling_rope_utils ROPE_INIT_FUNCTIONS and the "
    "rotary embedding's forward (GPT-NeoX, Llama; Cohere's interleaved; DeepSeek-V2's polar)",
    conventions=("half", "interleaved", "single"),
    **_HF,
)
@_both_parts
def _hf_rope(spec, device):
    return _rope_table(spec)


for _stage, _what in (
    ("inv_freq", "inv_freq"),
    ("positions", "the positions"),
    ("table", "the angles and cos/sin"),
):
    variant(
        VARIANTS,
        f"rope-{_stage.replace('_', '-')}",
        kind="recipe",
        source=f"hf-rope with {_what} in --compute-dtype (default bfloat16)",
        conventions=("half", "interleaved", "single"),
        **_HF,
    )(_both_parts(lambda spec, device, stage=_stage: _rope_table(spec, stage)))


# Rotary tables as diffusers 0.42 computes them: get_1d_rotary_pos_embed per position axis,
# frequencies 1 / (theta * ntk_factor)**(arange(0, dim, 2) / dim) / linear_factor in its
# freqs_dtype, torch.outer with the positions (promoted to freqs_dtype), cos and sin (or
# torch.polar for the complex tables) there, then float32; the axes' blocks concatenated.


def _diffusers_refusal(spec) -> str | None:
    if spec.part == "inv_freq":
        return "--variant diffusers builds cos and sin tables (get_1d_rotary_pos_embed returns no frequencies)"
    style = AXES.get(spec.axes or "")
    if style is not None and not style.split:
        return f"--variant diffusers builds 1-D and diffusers' own multi-axis layouts, not --rope-axes {spec.axes}"
    kind = dict(spec.rope).get("rope_type", "default")
    if kind not in ("default", "linear"):
        return f"diffusers' get_1d_rotary_pos_embed has no rope_type {kind} (it takes linear_factor and ntk_factor)"
    if dict(spec.rope).get("partial_rotary_factor", 1.0) != 1.0:
        return "diffusers' get_1d_rotary_pos_embed has no partial_rotary_factor"
    return None


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_1d_rotary_pos_embed (FluxPosEmbed, WanRotaryPosEmbed, "
    "HunyuanVideoRotaryPosEmbed, get_3d_rotary_pos_embed, ...)",
    conventions=("interleaved", "half", "single"),
    refuse=_diffusers_refusal,
    parameters=frozenset({"base", "offset", "text_tokens", "padding_rows"}),
    ends_float64=lambda spec: (
        spec.convention == "single"
        and spec.freqs_dtype == "float64"
        and spec.part != "angle"
        and not (spec.axes and AXES[spec.axes].angles32)
    ),
)
@_both_parts
def _diffusers_rope(spec, device):
    import numpy as np
    import torch

    rope = dict(spec.rope)
    dtype = getattr(torch, spec.freqs_dtype or "float32")
    if spec.axes:
        laws, columns = axes_plan(spec)
        positions = torch.from_numpy(split_tokens(spec)[2]())
    else:
        laws, columns = [(spec.d_model, spec.base)], None
        positions = torch.from_numpy(line_positions(spec))[:, None]
    planes = []
    style = AXES.get(spec.axes or "")
    unit = rope.get("pool_unit", False)
    for axis, (dim, theta) in enumerate(laws):
        if style is not None and style.torch_law is not None:
            freqs = style.torch_law(torch, spec, axis, dim, theta)
        else:
            freqs = 1.0 / (
                (theta * rope.get("ntk_factor", 1.0))
                ** (torch.arange(0, dim, 2, dtype=dtype) / dim)
            )
            freqs = freqs / rope.get("factor", 1.0)
        if unit:  # AnyFlow-FAR: each axis's own table at its blocks' positions, pooled alone below
            block = pool_blocks(spec)[axis]
            at = torch.from_numpy(
                (block / split_tokens(spec)[1][axis]).reshape(-1).astype(np.float32)
            )
        else:
            at = positions[:, axis]
        angles = torch.outer(at, freqs)
        if (
            style is not None and style.angle_scale
        ):  # Kandinsky 5: the float32 angles over its scale_factor
            angles = angles / divisors(spec)[axis]
        if (
            style is not None and style.angles32
        ):  # Z-Image: float64 angles rounded, then float32 polar
            angles = angles.float()
        if spec.part == "angle":  # the angles themselves, float32 (ERNIE-Image's rope())
            plane = angles.float()
        elif spec.convention == "single" and not (
            style and style.once
        ):  # use_real=False: complex64, or
            value = torch.polar(
                torch.ones_like(angles), angles
            )  # complex128 from float64 frequencies (kept)
            if unit:
                value = _unit_pooled(torch, value, block.shape[1])
            plane = value.real if spec.part == "cos" else value.imag
        else:  # use_real=True: cos and sin, then float32
            plane = (angles.cos() if spec.part == "cos" else angles.sin()).float()
        # a zero frequency (LTX-Video's padding) is cos 1 and sin +0, also at negative positions
        plane[:, freqs == 0] = 1.0 if spec.part == "cos" else 0.0
        planes.append(plane)
    if columns is None:
        return _lay_out(planes[0], spec.convention)
    every = torch.cat(planes, dim=1)[:, torch.tensor([j for _, j in columns])]
    every = every if pool_blocks(spec) is None or unit else _pooled(torch, spec, every)
    return torch.cat(
        [every, every.new_zeros(spec.padding_rows, every.shape[1])]
    )  # Lumina2's cap_freqs_cis


def _unit_pooled(torch, value, k: int):
    """AnyFlow-FAR's avg_pool_complex: a complex (blocks * k, n) table's real and imaginary
    parts averaged over each k rows (avg_pool1d), then each over their length."""

    def pooled(part):
        return torch.nn.functional.avg_pool1d(part.T[None], k, k)[0].T

    real, imag = pooled(value.real), pooled(value.imag)
    length = torch.sqrt(real**2 + imag**2)
    return torch.complex(real / length, imag / length)


def _pooled(torch, spec, table):
    """FramePack's and Helios's pooling of a (tokens, columns) float32 table over its grid:
    each axis padded at its end by replicating, to a multiple of its block, then avg_pool."""
    pool = dict(spec.rope)["pool"]
    shape = [len(v) for v in _row_major(split_tokens(spec)[0])]
    grid = table.T.reshape(1, table.shape[1], *shape)
    pad = [p for size, k in zip(shape[::-1], pool[::-1]) for p in (0, -size % k)]
    grid = torch.nn.functional.pad(grid, pad, mode="replicate") if any(pad) else grid
    average = {
        1: torch.nn.functional.avg_pool1d,
        2: torch.nn.functional.avg_pool2d,
        3: torch.nn.functional.avg_pool3d,
    }[len(shape)]
    return average(grid, pool, stride=pool).flatten(2)[0].T


# Diffusion models' RoPE as their diffusers 0.42 modules and pipelines set it up: one entry
# per model, its tokens given by --grid (and --text-tokens) or --ids.


@dataclass(frozen=True)
class Preset:
    summary: str  # the model and where diffusers builds its table
    head_dim: int
    theta: float
    axes: str  # its AXES layout
    axes_dim: tuple[int, ...]
    convention: str
    freqs_dtype: str  # get_1d_rotary_pos_embed's, as the model calls it
    axes_theta: tuple[float, ...] = ()  # each axis's theta, where they differ (Cosmos's NTK)
    tries: tuple[dict, ...] = (
        {},
    )  # rope settings identification tries beside the preset's (common fps)

    @property
    def rope(self) -> dict:
        thetas = {"axes_theta": ",".join(map(repr, self.axes_theta))} if self.axes_theta else {}
        return {"axes_dim": ",".join(map(str, self.axes_dim)), **thetas}


PRESETS = {
    "flux": Preset(
        "FLUX.1 (and Chroma): FluxPosEmbed, ids (0, row, column) after 512 text ids at 0",
        128,
        10000.0,
        "split",
        (16, 56, 56),
        "interleaved",
        "float64",
    ),
    "flux2": Preset(
        "FLUX.2: Flux2PosEmbed, ids (t, row, column, l); text token l at (0, 0, 0, l)",
        128,
        2000.0,
        "split-text-last",
        (32, 32, 32, 32),
        "interleaved",
        "float64",
    ),
    "wan": Preset(
        "Wan 2.1 and 2.2 (SkyReels-V2, Wan VACE and Animate): WanRotaryPosEmbed over frames, "
        "rows, columns",
        128,
        10000.0,
        "split",
        (44, 42, 42),
        "interleaved",
        "float64",
    ),
    "hunyuan-video": Preset(
        "HunyuanVideo and 1.5: HunyuanVideoRotaryPosEmbed over frames, rows, columns",
        128,
        256.0,
        "split",
        (16, 56, 56),
        "interleaved",
        "float32",
    ),
    "hunyuan-image": Preset(
        "HunyuanImage 2.1: HunyuanImageRotaryPosEmbed over rows, columns",
        128,
        256.0,
        "split",
        (64, 64),
        "interleaved",
        "float32",
    ),
    "cogvideox-1.5": Preset(
        "CogVideoX 1.5: get_3d_rotary_pos_embed, grid_type slice, over frames, rows, columns",
        64,
        10000.0,
        "split",
        (16, 24, 24),
        "interleaved",
        "float32",
    ),
    "cogvideox": Preset(
        "CogVideoX 1.0 (5B; ConsisID, EasyAnimate): get_3d_rotary_pos_embed over the crop "
        "region of its 30 x 45 base grid",
        64,
        10000.0,
        "cogvideox",
        (16, 24, 24),
        "interleaved",
        "float32",
    ),
    "hunyuan-dit": Preset(
        "HunyuanDiT: get_2d_rotary_pos_embed over the crop region of its 32 x 32 base grid",
        88,
        10000.0,
        "hunyuan-dit",
        (44, 44),
        "interleaved",
        "float32",
    ),
    "lumina-next": Preset(
        "Lumina-Next: get_2d_rotary_pos_embed_lumina, complex64 (linear and NTK factors "
        "with --rope)",
        72,
        10000.0,
        "lumina-next",
        (36, 36),
        "single",
        "float32",
    ),
    "lumina2": Preset(
        "Lumina-Image 2.0: Lumina2RotaryPosEmbed, complex128, captions first",
        96,
        10000.0,
        "lumina2",
        (32, 32, 32),
        "single",
        "float64",
    ),
    "qwenimage": Preset(
        "QwenImage (Edit): QwenEmbedRope with scale_rope, complex64, text tokens first",
        128,
        10000.0,
        "qwenimage",
        (16, 56, 56),
        "single",
        "float32",
    ),
    "allegro": Preset(
        "Allegro: get_3d_rotary_pos_embed_allegro (interpolation scales 2.2, 2, 2)",
        96,
        10000.0,
        "allegro",
        (32, 32, 32),
        "half",
        "float32",
    ),
    "z-image": Preset(
        "Z-Image: RopeEmbedder, complex64 of float32 angles, captions first (padded to a "
        "multiple of 32)",
        128,
        256.0,
        "z-image",
        (32, 48, 48),
        "single",
        "float64",
    ),
    "ltx-video": Preset(
        "LTX-Video 0.9: LTXVideoRotaryPosEmbed over the 2048-wide inner dim (head h takes "
        "columns 64h .. 64h + 63); a frame rate other than 25 with --rope fps=F",
        2048,
        10000.0,
        "ltx-video",
        (684, 682, 682),
        "interleaved",
        "float32",
        tries=({}, *({"fps": fps} for fps in (24, 30, 60))),
    ),
    "helios": Preset(
        "Helios: HeliosRotaryPosEmbed, Wan's axes in float32 (its table is [cos | sin] of these)",
        128,
        10000.0,
        "split",
        (44, 42, 42),
        "interleaved",
        "float32",
    ),
    "wan-complex": Preset(
        "AnyFlow, Wan-Animate 2: Wan's axes as a complex128 table (its float32 rounding)",
        128,
        10000.0,
        "split",
        (44, 42, 42),
        "single",
        "float64",
    ),
    "motif-video": Preset(
        "Motif-Video: MotifVideoRotaryPosEmbed, HunyuanVideo's axes in float64",
        128,
        256.0,
        "split",
        (16, 56, 56),
        "interleaved",
        "float64",
    ),
    "sana-wm": Preset(
        "Sana-WM: SanaWMRotaryPosEmbed, complex64 over frames, rows, columns",
        112,
        10000.0,
        "split",
        (40, 36, 36),
        "single",
        "float32",
    ),
    "kandinsky6": Preset(
        "Kandinsky 6: Kandinsky6RoPE3D (Kandinsky 5's arithmetic, axes 32,48,48); --part rotation; "
        "--rope axes_scale=1,2,2 as its pipeline",
        128,
        10000.0,
        "kandinsky5",
        (32, 48, 48),
        "interleaved",
        "float32",
        tries=({}, {"axes_scale": "1,2,2"}, {"axes_scale": "1,3.16,3.16"}),
    ),
    "kandinsky6-text": Preset(
        "Kandinsky 6's text tokens: Kandinsky6RoPE1D(128); --part rotation",
        128,
        10000.0,
        "kandinsky5-text",
        (128,),
        "interleaved",
        "float32",
    ),
    "flux3": Preset(
        "FLUX.3: Flux3PosEmbed, as FLUX.2 at theta 10000, rows and columns at k / 2",
        128,
        10000.0,
        "flux3",
        (32, 32, 32, 32),
        "interleaved",
        "float64",
    ),
    "krea2": Preset(
        "Krea 2: Krea2RotaryPosEmbed, FLUX's layout at theta 1000",
        128,
        1000.0,
        "split",
        (32, 48, 48),
        "interleaved",
        "float64",
    ),
    "prx": Preset(
        "PRX: PRXEmbedND over the image's (row, column), float64 angles; its table is --part rotation",
        64,
        10000.0,
        "split",
        (32, 32),
        "interleaved",
        "float64",
    ),
    "ernie-image": Preset(
        "ERNIE-Image: ErnieImageEmbedND3 (its angles; the attention takes their cos and sin "
        "in float32), image first",
        128,
        256.0,
        "ernie-image",
        (32, 48, 48),
        "interleaved",
        "float32",
    ),
    "nucleus-image": Preset(
        "NucleusMoE-Image: NucleusMoEEmbedRope, QwenImage's complex64 table with the image's "
        "tokens first",
        128,
        10000.0,
        "qwenimage-image-first",
        (16, 56, 56),
        "single",
        "float32",
    ),
    "ovis-image": Preset(
        "Ovis-Image: OvisImagePosEmbed, text token k at (0, k, k)",
        128,
        10000.0,
        "ovis-image",
        (16, 56, 56),
        "interleaved",
        "float64",
    ),
    "longcat-image": Preset(
        "LongCat-Image: LongCatImagePosEmbed, text token k at (0, k, k), patches at (1, 512 + "
        "row, 512 + column)",
        128,
        10000.0,
        "longcat-image",
        (16, 56, 56),
        "interleaved",
        "float64",
    ),
    "hidream": Preset(
        "HiDream-I1: HiDreamImageEmbedND, float64 angles; its table is --part rotation; text "
        "tokens (T5's, Llama's twice: 384) and a non-square image's padding follow the image, at 0",
        128,
        10000.0,
        "hidream",
        (64, 32, 32),
        "interleaved",
        "float64",
    ),
    "kandinsky5": Preset(
        "Kandinsky 5.0: Kandinsky5RoPE3D over frames, rows, columns (axes_dims 16,24,24), "
        "float32; its table is --part rotation; 480p videos with --rope axes_scale=1,2,2, "
        "others 1,3.16,3.16 (images: none)",
        64,
        10000.0,
        "kandinsky5",
        (16, 24, 24),
        "interleaved",
        "float32",
        tries=({}, {"axes_scale": "1,2,2"}, {"axes_scale": "1,3.16,3.16"}),
    ),
    "kandinsky5-text": Preset(
        "Kandinsky 5.0's text tokens: Kandinsky5RoPE1D, float32; --part rotation",
        64,
        10000.0,
        "kandinsky5-text",
        (64,),
        "interleaved",
        "float32",
    ),
    "ltx2": Preset(
        "LTX-2's video: LTX2AudioVideoRotaryPosEmbed over the 4096-wide inner dim (head h takes "
        "columns 128h .. 128h + 127), its double precision; a frame rate other than 24 with --rope fps=F",
        4096,
        10000.0,
        "ltx2",
        (1368, 1364, 1364),
        "interleaved",
        "float64",
        tries=({}, *({"fps": fps} for fps in (25, 30, 60))),
    ),
    "ltx2-cross": Preset(
        "LTX-2's audio-video cross-attention, its video side: LTX2AudioVideoRotaryPosEmbed over "
        "the 2048-wide audio cross-attention dim, each video token at its frame's time only (rows and "
        "columns take no columns: a table of frames x 1 x rows*columns is the same)",
        2048,
        10000.0,
        "ltx2",
        (2048, 0, 0),
        "interleaved",
        "float64",
        tries=({}, *({"fps": fps} for fps in (25, 30, 60))),
    ),
    "ltx2-audio": Preset(
        "LTX-2's audio: LTX2AudioVideoRotaryPosEmbed over the 2048-wide audio inner dim, one axis "
        "of latent frames",
        2048,
        10000.0,
        "ltx2-audio",
        (2048,),
        "interleaved",
        "float64",
    ),
    "cogview4": Preset(
        "CogView4: CogView4RotaryPosEmbed", 128, 10000.0, "cogview4", (64, 64), "half", "float32"
    ),
    "cosmos3": Preset(
        "Cosmos 3: Cosmos3VLTextRotaryEmbedding, Qwen3-VL's interleaved M-RoPE at theta 5e6 "
        "(rope_axes_dim 24,20,20); text token k at (k, k, k), vision tokens at (L + 15000 + frame, row, "
        "column); a video's fps modulation with --rope fps=F; sound and action tokens after the video "
        "with --rope sound_tokens=S, action_tokens=A",
        128,
        5000000.0,
        "cosmos3",
        (48, 40, 40),
        "half",
        "float32",
        tries=({}, *({"fps": fps} for fps in (24, 30, 16, 25, 60))),
    ),
    "glm-image": Preset(
        "GLM-Image: GlmImageRotaryPosEmbed over rows, columns (head dim 128; the class "
        "default is 40)",
        128,
        10000.0,
        "split-doubled",
        (64, 64),
        "half",
        "float32",
    ),
    # Cosmos: theta 10000 * rope_scale ** (dim / (dim - 2)) per axis, rope_scale (2, 1, 1) of
    # Cosmos-1.0-Diffusion-7B (temporal positions of images; a video's are scaled by 24/fps)
    "cosmos": Preset(
        "Cosmos 1.0 7B: CosmosRotaryPosEmbed, rope_scale (2, 1, 1); a video's frame rate with "
        "--rope fps=F",
        128,
        10000.0,
        "cosmos",
        (44, 42, 42),
        "half",
        "float32",
        axes_theta=(10000.0 * 2.0 ** (44 / 42), 10000.0, 10000.0),
        tries=({}, *({"fps": fps} for fps in (30, 16, 24, 25, 60))),
    ),
}


# ---------------------------------------------------------------------------------------------
# The family


@dataclass(frozen=True)
class _Input:
    """What a --rope-config or --preset sets: what it is, for a person ("config", "preset
    flux"), the TableSpec fields, the rope parameters, and the config as read (empty for a
    preset)."""

    what: str
    values: dict
    rope: dict
    config: dict
    lengthwise: bool = False  # the table's rows are --seq-len's positions (no grid, no ids)


def _rope_items(given) -> list[tuple[str, str]]:
    """--rope's KEY=VALUE items as (key, value) pairs."""
    items = []
    for item in given:
        key, sep, value = item.partition("=")
        if not sep:
            raise BadInput(f"--rope {item!r} is not KEY=VALUE")
        items.append((key.strip(), value.strip()))
    return items


def _shown(value) -> str:
    """An option's or a config's value as a person reads it: 500000 for 500000.0, 16,56,56."""
    if isinstance(value, (tuple, list)):
        return ",".join(_shown(v) for v in value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    return str(value)


class Rope(Family):
    name = "rope"
    summary = "rotary embedding tables, every Hugging Face rope_type; --rope-config, --preset"
    conventions = {
        "half": "frequencies i and i+dim/2 pair up (GPT-NeoX, Hugging Face rotate_half)",
        "interleaved": "columns 2i and 2i+1 pair up (GPT-J, RoFormer, Meta's llama, Cohere)",
        "single": "one column per frequency (complex tables' real and imaginary parts; gpt-oss)",
    }
    parts = {
        "cos": "cos(p*w_i) * attention factor, (positions, rotary dim)",
        "sin": "sin(p*w_i) * attention factor, (positions, rotary dim)",
        "inv_freq": "the frequencies w_i, (rotary dim / 2,)",
        "rotation": "each interleaved pair's 2x2 rotation [[cos, -sin], [sin, cos]] flattened, (positions, "
        "2 x rotary dim): HiDream's and Kandinsky 5's tables",
        "angle": "the angles p*w_i themselves, laid out as cos (no attention factor), (positions, rotary dim): "
        "ERNIE-Image's and Stable Audio 3's tables, whose cos and sin the attention takes",
    }
    params = (
        Param(
            "rope",
            (),
            "A Hugging Face rope parameter KEY=VALUE (rope_type=yarn, factor=4, ...); repeat.",
            list,
        ),
        Param(
            "rope_config",
            None,
            "Take theta, head dim, rope parameters and the model's layout "
            "from a Hugging Face config.json, a model folder, or a model id in the local Hugging "
            "Face cache.",
            str,
            field=False,
        ),
        Param(
            "layer_type",
            None,
            "The layer type whose rope parameters a config gives per layer "
            "type (full_attention, sliding_attention, ...).",
            str,
            field=False,
        ),
        Param(
            "config_part",
            None,
            "The part of a composite config to read (text_config, "
            "vision_config, thinker_config.text_config, ...); default: the language model's.",
            str,
            field=False,
        ),
        Param(
            "axes",
            None,
            "Several position axes, each column taking one: a model's M-RoPE or "
            "vision RoPE layout (" + ", ".join(AXES) + "); set by --rope-config.",
            str,
            flags=("--rope-axes",),
            choices=tuple(AXES),
        ),
        Param(
            "grid",
            None,
            "The tokens of a multi-axis table: TxHxW frames, rows and columns of "
            "an image or video (M-RoPE), or ROWSxCOLUMNS patches (vision RoPE).",
            str,
        ),
        Param(
            "merge",
            None,
            "A vision encoder's spatial merge size: its patches come in MxM blocks "
            "[default: the --rope-config's, else 1].",
            int,
            minimum=1,
        ),
        Param(
            "arithmetic",
            None,
            "How hf-rope computes cos and sin: of the float32 angles "
            "(cos-sin), or through complex torch.polar (polar: DeepSeek-V2, Llama 4) [default: the "
            "--rope-config model's, else cos-sin].",
            str,
            flags=("--rope-arithmetic",),
            choices=("cos-sin", "polar"),
        ),
        Param(
            "preset",
            None,
            "A diffusion model's RoPE: head dim, theta, axes and layout ("
            + ", ".join(PRESETS)
            + "); give its tokens with --grid (and --text-tokens) or --ids.",
            str,
            field=False,
            choices=tuple(PRESETS),
        ),
        TEXT_TOKENS,
        Param(
            "padding_rows",
            0,
            "Rows of zeros after a diffusers multi-axis table's tokens (Lumina2's caption "
            "table, cap_freqs_cis, for a prompt shorter than its batch's longest).",
            int,
            minimum=0,
            fixed="has no padding rows",
        ),
        Param(
            "ids",
            None,
            "A multi-axis table's token positions: a .npy file of shape (tokens, axes), "
            "integers or floats as FLUX's ids (M-RoPE and vision layouts: whole numbers, as Cosmos 3's); or "
            "inline runs separated by ';', an entry per axis, each V or START:STOP[:STEP], either over /Q "
            "for positions k/Q (Q a power of two): a run is the grid of its ranges ('0,0,0,0:512; "
            "0,0:32,0:32,0'; FLUX.3's '0,0:32/2,0:32/2,-1'), or COUNT tokens along a line with COUNT* "
            "('5*8:13,8:13,8:13'). A 1-D table's rows, whole positions, one entry a run (OmniGen's prompt "
            "padded in its batch: '37*0; 0:300').",
            str,
        ),
        Param(
            "freqs_dtype",
            None,
            "What --variant diffusers computes frequencies, angles, cos and sin "
            "in (get_1d_rotary_pos_embed's freqs_dtype: float64 in FLUX and Wan, float32 in "
            "HunyuanVideo and CogVideoX) [default: the --preset's, else float32].",
            str,
            choices=("float32", "float64"),
            aliases=DTYPE_ALIASES,
        ),
    )
    variants = VARIANTS
    export_parts = ("cos", "sin")

    def from_options(self, options):
        """--rope KEY=VALUE pairs over a --rope-config's or --preset's settings, and each
        option given over the value the config or preset sets (the model's head dim, theta,
        layout, arithmetic and, for a 1-D table, its length)."""
        values = super().from_options(options)
        found = self._input(options)
        rope = {}
        if found is not None:
            values.update({k: v for k, v in found.values.items() if options.get(k) is None})
            values["family"] = self.name
            rope = dict(found.rope)
        given = options.get("rope") or []
        if isinstance(given, dict):  # from Python: build(preset=..., rope={...})
            rope.update(given)
            given = []
        for key, value in _rope_items(given):
            rope[key] = value
        return values | ({"rope": rope} if rope else {})

    def _input(self, options) -> _Input | None:
        """What --rope-config or --preset sets, checked against the options given beside it;
        None without either."""
        config, preset = options.get("rope_config"), options.get("preset")
        if preset and config:
            raise BadInput("--preset and --rope-config each give the model's RoPE: choose one")
        for name in ("layer_type", "config_part"):
            if options.get(name) and not config:
                raise BadInput(f"--{name.replace('_', '-')} selects within a --rope-config")
        if not config and not preset:
            return None
        flag = "--rope-config" if config else f"--preset {preset}"
        family = options.get("family")
        if family is not None and family != self.name:
            raise BadInput(
                f"{flag} gives a {self.name} table, not {family}: drop --family {family}"
            )
        if preset:
            found = PRESETS[
                choice("--preset", preset, PRESETS, more="--family rope --help lists them")
            ]
            values = {
                "d_model": found.head_dim,
                "base": found.theta,
                "axes": found.axes,
                "convention": found.convention,
                "freqs_dtype": found.freqs_dtype,  # the model's, for --variant diffusers
            }
            return _Input(f"preset {preset}", values, found.rope, {})
        read_from = read(config, options.get("config_part"), options.get("layer_type"))
        given = options.get("d_model")
        if given is not None and given != read_from["d_model"]:
            raise BadInput(
                f"--d-model {given}: the config's head dim is {read_from['d_model']}, and a "
                "--rope-config table is the model's; drop --d-model (--rope "
                "partial_rotary_factor=F rotates part of it)"
            )
        values = {"d_model": read_from["d_model"], "base": read_from["base"]}
        style = AXES.get(read_from["axes"] or "")
        if style and options.get("axes") is None and (style.vision or options.get("grid")):
            values["axes"] = style.name  # a text model's 1-D positions need no axes
            if style.merged:
                values["merge"] = read_from["merge"]
            read_from["convention"] = style.convention
        values["convention"] = read_from["convention"]
        values["arithmetic"] = read_from["arithmetic"]
        axes = AXES.get(options.get("axes") or values.get("axes") or "")
        lengthwise = not (options.get("grid") or options.get("ids") or (axes and axes.split))
        if lengthwise and "length" in read_from:  # the positions the model is made for
            values["seq_len"] = read_from["length"]
        return _Input("config", values, read_from["rope"], read_from, lengthwise)

    def notes(self, options):
        try:
            found = self._input(options)
        except LayerTypes as e:  # export writes every layer type's tables: each one's notes
            lines = []
            for name in e.names:
                lines += [n for n in self.notes({**options, "layer_type": name}) if n not in lines]
            return lines
        if found is None:
            return []
        flags = {p.name: p.flag for p in self.params} | {
            "d_model": "--d-model",
            "base": "--base",
            "convention": "--convention",
        }
        over, short = [], found.what.split()[0]
        for name, value in found.values.items():
            given = options.get(name)
            if name != "seq_len" and given is not None and _shown(given) != _shown(value):
                over.append(f"{flags[name]} {_shown(given)} ({short}: {_shown(value)})")
        rope = dict(rope_parameters(found.rope))
        for key, value in _rope_items(options.get("rope") or []):
            if key not in rope:
                over.append(f"--rope {key}={value} ({short}: none)")
            elif _typed(key, value) != rope[key]:
                over.append(f"--rope {key}={value} ({short}: {_shown(rope[key])})")
        notes = [f"options over the {found.what}'s values: {', '.join(over)}"] if over else []
        config = found.config
        if config and options.get("seq_len") is None and options.get("part") != "inv_freq":
            if "seq_len" in found.values:
                notes.append(
                    f"--seq-len {found.values['seq_len']}: {config['length_from']} "
                    "(-l gives another length)"
                )
            elif found.lengthwise:  # the config says nothing of the length
                notes.append(
                    "--seq-len 1024, pe-cli's default: the config gives no "
                    "max_position_embeddings (-l gives another length)"
                )
        return notes

    def library(self, options):
        if options.get("rope_config"):  # the model's rotary module in transformers
            return Library("transformers", "hf-rope")
        if options.get("preset"):  # the model's positional module in diffusers
            return Library("diffusers", "diffusers")
        return None

    def window(self, spec, start, stop):
        # a 1-D table's rows are its positions: rows start..stop are the table from offset +
        # start, whose largest position, which dynamic NTK and LongRoPE read, is the same
        if spec.axes or spec.ids is not None or self._vector(spec):
            return None
        return spec.replace(offset=spec.offset + start, seq_len=stop - start)

    def normalize(self, spec):
        return {
            "rope": rope_parameters(spec.rope),
            "merge": spec.merge or 1,
            "arithmetic": spec.arithmetic or "cos-sin",
        }

    def default_convention(self, spec):
        style = AXES.get(spec.axes or "")
        return style.convention if style and style.convention else super().default_convention(spec)

    def selections(self, options):
        """A config with rope parameters per layer type, read without --layer-type: one table
        set per layer type (export writes each)."""
        if not options.get("rope_config") or options.get("layer_type"):
            return {}
        try:
            read(options["rope_config"], options.get("config_part"))
        except LayerTypes as e:
            return {name: {"layer_type": name} for name in e.names}
        return {}

    def check(self, spec):
        rope = dict(spec.rope)
        dim = rotary_dim(spec.d_model, rope)
        if dim < 1:
            raise BadInput(
                f"the rotary dim int(d_model * partial_rotary_factor) = {dim} must be at least 1"
            )
        kind = rope.get("rope_type", "default")
        if kind == "dynamic" and dim < 3:
            raise BadInput("dynamic NTK divides by rotary dim - 2: it needs a rotary dim >= 3")
        if kind == "longrope":
            longrope_factors(rope, frequency_count(spec.d_model, rope), positions_end(spec))
        choice("rope arithmetic", spec.arithmetic, ("cos-sin", "polar"))
        if spec.part == "rotation" and spec.convention != "interleaved":
            raise BadInput(
                "--part rotation is the 2x2 rotation of columns 2i and 2i + 1 (HiDream, Kandinsky 5): "
                f"it needs --convention interleaved, not {spec.convention}"
            )
        style = AXES.get(spec.axes or "")
        if (
            spec.freqs_dtype is not None
            and spec.variant != "diffusers"
            and not (style and style.split)
        ):
            raise BadInput("--freqs-dtype is the dtype of --variant diffusers' arithmetic")
        if style is None or not style.split:
            self._check_axes(spec, kind)
        self._check_split(spec, style, kind)
        largest = self._largest_angle(spec) if spec.part == "angle" else 0.0
        if largest > FORMATS[spec.dtype].max_value:
            raise BadInput(
                f"--part angle: its angles reach {largest:.6g}, past {spec.dtype}'s "
                f"largest value {FORMATS[spec.dtype].max_value:g}: choose a wider --dtype"
            )

    def _largest_angle(self, spec) -> float:
        """The largest |p * w| of the table (each axis's positions at its own frequencies)."""
        import numpy as np

        frequencies = [float(w) for w in self.frequencies(spec)[0]]
        if spec.axes and AXES[spec.axes].split:
            numerators, start, top = split_tokens(spec)[0], 0, 0.0
            for axis, (dim, _) in enumerate(split_laws(spec)):
                share = frequencies[start : start + dim // 2]
                start += dim // 2
                if share:  # an axis without columns (LTX-2's cross-attention) turns no angle
                    top = max(top, float(np.abs(numerators[:, axis]).max()) * max(share))
            return top
        ids = line_ids(spec)
        positions = (
            axes_positions(spec)
            if spec.axes
            else ids
            if ids is not None
            else np.array([spec.offset, spec.last_position])
        )
        return float(np.abs(positions).max()) * max(frequencies, default=0.0)

    @staticmethod
    def _check_axes(spec, kind: str) -> None:
        style = AXES.get(spec.axes or "")
        if style is None:
            if kind == "axial":
                raise BadInput(
                    "rope_type axial is a vision encoder's 2-D RoPE: it needs the model's "
                    "layout (--rope-axes, set by --rope-config for the models pe-cli knows) "
                    "and a --grid of patches"
                )
            for name, value, default in (("grid", spec.grid, None), ("merge", spec.merge, 1)):
                if value != default:
                    raise BadInput(
                        f"--{name} is for multi-axis tables (M-RoPE or vision RoPE): give "
                        "--rope-axes, or a --rope-config of such a model"
                    )
            if (
                spec.ids is not None
            ):  # a 1-D table's positions, one entry per run (OmniGen's padded rows)
                if spec.offset:
                    raise BadInput("--ids gives every row's position: drop --offset")
                if ids_tokens(spec.ids, 1)[1] != (1,):
                    raise BadInput(f"--ids {spec.ids}: a 1-D table takes whole positions")
            return
        if spec.ids is not None:
            if spec.grid is not None or spec.offset or spec.merge != 1:
                raise BadInput(
                    "--ids gives every token's positions: drop --grid, --offset and --merge"
                )
            numerators, denominators, _ = ids_tokens(spec.ids, len(style.axes))
            if any(q != 1 for q in denominators):
                raise BadInput(
                    f"--ids {spec.ids}: --rope-axes {style.name} takes whole positions (fractional ones "
                    "are for diffusers' split layouts)"
                )
        elif style.vision and spec.grid is None:
            raise BadInput(
                f"--rope-axes {style.name} ({'x'.join(style.axes)}) needs a --grid of patches"
            )
        if spec.merge != 1 and not style.merged:
            raise BadInput(f"--merge: --rope-axes {style.name} does not merge patches")
        if spec.convention != style.convention:
            raise BadInput(
                f"--rope-axes {style.name} pairs its columns {style.convention}, "
                f"not {spec.convention}"
            )
        if kind not in ("default", "axial") and style.vision:
            raise BadInput(f"a vision encoder's RoPE takes no rope_type {kind}")
        if spec.arithmetic != "cos-sin":
            raise BadInput("--rope-arithmetic polar is for 1-D tables")
        if spec.grid is not None:
            grid_shape(spec)
        axes_plan(spec)

    @staticmethod
    def _check_split(spec, style, kind: str) -> None:
        rope = dict(spec.rope)
        if "fps" in rope and spec.axes not in ("cosmos", "cosmos3", "ltx-video", "ltx2"):
            raise BadInput(
                "rope parameter fps is Cosmos's and LTX-Video's frame rate: it needs --rope-axes "
                "cosmos, cosmos3, ltx-video or ltx2 (their --preset)"
            )
        segments = [key for key in ("sound_tokens", "action_tokens", "sound_fps") if key in rope]
        if segments and (
            spec.axes != "cosmos3"
            or spec.ids is not None
            or spec.grid is None
            or len(grid_shape(spec)) != 3
        ):
            raise BadInput(
                f"rope parameter {segments[0]} is Cosmos 3's: its sound and action tokens follow a "
                "video, --preset cosmos3 --grid FxHxW"
            )
        if "sound_fps" in rope and not ("sound_tokens" in rope and "fps" in rope):
            raise BadInput(
                "rope parameter sound_fps is the rate of Cosmos 3's fps-modulated sound tokens: it needs "
                "sound_tokens and fps"
            )
        if any(rope.get(key, 1) < 1 for key in ("sound_tokens", "action_tokens")):
            raise BadInput(
                "rope parameters sound_tokens and action_tokens count tokens: each at least 1"
            )
        if "freqs_scaling" in rope and (style is None or style.torch_law is not _kandinsky_law):
            raise BadInput(
                "rope parameter freqs_scaling is Kandinsky 6's audio_freqs_scaling: it needs --rope-axes "
                "kandinsky5-text (--preset kandinsky6-text) or kandinsky5"
            )
        if "axes_scale" in rope:
            if style is None or not style.angle_scale:
                raise BadInput(
                    "rope parameter axes_scale is Kandinsky 5's scale_factor: it needs --rope-axes "
                    "kandinsky5 (--preset kandinsky5)"
                )
            if len(rope["axes_scale"]) != len(split_laws(spec)):
                raise BadInput(
                    f"rope parameter axes_scale has {len(rope['axes_scale'])} values for "
                    f"{len(split_laws(spec))} axes"
                )
        if "pool" in rope:
            if style is None or not style.split:
                raise BadInput(
                    "rope parameter pool averages a diffusers multi-axis table over blocks (FramePack's "
                    "and Helios's history): it needs a split layout (--rope-axes split, or a --preset)"
                )
            if spec.part not in ("cos", "sin"):
                raise BadInput(
                    f"rope parameter pool averages cos and sin tables, not --part {spec.part}"
                )
            if not 1 <= len(split_laws(spec)) <= 3:
                raise BadInput(
                    f"rope parameter pool averages over 1 to 3 axes (avg_pool1d to avg_pool3d), "
                    f"not {len(split_laws(spec))}"
                )
            pool_blocks(spec)
        if rope.get("pool_unit"):
            if "pool" not in rope:
                raise BadInput(
                    "rope parameter pool_unit renormalises pooled blocks: give their sizes with pool"
                )
            if spec.convention != "single" or style.once:
                raise BadInput(
                    "rope parameter pool_unit renormalises a complex table's pooled values (AnyFlow-"
                    "FAR's avg_pool_complex): it needs a complex layout, --convention single"
                )
        if style is None or not style.split:
            if spec.padding_rows:
                raise BadInput(
                    "--padding-rows follows a diffusers multi-axis table's tokens (Lumina2's captions): "
                    "it needs a split layout (--rope-axes split, or a --preset)"
                )
            if spec.text_tokens:
                raise BadInput(
                    "--text-tokens gives the tokens of a multi-axis table (--rope-axes, or a --preset)"
                )
            for key in ("axes_dim", "axes_theta"):
                if key in rope:
                    raise BadInput(
                        f"rope parameter {key} splits the head over position axes: it needs a "
                        "split layout (--rope-axes split, or a --preset)"
                    )
            return
        if spec.variant not in ("exact", "diffusers"):
            raise BadInput(
                f"--rope-axes {style.name} is diffusers' layout: --variant diffusers (or exact)"
            )
        if style.convention is not None and spec.convention not in (
            style.convention,
            *["single"][: style.once],
        ):
            also = " (or once each: --convention single)" if style.once else ""
            raise BadInput(
                f"--rope-axes {style.name} pairs its columns {style.convention}{also}, "
                f"not {spec.convention}"
            )
        if kind not in ("default", "linear"):
            raise BadInput(
                f"--rope-axes {style.name} takes rope_type default or linear, not {kind}"
            )
        if style.torch_law and spec.freqs_dtype not in (None, *style.law_dtypes):
            raise BadInput(
                f"--rope-axes {style.name} computes its frequencies in {' or '.join(style.law_dtypes)} (as "
                f"its model does): --freqs-dtype {spec.freqs_dtype} does not apply to it"
            )
        if (style.law or style.torch_law) and (kind == "linear" or "ntk_factor" in rope):
            raise BadInput(
                f"--rope-axes {style.name} computes its frequencies its own way (as its model does): "
                "rope_type linear and ntk_factor do not apply to it"
            )
        if spec.offset:
            raise BadInput("--offset: a split layout's positions come from --grid or --ids")
        if spec.ids is not None and (spec.grid is not None or spec.text_tokens):
            raise BadInput("--ids gives every token's positions: drop --grid and --text-tokens")
        if not all(dim for dim, _ in split_laws(spec)) and style.law is not _ltx_law:
            raise BadInput(
                "axes_dim 0, an axis that takes no columns, is for LTX-2's cross-attention (--preset "
                "ltx2-cross)"
            )
        covered = sum(dim for dim, _ in split_laws(spec))
        if covered != spec.d_model:
            raise BadInput(
                f"axes_dim {','.join(str(d) for d, _ in split_laws(spec))} covers {covered} "
                f"columns of the head dim {spec.d_model}: they must add up to it"
            )
        split_tokens(spec)

    def _vector(self, spec) -> bool:
        return spec.part == "inv_freq"

    def rows(self, spec):
        if self._vector(spec):
            return 1
        if spec.axes and AXES[spec.axes].split:
            return _token_rows(spec) + spec.padding_rows
        if spec.ids is not None:
            return len(ids_tokens(spec.ids, len(AXES[spec.axes].axes) if spec.axes else 1)[0])
        if spec.axes and spec.grid is not None:
            return math.prod(grid_shape(spec))
        return spec.seq_len

    def cols(self, spec):
        if spec.axes:
            laws, columns = axes_plan(spec)
            if self._vector(spec):
                return sum((dim + 1) // 2 for dim, _ in laws)
            return len(columns) * (2 if spec.part == "rotation" else 1)
        n = frequency_count(spec.d_model, dict(spec.rope))
        return (
            n
            if self._vector(spec) or spec.convention == "single"
            else 2 * n * (2 if spec.part == "rotation" else 1)
        )

    def dims(self, spec):
        return (self.cols(spec),) if self._vector(spec) else super().dims(spec)

    def frequencies(self, spec):
        rope = dict(spec.rope)
        if (
            spec.axes
        ):  # the style's power laws over their own dims, M-RoPE's partial factor included
            rope.pop("partial_rotary_factor", None)
            laws, _ = axes_plan(spec)
            if not AXES[spec.axes].split:
                return rope_frequencies(laws[0][0], spec.base, rope, positions_end(spec))
            frequencies = []
            with context():  # an axis at positions k / (q * divisor): integers k at frequencies w / (q * divisor)
                for law, q, divisor in zip(
                    law_frequencies(spec), split_tokens(spec)[1], divisors(spec)
                ):
                    frequencies += [w / q / Decimal(repr(divisor)) for w in law]
            return frequencies, Decimal(1)
        return rope_frequencies(spec.d_model, spec.base, rope, positions_end(spec))

    def exact_rows(self, spec, start, stop, work):
        if self._vector(spec):
            from ..numerics.sinusoids import round_decimals

            return round_decimals(work.sinusoids.frequencies, spec.dtype)
        if spec.padding_rows and stop > _token_rows(
            spec
        ):  # zeros after the tokens (Lumina2's captions)
            table = work.zeros(stop - start, self.cols(spec))
            tokens = max(_token_rows(spec) - start, 0)
            if tokens:
                table[:tokens] = self.exact_rows(spec, start, start + tokens, work)
            return table
        if spec.axes:
            import numpy as np

            _, columns = axes_plan(spec)
            blocks = pool_blocks(spec) if AXES[spec.axes].split else None
            if blocks is not None:  # each axis's sinusoids averaged over its blocks
                found = [
                    work.means(b[start:stop], dict(spec.rope).get("pool_unit", False))
                    for b in blocks
                ]
            else:
                positions = axes_positions(spec, start, stop)
                made = work.angles if spec.part == "angle" else work.planes
                found = [made(positions[:, a].tolist()) for a in range(positions.shape[1])]
            axis, frequency = (np.array(c) for c in zip(*columns))

            def plane(k):  # (rows, axes, n) of sin (k = 0) or cos, each column's axis and frequency
                return np.stack([f[k] for f in found], axis=1)[:, axis, frequency]

            return _part(
                spec.part,
                lambda: plane(1),
                lambda: plane(0),
                lambda: np.stack(found, axis=1)[:, axis, frequency],
            )
        positions = line_positions(spec, start, stop).tolist()
        if spec.part == "angle":
            return _lay_out(work.angles(positions), spec.convention)
        sin, cos = work.planes(positions)
        return _part(
            spec.part,
            lambda: _lay_out(cos, spec.convention),
            lambda: _lay_out(sin, spec.convention),
            None,
        )

    def fast_columns(self, spec):
        if (
            self._vector(spec)
            or spec.axes
            or spec.ids is not None
            or spec.part in ("rotation", "angle")
        ):
            return None
        import numpy as np

        from ..numerics.fast import Columns

        n = frequency_count(
            spec.d_model, dict(spec.rope)
        )  # the kernel fills [sin | cos]; laid out after
        return Columns(
            2 * n,
            np.arange(n, dtype=np.int32),
            np.arange(n, 2 * n, dtype=np.int32),
            np.empty(0, dtype=np.int32),
        )

    def fast_finish(self, spec, block, start, stop):
        n = block.shape[1] // 2
        plane = block[:, n:] if spec.part == "cos" else block[:, :n]
        return _lay_out(plane, spec.convention)

    def settings(self, spec):
        if spec.axes and AXES[spec.axes].split:
            names = axis_names(spec)
            where = "then" if AXES[spec.axes].text_after else "after"
            text = f", {where} {spec.text_tokens} text tokens" if spec.text_tokens else ""
            if spec.ids:
                positions = f"ids {spec.ids} ({' x '.join(names)})"
            else:
                covered = names[: len(names) - AXES[spec.axes].trailing][-len(grid_shape(spec)) :]
                positions = f"grid {spec.grid} ({' x '.join(covered)}{text})"
            positions += f", then {spec.padding_rows} rows of zeros" if spec.padding_rows else ""
        elif spec.axes and spec.ids is not None:
            positions = f"ids {spec.ids} ({' x '.join(AXES[spec.axes].axes)})"
        elif spec.axes and spec.grid is not None:
            style = AXES[spec.axes]
            merged = f", {spec.merge}x{spec.merge} merge blocks" if spec.merge > 1 else ""
            offset = f", + {spec.offset}" if spec.offset else ""
            positions = f"grid {spec.grid} ({' x '.join(style.axes)}{merged}{offset})"
        elif spec.ids is not None:
            positions = f"ids {spec.ids}"
        else:
            positions = f"{spec.offset} .. {spec.last_position}"
        return [
            *super().settings(spec),
            *(
                [("part", spec.part)] if spec.part == "angle" else []
            ),  # the one a match's name may not say
            ("base", f"{spec.base:g}"),
            ("positions", positions),
            ("rope", ", ".join(f"{k}={v}" for k, v in spec.rope) or "rope_type=default"),
            *([("axes", f"{spec.axes}: {AXES[spec.axes].summary}")] if spec.axes else []),
            *(
                [("arithmetic", spec.arithmetic)]
                if spec.variant != "exact" and spec.arithmetic != "cos-sin"
                else []
            ),
            *(
                [("freqs dtype", spec.freqs_dtype or "float32")]
                if spec.variant == "diffusers"
                else []
            ),
        ]

    def scaling(self, spec):
        rope = dict(spec.rope)
        kind = rope.get("rope_type", "default")
        plain = {k: v for k, v in rope.items() if k not in _SCALING}
        if kind in ("proportional", "axial"):  # a layout more than a scaling: kept, less its factor
            plain["rope_type"] = kind
        original, longest = (
            rope.get("original_max_position_embeddings"),
            rope.get("max_position_embeddings"),
        )
        if kind == "dynamic":  # max_position_embeddings is where the scaling starts
            original, longest = longest, None
        marks = [(original, "original context")] if original else []
        if longest and longest != original:
            marks.append((longest, "scaled context" if original else "context"))
        elif original and rope.get("factor"):
            marks.append((original * rope["factor"], "scaled context (original x factor)"))
        return (spec.replace(rope=plain) if plain != rope else None), marks

    def row_label(self, spec):
        if self._vector(spec):
            return lambda i: "-"
        if spec.axes and AXES[spec.axes].split:  # a token's position on each axis
            positions = split_positions(spec)
            return lambda i: (
                "({})".format(",".join(f"{p:g}" for p in positions[i]))
                if i < len(positions)
                else "pad"
            )
        ids = line_ids(spec)
        if ids is not None:
            return lambda i: str(ids[i])
        return super().row_label(spec)

    def row_norm(self, spec):
        """A rotation part's rows: each frequency's [[cos, -sin], [sin, cos]] times the
        attention factor a, 2 a^2 each: a * sqrt(d/2) over d columns. A cos, sin or angle part
        alone has no such norm."""
        if spec.part != "rotation":
            return None
        _, attention = self.frequencies(spec)
        value = float(attention) * math.sqrt(self.cols(spec) / 2)
        return Norm(value, "sqrt(d/2) x attention factor", "d/4 2x2 rotations")

    def facts(self, spec):
        frequencies, attention = self.frequencies(spec)
        split = spec.axes and AXES[spec.axes].split
        if split:  # per unit of position, as the model has them (the kernel's are per step)
            frequencies = [w for law in law_frequencies(spec) for w in law]

        def out(c):  # a layout column's columns in the table (two of a rotation part's)
            return [2 * c, 2 * c + 1] if spec.part == "rotation" else [c]

        if spec.axes:  # each frequency's columns, by position axis
            names = axis_names(spec)
            where: dict = {}
            for c, (axis, i) in enumerate(axes_plan(spec)[1]):
                where.setdefault(i, {}).setdefault(names[axis], []).extend(out(c))
            placed = {
                i: {axis: ", ".join(map(str, cs)) for axis, cs in found.items()}
                for i, found in where.items()
            }
        else:
            columns = range(2 * len(frequencies))
            first, second = (columns[pair] for pair in _pairs(len(frequencies), spec.convention))
            placed = {i: sorted({*out(first[i]), *out(second[i])}) for i in range(len(frequencies))}
        positions = (
            split_positions(spec)
            if split
            else axes_positions(spec)
            if spec.axes and (spec.grid is not None or spec.ids is not None)
            else line_ids(spec)
        )
        return {
            "attention_factor": float(attention),
            "frequencies": []
            if self._vector(spec)
            else [
                {
                    "index": i,
                    "columns": placed.get(i, []),
                    "frequency": float(w),
                    # a zero frequency (proportional RoPE's unrotated tail) never turns
                    "wavelength": 2 * math.pi / float(w) if w else None,
                }
                for i, w in enumerate(frequencies)
            ],
            "positions": [spec.offset, spec.last_position]
            if positions is None
            else [float(positions.min()), float(positions.max())]
            if split
            else [int(positions.min()), int(positions.max())],
        }

    def prefix(self, spec, rows):
        # dynamic NTK and LongRoPE choose their frequencies by the table's length
        if (
            spec.axes
            or spec.ids is not None
            or dict(spec.rope).get("rope_type") in ("dynamic", "longrope")
        ):
            return None
        return spec.replace(seq_len=rows)

    def candidates(self, values, dtype, notes, bench):
        """A cos or sin part starting at position 0 (after rows at position 0 where a batch
        padded the prompt, as OmniGen's: --ids): its pairing, attention factor, theta and
        scaling (linear, llama3, YaRN or LongRoPE) fitted from the angles; each in the exact
        table, transformers' arithmetic and its polar one."""
        import numpy as np

        split = [c for c in self._split_candidates(values, notes, bench) if c is not None]
        if not any(c.difference.max_abs <= _RUNS_NEAR for c in split):
            split += self._padded_candidates(values, notes, bench)
        yield from split
        if any(
            len(split_laws(c.spec)) > 1 for c in split
        ):  # a multi-axis table: its first columns need
            return  # not turn, nor follow one law (a one-axis preset's table is also a 1-D one)
        same = np.all(values == values[:1], axis=1)
        lead = (
            max(int(np.argmin(same)) - 1, 0) if not same.all() else 0
        )  # rows before the table's own 0
        values = values[lead:]
        rows, cols = values.shape
        if rows < 3:
            return
        duplicated, angles = False, _angles(values)
        for convention in self.conventions:
            if convention == "single":
                if duplicated:  # a two-column layout explained it
                    continue
                n = cols
            elif cols % 2:
                continue
            else:
                n = cols // 2
            first, second = _pairs(n, convention)
            plane, twin = values[:, first], values[:, second]
            if not np.array_equal(plane, twin):
                continue
            duplicated = duplicated or convention != "single"
            # a first row of zeros past 1 reads as angles and as sin times a factor: the notes of a
            # reading are the table's only where the angles made no candidate
            scratch, angled = [], False
            for part, attention, w, resolved in _readings(plane, angles, scratch):
                made = [
                    c
                    for c in self._fitted(
                        bench, plane, convention, part, attention, w, resolved, scratch, lead
                    )
                    if c is not None
                ]
                angled = angled or (part == "angle" and bool(made))
                if part == "angle":
                    scratch.clear()
                yield from made
            notes += [] if angled else [note for note in scratch if note not in notes]

    def _fitted(self, bench, plane, convention, part, attention, w, resolved, notes, lead: int = 0):
        """The candidates of fitted frequencies w (the `resolved` ones to 1e-3) of a plane (one
        column per frequency, positions 0 .. after `lead` rows at 0): each power law and scaling
        that explains them, exactly and in the libraries' arithmetic."""
        dtype, end = bench.dtype, bench.length - lead
        ids = f"{lead}*0; 0:{end}" if lead else None
        for dim, base, rope in _scalings(plane, dtype, w, resolved, attention, part, end, notes):
            spec = bench.spec(
                family=self.name,
                d_model=dim,
                seq_len=bench.length,
                base=base,
                rope=rope,
                convention=convention,
                part=part,
                ids=ids,
                dtype="float64",
            )
            if spec is None:
                continue
            reference = bench.reference(spec)
            yield bench.candidate(f"rope {part}, {convention} pairing", spec, reference=reference)
            yield from bench.libraries(spec, reference)
            if dtype == "float32" and part != "angle":
                polar = bench.spec(
                    **{
                        **asdict(spec),
                        "variant": "hf-rope",
                        "arithmetic": "polar",
                        "dtype": "float32",
                    }
                )
                if polar is not None:
                    yield bench.candidate(
                        "library hf-rope, polar", polar, VARIANTS["hf-rope"].source, reference
                    )

    @staticmethod
    def _preset_candidates(bench, name, preset, part, spec):
        """The preset's exact table and its library variants, in each dtype its own law
        computes frequencies in (LTX-2: its double precision, and float32 without it)."""
        reference = bench.reference(spec)
        yield bench.candidate(f"preset {name}, {part}", spec, preset.summary, reference)
        yield from bench.libraries(spec, reference)
        for dtype in AXES[preset.axes].law_dtypes if AXES[preset.axes].torch_law else ():
            other = (
                None
                if dtype == spec.freqs_dtype
                else bench.spec(**{**asdict(spec), "freqs_dtype": dtype})
            )
            if other is not None:
                yield from bench.libraries(other, reference)

    def _padded_candidates(self, values, notes, bench) -> list:
        """A table whose last rows are zeros (Lumina2's caption table for a short prompt): what
        its rows before them read as, with those zeros as --padding-rows."""
        zeros = bench.trailing_zero_rows()
        if not 0 < zeros < bench.length:
            return []
        head = bench.head(bench.length - zeros)
        found = []
        for c in self._split_candidates(values[: head.length], notes, head):
            padded = None if c is None else bench.spec(**{**asdict(c.spec), "padding_rows": zeros})
            found.append(None if padded is None else bench.candidate(c.name, padded, c.source))
        return [c for c in found if c is not None]

    def _split_candidates(self, values, notes, bench):
        """A preset's table: each axis's positions read back from its columns, then its tokens
        as text tokens and a grid of the preset's layout, scored as usual. Where none is found,
        whole positions (or halves to sixteenths) that make no grid, as --ids runs (a note says
        so where they are too many); where nothing is bit for bit, blocks of a pooled grid."""
        import numpy as np

        found, scattered, later, pooled, named = [], [], [], [], []
        rotation = _rotation_sin(values) is not None
        # (the spec's part, the part its columns are read as, that part's rows of the table's)
        views = (
            [("rotation", "sin", _rotation_sin)]
            if rotation
            else [
                (p, p, lambda v: v) for p in ("cos", "sin", "angle")[: 3 if _angles(values) else 2]
            ]
        )
        for (name, preset), convention in (
            (p, c)
            for p in PRESETS.items()
            for c in (p[1].convention, *["single"][: AXES[p[1].axes].once])
        ):
            width = preset.head_dim // (2 if convention == "single" else 1) * (2 if rotation else 1)
            if width != values.shape[1]:
                continue
            style = AXES[preset.axes]
            point = "x".join(["1"] * (len(preset.axes_dim) - style.trailing))  # one token
            work = [(extra, view) for extra in preset.tries for view in views]
            while work:
                extra, (part, reading, view) = work.pop(0)
                spec = bench.spec(
                    family=self.name,
                    d_model=preset.head_dim,
                    base=preset.theta,
                    axes=preset.axes,
                    rope={**preset.rope, **extra},
                    convention=convention,
                    part=part,
                    grid=point,
                    freqs_dtype=preset.freqs_dtype,
                    dtype="float64",
                )
                if spec is None:
                    continue
                positions = _read_positions(view(values), spec, reading)
                if not np.all(np.isfinite(positions)):
                    continue

                def read_at(rows, spec=spec, reading=reading, view=view, positions=positions):
                    beyond = [
                        r for r in rows if r >= len(positions)
                    ]  # past the rows families fit from
                    seen = [positions[r] for r in rows if r < len(positions)]
                    more = (
                        _read_positions(view(bench.target.at(beyond)), spec, reading)
                        if beyond
                        else []
                    )
                    return seen + list(more)

                tokens = _as_grid(positions, spec, reading, bench.length, read_at)
                tails = (
                    style.read_tail(spec, bench.length, read_at)
                    if style.read_tail and not tokens
                    else ()
                )
                for tail, count in tails:  # Cosmos 3's sound and action tokens after the grid
                    tailed = bench.spec(**{**asdict(spec), "rope": {**dict(spec.rope), **tail}})
                    tokens = tailed and _as_grid(
                        positions, tailed, reading, bench.length - count, read_at
                    )
                    if tokens is not None:
                        spec = tailed
                        break
                if tokens is not None:
                    grid, text = tokens
                    spec = bench.spec(**{**asdict(spec), "grid": grid, "text_tokens": text})
                elif _whole(positions * np.array(divisors(spec))) and len(positions) > 1:
                    later.append(
                        (name, preset, part, spec, view, reading)
                    )  # whole positions that make no grid
                    continue
                else:  # a wrong theta or layout, fractions, Kandinsky 6's audio at some freqs_scaling, or pooled
                    if _denominators(positions * np.array(divisors(spec))) and len(positions) > 1:
                        later.append(
                            (name, preset, part, spec, view, reading)
                        )  # halves, quarters, ...
                    if part in ("cos", "sin") and not extra and len(positions) > 1:
                        pooled.append(
                            (name, preset, part, spec, view(values[:_POOL_LEADING]), reading)
                        )
                    if "freqs_scaling" not in extra:
                        work += [
                            ({**extra, "freqs_scaling": f}, (part, reading, view))
                            for f in _freqs_scalings(positions, style)
                        ]
                    continue
                if spec is None:
                    continue
                found.append(name)
                named += self._preset_candidates(bench, name, preset, part, spec)
        yield from named
        for name, preset, part, spec, view, reading in later if not found else ():
            runs = _read_runs(spec, bench, view, reading)  # every token's positions, as runs
            if runs is None:
                scattered.append(name)
                continue
            spec = bench.spec(**{**asdict(spec), "grid": None, "ids": runs})
            made = (
                []
                if spec is None
                else [c for c in self._preset_candidates(bench, name, preset, part, spec) if c]
            )
            if any(
                c.difference.max_abs <= _RUNS_NEAR for c in made
            ):  # else the wrong layout's whole readings
                found.append(name)
                named += made
                yield from made
        # a renormalised pooled table reads as its blocks' centres: pooling may be its library's table
        for name, preset, part, spec, seen, reading in (
            () if any(c and not c.difference.differing for c in named) else pooled
        ):
            for k in _POOLS:
                read = _read_pooled(spec, bench, seen, reading, k)
                spec_k = (
                    None
                    if read is None
                    else bench.spec(
                        **{
                            **asdict(spec),
                            "grid": None,
                            "ids": read[0],
                            "rope": (
                                *spec.rope,
                                ("pool", read[1]),
                                *[("pool_unit", True)][: read[2]],
                            ),
                        }
                    )
                )
                made = (
                    []
                    if spec_k is None
                    else [
                        c for c in self._preset_candidates(bench, name, preset, part, spec_k) if c
                    ]
                )
                if any(c.difference.max_abs <= _RUNS_NEAR for c in made):
                    found.append(name)
                    yield from made
                    break
        if scattered and not found:
            notes.append(
                f"the columns read as {' or '.join(dict.fromkeys(scattered))} RoPE at positions k/Q (Q = 1, "
                f"2, 4, 8 or 16), "
                f"but its tokens make more than {_MOST_RUNS} runs of grids and lines (give them with "
                "--ids to compare)"
            )


_MOST_RUNS = 64  # runs of tokens identification writes as --ids
_RUNS_NEAR = (
    1e-2  # a table named by runs is this near (float32 angles at large positions), else not offered
)


def _whole(positions) -> bool:
    import numpy as np

    return bool(np.all(np.abs(positions - np.round(positions)) < _CLOSE))


def _freqs_scalings(positions, style) -> list[float]:
    """Where a Kandinsky one-axis table's positions read as k * c (its frequencies times
    freqs_scaling c): c to 1 .. 7 significant digits, the values its config would give."""
    import numpy as np

    if style.torch_law is not _kandinsky_law or positions.shape[1] != 1 or len(positions) < 3:
        return []
    read = np.abs(positions[:, 0])
    c = float(read[1])
    if not (
        c > 0 and abs(c - 1) > _CLOSE and np.all(np.abs(read - c * np.arange(len(read))) < _CLOSE)
    ):
        return []
    return sorted({float(f"{c:.{digits}g}") for digits in range(1, 8)} - {1.0})


_FINEST = (
    16  # positions identification reads as fractions: over 2, 4, 8 or 16 (FLUX.3's rows at k/2)
)


def _denominators(positions) -> tuple[int, ...] | None:
    """Each axis's least power of two up to _FINEST over which its positions read whole; None
    where some axis has none."""
    found = []
    for axis in positions.T:
        q = next(
            (q for q in (1 << e for e in range(_FINEST.bit_length())) if _whole(axis * q)), None
        )
        if q is None:
            return None
        found.append(q)
    return tuple(found)


def _read_runs(spec, bench, view, reading) -> str | None:
    """Every token's positions read from the table, in blocks, as inline --ids runs (over each
    axis's divisor): integers over each axis's power of two; None where some token's are no
    such fractions or they make over _MOST_RUNS runs. A cos table tells each position only up
    to its sign: its runs are of signed positions with the same |p|, the same table."""
    import numpy as np

    scale = np.array(divisors(spec))
    found, denominators = [], (1,) * len(scale)
    for _, block in bench.target.blocks():
        found.append(
            _read_positions(view(block), spec, reading) * scale
        )  # the ids, before the divisors
        finer = _denominators(found[-1])
        if finer is None:
            return None
        denominators = tuple(max(q) for q in zip(denominators, finer))
    numerators = np.round(np.concatenate(found) * np.array(denominators))
    return runs_of(
        (np.abs(numerators) if reading == "cos" else numerators).astype(np.int64),
        _MOST_RUNS,
        denominators,
        unsigned=reading == "cos",
    )


_POOL_LEADING = 256  # leading rows a pooled reading is checked on before the whole table
_POOLS = (
    2,
    4,
    None,
)  # the blocks identification tries: FramePack's and Helios's 2x2x2 and 4x4x4; AnyFlow-FAR's
#                       renormalised ones (None), whose sizes it reads


def _read_pooled(
    spec, bench, values, reading: str, k: int | None
) -> tuple[str, tuple, bool] | None:
    """Where the table reads as the spec's (cos or sin) table averaged over blocks of k tokens
    on each axis (--rope pool, FramePack's and Helios's history), or with k None over blocks
    renormalised (pool_unit, AnyFlow-FAR's compressed frames): (its grid before pooling as one
    --ids run, the block sizes, whether renormalised); else None. A block of k steady positions
    from s is the table at its centre s + (k - 1)/2, times sin(k w/2) / (k sin(w/2)) unless
    renormalised (which leaves each axis's k in the spacing of its centres). An axis's last block
    may repeat its last position (replicate padding): which of k such blocks it is, is taken
    from how near each comes to the table's last row."""
    import numpy as np

    laws, columns = axes_plan(spec)
    unit = k is None
    if not 1 <= len(laws) <= 3 or (unit and spec.convention != "single"):
        return None
    frequencies = [float(w) for law in law_frequencies(spec) for w in law]
    w = np.array([frequencies[j] for _, j in columns])
    axis_of = np.array([a for a, _ in columns])
    with np.errstate(divide="ignore", invalid="ignore"):
        damping = 1.0 if unit else np.where(w > 0, np.sin(k * w / 2) / (k * np.sin(w / 2)), 1.0)
    if np.min(np.abs(damping)) < 0.1:
        return None

    def blocks_of(
        order,
    ):  # (first position, size) of blocks with these centres, all but the last steady
        size = k or (
            round(order[1] - order[0]) if len(order) > 1 else 1 + int(not _whole(order[:1]))
        )
        starts = order[:-1] - np.arange(len(order) - 1) * size - (size - 1) / 2
        if (
            size < 1
            or len(order) > 1
            and not (_whole(starts) and np.all(np.abs(starts - starts[0]) < _CLOSE))
        ):
            return None
        return (starts[0] if len(order) > 1 else None), size

    leading = _read_positions(values / damping, spec, reading)  # the leading rows first
    if any(blocks_of(_distinct(axis)) is None for axis in leading.T):
        return None
    centres = np.concatenate(
        [_read_positions(block / damping, spec, reading) for _, block in bench.target.blocks()]
    )
    orders = _row_major(centres)
    blocks = None if orders is None else [blocks_of(order) for order in orders]
    if blocks is None or None in blocks:
        return None
    last = bench.target.at([bench.target.rows - 1])[0]
    runs, sizes = [], []
    for axis, (order, (start, size)) in enumerate(zip(orders, blocks)):
        n = len(order)
        begins = [float(np.round(start))] if n > 1 else [order[0] - (size - 1) / 2, order[0]]
        mine = axis_of == axis

        # the last block from its first position, r positions then repeats
        def misfit(begin, r, size=size, n=n, mine=mine):
            at = (begin + size * (n - 1) + np.minimum(np.arange(size), r - 1))[:, None] * w[mine]
            cos, sin = np.cos(at).mean(axis=0), np.sin(at).mean(axis=0)
            mean = cos if reading == "cos" else sin
            return np.max(
                np.abs(mean / (np.hypot(cos, sin) if unit else 1.0) - last[mine]), initial=0.0
            )

        error, begin, r = min(
            (
                (misfit(b, r), b, r)
                for b in begins
                if _whole(np.array([b]))
                for r in range(1, size + 1)
            ),
            default=(np.inf, 0, 0),
        )
        if not error <= _RUNS_NEAR:
            return None
        begin = int(round(begin))
        runs.append(
            f"{begin}:{begin + size * (n - 1) + r}" if size * (n - 1) + r > 1 else str(begin)
        )
        sizes.append(size)
    return ",".join(runs), tuple(sizes), unit


def _readings(plane, angles: bool, notes: list):
    """What one column per frequency of a 1-D table starting at position 0 may be: (part,
    attention factor, fitted frequencies w, which of them are resolved to 1e-3). A first row of
    zeros is sin (times its factor) or, where values pass 1, the angles themselves."""
    import numpy as np

    rows, n = plane.shape
    head = plane[0]
    if angles and not np.any(head):  # the angles: the last row's over its position
        w = plane[-1] / (rows - 1)
        yield "angle", 1.0, w, w * (rows - 1) >= 0.1
    if np.all(head == head[0]) and head[0] > 0:
        part, attention = "cos", float(head[0])
    elif not np.any(head):
        part, attention = "sin", float(np.max(np.abs(plane[:, 0])))
    else:
        return  # not starting at position 0: the fit assumes it does
    if not (0 < attention < np.inf):
        _still(notes)
        return
    inverse = np.arccos if part == "cos" else np.arcsin
    rough = inverse(np.clip(plane[1] / attention, -1, 1))
    at = np.clip(np.round(1 / np.maximum(rough, 1e-12)), 1, rows - 1).astype(int)
    w = inverse(np.clip(plane[at, np.arange(n)] / attention, -1, 1)) / at
    # only angles of at least 0.1 rad by row `at` say their frequency to 1e-3; below, float
    # rounding of cos near 1 (and a table shorter than a wavelength) hide it
    resolved = (w * at >= 0.1) & (w > 0)
    if not resolved[0]:  # a power law from w_0 = 1 (or 1/factor): its first pair must turn
        if not w[0] > 0:
            _still(notes)
        return
    yield part, attention, w, resolved


def _angles(values) -> bool:
    """A table that may be of angles: some value past 1 (or of cos or sin times a factor)."""
    import numpy as np

    return bool(np.nanmax(np.abs(values), initial=0) > 1 + 1e-6)


def _rotation_sin(values):
    """A rotation table's sin part (interleaved), where its columns are [cos, -sin, sin, cos]
    per pair; else None."""
    import numpy as np

    if values.shape[1] % 4 or not (
        np.array_equal(values[:, 0::4], values[:, 3::4])
        and np.array_equal(values[:, 1::4], -values[:, 2::4])
    ):
        return None
    sin = np.empty((values.shape[0], values.shape[1] // 2))
    sin[:, 0::2], sin[:, 1::2] = -values[:, 1::4], values[:, 2::4]
    return sin


def _read_positions(values, spec, part: str):
    """Each token's position on each axis of a split layout's (cos or sin) table, read from
    its columns from the lowest frequency up (each frequency's angle is taken in the turn
    nearest the estimate so far): (rows, axes), to about 1e-4. The lowest frequency's angle
    is known only up to its reflection (arccos: sign; arcsin: pi - angle); each reading is
    followed through, and the one whose values agree with the table better kept."""
    import numpy as np

    laws, columns = axes_plan(spec)
    frequencies = [float(w) for law in law_frequencies(spec) for w in law]
    first = {}
    for c, (_, j) in enumerate(columns):
        first.setdefault(j, c)
    function = np.cos if part == "cos" else np.sin
    found = np.zeros((values.shape[0], len(laws)))
    start = 0
    for axis, (dim, _) in enumerate(laws):
        order = sorted(
            (j for j in range(start, start + dim // 2) if frequencies[j] > 0),
            key=lambda j: frequencies[j],
        )
        start += dim // 2
        if not order:  # an axis that never turns says nothing of its positions
            continue
        if part == "angle":  # an angle table: the angle over its frequency, the highest's
            found[:, axis] = values[:, first[order[-1]]] / frequencies[order[-1]]
            continue
        w = np.array([frequencies[j] for j in order])
        seen = np.clip(values[:, [first[j] for j in order]], -1, 1)  # (rows, n)
        angles = np.arccos(seen) if part == "cos" else np.arcsin(seen)
        mirror = -angles if part == "cos" else np.pi - angles  # the other angle of the same value
        readings = []
        for begin in (angles[:, 0], mirror[:, 0]):
            estimate = begin / w[0]
            for i in range(1, len(w)):
                guess = estimate * w[i]
                near = angles[:, i] + 2 * np.pi * np.round((guess - angles[:, i]) / (2 * np.pi))
                far = mirror[:, i] + 2 * np.pi * np.round((guess - mirror[:, i]) / (2 * np.pi))
                estimate = np.where(np.abs(near - guess) <= np.abs(far - guess), near, far) / w[i]
            misfit = np.abs(function(estimate[:, None] * w[None, :]) - seen).sum(axis=1)
            readings.append((estimate, misfit))
        (one, one_misfit), (other, other_misfit) = readings
        found[:, axis] = np.where(one_misfit <= other_misfit, one, other)
    return found


_CLOSE = 1e-3  # positions read back within this are the same


def _as_grid(positions, spec, part: str, length: int, read_at):
    """(grid, text tokens) whose tokens are these positions (read from the first rows of a
    table of `length` rows), or None. Row-major, an axis's size is how many of its strides (the
    product of the inner axes' sizes) pass before its position returns to where it started;
    rows past those at hand are read with `read_at(rows)`. The layout then says where every
    token is, which must be where the first rows were read (up to sign in a cos table)."""
    import numpy as np

    style = AXES[spec.axes]
    covered = positions.shape[1] - style.trailing
    for text in _trailing_text(length, read_at) if style.text_after else _text_counts(positions):
        count = length - text
        first = 0 if style.text_after else text  # the grid's first row
        if count < 1 or first >= len(positions):
            continue
        start, shape, stride = positions[first], [], 1
        for a in range(covered - 1, 0, -1):
            sizes = [d for d in range(1, count // stride + 1) if count % (d * stride) == 0]
            found = read_at([first + d * stride for d in sizes if d * stride < count])
            back = [d for d, row in zip(sizes, found) if abs(row[a] - start[a]) < _CLOSE]
            if (
                a == covered - 1 and not split_laws(spec)[a][0]
            ):  # an axis without columns says nothing of
                # its size: the last one takes every row of its token's run (LTX-2's cross-attention: 1 x H*W)
                back = [d for d, row in zip(sizes, found) if np.any(np.abs(row - start) >= _CLOSE)][
                    :1
                ]
            size = back[0] if back else count // stride
            shape.insert(0, size)
            stride *= size
        if count % stride:
            continue
        shape.insert(0, count // stride)
        for lead in sorted(
            {0, next((a for a, size in enumerate(shape) if size > 1), covered - 1)}, reverse=True
        ):
            grid = "x".join(map(str, shape[lead:]))
            try:
                expected = split_positions(spec.replace(grid=grid, text_tokens=text))[
                    : len(positions)
                ]
            except BadInput:
                continue
            if part == "cos":  # cos tells a position only up to its sign
                expected = np.abs(expected)
            turning = [
                dim > 0 for dim, _ in split_laws(spec)
            ]  # the axes with columns tell their positions
            if len(expected) == len(positions) and np.all(
                np.abs(expected - positions)[:, turning] < _CLOSE
            ):
                return grid, text
    return None


_TAIL = 4096  # last rows read for the text tokens that follow a grid


def _trailing_text(length: int, read_at) -> list[int]:
    """Numbers of text tokens a table whose text follows the grid may end with: none, and the
    longest run of last rows that look like text tokens (`_text_like`), and one fewer."""
    import numpy as np

    rows = list(range(max(1, length - _TAIL), length))
    if not rows:  # one token: the grid's
        return [0]
    like = _text_like(np.asarray(read_at(rows)))[::-1]
    run = int(np.argmin(like)) if not like.all() else len(like)
    return sorted({0, run, max(run - 1, 0)}, reverse=True)


def _text_like(positions):
    """Rows whose nonzero positions are all the same (FLUX's text at 0, QwenImage's at m + k on
    every axis, Ovis-Image's (0, k, k)), or that are 0 but on one axis (FLUX.2's (0, 0, 0, l),
    ERNIE-Image's (k, 0, 0))."""
    import numpy as np

    size = np.abs(positions)
    zero = size < _CLOSE
    top = size.max(axis=1, keepdims=True)
    same = np.all(
        zero | (np.abs(positions - positions.max(axis=1, keepdims=True)) < _CLOSE), axis=1
    )
    return (same & np.all(zero | (np.abs(size - top) < _CLOSE), axis=1)) | (
        np.sum(~zero, axis=1) <= 1
    )


def _text_counts(positions) -> list[int]:
    """Numbers of text tokens the table may start with: 0, and each longest run of rows that
    look like text tokens (the same position on every axis: FLUX, QwenImage; k on one axis and
    0 on the others: FLUX.2, Lumina2; k on some, 0 on the rest: Ovis-Image), and one fewer (the
    grid's first token may look the same)."""
    import numpy as np

    k = positions.shape[1]
    index = np.arange(len(positions))
    looks = [np.all(np.abs(positions - positions[:, :1]) < _CLOSE, axis=1)]
    # Ovis-Image, LongCat-Image: (0, k, k), the nonzero axes equal and counting
    top = np.max(np.abs(positions), axis=1)
    looks.append(
        np.all((np.abs(positions) < _CLOSE) | (np.abs(positions - top[:, None]) < _CLOSE), axis=1)
        & (np.abs(top - top[0] - index) < _CLOSE)
    )
    for a in range(k):
        others = np.abs(np.delete(positions, a, axis=1)) < _CLOSE
        counting = (
            np.abs(np.abs(positions[:, a]) - np.abs(positions[0, a]) - index) < _CLOSE
        )  # from any start
        looks.append(np.all(others, axis=1) & counting)
    counts = {0}
    for same in looks:
        run = int(np.argmin(same)) if not same.all() else len(same)
        counts |= {run, max(run - 1, 0)}
    return sorted(counts, reverse=True)


def _still(notes: list) -> None:
    note = (
        "the first rotary column pair never turns (a zero frequency, as on an axis whose positions "
        "are all 0 in a multi-axis table): not a 1-D RoPE table"
    )
    if note not in notes:
        notes.append(note)


_BASES = (10000.0, 100000.0, 500000.0, 1000000.0, 5000000.0, 10000000.0)


def _dynamic(dim: int, base: float, rows: int) -> list:
    """Dynamic NTK settings among common values whose grown base (for a table of `rows`
    positions, longer than max_position_embeddings) is the fitted one."""
    if dim < 3:
        return []
    found = []
    for original in _ORIGINAL_LENGTHS:
        if original >= rows:
            continue
        for factor in _FACTORS:
            grown = (factor * rows / original - (factor - 1)) ** (dim / (dim - 2))
            for b in _BASES:
                if math.isclose(b * grown, base, rel_tol=1e-4):
                    found.append(
                        (
                            dim,
                            b,
                            {
                                "rope_type": "dynamic",
                                "factor": factor,
                                "max_position_embeddings": original,
                            },
                        )
                    )
    return found


# common values of the scaled rope_types' parameters, for the fit to choose among
_ORIGINAL_LENGTHS = (2048, 4096, 8192, 16384, 32768, 65536)
_FACTORS = (2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 128.0)


def _scalings(
    plane, dtype: str, w, resolved, attention: float, part: str, rows: int, notes: list
) -> list:
    """(rotary dim, base, rope parameters) that explain fitted frequencies w (the `resolved`
    ones to 1e-3) and the attention factor: plain, linear, or the llama3 and YaRN settings
    among common values whose exact frequencies fit; else LongRoPE's factors, read from the
    plane. The dim is 2n, or 2n - 1 (an odd rotary dim: transformers' arange(0, dim, 2) still
    gives n frequencies), whichever power law the frequencies follow. Empty, with a note,
    when none does."""
    import numpy as np

    n = len(w)
    fits = []
    for dim in (2 * n, 2 * n - 1) if n > 1 else (2 * n,):
        if n >= 2 and w[1] > 0 and w[0] > w[1]:
            base = float((w[0] / w[1]) ** (dim / 2))  # w_1 / w_0 = base**(-2/dim)
        else:
            base = 10000.0
        plain = w[0] * base ** (-2 * np.arange(n) / dim)
        fits.append((dim, base, w[resolved] / plain[resolved]))
    # both dims give the same power law (base^(1/dim) is what the table shows): the plain and
    # linear candidates are tried with each, the roundest base wins; scaled ones with 2n
    dim, base, ratio = fits[0]
    tolerance = 1e-3 if part == "cos" else 2e-2  # a sin table's peak only bounds its factor
    if len(ratio) == 0 or np.allclose(ratio, 1, rtol=1e-3):
        found = []
        for dim, base, _ in fits:
            if math.isclose(w[0], 1, rel_tol=1e-4):
                found += [(dim, b, {}) for b in plausible_bases(base) or [base]]
                found += _dynamic(dim, base, rows)
                continue
            factor = 1 / float(
                w[0]
            )  # w_0 = 1/factor: linear scaling, the roundest factors near the fit
            factors = sorted({float(f"{factor:.{k}g}") for k in (1, 2, 3, 4, 6)})
            found += [
                (dim, b, {"rope_type": "linear", "factor": f})
                for b in plausible_bases(base) or [base]
                for f in factors
                if math.isclose(f, factor, rel_tol=1e-3)
            ]
        return found
    trials = []
    # the lowest frequencies are divided by the whole factor when the table resolves them
    fitted = {float(f"{1 / ratio.min():.{k}g}") for k in (1, 2)}
    for original in _ORIGINAL_LENGTHS:
        for factor in sorted(set(_FACTORS) | fitted):
            trials.append(
                {
                    "rope_type": "llama3",
                    "factor": factor,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": original,
                }
            )
            for extra in ({}, {"truncate": False}, {"mscale": 1.0, "mscale_all_dim": 1.0}):
                trials.append(
                    {
                        "rope_type": "yarn",
                        "factor": factor,
                        "beta_fast": 32.0,
                        "beta_slow": 1.0,
                        "original_max_position_embeddings": original,
                        **extra,
                    }
                )
    found = []
    for b in plausible_bases(base) or [base]:
        for rope in trials:
            exact, factor = rope_frequencies(dim, b, rope, rows)
            if part != "angle" and not math.isclose(float(factor), attention, rel_tol=tolerance):
                continue
            mine = np.array([float(x) for x in exact])
            error = float(np.max(np.abs(mine[resolved] / w[resolved] - 1)))
            if error < 1e-3:
                found.append((error, b, rope))
    if not found:
        read = (
            _longrope(plane, part, attention, base, rows)
            if dtype == "float32" and part != "angle"
            else []
        )
        if not read:
            notes.append(
                f"rotary frequencies follow base {base:.6g} at the high end and are divided by up to "
                f"{1 / ratio.min():.4g} at the low end: a frequency-dependent scaling that no common "
                "llama3 or YaRN setting fits, nor LongRoPE factors in Hugging Face's float32 arithmetic "
                "(the only one they are read in); give its --rope parameters to compare exactly"
            )
        return read
    found.sort(key=lambda item: item[0])
    return [(dim, b, rope) for _, b, rope in found[:4]]


def _longrope(plane, part: str, attention: float, fitted: float, rows: int) -> list:
    """(rotary dim, base, LongRoPE parameters) of a float32 table in Hugging Face's arithmetic
    (Phi-3, OmniGen): the common (original length, factor) pairs whose attention factor it
    shows; each column's float32 frequencies read exactly from its values; each factor the
    shortest decimal whose float32 gives one of them, under the base (common, or round near
    the fit) whose factors are shortest. Every base explains the frequencies with some
    factors: the shortest ones are the config's. Empty where no column reading holds."""
    import torch

    n = plane.shape[1]
    tolerance = 1e-6 if part == "cos" else 2e-2  # a cos table's first row is the factor itself
    pairs: dict[float, list] = {}
    for original in _ORIGINAL_LENGTHS:
        for factor in _FACTORS:
            scale = _longrope_attention(factor, original)
            if math.isclose(scale, attention, rel_tol=tolerance):
                pairs.setdefault(scale, []).append((original, factor))
    bases = list(dict.fromkeys([*plausible_bases(fitted), *_BASES]))
    for scale in sorted(pairs, key=lambda s: abs(s - attention)):
        with one_thread(torch):
            read = _column_frequencies(torch, plane, part, scale)
            found = [
                (sum(digits for _, digits in factors), base, [f for f, _ in factors])
                for base in bases
                if (factors := _shortest_factors(torch, read, base, 2 * n)) is not None
            ]
        if not found:
            continue
        _, base, factors = min(found, key=lambda item: item[0])
        return [
            (
                2 * n,
                base,
                {
                    "rope_type": "longrope",
                    "original_max_position_embeddings": original,
                    "max_position_embeddings": int(original * factor),
                    "long_factor" if rows > original else "short_factor": tuple(factors),
                },
            )
            for original, factor in pairs[scale]
        ]
    return []


_FIT_ROUNDS = 16  # rounds of a column's fit, at most (each a least squares over more rows)
_READ_ROWS = 64  # a column's last rows, which tell its frequency best, try every candidate first
_WIDEST = (
    1 << 16
)  # float32 frequencies tried each side of a column's bounds' middle, at most, one by one
_SAMPLES = 1 << 12  # else frequencies sampled over its bounds, to find one that holds
_CHUNK = 1 << 22  # elements of candidate columns computed at once
_LARGEST = 0x7F7FFFFF  # float32's largest finite value, as bits
_TINIEST = 2.0**-149  # its smallest positive one
_HUGE = 1e38  # the largest factor tried


def _column_frequencies(torch, plane, part: str, scale: float) -> list | None:
    """Each column's float32 frequencies w that give its values bit for bit as Hugging Face
    computes them, (p * w).cos() * scale in float32: runs (first, last) of consecutive float32
    bit patterns; None where a column has none. Every value within its bounds
    (_frequency_bounds) is tried; where they are wide (a column that barely turns), a sample of
    them, narrowed around the one that misses fewest values until one holds, then its run is
    followed to its ends."""
    import numpy as np

    rows, n = plane.shape
    if rows < 2:
        return None
    positions = torch.arange(rows)[:, None].float()
    target = torch.from_numpy(plane.astype(np.float32))
    found = []
    for i in range(n):

        def misses(
            bits, first=0, column=i
        ):  # values from row `first` each frequency (float32 bits) misses
            if not len(bits):
                return np.zeros(0, np.int64)
            tried = torch.from_numpy(np.asarray(bits, np.int32).view(np.float32))
            at, values = positions[first:], target[first:, column, None]
            step = max(1, _CHUNK // len(at))
            return torch.cat(
                [
                    (_hf_part(at * tried[None, k : k + step], part, scale) != values).sum(dim=0)
                    for k in range(0, len(tried), step)
                ]
            ).numpy()

        def holds(bits):  # the last rows, which tell most, first
            bits = np.asarray(bits)
            kept = misses(bits, max(0, rows - _READ_ROWS)) == 0
            kept[kept] = misses(bits[kept]) == 0
            return kept

        bounds = _frequency_bounds(plane[:, i], part, scale)
        if bounds is None or not bounds[1] < FORMATS["float32"].max_value:
            return None
        low, high = (int(np.float32(b).view(np.int32)) for b in bounds)
        low, high = max(1, low - 1), min(_LARGEST, high + 1)
        if high - low <= 2 * _WIDEST:
            bits = np.arange(low, high + 1)
            good = bits[holds(bits)]
            if not len(good):
                return None
            breaks = np.flatnonzero(np.diff(good) > 1)
            found.append(
                list(
                    zip(
                        good[np.r_[0, breaks + 1]].tolist(),
                        good[np.r_[breaks, len(good) - 1]].tolist(),
                    )
                )
            )
            continue
        while True:
            bits = np.unique(np.linspace(low, high, _SAMPLES).astype(np.int64))
            missed = misses(bits)
            if not missed.min() == 0 and len(bits) < _SAMPLES:  # every value between tried
                return None
            if missed.min() == 0:
                break
            best = int(np.argmin(missed))
            low, high = int(bits[max(best - 2, 0)]), int(bits[min(best + 2, len(bits) - 1)])
        seed = int(bits[np.flatnonzero(missed == 0)[np.count_nonzero(missed == 0) // 2]])
        found.append([(_run_end(holds, seed, -1), _run_end(holds, seed, 1))])
    return found


def _run_end(holds, seed: int, direction: int) -> int:
    """The last float32 (as bits) from `seed` in `direction` before one that fails `holds`:
    steps doubling until one fails, then halving back."""
    good, step = seed, 1
    while True:
        bad = min(max(good + direction * step, 1), _LARGEST)
        if bad == good or not holds([bad])[0]:
            break
        good, step = bad, step * 2
    if bad == good:
        return good
    while abs(bad - good) > 1:
        middle = (good + bad) // 2
        if holds([middle])[0]:
            good = middle
        else:
            bad = middle
    return good


def _frequency_bounds(column, part: str, scale: float) -> tuple[float, float] | None:
    """Bounds on a column's frequency w: each row's value (give or take 3 ulps: the float32 cos
    or sin and the product with the factor) bounds its angle, on the branch a least squares fit
    of the rows' angles chooses (unwrapped by the fit so far, over 8 times the rows each round,
    from the first row whose angle is past half a radian), and the angle, p * w rounded to
    float32, bounds w. A row at a peak of cos or sin, whose branch its value cannot tell,
    bounds it from both sides of the peak. None where the bounds cross."""
    import numpy as np

    rows = len(column)
    value = column / scale
    spread = 3 * np.spacing(np.abs(column).astype(np.float32)).astype(np.float64) / scale
    inverse, limits = (
        (np.arccos, (0.0, np.pi)) if part == "cos" else (np.arcsin, (-np.pi / 2, np.pi / 2))
    )
    angle = inverse(np.clip(value, -1, 1))
    ends = [
        inverse(np.clip(value + d, -1, 1)) for d in (-spread, spread)
    ]  # the principal angle's bounds
    if part == "cos":  # low first: arccos falls as the value rises
        ends.reverse()
    branches = (angle, -angle) if part == "cos" else (angle, np.pi - angle)
    k = np.arange(rows, dtype=float)
    slope = np.sqrt(1 - np.clip(value, -1, 1) ** 2)
    # the first fit: the first principal angle past half a radian (before it none wraps), over
    # its position, or the last angle where none is
    past = np.flatnonzero(np.abs(angle[1:]) >= 0.5)
    start = int(past[0]) + 1 if len(past) else rows - 1
    w = float(np.abs(angle[start]) / start)
    used = int(min(rows, 8 * start))
    for _ in range(_FIT_ROUNDS):  # over every row, until the branches chosen hold still
        predicted = k * w
        near = [b + 2 * np.pi * np.round((predicted - b) / (2 * np.pi)) for b in branches]
        first = np.abs(near[0] - predicted) <= np.abs(near[1] - predicted)
        theta = np.where(first, near[0], near[1])
        weight = np.where(k < used, slope**2 * k, 0.0)
        total = float(np.sum(weight * k))
        if (
            not total > 0
        ):  # no value off a peak: nothing to fit, and (the angles small) no branch to choose
            break
        w, last = float(np.sum(weight * theta) / total), w
        if used == rows and w == last:
            break
        used = min(rows, used * 8)
    sign = np.where(first, 1.0, -1.0)  # the angle rises with the principal one on the first branch
    low, high = np.sort(
        [theta + sign * (ends[0] - angle), theta + sign * (ends[1] - angle)], axis=0
    )
    # a value that may be at a peak of cos or sin (the principal angle's bound reaches an end of
    # its range): the angle is within the far bound's distance of the peak, on either side
    for peak, reached, reach in (
        (limits[0], ends[0] <= limits[0], ends[1] - limits[0]),
        (limits[1], ends[1] >= limits[1], limits[1] - ends[0]),
    ):
        centre = peak + 2 * np.pi * np.round((theta - peak) / (2 * np.pi))
        low, high = np.where(reached, centre - reach, low), np.where(reached, centre + reach, high)
    margin = 2.0**-22  # the float32 angle: p * w within half an ulp
    bounds = (
        max(float(np.max(low[1:] / k[1:])) * (1 - margin), _TINIEST),
        float(np.min(high[1:] / k[1:])) * (1 + margin),
    )
    return bounds if bounds[0] <= bounds[1] else None


def _shortest_factors(torch, read, base: float, dim: int) -> list | None:
    """(factor, its significant digits) per column under `base`: the decimal with fewest
    digits (then the middle one of those) whose float32, in 1 / (factor * base**(2i/dim)),
    gives one of the column's frequencies read; None where a column has none."""
    import numpy as np

    if read is None:
        return None
    powers = base ** _hf_exponents(torch, dim)
    found = []
    for runs, power in zip(read, powers):
        starts, stops = (np.array(ends, np.int64) for ends in zip(*runs))
        w = np.array([starts[0], stops[-1]], np.int32).view(np.float32).astype(np.float64)
        low, high = sorted(1 / (w * float(power)))  # (a column that never turns: up to infinity)
        low, high = (
            low * (1 - 2**-20),
            min(high * (1 + 2**-20), _HUGE),
        )  # and the rounding of factor * power
        for digits in range(1, 10):  # 9 significant digits tell every float32 apart
            decimals = []
            for e in sorted({math.floor(math.log10(low)), math.floor(math.log10(high))}):
                shift = digits - 1 - e  # the decimals k / 10**shift, k of `digits` digits
                first = max(math.ceil(low * 10.0**shift), 10 ** (digits - 1))
                last = min(math.floor(high * 10.0**shift), 10**digits - 1)
                if last - first >= _SAMPLES:  # the middle ones
                    first = (first + last - _SAMPLES) // 2
                    last = first + _SAMPLES - 1
                ks = np.arange(first, last + 1, dtype=np.float64)
                decimals.append(ks / 10.0**shift if shift >= 0 else ks * 10.0**-shift)
            decimals = np.concatenate(decimals)
            made = _longrope_inv_freq(torch.from_numpy(decimals.astype(np.float32)), power).numpy()
            at = made.view(np.int32).astype(np.int64)
            run = np.searchsorted(starts, at, side="right") - 1
            hits = decimals[(run >= 0) & (at <= stops[np.maximum(run, 0)])]
            if len(hits):
                found.append((float(f"{hits[len(hits) // 2]:.{digits}g}"), digits))
                break
        else:
            return None
    return found


FAMILY = Rope()
