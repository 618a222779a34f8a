"""egnn_aggregate: reference vs a dense padded EDM-style implementation, E(3) and permutation
equivariance, gradients, validation."""

import pytest
import torch

from scigen.kernels.egnn import egnn_aggregate

SIZES = [3, 1, 0, 6, 4]  # includes a single-atom and an empty molecule


def _problem(sizes=SIZES, f=5, hid=12, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)

    def r(*s, scale=1.0):
        return torch.randn(*s, generator=g, dtype=dtype) * scale

    n = sum(sizes)
    ptr = torch.tensor([0, *torch.tensor(sizes).cumsum(0).tolist()])
    data = dict(h=r(n, f), x=r(n, 3), ptr=ptr)
    w = dict(
        W_a=r(f, hid, scale=0.4), W_b=r(f, hid, scale=0.4), b1=r(hid, scale=0.1), W2=r(hid, hid, scale=0.3),
        b2=r(hid, scale=0.1), w_d=r(2, hid, scale=0.2),
    )
    extra = dict(x_ref=r(n, 3), w_att=r(hid, scale=0.3), b_att=r(1), w_x=r(hid, scale=0.3))
    return data, w, extra


def _dense(h, x, x_ref, ptr, W_a, W_b, b1, W2, b2, w_d, w_att, b_att, w_x, crange, c, z):
    """EDM-style padded batch: edge MLP on cat[h_i, h_j, d², d²ref] with the unsplit first layer."""
    sizes = ptr.diff().tolist()
    g, nmax, f = len(sizes), max(sizes), h.shape[1]
    hp = h.new_zeros(g, nmax, f)
    xp, rp = h.new_zeros(g, nmax, 3), h.new_zeros(g, nmax, 3)
    node = torch.zeros(g, nmax, dtype=torch.bool)
    for k, (s, n) in enumerate(zip(ptr[:-1].tolist(), sizes, strict=True)):
        hp[k, :n], xp[k, :n], rp[k, :n], node[k, :n] = h[s : s + n], x[s : s + n], x_ref[s : s + n], True
    edge = node[:, :, None] & node[:, None, :] & ~torch.eye(nmax, dtype=torch.bool)
    diff = xp[:, :, None, :] - xp[:, None, :, :]
    d2 = (diff**2).sum(-1, keepdim=True)
    d2r = ((rp[:, :, None, :] - rp[:, None, :, :]) ** 2).sum(-1, keepdim=True)
    hi = hp[:, :, None, :].expand(g, nmax, nmax, f)
    hj = hp[:, None, :, :].expand(g, nmax, nmax, f)
    inp = torch.cat([hi, hj, d2, d2r][: 4 if w_d.shape[0] == 2 else 3], -1)
    W1 = torch.cat([W_a, W_b, w_d], 0)
    phi = torch.nn.functional.silu(torch.nn.functional.silu(inp @ W1 + b1) @ W2 + b2)
    gate = torch.sigmoid(phi @ w_att + b_att) if w_att is not None else torch.ones_like(phi[..., 0])
    emask = edge[..., None].to(h.dtype)
    m = ((phi * gate[..., None]) * emask).sum(2) / z
    dx = (diff / (torch.sqrt(d2 + 1e-8) + c) * torch.tanh(phi @ w_x)[..., None] * crange * emask).sum(2) / z
    return m[node], dx[node]


@pytest.mark.parametrize("gate", [True, False])
@pytest.mark.parametrize("rows", [1, 2])
def test_reference_matches_dense_padded(gate, rows):
    data, w, extra = _problem()
    w["w_d"] = w["w_d"][:rows]
    x_ref = extra["x_ref"] if rows == 2 else data["x"]
    w_att = extra["w_att"] if gate else None
    m, dx = egnn_aggregate(
        data["h"], data["x"], data["ptr"], **w, x_ref=x_ref if rows == 2 else None, w_att=w_att,
        b_att=extra["b_att"] if gate else None, w_x=extra["w_x"], coords_range=7.0, norm_constant=0.5,
        normalization_factor=3.0,
    )
    m_d, dx_d = _dense(
        data["h"], data["x"], x_ref, data["ptr"], *w.values(), w_att, extra["b_att"], extra["w_x"], 7.0, 0.5, 3.0
    )
    torch.testing.assert_close(m, m_d)
    torch.testing.assert_close(dx, dx_d)
    # single-atom molecule: no neighbours
    assert torch.all(m[3] == 0) and torch.all(dx[3] == 0)


def _random_orthogonal(seed):
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    return q


