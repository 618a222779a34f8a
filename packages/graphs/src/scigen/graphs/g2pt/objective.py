"""G2PT's training objective and optimiser, as :meth:`G2PT.fit` hands them to the engine.

* The loss is G2PT's next-token cross-entropy over non-pad targets (G2PT eq. 1,
  :func:`scigen.graphs.g2pt.model.next_token_loss`): the likelihood of an autoregressive token
  model. It is not one of the engine's diffusion / flow losses (``scigen.core.losses`` regress a
  path's target at a time ``t`` from a noised input; a decoder over discrete tokens has neither
  time nor noise), so it stays in the domain. The training loop is the engine's:
  ``System.train_network`` -> :func:`scigen.core.train.fit`.
* The optimiser is GPT-2's AdamW (Radford et al. 2019; G2PT Table 7: betas (0.9, 0.95), weight
  decay 0.1): decay on weight matrices and embeddings (``ndim >= 2``), none on LayerNorm gains.
  The engine's ``"adamw"`` decays every parameter with default betas, so the system passes this
  factory as ``optimizer=`` (a callable ``params -> Optimizer``).
* Warm-up: ``min(train.warmup_steps, max_steps // 10)`` steps, so a short fine-tuning run does
  not spend its whole budget warming up (the paper's 2000 steps are for 300k-step runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch


def gpt_adamw(lr: float, weight_decay: float, betas: tuple[float, float]) -> Callable[[Iterable], torch.optim.AdamW]:
    """A factory ``params -> AdamW`` with GPT-2's two parameter groups (see the module docstring)."""
    betas = (float(betas[0]), float(betas[1]))

    def make(params: Iterable[torch.nn.Parameter]) -> torch.optim.AdamW:
        params = [p for p in params if p.requires_grad]
        groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": float(weight_decay)},
                  {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=float(lr), betas=betas)

    return make


def warmup_steps(configured: int | None, max_steps: object) -> int | None:
    """The warm-up of a run of ``max_steps`` steps: at most a tenth of the run (``None``: the engine's)."""
    if configured is None or isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        return configured  # a bad max_steps is refused by the engine with its own message
    return min(int(configured), max_steps // 10)
