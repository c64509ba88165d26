"""compare FILE on sinusoidal and timestep tables pe-cli's other tests leave out (issue 30): the
tables are made by diffusers itself, named bit for bit, and rebuilt byte for byte by the printed
generate command and by the --json spec; the exact tables they name, against mpmath."""

import json
import shlex

import mpmath
import numpy as np
import pytest
import torch
from diffusers.models.embeddings import get_timestep_embedding

import pe_cli
from tests.reference import round_to


def _named_and_rebuilt(cli, tmp_path, table) -> dict:
    """compare FILE's first candidate, bit for bit, after checking that both its printed
    generate command and its --json spec rebuild FILE's bytes."""
    np.save(tmp_path / "t.npy", table)
    code, out, err = cli("compare", tmp_path / "t.npy")
    assert code == 0, err
    printed = out.decode().split("rebuilt by:\n", 1)[1].split("\n")
    folded = printed[: next(k for k, line in enumerate(printed) if not line.endswith(" \\")) + 1]
    words = shlex.split(" ".join(line.removesuffix(" \\") for line in folded))
    assert words[:2] == ["pe-cli", "generate"]
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == (tmp_path / "t.npy").read_bytes()
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    best = found["candidates"][0]
    assert code == 0 and found["explained"] and best["differing"] == 0
    assert shlex.split(found["command"]) == words
    rebuilt = pe_cli.build(pe_cli.TableSpec(**_tuples(best["spec"]))).numpy()
    assert rebuilt.dtype == table.dtype and rebuilt.tobytes() == table.tobytes()
    return best


def _tuples(spec: dict) -> dict:
    """A --json spec's lists (rope's pairs) as the tuples a TableSpec holds."""

    def frozen(value):
        return tuple(frozen(v) for v in value) if isinstance(value, list) else value

    return {key: frozen(value) for key, value in spec.items()}


# ---------------------------------------------------------------------------------------------
# Fractional and scaled timesteps: QwenImage's and AuraFlow's time_proj (Timesteps(256, True,
# 0, scale=1000)) at sigmas k / 1000 in float32, and the T5 FiLM decoder's noise_time * 2000


def _time_proj(model: str):
    """The time_proj module of QwenImage's or AuraFlow's transformer (the smallest that builds)."""
    if model == "QwenImage":
        from diffusers.models.transformers.transformer_qwenimage import (
            QwenTimestepProjEmbeddings,
        )

        return QwenTimestepProjEmbeddings(64).time_proj
    from diffusers.models.transformers.auraflow_transformer_2d import AuraFlowTransformer2DModel

    return AuraFlowTransformer2DModel(
        sample_size=4,
        patch_size=2,
        in_channels=4,
        num_mmdit_layers=0,
        num_single_dit_layers=0,
        attention_head_dim=8,
        num_attention_heads=1,
        joint_attention_dim=8,
        caption_projection_dim=8,
        out_channels=4,
        pos_embed_max_size=4,
    ).time_step_embed


@pytest.mark.parametrize("model, order", [("QwenImage", "ascending"), ("AuraFlow", "descending")])
def test_time_proj_at_sigmas_is_named(cli, tmp_path, model, order):
    """Sigmas k / 1000 need 2^-33 (0.001) and 2^-24 (0.999): each timestep keeps its own
    binary places; ascending ones read as consecutive k until the scale is tried."""
    sigmas = torch.arange(1000) / 1000
    if order == "descending":
        sigmas = sigmas.flip(0)
    with torch.no_grad():
        table = _time_proj(model)(sigmas).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library diffusers" and best["spec"]["timestep_scale"] == 1000
    listed = np.array(best["spec"]["timesteps"].split(","), dtype=np.float64)
    assert np.array_equal(listed, sigmas.double().numpy())


def _t5_film_timesteps(noise_time: torch.Tensor, d_model: int = 128) -> torch.Tensor:
    """The timestep embedding diffusers' T5FilmDecoder conditions on (the input of its
    conditioning_emb), taken from the decoder itself at these noise times."""
    from diffusers.models.transformers.t5_film_transformer import T5FilmDecoder

    decoder = T5FilmDecoder(input_dims=2, targets_length=2, d_model=d_model, num_layers=0)
    seen = []

    class Seen(Exception):
        pass

    def catch(module, args):
        seen.append(args[0].clone())
        raise Seen

    decoder.conditioning_emb.register_forward_pre_hook(catch)
    with pytest.raises(Seen):
        decoder([], torch.zeros(len(noise_time), 2, 2), noise_time)
    return seen[0]


