"""Every option is honoured or refused: an option that does nothing where it is given, that
contradicts another, or that goes over a config's value is refused with the reason (one line on
stderr, exit 2, nothing on stdout, no file written), or honoured and said on stderr."""

import io
import json

import numpy as np
import pytest

from pe_cli import build
from pe_cli.families.rope.types import ROPE_TYPES

from .libraries import LLAMA31


@pytest.fixture
def llama31(tmp_path):
    path = tmp_path / "llama31.json"
    path.write_text(json.dumps(LLAMA31))
    return path


def refused(result, *needles):
    code, out, err = result
    assert code == 2, err
    assert out == b"", out[:200]
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def written(folder) -> list[str]:
    """Every file in a folder, temporary ones included."""
    return sorted(p.name for p in folder.iterdir())


# ---------------------------------------------------------------------------------------------
# generate's and export's output options


def test_format_without_output_is_refused(cli):
    refused(cli("generate", "-d", 8, "-l", 4, "--format", "csv"), "--format", "-o")


@pytest.mark.parametrize(
    "command", [("generate",), ("show",), ("compare", "--family", "alibi", "--heads", 2)]
)
def test_force_with_nothing_to_replace_is_refused(cli, command):
    needed = "-o" if command[0] == "generate" else "--plot"
    refused(cli(*command, "-l", 4, "--force"), "--force", needed)


@pytest.mark.parametrize("command", ["generate", "export"])
@pytest.mark.parametrize(
    "name, fmt, expected",
    [("x.npy", "csv", ".csv"), ("x.safetensors", "npy", ".npy"), ("x.csv", "tsv", ".tsv")],
)
def test_a_format_the_extension_contradicts_writes_nothing(
    cli, tmp_path, command, name, fmt, expected
):
    path = tmp_path / name
    target = ("-o", path) if command == "generate" else (path,)
    refused(
        cli(command, *target, "-d", 8, "-l", 4, "--format", fmt),
        f"--format {fmt}",
        name,
        expected,
    )
    assert written(tmp_path) == []


def test_a_format_for_a_name_without_one_is_honoured(cli, tmp_path):
    path = tmp_path / "table.dat"
    code, _, err = cli("generate", "-o", path, "-d", 4, "-l", 3, "--format", "csv")
    assert code == 0, err
    assert path.read_text().splitlines()[0] == "position,d0,d1,d2,d3"
    code, out, err = cli("generate", "-o", "-", "-d", 4, "-l", 3, "--format", "tsv")
    assert code == 0 and err == "" and out.decode().startswith("position\td0")


def test_export_to_npy_of_several_tables_names_the_option(cli, tmp_path, llama31):
    err = refused(
        cli("export", tmp_path / "x.npy", "--rope-config", llama31, "-l", 4),
        "npy",
        "(cos, sin)",
        "--part cos",
        ".safetensors",
    )
    assert "were asked for" not in err
    refused(
        cli("export", tmp_path / "x.npy", "-l", 4, "--variant", "exact", "--variant", "pow"),
        "one --variant",
    )
    assert written(tmp_path) == ["llama31.json"]
    code, out, err = cli(
        "export", tmp_path / "x.npy", "--rope-config", llama31, "-l", 4, "--part", "sin"
    )
    assert code == 0, err
    assert np.load(tmp_path / "x.npy").shape == (4, 128)


# ---------------------------------------------------------------------------------------------
# show: every option is checked before anything is printed


def test_show_checks_rows_before_printing(cli, tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, build(d_model=16, seq_len=64).numpy())
    refused(cli("show", path, "--rows", "0-8"), "--rows '0-8'")
    refused(cli("show", path, "--cols", "a:b"), "--cols 'a:b'")
    code, out, err = cli("show", path, "--rows", "0:8")
    assert code == 0 and err == "" and b"row norms" in out


