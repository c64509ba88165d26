import builtins
import os

import pytest

from .markers import OURS, REFERENCES, Reader, file_needs, leaves_out

# Pin the terminal so CLI assertions do not depend on where the tests run.
os.environ["TERMINAL_WIDTH"] = "100"
os.environ["COLUMNS"] = "100"
os.environ["_TYPER_FORCE_DISABLE_TERMINAL"] = "1"
for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "PE_CLI_DEBUG"):
    os.environ.pop(name, None)

# tests/reference.py sets mpmath's global 256 bits when first imported: imported here, before
# any test, so that no test is first to import it and seen to change the precision
from . import reference  # noqa: E402, F401
from .rebuild import hold  # noqa: E402  (pe_cli, imported after the terminal is pinned)


@pytest.fixture
def cli():
    """Run the CLI in-process; returns (exit_code, stdout bytes, stderr text)."""
    from typer.testing import CliRunner

    from pe_cli.cli.app import app

    runner = CliRunner()

    def invoke(*args, env=None):
        result = runner.invoke(app, [str(a) for a in args], env=env)
        return result.exit_code, result.stdout_bytes, result.stderr

    def run(*args, env=None):
        code, out, err = invoke(*args, env=env)
        if code == 0:  # whatever compare FILE claims bit for bit, its commands rebuild
            hold(invoke, [str(a) for a in args], out)
        return code, out, err

    return run


# ---------------------------------------------------------------------------------------------
# Markers, applied here. `conformance` (with the library's name): the test needs a library whose
# tables pe-cli reproduces; found from the test's code (tests/markers.py), so that a new test that
# calls transformers is one without anyone marking it, and checked while tests run (below).
# `slow`: the tests named in SLOW.

