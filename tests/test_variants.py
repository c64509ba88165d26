"""Seed variants reproduce their notebooks bit for bit on CPU in float32."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec

from . import notebooks, reference

SIZES = [(2, 1), (6, 10), (10, 10), (64, 100), (512, 1024), (1024, 3000), (96, 70000)]

NOTEBOOK_OF = {
    "pow": [notebooks.seed000_original],
    "exp-log": [notebooks.seed000_harvard, notebooks.seed003],
    "neg-pow": [notebooks.seed001],
    "exp-div": [notebooks.seed002],
    "stack": [notebooks.seed004],
}


def _bits(tensor):
    return tensor.reshape(tensor.shape[-2], tensor.shape[-1]).contiguous().view(torch.int32)


@pytest.mark.parametrize("variant", NOTEBOOK_OF)
@pytest.mark.parametrize("d,length", SIZES)
def test_bit_identical_to_notebook(variant, d, length):
    ours = build(d_model=d, seq_len=length, variant=variant).torch()
    for notebook in NOTEBOOK_OF[variant]:
        theirs = notebook(d, length)
        assert torch.equal(_bits(ours), _bits(theirs)), notebook.__name__


@pytest.mark.parametrize("variant", NOTEBOOK_OF)
def test_bit_identical_with_another_base(variant):
    ours = build(d_model=128, seq_len=500, variant=variant, base=500000.0).torch()
    for notebook in NOTEBOOK_OF[variant]:
        assert torch.equal(_bits(ours), _bits(notebook(128, 500, base=500000)))


def test_stack_for_odd_width_is_the_notebook_class_without_its_extra_column():
    # seed 004's class returns d+1 columns for odd d; the seed variant keeps the first d
    ours = build(d_model=7, seq_len=50, variant="stack").torch()
    assert torch.equal(_bits(ours), _bits(notebooks.seed004(7, 50)[:, :7].contiguous()))


@pytest.mark.parametrize("variant", NOTEBOOK_OF)
def test_odd_width_ends_with_a_sin_column(variant):
    values = build(d_model=7, seq_len=20, variant=variant).float64()
    for p in (1, 19):
        truth = reference.value("vaswani", 7, 10000.0, p, 6)
        assert abs(values[p, 6] - float(truth)) < 1e-5


def test_seed000_as_written_is_not_any_variant():
    # the multiply slip makes seed 000's class differ from position 1, dimension 2 on
    buggy = notebooks.seed000_as_written(8, 4)
    ours = build(d_model=8, seq_len=4, variant="pow").torch()
    differ = (buggy != ours).nonzero().tolist()
    assert differ[0] == [1, 2]


def test_compute_dtype_changes_the_arithmetic_not_the_output_dtype():
    half = build(d_model=64, seq_len=4096, variant="exp-log", compute_dtype="bfloat16")
    assert half.torch().dtype == torch.float32
    exact = build(d_model=64, seq_len=4096).float64()
    # bfloat16 positions are spaced 16 apart above 2048: the table is far off there
    assert np.abs(half.float64()[3000:] - exact[3000:]).max() > 0.5


def test_float16_compute_refuses_positions_it_cannot_hold():
    with pytest.raises(BadInput, match="overflow float16"):
        build(d_model=8, seq_len=70000, variant="pow", compute_dtype="float16")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_seed_output_rounded_once(dtype):
    # computed in float64, stored in a narrow dtype: one correct rounding of the float64 values
    table = build(d_model=32, seq_len=64, variant="pow", compute_dtype="float64", dtype=dtype)
    wide = build(d_model=32, seq_len=64, variant="pow", compute_dtype="float64", dtype="float64")
    import mpmath

    got = table.float64().ravel().tolist()
    for value, source in zip(got, wide.float64().ravel().tolist()):
        assert value == reference.round_to(mpmath.mpf(source), dtype)


@pytest.mark.parametrize("convention", ["concat", "tensor2tensor", "fairseq", "whisper"])
def test_seed_variants_refuse_other_conventions(convention):
    with pytest.raises(BadInput, match="vaswani convention only"):
        TableSpec(variant="exp-log", convention=convention)


def test_library_tables_are_computed_on_one_thread(monkeypatch):
    """A library variant runs on one torch thread (MKL splits float64 sin over threads at points
    that vary between runs, so a few last bits did), and the thread count is restored after."""
    from pe_cli import engine

    seen = []
    real = engine.find_variant

    class Recording:
        def __init__(self, variant):
            self.variant = variant

        def __getattr__(self, name):
            return getattr(self.variant, name)

        def compute(self, spec, device):
            seen.append(torch.get_num_threads())
            return self.variant.compute(spec, device)

    monkeypatch.setattr(
        engine, "find_variant", lambda spec: None if real(spec) is None else Recording(real(spec))
    )
    before = torch.get_num_threads()
    engine.build(TableSpec(d_model=16, seq_len=8, variant="hf-rope", family="rope"))
    assert seen == [1] and torch.get_num_threads() == before


def test_building_sinusoidal_tables_loads_no_identification():
    """Every sinusoidal table (each variant, the exact table, at --timesteps) and its facts are
    built without loading the family's identification modules; identifying a table loads them,
    through families.readers."""
    probe = (
        "import sys, pe_cli\n"
        "from pe_cli.families import FAMILIES\n"
        "family = FAMILIES['sinusoidal']\n"
        "for name, found in family.variants.items():\n"
        "    for convention in found.conventions:\n"
        "        for d in (16, 17):  # (a variant whose library writes only odd widths: 17)\n"
        "            try:\n"
        "                pe_cli.build(variant=name, convention=convention, d_model=d, seq_len=8).numpy()\n"
        "                break\n"
        "            except pe_cli.PeError:\n"
        "                assert d == 16\n"
        "table = pe_cli.build(convention='timestep', d_model=16, timesteps='999:-1:-20')\n"
        "family.facts(table.spec)\n"
        "print(sorted(m for m in sys.modules if 'identify' in m or 'readers' in m))\n"
        "found = pe_cli.identify(table.numpy())\n"
        "print(sorted(m for m in sys.modules if m.startswith('pe_cli.families.sinusoidal.')))\n"
        "print(found.candidates[0].spec.timesteps)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    building, identifying, timesteps = done.stdout.splitlines()
    assert building == "[]"
    assert "pe_cli.families.sinusoidal.identify" in identifying
    assert "pe_cli.families.sinusoidal.identify_timesteps" in identifying
    assert timesteps == "999:-1:-20"
