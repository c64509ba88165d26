"""The Python API is discoverable: dir() and help() list the public names without loading
numpy or torch first, build's signature names every parameter, a misspelt keyword is told the
nearest name, and compare and identify give what the command line shows."""

import inspect
import pydoc
import subprocess
import sys

import numpy as np
import pytest

import pe_cli
from pe_cli.core.errors import PeError

PUBLIC = ("build", "read", "write", "compare", "identify", "plot", "Table", "TableSpec")


def test_dir_lists_the_public_names_without_loading_them():
    probe = (
        "import sys, pe_cli; names = dir(pe_cli)\n"
        "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))\n"
        "print(' '.join(names))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    loaded, names = done.stdout.splitlines()
    assert loaded == "[]"
    assert set(PUBLIC) | set(pe_cli.__all__) <= set(names.split())


def test_help_lists_the_functions_and_classes():
    text = pydoc.render_doc(pe_cli, renderer=pydoc.plaintext)
    functions = text[text.index("FUNCTIONS") : text.index("DATA")]
    for name in ("build", "read", "write", "compare", "identify", "plot"):
        assert f"\n    {name}(" in functions, name
    assert "class TableSpec" in text and "class Table(" in text


def test_builds_signature_names_every_parameter():
    from pe_cli.spec import PARAMS

    parameters = inspect.signature(pe_cli.build).parameters
    assert list(parameters)[0] == "spec"
    for param in PARAMS:
        assert parameters[param.name].default == param.default
        assert parameters[param.name].kind is inspect.Parameter.KEYWORD_ONLY
    for name in ("rope_config", "preset", "layer_type"):  # inputs that expand into fields
        assert name in parameters
    text = pydoc.render_doc(pe_cli.build, renderer=pydoc.plaintext)
    assert "d_model: 'int' = 512" in text and "\n    heads: " in text


@pytest.mark.parametrize(
    "call", [lambda: pe_cli.build(d_modle=4), lambda: pe_cli.compare("exact", d_modle=4)]
)
def test_a_misspelt_keyword_is_told_the_nearest_name(call):
    with pytest.raises(
        TypeError, match=r"'d_modle' is not a table parameter \(did you mean 'd_model'\?\)"
    ) as e:
        call()
    assert isinstance(e.value, PeError)


def test_a_keyword_with_no_near_name_points_to_help():
    with pytest.raises(TypeError, match="'colour' is not a table parameter; help"):
        pe_cli.build(colour=4)


def test_compare_is_the_comparison_of_the_two_tables():
    found = pe_cli.compare("exp-log", "exact", d_model=64, seq_len=300)
    a = pe_cli.build(variant="exp-log", d_model=64, seq_len=300).numpy().astype(np.float64)
    b = pe_cli.build(d_model=64, seq_len=300).numpy().astype(np.float64)
    assert found.difference.max_abs == np.abs(a - b).max() > 0
    assert found.a.label == "exp-log"


def test_identify_names_a_file_or_an_array(tmp_path):
    table = pe_cli.build(d_model=32, seq_len=64, convention="concat", base=500.0).numpy()
    path = tmp_path / "t.npy"
    np.save(path, table)
    for source in (path, str(path), table):
        best = pe_cli.identify(source).candidates[0]
        assert best.difference.identical, source
        assert (best.spec.convention, best.spec.base) == ("concat", 500.0)
    with pytest.raises(PeError, match="not a floating-point table"):
        pe_cli.identify(np.zeros((4, 4), dtype=np.int32))


@pytest.mark.parametrize(
    "keywords, message",
    [
        (
            dict(family="sinusoidal", preset="flux"),
            "--preset flux gives a rope table, not sinusoidal",
        ),
        (dict(family="alibi", preset="wan"), "--preset wan gives a rope table, not alibi"),
    ],
)
def test_an_input_of_another_family_is_refused_as_on_the_command_line(cli, keywords, message):
    """build(family=..., preset=...) checks the family against the preset as the command line
    does, not as a convention the family does not have."""
    with pytest.raises(PeError, match=message):
        pe_cli.build(**keywords)
    code, _, err = cli("generate", "--family", keywords["family"], "--preset", keywords["preset"])
    assert code == 2 and message in err
    assert pe_cli.build(family="rope", preset="flux", grid="2x2").spec.family == "rope"


@pytest.mark.parametrize(
    "keywords",
    [
        dict(d_model=9, seq_len=8, variant="diffusers-nerf", convention="nerf"),
        dict(family="rope", d_model=16, seq_len=8, rope={"rope_type": "linear", "factor": 2}),
        dict(family="rope", preset="flux", grid="2x3", text_tokens=2),
    ],
    ids=["nerf", "rope", "preset"],
)
def test_a_json_spec_builds_its_table(keywords):
    """A spec as --json prints it (its tuples JSON arrays) builds the spec's table: build(**spec)
    takes the arrays as the tuples they were."""
    import dataclasses
    import json

    spec = pe_cli.build(**keywords).spec
    read = json.loads(json.dumps(dataclasses.asdict(spec)))
    assert any(isinstance(v, list) for v in read.values())
    again = pe_cli.build(**read)
    assert again.spec == spec
    assert again.numpy().tobytes() == pe_cli.build(spec).numpy().tobytes()