def test_t5_film_decoder_noise_time_is_named(cli, tmp_path):
    """noise_time t / 1000 of DDPM's 1000 steps, times max_decoder_noise_time 2000 in float32:
    ten of the products are not 2t; named as each row's float32 timestep at max_period 2000."""
    noise_time = torch.arange(999, -1, -1) / 1000
    table = _t5_film_timesteps(noise_time).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library diffusers"
    spec = best["spec"]
    assert spec["base"] == 2000 and spec["convention"] == "tensor2tensor"
    listed = np.array(spec["timesteps"].split(","), dtype=np.float64)
    assert np.array_equal(listed, (noise_time * 2000.0).double().numpy())
    assert np.count_nonzero(listed != 2 * np.arange(999, -1, -1)) > 0


def test_t5_film_decoder_at_a_schedule_is_a_range(cli, tmp_path):
    """Where every product is 2t (DDIM's 50 steps) the table is a range at max_period 2000."""
    table = _t5_film_timesteps(torch.arange(999, -1, -20) / 1000).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["timesteps"] == "1998:-2:-40" and best["spec"]["base"] == 2000


def test_timesteps_over_their_own_powers_of_two_are_correctly_rounded():
    """Exact tables at float32 timesteps whose binary places differ (2^-33 to 2^-13), scaled
    and not, against mpmath; float64 too, where the kernel's absolute error matters."""
    values = [0.0, 0.001, 0.5, 0.999, 2.0**-40, 1e-6, 1998.0001220703125]
    timesteps = ",".join(repr(float(np.float32(v))) for v in values)
    for scale, dtype in ((1000.0, "float32"), (1.0, "float64")):
        table = pe_cli.build(
            d_model=12,
            convention="timestep",
            timesteps=timesteps,
            timestep_scale=scale,
            dtype=dtype,
        ).numpy()
        half = 6
        for row, t in enumerate(values):
            with mpmath.workprec(200):
                t = mpmath.mpf(float(np.float32(t)))
                for i in range(half):
                    angle = scale * t * mpmath.power(10000, -mpmath.mpf(i) / half)
                    assert table[row, i] == round_to(mpmath.cos(angle), dtype), (row, i)
                    assert table[row, half + i] == round_to(mpmath.sin(angle), dtype), (row, i)


def test_timesteps_past_32_significant_bits_are_refused(cli):
    code, _, err = cli("generate", "--convention", "timestep", "--timesteps", "0.1,0.2")
    assert code == 2 and err.count("\n") == 1
    assert "0.1 is 3602879701896397 / 2^55" in err and "32 significant bits" in err


def test_consecutive_timesteps_stay_a_plain_table(cli, tmp_path):
    """A table at consecutive positions is named by its layout and first position, not a list."""
    table = get_timestep_embedding(torch.arange(300), 256, True, 0).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["timesteps"] is None and best["spec"]["timestep_scale"] == 1


# ---------------------------------------------------------------------------------------------
# Frequencies theta ** -(i / n) in float32: x-transformers' ScaledSinusoidalEmbedding, [sin | cos]
# times its scale (d^-0.5 at init)


def _scaled_sinusoidal(d: int, theta, length: int):
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    module = ScaledSinusoidalEmbedding(d, theta)
    with torch.no_grad():
        return module(torch.zeros(1, length, d)).numpy(), float(module.scale)


@pytest.mark.parametrize("d, theta, length", [(512, 10000, 1024), (64, 500, 300), (6, 10000, 50)])
def test_x_transformers_variant_is_scaled_sinusoidal_embedding(d, theta, length):
    expected, scale = _scaled_sinusoidal(d, theta, length)
    got = pe_cli.build(
        variant="x-transformers", d_model=d, seq_len=length, base=float(theta), amplitude=scale
    ).numpy()
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_x_transformers_table_is_named(cli, tmp_path):
    table, scale = _scaled_sinusoidal(256, 10000, 400)
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library x-transformers" and best["spec"]["amplitude"] == scale


def test_x_transformers_with_a_learned_scale_is_named(cli, tmp_path):
    """A trained model's scale is any float32: read from the pairs' length."""
    from x_transformers.x_transformers import ScaledSinusoidalEmbedding

    module = ScaledSinusoidalEmbedding(128, 10000)
    with torch.no_grad():
        module.scale.fill_(0.7318)
        table = module(torch.zeros(1, 200, 128)).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library x-transformers"
    assert best["spec"]["amplitude"] == float(np.float32(0.7318))


