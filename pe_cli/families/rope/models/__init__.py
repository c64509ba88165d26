"""The diffusion models whose RoPE pe-cli builds as diffusers 0.42 does (--preset): one module
each, holding its positions, laws, layout and presets. This is their registry: one line per
preset, in the order --help lists them and identification tries them. It also makes the
lookups every layout and key is found in (layouts.LAYOUTS, keys.KEYS): transformers' layouts
(mrope.py), the generic split layouts (split.py), then each preset's, with their keys.

Adding a model: its module here, and its preset's line in PRESETS, "module.PRESET" (its layout,
its keys and its place in --rope-axes's list follow from the preset).
"""

from __future__ import annotations

from importlib import import_module

from .. import mrope, split
from ..keys import KEYS
from ..layouts import LAYOUTS


def _registered(*names):
    """The objects named "module.NAME", each from this package's module of that name (imported
    here, so that a model's one line below is all the registry needs of it)."""
    for name in names:
        module, _, attribute = name.partition(".")
        yield getattr(import_module(f"{__name__}.{module}"), attribute)


PRESETS = {
    preset.name: preset
    for preset in _registered(
        "flux.FLUX",
        "flux.FLUX2",
        "wan.WAN",
        "hunyuan_video.HUNYUAN_VIDEO",
        "hunyuan_image.HUNYUAN_IMAGE",
        "cogvideox.COGVIDEOX_15",
        "cogvideox.COGVIDEOX",
        "hunyuan_dit.HUNYUAN_DIT",
        "lumina.LUMINA_NEXT",
        "lumina.LUMINA2",
        "qwenimage.QWENIMAGE",
        "allegro.ALLEGRO",
        "z_image.Z_IMAGE",
        "ltx.LTX_VIDEO",
        "helios.HELIOS",
        "wan.WAN_COMPLEX",
        "motif_video.MOTIF_VIDEO",
        "sana_wm.SANA_WM",
        "kandinsky.KANDINSKY6",
        "kandinsky.KANDINSKY6_TEXT",
        "flux.FLUX3",
        "krea2.KREA2",
        "prx.PRX",
        "ernie_image.ERNIE_IMAGE",
        "nucleus_image.NUCLEUS_IMAGE",
        "ovis_image.OVIS_IMAGE",
        "longcat_image.LONGCAT_IMAGE",
        "hidream.HIDREAM",
        "kandinsky.KANDINSKY5",
        "kandinsky.KANDINSKY5_TEXT",
        "ltx.LTX2",
        "ltx.LTX2_CROSS",
        "ltx.LTX2_AUDIO",
        "cogview4.COGVIEW4",
        "cosmos3.COSMOS3",
        "glm_image.GLM_IMAGE",
        "cosmos.COSMOS",
        "ideogram4.IDEOGRAM4",
        "qwenimage21.QWENIMAGE21",
    )
}

# The split layouts in the order --rope-axes has listed them since before each moved into its
# model's module; a layout not listed here follows them in its preset's order.
LISTED = (
    split.SPLIT,
    *_registered(
        "flux.SPLIT_TEXT_LAST",
        "lumina.LUMINA_NEXT_LAYOUT",
        "lumina.LUMINA2_LAYOUT",
        "qwenimage.QWENIMAGE_LAYOUT",
        "allegro.ALLEGRO_LAYOUT",
        "z_image.Z_IMAGE_LAYOUT",
        "cosmos.COSMOS_LAYOUT",
        "ltx.LTX_VIDEO_LAYOUT",
        "flux.FLUX3_LAYOUT",
        "ernie_image.ERNIE_IMAGE_LAYOUT",
        "nucleus_image.NUCLEUS_IMAGE_LAYOUT",
        "ovis_image.OVIS_IMAGE_LAYOUT",
        "longcat_image.LONGCAT_IMAGE_LAYOUT",
        "hidream.HIDREAM_LAYOUT",
        "kandinsky.KANDINSKY5_LAYOUT",
        "kandinsky.KANDINSKY5_TEXT_LAYOUT",
        "ltx.LTX2_LAYOUT",
        "ltx.LTX2_AUDIO_LAYOUT",
        "cosmos3.COSMOS3_LAYOUT",
    ),
    split.SPLIT_DOUBLED,
    *_registered(
        "cogview4.COGVIEW4_LAYOUT",
        "cogvideox.COGVIDEOX_LAYOUT",
        "hunyuan_dit.HUNYUAN_DIT_LAYOUT",
        "pixel.PIXEL_LAYOUT",
    ),
)
LAYOUTS.update(
    (layout.name, layout)
    for layout in (*mrope.LAYOUTS, *LISTED, *(p.layout for p in PRESETS.values()))
)
KEYS.update((key.name, key) for layout in LAYOUTS.values() for key in layout.keys)
