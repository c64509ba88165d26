"""A GGUF file as a rope config: its rope metadata and rope tensors, read with the gguf package's
GGUFReader (which maps the file and reads no weights), in the terms --rope-config gives a
config.json's (hf_config.read), as llama.cpp's loader reads them (llama-model.cpp
load_hparams, llama-context.cpp).

A GGUF has no rope-type key: llama.cpp pairs an architecture's columns by its own table,
llama_model_rope_type (src/llama-model.cpp), of which PAIRING holds the architectures that are
always NORM (interleaved) or NEOX (half). Freq factors (rope_freqs, which is how llama3 scaling
reaches a GGUF, and Phi-3's rope_factors_long and _short) divide each frequency: rope_freqs that
are a published llama3 scaling's factors bit for bit are read as that scaling; any others are
LongRoPE's factors, rope_type longrope.
"""

from __future__ import annotations

from typing import NamedTuple

from ...core.errors import BadInput, Unavailable

_NORM = (
    "llama llada llama4 deci baichuan starcoder internlm2 minicpm xverse command-r cohere2 "
    "cohere2moe olmo arctic deepseek deepseek2 deepseek2-ocr deepseek32 deepseek4 muse-glimmer "
    "plm chatglm granite granitemoe granitehybrid graniteswitch granite_swa chameleon "
    "bailingmoe neo-bert smollm3 arcee ernie4_5 ernie4_5-moe mistral3 eagle3 mistral4 "
    "llama-embed maincoder glm-dsa dots3note nanbeige pockettts hy_v4"
)
_NEOX = (
    "falcon falcon-h1 grok dbrx bert jina-bert-v3 modern-bert nomic-bert nomic-bert-moe eurobert "
    "stablelm bitnet qwen qwen2 dream qwen2moe qwen3 qwen3moe llada-moe rnd1 olmo2 olmoe phi2 "
    "phi3 phimoe plamo plamo2 plamo3 gemma gemma2 gemma3 gemma3n gemma4 gemma4-assistant "
    "gemma-embedding starcoder2 openelm gptneox codeshell orion nemotron exaone exaone4 "
    "exaone-moe minicpm3 bailingmoe2 dots1 hunyuan-moe jais2 gpt-oss hunyuan-dense hy_v3 lfm2 "
    "lfm2moe smallthinker seed_oss grovemoe apertus minimax-01 minimax-m2 minimax-m3 cogvlm "
    "pangu-embedded afmoe laguna qwen3next mimo2 step35 spark2_5 talkie mellum maple hrm_text"
)
# llama.cpp's llama_model_rope_type (llama-cpp-python 0.3.36's llama.cpp), by GGUF architecture
# name: the architectures it always gives LLAMA_ROPE_TYPE_NORM or _NEOX
PAIRING = {arch: "interleaved" for arch in _NORM.split()} | {arch: "half" for arch in _NEOX.split()}
# architectures whose loaders read rope keys of their own (YaRN's betas, ext and attn factors,
# log multiplier: models/grok.cpp, mistral3.cpp, deepseek2.cpp), which pe-cli does not model
_OWN_KEYS = ("grok", "mistral3", "mistral4", "deepseek2", "deepseek2-ocr", "deepseek32")


# llama3 scalings of published models (Llama 3.1 and 3.3: factor 8; Llama 3.2: 32; Llama 4:
# 16 with no middle band), whose rope_freqs a GGUF may hold
LLAMA3 = tuple(
    {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": 1.0,
        "high_freq_factor": high,
        "original_max_position_embeddings": 8192,
    }
    for factor, high in ((8.0, 4.0), (32.0, 4.0), (16.0, 1.0))
)


def _llama3(freqs: list, n_rot: int, base: float) -> dict | None:
    """The llama3 scaling whose factors rope_freqs are, bit for bit, as llama.cpp's converter
    computes them (llama3_freq_factors); None where none of LLAMA3's is."""
    from .llamacpp import llama3_freq_factors

    for rope in LLAMA3:
        if list(llama3_freq_factors(n_rot, base, rope)) == freqs:
            return dict(rope)
    return None


