"""The SBGM demo: CSGMM (``small``) trained on compressed pilots only, against the baselines across SNRs."""

from __future__ import annotations

from pathlib import Path

from scigen.core.system import DemoResult

__all__ = ["DEMO", "run_demo"]

#: (training observations, EM iterations, test observations per SNR, SNRs in dB) for quick / full
DEMO = {True: (400, 40, 100, (0.0, 10.0, 20.0)), False: (1000, 60, 150, (-5.0, 0.0, 5.0, 10.0, 15.0, 20.0, 25.0))}


def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
    """Fit CSGMM on ``default_data``'s observations, estimate at each SNR with CSGMM, LS, OMP, SBL and
    the genie LMMSE (sample covariance of clean channels), plot NMSE vs SNR and the power-angle profile."""
    import matplotlib.pyplot as plt

    from scigen.core.plotting import save_figure
    from scigen.wireless.baselines import estimate_all
    from scigen.wireless.plot import plot_nmse_vs_snr, plot_power_angle_profile

    n_train, steps, n_test, snrs = DEMO[bool(quick)]
    model = cls(cls.Config.preset("small"))
    train = cls.default_data(quick=True, seed=0) if quick else cls.default_data(seed=0).isel(sample=slice(n_train))
    model.fit(train, max_steps=steps)
    curves: dict[str, list[float]] = {}
    for j, snr in enumerate(snrs):
        test = cls.default_data(quick=True, seed=100 + j, snr_db=snr).isel(sample=slice(n_test))
        res = estimate_all(model, train, test, methods=("LS", "OMP", "SBL", "LMMSE"))
        for k, v in res.items():
            curves.setdefault(k, []).append(v)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    plot_nmse_vs_snr(snrs, curves, ax=axes[0])
    gen = model.sample(n_samples=1000, seed=0, max_paths=None)
    d = model.dictionary()
    truth = cls.default_data(quick=True, seed=7)
    plot_power_angle_profile(gen, truth, d.angles.numpy(), ax=axes[1])
    fig.tight_layout()
    png = save_figure(fig, out / "sbgm.png", dpi=110)
    plt.close(fig)
    model.save(out / "model", overwrite=True)
    metrics = {f"NMSE_dB_{k}_{int(s)}dB": float(v[i]) for k, v in curves.items() for i, s in enumerate(snrs)}
    return DemoResult(metrics=metrics, files=[png, out / "model"],
                      report={"config": model.config.model_dump(mode="json"), "snr_db": list(snrs),
                              "nmse_db": curves, "em_iterations": model.history.steps,
                              "note": "CSGMM trained on compressed noisy pilots only (16 of 32 antennas); LMMSE uses "
                                      "the sample covariance of clean training channels (a genie baseline)"})
