"""NsDiff's default sampler (``sigma_source="denoiser"``: the ancestral chain with sigma_Y0 recovered from the
denoiser at every step) with its inputs validated once per call, against the baseline in the same run:
the same chain with the path's input checks at every step (the code before issue 36.3).

Median CPU seconds of one chain over 40 windows x ``n`` draws (one thread), alternating the two versions
``--repeats`` times, for the ``tiny`` preset (T = 50, 20 respaced steps) and the default config (T = 100,
all 100 ancestral steps), weights after 4 training steps (the cost does not depend on them)::

    OMP_NUM_THREADS=1 python benchmarks/timeseries/nsdiff_chain.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from scigen.timeseries import NsDiff
from scigen.timeseries.data import synthetic_nonstationary
from scigen.timeseries.nsdiff.sampling import _denoiser_sigma_chain


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(1)
    df = synthetic_nonstationary(800, 3, seed=0)
    print("| config | steps | chains | validated once (s) | every step (baseline, s) | once / baseline |")
    print("|---|---|---|---|---|---|")
    for name, cfg in (("tiny", NsDiff.Config.preset("tiny")), ("default", NsDiff.Config())):
        m = NsDiff(cfg, train={"progress": False}).fit(df, max_steps=4)
        X, _ = m.evaluation_windows(df, max_windows=40)
        n = m.config.n_samples
        with torch.no_grad():
            f, g = m.network.mean_var(X)
        f, g = f.repeat(n, 1, 1), g.repeat(n, 1, 1)
        err = m.network.eps_error.detach().double()
        steps = m.config.steps
        times = {True: [], False: []}
        for _ in range(args.repeats):
            for every in (False, True):
                gen = torch.Generator().manual_seed(0)
                t0 = time.process_time()
                with torch.no_grad():
                    _denoiser_sigma_chain(m.network, m.path, f, g, err, gen, None, steps, check_every_step=every)
                times[every].append(time.process_time() - t0)
        once, base = statistics.median(times[False]), statistics.median(times[True])
        print(f"| {name} | {steps or 'all'} | {f.shape[0]} | {once:.3f} | {base:.3f} | {once / base:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
