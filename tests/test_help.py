"""--help as a person reads it: plain text that fits the terminal, about one screen per
command, a family's options on request (`--family F --help`, in either order), every option
reachable from some view; and shell completion."""

import os
import re
import subprocess
import sys
import unicodedata

import pytest
import typer
from typer.testing import CliRunner

from pe_cli.cli.app import app
from pe_cli.families import FAMILIES

COMMANDS = ("generate", "export", "show", "compare")
WIDTHS = (80, 100, 160)


def _help(*args, width=100) -> str:
    env = {"TERMINAL_WIDTH": str(width), "COLUMNS": str(width)}
    result = CliRunner().invoke(app, [*args], env=env, prog_name="pe-cli")
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    return result.stdout


def _views(command: str, width: int = 100) -> dict[str, str]:
    """The common view and every family's view of a command."""
    views = {"common": _help(command, "--help", width=width)}
    for family in FAMILIES:
        views[family] = _help(command, "--family", family, "--help", width=width)
    return views


def _repeats(text: str, words: int = 8) -> set[str]:
    """Runs of `words` words that a text holds more than once, wherever its lines wrap: a
    sentence printed twice, whatever precedes it (an option's name, "rope: ")."""
    flat = text.split()
    runs = [" ".join(flat[i : i + words]) for i in range(len(flat) - words + 1)]
    return {run for run in runs if runs.count(run) > 1}


def _flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", text))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_is_plain_text_that_fits(command, width):
    views = {"app": _help("--help", width=width)} if command is None else _views(command, width)
    for name, text in views.items():
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width, (name, width)
        assert "…" not in text and "\x1b" not in text, name
        # no emoji or other pictograph (rich's markup read ':-1:' in '999:-1:-20' as one)
        assert not [c for c in text if unicodedata.category(c) == "So" or ord(c) > 0x2000], name
        assert "\\[" not in text, name  # markup escapes are not printed
        if name == "sinusoidal":
            assert "999:-1:-20" in text  # what rich's markup made an emoji of
        assert all(line == line.rstrip() for line in lines), name
        assert not _repeats(text), (name, _repeats(text))


def test_sentence_splitting_finds_a_repeat():
    """The repeat check above sees a sentence printed twice, wrapped differently."""
    once = "text tokens before the grid: rows of zeros in sincos2d and sincos3d tables."
    wrapped = once.replace("rows of", "rows\n        of")
    text = f"  --a  rope: {once}\n  --b  sincos2d: {wrapped}"
    assert _repeats(text) and not _repeats(f"  --a  rope: {once}")


@pytest.mark.parametrize("command", COMMANDS)
def test_common_view_is_about_one_screen(command):
    assert len(_help(command, "--help", width=100).splitlines()) <= 60
    assert len(_help(command, "--help", width=80).splitlines()) <= 70


@pytest.mark.parametrize("command", COMMANDS)
def test_common_view_lists_each_family_on_one_line(command):
    text = _help(command, "--help", width=100)
    for family in FAMILIES.values():
        summary = family.summary[:1].upper() + family.summary[1:]
        assert re.search(rf"^  {family.name} +{re.escape(summary)}\.$", text, re.M), family.name
    # and none of a family's own options is listed (a family's line may name where to look)
    own = {flag for family in FAMILIES.values() for p in family.params for flag in _param_flags(p)}
    listed = _flags("\n".join(re.findall(r"^  -.*$", text, re.M)))
    assert not own & listed - {"--help"}, own & listed


def _param_flags(param) -> tuple[str, ...]:
    return param.flags or ("--" + param.name.replace("_", "-"),)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("command", COMMANDS)
def test_family_view_shows_its_own_options_and_names(command, family):
    text = _help(command, "--family", family, "--help")
    found = FAMILIES[family]
    mine = {flag for p in found.params for flag in _param_flags(p)}
    others = {
        flag
        for f in FAMILIES.values()
        if f is not found
        for p in f.params
        for flag in _param_flags(p)
    }
    flags = _flags(text)
    assert mine <= flags, mine - flags
    assert not (others - mine) & flags, (others - mine) & flags
    words = set(re.findall(r"[\w.-]+", text))
    for names in (found.variants, found.conventions, found.parts if len(found.parts) > 1 else ()):
        assert set(names) <= words, set(names) - words
    assert f"Usage: pe-cli {command} --family {family}" in text


