"""SBGM (CSGMM, CSVAE) vs channel-estimation baselines on the synthetic site, in one run (issue 21).

    python benchmarks/wireless/bench_sbgm.py [--quick] [--out benchmarks/wireless/results]

Data: the package's default site (3 clusters, 4 Laplacian sub-paths each, 2° angle spread), a 32-antenna
ULA observed through 16 randomly selected antennas (``A`` fixed), AWGN; training observations with a
per-sample SNR uniform on [5, 20] dB, test sets at each SNR in −10 … 30 dB. quadriga-lib channels are
not included (the package is not installed here).

Estimators (NMSE in dB on every test SNR):
* ``CSGMM`` / ``CSVAE`` — trained on the compressed noisy observations ``y`` only (no channel);
* ``CSGMM (clean)`` — the same CSGMM trained on the clean channels (``A = I``, ``ζ = 1e-3``):
  what compressed training costs;
* ``LS`` (min-norm ``A⁺y``), ``OMP`` (scikit-learn, noise-level stopping), ``SBL`` (per-observation EM)
  — need no training data;
* ``LMMSE`` (sample covariance of clean training channels) and ``GMM (clean)`` (scikit-learn full-
  covariance GMM on clean channels, conditional-mean estimator) — genie baselines that see channels.

Generative quality: 1-Wasserstein distance between the per-channel RMS angle spreads (degrees) of
1000 generated channels and of the test channels' planted paths, for each SBGM variant. Times: training
seconds and estimation seconds per 1000 observations (wall clock; a shared machine: compare ratios).
Writes ``sbgm.json`` and ``sbgm.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from scigen.core.files import atomic_write_text
from scigen.wireless import SBGM, SBGMConfig
from scigen.wireless.baselines import CleanGMM, lmmse_estimate, ls_estimate, omp_estimate, sbl_estimate
from scigen.wireless.channels import as_observations, channel_matrix
from scigen.wireless.metrics import nmse_db, spread_distances


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    n_train, n_test, em_steps, vae_steps = (600, 100, 30, 300) if args.quick else (2000, 200, 100, 1500)
    snrs = [-10.0, -5.0, 0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    train = SBGM.default_data(seed=0).isel(sample=slice(n_train))
    tests = {s: SBGM.default_data(seed=100 + i, snr_db=s).isel(sample=slice(n_test)) for i, s in enumerate(snrs)}

    models, train_s = {}, {}
    models["CSGMM"], train_s["CSGMM"] = _timed(lambda: SBGM(SBGMConfig.preset("small")).fit(train, max_steps=em_steps))
    models["CSGMM (clean)"], train_s["CSGMM (clean)"] = _timed(
        lambda: SBGM(SBGMConfig.preset("small")).fit(train[["h"]], max_steps=em_steps))
    models["CSVAE"], train_s["CSVAE"] = _timed(lambda: SBGM(SBGMConfig.preset("small", model="csvae")).fit(
        train, max_steps=vae_steps, progress=False, logger=None))
    H = channel_matrix(train["h"])
    cov = H.T @ H.conj() / len(H)
    gmm, train_s["GMM (clean)"] = _timed(lambda: CleanGMM(8).fit(H))
    D = models["CSGMM"].dictionary().matrix.numpy()

    est = {
        **{k: (lambda t, m=m: m.estimate(t).values.reshape(len(t.sample), -1)) for k, m in models.items()},
        "LS": lambda t: ls_estimate(t["y"].values, t["A"].values),
        "OMP": lambda t: omp_estimate(t["y"].values, t["noise_var"].values, t["A"].values, D),
        "SBL": lambda t: sbl_estimate(t["y"].values, t["noise_var"].values, t["A"].values, D),
        "LMMSE (genie cov)": lambda t: lmmse_estimate(t["y"].values, t["noise_var"].values, t["A"].values, cov),
        "GMM (clean)": lambda t: gmm.estimate(*as_observations(t)),
    }
    nmse, est_s = {k: {} for k in est}, {k: 0.0 for k in est}
    for s, t in tests.items():
        h = channel_matrix(t["h"])
        for k, f in est.items():
            e, sec = _timed(lambda f=f, t=t: f(t))
            nmse[k][s] = nmse_db(e, h)
            est_s[k] += sec
    n_est = n_test * len(snrs)
    ref = SBGM.default_data(seed=999).isel(sample=slice(1000))
    spread = {k: spread_distances(m.sample(n_samples=1000, seed=0), ref)["angle_spread_W1_deg"] for k, m in models.items()}
    spread["CSGMM (all atoms)"] = spread_distances(models["CSGMM"].sample(n_samples=1000, seed=0, max_paths=None),
                                                   ref)["angle_spread_W1_deg"]

    record = {"quick": args.quick, "n_train": n_train, "n_test_per_snr": n_test, "em_steps": em_steps,
              "csvae_steps": vae_steps, "snr_db": snrs, "nmse_db": nmse, "train_seconds": train_s,
              "estimate_seconds_per_1000": {k: v / n_est * 1000 for k, v in est_s.items()},
              "angle_spread_W1_deg": spread, "machine": platform.platform(), "python": platform.python_version()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "sbgm.json", json.dumps(record, indent=2, default=float) + "\n")
    head = "| estimator | " + " | ".join(f"{s:g} dB" for s in snrs) + " | train s | estimate s / 1000 |"
    rows = [head, "|---" * (len(snrs) + 3) + "|"]
    for k in est:
        rows.append(f"| {k} | " + " | ".join(f"{nmse[k][s]:.2f}" for s in snrs) +
                    f" | {train_s.get(k, 0.0):.1f} | {record['estimate_seconds_per_1000'][k]:.2f} |")
    rows += ["", "| generator | angle-spread W1 (deg) |", "|---|---|"]
    rows += [f"| {k} | {v:.3f} |" for k, v in spread.items()]
    text = (f"# SBGM benchmark ({'quick' if args.quick else 'full'})\n\nNMSE (dB) of channel estimates vs SNR; "
            f"{n_train} training observations (SNR U[5, 20] dB), {n_test} test observations per SNR; 32-antenna ULA, "
            "16 selected antennas. `train s` = training wall time, `estimate s / 1000` = estimation wall time per 1000 "
            "observations (shared, loaded machine: compare ratios).\n\n" + "\n".join(rows) + "\n")
    atomic_write_text(out / "sbgm.md", text)
    print(text)


if __name__ == "__main__":
    main()