@pytest.mark.parametrize(
    "args, needles",
    [
        (("--heatmap", "--rows", "0:3"), ("--rows", "--heatmap")),
        (("--heatmap", "--cols", "0:3"), ("--cols", "--heatmap")),
        (("--json", "--rows", "0:3"), ("--rows", "--json")),
        (("--json", "--heatmap"), ("--json", "--heatmap", "choose one")),
        (("--plot-kind", "curves"), ("--plot-kind", "--plot")),
    ],
)
def test_show_refuses_options_its_output_ignores(cli, args, needles):
    refused(cli("show", "-d", 8, "-l", 8, *args), *needles)


def test_show_of_a_file_refuses_table_options(cli, tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, build(d_model=16, seq_len=8).numpy())
    refused(cli("show", path, "-d", 64), "--d-model", "describes a table to build")
    refused(cli("show", path, "-l", 4, "--family", "rope"), "--seq-len, --family", "them")
    assert cli("show", path)[0] == 0


def test_compare_of_files_refuses_table_options(cli, tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, build(d_model=16, seq_len=8).numpy())
    refused(cli("compare", path, "-d", 64), "is a file", "--d-model")
    refused(cli("compare", path, path, "--base", 100), "are files", "--base")
    code, _, err = cli("compare", path, "exact", "-d", 16)  # the built side takes them
    assert code == 0, err


# ---------------------------------------------------------------------------------------------
# an option that changes nothing in the table


@pytest.mark.parametrize(
    "args, flag, because",
    [
        (("--family", "alibi", "-d", 64, "-l", 4), "--d-model 64", ""),
        (("--family", "sincos2d", "--grid", "4x4", "-d", 8, "-l", 100), "--seq-len 100", "--grid"),
        (("--family", "rope", "-d", 8, "--part", "inv_freq", "-l", 100), "--seq-len 100", "--part"),
        (("--timesteps", "0:10", "-d", 8, "-l", 100), "--seq-len 100", "--timesteps"),
    ],
)
def test_a_size_that_changes_nothing_is_refused(cli, tmp_path, args, flag, because):
    refused(cli("generate", *args), flag, "changes nothing", because)
    refused(cli("export", tmp_path / "t.safetensors", *args), flag, "changes nothing")
    refused(cli("show", *args), flag, "changes nothing")
    refused(cli("compare", *args), flag, "changes nothing")
    assert written(tmp_path) == []


@pytest.mark.parametrize(
    "args, needles",
    [
        (
            ("--family", "rope", "-d", 8, "--part", "inv_freq", "--shape", "batch-first"),
            ("--shape",),
        ),
        (("--family", "alibi", "--part", "slopes", "--shape", "batch-first"), ("--shape",)),
        (("--family", "rope", "-d", 8, "--part", "inv_freq", "--offset", 7), ("--offset",)),
    ],
)
def test_a_layout_or_offset_a_vector_has_not_is_refused(cli, args, needles):
    why = "no positions" if "--offset" in args else "one axis"
    refused(cli("generate", *args), *needles, "changes nothing", why)


def test_a_size_that_changes_the_table_is_honoured(cli):
    """Dynamic NTK's frequencies depend on the table's length: -l changes its inv_freq."""
    rope = ["--rope", "rope_type=dynamic", "--rope", "factor=2", "--rope"]
    args = ["--family", "rope", "-d", 8, "--part", "inv_freq", *rope, "max_position_embeddings=64"]
    short = cli("generate", *args, "-l", 32, "-o", "-")
    long = cli("generate", *args, "-l", 256, "-o", "-")
    later = cli("generate", *args, "-l", 32, "--offset", 224, "-o", "-")
    assert short[0] == long[0] == later[0] == 0, short[2] + long[2] + later[2]
    assert not np.array_equal(np.load(io.BytesIO(short[1])), np.load(io.BytesIO(long[1])))
    assert np.array_equal(np.load(io.BytesIO(later[1])), np.load(io.BytesIO(long[1])))


# ---------------------------------------------------------------------------------------------
# options beside a config or a preset


