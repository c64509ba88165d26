"""LongRoPE in diffusers: OmniGen's rotary embedding is Phi-3's, bit for bit with --variant
hf-rope; compare reads its factors back, with transformers' table beside it."""

import json

import numpy as np
import pytest
import torch

import pe_cli


@pytest.mark.parametrize("positions", [300, 5000])
def test_omnigen_is_hf_rope_longrope(positions):
    """OmniGen's OmniGenSuScaledRotaryEmbedding is Phi-3's LongRoPE: --variant hf-rope with its
    factors (short below 4096 positions, long above), bit for bit."""
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    rng = np.random.default_rng(0)
    short, long = (1 + rng.random(48)).round(4).tolist(), (1 + 3 * rng.random(48)).round(4).tolist()
    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": short, "long_factor": long},
    )
    cos, sin = module(torch.empty(1, positions, 96), torch.arange(positions)[None])
    rope = {
        "rope_type": "longrope",
        "short_factor": ",".join(map(str, short)),
        "long_factor": ",".join(map(str, long)),
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            family="rope", d_model=96, seq_len=positions, rope=rope, variant="hf-rope", part=part
        )
        assert np.array_equal(table.numpy(), expected.reshape(positions, -1).numpy())


# Phi-3-mini-128k's rope_scaling, which OmniGen's checkpoint carries: LongRoPE factors per frequency
PHI3_SHORT = [
    1.05,
    1.05,
    1.05,
    1.1,
    1.1,
    1.1,
    1.2500000000000002,
    1.2500000000000002,
    1.4000000000000004,
    1.4500000000000004,
    1.5500000000000005,
    1.8500000000000008,
    1.9000000000000008,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.1000000000000005,
    2.1000000000000005,
    2.2,
    2.3499999999999996,
    2.3499999999999996,
    2.3499999999999996,
    2.3499999999999996,
    2.3999999999999995,
    2.3999999999999995,
    2.6499999999999986,
    2.6999999999999984,
    2.8999999999999977,
    2.9499999999999975,
    3.049999999999997,
    3.049999999999997,
    3.049999999999997,
]


PHI3_LONG = [
    1.0299999713897705,
    1.0499999523162842,
    1.0499999523162842,
    1.0799999237060547,
    1.2299998998641968,
    1.2299998998641968,
    1.2999999523162842,
    1.4499999284744263,
    1.5999999046325684,
    1.6499998569488525,
    1.8999998569488525,
    2.859999895095825,
    3.68999981880188,
    5.419999599456787,
    5.489999771118164,
    5.489999771118164,
    9.09000015258789,
    11.579999923706055,
    15.65999984741211,
    15.769999504089355,
    15.789999961853027,
    18.360000610351562,
    21.989999771118164,
    23.079999923706055,
    30.009998321533203,
    32.35000228881836,
    32.590003967285156,
    35.56000518798828,
    39.95000457763672,
    53.840003967285156,
    56.20000457763672,
    57.95000457763672,
    59.29000473022461,
    59.77000427246094,
    59.920005798339844,
    61.190006256103516,
    61.96000671386719,
    62.50000762939453,
    63.3700065612793,
    63.48000717163086,
    63.48000717163086,
    63.66000747680664,
    63.850006103515625,
    64.08000946044922,
    64.760009765625,
    64.80001068115234,
    64.81001281738281,
    64.81001281738281,
]


def _longrope_table(library, positions):
    """cos, sin and frequencies of Phi-3's LongRoPE (head dim 96, base 10000, 4096 positions
    grown to 131072) from diffusers' OmniGen module or transformers' rotary embedding."""
    if library == "transformers":
        from tests.libraries import hf_rotary

        rope = {
            "rope_type": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
        }
        cos, sin, inv_freq, _ = hf_rotary(rope, 96, 10000.0, list(range(positions)))
        return cos, sin, inv_freq
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
    )
    cos, sin = module(torch.empty(1, positions, 96), torch.arange(positions)[None])
    return cos, sin, module.inv_freq