# The tests that took 5 s or more (all their cases together) in `pytest --durations=0` on 2
# cores, load about 4 (issue 28), by file and function (every case) or with a case's id; not
# test_families_cli.py::test_identifies_each_family (5 s), the inner loop's check that compare
# names every family. The inner loop, `-m "not slow and not conformance"`, leaves them out;
# every one runs in the full suite.
SLOW = frozenset(
    {
        # 20 s or more
        "test_diffusers_presets.py::test_compare_names_the_preset_and_its_tokens",
        "test_transformers.py::test_rotary_table_is_identified",
        "test_streaming.py::test_inspecting_large_files_keeps_memory_bounded",
        "test_readme.py::test_documents_examples_run_as_written",
        "test_diffusers.py::test_1d_rotary_tables_are_identified_bit_for_bit",
        "test_diffusers_longrope.py::test_compare_reads_longrope_factors",
        "test_diffusers.py::test_fractional_and_cropped_2d_tables_are_identified",
        "test_diffusers_ltx.py::test_ltx2_video_is_the_module_bit_for_bit",
        "test_engines.py::test_engine_half_tables_are_named_and_rebuilt",
        "test_engines.py::test_engine_longrope_tables_are_named_and_rebuilt",
        "test_engines.py::test_a_half_longrope_table_no_factors_make_says_why",
        "test_engines.py::test_a_half_longrope_table_is_named_with_the_factors_its_columns_tell",
        # the first case runs every transformers module (tools/transformers_conformance.py results)
        "test_transformers.py::test_rotary_module",
        "test_transformers.py::test_each_key_that_moves_an_encoders_rotary_module",
        "test_transformers.py::test_readme_model_table_is_the_tests_results",
        "test_transformers.py::test_sinusoidal_module_is_named_and_rebuilt",
        "test_diffusers_rotation.py::test_kandinsky6_is_the_module_bit_for_bit",
        "test_diffusers_longrope.py::test_omnigen_padded_prompt_is_named",
        "test_diffusers_pooled.py::test_anyflow_far_compressed_frames_are_the_module_bit_for_bit",
        "test_diffusers.py::test_sd3_cropped_pos_embed_bit_for_bit",
        "test_llamacpp.py::test_yarn_is_ggml_up_to_131072",
        "test_engines.py::test_engine_tables_are_named_and_rebuilt",
        "test_engines.py::test_a_long_engine_table_is_named_from_its_sample",
        "test_llamacpp.py::test_llama31_is_ggml_with_the_converters_rope_freqs[float32-131072-interleaved]",
        # the first case waits for vLLM to build every case's cache (one process, about 20 s)
        "test_vllm.py::test_model_caches_are_vllm_bit_for_bit",
        # the first case waits for ORT-GenAI's builder to make every case's cache (about 20 s)
        "test_ort_genai.py::test_ort_genai_is_the_builders_cache_bit_for_bit",
        "test_ort_genai.py::test_compare_names_the_builders_cache",
        "test_training_frameworks.py::test_keras_hub_jax_is_keras_hub_on_jax_bit_for_bit",
        "test_training_frameworks.py::test_compare_names_keras_hub_on_jax",
        "test_frameworks_view.py::test_llama31_from_training_to_serving_differs_by_arithmetic_only",
        # 5 to 20 s
        "test_rebuild.py::test_the_claim_rebuilds_the_table",
        "test_degenerate.py::test_rows_alike_only_at_first_are_read_on",
        "test_degenerate.py::test_a_prefix_of_zero_rows_is_read_and_said",
        "test_rebuild.py::test_a_table_not_named_claims_nothing",
        "test_identify_rope1d.py::test_the_nearest_of_a_scaled_table_nothing_names_is_its_plain_law",
        "test_identify_rope1d.py::test_an_exact_longrope_table_is_named_with_its_config_factors",
        "test_identify_sinusoidal.py::test_time_proj_at_sigmas_is_named",
        "test_identify_sinusoidal.py::test_t5_film_decoder_noise_time_is_named",
        "test_identify_sinusoidal.py::test_t5_film_decoder_at_a_schedule_is_a_range",
        "test_engines.py::test_an_exact_table_is_rebuilt_by_its_command",
        "test_engines.py::test_an_attention_factor_the_engines_do_not_read_is_another_scale_factor",
        "test_engines.py::test_mlx_lms_long_factors_at_a_short_length_are_another_frequency_table",
        "test_engines.py::test_llama31_differs_from_exact_by_arithmetic_only_in_every_engine",
        "test_engines.py::test_a_gguf_is_held_against_its_config",
        "test_engines.py::test_a_yarn_gguf_names_its_factor_and_a_partial_one_its_rotary_dim",
        "test_mlx.py::test_131072_positions_are_mlx_lm_bit_for_bit",
        "test_diffusers_presets.py::test_noise_as_wide_as_a_preset_is_no_crash",
        "test_plot.py::test_the_same_figure_makes_the_same_file",
        "test_families_cli.py::test_identification_fits_the_scaling",
        "test_diffusers_cosmos3.py::test_cosmos3_sound_and_action_tokens_are_the_pipeline_bit_for_bit",
        "test_pipes.py::test_inspect_examples_run",
        "test_diffusers_presets.py::test_long_tables_are_named_from_a_sample",
        "test_diffusers.py::test_diffusers_2d_table_is_get_2d_sincos_pos_embed",
        "test_hardening.py::test_generate_gives_a_table_or_one_line",
        "test_diffusers.py::test_timesteps_tables_are_identified_and_rebuilt",
        "test_diffusers_rotation.py::test_compare_names_rotation_tables",
        "test_libraries.py::test_identification_names_the_library",
        "test_hardening.py::test_damaged_files_never_crash",
        "test_diffusers_pooled.py::test_framepack_history_is_the_module_bit_for_bit",
        "test_libraries.py::test_tensor2tensor_timing_signal",
        "test_plot.py::test_the_examples_script_makes_the_readme_figures",
        "test_diffusers_ltx.py::test_ltx2_split_is_the_module_bit_for_bit",
        "test_streaming.py::test_a_far_off_fit_is_not_called_a_match",
        "test_hardening.py::test_narrow_terminals",
        "test_diffusers.py::test_sinusoidal_positional_embedding_is_the_annotated_table",
        "test_diffusers_pooled.py::test_pooled_means_on_torch_are_numpys",
        "test_sincos3d.py::test_cogvideox_tables_are_identified_and_rebuilt",
        "test_identify_grids2d.py::test_pixart_alpha_1024_is_named_at_its_real_width",
        "test_identify_grids2d.py::test_sd3_crop_is_named_at_its_real_width",
        "test_timm.py::test_a_long_timm_table_is_named_from_its_sample",
        "test_identify_grids2d.py::test_a_long_grid_off_beyond_its_sample_is_not_bit_for_bit",
        "test_identify_grids2d.py::test_a_long_grid_upside_down_says_what_was_read_on_its_sample",
        "test_diffusers_models.py::test_video_presets_are_the_modules_bit_for_bit",
        "test_inspect.py::test_a_familys_note_is_said_only_where_its_reading_matters",
        "test_inspect.py::test_identify_annotated_transformer_buffer",
        "test_pipes.py::test_examples_run",
        # issue 30's multi-axis identification: every case together
        "test_identify_ropegrid.py::test_transformers_layouts_are_named_and_rebuilt",
        "test_identify_ropegrid.py::test_ltx_video_at_another_head_dim_is_the_module",
        "test_identify_ropegrid.py::test_flux_in_float32_frequencies_is_the_module",
        "test_identify_ropegrid.py::test_pixel_tables_are_named_and_rebuilt",
        "test_identify_ropegrid.py::test_pixel_variant_is_rotary_embedding_torch_bit_for_bit",
        "test_identify_ropegrid.py::test_no_axes_note_where_the_table_is_named",
        # session 36: 20 s or more of the inner loop's 333 s (every case together)
        "test_identify_rope1d.py::test_angles_and_cos_in_a_half_dtype_are_the_table_recipe",
        "test_identify_rope1d.py::test_an_unexplained_table_gets_a_true_reason",
        "test_sincos3d.py::test_cogvideox_half_tables_are_identified",
        "test_layout.py::test_a_model_is_named_in_its_own_module_only",
        # issue 41: Gemma 4's proportional table at its published head dim of 512
        "test_identify_proportional.py::test_gemma4_full_attention_table_is_named",
        "test_identify_proportional.py::test_gemma4_dump_names_the_table_and_its_turning_dims",
        "test_identify_proportional.py::test_no_other_table_is_named_proportional",
    }
)


