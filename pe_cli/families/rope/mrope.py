"""transformers' layouts of tables of several position axes: M-RoPE's (t, h, w) of image and
video tokens, and the (row, column) of a vision encoder's patches. Each column of such a table
takes one axis and one frequency; a model's recomposition of its frequencies is one entry here,
which says which, from the head dim and mrope_section (a --rope-config names it by its model
type)."""

from __future__ import annotations

from decimal import Decimal

from ...core.errors import BadInput
from .layouts import Law, Mrope, first_frequencies, split_laws
from .types import rope_frequencies, rotary_dim


def contiguous_axes(n, sections):  # frequency j takes the axis of the section holding it
    return [a for a, size in enumerate(sections) for _ in range(size)]


def qwen3_axes(n, sections):  # Qwen3-VL: h and w interleave with t, each up to 3 * its section
    _sizes(sections, 3, "Qwen3-VL's interleaved M-RoPE")
    return [
        1 if j % 3 == 1 and j < 3 * sections[1] else 2 if j % 3 == 2 and j < 3 * sections[2] else 0
        for j in range(n)
    ]


def _sizes(sections, count: int, what: str) -> None:
    if len(sections) != count:
        raise BadInput(
            f"{what} takes mrope_section as {count} sizes, one per axis, got {len(sections)}: "
            f"{','.join(map(str, sections))}"
        )


def _ernie(n, sections):  # ERNIE 4.5 VL: h, w alternate over the first s0 + s1, then t
    _sizes(sections, 3, "ERNIE 4.5 VL's M-RoPE")
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


_MROPE = dict(axes=("t", "h", "w"), dim=lambda d, rope: rotary_dim(d, rope))


_AXIAL = dict(axes=("row", "column"), dim=lambda d, rope: d // 2)

LAYOUTS = (
    Mrope(
        name="mrope",
        summary="Qwen2-VL's M-RoPE: contiguous t | h | w sections of the frequencies, doubled",
        columns=_doubled(contiguous_axes),
        **_MROPE,
    ),
    Mrope(
        name="mrope-glm",
        summary="GLM-4V's M-RoPE: contiguous sections, each frequency in two adjacent columns",
        columns=_repeated(contiguous_axes),
        convention="interleaved",
        **_MROPE,
    ),
    Mrope(
        name="mrope-interleaved",
        summary="Qwen3-VL's interleaved M-RoPE: t h w t h w ..., doubled",
        columns=_doubled(qwen3_axes),
        whole=False,
        **_MROPE,
    ),
    Mrope(
        name="mrope-ernie",
        summary="ERNIE 4.5 VL: h and w alternating, then t, each in two adjacent columns",
        columns=_repeated(_ernie),
        convention="interleaved",
        sections=lambda t, h, w: (h, w, t),  # h takes the even ones of the first h + w
        **_MROPE,
    ),
    Mrope(
        name="mrope-hunyuan",
        summary="HunYuan-VL: the doubled frequencies cut into one chunk per section",
        columns=_hunyuan,
        **_MROPE,
    ),
    Mrope(
        name="axial",
        summary="Qwen-VL vision encoders: rows then columns, doubled, patches in merge blocks",
        columns=_each_axis(0, 1),
        merged=True,
        **_AXIAL,
    ),
    Mrope(
        name="axial-column-first",
        summary="Step 3 vision: columns then rows, doubled",
        columns=_each_axis(1, 0),
        **_AXIAL,
    ),
    Mrope(
        name="axial-sam",
        summary="SAM 2, SAM 3, EdgeTAM: columns then rows, each frequency in two adjacent columns",
        columns=_each_axis_repeated(1, 0),
        convention="interleaved",
        **_AXIAL,
    ),
    Mrope(
        name="axial-kimi",
        summary="Kimi-K2.5 vision: column and row alternating per frequency, doubled",
        columns=lambda n, sections: [(axis, j) for j in range(n) for axis in (1, 0)] * 2,
        **_AXIAL,
    ),
    Mrope(
        name="axial-pixtral",
        summary="Pixtral: even frequencies on rows, odd on columns, doubled",
        axes=("row", "column"),
        dim=lambda d, rope: d,
        columns=lambda n, sections: (
            ([(0, j) for j in range(0, n, 2)] + [(1, j) for j in range(1, n, 2)]) * 2
        ),
    ),
    Mrope(
        name="axial-gemma",
        summary="Gemma 4 vision: columns doubled, then rows doubled (two rotated halves)",
        columns=lambda n, sections: [(1, j) for j in range(n)] * 2 + [(0, j) for j in range(n)] * 2,
        **_AXIAL,
    ),
    Mrope(
        name="axial-video",
        summary="MiniMax-M3-VL vision: frames, rows, columns on a third of the head each, doubled",
        axes=("t", "row", "column"),
        dim=lambda d, rope: 2 * ((d // 3) // 2),
        columns=_each_axis(0, 1, 2),
        merged=True,
    ),
)


# ---------------------------------------------------------------------------------------------
# Qwen3-VL's interleaved M-RoPE as a diffusion model lays it over its split axes (Cosmos 3): one
# power law over the whole head dim, frequency j on the axis qwen3_axes gives it with sections
# axes_dim / 2 (only the h and w sections count: t takes the rest), each axis's law its own
# frequencies in order.


def _split_axes(laws):
    """Qwen3-VL's interleaved M-RoPE over split axes of sections axes_dim / 2: frequency i of the
    one power law over the whole head dim on axis qwen3_axes's."""
    sections = [dim // 2 for dim, _ in laws]
    return qwen3_axes(sum(sections), sections)


def _interleaved_law(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    laws = split_laws(spec)
    every = rope_frequencies(sum(d for d, _ in laws), theta, {}, 0)[0]
    return [w for w, a in zip(every, _split_axes(laws)) if a == axis]


def _interleaved_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # Cosmos3VLTextRotaryEmbedding's inv_freq: float32 1 / theta**(arange(0, head dim, 2) / head
    # dim), each axis taking its own
    laws = split_laws(spec)
    head = sum(d for d, _ in laws)
    inv_freq = 1.0 / (theta ** (torch.arange(0, head, 2, dtype=torch.float32) / head))
    return inv_freq[torch.tensor([a == axis for a in _split_axes(laws)])]


def interleaved_columns(laws, convention):
    """Column i takes frequency i on its axis (frequency j counting through the axes' own
    lists), doubled: cat((freqs, freqs))."""
    firsts = first_frequencies(laws)
    seen = [0] * len(laws)
    columns = []
    for axis in _split_axes(laws):
        columns.append((axis, firsts[axis] + seen[axis]))
        seen[axis] += 1
    return columns * 2


INTERLEAVED_LAW = Law(torch=_interleaved_torch_law, exact=_interleaved_law)
