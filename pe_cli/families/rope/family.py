"""The rope family: rotary embeddings' cos and sin tables, cos(p*w_i) and sin(p*w_i) times an
attention factor, each frequency in two columns, and the frequencies themselves (inv_freq).
This class is the family's interface; each method hands its work to the module that holds it:

    types.py        the rope types (ROPE_TYPES): keys, checks, exact and transformers' arithmetic
    keys.py         the --rope keys, as data, and their checks
    pairing.py      which columns hold frequency i, and the rotation part
    layouts.py      tables of several position axes: M-RoPE's (mrope.py), diffusers' (split.py)
    models/         each diffusion model's positions, laws and --preset, and their registry
    tokens.py       the positions of a table's rows
    exact.py        the exact table's shape, frequencies and rows
    transformers.py, diffusers.py   the libraries' arithmetic (--variant hf-rope, diffusers)
    mlx.py          an inference engine's (--variant mlx)
    llamacpp.py     llama.cpp's ggml CPU rope (--variant llama.cpp)
    vllm.py         vLLM's cos_sin_cache (--variant vllm)
    inputs.py       what --rope-config and --preset set
    layers.py       a config's model, layer by layer (--layer N, show's model view), with
                    schedules/ (one model's per-layer rules a module) and lint.py (its findings)
    query_scale.py  --part query-scale: the factor a layer multiplies its queries by
    checks.py       what the family refuses
    show.py         what show and compare say of a table
    identify/       reading tables back (registered in families/readers.py)
"""

from __future__ import annotations

from ...core.dtypes import DTYPE_ALIASES
from ...core.errors import BadInput
from ...core.params import Param
from ..base import TEXT_TOKENS, Family
from . import (
    checks,
    diffusers,
    exact,
    frameworks,
    inputs,
    keras_hub,
    keras_hub_jax,
    litgpt,
    llamacpp,
    mlx,
    ort_genai,
    show,
    torchtitan,
    transformers,
    vllm,
)
from .keys import rope_parameters
from .layouts import LAYOUTS, layout_of
from .models import PRESETS
from .models import pixel as pixel_model
from .types import rope_type