def test_e3_equivariance():
    data, w, extra = _problem(seed=1)
    q = _random_orthogonal(2)
    q[:, 0] *= -1 if torch.det(q) > 0 else 1  # include a reflection: E(3), not only SE(3)
    t = torch.tensor([0.3, -2.0, 1.1], dtype=torch.float64)
    kw = dict(x_ref=extra["x_ref"], w_att=extra["w_att"], b_att=extra["b_att"], w_x=extra["w_x"])
    m, dx = egnn_aggregate(data["h"], data["x"], data["ptr"], **w, **kw)
    kw["x_ref"] = extra["x_ref"] @ q.T - t
    m2, dx2 = egnn_aggregate(data["h"], data["x"] @ q.T + t, data["ptr"], **w, **kw)
    torch.testing.assert_close(m2, m)  # invariant features
    torch.testing.assert_close(dx2, dx @ q.T)  # equivariant (translation-free) update


def test_permutation_equivariance():
    data, w, extra = _problem(seed=3)
    kw = dict(x_ref=extra["x_ref"], w_att=extra["w_att"], b_att=extra["b_att"], w_x=extra["w_x"])
    m, dx = egnn_aggregate(data["h"], data["x"], data["ptr"], **w, **kw)
    # permute nodes inside every molecule
    ptr = data["ptr"].tolist()
    g = torch.Generator().manual_seed(4)
    perm = torch.cat([torch.randperm(b - a, generator=g) + a for a, b in zip(ptr[:-1], ptr[1:], strict=True)])
    kw["x_ref"] = extra["x_ref"][perm]
    m2, dx2 = egnn_aggregate(data["h"][perm], data["x"][perm], data["ptr"], **w, **kw)
    torch.testing.assert_close(m2, m[perm])
    torch.testing.assert_close(dx2, dx[perm])


def test_molecules_do_not_interact():
    data, w, extra = _problem(seed=5)
    kw = dict(w_att=extra["w_att"], b_att=extra["b_att"], w_x=extra["w_x"])
    w["w_d"] = w["w_d"][:1]
    m, dx = egnn_aggregate(data["h"], data["x"], data["ptr"], **w, **kw)
    a, b = 4, 10  # the 4th molecule alone
    m1, dx1 = egnn_aggregate(data["h"][a:b], data["x"][a:b], torch.tensor([0, 6]), **w, **kw)
    torch.testing.assert_close(m1, m[a:b])
    torch.testing.assert_close(dx1, dx[a:b])


def test_gradcheck_float64():
    data, w, extra = _problem(sizes=[3, 1, 2], f=3, hid=4, seed=6)
    names = ["h", "x", "x_ref", "W_a", "W_b", "W2", "w_d", "w_att", "b_att", "w_x"]
    vals = [data["h"], data["x"], extra["x_ref"], w["W_a"], w["W_b"], w["W2"], w["w_d"], extra["w_att"],
            extra["b_att"], extra["w_x"]]
    vals = [v.clone().requires_grad_(True) for v in vals]

    def fn(*args):
        d = dict(zip(names, args, strict=True))
        m, dx = egnn_aggregate(
            d["h"], d["x"], data["ptr"], d["W_a"], d["W_b"], w["b1"], d["W2"], w["b2"], d["w_d"],
            x_ref=d["x_ref"], w_att=d["w_att"], b_att=d["b_att"], w_x=d["w_x"], coords_range=2.0,
        )
        return m, dx

    assert torch.autograd.gradcheck(fn, vals, fast_mode=True)


def test_empty():
    data, w, extra = _problem(sizes=[0, 0])
    m, dx = egnn_aggregate(data["h"], data["x"], data["ptr"], **w, x_ref=extra["x_ref"], w_x=extra["w_x"])
    assert m.shape == (0, 12) and dx.shape == (0, 3)


def test_validation():
    data, w, extra = _problem()
    h, x, ptr = data["h"], data["x"], data["ptr"]
    with pytest.raises(ValueError, match="x_ref"):
        egnn_aggregate(h, x, ptr, **w)
    w1 = dict(w, w_d=w["w_d"][:1])
    with pytest.raises(ValueError, match="x must have shape"):
        egnn_aggregate(h, x[:, :2], ptr, **w1)
    with pytest.raises(ValueError, match="W2"):
        egnn_aggregate(h, x, ptr, **dict(w1, W2=w["W2"][:, :5]))
    with pytest.raises(ValueError, match="W_a"):
        egnn_aggregate(h, x, ptr, **dict(w1, W_a=w["W_a"][:2]))
    with pytest.raises(ValueError, match="ptr"):
        egnn_aggregate(h, x, torch.tensor([0, 5, 3, 14]), **w1)
    with pytest.raises(ValueError, match="ptr"):
        egnn_aggregate(h, x, torch.tensor([0, 5]), **w1)
    with pytest.raises(TypeError, match="h"):
        egnn_aggregate(h.long(), x, ptr, **w1)
    with pytest.raises(ValueError, match="w_att"):
        egnn_aggregate(h, x, ptr, **w1, w_att=extra["w_att"][:3])