def test_amplitude_tables_are_correctly_rounded():
    """--amplitude A: each element A * sin (or cos) of the angle, rounded once, against mpmath."""
    amplitude = float(np.float32(128**-0.5))
    table = pe_cli.build(convention="concat", d_model=10, seq_len=3000, amplitude=amplitude)
    table = table.numpy()
    for p in (0, 1, 7, 1000, 2999):
        for i in range(5):
            with mpmath.workprec(200):
                angle = p * mpmath.power(10000, -mpmath.mpf(2 * i) / 10)
                a = mpmath.mpf(amplitude)
                assert table[p, i] == round_to(a * mpmath.sin(angle), "float32"), (p, i)
                assert table[p, 5 + i] == round_to(a * mpmath.cos(angle), "float32"), (p, i)


def test_amplitude_is_refused_where_a_variant_has_none(cli):
    code, _, err = cli("generate", "--variant", "hf-marian", "--amplitude", "0.5")
    assert code == 2 and "has no amplitude" in err and err.count("\n") == 1
    code, _, err = cli("generate", "--amplitude", "-1")
    assert code == 2 and "--amplitude must be a positive number" in err


# ---------------------------------------------------------------------------------------------
# Fourier-feature index tables: NeRF-style [x | sin(2^k x) | cos(2^k x)], as diffusers' Shap-E
# computes them (posenc_nerf, its cos as the sin of the angle plus pi/2)


@pytest.mark.parametrize(
    "positions, degrees",
    [
        (torch.linspace(-1, 1, 257), 15),
        (torch.arange(100).float(), 8),
        (torch.rand(50, generator=torch.Generator().manual_seed(0)) * 6, 4),
    ],
    ids=["linspace-15", "arange-8", "random-4"],
)
def test_shap_e_posenc_nerf_is_named(cli, tmp_path, positions, degrees):
    from diffusers.pipelines.shap_e.renderer import posenc_nerf

    table = posenc_nerf(positions[:, None], min_deg=0, max_deg=degrees).numpy()
    assert table.shape[1] == 2 * degrees + 1
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library diffusers-nerf" and best["spec"]["convention"] == "nerf"


def test_nerf_tables_are_correctly_rounded():
    """Column 0 the position, then sin and cos of 2^k x, each rounded once, against mpmath."""
    xs = [-1.0, -0.3330000042915344, 0.0, 0.5, 1.0, 37.0]
    table = pe_cli.build(convention="nerf", d_model=21, timesteps=",".join(map(repr, xs)))
    table = table.numpy()
    for row, x in enumerate(xs):
        assert table[row, 0] == np.float32(x)
        for k in range(10):
            with mpmath.workprec(200):
                angle = mpmath.mpf(x) * 2**k
                assert table[row, 1 + k] == round_to(mpmath.sin(angle), "float32"), (row, k)
                assert table[row, 11 + k] == round_to(mpmath.cos(angle), "float32"), (row, k)


def test_nerf_refusals(cli):
    code, _, err = cli("generate", "--variant", "diffusers-nerf", "--d-model", "8")
    assert code == 2 and "odd --d-model" in err and err.count("\n") == 1
    code, _, err = cli("generate", "--convention", "nerf", "--d-model", "2")
    assert code == 2 and "needs --d-model >= 3" in err
    code, _, err = cli("generate", "--convention", "nerf", "--d-model", "9", "--base", "3")
    assert code == 2 and "--base does not apply to the nerf convention" in err


# ---------------------------------------------------------------------------------------------
# An honest no-match: tables built to defeat each reader get a reason true of them, the nearest
# candidate's distance, and never a base no model has


_NOTES = {
    "law": "follow no power law",
    "base": "outside the bases of real models",
    "lengths": "pairs' lengths are not one number",
    "constant": "columns are constant",
    "one constant": "columns is constant",  # one of them: "1 of its 32 columns is constant"
    "timesteps": "timesteps read back as",
}


def _pairs(positions, rates, lengths=1.0, cos_first=False):
    """[sin | cos] (or [cos | sin]) of positions times rates, in float64, as float32."""
    angles = np.asarray(positions, dtype=np.float64)[:, None] * np.asarray(rates)[None, :]
    halves = [np.cos(angles), np.sin(angles)] if cos_first else [np.sin(angles), np.cos(angles)]
    return (np.concatenate(halves, axis=1) * lengths).astype(np.float32)


_N = 16  # pairs: tables of 32 columns
_ROWS = np.arange(120)
_PAPER = 10000.0 ** (-np.arange(_N) / _N)
_RNG = np.random.default_rng(30)


