"""Use pe-cli's tables in a model: from the library directly, and from an exported file.

python examples/embedding.py
"""

import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file

import pe_cli


class TokenAndPosition(torch.nn.Module):
    """Token embeddings scaled by sqrt(d_model) plus a fixed sinusoidal table (Vaswani et al.)."""

    def __init__(self, vocab_size: int, table: torch.Tensor):
        super().__init__()
        seq_len, d_model = table.shape
        self.tokens = torch.nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", table, persistent=False)
        self.scale = d_model**0.5

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.tokens(ids) * self.scale + self.pe[: ids.shape[1]]


# 1. Straight from the library: two lines.
table = pe_cli.build(d_model=512, seq_len=1024).torch()
model = TokenAndPosition(vocab_size=1000, table=table)
print("from the library:", model(torch.randint(0, 1000, (2, 16))).shape)

# 2. From a file written by `pe-cli export` (done here through the same library call).
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "pe.safetensors"
    pe_cli.write(str(path), pe_cli.TableSpec(d_model=512, seq_len=1024))
    loaded = load_file(path)["pe"]
    model = TokenAndPosition(vocab_size=1000, table=loaded)
    print("from the file:", model(torch.randint(0, 1000, (2, 16))).shape)
    print("file and library agree bit for bit:", torch.equal(loaded, table))