@pytest.mark.parametrize(
    "args",
    [
        ("--help", "--family", "rope"),
        ("--family=rope", "--help"),
        ("-d", "64", "--family", "rope", "--help"),
        ("--family", "sinusoidal", "--family", "rope", "--help"),
    ],
)
def test_family_view_whatever_the_order(args):
    assert _help("generate", *args) == _help("generate", "--family", "rope", "--help")


def test_family_view_of_an_unknown_family_says_did_you_mean():
    result = CliRunner().invoke(app, ["show", "--family", "rop", "--help"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "Error: unknown --family 'rop' (did you mean 'rope'?)\n"


def test_a_shared_option_has_each_familys_help():
    """--grid and --interpolation-scale are one option each, explained in each family's words."""
    for family in ("rope", "sincos2d", "sincos3d"):
        text = " ".join(_help("generate", "--family", family, "--help").split())
        own = {p.name: p for p in FAMILIES[family].params}["grid"].help
        assert own in text, family
    sincos3d = " ".join(_help("generate", "--family", "sincos3d", "--help").split())
    assert "sincos3d: sincos3d" not in sincos3d and "sincos3d cogvideox" not in sincos3d


def test_text_tokens_is_declared_once():
    declared = {id(p) for f in FAMILIES.values() for p in f.params if p.name == "text_tokens"}
    assert len(declared) == 1
    help = [p for p in FAMILIES["rope"].params if p.name == "text_tokens"][0].help
    for family in ("rope", "sincos2d", "sincos3d"):
        text = " ".join(_help("generate", "--family", family, "--help").split())
        assert text.count(help) == 1, family


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_is_reachable_from_a_view(command):
    click_command = typer.main.get_command(app).commands[command]
    shown = set().union(*(_flags(text) for text in _views(command).values()))
    for param in click_command.params:
        if param.param_type_name == "option":
            assert set(param.opts) <= shown, param.opts
        else:
            assert param.name.upper() in _help(command, "--help"), param.name


def test_app_view_lists_the_commands_and_completion_in_two_rows():
    text = _help("--help", width=100)
    for command in COMMANDS:
        assert re.search(rf"^  {command} +\S", text, re.M), command
    completion = [line for line in text.splitlines() if "completion" in line]
    assert [line.split()[0] for line in completion] == ["--install-completion", "--show-completion"]
    assert "completion" not in _help("generate", "--help")


def test_wrapping_breaks_between_names_only():
    """A list of hyphenated names (--rope-axes's, --preset's) wraps between names, at 80."""
    from pe_cli.families.rope import LAYOUTS as AXES
    from pe_cli.families.rope import PRESETS

    text = _help("generate", "--family", "rope", "--help", width=80)
    for word in re.findall(r"[\w.-]+", text):
        assert not word.endswith("-") or word in ("-",), word
    words = set(re.findall(r"[\w.-]+", text))
    assert set(AXES) <= words and set(PRESETS) <= words


def test_help_does_not_load_rich():
    probe = (
        "import sys; from pe_cli.cli.app import app\n"
        "for args in (['--help'], ['generate', '--help'], ['show', '--family', 'rope', '--help']):\n"
        "    try: app(args)\n"
        "    except SystemExit: pass\n"
        "print(sorted(m for m in ('rich', 'torch', 'numpy') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"


# ------------------------------------------------------------------------------- completion

_AS_PE_CLI = "import sys; sys.argv[0] = 'pe-cli'; import pe_cli; pe_cli.main()"


def _run(*args, **env):
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", _AS_PE_CLI, *args], capture_output=True, text=True, env=environment
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_a_script(shell):
    found = _run("--show-completion", shell, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    assert found.returncode == 0 and found.stderr == ""
    assert "_PE_CLI_COMPLETE" in found.stdout and f"complete_{shell}" in found.stdout


def _completions(words: str) -> list[str]:
    found = _run(
        _PE_CLI_COMPLETE="complete_bash",
        COMP_WORDS=words,
        COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    )
    assert found.returncode == 0, found.stderr
    return found.stdout.split()


def test_completion_offers_names():
    assert _completions("pe-cli gen") == ["generate"]
    assert _completions("pe-cli generate --family ") == list(FAMILIES)
    rope = _completions("pe-cli generate --family rope --variant ")
    assert rope == ["exact", *FAMILIES["rope"].variants]
    assert _completions("pe-cli show --dtype bf") == ["bfloat16", "bf16"]
    assert _completions("pe-cli export x.safetensors --family alibi --part s") == [
        "symmetric",
        "slopes",
    ]
