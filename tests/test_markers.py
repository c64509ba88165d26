"""The markers conftest applies: a test that reaches a reference library, however it does, is
marked conformance; the inner loop's -m leaves the modules that need one uncollected; and a
test the reading misses fails instead of running unmarked. The code read here is source text,
never run, so none of it imports a library."""

import pytest

from .markers import Reader, file_needs, leaves_out


def _function(source: str, name: str, **namespace):
    """A function of tests/ defined by source (read, not called)."""
    scope = {"__name__": "tests.probe", "__package__": "tests", **namespace}
    exec(source, scope)
    return scope[name]


HELPER = "def helper():\n    from transformers import LlamaConfig\n    return LlamaConfig\n"


@pytest.mark.parametrize(
    "source, library",
    [
        ("def test():\n    from diffusers.models import embeddings\n", "diffusers"),
        ("def test():\n    import tensorflow as tf\n", "tensorflow"),
        (
            "def test():\n    pytest.importorskip('positional_encodings.torch_encodings')\n",
            "positional_encodings",
        ),
        ("def test():\n    return [x for x in (helper(),)]\n", "transformers"),
        ("def test():\n    return lambda: helper()\n", "transformers"),
        ("def test():\n    from .libraries import hf_rotary\n", "transformers"),
        ("def test():\n    from tools import transformers_models\n", "transformers"),
        ("def test():\n    from . import ggml\n", "ggml"),  # a harness stands for its engine
        ("def test():\n    from .vllm_tables import caches\n", "vllm"),  # named otherwise
        ("def test():\n    import numpy, torch, pe_cli\n    return reference\n", None),
    ],
)
def test_a_function_that_reaches_a_library_is_read_so(source, library):
    from . import reference

    helper = _function(HELPER, "helper")
    test = _function(source, "test", helper=helper, reference=reference, pytest=pytest)
    assert Reader().value(test) == library


def test_parameters_and_their_lambdas_are_read():
    helper = _function(HELPER, "helper")
    cases = [("flux", {"grid": "2x2"}, _function("f = lambda: helper()", "f", helper=helper))]
    assert Reader().value(cases) == "transformers"
    assert Reader().value([("flux", {"grid": "2x2"}, len)]) is None


def test_a_module_is_read_by_what_importing_it_needs(tmp_path):
    for source, library in (
        ("import pytest\n\npytest.importorskip('transformers')\n", "transformers"),
        ("from diffusers.models.embeddings import Timesteps\n", "diffusers"),
        ("from tests.libraries import hf_rotary\n\ndef f():\n    hf_rotary()\n", None),
        ("def f():\n    import diffusers\n", None),  # only when f runs
    ):
        path = tmp_path / f"test_{len(source)}.py"
        path.write_text(source)
        assert file_needs(path) == library, source


@pytest.mark.parametrize(
    "expression, leaves",
    [
        ("not slow and not conformance", True),
        ("not conformance", True),
        ("not (conformance or slow)", True),
        ("not slow", False),
        ("conformance", False),
        ("slow or not conformance", False),
        ("", False),
    ],
)
def test_which_mark_expressions_leave_conformance_out(expression, leaves):
    assert leaves_out(expression, "conformance") is leaves


def test_an_import_the_reading_missed_fails_the_test():
    hidden = {"__name__": "tests.probe"}  # code of tests/, as exec'd by some helper
    with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.conformance"):
        exec("import diffusers", hidden)
    exec("import json", hidden)
