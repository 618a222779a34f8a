"""The denoiser of UniGEM / EDM: the EGNN plus UniGEM's atom-type and property heads.

Node input features (Feng et al. 2025, Sec. 4; EDM ``EGNN_dynamics_QM9``):

* UniGEM: a constant 1 and ``t`` (atom types are not diffused);
* EDM: the noisy type features ``[one-hot/4, Z/10]`` and ``t``.

Heads (UniGEM, on the last hidden state of the nucleation branch): atom types
``Linear-SiLU-Linear → [one-hot/4, Z/10]`` per atom; properties ``node_dec`` per atom, **summed over
the molecule's atoms only** (ragged sum: no padding, fixing the official ``DGAP_prop_pred``, which
sums padded rows), then ``graph_dec → P`` normalised values ``(y − mean)/MAD``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.kernels import segment_sum
from scigen.molecules.unigem.egnn import EGNN

__all__ = ["MoleculeDenoiser", "type_features"]


def type_features(types: Tensor, vocab: tuple[int, ...]) -> Tensor:
    """EDM's normalised type features ``[one-hot(types)/4, Z/10]`` ``[N, K+1]``."""
    onehot = torch.nn.functional.one_hot(types, len(vocab)).float() / 4.0
    z = torch.as_tensor(vocab, dtype=torch.float32, device=types.device)[types] / 10.0
    return torch.cat([onehot, z[:, None]], dim=-1)


class MoleculeDenoiser(nn.Module):
    """``forward(x, h_noisy, ptr, t, low)`` -> dict with ``eps_x [N,3]``, ``eps_h`` (EDM),
    ``types [N,K+1]`` and ``props [B,P]`` (UniGEM heads; computed for every molecule, meaningful for
    ``t ≤ t_n``)."""

    def __init__(self, mode: str, n_types: int, n_props: int, hidden: int, n_layers: int):
        super().__init__()
        self.mode, self.n_types, self.n_props = mode, n_types, n_props
        feat = n_types + 1
        if mode == "edm":
            self.egnn = EGNN(feat + 1, feat, hidden, n_layers, branch=False)
        else:
            self.egnn = EGNN(2, 1, hidden, n_layers, branch=True)
            self.type_head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, feat))
            if n_props:
                self.node_dec = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
                self.graph_dec = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, n_props))

    def forward(self, x: Tensor, ptr: Tensor, t: Tensor, low: Tensor, h: Tensor | None = None) -> dict[str, Tensor]:
        counts = ptr[1:] - ptr[:-1]
        t_node = torch.repeat_interleave(t.to(x.dtype), counts)[:, None]
        if self.mode == "edm":
            dx, out, _ = self.egnn(torch.cat([h, t_node], -1), x, ptr)
            return {"eps_x": dx, "eps_h": out}
        dx, _, hid = self.egnn(torch.cat([torch.ones_like(t_node), t_node], -1), x, ptr, low=low)
        res = {"eps_x": dx, "types": self.type_head(hid)}
        if self.n_props:
            res["props"] = self.graph_dec(segment_sum(self.node_dec(hid), ptr))
        return res
