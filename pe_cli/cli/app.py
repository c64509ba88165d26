"""The Typer app: the four commands wired in, and every error mapped to one line on stderr and
an exit code, in one place."""

import os
import sys
from typing import Annotated

import typer
from typer.core import TyperGroup

from ..core.errors import PeError
from ..core.version import __version__
from .compare import compare
from .export import export
from .generate import generate
from .help import Command, app_help
from .show import show


class _App(TyperGroup):
    """Maps every error to one line on stderr and an exit code, in one place."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(
                args or ["--help"], prog_name, complete_var, standalone_mode=False, **extra
            )
        except PeError as e:
            code = _fail(e, str(e), e.exit_code)
        except BrokenPipeError:
            # the reader went away (`| head`): say nothing, as the Python docs' SIGPIPE note does
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 1
        except KeyboardInterrupt as e:
            code = _fail(e, "interrupted", 130)
        except Exception as e:
            if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # typer's usage errors
                code = _fail(e, _suggest(e.format_message()), e.exit_code)
            else:
                code = _fail(e, f"unexpected {type(e).__name__}: {e}", 1)
        if standalone_mode:
            sys.exit(code or 0)
        return code

    def format_help(self, ctx, formatter) -> None:
        formatter.write(app_help(ctx))


def _suggest(message: str) -> str:
    """typer's message for a value that is not one of an option's choices, as pe-cli says it
    for every name (names.unknown): the near miss, else a short list."""
    import re

    from ..core.names import unknown

    found = re.search(r"'(-[^']*)'.*: '([^']*)' is not one of (.*?)\.?$", message)
    if found is None:
        return message
    return unknown(found.group(1), found.group(2), re.findall(r"'([^']*)'", found.group(3)))


def _fail(error: BaseException, message: str, code: int) -> int:
    if os.environ.get("PE_CLI_DEBUG"):
        raise error
    typer.echo("Error: " + " ".join(message.split()), err=True)
    return code


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pe-cli {__version__}")
        raise typer.Exit()


app = typer.Typer(
    cls=_App,
    help="Generate, inspect and verify positional-encoding tables, exactly: sinusoids, "
    "RoPE (every Hugging Face rope type; a model's config.json layer by layer), ALiBi, 2-D "
    "and 3-D tables; bit for bit as transformers, diffusers and the inference engines "
    "llama.cpp, vLLM and MLX compute them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # help is plain text (help.py): no markup, emoji or boxes
)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    pass


for command in (generate, export, show, compare):
    app.command(cls=Command)(command)
