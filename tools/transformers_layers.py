"""What each decoder layer of a transformers model applies to its queries and keys, read from
the model itself: a small model is built from its config class (sizes shrunk, every key that
sets positions kept), its forward run on a few tokens, and every call of its modeling module's
rotary apply function (apply_rotary_pos_emb, apply_rotary_emb, ...) recorded with the layer
that made it. A layer that calls none applies no rotary embedding.

`python -m tools.transformers_layers [MODEL_TYPE ...]` prints each model type's schedule:
which layers rotate, by which table's width, and which do not. tests/test_layers.py holds
pe-cli's `--layer N` to these records.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import logging
import pkgutil
import re
import warnings
from functools import cache

TOKENS = 12  # positions 0 .. TOKENS - 1 of one sequence
# the sizes a small model is built with, where its config class has the key; every other key
# (rope parameters, layer types, head dims the rotation reads) keeps its default
SHRUNK = {
    "vocab_size": 128,
    "hidden_size": 64,
    "intermediate_size": 32,
    "moe_intermediate_size": 16,
    "shared_expert_intermediate_size": 16,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "n_routed_experts": 4,
    "num_experts": 4,
    "num_local_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "q_lora_rank": 32,
    "kv_lora_rank": 16,
    "linear_num_value_heads": 2,
    "linear_num_key_heads": 2,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "index_n_heads": 2,
    "vocab_size_per_layer_input": 128,
    "hidden_size_per_layer_input": 8,
    "encoder_hash_byte_group_vocab": 64,  # BLT's hash embeddings' rows, each n-gram size's
}
_GLM = {
    "rope_type": "default",
    "rope_theta": 10000.0,
    "partial_rotary_factor": 0.5,
    "mrope_section": [8, 12, 12],
}
# what a type's default config lacks (or holds at odds with its own modeling code) and every
# published config of the type sets, without which transformers' own model does not run: the
# published values where they fit a small model, else a schedule of the same kinds of layer
PUBLISHED = {
    # no attention layer by default; Bamba-9B attends at layers 9, 18 and 27 of 32
    "bamba": {"attn_layer_indices": [3, 7]},
    # every layer a Mamba layer by default, and no rotation (position_embedding_type None):
    # granite-4.0-h attends at one layer in about ten, granite-4.0-micro rotates ("rope")
    "granitemoehybrid": {
        "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 2,
        "position_embedding_type": "rope",
    },
    # its multimodal rotation needs axes (mrope_section, or the legacy xdrope_section) that sum
    # to head_dim // 2; HunYuan-VL's configs give four
    "hunyuan_vl_text": {
        "head_dim": 128,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [16, 16, 16, 16],
        },
    },
    # their modules split half the rotated dims into mrope_section (by default [8, 12, 12]: 32
    # of a 128 head dim's 64), which GLM-4.1V's, GLM-4.5V's and GLM-Image's configs make whole
    # with partial_rotary_factor 0.5 (GLM-4.5V: 96 heads of head_dim 128 in 4096)
    **dict.fromkeys(("glm4v_text", "glm_image_text"), {"rope_parameters": _GLM}),
    "glm4v_moe_text": {"head_dim": 128, "rope_parameters": _GLM},
    # its o_proj maps hidden_size to hidden_size: heads x head_dim (128, kept) must be it
    "helium": {"hidden_size": SHRUNK["num_attention_heads"] * 128},
    # layer_types None by default, which its layers cannot read; LFM2-8B-A1B's are mostly
    # convolutions with an attention layer every few
    "lfm2_moe": {"layer_types": ["conv", "conv", "full_attention", "conv"] * 2},
    # the image tokens' map, which its model reads on building (published: the tokenizer's)
    "chameleon": {"vocabulary_map": {"<image>": SHRUNK["vocab_size"] - 1}},
    # the audio pad token is the last of its embedding's vocab_size + 32 x 2049 + 1 rows
    "kyutai_speech_to_text": {"audio_pad_token_id": SHRUNK["vocab_size"] + 32 * 2049},
    # the CTC blank is the last token
    "nemotron3_5_transcribe_word_timestamp": {"blank_token_id": SHRUNK["vocab_size"] - 1},
    # its attention reads attn_config.rope_theta (unused: the rotation reads rope_parameters),
    # and clips by clip_qkv (None fails), which DBRX's published attn_config sets; its
    # sizes go by names of its own (n_heads, d_model: head dim 128 kept, ffn_config)
    "dbrx": {
        "d_model": SHRUNK["num_attention_heads"] * 128,
        "n_heads": SHRUNK["num_attention_heads"],
        "attn_config": {"rope_theta": 500000.0, "kv_n_heads": 2, "clip_qkv": 8},
        "ffn_config": {"ffn_hidden_size": 32},
    },
    # the last num_kv_shared_layers (15 of 35) reuse earlier layers' keys: 5 of 10 layers
    "gemma3n_text": {"num_hidden_layers": 10, "num_kv_shared_layers": 5},
    # its sizes go by names of its own (ffn_hidden_size, expert_ffn_hidden_size, moe_topk),
    # and its 256 zero experts too
    "longcat_flash": {
        "ffn_hidden_size": 32,
        "expert_ffn_hidden_size": 16,
        "zero_expert_num": 1,
        "moe_topk": 2,
    },
    # its rotary module reads rope_parameters per layer type (null: that type is NoPE), and
    # the default gives none; here both types rotate, each by its own base
    "cohere_compass_text": {
        "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2,
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "default", "rope_theta": 50000.0},
        },
    },
    # the flow head is conditioned on the backbone's states: condition_dim must be its
    # hidden_size, here heads x head_dim (64, kept)
    **dict.fromkeys(
        ("pocket_tts", "gradium_phonon_tts"),
        {
            "hidden_size": SHRUNK["num_attention_heads"] * 64,
            "flow_head_config": {"condition_dim": SHRUNK["num_attention_heads"] * 64},
        },
    ),
    # num_hidden_layers is the layers of one of its two stacks, which its class multiplies by
    # the runs of the stacks (2 H cycles x (3 L cycles + 1)): one layer a stack makes 8 runs
    "hrm_text": {"num_hidden_layers": 1},
    # its sliding layers' sizes go by names of their own (swa_*, the released checkpoint's,
    # which its class makes per_layer_config): shrunk alike, head dims kept; its attention
    # needs as many key heads as query heads
    "dots3_note_text": {
        "num_key_value_heads": SHRUNK["num_attention_heads"],
        **{
            f"swa_{key}": SHRUNK["num_attention_heads"] if "heads" in key else SHRUNK[key]
            for key in ("num_attention_heads", "num_key_value_heads", "q_lora_rank", "kv_lora_rank")
        },
    },
    # its language models, built alone (candidates(): the model class named for the config):
    # each layer's MLP kind, which DeepSeek-OCR 2's default leaves None (its first layer dense,
    # as DeepSeek's first_k_dense_replace 1 makes it)
    "deepseek_ocr2_text": {"mlp_layer_types": ["dense"] + ["sparse"] * 7},  # LAYERS layers
    # text and vision experts' sizes, a list (a number is refused)
    "ernie4_5_vl_moe_text": {"moe_intermediate_size": [16, 16]},
    # its model builds a sliding-window mask whether or not a layer slides: the window its
    # published configs give (it changes no rotation)
    "step3p5": {"sliding_window": 512},
    # the thinker's states it takes are embedding_size wide: its own hidden size here
    "qwen2_5_omni_talker": {"embedding_size": SHRUNK["hidden_size"]},
    # its indexed_attention layers need the QSA indexer's sizes, which the default leaves None
    "qwen4_exp_text": {
        "indexer_n_heads": 2,
        "indexer_kv_heads": 1,
        "indexer_head_dim": 256,
        "indexer_budget": 4,
        "indexer_compress_ratio": 2,
    },
}
# models whose parts (vision and audio towers, a codec, a protein encoder: their sub-configs)
# make the model too large when only the decoder is shrunk: each part built small as well
# (small_config), with these keys beside, where the part's own sizes must agree with the
# others'
PARTS = {
    # Mimi's transposed convolutions group its hidden_size channels in upsample_groups; the
    # depth decoder projects the backbone's states
    "csm": {
        "codec_config": {"upsample_groups": SHRUNK["hidden_size"]},
        "depth_decoder_config": {"backbone_hidden_size": SHRUNK["hidden_size"]},
    },
    "idefics": {},
    # BLT's local encoder and decoder cross-attend the global transformer's states (its head
    # dim, 128, kept); two layers a part, as each part's layers are alike
    "blt": {
        "patcher_config": {"num_hidden_layers": 2},
        "global_config": {"num_hidden_layers": 2},
        **{
            key: {"hidden_size_global": SHRUNK["num_attention_heads"] * 128, "num_hidden_layers": 2}
            for key in ("encoder_config", "decoder_config")
        },
    },
    "phi4_multimodal": {},
    "evolla": {},
}
# models whose weights decide positions: BLT's patcher groups bytes into patches by the
# entropy its weights give, and the global transformer's positions are the patches (memory
# left uninitialised gave any count of them, or NaN logits and no run at all)
WEIGHED = {"blt"}
LARGEST = 64_000_000  # parameters of a small model
LAYERS = 8  # at most this many decoder layers: each schedule's period and first layers


def _quiet():
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


@dataclasses.dataclass
class Applied:
    """One call of a rotary apply function: the cos and sin (or complex freqs) it was given."""

    function: str
    tables: tuple  # (cos, sin) as (tokens, width) float tensors


@dataclasses.dataclass
class Schedule:
    model_type: str
    config: object  # the small model's config
    layers: list  # per decoder layer: Applied, or None where it applies no rotation
    scales: list  # per decoder layer: the query's scale by position (tokens,), or None
    given: dict = dataclasses.field(default_factory=dict)  # small_config's keys beyond SHRUNK
    # an encoder-decoder model's encoder layers: Applied, or None (empty for the others)
    encoder: list = dataclasses.field(default_factory=list)
    # a model made of parts, each a stack of layers from its own config part, and none of its
    # own (BLT): its layers, by the part's key; `layers` is then empty
    parts: dict = dataclasses.field(default_factory=dict)


def _fields(cls) -> set:
    return {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()


def _get(config, key):
    """An attribute, or None where the config has none (or one per layer only)."""
    try:
        return getattr(config, key, None)
    except Exception:
        return None


def small_config(cls, **given):
    """The config class built small: SHRUNK's sizes where it has those keys, at most LAYERS
    layers (or `given`'s num_hidden_layers), head dims as the class derives them unless `given`
    says."""
    fields = _fields(cls)
    values = {k: v for k, v in SHRUNK.items() if k in fields}
    default = cls()
    layers = _get(default, "num_hidden_layers")
    if isinstance(layers, int) and layers > given.get("num_hidden_layers", LAYERS):
        values["num_hidden_layers"] = given.get("num_hidden_layers", LAYERS)
    hidden, heads = _get(default, "hidden_size"), _get(default, "num_attention_heads")
    if "head_dim" not in fields and isinstance(hidden, int) and isinstance(heads, int) and heads:
        values["hidden_size"] = SHRUNK["num_attention_heads"] * (
            hidden // heads
        )  # the head dim kept
    for key in ("pad_token_id", "bos_token_id", "eos_token_id"):
        token = _get(default, key)
        if key in fields and isinstance(token, int) and token >= SHRUNK["vocab_size"]:
            values[key] = 1
    for key in fields:  # lists of one entry per layer (layer_types, no_rope_layers, ...)
        listed = _get(default, key)
        if isinstance(listed, list) and len(listed) == layers and "num_hidden_layers" in values:
            values[key] = listed[: values["num_hidden_layers"]]
    values.update(given)
    return cls(**values)


def _small_parts(cls, given: dict) -> dict:
    """Each sub-config of the class built small (its own sub-configs too), with `given`'s keys
    for it."""
    from transformers.configuration_utils import PreTrainedConfig

    default, parts = cls(), {}
    for key in getattr(cls, "sub_configs", None) or {}:
        sub = _get(default, key)
        if isinstance(sub, PreTrainedConfig):
            sub_cls = type(sub)
            parts[key] = small_config(sub_cls, **_small_parts(sub_cls, {}), **given.get(key, {}))
    return parts


def _derived_head_dim(cls) -> dict:
    """head_dim as hidden_size // num_attention_heads, where the class leaves it None and its
    attention reads it as given (HunYuan, Ministral: their published configs all set it)."""
    default = cls()
    if "head_dim" not in _fields(cls) or _get(default, "head_dim") is not None:
        return {}
    hidden, heads = _get(default, "hidden_size"), _get(default, "num_attention_heads")
    if not (isinstance(hidden, int) and isinstance(heads, int) and heads):
        return {}
    return {"head_dim": hidden // heads}


def _sublayer(name: str) -> bool:
    return re.search(r"\.self_attn\.\d+$", name) is not None


def _decoder_layers(model, config) -> tuple[int, list]:
    """How many decoder layers the model has, and (module, index) for each module that is one:
    its ModuleList of num_hidden_layers layers (the decoder's, where an encoder has as many).
    HRM runs its two stacks of num_layers_per_stack layers in turn, cycle after cycle, and
    counts each run of a layer as one (num_hidden_layers, its cache slots): there a module's
    index is its place in its stack, and the cycle_offset it is called with is added to it."""
    import torch

    count = getattr(config, "num_hidden_layers", None)
    stack = _get(config, "num_layers_per_stack")
    if stack and count != stack:
        stacks = [
            m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == stack
        ]
        return count, [(layer, i) for m in stacks for i, layer in enumerate(m)]
    found = [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.ModuleList) and len(m) == count
    ]
    if not found:  # LongCat-Flash: two attention sublayers a decoder layer, each a layer here
        found = [
            (name, torch.nn.ModuleList(m for _, m in attentions))
            for name in ("self_attn",)
            if len(attentions := [(n, m) for n, m in model.named_modules() if _sublayer(n)])
            == count
        ]
    if not found:
        raise LookupError("no list of decoder layers")
    layers = min(found, key=lambda item: (item[0].count("."), "decoder" not in item[0]))[1]
    return count, list(zip(layers, range(count)))


def _part_layers(model, config) -> dict:
    """{config part's key: its layers} for a model whose config has no num_hidden_layers and
    whose parts each stack layers by their own config part (BLT's patcher, local encoder,
    global transformer and local decoder), or {}."""
    import torch

    if _get(config, "num_hidden_layers") is not None:
        return {}
    keys = {type(_get(config, k)): k for k in getattr(config, "sub_configs", None) or {}}
    return {
        keys[type(m.config)]: list(m.layers)
        for m in model.modules()
        if type(getattr(m, "config", None)) in keys
        and isinstance(getattr(m, "layers", None), torch.nn.ModuleList)
    }


def _encoder_layers(model) -> list:
    """An encoder-decoder model's encoder layers (Moonshine's), or none."""
    import torch

    if not getattr(model.config, "is_encoder_decoder", False):
        return []
    found = [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.ModuleList) and "encoder" in name and name.endswith("layers")
    ]
    return list(min(found, key=lambda item: item[0].count("."))[1]) if found else []


_TABLE_ARGUMENTS = ("cos", "sin", "freqs_cis", "position_embeddings")


def _tables(bound) -> tuple:
    """(cos, sin) as (tokens, width) float tensors from an apply function's arguments."""
    import torch

    arguments = bound.arguments
    if "cos" in arguments and "sin" in arguments:
        cos, sin = arguments["cos"], arguments["sin"]
    elif "position_embeddings" in arguments:
        cos, sin = arguments["position_embeddings"][:2]
    else:
        freqs = arguments["freqs_cis"]
        cos, sin = freqs.real, freqs.imag
    width = cos.shape[-1]
    cos = cos.reshape(-1, TOKENS, width)[0] if cos.numel() % (TOKENS * width) == 0 else cos
    sin = sin.reshape(-1, TOKENS, width)[0] if sin.numel() % (TOKENS * width) == 0 else sin
    return cos.detach().to(torch.float32).clone(), sin.detach().to(torch.float32).clone()


# models whose input_ids are not one token a position: states of the hidden size stand in
EMBEDDED = {
    "kyutai_speech_to_text",  # a text token and 32 audio codebooks' at each position
    "qwen3_omni_moe_talker_code_predictor",  # the talker's states, never input_ids
}


# what a model's forward needs beside its tokens (torch, config -> keyword arguments)
BESIDE = {
    # the time conditioning each layer's adaptive norm reads (the full model makes it from
    # the transcription delay)
    "voxtral_realtime_text": lambda torch, config: {
        "t_cond": torch.zeros(1, 1, config.hidden_size)
    },
    # its cache is built from the top config, which has no num_hidden_layers of its own (the
    # parts have theirs): transformers' own BLT fails with one
    "blt": lambda torch, config: {"use_cache": False},
    # exactly one image input, and which images each token sees: one image's encoder states
    # (two patches), seen by every token
    "idefics": lambda torch, config: {
        "image_encoder_embeddings": torch.randn(1, 1, 2, config.vision_config.embed_dim),
        "image_attention_mask": torch.ones(1, TOKENS, 1, dtype=torch.long),
    },
}


def _inputs(model, config) -> dict:
    """TOKENS positions of one sequence: token ids, or where the model takes none (an audio
    model's layers over encoder states) or takes more a position (EMBEDDED) states of its
    hidden size, as many frames as make TOKENS after its upsampling; an encoder-decoder
    model's decoder takes the tokens, its encoder a second of audio."""
    import torch

    taken = inspect.signature(model.forward).parameters
    beside = BESIDE.get(config.model_type, lambda torch, config: {})(torch, config)
    tokens = torch.arange(TOKENS)[None] % config.vocab_size
    if "decoder_input_ids" in taken and "input_values" in taken:
        return {"input_values": torch.randn(1, 16000), "decoder_input_ids": tokens, **beside}
    if "input_ids" in taken and config.model_type not in EMBEDDED:
        return {"input_ids": tokens, **beside}
    frames = TOKENS // (_get(config, "upsampling_factor") or 1)
    return {"inputs_embeds": torch.randn(1, frames, config.hidden_size), **beside}


def _modeling_modules(model_type: str, model):
    """The modeling modules the model's classes come from."""
    names = {type(m).__module__ for m in model.modules()}
    return [importlib.import_module(n) for n in sorted(names) if ".modeling_" in n]


def _model_class(config):
    """The class a small model is built as: AutoModel's for its config, else the one model
    class of the config's own modeling module built from that config class and named for it
    (EvollaModel, VoxtralRealtimeTextModel: AutoModel has no entry for either config)."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        return MODEL_MAPPING[type(config)]
    except (KeyError, ValueError):
        pass
    found = _own_class(type(config))
    if found is None:
        raise LookupError(f"no model class for {type(config).__name__}")
    return found


def _own_class(cls):
    """The model class named for a config class in its own modeling module, or None."""
    from transformers import PreTrainedModel

    package = cls.__module__.rsplit(".", 1)[0]
    named = cls.__name__.removesuffix("Config") + "Model"
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name.startswith("modeling_"):
            found = getattr(importlib.import_module(f"{package}.{info.name}"), named, None)
            if inspect.isclass(found) and issubclass(found, PreTrainedModel):
                return found
    return None


@cache
def default(model_type: str) -> Schedule:
    """record() of a type's default small model, once a session (tests/test_layers.py and
    tests/test_keys.py both start from it)."""
    return record(model_type)


def record(model_type: str, config=None) -> Schedule:
    """Run a small model of this type; what each decoder layer applied."""
    import torch
    from transformers import CONFIG_MAPPING

    _quiet()
    if config is None:
        cls, heads = CONFIG_MAPPING[model_type], SHRUNK["num_attention_heads"]
        # what some classes or modules demand: as many key heads as query heads (multi-head
        # latent attention), one expert a token
        kv, one = {"num_key_value_heads": heads}, {"num_experts_per_tok": 1}
        published, derived = PUBLISHED.get(model_type, {}), _derived_head_dim(cls)
        if model_type in PARTS:
            published = {**_small_parts(cls, PARTS[model_type]), **published}
        tries = [{**published, **more} for more in ({}, kv, one, {**kv, **one})]
        tries += [{**derived, **given} for given in tries] if derived else []
        for given in tries:
            try:
                found = record(model_type, small_config(cls, **given))
            except Exception as e:
                failure = e
                continue
            found.given = given
            return found
        raise failure
    built = _model_class(config)
    with torch.device("meta"):  # sized before it is built: a size SHRUNK misses is refused
        size = sum(p.numel() for p in built._from_config(config).parameters())
    if size > LARGEST:
        raise MemoryError(f"{size / 1e6:.0f}M parameters when built small")
    from transformers.initialization import no_init_weights

    torch.manual_seed(0)
    with no_init_weights():  # the tables a layer applies read no weight: none is drawn
        model = built._from_config(config).eval()
    if config.model_type in WEIGHED:  # but where weights decide positions: drawn from the seed
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.normal_(0.0, 0.02)
    parts = _part_layers(model, config)
    count, layers = (0, []) if parts else _decoder_layers(model, config)
    encoder = _encoder_layers(model)
    current = {"layer": None}
    calls: dict = {}
    scales: dict = {}
    ran: set = set()  # the layers that ran

    def entering(index):
        def hook(module, args, kwargs):
            current["layer"] = (
                index if isinstance(index, tuple) else index + kwargs.get("cycle_offset", 0)
            )
            ran.add(current["layer"])

        return hook

    def leaving(module, args, output):
        current["layer"] = None

    handles = [
        hook
        for layer, index in [
            *layers,
            *((m, ("encoder", i)) for i, m in enumerate(encoder)),
            *((m, (key, i)) for key, stack in parts.items() for i, m in enumerate(stack)),
        ]
        for hook in (
            layer.register_forward_pre_hook(entering(index), with_kwargs=True),
            layer.register_forward_hook(leaving),
        )
    ]
    patched = []
    for module in _modeling_modules(model_type, model):
        for name, function in list(vars(module).items()):
            if not (
                inspect.isfunction(function)
                and re.match(r"apply\w*(rotary|rope)", name)
                and "vision" not in name
            ):
                continue
            signature = inspect.signature(function)
            if not any(p in signature.parameters for p in _TABLE_ARGUMENTS):
                continue

            def wrapped(*args, _f=function, _s=signature, _name=name, **kwargs):
                layer = current["layer"]
                if layer is not None and layer not in calls:
                    calls[layer] = Applied(_name, _tables(_s.bind(*args, **kwargs)))
                return _f(*args, **kwargs)

            setattr(module, name, wrapped)
            patched.append((module, name, function))
    try:
        with torch.no_grad():
            model(**_inputs(model, config))
    finally:
        for module, name, function in patched:
            setattr(module, name, function)
        for handle in handles:
            handle.remove()
    return Schedule(
        model_type,
        config,
        [calls.get(i) for i in range(count)],
        [scales.get(i) for i in range(count)],
        encoder=[calls.get(("encoder", i)) for i in range(len(encoder))],
        # a part none of whose layers ran (BLT's patcher, where it does not patch by entropy)
        # is left out: it applies nothing, and is not NoPE
        parts={
            key: [calls.get((key, i)) for i in range(len(m))]
            for key, m in parts.items()
            if any((key, i) in ran for i in range(len(m)))
        },
    )


@cache
def candidates() -> tuple[str, ...]:
    """Model types of token models (a vocabulary) whose config class has rope parameters and a
    model class of its own: AutoModel's, or one named for the config in its modeling module
    (a composite model's language model: Mllama's, Emu3's, ...)."""
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    _quiet()
    return tuple(
        name
        for name, cls in sorted(CONFIG_MAPPING.items())
        if {"rope_parameters", "vocab_size"} <= _fields(cls)
        and cls.model_type == name  # not an alias (EvollaModel: evolla's)
        and (name in MODEL_MAPPING_NAMES or _own_class(cls) is not None)
    )


def main():
    import sys
    import time

    for model_type in sys.argv[1:] or candidates():
        start = time.perf_counter()
        try:
            found = record(model_type)
        except Exception as e:
            print(f"{model_type}: not run: {type(e).__name__}: {str(e)[:160]}")
            continue
        widths = [None if a is None else a.tables[0].shape[-1] for a in found.layers]
        print(f"{model_type} ({time.perf_counter() - start:.1f} s): {widths}")


if __name__ == "__main__":
    main()


# keys that size weights, name tokens or tune training: moving one changes no layer's rotation
# (the sizes a rotation reads, head dims among them, are moved by the zoo's tests)
_SIZES = re.compile(
    r"(vocab|intermediate|dropout|initializer|eps|_act$|activation|tie_|use_cache|token_id|"
    r"expert|router|moe|aux|bias|mlp|ffn|logit|softcap|loss|dtype|quant|output_|return_|"
    r"chunk_size_feed|_scaling_factor$|hidden_size|num_attention_heads|num_key_value_heads|"
    r"lora|n_group|topk|n_shared|num_hidden_layers|head_dim|pretraining_tp|embed|residual|"
    r"multiplier|scale_depth|dim_model_base|conv|state|mamba|ssm|time_step|linear_|groups|"
    r"window_size$|attention_chunk|qk_norm|is_decoder|add_cross|architectures|problem_type|"
    r"label|is_encoder_decoder|dense|swiglu|sparse|mtp|route|mup|lambda|codebook|hc_|"
    r"layernorm|scalar|index_n_heads|num_kv_heads|multi_query|parallel_attn|value_scale|"
    r"kv_source|kv_shared|bidirectional|k_eq_v)"
)


def moves(cls, config):
    """(key, another value) for each key of a config class that might move a rotation: a bool
    flipped, a number changed, an Optional key set to None, a per-layer list reversed or its
    first entry changed."""
    for field in dataclasses.fields(cls):
        name = field.name
        value = _get(config, name)
        # a part (a vision tower's config) is no key: set to None it is its class's default,
        # at full size
        if _SIZES.search(name) or isinstance(value, dict) or hasattr(value, "to_dict"):
            continue
        if value is not None and "None" in str(field.type):
            yield name, None
        if isinstance(value, bool):
            yield name, not value
        elif isinstance(value, int):
            yield name, value + 1 if value > 1 else 2
        elif isinstance(value, float):
            yield name, value * 1.5
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, (int, str, float)) and not isinstance(v, bool) for v in value)
        ):
            if len(set(map(str, value))) > 1:
                yield name, value[::-1]
            elif isinstance(value[0], int):
                yield name, [1 - value[0] if value[0] in (0, 1) else value[0] + 1] + value[1:]
            elif isinstance(value[0], float):
                yield name, [value[0] * 2] + value[1:]


def applied(schedule: Schedule) -> list:
    """What each layer applied (each part's, each encoder layer's too), comparable: its cos and
    sin bytes, or None."""
    return [
        None if a is None else [t.numpy().tobytes() for t in a.tables]
        for a in [
            *schedule.layers,
            *schedule.encoder,
            *(a for p in schedule.parts.values() for a in p),
        ]
    ]


def moved(model_type: str):
    """(key, the small model's Schedule with that key moved) for each key whose move changes
    what some layer applies; nothing for a type whose small model does not run."""
    from transformers import CONFIG_MAPPING

    try:
        base = default(model_type)
    except Exception:
        return
    cls = CONFIG_MAPPING[model_type]
    for key, value in moves(cls, base.config):
        try:
            found = record(model_type, small_config(cls, **{**base.given, key: value}))
        except Exception:  # transformers refuses or cannot run that value
            continue
        if applied(found) != applied(base):
            yield key, found
