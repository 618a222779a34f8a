"""The placer's demo: train the ``small`` preset (quick: ``tiny``) on synthetic circuits, place a held-out
circuit, and compare its HPWL with the random-legal and analytical baselines (the latter through the same
legaliser); ``placement.png`` shows the three placements side by side."""

from __future__ import annotations

from pathlib import Path

from scigen.core.system import DemoResult

__all__ = ["run_demo"]


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """The body of ``DiffusionPlacer.run_demo`` (the base ``demo`` adds folder, threads, wall time, report)."""
    import time

    import matplotlib.pyplot as plt

    from scigen.placement.baselines import analytical, random_legal
    from scigen.placement.metrics import evaluate_placement
    from scigen.placement.plot import plot_placements
    from scigen.placement.synthetic import SynthConfig, generate_netlist

    model = cls(cls.Config.preset("tiny" if quick else "small", train={"progress": False}))
    c = model.config
    t0 = time.perf_counter()
    model.fit(cls.default_data(n=c.train_circuits, objects=c.train_objects))
    train_seconds = time.perf_counter() - t0
    test = generate_netlist(10_000, SynthConfig.for_size(c.train_objects), name="heldout")
    placed, m = model.place(test, progress=False)
    rand, mr = random_legal(test, seed=0)
    anal, ma = analytical(test, seed=0, legalizer=model.legalizer_config())
    fig = plot_placements([(placed, f"diffusion: HPWL {m['hpwl']:.4g}, legality {m['legality']:.3f}"),
                           (anal, f"analytical: HPWL {ma['hpwl']:.4g}, legality {ma['legality']:.3f}"),
                           (rand, f"random legal: HPWL {mr['hpwl']:.4g}")], out / "placement.png")
    plt.close(fig)
    model.write_samples(placed, out / "placed", overwrite=True)
    model.save(out / "model", overwrite=True)
    metrics = {"hpwl": m["hpwl"], "legality": m["legality"], "overlap": m["overlap"],
               "hpwl_before_legalisation": m["hpwl_guided"], "hpwl_random_legal": mr["hpwl"],
               "hpwl_analytical": ma["hpwl"], "legality_analytical": ma["legality"],
               "hpwl_reference": evaluate_placement(test)["hpwl"], "seconds_diffusion": m["seconds"],
               "seconds_analytical": ma["seconds"], "train_seconds": train_seconds,
               "final_train_loss": model.history.final_loss}
    note = ("HPWL in chip units (canvas 1000 x 1000) of a held-out synthetic circuit; legality = union area "
            "inside the canvas / total area; analytical = quadratic wirelength + the same legaliser; "
            "hpwl_reference = the generator's own placement")
    return DemoResult(metrics=metrics, files=[out / "placement.png", out / "placed", out / "model"],
                      report={"config": c.model_dump(), "note": note})