def is_gguf(source: str) -> bool:
    """A file that starts with GGUF's magic."""
    try:
        with open(source, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def _reader(source: str):
    try:
        import gguf
    except ImportError:
        raise Unavailable(
            f"{source} is a GGUF file: reading it needs the gguf package (pip install 'pe-cli[gguf]')"
        ) from None
    try:
        return gguf.GGUFReader(source)
    except Exception as e:  # a truncated or damaged file: ValueError, struct errors, ...
        raise BadInput(f"{source}: not a readable GGUF file ({e})") from None


def read(source: str) -> dict:
    """The rotary settings of a GGUF, as hf_config.read gives a config.json's."""
    import numpy as np

    reader = _reader(source)
    fields = {name: field for name, field in reader.fields.items() if not name.startswith("GGUF.")}

    def value(key, default=None):
        field = fields.get(key)
        return default if field is None else field.contents()

    arch = value("general.architecture")
    if not isinstance(arch, str):
        raise BadInput(f"{source}: the GGUF gives no general.architecture")
    if arch not in PAIRING:
        raise BadInput(
            f"{source}: architecture {arch!r} is not one llama.cpp always pairs NORM or NEOX "
            "(M-RoPE, no RoPE, or a pairing its hyperparameters choose); pe-cli does not build it"
        )

    def key(name, default=None):
        return value(f"{arch}.{name}", default)

    if arch in _OWN_KEYS and any(k.startswith(f"{arch}.rope.scaling.yarn_") for k in fields):
        raise BadInput(
            f"{source}: llama.cpp's {arch} loader reads YaRN keys of its own "
            "(rope.scaling.yarn_*), which pe-cli does not model"
        )
    heads, width = key("attention.head_count"), key("embedding_length")
    head = key("attention.key_length")
    if head is None:
        if not isinstance(heads, int) or not isinstance(width, int) or heads < 1:
            raise BadInput(
                f"{source}: the GGUF gives no {arch}.attention.key_length, nor "
                f"{arch}.embedding_length and {arch}.attention.head_count"
            )
        head = width // heads
    n_rot = key("rope.dimension_count", head)
    if not 0 < n_rot <= head:
        raise BadInput(f"{source}: rope.dimension_count {n_rot} is not within the head dim {head}")
    base = float(key("rope.freq_base", 10000.0))
    kind = key("rope.scaling.type", "linear")
    if kind not in ("none", "linear", "yarn", "longrope"):
        raise BadInput(
            f"{source}: unknown rope.scaling.type {kind!r} (llama.cpp's: none, linear, yarn, longrope)"
        )
    factor = float(key("rope.scaling.factor", key("rope.scale_linear", 0.0)) or 0.0)
    scaled = kind != "none" and factor not in (0.0, 1.0)
    attention = float(np.float32(key("rope.scaling.attn_factor", 1.0)))
    context = key("context_length")
    original = key("rope.scaling.original_context_length") or context
    tensors = {
        t.name: t
        for t in reader.tensors
        if t.name in ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")
    }

    def factors(name):
        found = tensors.get(f"{name}.weight")
        return None if found is None else [float(f) for f in np.asarray(found.data, np.float32)]

    freqs, long, short = (
        factors("rope_freqs"),
        factors("rope_factors_long"),
        factors("rope_factors_short"),
    )
    if freqs is not None or long is not None or short is not None:
        if scaled or kind == "yarn":
            raise BadInput(
                f"{source}: freq factors with rope.scaling.type {kind} and factor {factor:g} "
                "are not modelled"
            )
        if not original:
            raise BadInput(f"{source}: the GGUF gives no {arch}.context_length")
        if freqs is not None:  # llama.cpp takes rope_freqs over the long and short factors
            long = short = freqs
        rope = _llama3(freqs, n_rot, base) if attention == 1.0 and freqs is not None else None
        rope = rope or {
            "rope_type": "longrope",
            "long_factor": long or short,
            "short_factor": short or long,
            "original_max_position_embeddings": int(original),
            "attention_factor": attention,
            "factor": 1.0,
        }
    elif attention != 1.0:
        raise BadInput(
            f"{source}: rope.scaling.attn_factor {attention:g} without freq factors is not modelled"
        )
    elif kind == "yarn" and scaled:
        if key("rope.scaling.yarn_log_multiplier", 0.0):
            raise BadInput(f"{source}: YaRN's rope.scaling.yarn_log_multiplier is not modelled")
        if not original:
            raise BadInput(f"{source}: YaRN needs rope.scaling.original_context_length")
        rope = {
            "rope_type": "yarn",
            "factor": factor,
            "original_max_position_embeddings": int(original),
        }
    elif scaled:
        rope = {"rope_type": "linear", "factor": factor}
    else:
        rope = {}
    if n_rot != head:
        rope["partial_rotary_factor"] = n_rot / head
        if int(head * rope["partial_rotary_factor"]) != n_rot:
            raise BadInput(
                f"{source}: rotary dim {n_rot} of head dim {head} is no factor pe-cli can give"
            )
    length = {"length": int(context), "length_from": f"the GGUF's {arch}.context_length"}
    return {
        "base": base,
        "d_model": int(head),
        "rope": rope,
        "model_type": arch,
        "convention": PAIRING[arch],
        "arithmetic": "cos-sin",
        "axes": None,
        "merge": 1,
        **(length if isinstance(context, int) and context > 0 else {}),
    }


# The decoder layers llama.cpp rotates none of, by GGUF architecture: those with (il + 1) % step
# == 0, for a step its source sets and no GGUF key gives (llama-hparams.h's
# n_no_rope_layer_step, 4, which src/models/smollm3.cpp and llama4.cpp read; afmoe.cpp's literal
# 4). Llama 4's loader sets the step to the block count where the GGUF's attention.sliding_window
# is 0 (what convert_hf_to_gguf writes where every layer is full attention), which leaves the
# last layer unrotated.
NOPE_STEP = {
    "smollm3": "its smollm3 graph hard-codes n_no_rope_layer_step 4",
    "afmoe": "its afmoe graph hard-codes every 4th layer",
    "llama4": "its llama4 loader keeps n_no_rope_layer_step 4",
}


class NopeLayers(NamedTuple):
    """The layers llama.cpp applies no rotation in, for a GGUF, and why."""

    arch: str
    count: int  # the GGUF's block_count
    layers: tuple[int, ...]
    why: str


def nope_layers(source: str) -> NopeLayers | None:
    """The layers llama.cpp rotates none of in a GGUF of an architecture whose NoPE step its
    source sets (NOPE_STEP); None for any other architecture, and for a split GGUF's later
    parts (the first holds the metadata). BadInput (or Unavailable) where it cannot be read."""
    reader = _reader(source)

    def value(key):
        field = reader.fields.get(key)
        return None if field is None else field.contents()

    arch = value("general.architecture")
    if arch is None and value("split.no"):
        return None
    if not isinstance(arch, str):
        raise BadInput(f"{source}: the GGUF gives no general.architecture")
    if arch not in NOPE_STEP:
        return None
    count = value(f"{arch}.block_count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(f"{source}: the GGUF gives no {arch}.block_count")
    step, why = 4, NOPE_STEP[arch]
    if arch == "llama4" and value("llama4.attention.sliding_window") == 0:
        step = count
        why = "llama4.attention.sliding_window 0 sets n_no_rope_layer_step to the block count"
    return NopeLayers(arch, count, tuple(i for i in range(count) if (i + 1) % step == 0), why)
