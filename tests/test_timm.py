"""timm's 2-D sin-cos tables (layers/pos_embed_sincos.py build_sincos2d_pos_embed) against
timm 1.0.31 itself: `--variant timm` writes them bit for bit in both of timm's layouts, and
`compare FILE` names them, with a spec and a generate command that rebuild them byte for byte.

timm imports torchvision (timm.layers takes FrozenBatchNorm2d from it). The registry's
torchvision wheels are CUDA builds: on the import path beside a CPU torch they break
`import transformers`, and their own import fails at the fake kernels of two ops whose C++
library did not load. So .ci/run installs timm with --no-deps and torchvision with --no-deps
into build/torchvision, off the import path; `_timm` puts it on the path for the import alone,
after defining those two op schemas where torch has none.
"""

import functools
import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pe_cli

TORCHVISION = Path(__file__).resolve().parents[1] / "build" / "torchvision"
# the ops torchvision/_meta_registrations.py registers fake kernels for unconditionally, with
# their schemas as torchvision's C++ library defines them
_SCHEMAS = {
    "nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}


@functools.cache
def _timm():
    """timm.layers.pos_embed_sincos, imported beside a CPU torch with build/torchvision on the
    path for that import only (transformers, imported later, does not see torchvision)."""
    for name, schema in _SCHEMAS.items():
        if not hasattr(torch.ops.torchvision, name):  # a CUDA torch loads torchvision's own
            torch.library.define(f"torchvision::{name}", schema)
    sys.path.insert(0, str(TORCHVISION))
    try:
        import timm
        from timm.layers import pos_embed_sincos
    except ImportError as e:
        pytest.fail(
            f"timm is not importable ({e}): install it as .ci/run does (pip install --no-deps "
            "timm==1.0.31, and torchvision with --no-deps --target build/torchvision)",
            pytrace=False,
        )
    finally:
        sys.path.remove(str(TORCHVISION))
    assert timm.__version__ == "1.0.31", timm.__version__
    return pos_embed_sincos


def _theirs(grid, d, **keywords) -> np.ndarray:
    return _timm().build_sincos2d_pos_embed(list(grid), dim=d, **keywords).numpy()


# ViT-B/16 and ViT-L/16 at 224 px, a non-square feature map, a narrow one, one patch
CASES = [((14, 14), 768), ((16, 16), 1024), ((7, 9), 64), ((32, 24), 384), ((1, 1), 4)]


@pytest.mark.parametrize("grid, d", CASES)
@pytest.mark.parametrize("interleave", [False, True])
@pytest.mark.parametrize("temperature", [10000.0, 100.0])
def test_timm_variant_is_build_sincos2d_pos_embed(grid, d, interleave, temperature):
    ours = pe_cli.build(
        family="sincos2d",
        variant="timm",
        grid=grid,
        d_model=d,
        base=temperature,
        convention="timm-interleaved" if interleave else "timm",
    ).numpy()
    theirs = _theirs(grid, d, temperature=temperature, interleave_sin_cos=interleave)
    assert ours.dtype == theirs.dtype == np.float32
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("grid", [(7, 9), (14, 14)])
def test_reverse_coord_is_the_transposed_grid(grid):
    # reverse_coord stacks (W, H) in place of (H, W): the table of a W x H grid
    ours = pe_cli.build(family="sincos2d", variant="timm", grid=grid[::-1], d_model=64).numpy()
    assert np.array_equal(ours, _theirs(grid, 64, reverse_coord=True))


def _named_and_rebuilt(cli, tmp_path, table) -> dict:
    """compare FILE's best candidate, bit for bit, after checking that its --json spec and its
    printed generate command each rebuild FILE byte for byte."""
    path = tmp_path / "timm.npy"
    np.save(path, table)
    code, out, err = cli("compare", path)
    assert code == 0, err
    text = out.decode()
    printed = text.split("rebuilt by:\n", 1)[1].split("\n")
    folded = printed[: next(k for k, line in enumerate(printed) if not line.endswith(" \\")) + 1]
    words = shlex.split(" ".join(line.removesuffix(" \\") for line in folded))
    assert words[:2] == ["pe-cli", "generate"]
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == path.read_bytes()
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    best = found["candidates"][0]
    assert found["explained"] and best["differing"] == 0 and shlex.split(found["command"]) == words
    spec = pe_cli.TableSpec(**{**best["spec"], "shape": "2d"})
    assert np.array_equal(pe_cli.build(spec).numpy(), table)
    return best


@pytest.mark.parametrize(
    "grid, d, keywords",
    [
        ((14, 14), 768, {}),
        ((16, 16), 384, {"interleave_sin_cos": True}),
        ((12, 20), 256, {"reverse_coord": True}),
        ((8, 8), 64, {"temperature": 100.0}),
    ],
)
def test_compare_names_timms_tables(cli, tmp_path, grid, d, keywords):
    table = _theirs(grid, d, **keywords)
    best = _named_and_rebuilt(cli, tmp_path, table)
    # timm's float32 bands and angles are not the correctly rounded table: timm's own arithmetic
    exact = pe_cli.build(pe_cli.TableSpec(**{**best["spec"], "variant": "exact", "shape": "2d"}))
    assert not np.array_equal(exact.numpy(), table)
    rows, cols = grid[::-1] if keywords.get("reverse_coord") else grid
    assert best["name"] == "library timm"
    assert best["spec"]["grid"] == [rows, cols]
    assert best["spec"]["convention"] == (
        "timm-interleaved" if keywords.get("interleave_sin_cos") else "timm"
    )
    assert best["spec"]["base"] == keywords.get("temperature", 10000.0)


def test_a_long_timm_table_is_named_from_its_sample(cli, tmp_path):
    # ViT-L/14 at 672 px: a 48 x 48 grid 1024 wide, 2.4 M elements, past what identification
    # looks at whole
    table = _theirs((48, 48), 1024)
    assert table.size > 1 << 21
    np.save(tmp_path / "timm.npy", table)
    code, out, err = cli("compare", tmp_path / "timm.npy", "--json")
    assert code == 0, err
    found = json.loads(out)
    best = found["candidates"][0]
    assert best["name"] == "library timm" and best["differing"] == 0 and best["confirmed"]
    assert best["spec"]["grid"] == [48, 48]
    code, _, err = cli(*shlex.split(found["command"])[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == (tmp_path / "timm.npy").read_bytes()
