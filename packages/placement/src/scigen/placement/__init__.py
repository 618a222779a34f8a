"""Zero-shot macro placement with a guided diffusion model, on Bookshelf netlists.

ChipDiffusion (Lee, Nguyen, Elzeiny, Deng, Abbeel & Wawrzynek, "Chip Placement with Diffusion
Models", ICML 2025). Public API:

* :class:`Netlist`, :func:`read_bookshelf`, :func:`write_bookshelf`, :func:`macro_only`;
* :func:`generate_netlist` (the paper's synthetic circuits), :class:`SynthConfig`;
* :func:`evaluate_placement` (HPWL, macro HPWL, legality, overlap), :func:`plot_placement`;
* :class:`DiffusionPlacer` (the system) and :func:`place`.

Every public name is imported on first use (PEP 562), so ``import scigen.placement`` (what
``scigen list`` does to read :data:`SYSTEMS`) does not load torch.
"""

from __future__ import annotations

from scigen.core.lazy import lazy_names

__version__ = "0.1.0"

SYSTEMS = {"diffusion": "scigen.placement.diffusion.system:DiffusionPlacer"}

#: extra CLI verbs per system, registered without importing the system class (fast --help)
CLI_COMMANDS = {"diffusion": "scigen.placement.diffusion.cli:register"}

_LAZY = {
    **dict.fromkeys(("BookshelfError", "read_bookshelf", "write_bookshelf", "write_pl"), "scigen.placement.bookshelf"),
    **dict.fromkeys(("macro_only", "merge_macro_positions"), "scigen.placement.macro_only"),
    **dict.fromkeys(("evaluate_placement", "hpwl", "legality_score", "macro_hpwl", "total_overlap"),
                    "scigen.placement.metrics"),
    **dict.fromkeys(("Netlist", "Row"), "scigen.placement.netlist"),
    **dict.fromkeys(("plot_placement", "plot_placements"), "scigen.placement.plot"),
    **dict.fromkeys(("SynthConfig", "generate_netlist", "generate_netlists"), "scigen.placement.synthetic"),
    **dict.fromkeys(("DiffusionPlacer", "place"), "scigen.placement.diffusion.system"),
}

__all__ = sorted([*_LAZY, "SYSTEMS"])


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
