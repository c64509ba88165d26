"""The sums a rotation is read back from: the C sweep of a block (numerics/_pairs.c) against
numpy's sums over float64 copies (rotation._Sums._summed, the path taken without a compiler),
and a whole report read with either."""

import numpy as np
import pytest

from pe_cli.analysis import rotation, rotation_report

needs_kernel = pytest.mark.skipif(rotation._pairs is None, reason="the C sums were not built")


def _block(rng, dtype, rows=9, vectors=5, dim=24, rotated=True):
    """BEFORE and AFTER rows: a rotation by random angles (or random AFTER), in `dtype`."""
    x = rng.standard_normal((rows, vectors, dim))
    if not rotated:
        return x.astype(dtype), rng.standard_normal(x.shape).astype(dtype)
    half = dim // 2
    angle = rng.uniform(-np.pi, np.pi, (rows, 1, half))
    y = x.copy()
    y[..., :half] = x[..., :half] * np.cos(angle) - x[..., half:] * np.sin(angle)
    y[..., half:] = x[..., half:] * np.cos(angle) + x[..., :half] * np.sin(angle)
    return x.astype(dtype), y.astype(dtype)


def _pairings(dim):
    yield from rotation._hypotheses(dim)
    yield from rotation._hypotheses(dim - 8)  # a partial-rotary width: the dims past it unread


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rotated", [True, False])
def test_the_c_sums_are_numpys(dtype, rotated):
    rng = np.random.default_rng(4)
    x, y = _block(rng, dtype, rotated=rotated)
    for p in _pairings(x.shape[-1]):
        swept, summed = rotation._Sums(p, True, 0.9, len(x)), rotation._Sums(p, True, 0.9, len(x))
        power, wpower, cross = swept._swept(x, y)
        want_power, want_wpower, want_cross = summed._summed(x, y)
        # each a sum of at most 2 x 5 exact products of float32 values (float64 ones rounded
        # once each), added in another order: to a few float64 roundings of the sums' size
        size = float(np.max(want_wpower + want_power))
        for got, want in ((power, want_power), (wpower, want_wpower), (cross, want_cross)):
            assert np.max(np.abs(got - want)) <= 1e-14 * size
        assert swept.a == pytest.approx(summed.a, rel=1e-12, abs=1e-12 * size)
        assert swept.b == pytest.approx(summed.b, rel=1e-12, abs=1e-12 * size)
        # and what the two lead to: the same fit to float64's rounding
        swept.add(x, y), summed.add(x, y)
        got, want = swept.fit(1.0, 0.0), summed.fit(1.0, 0.0)
        assert got.scale == pytest.approx(want.scale, rel=1e-14)
        assert got.misfit == pytest.approx(want.misfit, rel=1e-9, abs=1e-13)
        assert np.allclose(got.c, want.c, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-13)


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_dims_are_numpys(dtype, monkeypatch):
    """Which dims move (by more than the unit's rounding), each dim's largest change and the
    squares of BEFORE, block by block: the C sweep's are numpy's, the first two exactly."""
    rng = np.random.default_rng(5)
    unit = 2.0**-24
    swept, summed = rotation._Dims(24, unit), rotation._Dims(24, unit)
    for k in range(3):
        x, y = _block(rng, dtype)
        y[..., 20:] = x[..., 20:]  # passed through: never moves
        y[..., 18] = x[..., 18] * (1 + unit / 2)  # within the rounding: not moved
        if k == 2:
            y[3, 1, 21] = np.nextafter(x[3, 1, 21], np.inf)  # one ulp: not moved either
            y[4, 2, 22] = x[4, 2, 22] + 1  # moved, in the last block only
        swept.add(x, y)
        with monkeypatch.context() as patched:
            patched.setattr(rotation, "_pairs", None)
            summed.add(x, y)
    assert np.array_equal(swept.moved, summed.moved)
    assert np.flatnonzero(~swept.moved.astype(bool)).tolist() == [18, 20, 21, 23]
    assert np.array_equal(swept.largest, summed.largest)
    assert swept.squares == pytest.approx(summed.squares, rel=1e-13)
    assert swept.tail(20) == summed.tail(20) > 0.5 and swept.tail(24) == 0.0