@pytest.mark.parametrize("command", ["generate", "show", "export"])
def test_a_family_the_config_contradicts_is_refused(cli, tmp_path, llama31, command):
    target = (tmp_path / "t.safetensors",) if command == "export" else ()
    refused(
        cli(command, *target, "--rope-config", llama31, "--family", "sinusoidal", "-l", 4),
        "--rope-config gives a rope table",
        "--family sinusoidal",
    )
    refused(
        cli(command, *target, "--preset", "flux", "--grid", "2x2", "--family", "alibi"),
        "--preset flux gives a rope table",
    )
    assert written(tmp_path) == ["llama31.json"]


def test_a_width_over_the_configs_head_dim_is_refused(cli, tmp_path, llama31):
    refused(
        cli("generate", "--rope-config", llama31, "-d", 64, "-l", 4, "-o", tmp_path / "t.npy"),
        "--d-model 64",
        "head dim is 128",
    )
    assert written(tmp_path) == ["llama31.json"]
    code, out, err = cli("generate", "--rope-config", llama31, "-d", 128, "-l", 4, "-o", "-")
    assert code == 0 and "over the config" not in err
    assert np.load(io.BytesIO(out)).shape == (4, 128)


def test_values_given_over_the_config_are_honoured_and_said(cli, llama31):
    code, out, err = cli(
        "generate",
        "--rope-config",
        llama31,
        "-l",
        16,
        "--base",
        1e6,
        "--rope",
        "factor=4",
        "--rope",
        "partial_rotary_factor=0.5",
        "--convention",
        "interleaved",
        "-o",
        "-",
    )
    assert code == 0, err
    lines = err.splitlines()
    said = [line for line in lines if line.startswith("options over the config's values: ")]
    assert said == [
        "options over the config's values: --base 1000000 (config: 500000), --convention "
        "interleaved (config: half), --rope factor=4 (config: 8), --rope "
        "partial_rotary_factor=0.5 (config: none)"
    ]
    rope = dict(LLAMA31["rope_scaling"], factor=4.0, partial_rotary_factor=0.5)
    expected = build(
        family="rope", d_model=128, seq_len=16, base=1e6, convention="interleaved", rope=rope
    )
    assert np.load(io.BytesIO(out)).tobytes() == expected.numpy().tobytes()


def test_values_equal_to_the_configs_are_not_said(cli, llama31):
    code, _, err = cli(
        "generate", "--rope-config", llama31, "-l", 8, "-d", 128, "--base", 500000,
        "--rope", "factor=8", "--convention", "half", "-o", "-",
    )  # fmt: skip
    assert code == 0 and "over the config" not in err


def test_values_given_over_a_preset_are_said(cli):
    code, _, err = cli("generate", "--preset", "flux", "--base", 1000, "--grid", "2x2", "-o", "-")
    assert code == 0, err
    said = [line for line in err.splitlines() if not line.startswith("diffusers: ")]
    assert said == ["options over the preset flux's values: --base 1000 (preset: 10000)"]
    code, _, err = cli("generate", "--preset", "flux", "--grid", "2x2", "-o", "-")
    assert code == 0 and "options over" not in err


def test_a_plain_table_says_nothing_on_stderr(cli, tmp_path):
    for args in (("-d", 8, "-l", 4), ("-d", 8, "-l", 4, "-o", "-")):
        code, _, err = cli("generate", *args)
        assert code == 0 and err == ""
    code, _, err = cli("generate", "-d", 8, "-l", 4, "-o", tmp_path / "t.npy")
    assert code == 0 and len(err.splitlines()) == 1 and err.startswith(f"wrote {tmp_path}")


