"""cell-eval's perturbation metrics on GIM's predicted AnnData (the ``celleval`` extra).

cell-eval (Arc Institute; the Virtual Cell Challenge's evaluator, Roohani et al. 2025, *Virtual Cell
Challenge: toward a Turing test for the virtual cell*, Cell 188) scores predicted against observed
cells per perturbation: ``mse`` / ``mae`` of the pseudobulk (mean) profile, ``pearson_delta`` (Pearson
correlation of the predicted and observed mean shift from control), ``mse_delta`` / ``mae_delta``,
``discrimination_score_l1/l2/cosine`` (how highly the predicted shift ranks its own perturbation among
all observed shifts, 1 = first), ``pearson_edistance`` (correlation over perturbations of the energy
distances to control), ``clustering_agreement``, and with differential expression (``de=True``, pdex's
Wilcoxon tests) the DE-overlap, precision, direction and recall metrics.

:func:`cell_eval_scores` builds the two AnnData cell-eval reads from a trained GIM and an AnnData:

* observed: every perturbed context of ``adata`` outside the training split (what ``evaluate`` scores),
  in gene space (``adata.X`` or the model's layer), one perturbation label per (perturbation, dose)
  context, ``"<perturbation>@<dose>"``;
* predicted: ``n_samples`` cells per context from :meth:`GIM.sample` (its gene-space inverse when the
  model works in PCA space, :mod:`scigen.singlecell.gim.genes`), negative values clipped at 0 (the PCA
  inverse is not exactly non-negative; cell-eval refuses negative expression);
* both carry the observed control cells (of every split), as cell-eval's Virtual Cell Challenge inputs
  do: the predicted shifts are measured from the observed control.

cell-eval reads expression on a log1p (or count) scale and refuses negative values: a model trained on
an arbitrary representation (the synthetic screen's standardised variables) cannot be scored
(``InvalidInputError`` naming the minimum). Returns the mean over perturbations of each metric as
``"cell_eval/<metric>"``.
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["CONTROL_LABEL", "PERT_COL", "cell_eval_inputs", "cell_eval_scores", "score_anndata"]

CONTROL_LABEL = "control"
PERT_COL = "target"


def _gene_matrix(adata: Any, layer: str | None) -> np.ndarray:
    x = adata.layers[layer] if layer is not None else adata.X
    x = x.toarray() if hasattr(x, "toarray") else np.asarray(x)
    return np.asarray(x, dtype=np.float32)


def cell_eval_inputs(model: Any, adata: Any, *, n_samples: int = 200, seed: int | None = None) -> tuple[Any, Any]:
    """``(predicted, observed)`` AnnData in gene space for cell-eval (module doc), perturbation labels in
    ``obs["target"]`` and the control cells labelled ``"control"`` in both."""
    import anndata as ad
    import pandas as pd

    model.require_trained("evaluate")
    md, cfg = model.metadata, model.config
    keys = md["keys"]
    pkey, dkey = keys["perturbation_key"], keys["dose_key"]
    if pkey not in adata.obs or dkey not in adata.obs:
        raise InvalidInputError(f"adata.obs needs the columns {pkey!r} and {dkey!r} the model was trained with")
    pert = adata.obs[pkey].astype(str).to_numpy()
    is_ctrl = pert == str(keys["control"])
    if not is_ctrl.any():
        raise InvalidInputError(f"adata has no control cells (obs[{pkey!r}] == {keys['control']!r}); cell-eval "
                                "measures every shift from them")
    held = ~is_ctrl
    if cfg.split_key is not None and cfg.split_key in adata.obs:
        held &= adata.obs[cfg.split_key].astype(str).to_numpy() != cfg.train_split
    if not held.any():
        raise InvalidInputError("adata has no perturbed context outside the training split to evaluate")
    x_real = _gene_matrix(adata, keys.get("layer") if keys.get("use_rep") is None else None)
    if x_real.min() < 0:  # checked before sampling: evaluate skips such data at no cost
        raise InvalidInputError(f"cell-eval scores expression on a log1p or count scale (all values >= 0); this data "
                                f"has minimum {float(x_real.min()):.3g}, so it cannot be scored (GIM's own metrics can)")
    sub = adata[held]
    pred = model.sample(sub, n_samples=n_samples, seed=seed)
    genes = list(pred.var_names)
    if list(adata.var_names) != genes:
        raise InvalidInputError(f"the predictions have {len(genes)} features named like {genes[:3]}, adata has "
                                f"{adata.n_vars} like {list(adata.var_names)[:3]}: cell-eval compares genes, so the "
                                "model must predict adata's genes (X, or X_pca with varm['PCs'])")
    x_pred = np.clip(_gene_matrix(pred, None), 0.0, None)

    def label(p, d) -> str:
        return f"{p}@{float(d):g}"

    ctrl = x_real[is_ctrl]
    real_lab = [label(p, d) for p, d in zip(pert[held], adata.obs[dkey].to_numpy()[held], strict=True)]
    pred_lab = [label(p, d) for p, d in zip(pred.obs[pkey].astype(str), pred.obs[dkey], strict=True)]
    var = pd.DataFrame(index=genes)

    def make(x, labels):
        obs = pd.DataFrame({PERT_COL: [CONTROL_LABEL] * len(ctrl) + labels})
        obs.index = [f"c{i}" for i in range(len(obs))]
        return ad.AnnData(np.concatenate([ctrl, x]).astype(np.float32), obs=obs, var=var)

    return make(x_pred, pred_lab), make(x_real[held], real_lab)


def cell_eval_scores(model: Any, adata: Any, *, n_samples: int = 200, seed: int | None = None, de: bool = False,
                     per_perturbation: bool = False):
    """``{"cell_eval/<metric>": mean over perturbations}`` of cell-eval's ``"anndata"`` profile on GIM's
    predictions for ``adata`` (``de=True``: its ``"full"`` profile, with differential expression).
    ``per_perturbation=True`` also returns cell-eval's per-perturbation table (a polars DataFrame)."""
    pred, real = cell_eval_inputs(model, adata, n_samples=n_samples, seed=seed)
    return score_anndata(pred, real, de=de, per_perturbation=per_perturbation)


def score_anndata(pred: Any, real: Any, *, de: bool = False, per_perturbation: bool = False):
    """cell-eval on a ``(predicted, observed)`` pair laid out as :func:`cell_eval_inputs` returns it (labels in
    ``obs["target"]``, control ``"control"``), e.g. a baseline's predictions; see :func:`cell_eval_scores`."""
    try:
        from cell_eval import MetricsEvaluator
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("cell-eval metrics need the cell-eval package: pip install 'scigen-singlecell[celleval]'") from e
    import logging
    import os
    import warnings

    log = logging.getLogger("cell_eval")
    level, bars = log.level, os.environ.get("TQDM_DISABLE")
    log.setLevel(logging.ERROR)
    os.environ["TQDM_DISABLE"] = "1"  # cell-eval and pdex draw a progress bar per metric
    try:
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = MetricsEvaluator(pred, real, control_pert=CONTROL_LABEL, pert_col=PERT_COL, num_threads=1,
                                  outdir=out, skip_de=not de, allow_discrete=True)
            table, agg = ev.compute(profile="full" if de else "anndata", write_csv=False)
    finally:
        log.setLevel(level)
        if bars is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = bars
    means = {}
    for row in agg.iter_rows(named=True):
        if row.get("statistic") == "mean":
            means = {k: v for k, v in row.items() if k != "statistic"}
    out = {f"cell_eval/{k}": float(v) for k, v in means.items() if v is not None}
    return (out, table) if per_perturbation else out