@pytest.mark.parametrize("library", ["diffusers", "transformers"])
@pytest.mark.parametrize("positions, part", [(300, "cos"), (4150, "sin"), (4150, "cos")])
def test_compare_reads_longrope_factors(cli, tmp_path, library, positions, part):
    """OmniGen's LongRoPE table (Phi-3's, with 2 x 48 factors from its config) is named bit for bit:
    its lengths from its attention factor, base 10000, and the factor list its positions use
    (long past 4096), read back column by column. Where a column turns at least a radian over
    the table, the factor read gives the config's own float32 frequency."""
    cos, sin, inv_freq = _longrope_table(library, positions)
    table = (cos if part == "cos" else sin).reshape(positions, 96).numpy()
    np.save(tmp_path / "t.npy", table)
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    rope = dict(best["spec"]["rope"])
    assert (
        code == 0
        and best["differing"] == 0
        and best["confirmed"]
        and best["spec"]["variant"] == "hf-rope"
    )
    used = "long_factor" if positions > 4096 else "short_factor"
    assert best["spec"]["base"] == 10000 and used in rope and len(rope[used]) == 48
    assert {
        k: rope[k]
        for k in ("rope_type", "original_max_position_embeddings", "max_position_embeddings")
    } == {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    read = pe_cli.build(**{**best["spec"], "part": "inv_freq"}).numpy().reshape(-1)
    turning = inv_freq.numpy() * (positions - 1) >= 1
    assert turning.sum() >= 24 and np.array_equal(read[turning], inv_freq.numpy()[turning])
    rebuilt = pe_cli.build(**best["spec"]).numpy()  # the spec named rebuilds the library's table
    assert np.array_equal(rebuilt, table)


@pytest.mark.parametrize("padded, positions", [(37, 300), (90, 4150)])
def test_omnigen_padded_prompt_is_named(cli, tmp_path, padded, positions):
    """OmniGen's module returns its batch's first table; where the batch pads that prompt (a
    shorter prompt than the negative one), its positions start with rows at 0 (the collator's
    left padding): --ids "P*0; 0:N" builds it bit for bit, and compare names it so, with the
    factor list its largest position picks (long past 4096)."""
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
    )
    ids = torch.tensor([0] * padded + list(range(positions)))
    cos, sin = module(torch.empty(1, len(ids), 96), ids[None])
    rope = {
        "rope_type": "longrope",
        "short_factor": PHI3_SHORT,
        "long_factor": PHI3_LONG,
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    runs = f"{padded}*0; 0:{positions}"
    for part, expected in (("cos", cos), ("sin", sin)):
        table = expected.reshape(len(ids), 96).numpy()
        built = pe_cli.build(
            family="rope", d_model=96, ids=runs, rope=rope, variant="hf-rope", part=part
        ).numpy()
        assert np.array_equal(built, table), part
        np.save(tmp_path / "t.npy", table)
        best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
        used = "long_factor" if positions > 4096 else "short_factor"
        assert (
            best["differing"] == 0
            and best["spec"]["ids"] == runs
            and used in dict(best["spec"]["rope"])
        ), part


def test_longrope_needs_only_the_factor_list_its_positions_use(cli):
    factors = ",".join(["1.5"] * 8)
    common = (
        "--family",
        "rope",
        "-d",
        16,
        "--rope",
        "rope_type=longrope",
        "--rope",
        "max_position_embeddings=8192",
        "--rope",
        "original_max_position_embeddings=512",
        "--rope",
        f"short_factor={factors}",
    )
    assert cli("generate", *common, "-l", 512)[0] == 0
    code, _, err = cli("generate", *common, "-l", 513)
    assert (
        code == 2
        and "needs long_factor: the positions run past original_max_position_embeddings = 512"
        in err
    )
