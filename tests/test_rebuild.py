"""The claim and the spec are one object: whatever `compare FILE` calls bit for bit, its --json
spec and its printed `generate` command rebuild byte for byte.

For every table pe-cli can build, enumerated from the registries (each family's conventions,
parts and variants, in every pairing of two of them; each rope type; each --rope-axes layout,
through a diffusion preset where the layout needs one; each dtype and shape of the exact
tables), at sizes small enough to run in seconds: build the table, write it, identify it,
then rebuild it from the spec the --json gives and from the command the text prints (the
same command as the --json's), and compare the bytes. Each of these tables is one command's,
so none may be claimed as composed; a table no one command builds (a transpose, float32 numbers
kept in float64) must be.
"""

import json
import shlex
from itertools import product

import numpy as np
import pytest
import torch

from pe_cli.analysis.compare import run
from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.families import FAMILIES
from pe_cli.families.rope.layouts import LAYOUTS
from pe_cli.families.rope.models import PRESETS
from pe_cli.families.rope.types import ROPE_TYPES
from pe_cli.spec import SHAPES, TableSpec, generate_command, spec_from_keywords

from .rebuild import printed_command

# Each family's table at a small size: its inputs that no registry holds a value for.
SIZES = {
    "sinusoidal": dict(d_model=12, seq_len=24),
    "rope": dict(d_model=16, seq_len=24),
    "alibi": dict(heads=12, seq_len=10),  # 12 heads: slopes that are not powers of two
    "sincos2d": dict(d_model=16, grid="3x4"),
    "sincos3d": dict(d_model=48, grid="2x3x4"),
    "boxes": dict(d_model=16, boxes="0.1,0.2,0.5,0.6;0,0,0,0;0.25,0.5,0.75,1"),
}
# A value for each key a rope type requires (and some it may take): a real model's lengths (the
# scaled types are read at original lengths of 2048 to 65536), and a table past both (LONG), in
# which each scaling is in force.
ROPE_KEYS = dict(
    factor=4, original_max_position_embeddings=2048, max_position_embeddings=4096,
    low_freq_factor=1, high_freq_factor=4,
    short_factor="1,1,1,1,1,1,1,1", long_factor="1,1,1,2,2,3,4,6", alpha=1000,
)  # fmt: skip
LONG = dict(d_model=16, seq_len=4104)
# What a --rope-axes layout of transformers' takes besides its name (a diffusion model's
# split layouts need a preset's axes, and are built through their presets).
LAYOUT_INPUTS = (
    dict(grid="2x3x4", rope={"mrope_section": "2,3,3"}),
    dict(grid="4x6", rope={"rope_type": "axial"}),
)
PRESET_GRIDS = ("2x3", "3")  # a preset's image grid, or a 1-axis preset's tokens
PLAIN_SPLIT = dict(grid="2x3", rope={"axes_dim": "8,8"})  # a split layout's axes, no preset

