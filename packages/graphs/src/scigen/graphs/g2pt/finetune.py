"""Goal-oriented fine-tuning of G2PT by rejection sampling (G2PT §4.1, Alg. 2; ``rounds > 1`` is the
self-bootstrap of Alg. 3).

Each round samples ``n_samples`` graphs from the current model, scores them with ``reward`` (which
may return ``None`` for an invalid graph: rejected), keeps those at or above ``threshold`` (or, with
no threshold, the top ``keep_fraction``) and trains on them with the model's own ``fit`` (the engine's
training loop) from the current weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError


def check_finetune_args(reward: object, rounds: int, n_samples: int, steps: int, keep_fraction: float) -> None:
    if not callable(reward):
        raise InvalidInputError(f"reward: expected a callable graph -> float, got {type(reward).__name__}")
    if rounds < 1 or n_samples < 2 or steps < 1:
        raise InvalidInputError(f"rounds, n_samples, steps must be >= 1, 2, 1; got {rounds}, {n_samples}, {steps}")
    if not 0 < keep_fraction <= 1:
        raise InvalidInputError(f"keep_fraction: expected in (0, 1], got {keep_fraction}")


def _finite_number(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and bool(np.isfinite(v))


def rejection_finetune(model: Any, reward: Callable[[nx.Graph], float | None], *, rounds: int = 1,
                       n_samples: int = 256, threshold: float | None = None, keep_fraction: float = 0.25,
                       steps: int = 200, lr: float | None = None, copies: int | None = None, seed: int = 0,
                       **sample_kwargs: Any) -> dict[str, Any]:
    """Run the rounds on ``model`` (a trained :class:`~scigen.graphs.g2pt.G2PT`); see :meth:`G2PT.finetune`."""
    check_finetune_args(reward, rounds, n_samples, steps, keep_fraction)

    def score(graphs):
        out = [None if g is None else reward(g) for g in graphs]
        bad = [(i, v) for i, v in enumerate(out) if v is not None and not _finite_number(v)]
        if bad:
            raise InvalidInputError(f"reward: must return a finite number or None (reject); got {bad[0][1]!r} for "
                                    f"sample {bad[0][0]} ({len(bad)} of {len(out)} samples)")
        return out

    history, first = [], None
    copies = max(1, min(model.config.copies, 20)) if copies is None else copies  # fit() refuses copies < 1
    for r in range(rounds):
        graphs = model.sample(n_samples, seed=seed + r, **sample_kwargs)
        rewards = score(graphs)
        vals = np.array([v for v in rewards if v is not None], dtype=np.float64)
        if first is None:
            first = vals.tolist()
        cut = threshold if threshold is not None else (float(np.quantile(vals, 1 - keep_fraction)) if len(vals)
                                                      else float("inf"))
        kept = [g for g, v in zip(graphs, rewards, strict=True) if v is not None and v >= cut]
        if not kept:
            raise InvalidInputError(f"finetune round {r}: no sample reached the threshold {cut}")
        model.fit(kept, max_steps=steps, lr=model.config.train.lr if lr is None else lr, warmup_steps=0, resume=False,
                  progress=False, copies=copies)
        history.append({"round": r, "mean_before": float(vals.mean()) if len(vals) else float("nan"),
                        "accepted": len(kept), "threshold": float(cut)})
    after = score(model.sample(n_samples, seed=seed + rounds, **sample_kwargs))
    after_vals = [float(v) for v in after if v is not None]
    return {"rounds": history, "rewards_before": first, "rewards_after": after_vals,
            "mean_before": float(np.mean(first)) if first else float("nan"),
            "mean_after": float(np.mean(after_vals)) if after_vals else float("nan")}
