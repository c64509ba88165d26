"""The seed notebooks' positional-encoding code (../shared/seeds), slips fixed, as test fixtures.

Each function is the notebook's cell with only these changes: the slip named in its comment is
fixed, and 10000 / seq_len / d_model are parameters. pe-cli's seed variants must reproduce
these bit for bit on CPU in float32.
"""

import math

import torch


def seed000_original(d_model, seq_len, base=10000):
    # seed 000's class, with `position * denominator_original` fixed to the intended divide
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(1)
    vector = torch.arange(0, d_model, 2, dtype=torch.float32)
    denominator_original = torch.pow(base, vector / d_model)
    pe[:, 0::2] = torch.sin(position / denominator_original)
    pe[:, 1::2] = torch.cos(position / denominator_original)
    return pe


def seed000_as_written(d_model, seq_len, base=10000):
    # seed 000's class exactly as written: it multiplies by 10000^(2i/d)
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(1)
    vector = torch.arange(0, d_model, 2, dtype=torch.float32)
    denominator_original = torch.pow(base, vector / d_model)
    pe[:, 0::2] = torch.sin(position * denominator_original)
    pe[:, 1::2] = torch.cos(position * denominator_original)
    return pe


def seed000_harvard(d_model, seq_len, base=10000):
    # seed 000's denominator_harvard line, used as the Annotated Transformer uses it
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(1)
    vector = torch.arange(0, d_model, 2, dtype=torch.float32)
    denominator_harvard = torch.exp(vector * (-math.log(float(base)) / d_model))
    pe[:, 0::2] = torch.sin(position * denominator_harvard)
    pe[:, 1::2] = torch.cos(position * denominator_harvard)
    return pe


def seed001(d_model, max_seq_len, base=10000):
    # seed 001's PositionalEncoding (its Embedding's torch.sqrtself.dmodel is elsewhere)
    pos = torch.arange(0, max_seq_len, dtype=torch.float).unsqueeze(1)
    frequency = torch.pow(base, -torch.arange(0, d_model, 2, dtype=torch.float) / d_model)
    pe = torch.zeros((max_seq_len, d_model))
    pe[:, 0::2] = torch.sin(pos * frequency)
    pe[:, 1::2] = torch.cos(pos * frequency)
    return pe


def seed002(d_model, d_sequence, base=10000):
    # seed 002, torch.zero fixed to torch.zeros
    pe = torch.zeros(d_sequence, d_model)
    pos = torch.arange(0, d_sequence, dtype=torch.float).unsqueeze(1)
    denominator = torch.exp(torch.arange(0, d_model, 2).float() / d_model * math.log(base))
    pe[:, 0::2] = torch.sin(pos / denominator)
    pe[:, 1::2] = torch.cos(pos / denominator)
    return pe.unsqueeze(0)


def seed003(d_model, seq_len, base=10000):
    # seed 003, pe.unsqueeze('pe', pe) fixed to pe.unsqueeze(0)
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(float(base)) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    pe = pe.unsqueeze(0)
    return pe


def seed004(d_model, max_sequence_length, base=10000):
    # seed 004's PositionalEncoding class
    even_i = torch.arange(0, d_model, 2).float()
    denominator = torch.pow(base, even_i / d_model)
    position = torch.arange(max_sequence_length).reshape(max_sequence_length, 1)
    even_PE = torch.sin(position / denominator)
    odd_PE = torch.cos(position / denominator)
    stacked = torch.stack([even_PE, odd_PE], dim=2)
    PE = torch.flatten(stacked, start_dim=1, end_dim=2)
    return PE