# Cases that compare FILE does not name bit for bit yet, kept out of the parametrization below
# (not marked xfail) and listed so: each must still be a case (test_elsewhere_are_cases), and
# when a reader names it its line goes. What each says today is after its group's "#"; none is
# named wrongly (a claim of bit for bit its spec does not rebuild): they are unexplained, or
# their nearest candidate is said to be off.
ELSEWHERE = frozenset(
    {
        # a precision recipe of a frequency-dependent scaling: rope-table (every value on
        # bfloat16's grid) is tried as plain and linearly scaled laws only; rope-inv-freq's
        # frequencies (inv_freq cast to bfloat16), read as a vector of that dtype, fit no llama3
        # or YaRN setting, and LongRoPE factors are not read from them. Unexplained: the
        # frequencies follow a base at the high end and are divided at the low end
        "--family rope --variant rope-inv-freq --d-model 16 --seq-len 4104 --rope factor=4 --rope high_freq_factor=4 --rope low_freq_factor=1 --rope original_max_position_embeddings=2048 --rope rope_type=llama3",
        "--family rope --variant rope-inv-freq --d-model 16 --seq-len 4104 --rope factor=4 --rope original_max_position_embeddings=2048 --rope rope_type=yarn",
        "--family rope --variant rope-inv-freq --d-model 16 --seq-len 4104 --rope factor=4 --rope long_factor=1,1,1,2,2,3,4,6 --rope max_position_embeddings=4096 --rope original_max_position_embeddings=2048 --rope rope_type=longrope --rope short_factor=1,1,1,1,1,1,1,1",
        "--family rope --variant rope-table --d-model 16 --seq-len 4104 --rope factor=4 --rope high_freq_factor=4 --rope low_freq_factor=1 --rope original_max_position_embeddings=2048 --rope rope_type=llama3",
        "--family rope --variant rope-table --d-model 16 --seq-len 4104 --rope factor=4 --rope original_max_position_embeddings=2048 --rope rope_type=yarn",
        "--family rope --variant rope-table --d-model 16 --seq-len 4104 --rope factor=4 --rope long_factor=1,1,1,2,2,3,4,6 --rope max_position_embeddings=4096 --rope original_max_position_embeddings=2048 --rope rope_type=longrope --rope short_factor=1,1,1,1,1,1,1,1",
        "--family rope --variant rope-table --d-model 16 --seq-len 4104 --rope factor=4 --rope max_position_embeddings=4096 --rope rope_type=dynamic",
        # HunYuan's NTK by alpha with inv_freq cast to bfloat16: at its base of 2.7e7 the four
        # slowest frequencies stay at 1 over 24 positions; unexplained, the nearest the
        # original law at that base, off by 4144 ulp
        "--family rope --variant rope-inv-freq --d-model 16 --seq-len 24 --rope alpha=1000 --rope rope_type=ntk_alpha",
        # --part query-scale: identification reads no query scale; unexplained
        "--family rope --d-model 16 --seq-len 24 --part query-scale --rope llama_4_scaling_beta=0.1 --rope original_max_position_embeddings=16",
        "--family rope --variant hf-rope --d-model 16 --seq-len 24 --part query-scale --rope llama_4_scaling_beta=0.1 --rope original_max_position_embeddings=16",
        "--family rope --d-model 16 --seq-len 24 --part query-scale --rope attn_scale=0.1 --rope floor_scale=16",
        "--family rope --variant hf-rope --d-model 16 --seq-len 24 --part query-scale --rope attn_scale=0.1 --rope floor_scale=16",
        # keras-hub's dynamic divides every frequency by factor^(d / (d - 2)) (the base grown
        # once): a linear scaling by 4^(16/14) in keras-hub's float32 arithmetic, which no
        # reader proposes; named as close, linear scaling by 4.87605 within 7010 ulp
        "--family rope --variant keras-hub --d-model 16 --seq-len 4104 --rope factor=4 --rope max_position_embeddings=4096 --rope rope_type=dynamic",
        # the same on keras-hub's JAX backend (powf's frequencies): the same 7010 ulp
        "--family rope --variant keras-hub-jax --d-model 16 --seq-len 4104 --rope factor=4 --rope max_position_embeddings=4096 --rope rope_type=dynamic",
        # MLX's proportional rope (its zero tail of frequencies): named as close, linear
        # scaling by its factor within 0.54 ulp
        "--family rope --variant mlx --d-model 16 --seq-len 24 --rope factor=4 --rope rope_type=proportional",
    }
)


def _spec(**params) -> TableSpec | None:
    try:
        return spec_from_keywords(**params)
    except BadInput:  # a pairing the registry's entries do not build
        return None


def _sizes(family) -> list[dict]:
    """SIZES' table of a family, and the same one column wider (a variant that writes an odd
    width only, as posenc_nerf's x and its sin/cos pairs)."""
    size = {"family": family.name, **SIZES[family.name]}
    return [size] + ([{**size, "d_model": size["d_model"] + 1}] if "d_model" in size else [])


def _pairings():
    """Each family's variant, convention and part in every pairing of two (the third the
    variant's own default), each variant in every dtype, and each exact table in every
    shape."""
    for family in FAMILIES.values():
        for variant in ("exact", *family.variants):
            found = [(size, _spec(**size, variant=variant)) for size in _sizes(family)]
            size, own = next(((s, o) for s, o in found if o is not None), (None, None))
            if own is None:
                continue  # test_every_entry_is_a_case says which
            for convention, part in product(family.conventions, family.parts):
                if variant == "exact" or convention == own.convention or part == own.part:
                    yield _spec(**size, variant=variant, convention=convention, part=part)
            for dtype in ("float16", "bfloat16", "float64"):  # in its own convention and part
                yield _spec(**size, variant=variant, dtype=dtype)
        for shape in SHAPES:
            yield _spec(**_sizes(family)[0], shape=shape)


