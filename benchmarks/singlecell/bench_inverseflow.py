"""Inverse Flow benchmark: ICM vs IFM vs Noise2Self (and k-NN smoothing for cells), in one run.

Zhang & Zhou, *Inverse Flow*, ICML 2025 (denoising from noisy data alone with a known noise model);
baselines: Noise2Self (Batson & Royer 2019, J-invariant masking; the paper's main baseline) and, for
cells, k-NN smoothing (Wagner et al. 2018; MAGIC is not installable here).

* ``toy``: the official notebook's 8 points on the unit circle + Gaussian σ = 0.2 (t_max 0.2, σ_d 0.7).
* ``images``: scikit-image's bundled ``camera`` and ``coins`` (centre crops) × Gaussian (σ = 25/255),
  correlated Gaussian (σ = 0.1, span 2), Poisson (k = 0.01, clip 1) and Gamma (σ = 0.2) noise; one model
  per image and noise (single-image self-supervised denoising), trained on random crops.
* ``pbmc``: scanpy's bundled pbmc68k_reduced log-normalised matrix (700 × 765) + Gaussian σ = 0.5.
* Metrics against the hidden clean data: PSNR / SSIM (images: scikit-image's standard definitions, peak 1,
  the estimate clipped to [0, 1]; :mod:`scigen.singlecell.inverseflow.metrics`; toy PSNR is the official
  code's per-point mean), MSE (cells, toy); train and denoise wall time (seconds, this process, one thread).

Every method gets the same steps budget per row (IFM fewer: each of its steps runs an Euler inversion).
CPU-sized defaults; ``--quick`` is a smoke test. Writes ``<out>/inverseflow.json`` and ``.md``::

    OMP_NUM_THREADS=1 python benchmarks/singlecell/bench_inverseflow.py --parts toy images pbmc
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _vec_scores(est, clean):
    """The package's scores (as ``InverseFlow.evaluate``), for every method of the table."""
    from scigen.singlecell.inverseflow.metrics import vector_scores

    return {k: v for k, v in vector_scores(np.asarray(est, np.float64), clean).items() if k != "corr"}


def _img_scores(est, clean):
    """The package's scores of images ``[N, H, W]`` (as ``InverseFlow.evaluate``), for every method."""
    from scigen.singlecell.inverseflow.metrics import image_scores

    return image_scores(np.asarray(est, np.float64)[:, None], np.asarray(clean, np.float64)[:, None])


