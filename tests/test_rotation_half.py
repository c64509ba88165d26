"""Half-precision dumps of scaled rotations named by their angles (rotation_report._within):
transformers' gpt-oss YaRN op (its attention factor folded into cos and sin) and Llama 3.1's
llama3 op, applied in bfloat16 to random q at 2048 positions and saved as .safetensors, read
by `compare AFTER --before BEFORE --rope-config`. The table is named where every angle read
back is within the stated bound of its exact angles, which mpmath computes here from the
formulas (tests/reference.py), and the claim says "within the bound", never bit for bit. Ports
with YaRN's factor or beta_fast wrong, whose angles are past the bound, are not named as the
model's table, and their difference from the model is a finding."""

import functools
import importlib
import json

import mpmath
import numpy as np
import pytest

from pe_cli.analysis import rotation_files

from .reference import rope_frequencies
from .rope_models import GPT_OSS_YARN, LLAMA3

pytest.importorskip("transformers", reason="transformers is not installed")

POSITIONS = 2048
GPT_OSS = {"rope_theta": 150000.0, **GPT_OSS_YARN}  # head dim 64
LLAMA31 = {"rope_theta": 500000.0, **LLAMA3}  # head dim 128


def _dump(tmp_path, model: str, parameters: dict, dtype: str, port: dict | None = None):
    """The model's rotary step (its rotary embedding and apply_rotary_pos_emb, as its attention
    calls them) on random q (1, 4, POSITIONS, head dim) in `dtype`, BEFORE and AFTER saved as
    .safetensors, and the model's config.json; `port` changes rope parameters of the op only
    (a port that got them wrong), not of the config."""
    import torch
    from safetensors.torch import save_file

    config_class, embedding, head_dim = {
        "gpt_oss": ("GptOssConfig", "GptOssRotaryEmbedding", 64),
        "llama": ("LlamaConfig", "LlamaRotaryEmbedding", 128),
    }[model]
    modeling = importlib.import_module(f"transformers.models.{model}.modeling_{model}")
    made = getattr(importlib.import_module(f"transformers.models.{model}"), config_class)

    def config(rope):
        return made(
            hidden_size=512,
            num_attention_heads=4,
            num_hidden_layers=2,
            head_dim=head_dim,
            max_position_embeddings=131072,
            rope_parameters=rope,
        )

    config(parameters).save_pretrained(tmp_path)
    rotary = getattr(modeling, embedding)(config({**parameters, **(port or {})}))
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 4, POSITIONS, head_dim, generator=generator).to(getattr(torch, dtype))
    cos, sin = rotary(q, torch.arange(POSITIONS)[None])
    after = modeling.apply_rotary_pos_emb(q, q, cos, sin)[0]
    save_file({"q": q.contiguous()}, tmp_path / "before.safetensors")
    save_file({"q": after.contiguous()}, tmp_path / "after.safetensors")
    return {
        "after": str(tmp_path / "after.safetensors"),
        "before": str(tmp_path / "before.safetensors"),
        "config": str(tmp_path / "config.json"),
    }


def _read(paths):
    return rotation_files.from_files(
        paths["after"], paths["before"], rope_config=paths["config"], layer=0
    )


def _settings(spec) -> dict:
    return dict(spec.rope)


@functools.cache
def _truth(model: str, dim: int):
    """Each pair's exact angle (radians, reduced mod 2 pi) at every position, and the
    attention factor, from the rope type's formulas in mpmath (once a model: both dtypes)."""
    parameters = {"gpt_oss": GPT_OSS, "llama": LLAMA31}[model]
    rope = {k: v for k, v in parameters.items() if k != "rope_theta"}
    rates, factor = rope_frequencies(dim, parameters["rope_theta"], rope, POSITIONS)
    angles = np.array(
        [[float(mpmath.fmod(p * w, 2 * mpmath.pi)) for w in rates] for p in range(POSITIONS)]
    )
    exact = np.outer(np.arange(POSITIONS), [float(w) for w in rates])
    return angles, exact, float(factor)


