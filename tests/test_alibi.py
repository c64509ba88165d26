"""ALiBi biases in a library's arithmetic (--variant bloom, falcon, mpt with --part causal or
symmetric) against transformers' own alibi tensors, bit for bit; and identification of each
one's table by its own variant, with a command that rebuilds it."""

import json
import shlex

import numpy as np
import pytest
import torch

from pe_cli.engine import build

HEADS = (1, 5, 8, 12, 24)
LENGTH = 40


def _row(heads: int, length: int, library: str) -> torch.Tensor:
    """transformers' one row of biases per head, (heads, length), in float32: slope * key
    position (BLOOM, Falcon) or slope * (key - last query) (MPT)."""
    pytest.importorskip("transformers", reason="transformers is not installed")
    mask = torch.ones(1, length, dtype=torch.int64)
    if library == "mpt":
        from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

        return build_mpt_alibi_tensor(heads, length)[:, 0, :]
    if library == "bloom":
        from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    else:
        from transformers.models.falcon.modeling_falcon import build_alibi_tensor
    return build_alibi_tensor(mask, heads, torch.float32)[:, 0, :]


def _distance_biases(heads: int, length: int, library: str, part: str) -> np.ndarray:
    """The (heads, L, L) biases -m_h * distance read from the library's own products: BLOOM's
    and Falcon's row holds m_h * d at key d, MPT's -m_h * d at key L - 1 - d (a negated float
    product is the product of the negated operand, so the sign costs nothing)."""
    row = _row(heads, length, library).numpy()
    by_distance = row[:, ::-1] if library == "mpt" else -row  # -m_h * d at index d
    queries, keys = np.arange(length)[:, None], np.arange(length)[None, :]
    distance = queries - keys
    distance = np.abs(distance) if part == "symmetric" else np.maximum(distance, 0)
    return by_distance[:, distance] + np.float32(0)  # + 0: the zero distance as +0.0


@pytest.mark.parametrize("part", ["causal", "symmetric"])
@pytest.mark.parametrize("library", ["bloom", "falcon", "mpt"])
def test_biases_are_the_librarys_products_bit_for_bit(library, part):
    for heads in HEADS:
        ours = build(family="alibi", variant=library, heads=heads, seq_len=LENGTH, part=part)
        theirs = _distance_biases(heads, LENGTH, library, part)
        assert ours.numpy().shape == theirs.shape == (heads, LENGTH, LENGTH)
        assert ours.numpy().tobytes() == theirs.tobytes(), (library, heads)


@pytest.mark.parametrize("library", ["bloom", "falcon", "mpt"])
def test_slopes_are_the_librarys_bit_for_bit(library):
    for heads in HEADS:
        ours = build(family="alibi", variant=library, heads=heads)  # --part slopes, its default
        theirs = -_distance_biases(heads, 2, library, "causal")[:, 1, 0]  # m_h * 1
        assert ours.numpy().tobytes() == theirs.astype(np.float32).tobytes(), (library, heads)


def test_falcons_biases_are_bfloat16_and_not_blooms():
    """Falcon multiplies bfloat16 slopes, BLOOM float32 ones: 12 heads' tables differ, and
    every one of Falcon's values is a bfloat16."""
    falcon = build(family="alibi", variant="falcon", heads=12, seq_len=LENGTH, part="causal")
    bloom = build(family="alibi", variant="bloom", heads=12, seq_len=LENGTH, part="causal")
    values = falcon.float64()
    as_bfloat16 = torch.from_numpy(values).bfloat16().double().numpy()
    assert np.array_equal(values, as_bfloat16) and not np.array_equal(values, bloom.float64())


def _identified(cli, path):
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("library", ["bloom", "falcon", "mpt"])
def test_a_librarys_biases_are_named_and_rebuilt_by_its_command(cli, tmp_path, library):
    """A 12-head causal table of a library's biases is named as that library's variant, and
    both the --json spec and the printed command build it byte for byte (before, the spec
    said the exact variant, 1 ulp off in most elements, and no command built it)."""
    path = tmp_path / f"{library}.npy"
    theirs = _distance_biases(12, 64, library, "causal")
    np.save(path, theirs)
    found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["name"] == f"library {library}" and best["differing"] == 0
    assert best["spec"]["variant"] == library and best["spec"]["part"] == "causal"
    rebuilt = build(**{k: v for k, v in best["spec"].items() if v is not None})
    assert rebuilt.numpy().tobytes() == theirs.tobytes()
    again = tmp_path / "again.npy"
    code, _, err = cli(*shlex.split(found["command"])[1:], "-o", again)
    assert code == 0, err
    assert again.read_bytes() == path.read_bytes()
    # the exact table, 1 ulp off in most elements, is not the file
    exact = build(family="alibi", heads=12, seq_len=64, part="causal").numpy()
    assert exact.tobytes() != theirs.tobytes()


def test_the_exact_table_is_not_called_a_librarys(cli, tmp_path):
    path = tmp_path / "exact.npy"
    code, _, err = cli("generate", "--family", "alibi", "--heads", 12, "-l", 64, "-o", path)
    assert code == 0, err
    found = _identified(cli, path)
    assert [c["name"] for c in found["candidates"] if c["differing"] == 0] == [
        "alibi causal (Press et al. slopes)"
    ]
    assert found["command"] == "pe-cli generate --family alibi --seq-len 64 --heads 12"


def test_a_long_tables_biases_are_named_from_its_sample(cli, tmp_path, monkeypatch):
    """Biases of more than identify.WHOLE_ELEMENTS are read from their first head's first rows
    and confirmed over every row: the exact table and a library's are each named, bit for bit.
    With no last rows in the sample, MPT's 12 heads agree with the exact table on every row
    scored (its heads 8 to 11, the ones whose slopes are not powers of two, are met only at a
    zero row); the confirming pass then finds the exact table off, and MPT's variant is
    scored and confirmed after all, the note that it was not built withdrawn."""
    from pe_cli.analysis import identify

    exact = tmp_path / "exact.npy"
    code, _, err = cli("generate", "--family", "alibi", "--heads", 9, "-l", 512, "-o", exact)
    assert code == 0, err
    found = _identified(cli, exact)
    assert 9 * 512 * 512 > identify.WHOLE_ELEMENTS
    assert found["candidates"][0]["name"] == "alibi causal (Press et al. slopes)"
    assert found["candidates"][0]["differing"] == 0 and found["candidates"][0]["confirmed"]
    monkeypatch.setattr(identify, "SAMPLE_TAIL", 0)
    mpt = tmp_path / "mpt.npy"
    np.save(mpt, _distance_biases(12, 512, "mpt", "causal"))
    found = _identified(cli, mpt)
    best = found["candidates"][0]
    assert best["name"] == "library mpt" and best["differing"] == 0 and best["confirmed"]
    assert not any("were not built" in note for note in found["notes"])
    exact_candidate = next(c for c in found["candidates"] if c["spec"]["variant"] == "exact")
    assert exact_candidate["differing"] > 0
