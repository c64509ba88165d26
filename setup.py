"""The C fast path of the exact engine, the sums a rotation is read back from, and the C
library's float32 sin, cos and pow over arrays (--variant keras-hub-jax). All are optional:
without a C compiler pe-cli installs and runs on its numpy path, which computes the same tables
and figures more slowly."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pe_cli.numerics._rotate",
            ["pe_cli/numerics/_rotate.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        # the sums a rotation is read back from, in one sweep of a block (analysis/rotation.py)
        Extension(
            "pe_cli.numerics._pairs",
            ["pe_cli/numerics/_pairs.c"],
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        ),
        # the C library's sinf, cosf and powf over arrays: XLA's CPU float32 sin, cos and pow
        Extension(
            "pe_cli.numerics._libm",
            ["pe_cli/numerics/_libm.c"],
            extra_compile_args=["-O2", "-fno-builtin"],
            libraries=["m"],
            optional=True,
        ),
    ]
)
