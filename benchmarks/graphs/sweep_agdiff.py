"""AGDiff diagnosis sweep: which pseudo-anomaly generator settings make the detector work.

One split of the synthetic set (``synthetic_anomaly_graphs(300, 60, seed=DATA_SEED)``; half the normal
graphs train, the rest + every anomaly test), the ``tiny`` preset with each variant's overrides, and per
variant: the test AUC, the mean distance of decoded pseudo-anomalies (and of held-out normal graphs) to
their nearest normal training graph in the frozen encoder's embedding (mean node latent μ), the mean
edge count of pseudo-anomalies vs normal graphs, and the training seconds.

    python benchmarks/graphs/sweep_agdiff.py '{"paper": {"start_t": 1.0}, "random": {"pseudo": "random"}}' 400 1

Arguments: a JSON object ``{name: config overrides}``, the steps per fit (default 400), the data seed
(default 0; seed 1 is the validation set the default ``start_t`` was chosen on), the planted-anomaly
strength (default 0.5; the bench's ``synthetic-subtle`` set is 0.2). One JSON line per variant.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch


def main(argv: list[str]) -> int:
    from scigen.graphs.agdiff import AGDiff
    from scigen.graphs.agdiff.demo import split_normal
    from scigen.graphs.agdiff.embedding import latent_embedding
    from scigen.graphs.agdiff.graphs import anomaly_labels
    from scigen.graphs.agdiff.metrics import detection_scores
    from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

    torch.set_num_threads(1)
    variants = json.loads(argv[0])
    steps = int(argv[1]) if len(argv) > 1 else 400
    data_seed = int(argv[2]) if len(argv) > 2 else 0
    strength = float(argv[3]) if len(argv) > 3 else 0.5
    train, test = split_normal(synthetic_anomaly_graphs(300, 60, seed=data_seed, strength=strength), seed=0)
    y = anomaly_labels(test)
    normal = [g for g in test if g.graph["anomaly"] == 0][:60]
    for name, over in variants.items():
        t0 = time.time()
        model = AGDiff(AGDiff.Config.preset("tiny", train={"progress": False, "logger": None}, **over))
        model.fit(train, max_steps=steps)
        seconds = time.time() - t0
        fake = model.sample(normal, seed=0)
        ref = latent_embedding(model, train)

        def dist(graphs, ref=ref, model=model):
            e = latent_embedding(model, graphs)
            return float(np.sqrt(((e[:, None] - ref[None]) ** 2).sum(-1)).min(1).mean())

        print(json.dumps({"name": name, "overrides": over,
                          "auc": round(detection_scores(y, model.score(test))["auc"], 4),
                          "dist_fake": round(dist(fake), 3), "dist_normal": round(dist(normal), 3),
                          "edges_fake": round(float(np.mean([g.number_of_edges() for g in fake])), 1),
                          "edges_normal": round(float(np.mean([g.number_of_edges() for g in normal])), 1),
                          "sec": round(seconds)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