# Tests that share one process's cache (tools/transformers_conformance.py runs every transformers
# module once, for all of them; one vLLM process builds every cache tests/test_vllm.py reads): with pytest-xdist's --dist loadgroup they run in one worker
# instead of each worker running every module again.
SHARED = {
    "test_transformers.py::test_rotary_module": "transformers results",
    "test_transformers.py::test_readme_model_table_is_the_tests_results": "transformers results",
    # tests/test_vllm.py's vllm_caches: one vLLM process for every case
    "test_vllm.py::test_model_caches_are_vllm_bit_for_bit": "vllm caches",
    "test_vllm.py::test_131072_positions_are_vllm_bit_for_bit": "vllm caches",
    "test_vllm.py::test_the_cache_lengths_are_vllms": "vllm caches",
    "test_vllm.py::test_a_decode_window_is_the_caches_rows": "vllm caches",
    "test_vllm.py::test_ids_are_the_caches_rows": "vllm caches",
    "test_vllm.py::test_mrope_tables_are_vllm_bit_for_bit": "vllm caches",
    # tests/test_ort_genai.py's ort_genai_tables: one run of ORT-GenAI's builder for every case
    "test_ort_genai.py::test_ort_genai_is_the_builders_cache_bit_for_bit": "ort-genai caches",
    "test_ort_genai.py::test_the_builders_table_is_transformers_only_where_said": "ort-genai caches",
    "test_ort_genai.py::test_the_refused_yarn_is_what_the_builder_fails_on": "ort-genai caches",
    "test_ort_genai.py::test_compare_names_the_builders_cache": "ort-genai caches",
    # keras_hub_jax_tables: one Keras process on the JAX backend for every case
    "test_training_frameworks.py::test_keras_hub_jax_is_keras_hub_on_jax_bit_for_bit": "keras jax",
    "test_training_frameworks.py::test_keras_hub_jax_is_not_the_torch_backends_table": "keras jax",
    "test_training_frameworks.py::test_compare_names_keras_hub_on_jax": "keras jax",
    # tests/test_vllm_probe.py's vllm_probes: one vLLM process probes every case
    "test_vllm_probe.py::test_vllm_rotary_embedding_is_read_bit_for_bit": "vllm probes",
}


def pytest_ignore_collect(collection_path, config):
    """Where -m leaves every conformance test out, a test module that cannot be imported
    without a reference library is not imported at all (importing transformers and diffusers
    and walking transformers' models takes most of the collection's time)."""
    if (
        collection_path.suffix == ".py"
        and collection_path.name.startswith("test_")
        and leaves_out(config.option.markexpr, "conformance")
        and file_needs(collection_path)
    ):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    reader, xdist = Reader(), config.pluginmanager.hasplugin("xdist")
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        library = reader.test(item)
        if library and not item.get_closest_marker("conformance"):
            item.add_marker(pytest.mark.conformance(library))
        names = (f"{item.path.name}::{item.originalname}", f"{item.path.name}::{item.name}")
        if SLOW.intersection(names):
            item.add_marker(pytest.mark.slow)
        group = next((SHARED[n] for n in names if n in SHARED), None)
        if group and xdist:
            item.add_marker(pytest.mark.xdist_group(group))
    files = {item.path.name for item in items}
    known = {f"{item.path.name}::{n}" for item in items for n in (item.originalname, item.name)}
    named = SLOW | SHARED.keys()
    stale = sorted(n for n in named if n.partition("::")[0] in files and n not in known)
    if stale:  # a renamed test would otherwise quietly lose its marker
        raise pytest.UsageError(f"tests/conftest.py names no such test: {', '.join(stale)}")


@pytest.fixture(autouse=True)
def _reference_libraries_only_in_conformance_tests(request):
    """A test not marked conformance whose code imports a reference library fails, saying so:
    the inner loop must run where none is installed."""
    if request.node.get_closest_marker("conformance"):
        yield
        return
    real = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        importer = ((globals or {}).get("__name__") or "").partition(".")[0]
        if not level and name.partition(".")[0] in REFERENCES and importer in OURS:
            pytest.fail(
                f"{request.node.nodeid} imports {name}, which tests/markers.py did not see: "
                "mark it @pytest.mark.conformance",
                pytrace=False,
            )
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    try:
        yield
    finally:
        builtins.__import__ = real


@pytest.fixture(autouse=True)
def _mpmath_precision_left_as_found():
    """tests/reference.py computes at mpmath's global 256 bits: a test that lowered it would make
    every later reference value less exact, and a correctly rounded table look wrong."""
    import mpmath

    before = mpmath.mp.prec
    yield
    assert mpmath.mp.prec == before, "the test changed mpmath.mp.prec: use mpmath.workprec"
