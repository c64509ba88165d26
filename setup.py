"""The C fast path of the exact engine. It is optional: without a C compiler pe-cli installs
and runs on its numpy path, which computes the same tables more slowly."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pe_cli.numerics._rotate",
            ["pe_cli/numerics/_rotate.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
