"""Fused EGNN edge step over ragged batches of fully connected molecules.

Called by **scigen-molecules** (UniGEM, ICLR 2025, and its EDM baseline, Hoogeboom et al., ICML 2022),
whose denoiser is the E(n)-equivariant GNN of Satorras, Hoogeboom & Welling, "E(n) Equivariant Graph
Neural Networks", ICML 2021, eqs. (3)-(6), in EDM's variant (``egnn_new.py``: ``GCL`` and
``EquivariantUpdate``). For every ordered pair (i, j), i != j, of nodes in the same molecule:

* edge features ``a_ij = [d²_ij, d²ref_ij]`` with ``d²_ij = ||x_i - x_j||²`` and, when ``w_d`` has 2 rows,
  ``d²ref_ij = ||x_ref_i - x_ref_j||²`` (EDM passes the distances of the block's input coordinates);
* ``phi_ij = SiLU(SiLU(h_i W_a + h_j W_b + a_ij w_d + b1) W2 + b2)`` — the two-layer edge MLP
  ``phi_e`` of eq. (3); its first layer ``Linear(2F + D, H)`` is split as ``W1 = [W_a; W_b; w_d]`` so
  that ``h W_a`` and ``h W_b`` are node-level GEMMs (N·H, not E·H);
* gate ``e_ij = sigmoid(phi_ij · w_att + b_att)`` if ``w_att`` is given (EDM's ``attention=True``;
  the soft edge-inference weight of Satorras et al.), else 1;
* ``m_i = Σ_j e_ij phi_ij / normalization_factor`` (eq. 5, EDM's ``aggregation_method='sum'``);
* ``dx_i = Σ_j (x_i - x_j) / (sqrt(d²_ij + 1e-8) + norm_constant) · tanh(phi_ij · w_x) · coords_range
  / normalization_factor`` if ``w_x`` is given (eq. 4 with EDM's normalised differences,
  ``tanh=True`` and ``coords_range``; ``w_x`` is the bias-free last layer of ``phi_x``), else 0.

To reproduce an EDM ``EquivariantBlock``: call once with the GCL weights and ``w_att`` (use ``m``; then
``h <- h + node_mlp([h, m])`` outside), then once with the ``coord_mlp`` weights (its first two layers
as ``W_a, W_b, w_d, b1, W2, b2``, the last as ``w_x``) on the updated ``h`` and use ``dx``. Passing
both ``w_att`` and ``w_x`` gives Satorras' single-pass layer with ``phi_x = tanh(linear(phi_ij))``.

Molecules are ``ptr [G+1]`` (CSR; molecule g owns nodes ``ptr[g]:ptr[g+1]``), no padding, no edge
tensors: the caller passes node tensors only. Returns ``(m [N, H], dx [N, 3])``.

Backends: CPU runs the reference (materialises the E × H edge activations); CUDA runs a Triton kernel
with one program per node that never materialises edges. **Backward** (both devices) recomputes the
forward with the reference under autograd, so it costs reference-level memory (E × H); gradients
reach h, x, x_ref and every weight.
"""

from __future__ import annotations

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import egnn as ref


@torch.library.custom_op("scigen::egnn_aggregate", mutates_args=())
def _egnn_op(
    h: torch.Tensor, x: torch.Tensor, x_ref: torch.Tensor, ptr: torch.Tensor,
    W_a: torch.Tensor, W_b: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor, b2: torch.Tensor,
    w_d: torch.Tensor, w_att: torch.Tensor, b_att: torch.Tensor, w_x: torch.Tensor,
    use_gate: bool, use_coord: bool, coords_range: float, norm_constant: float, normalization_factor: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    m, dx = ref.egnn_aggregate(
        h, x, x_ref, ptr, W_a, W_b, b1, W2, b2, w_d, w_att, b_att, w_x,
        use_gate, use_coord, coords_range, norm_constant, normalization_factor,
    )
    return m.to(h.dtype), dx.to(h.dtype)


@_egnn_op.register_kernel("cuda")
def _egnn_cuda(h, x, x_ref, ptr, *rest):
    if use_triton(h, x, x_ref, ptr) and h.dtype in (torch.float16, torch.float32, torch.bfloat16):
        from scigen.kernels.triton import egnn as tri

        m, dx = tri.egnn_aggregate(h, x, x_ref, ptr, *rest)
        return m.to(h.dtype), dx.to(h.dtype)
    m, dx = ref.egnn_aggregate(h, x, x_ref, ptr, *rest)
    return m.to(h.dtype), dx.to(h.dtype)


@_egnn_op.register_fake
def _(h, x, x_ref, ptr, W_a, W_b, b1, W2, b2, *rest):
    return h.new_empty((h.shape[0], W2.shape[1])), h.new_empty((h.shape[0], 3))


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:13])
    ctx.flags = inputs[13:]


def _backward(ctx, grad_m, grad_dx):
    saved = ctx.saved_tensors
    ptr = saved[3]
    diff = [t for k, t in enumerate(saved) if k != 3]
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_(True) for t in diff]
        args = [*leaves[:3], ptr, *leaves[3:]]
        m, dx = ref.egnn_aggregate(*args, *ctx.flags)
        outs, grads = [], []
        for o, g in ((m, grad_m), (dx, grad_dx)):
            if g is not None and o.requires_grad:
                outs.append(o)
                grads.append(g.to(o.dtype))
        got = torch.autograd.grad(outs, leaves, grads, allow_unused=True) if outs else [None] * len(leaves)
    got = [None if g is None else g.to(t.dtype) for g, t in zip(got, diff, strict=True)]
    return (*got[:3], None, *got[3:], None, None, None, None, None)


