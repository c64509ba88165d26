"""The C fast path of the exact engine, and the C library's float32 sin, cos and pow over arrays
(--variant keras-hub-jax). Both are optional: without a C compiler pe-cli installs and runs on
its numpy path, which computes the same tables more slowly."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pe_cli.numerics._rotate",
            ["pe_cli/numerics/_rotate.c"],
            extra_compile_args=["-O3"],
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
