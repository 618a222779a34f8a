"""One user API across domains (issue 14): every registered system keeps the same contract.

Walks every system found through the ``scigen.systems`` entry points: presets exist and validate;
an untrained ``sample`` gives the one clear error; after a two-step ``fit`` on the default data,
``sample(*condition, n_samples=, method=, steps=, seed=)`` returns ``n_samples`` results and is
reproducible by seed; ``save``/``load(device=)`` round-trips the history; plot functions take
``ax=`` (a multi-panel layout ``fig=``) and never set matplotlib's backend. Counting ``n_samples``
results: a list/Batch has ``len``, an xarray a ``sample`` dim, an AnnData of trajectories one
``*traj_id`` per sample.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from scigen.core.errors import NotTrainedError
from scigen.core.system.registry import discover

SYSTEMS = sorted((spec for table in discover()[0].values() for spec in table.values()
                  if isinstance(spec.target, str)),  # installed systems, not test doubles registered in-process
                 key=lambda s: (s.domain, s.name))
IDS = [f"{s.domain}/{s.name}" for s in SYSTEMS]


def _count(out) -> int:
    if hasattr(out, "sizes") and "sample" in getattr(out, "sizes", {}):  # xarray with a sample dim
        return int(out.sizes["sample"])
    if hasattr(out, "n_obs"):  # AnnData: one row per generated cell, or per cell of a trajectory
        traj = [c for c in out.obs.columns if str(c).endswith("traj_id")]
        return int(out.obs[traj[0]].nunique()) if traj else int(out.n_obs)
    return len(out)


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_presets_exist_and_validate(spec):
    cls = spec.load()
    assert {"tiny", "small", "paper"} <= set(cls.Config.presets()), cls.Config.presets()
    for name in ("tiny", "small", "paper"):
        cfg = cls.Config.preset(name)
        assert isinstance(cfg, cls.Config)
        assert cfg.train.max_steps >= 1


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_sample_vocabulary_and_round_trip(spec, tmp_path):
    cls = spec.load()
    params = inspect.signature(cls.sample).parameters
    for name in ("n_samples", "seed"):
        assert name in params, f"{spec.domain}/{spec.name}.sample lacks {name}="
    model = cls(cls.Config.preset("tiny"))
    data = cls.default_data(quick=True)
    cond = model.example_condition(data)
    with pytest.raises(NotTrainedError, match="untrained"):
        model.sample(*cond, n_samples=2, seed=0)
    model.fit(data, max_steps=2, progress=False, logger=None)
    assert model.is_trained and model.history.steps == 2
    cond = model.example_condition(data)
    out = model.sample(*cond, n_samples=3, seed=0)
    assert _count(out) == 3
    model.save(tmp_path / "run")
    again = cls.load(tmp_path / "run", device="cpu")
    assert again.history.losses == model.history.losses and again.is_trained
    assert _count(again.sample(*again.example_condition(data), n_samples=2, seed=1)) == 2
    _check_sample_to(spec, again, tmp_path)


#: systems whose sample_to refuses at their tiny preset, and the reason it names (issue 33.3)
SAMPLE_TO_REFUSES = {"timeseries/d3u": "center_residuals"}


def _check_sample_to(spec, model, tmp_path):
    """``sample_to`` with the defaults the CLI uses (no options): 3 samples in chunks of 2, one row per sample in
    every written array; or the named refusal, with nothing written."""
    from scigen.core.errors import InvalidInputError
    from scigen.core.system.shard_writer import load_sharded_samples

    key = f"{spec.domain}/{spec.name}"
    out = tmp_path / "shards"
    if key in SAMPLE_TO_REFUSES:
        with pytest.raises(InvalidInputError, match=SAMPLE_TO_REFUSES[key]):
            model.sample_to(out, 3, seed=0, chunk_size=2)
        assert not out.exists()
        return
    import torch

    if isinstance(model.sample_draw(seed=0)(torch.arange(1)), torch.Tensor):  # one array per sample: a .npy file
        out = tmp_path / "shards.npy"
    got = load_sharded_samples(model.sample_to(out, 3, seed=0, chunk_size=2))
    arrays = [got] if not isinstance(got, (dict, tuple)) else list(got.values() if isinstance(got, dict) else got)
    assert arrays and all(a.shape[0] == 3 for a in arrays), [a.shape for a in arrays]


def _plot_modules():
    mods = []
    for spec in SYSTEMS:
        if spec.domain in ("core", "testing"):  # the engine's toy plot is tested below
            continue
        pkg = importlib.import_module(f"scigen.{spec.domain}")
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"scigen.{spec.domain}."):
            if info.name.rsplit(".", 1)[-1] in ("plot", "plotting") and info.name not in mods:
                mods.append(info.name)
    return sorted(set(mods))


@pytest.mark.parametrize("module", _plot_modules())
def test_plot_functions_take_ax_and_leave_the_backend_alone(module):
    mod = importlib.import_module(module)
    src = inspect.getsource(mod)
    assert "matplotlib.use(" not in src, f"{module} sets matplotlib's backend"
    public = [f for n, f in vars(mod).items() if inspect.isfunction(f) and not n.startswith("_")
              and f.__module__ == module and n.startswith("plot")]
    assert public, f"{module} has no plot_* function"
    for f in public:  # one panel takes ax=, a multi-panel layout fig=
        params = inspect.signature(f).parameters
        assert "ax" in params or "fig" in params, f"{module}.{f.__name__} has no ax= (or fig=) parameter"


def test_the_toy_plot_draws_into_a_given_ax_without_touching_the_backend(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt
    import torch

    from scigen.core.toy.system import plot_samples

    backend = matplotlib.get_backend()
    fig, ax = plt.subplots()
    got = plot_samples(torch.randn(50, 2), torch.randn(50, 2), ax=ax, title="t")
    assert got is fig and len(ax.collections) == 2 and not (tmp_path / "x.png").exists()
    plot_samples(torch.randn(5, 2), torch.randn(5, 2), tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 0 and matplotlib.get_backend() == backend
    plt.close("all")


# ---------------------------------------------------------------------------------------------------------------
# No side effects on the caller (issue 32, item 3): constructing, fitting, sampling, saving and loading a model
# leave the global random states (torch CPU and CUDA, numpy, Python ``random``) exactly as they were, and a
# sampler called inside a training loss never draws a progress bar.
# ---------------------------------------------------------------------------------------------------------------

def _global_rng():
    import random

    import numpy as np
    import torch

    state = {"torch": torch.get_rng_state().clone(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = [s.clone() for s in torch.cuda.get_rng_state_all()]
    return state


def _assert_rng_unchanged(before, what):
    import numpy as np
    import torch

    after = _global_rng()
    assert torch.equal(before["torch"], after["torch"]), f"{what} changed torch's global CPU RNG"
    b, a = before["numpy"], after["numpy"]
    assert b[0] == a[0] and np.array_equal(b[1], a[1]) and b[2:] == a[2:], f"{what} changed numpy's global RNG"
    assert before["python"] == after["python"], f"{what} changed Python's random state"
    for i, (sb, sa) in enumerate(zip(before.get("cuda", []), after.get("cuda", []), strict=True)):
        assert torch.equal(sb, sa), f"{what} changed the RNG of cuda:{i}"


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_no_verb_changes_the_callers_random_state(spec, tmp_path):
    import random

    import numpy as np
    import torch

    cls = spec.load()
    data = cls.default_data(quick=True)
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(123)
    before = _global_rng()
    expected = torch.rand(3)  # what the caller's stream gives next when nothing touched it
    torch.set_rng_state(before["torch"])
    model = cls(cls.Config.preset("tiny"))
    _assert_rng_unchanged(before, "constructing")
    model.fit(data, max_steps=2, progress=False, logger=None)
    _assert_rng_unchanged(before, "fit")
    model.sample(*model.example_condition(data), n_samples=2, seed=0)
    _assert_rng_unchanged(before, "sample")
    model.save(tmp_path / "run")
    _assert_rng_unchanged(before, "save")
    cls.load(tmp_path / "run", device="cpu")
    _assert_rng_unchanged(before, "load")
    assert torch.equal(torch.rand(3), expected)  # the symptom: seed 123's draw, not seed 0's


def test_a_network_is_built_from_its_seed_and_the_caller_keeps_its_stream():
    """``make_network`` draws the same initial weights as ``torch.manual_seed(seed); build_network()`` (the
    rule before issue 32, so trained results did not move) and leaves the caller's next draw where it was."""
    import torch

    from scigen.core.toy.system import ToySystem

    torch.manual_seed(123)
    model = ToySystem(ToySystem.Config.preset("tiny"))
    got = torch.rand(2)
    assert torch.equal(got, torch.rand(2, generator=torch.Generator().manual_seed(123)))
    torch.manual_seed(model.training_options().seed)
    reference = model.build_network()
    for (name, p), q in zip(model.network.state_dict().items(), reference.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    other = ToySystem(ToySystem.Config.preset("tiny"), train={"seed": model.training_options().seed + 1})
    assert not torch.equal(next(iter(other.network.parameters())), next(iter(model.network.parameters())))


_FIT_UNDER_A_TERMINAL = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
from scigen.core.system.registry import discover
specs = {f"{s.domain}/{s.name}": s for t in discover()[0].values() for s in t.values()}
assert sys.stderr.isatty(), "the check needs stderr on a terminal (progress=None would draw there)"
for case in sys.argv[1:]:
    key, _, overrides = case.partition("|")
    cls = specs[key].load()
    data = cls.default_data(quick=True)
    print(f"=== begin {case}", flush=True)
    cls(cls.Config.preset("tiny"), **json.loads(overrides or "{}")).fit(data, max_steps=3, progress=False,
                                                                        logger=None)
    print(f"=== end {case}", flush=True)
"""
# every system's tiny preset, plus the settings whose loss runs the engine sampler each step
BAR_CASES = IDS + ['singlecell/inverseflow|{"algorithm": "ifm"}']


@pytest.fixture(scope="module")
def fits_under_a_terminal(run_under_a_terminal):
    """Output of a 3-step ``fit(progress=False)`` of every system, run in one subprocess whose stdout and
    stderr are a pseudo-terminal (where a sampler's ``progress=None`` draws a bar); ``{key: text}``."""
    import sys

    code, text = run_under_a_terminal([sys.executable, "-c", _FIT_UNDER_A_TERMINAL, *BAR_CASES])
    assert code == 0, text[-3000:]
    out = {}
    for case in BAR_CASES:
        begin, end = text.index(f"=== begin {case}"), text.index(f"=== end {case}")
        out[case] = text[begin:end]
    return out


@pytest.mark.parametrize("case", BAR_CASES)
def test_fit_with_progress_off_draws_no_sampler_bar_on_a_terminal(case, fits_under_a_terminal):
    text = fits_under_a_terminal[case]
    assert "sampling" not in text and "━" not in text, f"fit(progress=False) drew a bar:\n{text[-2000:]}"


def test_the_terminal_check_sees_a_sampler_bar_where_one_is_drawn(run_under_a_terminal):
    """The bar test above can fail: the engine sampler with ``progress=None`` under the same pseudo-terminal
    prints its "sampling" bar, and inside the engine's ``no_progress_bars`` (what a training loss runs
    under) it does not."""
    import sys

    script = r"""
import torch
from scigen.core.paths import LinearPath
from scigen.core.samplers import no_progress_bars, sample
def run():
    sample(lambda x, t: -x, torch.randn(4, 2), torch.linspace(1, 0, 200).double(), path=LinearPath(),
           prediction="velocity", method="euler")
print("=== quiet", flush=True)
with no_progress_bars():
    run()
print("=== loud", flush=True)
run()
print("=== done", flush=True)
"""
    code, text = run_under_a_terminal([sys.executable, "-c", script], timeout=120)
    assert code == 0, text[-2000:]
    quiet, loud = text.split("=== quiet")[1].split("=== loud")
    assert "sampling" not in quiet
    assert "sampling" in loud.split("=== done")[0]


def test_baselines_that_seed_torch_leave_the_callers_random_state_alone():
    """The baselines seed torch for their own networks (the same numbers as before) under the engine's
    ``preserves_rng``: the caller's next draw is the one it would have had."""
    import numpy as np
    import torch

    from scigen.graphs.agdiff.baselines import OCGIN
    from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs
    from scigen.singlecell.inverseflow.baselines import noise2self

    graphs = synthetic_anomaly_graphs(20, 4, seed=0)
    points = np.random.default_rng(0).normal(size=(64, 2)).astype(np.float32)
    torch.manual_seed(123)
    before = _global_rng()
    OCGIN(max_steps=2).fit(graphs)
    _assert_rng_unchanged(before, "OCGIN.fit")
    first = noise2self(points, max_steps=2, width=16, depth=1)
    _assert_rng_unchanged(before, "noise2self")
    torch.manual_seed(999)  # a different caller state: the baseline's own seed decides its result
    assert np.array_equal(noise2self(points, max_steps=2, width=16, depth=1), first)


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_build_network_never_seeds_the_global_generator(spec):
    """The seed is the engine's job (``make_network``): a ``build_network`` that seeds torch again would
    reset its caller's stream wherever it is called directly."""
    import inspect

    cls = spec.load()
    source = inspect.getsource(cls.build_network)
    assert "manual_seed" not in source and "fork_rng" not in source, f"{spec.domain}/{spec.name}.build_network seeds"


# ====================================================================================================
# The user vocabulary (issue 32, item 4; docs/engine-api.md, "The user vocabulary"): one count name
# (n_samples / --n-samples), method = an engine solver only, unknown keywords refused, a second fit
# continues; the names before issue 32 still work for one release with a DeprecationWarning naming the new one.
# ====================================================================================================
#: count names that are not n_samples; each may only survive as a deprecated alias listed in RENAMED
OLD_COUNT_NAMES = ("n_cells", "n_members", "members", "n", "num_samples")
#: (system, verb, old keyword) -> the new keyword its DeprecationWarning must name
RENAMED = {("singlecell/gim", "evaluate", "n_cells"): "n_samples",
           ("singlecell/gim", "evaluate", "mode"): "intervention",
           ("singlecell/gim", "predict_contexts", "n_cells"): "n_samples",
           ("singlecell/gim", "predict_contexts", "mode"): "intervention",
           ("weather/nowcast", "evaluate", "n_members"): "n_samples"}
OLD_CLI_FLAGS = ("--n", "--samples", "--members", "--n-cells")
#: whole verbs kept one release under their old name (tested below)
DEPRECATED_VERBS = {("singlecell/gim", "predict")}


def _key(spec) -> str:
    return f"{spec.domain}/{spec.name}"


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_the_count_is_n_samples_and_old_names_only_warn(spec):
    cls = spec.load()
    assert "n_samples" in inspect.signature(cls.sample).parameters
    for verb in ("sample", "evaluate", "predict", "place", "predict_contexts"):
        fn = getattr(cls, verb, None)
        if fn is None or (_key(spec), verb) in DEPRECATED_VERBS:
            continue
        for old in OLD_COUNT_NAMES:
            if old in inspect.signature(fn).parameters:
                assert (_key(spec), verb, old) in RENAMED, f"{_key(spec)}.{verb} takes the count as {old}="
    model = cls(cls.Config.preset("tiny"))
    data = cls.default_data(quick=True)
    for (key, verb, old), new in RENAMED.items():
        if key != _key(spec):
            continue
        arg = data if verb == "evaluate" else {}
        with pytest.warns(DeprecationWarning, match=rf"{old}=.*deprecated.*use {new}="):
            with pytest.raises(Exception):  # noqa: B017 - untrained: the rename is resolved (and warned) first
                getattr(model, verb)(arg, **{old: 3 if old.startswith("n_") else "map"})


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_the_cli_says_n_samples_and_hides_the_old_flags(spec):
    import typer

    from scigen.core.cli.main import build_app

    system = typer.main.get_command(build_app([spec.domain, spec.name])).commands[spec.domain].commands[spec.name]
    for verb, cmd in system.commands.items():
        for param in cmd.params:
            shown = [] if getattr(param, "hidden", False) else param.opts
            assert not set(shown) & set(OLD_CLI_FLAGS), (verb, shown)
            if "n_samples" == param.name:
                assert param.opts == ["--n-samples"], (verb, param.opts)


def test_gim_predict_and_its_method_map_are_deprecated_names_of_sample_and_intervention():
    from scigen.core.errors import NotTrainedError
    from scigen.singlecell.gim.system import GIM

    model = GIM(GIM.Config.preset("tiny"))
    with pytest.warns(DeprecationWarning, match=r"GIM.predict.*use GIM.sample\(conditions, n_samples=, intervention=\)"):
        with pytest.raises(NotTrainedError):
            model.predict(None, n_cells=3)
    with pytest.warns(DeprecationWarning, match="method=.*use intervention="):
        with pytest.raises(NotTrainedError):
            model.sample(None, n_samples=3, method="map")


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_method_is_an_engine_solver_name(spec):
    from pydantic import ValidationError

    from scigen.core.samplers import METHODS

    cls = spec.load()
    field = cls.Config.model_fields.get("method")
    if field is None:
        return  # the system has no sampler choice (autoregressive, or a fixed chain)
    default = cls.Config().method
    assert default is None or default in METHODS, default
    with pytest.raises(ValidationError, match="not_a_solver"):
        cls.Config(method="not_a_solver")


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_second_fit_continues_and_unknown_keywords_are_refused(spec):
    from scigen.core.errors import InvalidInputError

    cls = spec.load()
    model = cls(cls.Config.preset("tiny"))
    data = cls.default_data(quick=True)
    with pytest.raises(InvalidInputError, match="n_step"):
        model.fit(data, max_steps=2, progress=False, logger=None, n_step=3)
    model.fit(data, max_steps=2, progress=False, logger=None)
    first = model.history.steps
    first_losses = list(model.history.losses)
    assert first >= 2
    model.fit(data, max_steps=2, progress=False, logger=None)
    assert model.history.steps == 2 * first, (first, model.history.steps)  # the second fit adds its steps
    assert model.history.losses[: len(first_losses)] == first_losses  # ... to the same history
    cond = model.example_condition(data)
    with pytest.raises(InvalidInputError, match="'sede'.*valid: .*seed"):
        model.sample(*cond, n_samples=2, sede=0)  # a typo is named, with the valid names
    with pytest.raises(InvalidInputError, match="bogus_option"):
        model.evaluate(data, bogus_option=1)
    if "method" in inspect.signature(cls.sample).parameters:
        with pytest.raises(InvalidInputError, match="not_a_solver"):
            model.sample(*cond, n_samples=2, seed=0, method="not_a_solver")


def test_a_second_fit_on_data_of_another_shape_is_refused_and_changes_nothing():
    import torch

    from scigen.core.errors import InvalidInputError
    from scigen.singlecell.mmsfm.system import MMSFM

    data = MMSFM.default_data(quick=True)  # 2 features
    model = MMSFM(MMSFM.Config.preset("tiny")).fit(data, max_steps=2, progress=False, logger=None)
    metadata, buffers = dict(model.metadata), {k: v.clone() for k, v in model.buffers.items()}
    weights = {k: v.clone() for k, v in model.network.state_dict().items()}
    with pytest.raises(InvalidInputError, match=r"dim 2 -> 1\); build a new model"):
        model.fit(data[:, :1].copy(), max_steps=2, progress=False, logger=None)
    assert model.metadata == metadata and model.history.steps == 2
    assert all(torch.equal(buffers[k], model.buffers[k]) for k in buffers)
    assert all(torch.equal(weights[k], v) for k, v in model.network.state_dict().items())


# ---------------------------------------------------------------------------------------------------------------
# Paper presets and staged resume, walked over every system (issue 32, "Done when"): ``preset("paper")`` equals
# the system's machine-readable paper table, and a system that trains in stages, interrupted in its second
# stage, resumes to the uninterrupted weights bit for bit.

@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_paper_preset_equals_its_table(spec):
    from scigen.core.system.paper_table import check_preset

    cls = spec.load()
    if spec.domain == "core":  # the engine's toy is not a paper
        return
    assert check_preset(cls) == []


STAGED_STEPS = 8
#: the systems whose default fit trains in stages (NsDiff's ``parts="staged"`` is tested by kill -9 in
#: tests/timeseries/test_staged_resume.py)
STAGED = {"graphs/agdiff", "timeseries/d3u", "weather/nowcast"}


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_a_staged_fit_interrupted_in_its_second_stage_resumes_bit_for_bit(spec, tmp_path, crash_after):
    import torch

    cls = spec.load()
    data = cls.default_data(quick=True)
    train = {"checkpoint_every": 1, "progress": False, "logger": None}
    whole = cls(cls.Config.preset("tiny", train=train))
    whole.fit(data, max_steps=STAGED_STEPS, checkpoint_dir=str(tmp_path / "whole"))
    stages = whole.history.stages
    assert (len(stages) >= 2) == (f"{spec.domain}/{spec.name}" in STAGED), stages
    if len(stages) < 2:
        return  # one-stage training: its resume is the engine's (tests/core/test_train_fit.py)
    _, start, end = stages[1]
    assert end - start >= 2, stages
    cut = cls(cls.Config.preset("tiny", train=train))
    with pytest.raises(RuntimeError, match="simulated crash"):  # one step into the second stage
        cut.fit(data, max_steps=STAGED_STEPS, checkpoint_dir=str(tmp_path / "cut"), callbacks=[crash_after(start + 1)])
    again = cls(cls.Config.preset("tiny", train=train))
    again.fit(data, max_steps=STAGED_STEPS, checkpoint_dir=str(tmp_path / "cut"), resume=True)
    assert again.history.stages == stages
    want, got = whole.network.state_dict(), again.network.state_dict()
    assert set(want) == set(got)
    for k in want:
        assert torch.equal(want[k], got[k]), k


# ---------------------------------------------------------------------------------------------------------------
# A failed fit leaves a trained model as it was (issue 35, case 6): options are validated before the model,
# its metadata, config or history is touched.

@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_a_refused_fit_leaves_the_trained_model_untouched(spec):
    import json

    import torch

    from scigen.core.errors import InvalidInputError

    cls = spec.load()
    model = cls(cls.Config.preset("tiny", train={"progress": False, "logger": None}))
    data = cls.default_data(quick=True)
    model.fit(data, max_steps=2)

    def state():
        return ({k: v.clone() for k, v in model.network.state_dict().items()}, list(model.history.losses),
                json.dumps(model.metadata, sort_keys=True, default=str), model.config.model_dump_json())

    before = state()
    for bad in ({"max_steps": 0}, {"lr": -1.0}, {"batch_size": 0}, {"lr": float("nan")}, {"no_such_option": 1}):
        with pytest.raises(InvalidInputError):
            model.fit(data, **bad)
        after = state()
        assert set(after[0]) == set(before[0]) and all(torch.equal(after[0][k], before[0][k]) for k in before[0]), bad
        assert after[1:] == before[1:], bad
