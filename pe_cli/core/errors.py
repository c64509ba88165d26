"""The project's own exception types; the command line maps them to exit codes in one place."""


class PeError(Exception):
    """Base class: a message meant for the user, and the exit code it maps to."""

    exit_code = 1


class BadInput(PeError):
    """The request cannot be served as asked (bad option, impossible size, unwritable path)."""

    exit_code = 2


class Unavailable(BadInput):
    """Something the request needs is not present here (a device, a library)."""


class OutputError(PeError):
    """Writing failed at run time (disk full, broken pipe to a file, I/O error)."""

    exit_code = 1
