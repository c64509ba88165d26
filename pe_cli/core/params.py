"""The declaration of a table parameter: its TableSpec field and default, the command-line
option that sets it, and how it is checked before a family looks at it.

The common parameters are declared in spec.py; each family declares its own in its module.
The command line builds every table option from these declarations, so an option is declared
once, beside the code that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    name: str  # the TableSpec field and keyword argument
    default: object
    help: str  # for --help, plain text
    kind: type = str  # the option's value: int, float, str, bool, or list (a repeatable str)
    flags: tuple[str, ...] = ()  # command-line names; default --name-with-dashes
    choices: tuple[str, ...] = ()  # the allowed names, when the value is a name
    aliases: dict | None = None  # other names taken for a choice ('fp32' for 'float32')
    minimum: int | None = None  # for int parameters
    fixed: str = ""  # what a variant that lacks this parameter is said to do ("has no padding row")
    field: bool = True  # False: an input of the command line only, which a family expands
    #                     into fields (--rope-config)
    given_only: bool = False  # the command line passes it only where given, so that an input
    #                           (--preset, --rope-config) sets it otherwise

    @property
    def flag(self) -> str:
        return self.flags[0] if self.flags else "--" + self.name.replace("_", "-")
