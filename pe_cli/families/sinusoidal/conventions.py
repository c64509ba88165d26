"""The sinusoidal family's conventions: which frequencies w_i = base**(-e_i) a table has, and
where sin(p*w_i) and cos(p*w_i) go among its d_model columns. Each convention is one entry in
CONVENTIONS beside its functions; the layouts are drawn for d = 6 (three frequencies 0, 1, 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ...core.errors import BadInput


def _interleaved(out, sin, cos, d: int) -> None:
    # Vaswani et al. (2017): column 2i is sin, column 2i+1 is cos of the same angle;
    # for odd d the last column is a sin and the last cos is not used.
    #   [sin0, cos0, sin1, cos1, sin2, cos2]
    out[:, 0::2] = sin
    out[:, 1::2] = cos[:, : d // 2]


def _sin_then_cos(out, sin, cos, d: int) -> None:
    # Marian/Pegasus in Hugging Face: all sin columns (ceil(d/2)) first, then the cos columns.
    #   [sin0, sin1, sin2, cos0, cos1, cos2]
    half = sin.shape[1]
    out[:, :half] = sin
    out[:, half:] = cos[:, : d - half]


def _sin_cos_zero(out, sin, cos, d: int) -> None:
    # tensor2tensor's get_timing_signal_1d and its descendants: [sin | cos], then a zero
    # column when d is odd.
    #   [sin0, sin1, sin2, cos0, cos1, cos2]; d = 7: [sin0, sin1, sin2, cos0, cos1, cos2, 0]
    n = sin.shape[1]
    out[:, :n] = sin
    out[:, n : 2 * n] = cos
    out[:, 2 * n :] = 0


def _cos_sin_zero(out, sin, cos, d: int) -> None:
    # MusicGen and diffusion timestep embeddings (flip_sin_to_cos): [cos | sin], then a zero
    # column when d is odd.
    #   [cos0, cos1, cos2, sin0, sin1, sin2]; d = 7: [cos0, cos1, cos2, sin0, sin1, sin2, 0]
    n = sin.shape[1]
    out[:, :n] = cos
    out[:, n : 2 * n] = sin
    out[:, 2 * n :] = 0


def _position_sin_cos(out, sin, cos, d: int) -> None:
    # NeRF-style Fourier features as diffusers' Shap-E writes them (posenc_nerf of a 1-D
    # position): the position itself, all sin columns, then all cos columns; column 0 is the
    # family's to fill (Convention.position_column).
    #   d = 7: [x, sin0, sin1, sin2, cos0, cos1, cos2], w_k = 2^k; d = 8: then a zero column
    n = sin.shape[1]
    out[:, 1 : 1 + n] = sin
    out[:, 1 + n : 1 + 2 * n] = cos
    out[:, 1 + 2 * n :] = 0


def _octave_exponents(d: int) -> list[Fraction]:
    # w_k = 2^k for k < (d - 1) // 2: base 2 to the power -(-k)
    return [Fraction(-k) for k in range((d - 1) // 2)]


def _paper_exponents(d: int) -> list[Fraction]:
    # w_i = base^(-2i/d) for i < ceil(d/2)
    return [Fraction(2 * i, d) for i in range((d + 1) // 2)]


def _timescale_exponents(d: int) -> list[Fraction]:
    # w_i = exp(-i * ln(base) / max(n - 1, 1)) = base^(-i / max(n - 1, 1)), n = d // 2
    n = d // 2
    return [Fraction(i, max(n - 1, 1)) for i in range(n)]


def _half_exponents(d: int) -> list[Fraction]:
    # w_i = base^(-i / n), n = d // 2: diffusers' get_timestep_embedding with no frequency shift
    n = d // 2
    return [Fraction(i, n) for i in range(n)]


@dataclass(frozen=True)
class Convention:
    name: str
    summary: str
    exponents: Callable[[int], list[Fraction]]
    place: Callable
    min_d_model: int = 1
    even_only: bool = False
    padding: bool = False  # whether --padding-idx (a zeroed row) is part of the convention
    timescales: bool = False  # whether --min-timescale is part of the convention
    refusal: str = ""  # why d_model below the minimum or odd d cannot be served
    fixed_base: float | None = None  # the base its frequencies take whatever --base says
    position_column: bool = False  # column 0 holds each row's position itself

    def columns(self, d_model: int):
        """Where each frequency lands (numerics.fast.Columns: its sin column, its cos column or
        -1, and the columns that stay zero); found by laying out the frequency indices
        themselves."""
        import numpy as np

        from ...numerics.fast import Columns

        n = len(self.exponents(d_model))
        index = np.arange(1, n + 1, dtype=np.float64)[None, :]
        layout = np.zeros((1, d_model))
        self.place(layout, index, -index, d_model)
        sin_col = np.full(n, -1, dtype=np.int32)
        cos_col = np.full(n, -1, dtype=np.int32)
        for column, value in enumerate(layout[0].astype(int).tolist()):
            if value > 0:
                sin_col[value - 1] = column
            elif value < 0:
                cos_col[-value - 1] = column
        zero_col = np.flatnonzero(layout[0] == 0).astype(np.int32)
        return Columns(d_model, sin_col, cos_col, zero_col)

    def check(self, d_model: int) -> None:
        if d_model < self.min_d_model or (self.even_only and d_model % 2):
            raise BadInput(f"convention {self.name!r} {self.refusal} (got --d-model {d_model})")


CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            "vaswani",
            "interleaved sin/cos, w_i = base^(-2i/d) (the paper; the seeds)",
            _paper_exponents,
            _interleaved,
        ),
        Convention(
            "concat",
            "[sin | cos] with the paper's frequencies (Hugging Face Marian, Pegasus)",
            _paper_exponents,
            _sin_then_cos,
        ),
        Convention(
            "tensor2tensor",
            "[sin | cos (| 0)], w_i = base^(-i/max(d//2-1, 1)) (the authors' own code)",
            _timescale_exponents,
            _sin_cos_zero,
            timescales=True,
        ),
        Convention(
            "fairseq",
            "tensor2tensor's table with an optional zeroed padding row (fairseq, M2M100, Speech2Text)",
            _timescale_exponents,
            _sin_cos_zero,
            min_d_model=4,
            padding=True,
            refusal="needs --d-model >= 4: fairseq divides by d//2 - 1",
        ),
        Convention(
            "whisper",
            "tensor2tensor's table for even d >= 4 (OpenAI whisper's sinusoids)",
            _timescale_exponents,
            _sin_cos_zero,
            min_d_model=4,
            even_only=True,
            refusal="needs an even --d-model >= 4: whisper asserts even channels and returns NaN for 2",
        ),
        Convention(
            "musicgen",
            "[cos | sin (| 0)] with tensor2tensor's frequencies (MusicGen, MusicGen-Melody)",
            _timescale_exponents,
            _cos_sin_zero,
            min_d_model=4,
            refusal="needs --d-model >= 4: MusicGen divides by d//2 - 1",
        ),
        Convention(
            "timestep",
            "[cos | sin (| 0)], w_i = base^(-i/(d//2)) (diffusion timestep embeddings with "
            "flip_sin_to_cos and no frequency shift: VibeVoice)",
            _half_exponents,
            _cos_sin_zero,
            min_d_model=2,
            refusal="needs --d-model >= 2",
        ),
        Convention(
            "nerf",
            "[x | sin | cos], w_k = 2^k (NeRF-style Fourier features of a position x, as "
            "diffusers' Shap-E posenc_nerf writes them; --base does not apply)",
            _octave_exponents,
            _position_sin_cos,
            min_d_model=3,
            fixed_base=2.0,
            position_column=True,
            refusal="needs --d-model >= 3: x, then a sin and a cos column",
        ),
    )
}
