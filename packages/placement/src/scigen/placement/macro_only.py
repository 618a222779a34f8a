"""Macro-only extraction (ChipDiffusion, Lee et al., ICML 2025, §5.2 "macro-only" protocol).

Standard cells are dropped; macros, pads (ports) and fixed terminals are kept, the pads and terminals
fixed where they are, so a macro whose nets go to pads is still pulled towards them (the ISPD2005
macro protocol: I/O pads stay as fixed pins). Every net keeps only its pins on kept objects; a net
whose driver was dropped is re-rooted at one of its surviving pins (seeded choice); nets left with
fewer than two pins, or with no pin on a macro (pad-to-pad nets, constant in every placement), are
dropped. :func:`merge_macro_positions` writes placed macros back into the full netlist, every
other object keeping its original position.
"""

from __future__ import annotations

import numpy as np

from scigen.placement.netlist import Netlist

__all__ = ["macro_only", "merge_macro_positions"]


def macro_only(nl: Netlist, *, seed: int = 0) -> tuple[Netlist, np.ndarray]:
    """Return ``(macro_netlist, keep)`` where ``keep [M]`` are the macros' indices in ``nl``.

    ``keep`` lists the macros and the ports (pads) in their original order. Fixed macros and ports stay
    fixed. Nets are kept when at least two of their pins sit on kept objects, one of them a macro.
    """
    rng = np.random.default_rng(seed)
    macro = nl.is_macro & ~nl.is_port
    keep_mask = macro | nl.is_port
    keep = np.nonzero(keep_mask)[0]
    new_index = -np.ones(nl.num_objects, np.int64)
    new_index[keep] = np.arange(len(keep))
    pin_obj, pin_off, pin_dir, pin_order, ptr, names = [], [], [], [], [0], []
    for n in range(nl.num_nets):
        s, e = int(nl.net_ptr[n]), int(nl.net_ptr[n + 1])
        pins = [p for p in range(s, e) if keep_mask[nl.pin_obj[p]]]
        if len(pins) < 2 or not macro[nl.pin_obj[pins]].any():
            continue
        if pins[0] != s:  # driver dropped: re-root at a random surviving pin
            k = int(rng.integers(len(pins)))
            pins = [pins[k]] + pins[:k] + pins[k + 1:]
        for j, p in enumerate(pins):
            pin_obj.append(new_index[nl.pin_obj[p]])
            pin_off.append(nl.pin_offset[p])
            pin_dir.append(nl.pin_dir[p])
            pin_order.append(j)
        ptr.append(len(pin_obj))
        names.append(nl.net_names[n])
    sub = Netlist(
        names=[nl.names[i] for i in keep], size=nl.size[keep], lower_left=nl.lower_left[keep],
        terminal=nl.terminal[keep], terminal_ni=nl.terminal_ni[keep], fixed=nl.fixed[keep],
        orient=[nl.orient[i] for i in keep], pin_obj=np.array(pin_obj, np.int64),
        pin_offset=np.array(pin_off, np.float64).reshape(-1, 2), pin_dir=pin_dir, net_ptr=np.array(ptr),
        net_names=names, pin_order=np.array(pin_order, np.int64), rows=list(nl.rows), canvas=nl.canvas,
        node_weights={k: w for k, w in nl.node_weights.items() if k in set(nl.names[i] for i in keep)},
        name=nl.name,
    )
    return sub, keep


def merge_macro_positions(full: Netlist, macros: Netlist, keep: np.ndarray) -> Netlist:
    """A copy of ``full`` with the objects ``keep`` moved to ``macros``' positions (others unchanged)."""
    out = full.copy()
    out.lower_left[keep] = macros.lower_left
    return out
