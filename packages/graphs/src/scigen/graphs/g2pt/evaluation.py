"""G2PT's evaluation (G2PT §4): sample, then score against reference data.

Generic graphs: validity / uniqueness / novelty / V.U.N. (:func:`scigen.graphs.metrics.vun`,
isomorphism-aware; validity by ``config.family``) and the biased Gaussian-TV MMD² of degree,
clustering, 4-node orbit and spectrum (:func:`scigen.graphs.metrics.graph_mmds`). Molecules
(``family="molecule"``): MOSES validity, uniqueness, novelty and FCD
(:func:`scigen.graphs.metrics.molecules.molecule_metrics`). With PolyGraph installed (the ``polygraph``
extra) generic graphs also get PolyGraph Discrepancy (``PGD``, ``PGD_<descriptor>``) and PolyGraph's
V.U.N. (``VUN[polygraph]``) beside them (:mod:`scigen.graphs.metrics.pgd`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def evaluate(model: Any, data: Any, *, n_samples: int | None, train: Any, orbit: bool, seed: int | None,
             polygraph: bool | None = None, **sample_kwargs: Any) -> dict[str, float]:
    """The body of :meth:`G2PT.evaluate` (``model`` is a trained G2PT)."""
    if model.config.family == "molecule":
        from scigen.graphs.metrics.molecules import molecule_metrics

        is_smiles = isinstance(data, Sequence) and not isinstance(data, str) and data and isinstance(data[0], str)
        graphs = model._graphs(data)  # also refuses invalid SMILES, naming them
        ref = list(data) if is_smiles else model.to_smiles(graphs)
        n = len(ref) if n_samples is None else n_samples  # sample() refuses 0 and negative counts
        gen = model.to_smiles(model.sample(n, seed=seed, **sample_kwargs))
        train_smiles = train if train is not None else model.to_smiles(getattr(model, "_train_graphs", []))
        return molecule_metrics(gen, train_smiles, [s for s in ref if s], fcd_metric=len(ref) > 1)
    from scigen.graphs.metrics import graph_mmds, vun

    ref = model._graphs(data)
    train_graphs = model._graphs(train, "train") if train is not None else getattr(model, "_train_graphs", [])
    n = len(ref) if n_samples is None else n_samples  # sample() refuses 0 and negative counts
    gen = [g for g in model.sample(n, seed=seed, **sample_kwargs) if g is not None]
    from scigen.graphs.metrics.pgd import evaluation_scores

    return (vun(gen, train_graphs, model.config.family) | graph_mmds(ref, gen, orbit=orbit)
            | evaluation_scores(polygraph, ref, gen, train_graphs, model.config.family))
