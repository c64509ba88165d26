"""GGUF files for the tests, written with gguf's own writer: a model's metadata and its rope
tensors (no weights), as llama.cpp's converter writes them."""

import numpy as np


def write_gguf(
    path, arch, head=128, heads=32, n_rot=None, base=None, scaling=None, tensors=None, fields=None
):
    """`fields`: more metadata by the writer's name for it ({"block_count": 36} calls
    add_block_count(36))."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    for name, value in (fields or {}).items():
        getattr(writer, f"add_{name}")(value)
    writer.add_context_length(131072)
    writer.add_embedding_length(head * heads)
    writer.add_head_count(heads)
    writer.add_rope_dimension_count(n_rot or head)
    if base is not None:
        writer.add_rope_freq_base(base)
    for name, value in (scaling or {}).items():
        getattr(writer, f"add_rope_scaling_{name}")(value)
    for name, values in (tensors or {}).items():
        writer.add_tensor(f"{name}.weight", np.asarray(values, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