@needs_kernel
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_report_is_the_same_without_the_c_sums(dtype, monkeypatch):
    """A partial-rotary dump with an offset and a folded scale, read with the C sums and
    without them (numpy's float64 path): the same pairing, dims, findings, table and rebuild,
    and the same angles to float64's rounding."""
    import torch
    from transformers.models.llama import modeling_llama

    rng = np.random.default_rng(6)
    x = torch.from_numpy(rng.standard_normal((1, 4, 40, 64)).astype(np.float32))
    x = x.to(getattr(torch, dtype))
    inv = 1.0 / (10000 ** (torch.arange(0, 48, 2, dtype=torch.float32) / 48))
    angles = torch.outer(torch.arange(5, 45, dtype=torch.float32), inv)
    cos, sin = (torch.cat([f(angles)] * 2, -1)[None].to(x.dtype) for f in (torch.cos, torch.sin))
    turned = modeling_llama.apply_rotary_pos_emb(x[..., :48], x[..., :48], cos, sin)[0]
    after = torch.cat([turned * 1.25, x[..., 48:]], -1)

    def read():
        act = rotation.activations(x.float().numpy(), after.float().numpy(), dtype)
        return rotation_report.report(act, "test")

    fast = read()
    monkeypatch.setattr(rotation, "_pairs", None)
    slow = read()
    assert fast.pairing == slow.pairing == "half"
    assert fast.rotary_dims == slow.rotary_dims == list(range(48))
    assert fast.codes() == slow.codes() and "offset" in fast.codes()
    assert fast.reading.fit.scale == pytest.approx(slow.reading.fit.scale, rel=1e-14)
    assert np.allclose(fast.reading.angles, slow.reading.angles, rtol=0, atol=1e-6)
    assert fast.named.name == slow.named.name and fast.rebuilt == slow.rebuilt


@pytest.mark.parametrize("kernel", [True, False])
@pytest.mark.parametrize("where", [(30, 2, 5), (30, 2, 21), (0, 0, 0)])
def test_inf_or_nan_in_any_block_is_refused(tmp_path, monkeypatch, kernel, where):
    """A nan in a turning dim far down, an inf past the rotary dim, or either in the first
    block: one line, whichever block holds it, with the C sums or numpy's."""
    from pe_cli.analysis import rotation_files
    from pe_cli.core.errors import BadInput

    if not kernel:
        monkeypatch.setattr(rotation, "_pairs", None)
    monkeypatch.setattr(rotation, "BLOCK_ELEMENTS", 4 * 5 * 24)  # 4 rows a block
    x, y = _block(np.random.default_rng(7), np.float32, rows=40)
    y[..., 20:] = x[..., 20:]  # a partial-rotary tail
    for bad in (np.nan, np.inf):
        broken = y.copy()
        broken[where] = bad
        np.save(tmp_path / "before.npy", x)
        np.save(tmp_path / "after.npy", broken)
        with pytest.raises(BadInput, match=r"before.npy or .*after.npy holds inf or nan$"):
            rotation_files.from_files(tmp_path / "after.npy", tmp_path / "before.npy")


@needs_kernel
def test_the_c_rebuild_comparison_is_numpys(monkeypatch):
    """A float32 rebuild against AFTER, block by block: bit for bit where AFTER is numpy's own
    float32 rotation, and where a value, a tail dim or a whole pairing is off, the same largest
    difference at the same place as numpy's comparison (ties broken alike: the first)."""
    from types import SimpleNamespace

    from pe_cli.analysis import rotation_rebuild

    rng = np.random.default_rng(9)
    act = SimpleNamespace(dtype="float32")
    for p in _pairings(24):
        planes = rng.uniform(-1, 1, (2, 12, p.pairs)).astype(np.float32)
        for how in ("equal", "one value", "tail", "tie", "other planes"):
            blocks = []
            for start in (0, 6):
                x = rng.standard_normal((6, 3, 24)).astype(np.float32)
                cos, sin = planes[0][start : start + 6], planes[1][start : start + 6]
                y = rotation_rebuild.apply(x, cos, sin, p, "float32").astype(np.float32)
                if how == "one value" and start:
                    y[2, 1, p.out[1][3]] += np.float32(0.25)
                if how == "tail" and p.width < 24:
                    y[4, 0, 22] = np.nextafter(y[4, 0, 22], np.float32(9))
                if how == "tie":  # the same difference in two places: the first is said
                    y[1, 2, p.out[0][5]] += np.float32(0.5)
                    y[3, 0, p.out[0][1]] += np.float32(0.5)
                if how == "other planes":
                    cos = np.roll(cos, 1, axis=1)
                blocks.append((start, x, y, cos, sin))
            gaps = []
            for kernel in (True, False):
                gap = rotation_rebuild._Gap()
                with monkeypatch.context() as patched:
                    if not kernel:
                        patched.setattr(rotation, "_pairs", None)
                    for block in blocks:
                        gap.add(act, p, *block)
                gaps.append((gap.equal, gap.largest, gap.at))
            assert gaps[0] == gaps[1], (p.name, p.width, p.written, how)
            assert gaps[0][0] == (how == "equal" or how == "tail" and p.width == 24)
