"""Inspection: the figures pe-cli prints about tables (metrics.py), what `show` looks at
(view.py), `compare` and its modes (compare.py) and identification of unknown tables
(identify.py). Nothing here prints."""
