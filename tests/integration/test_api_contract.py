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
