"""HunYuan: its configs say rope_type dynamic with an alpha, which its rotary module reads as
NTK by alpha (ntk_alpha: the base times alpha**(dim/(dim-2)), for any length), leaving the
other keys of its rope_scaling unread."""

from .base import Schedule


def _fill(node: dict, facts: dict) -> dict:
    node = dict(node)
    for key in ("rope_parameters", "rope_scaling"):
        rope = node.get(key)
        kind = (rope or {}).get("rope_type", (rope or {}).get("type"))
        if isinstance(rope, dict) and kind == "dynamic" and rope.get("alpha"):
            rope = {k: v for k, v in rope.items() if k not in ("type", "rope_type")}
            node[key] = {"rope_type": "ntk_alpha", **rope}
    return node


SCHEDULES = (
    Schedule(
        ("hunyuan_v1_dense", "hunyuan_v1_moe", "hunyuan_vl_text"), keys=("alpha",), fill=_fill
    ),
)
