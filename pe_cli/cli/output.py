"""Writing tables from a command: the writer with the terminal's progress bar, then one line
on stderr saying what was written."""


def write(destination: str, tables: dict, fmt, force: bool) -> None:
    from .. import render
    from ..io.write import write as write_tables

    written = write_tables(destination, tables, fmt.value if fmt else None, force, render.progress)
    if destination != "-":
        render.wrote(written, tables)
