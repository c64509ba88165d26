"""Numerics that know no family: exact frequencies (frequencies.py), correctly rounded sines and
cosines (exact.py), tables of them for positions (sinusoids.py), the C fast path (fast.py) and
TensorFlow's float32 arithmetic (eigen.py)."""
