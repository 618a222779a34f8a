"""SBGM: sparse Bayesian generative channel models (CSGMM, CSVAE) — Böck et al., ICML 2025."""
