"""GIM: generative intervention models (Schneider et al., ICML 2025) — see :mod:`scigen.singlecell.gim.system`."""
