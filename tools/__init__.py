"""Scripts that make the project's data files from the libraries it follows; run from the
repository's root (`python -m tools.NAME`). Not part of the installed package."""