# --rope KEY=VALUE: a key the rope type does not read (a scaling key of other types) would build
# the table as if it were not given, and is refused; every key a type reads is taken, and so is
# one honoured beside the type (a layout's, a variant's, a query scale's)
UNREAD = [
    (["factor=4"],
     "Error: --rope factor=4: rope_type default does not read factor (it reads no scaling "
     "key; linear, dynamic, yarn, longrope, llama3 and proportional do)\n"),
    (["rope_type=linear", "factor=2", "beta_fast=3"],
     "Error: --rope beta_fast=3: rope_type linear does not read beta_fast (it reads factor; "
     "yarn does)\n"),
    (["rope_type=dynamic", "factor=2", "max_position_embeddings=64", "alpha=3"],
     "Error: --rope alpha=3: rope_type dynamic does not read alpha (it reads factor, "
     "max_position_embeddings; ntk_alpha does)\n"),
    (["rope_type=yarn", "factor=2", "original_max_position_embeddings=64",
      "low_freq_factor=1"],
     "Error: --rope low_freq_factor=1: rope_type yarn does not read low_freq_factor (it reads "
     "factor, original_max_position_embeddings, attention_factor, beta_fast, beta_slow, "
     "mscale, mscale_all_dim, truncate; llama3 does)\n"),
]  # fmt: skip


def _rope(items):
    return [word for item in items for word in ("--rope", item)]


@pytest.mark.parametrize("items, line", UNREAD)
@pytest.mark.parametrize("command", ["generate", "show", "export", "compare"])
def test_a_rope_key_its_type_does_not_read_is_refused(cli, tmp_path, command, items, line):
    words = [command, *([tmp_path / "t.safetensors"] if command == "export" else [])]
    words += ["--family", "rope", "-d", 8, "-l", 16, *_rope(items)]
    words += ["-o", tmp_path / "t.npy"] if command == "generate" else []
    result = cli(*words)
    refused(result)
    assert result[2] == line
    assert list(tmp_path.iterdir()) == []


def test_a_config_key_its_type_does_not_read_is_refused_from_the_command_line(cli, llama31):
    refused(
        cli("generate", "--rope-config", llama31, "-l", 8, "--rope", "beta_fast=2", "-o", "-"),
        "--rope beta_fast=2: rope_type llama3 does not read beta_fast (it reads factor, "
        "low_freq_factor, high_freq_factor, original_max_position_embeddings; yarn does)",
    )


# a value for each key, where a type reads it (LongRoPE's lists: 4 frequencies of -d 8)
VALUES = {
    "factor": "2", "max_position_embeddings": "64", "original_max_position_embeddings": "16",
    "alpha": "2", "attention_factor": "1.5", "beta_fast": "16", "beta_slow": "2",
    "mscale": "1", "mscale_all_dim": "0.5", "truncate": "false", "low_freq_factor": "1",
    "high_freq_factor": "4", "short_factor": "1,1.5,2,3", "long_factor": "1,2,3,4",
}  # fmt: skip


@pytest.mark.parametrize("kind", [name for name, t in ROPE_TYPES.items() if t.line])
def test_every_key_a_rope_type_reads_is_taken(cli, kind):
    found = ROPE_TYPES[kind]
    for key in found.optional or (None,):
        keys = [*found.required, *([key] if key else [])]
        if kind == "longrope":  # its factor lists, and factor or the length to derive it
            keys += ["short_factor", "long_factor"]
            keys += [] if key in ("factor", "max_position_embeddings") else ["factor"]
        items = [f"rope_type={kind}", *(f"{k}={VALUES[k]}" for k in dict.fromkeys(keys))]
        code, out, err = cli("generate", "--family", "rope", "-d", 8, "-l", 32, *_rope(items),
                             "-o", "-")  # fmt: skip
        assert code == 0 and err == "", (items, err)
        assert np.load(io.BytesIO(out)).shape == (32, 8)


@pytest.mark.parametrize(
    "items",
    [
        ["partial_rotary_factor=0.5"],  # every type's
        # the model's context: show's wavelengths figure marks it (examples/figures.sh)
        [
            "rope_type=llama3",
            "factor=8",
            "low_freq_factor=1",
            "high_freq_factor=4",
            "original_max_position_embeddings=8",
            "max_position_embeddings=64",
        ],
        ["ntk_factor=2"],  # diffusers' get_1d_rotary_pos_embed
        ["mrope_interleaved=true"],  # --variant vllm's
        ["llama_4_scaling_beta=0.1", "original_max_position_embeddings=16"],  # its query scale
        ["rope_type=yarn", "factor=2", "original_max_position_embeddings=16", "mscale=1"],
    ],
)
def test_a_key_honoured_beside_the_rope_type_is_taken(cli, items):
    code, out, err = cli(
        "generate", "--family", "rope", "-d", 8, "-l", 16, *_rope(items), "-o", "-"
    )
    assert code == 0 and err == "", err