# the float32 arithmetic an op computes p w in, relative to the angle, 8 + k units for pair k
# (rotation_report.ANGLE_UNITS): what the bound is held past
def _arithmetic(exact):
    return (8 + np.arange(exact.shape[1])) * 2.0**-24 * np.abs(exact)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize(
    "model, parameters, dim", [("gpt_oss", GPT_OSS, 64), ("llama", LLAMA31, 128)]
)
def test_a_scaled_rotation_is_named_within_the_bound(tmp_path, cli, model, parameters, dim, dtype):
    """The model's own op: its table named (rope_type and every setting of it), by its angles,
    each within the bound the report states of mpmath's exact angle; the scale read is the
    model's attention factor within the dtype's rounding; no finding."""
    paths = _dump(tmp_path, model, parameters, dtype)
    found = _read(paths)
    assert found.pairing == "half" and len(found.rotary_dims) == dim
    named = found.named
    assert named is not None and found.by_angles
    assert named.spec.base == parameters["rope_theta"] and named.spec.d_model == dim
    wanted = {k: v for k, v in parameters.items() if k != "rope_theta"}
    assert _settings(named.spec) == pytest.approx(wanted)
    assert found.findings == [], [f.text for f in found.findings]
    angles, exact, factor = _truth(model, dim)
    missed = np.abs(np.angle(np.exp(1j * (found.reading.angles - angles))))
    assert np.max(missed - _arithmetic(exact)) <= found.bound
    assert found.gap.max_abs == pytest.approx(missed.max(), abs=1e-9)
    # the scale read: the attention factor (1 for llama3), within the dump's rounding of it
    assert abs(found.reading.fit.scale / factor - 1) <= 2 * found.reading.act.unit
    assert found.rebuilt.identical and found.rebuilt.variant == "hf-rope"
    code, out, err = cli(
        "compare", paths["after"], "--before", paths["before"],
        "--rope-config", paths["config"], "--layer", 0,
    )  # fmt: skip
    assert code == 0, err
    text = " ".join(out.decode().split())
    assert "named within the bound below" in text and "not bit for bit" in text
    assert "no built-in table explains" not in text
    code, out, err = cli(
        "compare", paths["after"], "--before", paths["before"], "--json"
    )  # fmt: skip
    said = json.loads(out)
    assert said["named_by"] == "angles" and said["findings"] == []


def test_a_table_named_from_the_ops_own_cos_is_not_said_within_the_bound(tmp_path):
    """probe's unit vectors give the op's own cos: named bit for bit, not by its angles."""
    import pe_cli

    from .test_probe_pairs import _op

    op, _ = _op("gpt_oss", tmp_path)
    found = pe_cli.probe(op, head_dim=64, seq_len=48)
    assert found.named.identical and not found.by_angles
    assert found.to_json()["named_by"] == "own-cos"


def test_a_yarn_port_with_another_factor_is_not_the_models_table(tmp_path):
    """factor 16 where gpt-oss has 32: its angles are 0.33 rad from the model's at 2047. Its
    own table (factor 16) is named within the bound, not the model's; the rates and the
    attention factor are said to differ from the model's."""
    found = _read(_dump(tmp_path, "gpt_oss", GPT_OSS, "bfloat16", {"factor": 16.0}))
    assert found.named is not None and _settings(found.named.spec)["factor"] == 16.0
    assert {"frequencies", "scale-differs"} <= set(found.codes())


def test_a_yarn_port_with_another_beta_fast_is_not_named(tmp_path):
    """beta_fast 16 where gpt-oss has 32: the ramp's pairs turn at other rates, no table is
    named, and the rates are a finding."""
    found = _read(_dump(tmp_path, "gpt_oss", GPT_OSS, "bfloat16", {"beta_fast": 16.0}))
    assert found.named is None
    assert found.codes() == ["frequencies"]


def test_angles_past_the_bound_refuse_a_table_the_values_match(tmp_path):
    """beta_fast 32.1: every rate within 1e-3 of the model's, so identification proposes the
    model's YaRN table and a bfloat16 table's values match it (within 0.1, the margin of a
    half table over 2048 positions); its angles are 0.058 rad from it, past the 0.023 bound.
    It is not named, the nearest is said with its gap, and against the model the angles are a
    finding. The model's own op, the same way, has none of it."""
    found = _read(_dump(tmp_path, "gpt_oss", GPT_OSS, "bfloat16", {"beta_fast": 32.1}))
    best = found.identification.best
    assert found.identification.explained and _settings(best.spec)["beta_fast"] == 32.0
    assert found.named is None
    (note,) = [n for n in found.notes if n.startswith("nearest: ")]
    assert "rope_type=yarn" in note and "past the 0.023 rad bfloat16's rounding" in note
    assert found.codes() == ["angles"]
    assert "from gpt_oss layer 0's exact ones" in found.findings[0].text
    right = _read(_dump(tmp_path / "right", "gpt_oss", GPT_OSS, "bfloat16"))
    assert right.codes() == [] and not any(n.startswith("nearest: ") for n in right.notes)