class Rope(Family):
    name = "rope"
    summary = "rotary embedding tables, every Hugging Face rope_type; --rope-config, --preset"
    conventions = {
        "half": "frequencies i and i+dim/2 pair up (GPT-NeoX, Hugging Face rotate_half)",
        "interleaved": "columns 2i and 2i+1 pair up (GPT-J, RoFormer, Meta's llama, Cohere)",
        "single": "one column per frequency (complex tables' real and imaginary parts; gpt-oss)",
    }
    parts = {
        "cos": "cos(p*w_i) * attention factor, (positions, rotary dim)",
        "sin": "sin(p*w_i) * attention factor, (positions, rotary dim)",
        "inv_freq": "the frequencies w_i, (rotary dim / 2,)",
        "rotation": "each interleaved pair's 2x2 rotation [[cos, -sin], [sin, cos]] flattened, (positions, "
        "2 x rotary dim): HiDream's and Kandinsky 5's tables",
        "cos-sin": "[cos | sin] of each frequency, one column each (--convention single): vLLM's "
        "and SGLang's cos_sin_cache, (positions, rotary dim)",
        "angle": "the angles p*w_i themselves, laid out as cos (no attention factor), (positions, rotary dim): "
        "ERNIE-Image's and Stable Audio 3's tables, whose cos and sin the attention takes",
        "query-scale": "the factor a layer multiplies its queries by at each position (Ministral 3's "
        "llama_4_scaling_beta, Llama 4's attn_temperature_tuning), (positions, 1): --layer N",
    }
    params = (
        Param(
            "rope",
            (),
            "A Hugging Face rope parameter KEY=VALUE (rope_type=yarn, factor=4, ...); repeat.",
            list,
        ),
        Param(
            "rope_config",
            None,
            "Take theta, head dim, rope parameters and the model's layout "
            "from a Hugging Face config.json, a model folder, or a model id in the local Hugging "
            "Face cache.",
            str,
            field=False,
        ),
        Param(
            "layer_type",
            None,
            "The layer type whose rope parameters a config gives per layer "
            "type (full_attention, sliding_attention, ...).",
            str,
            field=False,
        ),
        Param(
            "layer",
            None,
            "One decoder layer of a --rope-config model, by its index from 0: its own table "
            "(a NoPE layer is refused); show --rope-config lists the model's layers.",
            int,
            field=False,
            minimum=0,
        ),
        Param(
            "config_part",
            None,
            "The part of a composite config to read (text_config, "
            "vision_config, thinker_config.text_config, ...); default: the language model's.",
            str,
            field=False,
        ),
        Param(
            "axes",
            None,
            "Several position axes, each column taking one: a model's M-RoPE or "
            "vision RoPE layout (" + ", ".join(LAYOUTS) + "); set by --rope-config.",
            str,
            flags=("--rope-axes",),
            choices=tuple(LAYOUTS),
        ),
        Param(
            "grid",
            None,
            "The tokens of a multi-axis table: TxHxW frames, rows and columns of "
            "an image or video (M-RoPE), or ROWSxCOLUMNS patches (vision RoPE).",
            str,
        ),
        Param(
            "merge",
            None,
            "A vision encoder's spatial merge size: its patches come in MxM blocks "
            "[default: the --rope-config's, else 1].",
            int,
            minimum=1,
        ),
        Param(
            "arithmetic",
            None,
            "How hf-rope computes cos and sin: of the float32 angles "
            "(cos-sin), or through complex torch.polar (polar: DeepSeek-V2, Llama 4) [default: the "
            "--rope-config model's, else cos-sin].",
            str,
            flags=("--rope-arithmetic",),
            choices=("cos-sin", "polar"),
        ),
        Param(
            "preset",
            None,
            "A diffusion model's RoPE: head dim, theta, axes and layout ("
            + ", ".join(PRESETS)
            + "); give its tokens with --grid (and --text-tokens) or --ids.",
            str,
            field=False,
            choices=tuple(PRESETS),
        ),
        TEXT_TOKENS,
        Param(
            "padding_rows",
            0,
            "Rows of zeros after a diffusers multi-axis table's tokens (Lumina2's caption "
            "table, cap_freqs_cis, for a prompt shorter than its batch's longest).",
            int,
            minimum=0,
            fixed="has no padding rows",
        ),
        Param(
            "ids",
            None,
            "A multi-axis table's token positions: a .npy file of shape (tokens, axes), "
            "integers or floats as FLUX's ids (M-RoPE and vision layouts: whole numbers, as Cosmos 3's); or "
            "inline runs separated by ';', an entry per axis, each V or START:STOP[:STEP], either over /Q "
            "for positions k/Q (Q a power of two): a run is the grid of its ranges ('0,0,0,0:512; "
            "0,0:32,0:32,0'; FLUX.3's '0,0:32/2,0:32/2,-1'), or COUNT tokens along a line with COUNT* "
            "('5*8:13,8:13,8:13'). A 1-D table's rows, whole positions, one entry a run (OmniGen's prompt "
            "padded in its batch: '37*0; 0:300').",
            str,
        ),
        Param(
            "freqs_dtype",
            None,
            "What --variant diffusers computes frequencies, angles, cos and sin "
            "in (get_1d_rotary_pos_embed's freqs_dtype: float64 in FLUX and Wan, float32 in "
            "HunyuanVideo and CogVideoX) [default: the --preset's, else float32].",
            str,
            choices=("float32", "float64"),
            aliases=DTYPE_ALIASES,
        ),
    )
    variants = {
        **transformers.VARIANTS,
        **diffusers.VARIANTS,
        **mlx.VARIANTS,
        **llamacpp.VARIANTS,
        **vllm.VARIANTS,
        **frameworks.VARIANTS,
        **litgpt.VARIANTS,
        **torchtitan.VARIANTS,
        **keras_hub.VARIANTS,
        **keras_hub_jax.VARIANTS,
        **ort_genai.VARIANTS,
        **pixel_model.VARIANTS,
    }
    export_parts = ("cos", "sin")

    # ----------------------------------------------------------------- parameters and inputs

    def from_options(self, options):
        """--rope KEY=VALUE pairs over a --rope-config's or --preset's settings, and each
        option given over the value the config or preset sets (the model's head dim, theta,
        layout, arithmetic and, for a 1-D table, its length)."""
        values = inputs.from_options(super().from_options(options), options, self.name)
        if self._own_layout(options, values.get("convention")) is not None:
            del values["convention"]  # the variant lays its table out its own way
        return values

    def _own_layout(self, options, convention):
        """A variant's own layout where it cannot lay out the config's pairing and no
        --convention was given (llama-models' freqs_cis, ORT-GenAI's cache: one column per
        frequency of a half-paired model): (its layout, the config's), else None."""
        name = options.get("variant")
        variant = self.variants.get(name) if isinstance(name, str) else None
        if variant is None or options.get("convention") is not None or convention is None:
            return None
        if convention in variant.conventions or not variant.conventions:
            return None
        return variant.conventions[0], convention

    def notes(self, options):
        return inputs.notes(options, self.name, self.params, self._own_layout)

    def unused(self, spec, options):
        from .keys import unread

        given = options.get("rope") or []
        if isinstance(given, dict):  # from Python: a config's rope parameters, read as it is
            return {}
        rope = dict(spec.rope)
        lines = {f"--rope {k}": unread(rope, k, v) for k, v in inputs.rope_items(given)}
        return {flag: line for flag, line in lines.items() if line}

    def library(self, options):
        return inputs.library(options)

    def selections(self, options):
        return inputs.selections(options)

    def model(self, options):
        return inputs.model(options)

    def normalize(self, spec):
        return {
            "rope": rope_parameters(spec.rope),
            "merge": spec.merge or 1,
            "arithmetic": spec.arithmetic or "cos-sin",
        }

    def default_convention(self, spec):
        layout = layout_of(spec)
        if layout is not None and layout.convention:
            return layout.convention
        return super().default_convention(spec)

    def check(self, spec):
        checks.check(spec)

    def compare_files(self, a, b):
        from .gguf_check import compare_files

        return compare_files(a, b)

    def rotation_planes(self, spec, rows, variant=None):
        import numpy as np

        from .pairing import pair_columns

        name = variant or spec.variant
        chosen = self.variants.get(name)
        # one column a pair where the variant lays its table out so (llama.cpp's does not); a
        # layout of several axes pairs its columns its own way, one column a pair read from it
        if spec.axes:
            convention = spec.convention
        elif chosen is None or "single" in chosen.conventions:
            convention = "single"
        elif spec.convention in chosen.conventions:
            convention = spec.convention
        else:
            convention = chosen.conventions[0]
        if convention == "single":
            columns = None
        else:
            n = self.cols(spec.replace(convention=convention)) // 2
            columns = np.arange(2 * n)[pair_columns(n, convention)[0]]
        cos, sin = (
            spec.replace(
                variant=name,
                part=part,
                convention=convention,
                dtype="float32",
                seq_len=rows,
                offset=0,
                compute_dtype=None,
            )
            for part in ("cos", "sin")
        )
        return cos, sin, columns

    def axes_layouts(self, spec, follows, pairing, ids, tokens):
        from .sections import layouts_for

        return layouts_for(spec, follows, pairing, ids, tokens)

    def engines(self, spec, options, dtype="float32", frameworks=False):
        """With a model's config (--rope-config), each engine variant's table for it (those
        registered with an engine; with `frameworks`, the training frameworks' first), in
        `dtype` and the config's pairing, or the variant's own where it pairs the dims only so
        or keeps one column per frequency (the same values; columns_as lays them out alike)."""
        if not options.get("rope_config"):
            return []
        chosen = [(v.framework, v) for v in self.variants.values() if frameworks and v.framework]
        chosen += [(v.engine, v) for v in self.variants.values() if v.engine]
        return [(who, _engine_table(spec, variant, dtype)) for who, variant in chosen]

    def columns_as(self, spec, other):
        from .pairing import reordered, spread

        if spec.axes or spec.part not in ("cos", "sin") or spec.convention == other.convention:
            return None
        if spec.convention == "single":
            return spread(exact.cols(spec), other.convention)
        return reordered(exact.cols(spec) // 2, spec.convention, other.convention)

    # ------------------------------------------------------------------------------ numbers

    def rows(self, spec):
        return exact.rows(spec)

    def cols(self, spec):
        return exact.cols(spec)

    def dims(self, spec):
        return (self.cols(spec),) if exact.vector(spec) else super().dims(spec)

    def frequencies(self, spec):
        return exact.frequencies(spec)

    def exact_rows(self, spec, start, stop, work):
        return exact.exact_rows(spec, start, stop, work)

    def fast_columns(self, spec):
        return exact.fast_columns(spec)

    def fast_finish(self, spec, block, start, stop):
        return exact.fast_finish(spec, block, start, stop)

    def window(self, spec, start, stop):
        # a 1-D table's rows are its positions: rows start..stop are the table from offset +
        # start, whose largest position, which dynamic NTK and LongRoPE read, is the same
        if spec.axes or spec.ids is not None or exact.vector(spec):
            return None
        return spec.replace(offset=spec.offset + start, seq_len=stop - start)

    def prefix(self, spec, rows):
        # dynamic NTK and LongRoPE choose their frequencies by the table's length
        if spec.axes or spec.ids is not None or rope_type(dict(spec.rope)).lengthwise:
            return None
        return spec.replace(seq_len=rows)

    # ---------------------------------------------------------------------------------- show

    def settings(self, spec):
        return show.settings(spec, super().settings(spec))

    def scaling(self, spec):
        return show.scaling(spec)

    def row_label(self, spec):
        return show.row_label(spec) or super().row_label(spec)

    def row_norm(self, spec):
        return None if self._engine_reads(spec) else show.row_norm(spec)

    def served(self, spec):
        return show.served(spec)

    def fact_lines(self, facts):
        return show.fact_lines(facts)

    def facts(self, spec):
        found = show.facts(spec)
        if self._engine_reads(spec):  # the model's factor and frequencies, not the engine's
            found = {k: v for k, v in found.items() if k not in ("attention_factor", "frequencies")}
        return found

    def _engine_reads(self, spec) -> bool:
        """An inference engine's table (mlx, llama.cpp, vllm), which may read the model's rope
        parameters otherwise (MLX's YaRN reads no attention_factor): show lists no attention
        factor or frequencies for it, and checks no row norms by them."""
        found = self.variants.get(spec.variant)
        return found is not None and found.engine not in ("", "transformers")


FAMILY = Rope()


def _engine_table(spec, variant, dtype):
    """A variant's table of a model's spec in `dtype`, in the spec's pairing or else one of
    the variant's own that holds the same frequencies; why it cannot, where it cannot."""
    fields = dict(variant=variant.name, dtype=dtype, compute_dtype=None, shape="2d")
    try:
        return spec.replace(**fields)
    except BadInput as e:
        why = str(e)
    for own in variant.conventions:
        alike = exact.cols(spec.replace(convention=own)) == exact.cols(spec)
        if own != spec.convention and (alike or own == "single"):
            try:
                return spec.replace(**fields, convention=own)
            except BadInput as e:  # its refusal in its own pairing says more than the pairing
                why = str(e)
    return why
