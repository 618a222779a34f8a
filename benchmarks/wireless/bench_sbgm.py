"""SBGM (CSGMM, CSVAE) vs channel-estimation baselines, in one run (issue 21).

    python benchmarks/wireless/bench_sbgm.py [--quick] [--out benchmarks/wireless/results]

Three parts, one process, one core:

1. **SIMO synthetic site** (the package's default: 3 clusters, 4 Laplacian sub-paths each, 2° angle
   spread; a 32-antenna ULA observed through 16 randomly selected antennas, ``A`` fixed). Training
   observations with per-sample SNR U[5, 20] dB; test sets at every SNR in −10 … 30 dB. Estimators:
   ``CSGMM`` / ``CSVAE`` trained on the compressed noisy ``y`` only; ``CSGMM (clean)`` the same CSGMM
   trained on clean channels (``A = I``, ``ζ = 1e-3``: what compressed training costs); ``LS``
   (min-norm ``A⁺y``), ``OMP`` (scikit-learn, noise-level stopping), ``SBL`` (per-observation EM, 60
   iterations) need no training data; genie baselines that see clean channels: ``LMMSE (genie cov)``
   (sample covariance) and ``GMM (clean)`` (scikit-learn full-covariance GMM, conditional mean).
2. **OFDM synthetic site** (the paper's QuaDRiGa layout: 1 antenna, 24 subcarriers × 14 symbols,
   15 kHz, 48 of 336 resource elements as pilots; training SNR U[5, 20] dB, test 10 dB): plain and
   Kronecker CSGMM on a 32 × 16 delay–Doppler grid vs LS and OMP; the delay-spread distance of
   generated vs planted paths.
3. **quadriga-lib** IEEE TGac indoor model D channels (32-antenna ULA at 5.25 GHz, per-channel
   ``‖h‖² = N``), when ``quadriga-lib`` imports; the same pilots; CSGMM on compressed and on clean data
   vs LS, OMP and the genie LMMSE at 0 / 10 / 20 dB.

4. **Sionna** 3GPP TR 38.901 channels (``scigen.wireless.data.sionna``; when ``sionna-no-rt`` imports):
   CDL-C, UMa and UMi uplink SIMO channels at 3.5 GHz (32-antenna ULA, 16 selected antennas,
   ``‖h‖² = N``); CSGMM trained on compressed noisy observations (SNR U[5, 20] dB) vs LS, LMMSE with
   the training channels' sample covariance (a genie: it sees clean channels), OMP and SBL, NMSE at
   −10 … 30 dB. ``--parts sionna`` runs it alone (``sbgm_sionna[_quick].md``).

Spread distances: the 1-Wasserstein distance between the distributions of per-channel RMS spreads of
generated and true channels, which is the area between their CDFs (``∫|F_gen − F_true|``); also the
Kolmogorov–Smirnov distance ``max|F_gen − F_true|`` and CDF quantiles in the JSON. Times: training
seconds and estimation seconds per 1000 observations (wall clock on a shared machine: compare ratios).
Writes ``sbgm.json`` and ``sbgm.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from scigen.core.files import atomic_write_text
from scigen.wireless import SBGM, SBGMConfig, generate_channels, make_site, observe, pilot_matrix
from scigen.wireless.baselines import CleanGMM, lmmse_estimate, ls_estimate, omp_estimate, sbl_estimate
from scigen.wireless.channels import as_observations, channel_matrix
from scigen.wireless.data.sionna import sionna_available, sionna_channels
from scigen.wireless.metrics import nmse_db, rms_spread, spread_distances
from scigen.wireless.quadriga import ieee_indoor_channels, quadriga_available


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _spreads(gen, ref, var, scale):
    """W1 (area between CDFs), KS and deciles of the per-channel RMS spreads of ``gen`` vs ``ref``."""
    a = rms_spread(gen[var].values, gen["path_power"].values) * scale
    b = rms_spread(ref[var].values, ref["path_power"].values) * scale
    grid = np.sort(np.concatenate([a, b]))
    ks = float(np.max(np.abs(np.searchsorted(np.sort(a), grid, "right") / len(a)
                             - np.searchsorted(np.sort(b), grid, "right") / len(b))))
    q = np.linspace(0.1, 0.9, 9)
    key = "angle_spread_W1_deg" if var == "path_angle" else "delay_spread_W1_ns"
    return {"W1": spread_distances(gen, ref)[key], "KS": ks, "deciles_generated": np.quantile(a, q).tolist(),
            "deciles_true": np.quantile(b, q).tolist()}


def _nmse_table(est, tests):
    nmse, secs = {k: {} for k in est}, dict.fromkeys(est, 0.0)
    for s, t in tests.items():
        h = channel_matrix(t["h"])
        for k, f in est.items():
            e, sec = _timed(lambda f=f, t=t: f(t))
            nmse[k][s] = nmse_db(e, h)
            secs[k] += sec
    n = sum(len(t.sample) for t in tests.values())
    return nmse, {k: v / n * 1000 for k, v in secs.items()}


def _baselines(D, cov=None):
    out = {"LS": lambda t: ls_estimate(t["y"].values, t["A"].values),
           "OMP": lambda t: omp_estimate(t["y"].values, t["noise_var"].values, t["A"].values, D)}
    if cov is not None:
        out["LMMSE (genie cov)"] = lambda t: lmmse_estimate(t["y"].values, t["noise_var"].values, t["A"].values, cov)
    return out


def simo(p, record):
    snrs = [-10.0, -5.0, 0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    train = SBGM.default_data(seed=0).isel(sample=slice(p["n_train"]))
    tests = {s: SBGM.default_data(quick=True, seed=100 + i, snr_db=s).isel(sample=slice(p["n_test"]))
             for i, s in enumerate(snrs)}
    models, train_s = {}, {}
    models["CSGMM"], train_s["CSGMM"] = _timed(lambda: SBGM(SBGMConfig.preset("small")).fit(train, max_steps=p["em"]))
    models["CSGMM (clean)"], train_s["CSGMM (clean)"] = _timed(
        lambda: SBGM(SBGMConfig.preset("small")).fit(train[["h"]], max_steps=p["em"]))
    models["CSVAE"], train_s["CSVAE"] = _timed(lambda: SBGM(SBGMConfig.preset("small", model="csvae")).fit(
        train, max_steps=p["vae"], progress=False, logger=None))
    H = channel_matrix(train["h"])
    gmm, train_s["GMM (clean)"] = _timed(lambda: CleanGMM(8).fit(H))
    D = models["CSGMM"].dictionary().matrix.numpy()
    est = {**{k: (lambda t, m=m: m.estimate(t).values.reshape(len(t.sample), -1)) for k, m in models.items()},
           **_baselines(D, H.T @ H.conj() / len(H)),
           "SBL": lambda t: sbl_estimate(t["y"].values, t["noise_var"].values, t["A"].values, D),
           "GMM (clean)": lambda t: gmm.estimate(*as_observations(t))}
    nmse, est_s = _nmse_table(est, tests)
    ref = SBGM.default_data(seed=999).isel(sample=slice(1000))
    spread = {k: _spreads(m.sample(n_samples=1000, seed=0), ref, "path_angle", 180 / np.pi) for k, m in models.items()}
    spread["CSGMM (all atoms, no path cap)"] = _spreads(models["CSGMM"].sample(n_samples=1000, seed=0, max_paths=None),
                                                       ref, "path_angle", 180 / np.pi)
    record["simo"] = {"snr_db": snrs, "nmse_db": nmse, "train_seconds": train_s, "estimate_seconds_per_1000": est_s,
                      "angle_spread": spread, "n_train": p["n_train"], "n_test_per_snr": p["n_test"],
                      "em_steps": p["em"], "csvae_steps": p["vae"]}


def ofdm(p, record):
    site = make_site(2, seed=1)
    A = pilot_matrix(24 * 14, 48, "selection", seed=2)
    grid = dict(n_antennas=1, n_subcarriers=24, n_symbols=14, site=site)
    train = observe(generate_channels(p["n_train_ofdm"], seed=0, **grid), A, (5.0, 20.0), seed=1)
    test = observe(generate_channels(p["n_test"], seed=5, **grid), A, 10.0, seed=6)
    ref = generate_channels(1000, seed=7, **grid)
    models, train_s = {}, {}
    for name, kron in (("CSGMM", False), ("CSGMM (Kronecker)", True)):
        cfg = SBGMConfig.preset("tiny", kronecker=kron, delay_grid=32, doppler_grid=16, n_components=6)
        models[name], train_s[name] = _timed(lambda cfg=cfg: SBGM(cfg).fit(train, max_steps=p["em_ofdm"]))
    D = models["CSGMM"].dictionary().matrix.numpy()
    est = {**{k: (lambda t, m=m: m.estimate(t).values.reshape(len(t.sample), -1)) for k, m in models.items()},
           **_baselines(D)}
    nmse, est_s = _nmse_table(est, {10.0: test})
    spread = {k: _spreads(m.sample(n_samples=1000, seed=0), ref, "path_delay", 1e9) for k, m in models.items()}
    record["ofdm"] = {"nmse_db_10": {k: v[10.0] for k, v in nmse.items()}, "train_seconds": train_s,
                      "estimate_seconds_per_1000": est_s, "delay_spread": spread, "em_steps": p["em_ofdm"],
                      "n_train": p["n_train_ofdm"]}


def quadriga(p, record):
    if not quadriga_available():
        record["quadriga"] = {"skipped": "quadriga-lib does not import"}
        return
    snrs = [0.0, 10.0, 20.0]
    A = pilot_matrix(32, 16, "selection", seed=3)
    (h_tr, h_te), gen_s = _timed(lambda: (ieee_indoor_channels(p["n_train_q"], seed=0),
                                          ieee_indoor_channels(p["n_test"] * len(snrs), seed=1)))
    train = observe(h_tr, A, (5.0, 20.0), seed=1)
    tests = {s: observe(h_te.isel(sample=slice(i * p["n_test"], (i + 1) * p["n_test"])), A, s, seed=10 + i)
             for i, s in enumerate(snrs)}
    models, train_s = {}, {}
    models["CSGMM"], train_s["CSGMM"] = _timed(lambda: SBGM(SBGMConfig.preset("small")).fit(train, max_steps=p["em"]))
    models["CSGMM (clean)"], train_s["CSGMM (clean)"] = _timed(
        lambda: SBGM(SBGMConfig.preset("small")).fit(train[["h"]], max_steps=p["em"]))
    H = channel_matrix(train["h"])
    D = models["CSGMM"].dictionary().matrix.numpy()
    est = {**{k: (lambda t, m=m: m.estimate(t).values.reshape(len(t.sample), -1)) for k, m in models.items()},
           **_baselines(D, H.T @ H.conj() / len(H))}
    nmse, est_s = _nmse_table(est, tests)
    record["quadriga"] = {"source": h_tr.attrs["source"], "snr_db": snrs, "nmse_db": nmse, "train_seconds": train_s,
                          "estimate_seconds_per_1000": est_s, "generate_seconds": gen_s, "n_train": p["n_train_q"]}


def sionna(p, record):
    if not sionna_available():
        record["sionna"] = {"skipped": "sionna-no-rt does not import (pip install 'scigen-wireless[sionna]')"}
        return
    snrs = [-10.0, 0.0, 10.0, 20.0, 30.0]
    A = pilot_matrix(32, 16, "selection", seed=3)
    out = {}
    for k, model in enumerate(("CDL-C", "UMa", "UMi")):
        (h_tr, h_te), gen_s = _timed(lambda model=model, k=k: (
            sionna_channels(p["n_train_s"], model=model, seed=10 * k),
            sionna_channels(p["n_test"] * len(snrs), model=model, seed=10 * k + 1)))
        train = observe(h_tr, A, (5.0, 20.0), seed=1)
        tests = {s: observe(h_te.isel(sample=slice(i * p["n_test"], (i + 1) * p["n_test"])), A, s, seed=20 + i)
                 for i, s in enumerate(snrs)}
        model_, train_s = _timed(lambda train=train: SBGM(SBGMConfig.preset("small")).fit(train, max_steps=p["em"]))
        H = channel_matrix(train["h"])
        D = model_.dictionary().matrix.numpy()
        est = {"CSGMM": lambda t, m=model_: m.estimate(t).values.reshape(len(t.sample), -1),
               **_baselines(D, H.T @ H.conj() / len(H)),
               "SBL": lambda t, D=D: sbl_estimate(t["y"].values, t["noise_var"].values, t["A"].values, D)}
        nmse, est_s = _nmse_table(est, tests)
        out[model] = {"source": h_tr.attrs["source"], "nmse_db": nmse, "train_seconds": {"CSGMM": train_s},
                      "estimate_seconds_per_1000": est_s, "generate_seconds": gen_s}
        print(f"sionna {model} done", flush=True)
    record["sionna"] = {"snr_db": snrs, "models": out, "n_train": p["n_train_s"], "n_test_per_snr": p["n_test"],
                        "em_steps": p["em"]}


def render_sionna(record) -> list[str]:
    s = record.get("sionna")
    if s is None:
        return []
    if "skipped" in s:
        return ["", f"Sionna: skipped ({s['skipped']})."]
    snrs = s["snr_db"]
    rows = ["", f"Sionna 3GPP TR 38.901 channels (uplink SIMO, 32-antenna ULA at 3.5 GHz, 16 selected; {s['n_train']} "
            f"training observations at SNR U[5, 20] dB, {s['n_test_per_snr']} test observations per SNR, "
            f"{s['em_steps']} EM iterations; LMMSE uses the training channels' sample covariance):"]
    for model, r in s["models"].items():
        rows += ["", f"{model} (channel generation {r['generate_seconds']:.0f} s):", "",
                 "| estimator | " + " | ".join(f"{x:g} dB" for x in snrs) + " | train s | estimate s / 1000 |",
                 "|---" * (len(snrs) + 3) + "|"]
        for k, v in r["nmse_db"].items():
            rows.append(f"| {k} | " + " | ".join(f"{v[x]:.2f}" for x in snrs) +
                        f" | {r['train_seconds'].get(k, 0.0):.1f} | {r['estimate_seconds_per_1000'][k]:.2f} |")
    return rows


def render(record) -> str:
    if "simo" not in record:  # --parts without the SIMO part
        return (f"# SBGM benchmark on Sionna channels ({'quick' if record['quick'] else 'full'})\n\n"
                f"Total wall time {record['wall_seconds']:.0f} s, one thread. NMSE (dB) of channel estimates vs SNR "
                "(`train s` = training wall time, `estimate s / 1000` = estimation wall time per 1000 observations; "
                "shared, loaded machine: compare ratios).\n" + "\n".join(render_sionna(record)) + "\n")
    r = record["simo"]
    snrs = r["snr_db"]
    head = "| estimator | " + " | ".join(f"{s:g} dB" for s in snrs) + " | train s | estimate s / 1000 |"
    rows = [head, "|---" * (len(snrs) + 3) + "|"]
    for k, v in r["nmse_db"].items():
        rows.append(f"| {k} | " + " | ".join(f"{v[s]:.2f}" for s in snrs) +
                    f" | {r['train_seconds'].get(k, 0.0):.1f} | {r['estimate_seconds_per_1000'][k]:.2f} |")
    rows += ["", "Angle spreads of 1000 generated channels vs 1000 true ones (per-channel RMS, degrees):", "",
             "| generator | W1 = area between CDFs (deg) | KS | median generated / true (deg) |", "|---|---|---|---|"]
    rows += [f"| {k} | {v['W1']:.3f} | {v['KS']:.3f} | {v['deciles_generated'][4]:.2f} / {v['deciles_true'][4]:.2f} |"
             for k, v in r["angle_spread"].items()]
    o = record["ofdm"]
    rows += ["", f"OFDM (24 subcarriers × 14 symbols, 48 pilots, 10 dB; {o['n_train']} training observations, "
             f"{o['em_steps']} EM iterations):", "",
             "| estimator | NMSE dB | train s | estimate s / 1000 | delay-spread W1 (ns) | KS |", "|---|---|---|---|---|---|"]
    for k, v in o["nmse_db_10"].items():
        sp = o["delay_spread"].get(k)
        rows.append(f"| {k} | {v:.2f} | {o['train_seconds'].get(k, 0.0):.1f} | {o['estimate_seconds_per_1000'][k]:.2f} | "
                    + (f"{sp['W1']:.1f} | {sp['KS']:.3f} |" if sp else "— | — |"))
    q = record["quadriga"]
    if "skipped" in q:
        rows += ["", f"quadriga-lib: skipped ({q['skipped']})."]
    else:
        rows += ["", f"{q['source']} (32-antenna ULA, 16 selected; {q['n_train']} training users; channel generation "
                 f"{q['generate_seconds']:.0f} s):", "",
                 "| estimator | " + " | ".join(f"{s:g} dB" for s in q["snr_db"]) + " | train s | estimate s / 1000 |",
                 "|---" * (len(q["snr_db"]) + 3) + "|"]
        for k, v in q["nmse_db"].items():
            rows.append(f"| {k} | " + " | ".join(f"{v[s]:.2f}" for s in q["snr_db"]) +
                        f" | {q['train_seconds'].get(k, 0.0):.1f} | {q['estimate_seconds_per_1000'][k]:.2f} |")
    rows += render_sionna(record)
    return (f"# SBGM benchmark ({'quick' if record['quick'] else 'full'})\n\n"
            f"Total wall time {record['wall_seconds']:.0f} s, one thread. NMSE (dB) of channel estimates vs SNR; SIMO: "
            f"{r['n_train']} training observations (SNR U[5, 20] dB), {r['n_test_per_snr']} test observations per SNR; "
            f"32-antenna ULA, 16 selected antennas; {r['em_steps']} EM iterations, {r['csvae_steps']} CSVAE steps. "
            "`train s` = training wall time, `estimate s / 1000` = estimation wall time per 1000 observations "
            "(shared, loaded machine: compare ratios).\n\n" + "\n".join(rows) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--parts", default="simo,ofdm,quadriga,sionna",
                    help="comma-separated parts: simo, ofdm, quadriga, sionna (without simo: sbgm_sionna[_quick].*)")
    args = ap.parse_args()
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    if bad := sorted(set(parts) - {"simo", "ofdm", "quadriga", "sionna"}):
        ap.error(f"--parts: unknown {bad}; choose from simo, ofdm, quadriga, sionna")
    if "simo" not in parts and parts != ["sionna"]:
        ap.error("--parts: the ofdm and quadriga tables are written with the simo part; alone, only sionna runs")
    p = (dict(n_train=400, n_test=40, em=20, vae=100, n_train_ofdm=300, em_ofdm=10, n_train_q=300, n_train_s=400)
         if args.quick else
         dict(n_train=2000, n_test=150, em=80, vae=800, n_train_ofdm=1000, em_ofdm=50, n_train_q=1000, n_train_s=1000))
    t0 = time.perf_counter()
    record = {"quick": args.quick, "machine": platform.platform(), "python": platform.python_version()}
    for part in (f for f in (simo, ofdm, quadriga, sionna) if f.__name__ in parts):
        part(p, record)
        print(f"{part.__name__} done at {time.perf_counter() - t0:.0f} s", flush=True)
    record["wall_seconds"] = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = ("sbgm" if "simo" in parts else "sbgm_sionna") + ("_quick" if args.quick else "")
    atomic_write_text(out / f"{name}.json", json.dumps(record, indent=2, default=float) + "\n")
    text = render(record)
    atomic_write_text(out / f"{name}.md", text)
    print(text)


if __name__ == "__main__":
    main()
