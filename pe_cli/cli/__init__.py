"""The command line: Typer glue over the library. app.py wires the commands and maps errors to
one line and an exit code; options.py declares the table options once; each command is a
module of its own."""
