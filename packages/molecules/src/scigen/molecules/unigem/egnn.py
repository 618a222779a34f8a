"""E(3)-equivariant networks of EDM (Hoogeboom et al., ICML 2022, ``egnn_new.py``) and UniGEM's
multi-branch variant (Feng et al., ICLR 2025, Sec. 4.2), on ragged batches.

One :class:`EquivariantBlock` (Satorras et al., ICML 2021, eqs. 3-6 in EDM's form):

* edge MLP ``phi_e([h_i, h_j, d²_ij, d²ref_ij])`` (two Linear + SiLU), sigmoid attention gate,
  sum aggregation, node update ``h_i ← h_i + phi_h([h_i, m_i])``;
* coordinate update ``x_i ← x_i + Σ_j (x_i − x_j)/(d_ij + 1) · tanh(phi_x(...)) · 15`` (bounded);
  ``d²ref`` are the distances of the network's *input* coordinates, as EDM.

Both steps call :func:`scigen.kernels.egnn_aggregate` (fused, ragged, no edge tensors on GPU).

:class:`EGNN` is ``Linear(in → H)``, a shared block, then either one chain of blocks (EDM) or two
parallel chains (UniGEM): the *main* branch for molecules with ``t > t_n`` and the *nucleation*
branch for ``t ≤ t_n``; per molecule exactly one branch runs. Outputs: ``dx = x_out − x_in``
projected to zero centre of mass, the output features, and the last hidden state (for heads).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.kernels import egnn_aggregate
from scigen.molecules.data.batching import ptr_from_counts, remove_mean

__all__ = ["EquivariantBlock", "EGNN"]


def _mlp2(d_in: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())


class EquivariantBlock(nn.Module):
    """One EDM ``EquivariantBlock`` with one GCL sub-layer (see the module docstring)."""

    def __init__(self, hidden: int, coords_range: float = 15.0, norm_constant: float = 1.0,
                 normalization_factor: float = 1.0):
        super().__init__()
        self.hidden, self.coords_range = hidden, coords_range
        self.norm_constant, self.normalization_factor = norm_constant, normalization_factor
        self.edge_mlp = _mlp2(2 * hidden + 2, hidden)
        self.att = nn.Linear(hidden, 1)
        self.node_mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.coord_mlp = _mlp2(2 * hidden + 2, hidden)
        self.coord_out = nn.Linear(hidden, 1, bias=False)
        nn.init.xavier_uniform_(self.coord_out.weight, gain=0.001)

    def _split(self, mlp: nn.Sequential):
        w1, b1 = mlp[0].weight.T, mlp[0].bias  # [2H+2, H]
        h = self.hidden
        return w1[:h], w1[h:2 * h], b1, mlp[2].weight.T, mlp[2].bias, w1[2 * h:]

    def forward(self, h: Tensor, x: Tensor, x_ref: Tensor, ptr: Tensor) -> tuple[Tensor, Tensor]:
        kw = dict(x_ref=x_ref, norm_constant=self.norm_constant, normalization_factor=self.normalization_factor,
                  check_indices=False)
        wa, wb, b1, w2, b2, wd = self._split(self.edge_mlp)
        m, _ = egnn_aggregate(h, x, ptr, wa, wb, b1, w2, b2, wd, w_att=self.att.weight[0], b_att=self.att.bias[0], **kw)
        h = h + self.node_mlp(torch.cat([h, m], dim=-1))
        wa, wb, b1, w2, b2, wd = self._split(self.coord_mlp)
        _, dx = egnn_aggregate(h, x, ptr, wa, wb, b1, w2, b2, wd, w_x=self.coord_out.weight[0],
                               coords_range=self.coords_range, **kw)
        return h, x + dx


class EGNN(nn.Module):
    """EDM's EGNN (``branch=False``) or UniGEM's multi-branch EGNN (``branch=True``).

    Args:
        in_nf: input node features (time included). out_nf: output node features.
        hidden: width. n_layers: blocks on the path of one molecule (1 shared + ``n_layers − 1``).
    """

    def __init__(self, in_nf: int, out_nf: int, hidden: int = 256, n_layers: int = 9, branch: bool = False):
        super().__init__()
        if n_layers < 1 or (branch and n_layers < 2):
            raise ValueError(f"n_layers must be >= {2 if branch else 1}, got {n_layers}")
        self.branch = branch
        self.embed = nn.Linear(in_nf, hidden)
        self.shared = EquivariantBlock(hidden)
        self.main = nn.ModuleList(EquivariantBlock(hidden) for _ in range(n_layers - 1))
        self.out = nn.Linear(hidden, out_nf)
        if branch:
            self.nucleation = nn.ModuleList(EquivariantBlock(hidden) for _ in range(n_layers - 1))
            self.out2 = nn.Linear(hidden, out_nf)

    def forward(self, h: Tensor, x: Tensor, ptr: Tensor, low: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """``h [N, in_nf]``, ``x [N, 3]``, ``ptr [B+1]``; ``low [B]`` bool: molecules with t ≤ t_n (branch
        mode). Returns ``(dx [N, 3] zero-CoM, h_out [N, out_nf], hidden [N, H])``."""
        x_in = x
        hid = self.embed(h)
        hid, x = self.shared(hid, x, x_in, ptr)
        if not self.branch:
            for blk in self.main:
                hid, x = blk(hid, x, x_in, ptr)
            out = self.out(hid)
        else:
            if low is None:
                raise ValueError("low: the branch EGNN needs the per-molecule flag t <= t_n")
            counts = ptr[1:] - ptr[:-1]
            node_low = torch.repeat_interleave(low, counts)
            hid_new, x_new = hid.clone(), x.clone()
            out = hid.new_zeros(hid.shape[0], self.out.out_features)
            for flag, blocks, head in ((False, self.main, self.out), (True, self.nucleation, self.out2)):
                sel_mol = low == flag
                if not bool(sel_mol.any()):
                    continue
                sel = node_low == flag
                p = ptr_from_counts(counts[sel_mol]).to(ptr.device)
                hh, xx, xr = hid[sel], x[sel], x_in[sel]
                for blk in blocks:
                    hh, xx = blk(hh, xx, xr, p)
                hid_new[sel], x_new[sel] = hh, xx
                out[sel] = head(hh)
            hid, x = hid_new, x_new
        return remove_mean(x - x_in, ptr), out, hid