_egnn_op.register_autograd(_backward, setup_context=_setup)


def _check_shape(name: str, t: torch.Tensor, shape: tuple[int, ...]) -> None:
    if tuple(t.shape) != shape:
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")


def egnn_aggregate(
    h: torch.Tensor,
    x: torch.Tensor,
    ptr: torch.Tensor,
    W_a: torch.Tensor,
    W_b: torch.Tensor,
    b1: torch.Tensor,
    W2: torch.Tensor,
    b2: torch.Tensor,
    w_d: torch.Tensor,
    *,
    x_ref: torch.Tensor | None = None,
    w_att: torch.Tensor | None = None,
    b_att: torch.Tensor | float | None = None,
    w_x: torch.Tensor | None = None,
    coords_range: float = 15.0,
    norm_constant: float = 1.0,
    normalization_factor: float = 1.0,
    check_indices: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """EGNN edge step (see the module docstring): returns ``(m [N, H], dx [N, 3])`` in ``h.dtype``.

    Args:
        h: [N, F] node features. x: [N, 3] coordinates. ptr: [G+1] int CSR pointer of molecules.
        W_a, W_b: [F, H]; b1: [H]; W2: [H, H]; b2: [H] — the edge MLP (``y = x @ W + b`` layout, i.e.
            ``nn.Linear.weight.T``). w_d: [D, H], D = 1 (d²) or 2 (d², then d²ref; needs ``x_ref``).
        x_ref: [N, 3] coordinates for the second edge feature (EDM: the block input's coordinates).
        w_att, b_att: [H] and a scalar: the gate ``sigmoid(phi · w_att + b_att)``; None = no gate.
        w_x: [H] coordinate head; None = ``dx`` is zeros.
        coords_range, norm_constant, normalization_factor: EDM's constants (defaults 15, 1, 1).
        check_indices: validate ``ptr`` values (one device sync; off in hot loops).

    Weights are cast to ``h.dtype``. ``dx`` is zero when ``w_x`` is None; ``m`` rows of nodes without
    neighbours (single-atom molecules) are zero.
    """
    _validate.check_tensor("h", h, ndim=2)
    _validate.check_tensor("x", x, ndim=2)
    n, f = h.shape
    _check_shape("x", x, (n, 3))
    _validate.check_tensor("ptr", ptr, ndim=1, floating=False)
    if ptr.dtype not in (torch.int64, torch.int32) or ptr.numel() < 1:
        raise ValueError(f"ptr must be a non-empty int64/int32 [G+1] CSR pointer, got {ptr.dtype} {list(ptr.shape)}")
    for name, t in (("W_a", W_a), ("W_b", W_b), ("W2", W2)):
        _validate.check_tensor(name, t, ndim=2)
    hid = W2.shape[1]
    _check_shape("W2", W2, (hid, hid))
    _check_shape("W_a", W_a, (f, hid))
    _check_shape("W_b", W_b, (f, hid))
    for name, t in (("b1", b1), ("b2", b2)):
        _validate.check_tensor(name, t, ndim=1)
        _check_shape(name, t, (hid,))
    _validate.check_tensor("w_d", w_d, ndim=2)
    if w_d.shape[0] not in (1, 2) or w_d.shape[1] != hid:
        raise ValueError(f"w_d must have shape [1, {hid}] or [2, {hid}], got {list(w_d.shape)}")
    if w_d.shape[0] == 2:
        if x_ref is None:
            raise ValueError("w_d has 2 rows (d² and d²ref) but x_ref is None; pass x_ref [N, 3]")
        _validate.check_tensor("x_ref", x_ref, ndim=2)
        _check_shape("x_ref", x_ref, (n, 3))
    else:
        x_ref = x
    use_gate = w_att is not None
    if use_gate:
        _validate.check_tensor("w_att", w_att, ndim=1)
        _check_shape("w_att", w_att, (hid,))
        b_att = torch.zeros((), dtype=h.dtype, device=h.device) if b_att is None else b_att
        if not isinstance(b_att, torch.Tensor):
            b_att = torch.tensor(float(b_att), dtype=h.dtype, device=h.device)
        if b_att.numel() != 1:
            raise ValueError(f"b_att must be a scalar, got shape {list(b_att.shape)}")
        b_att = b_att.reshape(1)
    else:
        w_att = h.new_zeros(hid)
        b_att = h.new_zeros(1)
    use_coord = w_x is not None
    if use_coord:
        _validate.check_tensor("w_x", w_x, ndim=1)
        _check_shape("w_x", w_x, (hid,))
    else:
        w_x = h.new_zeros(hid)
    tensors = dict(h=h, x=x, x_ref=x_ref, ptr=ptr, W_a=W_a, W_b=W_b, b1=b1, W2=W2, b2=b2, w_d=w_d,
                   w_att=w_att, b_att=b_att, w_x=w_x)
    _validate.check_same_device(**tensors)
    if check_indices and not torch.compiler.is_compiling():
        if int(ptr[0]) != 0 or int(ptr[-1]) != n or bool((ptr.diff() < 0).any()):
            raise ValueError(f"ptr must be non-decreasing from 0 to N = {n}, got {ptr.tolist()[:8]}...")
    if float(normalization_factor) == 0.0:
        raise ValueError("normalization_factor must be non-zero")
    cast = [t.to(h.dtype) for t in (x, x_ref, W_a, W_b, b1, W2, b2, w_d, w_att, b_att, w_x)]
    return _egnn_op(
        h, cast[0], cast[1], ptr, *cast[2:], use_gate, use_coord,
        float(coords_range), float(norm_constant), float(normalization_factor),
    )
