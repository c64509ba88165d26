"""The package version, in a module of its own so that `pe-cli --version` and the build read it
without importing anything else."""

__version__ = "0.1.0"
