"""Memory of one SBGD training step, measured on any device.

:func:`activation_bytes` counts the bytes of every tensor autograd saves for the backward pass of
one training loss (``torch.autograd.graph.saved_tensors_hooks``, each storage counted once): the
part of a step's peak allocation that grows with the graph, exact and deterministic on CPU where
torch keeps no allocator statistics. On CUDA the benchmark also reports
``torch.cuda.max_memory_allocated``.
"""

from __future__ import annotations

import torch

from scigen.core.rng import preserves_rng


def activation_bytes(loss_fn, *args, **kwargs) -> tuple[int, torch.Tensor]:
    """``(bytes saved for backward, loss)`` of ``loss_fn(*args, **kwargs)``."""
    seen: dict[tuple, int] = {}

    def pack(t: torch.Tensor):
        try:
            storage = t.untyped_storage()
            key = (storage.data_ptr(), t.device.type)
            seen[key] = max(seen.get(key, 0), storage.nbytes())
        except (RuntimeError, NotImplementedError):  # tensors without storage (e.g. sparse)
            pass
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_fn(*args, **kwargs)
    return sum(seen.values()), loss


@preserves_rng  # seeds torch for a reproducible batch; the caller's random state is left alone
def training_step_bytes(model, graphs) -> int:
    """Activation bytes of one training step of ``model`` (an :class:`SBGD` set up on ``graphs``) on a
    batch made of all of ``graphs`` (the model is set up on them first if it has no data yet)."""
    from scigen.graphs.sbgd.data import collate

    ds = model.prepare_data(graphs, role="data")
    batch = collate([ds[i] for i in range(len(ds))])
    torch.manual_seed(0)
    nbytes, loss = activation_bytes(model.training_loss, model.network, batch)
    loss.backward()
    model.network.zero_grad(set_to_none=True)
    return nbytes
