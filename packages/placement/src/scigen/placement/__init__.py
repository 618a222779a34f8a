"""Zero-shot macro placement with a guided diffusion model, on Bookshelf netlists.

ChipDiffusion (Lee, Nguyen, Elzeiny, Deng, Abbeel & Wawrzynek, "Chip Placement with Diffusion
Models", ICML 2025). Public API:

* :class:`Netlist`, :func:`read_bookshelf`, :func:`write_bookshelf`, :func:`macro_only`;
* :func:`generate_netlist` (the paper's synthetic circuits), :class:`SynthConfig`;
* :func:`evaluate_placement` (HPWL, macro HPWL, legality, overlap), :func:`plot_placement`;
* :class:`DiffusionPlacer` (the system) and :func:`place`.
"""

from scigen.placement.bookshelf import BookshelfError, read_bookshelf, write_bookshelf, write_pl
from scigen.placement.macro_only import macro_only, merge_macro_positions
from scigen.placement.metrics import evaluate_placement, hpwl, legality_score, macro_hpwl, total_overlap
from scigen.placement.netlist import Netlist, Row
from scigen.placement.plot import plot_placement, plot_placements
from scigen.placement.synthetic import SynthConfig, generate_netlist, generate_netlists

__version__ = "0.1.0"

SYSTEMS = {"diffusion": "scigen.placement.diffusion.system:DiffusionPlacer"}


def __getattr__(name):
    if name in ("DiffusionPlacer", "place"):
        from scigen.placement.diffusion import system

        return getattr(system, name)
    raise AttributeError(f"module 'scigen.placement' has no attribute {name!r}")


__all__ = [
    "SYSTEMS", "BookshelfError", "DiffusionPlacer", "Netlist", "Row", "SynthConfig", "evaluate_placement",
    "generate_netlist", "generate_netlists", "hpwl", "legality_score", "macro_hpwl", "macro_only",
    "merge_macro_positions", "place", "plot_placement", "plot_placements", "read_bookshelf", "total_overlap", "write_bookshelf",
    "write_pl",
]
