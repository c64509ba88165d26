"""Files and pipes: the one writer (write.py) puts tables into .npy, .safetensors, csv/tsv or raw
bytes; the reader (read.py) takes .npy and .safetensors files a user hands us, never
unpickling; formats.py is what both know of the formats."""
