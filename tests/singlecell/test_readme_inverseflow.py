"""The singlecell README's Inverse Flow example runs as written and denoises: the MSE to the hidden clean
points (computed here from the layers, not by the model) falls well below the noisy input's."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

HEADING = "### Example (Inverse Flow)"


@pytest.mark.slow
def test_readme_inverseflow_example_runs_and_denoises(readme_example, tmp_path, monkeypatch):
    code = readme_example("singlecell", HEADING)
    assert "max_steps=300" in code and "model.denoise(adata)" in code
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "packages/singlecell/README.md", "exec"), scope)  # noqa: S102
    adata, model, scores = scope["adata"], scope["model"], scope["scores"]
    clean, noisy, den = (np.asarray(adata.layers[k], dtype=np.float64) for k in ("clean", "noisy", "inverse_flow"))
    mse_noisy, mse = ((noisy - clean) ** 2).mean(), ((den - clean) ** 2).mean()
    assert mse < 0.75 * mse_noisy, (mse, mse_noisy)  # ~0.023 vs 0.040 after 300 steps
    assert scores["MSE"] == pytest.approx(mse, rel=1e-5) and scores["collapsed"] == 0.0
    assert adata.uns["inverse_flow"]["source_layer"] == "noisy" and model.history.steps == 300


def _official_toy_smlp_parameters(width: int = 256, layers: int = 4, embed_dim: int = 256, d: int = 2) -> int:
    """Trainable parameters of the official toy network ``sMLP(d→d, channels=[width]*layers, embed_dim)``
    (level6626/InverseFlow model.py, as research/singlecell.md §3 describes it): per layer a Linear to the
    width plus a Linear(embed_dim → width) of the time embedding, a final Linear(width → d), and the time
    embedding's Linear(embed_dim → embed_dim) after fixed (untrained) Gaussian Fourier features."""
    from torch import nn

    mods = [nn.Linear(d, width), *[nn.Linear(width, width) for _ in range(layers - 1)],
            *[nn.Linear(embed_dim, width) for _ in range(layers)], nn.Linear(width, d),
            nn.Linear(embed_dim, embed_dim)]
    return sum(p.numel() for m in mods for p in m.parameters())


def test_readme_states_the_toy_networks_true_sizes():
    """The README's toy claim: our width 256 x 4 has 3.2x the official toy MLP's parameters, width 144 x 4
    matches it; the numbers it prints are the counted ones."""
    from pathlib import Path

    from scigen.singlecell.inverseflow import InverseFlow

    def ours(width):
        m = InverseFlow(width=width, depth=4).fit(np.zeros((8, 2), np.float32) + np.arange(8)[:, None] * 0.1,
                                                   kind="vectors", max_steps=1, progress=False, logger=None)
        return sum(p.numel() for p in m.network.parameters())

    official, big, matched = _official_toy_smlp_parameters(), ours(256), ours(144)
    assert official == 527_618 and big == 1_664_258 and matched == 532_946
    assert round(big / official, 1) == 3.2 and abs(matched / official - 1) < 0.02
    readme = (Path(__file__).parents[2] / "packages/singlecell/README.md").read_text()
    for n in (official, big, matched):
        assert f"{n:,}" in readme, n
    assert "official toy's setting (width 256" not in readme