GEMMA3 = {
    "model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 64,
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
    },
}  # fmt: skip


@pytest.mark.parametrize("command", ["export", "compare"])
def test_a_rope_key_one_treatment_reads_is_taken_for_the_model(cli, tmp_path, command):
    """Gemma 3's full-attention layers read factor and its sliding ones do not: --rope factor
    is taken where the command builds both (and said over the config's factor only where it
    is read); a key neither reads is refused."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GEMMA3))
    words = [command, *([tmp_path / "t.safetensors"] if command == "export" else [])]
    words += ["--rope-config", config, "-l", 16]
    code, _, err = cli(*words, "--rope", "factor=4")
    assert code == 0, err
    if command == "export":
        assert "options over the config's values: --rope factor=4 (config: 8)\n" in err
        assert "(config: none)" not in err
    refused(cli(*words, "--rope", "beta_fast=4"), "rope_type default does not read beta_fast")


def test_a_printed_command_leaves_out_a_key_its_type_does_not_read(cli):
    """A config's rope parameters may hold a key their type leaves aside (transformers reads
    around it): the generate command pe-cli prints for such a table, which --rope would
    refuse, leaves it out and builds the same table."""
    import shlex

    from pe_cli.spec import generate_command, spec_from_keywords

    rope = {"rope_type": "linear", "factor": 2.0, "beta_fast": 3.0}
    spec = spec_from_keywords(family="rope", d_model=8, seq_len=16, rope=rope)
    command = generate_command(spec)
    assert "--rope factor=2" in command and "beta_fast" not in command
    code, out, err = cli(*shlex.split(command)[1:], "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).tobytes() == build(spec).numpy().tobytes()


@pytest.mark.parametrize("variant", ["llama-models", "ort-genai", "hf-rope"])
def test_a_variant_of_its_own_layout_takes_it_where_no_convention_is_given(
    variant, llama31, cli, tmp_path
):
    """Llama 3.1's config pairs half; llama-models' freqs_cis and ORT-GenAI's cache hold one
    column per frequency. Without --convention the variant's table is its own layout, said on
    stderr (it was refused with "drop --convention half", which nobody gave); given, the
    convention it cannot lay out is refused; a variant that lays out the config's pairing says
    nothing of it."""
    out = tmp_path / "t.npy"
    code, _, err = cli("generate", "--rope-config", llama31, "--variant", variant, "-l", 16,
                       "-o", out)  # fmt: skip
    assert code == 0, err
    own = variant != "hf-rope"
    assert np.load(out).shape == (16, 64 if own else 128)
    note = (
        f"--convention single: variant {variant} lays its table out so (the config's table: half)"
    )
    assert (note in err) == own, err
    if own:
        refused(
            cli("generate", "--rope-config", llama31, "--variant", variant, "--convention",
                "half", "-l", 16),
            f"variant {variant!r} is the", "drop --convention half",
        )  # fmt: skip


def test_export_lays_out_each_variant_as_its_own(llama31, cli, tmp_path):
    """export of transformers' and llama-models' tables of one config: each in its own layout
    (it was refused with "drop --convention half")."""
    from safetensors.numpy import load_file

    out = tmp_path / "t.safetensors"
    code, _, err = cli("export", out, "--rope-config", llama31, "--variant", "hf-rope",
                       "--variant", "llama-models", "-l", 16)  # fmt: skip
    assert code == 0, err
    shapes = {k: v.shape for k, v in load_file(out).items()}
    assert shapes == {
        "hf-rope.cos": (16, 128), "hf-rope.sin": (16, 128),
        "llama-models.cos": (16, 64), "llama-models.sin": (16, 64),
    }  # fmt: skip
