"""The figures pe-cli draws and the files it draws them into, named here without importing
numpy or matplotlib (the command line's choices)."""

KINDS = {
    "heatmap": "the table, positions down and dimensions across",
    "curves": "the columns picked with --cols as curves over position",
    "similarity": "the dot product of position p (the START of --rows, default the first) with every position",
    "wavelengths": "each frequency's wavelength, with and without the table's scaling",
    "precision": "with --precision",
}
# a figure's file format from its extension, as matplotlib's savefig names it: the images and
# vector formats it writes itself or through Pillow (not its raw pixels, LaTeX code, or
# formats whose files carry the time they were made)
FORMATS = {
    "png": "png",
    "svg": "svg",
    "pdf": "pdf",
    "jpg": "jpeg",
    "jpeg": "jpeg",
    "webp": "webp",
    "tif": "tiff",
    "tiff": "tiff",
}