def _rope_types():
    for name, rope_type in ROPE_TYPES.items():
        keys = [k for k in rope_type.optional if k in ROPE_KEYS] + list(rope_type.required)
        rope = {"rope_type": name, **{key: ROPE_KEYS[key] for key in keys}}
        size = LONG if any(k.endswith("max_position_embeddings") for k in keys) else SIZES["rope"]
        for variant in ("exact", *FAMILIES["rope"].variants):
            yield _spec(family="rope", **size, variant=variant, rope=rope)


def _query_scales():
    """--part query-scale: each kind, exact and in transformers' arithmetic."""
    for rope in (
        {"llama_4_scaling_beta": 0.1, "original_max_position_embeddings": 16},
        {"floor_scale": 16, "attn_scale": 0.1},
    ):
        for variant in ("exact", "hf-rope"):
            yield _spec(
                family="rope", **SIZES["rope"], part="query-scale", rope=rope, variant=variant
            )


def _first(specs) -> TableSpec | None:
    return next((spec for spec in specs if spec is not None), None)


def _layouts():
    """Each --rope-axes layout: transformers' from LAYOUT_INPUTS; a diffusion model's through
    the first preset that lays its table out so (its axes' shares of the head are the
    preset's)."""
    for name in LAYOUTS:
        yield _first(_spec(family="rope", d_model=16, axes=name, **i) for i in LAYOUT_INPUTS)
        if name not in {preset.axes for preset in PRESETS.values()}:
            # a split layout no preset lays out (pixel-style RoPE), exact and in its
            # library's arithmetic
            for variant in ("exact", *FAMILIES["rope"].variants):
                yield _spec(family="rope", d_model=16, axes=name, variant=variant, **PLAIN_SPLIT)
    covered = set()
    for name, preset in PRESETS.items():
        if preset.axes not in covered:
            covered.add(preset.axes)
            yield _first(_spec(preset=name, grid=grid) for grid in PRESET_GRIDS)


def _cases() -> dict[str, TableSpec]:
    cases = {}
    for spec in (*_pairings(), *_rope_types(), *_layouts(), *_query_scales()):
        if spec is not None:
            cases.setdefault(generate_command(spec).removeprefix("pe-cli generate "), spec)
    return cases


CASES = _cases()


def test_every_entry_is_a_case():
    """Every family, convention, part, variant, rope type and layout the registries hold is
    in some case (an entry no case builds would go untested)."""
    specs = CASES.values()
    for family in FAMILIES.values():
        mine = [s for s in specs if s.family == family.name]
        assert {s.convention for s in mine} == set(family.conventions), family.name
        assert {s.part for s in mine} == set(family.parts), family.name
        assert {s.variant for s in mine} == {"exact", *family.variants}, family.name
    types = {dict(s.rope).get("rope_type", "default") for s in specs if s.family == "rope"}
    assert types >= {name for name, t in ROPE_TYPES.items() if t.line}
    assert {s.axes for s in specs if s.axes} == set(LAYOUTS)


def test_elsewhere_are_cases():
    assert ELSEWHERE <= set(CASES)


@pytest.mark.parametrize("case", sorted(ELSEWHERE))
def test_a_table_not_named_claims_nothing(case, tmp_path, capsys):
    """A case kept out claims nothing it is not: no candidate is called bit for bit, and no
    command is said to rebuild it (its verdict says no convention explains it, or how far off
    its nearest match is). One named now would fail here: its line goes from ELSEWHERE."""
    from pe_cli import render

    path, _ = _written(CASES[case], tmp_path / "table")
    capsys.readouterr()
    result = run(str(path), None, {}).result
    render.as_json(result.to_json())
    found = json.loads(capsys.readouterr().out)
    render.identification(result)
    text = " ".join(capsys.readouterr().out.split())
    assert all(c["differing"] for c in found["candidates"]), text
    assert found["command"] is None and "rebuilt by" not in text
    verdict = text.split(" candidates ")[0]
    assert "no built-in convention explains this table" in verdict or " ulp " in verdict, verdict


def _written(spec: TableSpec, path):
    """The table as a file pe-cli did not write (no metadata to read a spec from): .npy, or
    .safetensors for bfloat16; and its values as a torch tensor."""
    values = build(spec).torch().contiguous()
    if spec.dtype == "bfloat16":
        from safetensors.torch import save_file

        save_file({"table": values}, path.with_suffix(".safetensors"))
        return path.with_suffix(".safetensors"), values
    np.save(path.with_suffix(".npy"), np.ascontiguousarray(values.numpy()))
    return path.with_suffix(".npy"), values