def _inverse_flow(noisy, noise, algo, steps, overrides):
    from scigen.singlecell.inverseflow import InverseFlow

    cfg = InverseFlow.Config.preset("tiny", algorithm=algo, **overrides)
    m = InverseFlow(cfg, noise=noise)
    _, t_train = _timed(lambda: m.fit(noisy, max_steps=steps, progress=False, logger=None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, t_den = _timed(lambda: m.denoise(noisy.copy() if hasattr(noisy, "layers") else noisy))
    est = out.layers["inverse_flow"] if hasattr(out, "layers") else out
    return est, t_train, t_den, bool(m.metadata["collapse"]["collapsed"])


def _vector_rows(rows, ad, noise, base, steps, over, n2s):
    """Noisy input, ICM (``steps``), IFM (``steps // 2``), Noise2Self (``steps``) and k-NN smoothing on cells/points."""
    from scigen.singlecell.inverseflow.baselines import knn_smooth, noise2self

    clean, noisy = np.asarray(ad.layers["clean"], np.float64), np.asarray(ad.X, np.float64)
    rows.append({**base, "method": "noisy input", **_vec_scores(noisy, clean), "train_s": 0.0, "denoise_s": 0.0})
    for algo, n in (("icm", steps), ("ifm", steps // 2)):
        est, tt, td, col = _inverse_flow(ad, noise, algo, n, over)
        rows.append({**base, "method": algo.upper(), "steps": n, **_vec_scores(est, clean), "train_s": tt,
                     "denoise_s": td, "collapsed": col})
    est, tt = _timed(lambda: noise2self(noisy, max_steps=steps, **n2s))
    rows.append({**base, "method": "Noise2Self", "steps": steps, **_vec_scores(est, clean), "train_s": tt,
                 "denoise_s": 0.0})
    est, td = _timed(lambda: knn_smooth(noisy, k=15))
    rows.append({**base, "method": "kNN smoothing (k=15)", **_vec_scores(est, clean), "train_s": 0.0, "denoise_s": td})


def run_toy(args, rows):
    from scigen.singlecell.inverseflow import Gaussian
    from scigen.singlecell.inverseflow.data import circle_toy

    _vector_rows(rows, circle_toy(125, sigma=0.2, seed=0), Gaussian(0.2), {"data": "toy", "noise": "gaussian 0.2"},
                 args.toy_steps, {"t_max": 0.2, "sigma_data": 0.7, "train": {"batch_size": 256, "lr": 3e-3}},
                 {"batch_size": 256, "lr": 3e-3, "mask_frac": 0.5})


def run_images(args, rows):
    from scigen.singlecell.inverseflow import CorrelatedGaussian, Gamma, Gaussian, Poisson
    from scigen.singlecell.inverseflow.baselines import noise2self
    from scigen.singlecell.inverseflow.data import noisy_images

    noises = {"gaussian 25/255": Gaussian(25 / 255), "correlated 0.1 span 2": CorrelatedGaussian(0.1, 2.0),
              "poisson k=0.01": Poisson(0.01, clip=1.0), "gamma 0.2": Gamma(0.2)}
    over = {"patch": 32, "n_patches": 1024, "base_channels": 16, "train": {"batch_size": 16, "lr": 1e-3}}
    for image in args.images:
        for label, noise in noises.items():
            noisy, clean = noisy_images([image], noise, size=args.size, seed=0)
            base = {"data": f"{image} {args.size}²", "noise": label}
            rows.append({**base, "method": "noisy input", **_img_scores(noisy, clean), "train_s": 0.0, "denoise_s": 0.0})
            for algo, steps in (("icm", args.image_steps), ("ifm", max(1, args.image_steps // 3))):
                est, tt, td, col = _inverse_flow(noisy, noise, algo, steps, over)
                rows.append({**base, "method": algo.upper(), "steps": steps, **_img_scores(est, clean), "train_s": tt,
                             "denoise_s": td, "collapsed": col})
            est, tt = _timed(lambda noisy=noisy: noise2self(noisy, max_steps=args.image_steps, batch_size=16, patch=32,
                                                n_patches=1024, base_channels=16))
            rows.append({**base, "method": "Noise2Self", "steps": args.image_steps, **_img_scores(est, clean),
                         "train_s": tt, "denoise_s": 0.0})
            print(f"  {image} {label} done", flush=True)
            if args.save is not None:
                args.save(rows)  # a partial table survives an interrupted run


def run_pbmc(args, rows):
    from scigen.singlecell.inverseflow import Gaussian
    from scigen.singlecell.inverseflow.data import noisy_pbmc68k

    _vector_rows(rows, noisy_pbmc68k(Gaussian(0.5), seed=0), Gaussian(0.5),
                 {"data": "pbmc68k_reduced 700x765", "noise": "gaussian 0.5"}, args.pbmc_steps,
                 {"t_max": 0.2, "sigma_data": 0.5, "width": 256, "train": {"batch_size": 128, "lr": 1e-3}},
                 {"batch_size": 128})


def to_markdown(rows, meta) -> str:
    lines = [f"# Inverse Flow benchmark ({meta['date']})", "", f"Command: `{meta['command']}`; torch threads "
             f"{meta['threads']}; {meta['machine']}.", "",
             "| data | noise | method | steps | PSNR (dB) | SSIM | MSE | train s | denoise s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = lambda k, fmt, r=r: (fmt.format(r[k]) if k in r else "")  # noqa: E731
        lines.append(f"| {r['data']} | {r['noise']} | {r['method']}{' (collapsed)' if r.get('collapsed') else ''} | "
                     f"{r.get('steps', '')} | {f('PSNR', '{:.2f}')} | {f('SSIM', '{:.3f}')} | {f('MSE', '{:.4f}')} | "
                     f"{r['train_s']:.1f} | {r['denoise_s']:.2f} |")
    lines += ["", "Budget: every method of a row group gets the steps shown (IFM fewer: each of its steps runs a "
              "10-step Euler inversion); CPU-sized, far below the paper's (toy: 3200 steps of batch 1000; images: "
              "2000 epochs of 256² crops on GPUs), so absolute figures are not the paper's. Noise2Self on the toy "
              "hides one of the two coordinates and predicts it from the other: with 2 features it has no "
              "redundancy to exploit. k-NN smoothing averages each cell with its k nearest neighbours in the "
              "PCA of the noisy data (Wagner et al. 2018; scikit-learn neighbours; MAGIC is not installed)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", nargs="+", default=["toy", "images", "pbmc"], choices=["toy", "images", "pbmc"])
    p.add_argument("--images", nargs="+", default=["camera", "coins"])
    p.add_argument("--size", type=int, default=96)
    p.add_argument("--toy-steps", type=int, default=1500)
    p.add_argument("--image-steps", type=int, default=300)
    p.add_argument("--pbmc-steps", type=int, default=600)
    p.add_argument("--quick", action="store_true", help="smoke test: 20 steps everywhere, 64² images")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    p.add_argument("--name", default="inverseflow")
    args = p.parse_args(argv)
    if args.quick:
        args.toy_steps = args.image_steps = args.pbmc_steps = 20
        args.size = 64
    torch.set_num_threads(1)
    meta = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(["benchmarks/singlecell/bench_inverseflow.py",
            *(argv if argv is not None else sys.argv[1:])]), "threads": torch.get_num_threads(),
            "machine": f"{platform.machine()} CPU, shared and loaded (timings are indicative)"}
    args.out.mkdir(parents=True, exist_ok=True)
    from scigen.core.files import atomic_write_text

    def save(rows):
        atomic_write_text(args.out / f"{args.name}.json", json.dumps({"meta": meta, "rows": rows}, indent=1))
        atomic_write_text(args.out / f"{args.name}.md", to_markdown(rows, meta))

    args.save = save
    rows: list[dict] = []
    for part in args.parts:
        print(f"[{part}]", flush=True)
        {"toy": run_toy, "images": run_images, "pbmc": run_pbmc}[part](args, rows)
        save(rows)
    print(to_markdown(rows, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
