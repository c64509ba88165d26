"""What the commands share: the writer with the terminal's progress bar and the lines on
stderr after a write, and the refusal of options that do nothing without another."""

from ..core.errors import BadInput


def refuse_without(needed: str, **given) -> None:
    """Refuse the options in `given` that are set (not None or False): each applies only with
    `needed`, which was not given."""
    for name, value in given.items():
        if value not in (None, False):
            flag = "--" + name.replace("_", "-")
            raise BadInput(
                f"{flag} applies to {needed}, which is not given: add it, or drop {flag}"
            )


def write(destination: str, tables: dict, fmt, force: bool, options: dict, notes: list) -> None:
    """Write the tables, then say on stderr what was written, what pe-cli decided on the
    user's behalf, and how far a library's table the options name is from these."""
    from .. import render
    from ..analysis.distance import library_distance
    from ..io.write import write as write_tables

    written = write_tables(destination, tables, fmt.value if fmt else None, force, render.progress)
    if destination != "-":
        render.wrote(written, tables)
    render.notes(notes)
    render.library_line(library_distance(tables, options))
