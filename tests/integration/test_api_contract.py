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