def _read(path) -> torch.Tensor:
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return next(iter(load_file(path).values()))
    return torch.from_numpy(np.load(path))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same dtype, shape and bytes."""
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and a.contiguous().view(torch.uint8).equal(b.contiguous().view(torch.uint8))
    )


NAMED = [case for case in CASES if case not in ELSEWHERE]


@pytest.mark.parametrize("case", NAMED, ids=NAMED)
def test_the_claim_rebuilds_the_table(case, tmp_path, cli, capsys):
    from pe_cli import render

    spec = CASES[case]
    path, values = _written(spec, tmp_path / "table")
    capsys.readouterr()
    result = run(str(path), None, {}).result  # compare FILE: one identification, shown two ways
    render.as_json(result.to_json())
    found = json.loads(capsys.readouterr().out)
    render.identification(result)
    text = capsys.readouterr().out
    best = found["candidates"][0] if found["candidates"] else None
    assert best is not None and best["differing"] == 0 and best["confirmed"], (
        f"not named bit for bit: {text}"
    )
    # the name said is the spec's: a library's or a recipe's where the spec is that variant's
    variant = best["spec"]["variant"]
    assert variant in best["name"] if variant != "exact" else "library" not in best["name"]
    # the --json spec builds the table
    assert _same(build(**best["spec"]).torch(), values), best["name"]
    # one command builds every table here: none is claimed as composed
    assert found["composed"] is None, text
    # the printed command is the --json's, and builds the table byte for byte
    assert shlex.split(printed_command(text)) == shlex.split(found["command"])
    again = tmp_path / f"again{path.suffix}"
    code, _, err = cli(*shlex.split(found["command"])[1:], "-o", again)
    assert code == 0, err
    assert _same(_read(again), values)


def test_a_transposed_table_is_claimed_as_composed(cli, tmp_path):
    """A (D, L) table is named as the transpose of pe-cli's (L, D) one: the claim says so, no
    command is said to rebuild it, and the command it names builds the table it transposes;
    the same table as it is built has that command and no composition."""
    table = build(d_model=16, seq_len=64).numpy()
    np.save(tmp_path / "wide.npy", np.ascontiguousarray(table.T))
    np.save(tmp_path / "tall.npy", table)
    code, out, err = cli("compare", tmp_path / "wide.npy", "--json")
    wide = json.loads(out)
    assert code == 0, err
    assert wide["command"] is None and wide["composed"] == "the transpose of"
    assert wide["candidates"][0]["differing"] == 0
    built_by = wide["candidates"][0]["built_by"]
    assert built_by == "pe-cli generate --d-model 16 --seq-len 64"
    code, out, _ = cli("compare", tmp_path / "wide.npy")
    text = " ".join(out.decode().split())
    assert "matches the transpose of vaswani" in text
    assert "the transpose of the table built by: pe-cli generate --d-model 16" in text
    assert "rebuilt by" not in text
    tall = json.loads(cli("compare", tmp_path / "tall.npy", "--json")[1])
    assert tall["composed"] is None and tall["command"] == built_by


def test_float32_numbers_kept_in_float64_are_the_cast_of_a_float32_table(cli, tmp_path):
    """A float64 file of float32 numbers (a float32 table's .double()) is read as that float32
    table: pe-cli's exact float32 rope table cast to float64 (in single pairing, which no
    library computes in float64 and rounds to float32, as diffusers' float64 frequencies do
    for half pairs: that table is one command's) is claimed as the float64 cast of it, which
    no one command builds; the exact float64 table is not read so."""
    single = build(family="rope", d_model=16, seq_len=40, part="sin", convention="single").numpy()
    np.save(tmp_path / "cast.npy", single.astype(np.float64))
    found = json.loads(cli("compare", tmp_path / "cast.npy", "--json")[1])
    assert any("is a float32 number: read as a float32 table" in n for n in found["notes"])
    best = found["candidates"][0]
    assert best["differing"] == 0 and found["composed"] == "the float64 cast of"
    assert found["command"] is None
    assert best["built_by"] == (
        "pe-cli generate --family rope --d-model 16 --seq-len 40 --convention single --part sin"
    )
    assert _same(build(**best["spec"]).torch().double(), torch.from_numpy(single).double())
    exact = build(family="rope", d_model=16, seq_len=40, part="sin", dtype="float64").numpy()
    np.save(tmp_path / "exact.npy", exact)
    found = json.loads(cli("compare", tmp_path / "exact.npy", "--json")[1])
    assert not any("float32 number" in n for n in found["notes"])
    assert found["composed"] is None and found["candidates"][0]["spec"]["dtype"] == "float64"