def _defeating(name):
    if name == "linear rates":  # steady pairs, rates on a line (Perceiver's bands), no power law
        return _pairs(_ROWS, np.linspace(1, 0.01, _N))
    if name == "one constant column":  # those rates, one column overwritten with 0.25
        table = _defeating("linear rates")
        table[:, 3] = 0.25
        return table
    if name == "huge base":  # a power law whose base no model has
        return _pairs(_ROWS, 1e30 ** (-np.arange(_N) / _N))
    if name == "growing pairs":  # steady angles, lengths growing with the row
        return _pairs(_ROWS, _PAPER, lengths=(1 + _ROWS / 60.0)[:, None])
    if name == "constant columns":  # the paper's first pair, then pairs that do not turn
        return _pairs(_ROWS, np.concatenate([[1.0], np.zeros(_N - 1)]))
    if name == "float64 timesteps":  # diffusers' layout at timesteps no float32 holds
        return _pairs(np.sort(_RNG.uniform(0, 1000, 60))[::-1], _PAPER, cos_first=True)
    if name == "noise":
        return _RNG.standard_normal((120, 2 * _N)).astype(np.float32)
    if name == "noisy paper table":  # the exact table, plus noise no arithmetic makes
        noise = 1e-3 * _RNG.standard_normal((120, 2 * _N))
        return (_pairs(_ROWS, _PAPER).astype(np.float64) + noise).astype(np.float32)
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name, said",
    [
        ("linear rates", {"law", "base"}),
        ("one constant column", {"law", "base", "one constant"}),
        ("huge base", {"base", "constant"}),
        ("growing pairs", {"lengths"}),
        ("constant columns", {"law", "constant"}),
        ("float64 timesteps", {"timesteps"}),
        ("noise", set()),
        ("noisy paper table", set()),
    ],
)
def test_unexplained_tables_say_what_was_measured(cli, tmp_path, name, said):
    """Each reason where it holds, and none of the others; every candidate's base one a model
    could have; the nearest candidate and its distance printed."""
    table = _defeating(name)
    np.save(tmp_path / "t.npy", table)
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0, err
    found = json.loads(out)
    notes = " ".join(found["notes"])
    for key, phrase in _NOTES.items():
        assert (phrase in notes) == (key in said), (key, found["notes"])
    assert not any(c["differing"] == 0 for c in found["candidates"])
    assert all(10 <= c["spec"]["base"] <= 1e8 for c in found["candidates"])
    code, out, _ = cli("compare", tmp_path / "t.npy")
    text = " ".join(out.decode().split())
    if found["candidates"]:
        assert "the nearest is" in text or "within" in text
        assert "off by up to" in text or "within" in text
    else:  # the reason in the verdict's line: what was measured, else no pairs at all
        default = "its columns are not sin/cos pairs turning at a steady rate"
        # (said where no reader measured anything: another family's reason, such as the 1-D
        # rotary reader's on noise, stands in its place)
        assert (default in text) == (not found["notes"])
        assert all(_NOTES[key] in text for key in said)
    if name == "noisy paper table":  # the paper's table at positions 0 on, off by the noise
        best = found["candidates"][0]
        assert best["spec"]["offset"] == 0 and best["max_abs"] < 6e-3
    if name == "float64 timesteps":
        assert found["candidates"][0]["name"] == "timestep, timesteps as read"


@pytest.mark.parametrize("convention", ["concat", "tensor2tensor", "timestep"])
def test_named_tables_carry_no_unexplained_reasons(cli, tmp_path, convention):
    """A table pe-cli names bit for bit says none of what an unexplained one is told."""
    table = pe_cli.build(convention=convention, d_model=32, seq_len=120).numpy()
    np.save(tmp_path / "t.npy", table)
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    assert code == 0 and found["candidates"][0]["differing"] == 0
    assert not any(phrase in " ".join(found["notes"]) for phrase in _NOTES.values())


@pytest.mark.parametrize(
    "table",
    [
        dict(
            convention="timestep",
            d_model=12,
            timesteps="0,0.0010000000474974513,0.5,0.9990000128746033,7",
            timestep_scale=1000.0,
        ),
        dict(convention="nerf", d_model=9, timesteps="-1,0.25,3"),
        dict(convention="nerf", d_model=8, seq_len=5, offset=3),
        dict(convention="concat", d_model=10, seq_len=7, amplitude=0.3),
    ],
    ids=["timesteps-over-powers-of-two", "nerf-timesteps", "nerf-even", "amplitude"],
)
def test_torch_path_matches_numpy_path(table):
    """The path --device cuda takes, run on the CPU, in blocks that split the row groups."""
    from pe_cli.core.dtypes import host_bits
    from pe_cli.engine import _kernel_blocks

    for dtype in ("float32", "bfloat16", "float64"):
        spec = pe_cli.TableSpec(dtype=dtype, **table)
        by_numpy = np.concatenate([host_bits(b) for b in _kernel_blocks(spec, "cpu", rows=2)])
        by_torch = _kernel_blocks(spec, "cpu", rows=2, use_torch=True)
        assert np.array_equal(by_numpy, np.concatenate([host_bits(b) for b in by_torch]))
