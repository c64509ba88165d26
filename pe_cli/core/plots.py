"""The figures pe-cli draws and the files it draws them into, named here without importing
numpy or matplotlib (the command line's choices)."""

KINDS = {
    "heatmap": "the table, positions down and dimensions across",
    "curves": "the columns picked with --cols as curves over position",
    "similarity": "the dot product of position p (the START of --rows, default the first) with every position",
    "wavelengths": "each frequency's wavelength, with and without the table's scaling",
}
FORMATS = ("png", "svg", "pdf")  # from the file's extension
