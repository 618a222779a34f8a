"""MOSES-style molecule metrics (Polykovskiy et al. 2020) and the Fréchet ChemNet Distance.

Inputs are lists of SMILES where a failed sample may be ``None`` (or an unparsable string).

* validity: fraction of all samples RDKit parses and sanitises (MOSES ``fraction_valid``);
* uniqueness: distinct canonical SMILES / valid samples (MOSES ``fraction_unique`` on the valid set;
  ``k`` limits to the first ``k`` valid samples, i.e. ``unique@k``);
* novelty: fraction of distinct valid canonical SMILES not in the (canonical) training set
  (MOSES ``novelty``);
* FCD (Preuer et al. 2018): ``‖μ₁ − μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½)`` between ChemNet penultimate
  activations of the valid generated molecules and of the reference set, computed by ``fcd-torch``
  (the same package MOSES uses; its ChemNet weights ship inside the wheel, no network needed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scigen.core.errors import InvalidInputError


def canonical(smiles: str | None) -> str | None:
    """RDKit canonical SMILES, ``None`` when ``smiles`` is ``None``, empty or invalid."""
    from rdkit import Chem, RDLogger

    if not smiles or not isinstance(smiles, str):
        return None
    RDLogger.DisableLog("rdApp.*")
    try:
        mol = Chem.MolFromSmiles(smiles)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    return Chem.MolToSmiles(mol)


def _nonempty(gen: Sequence, what: str = "gen") -> list:
    gen = list(gen)
    if not gen:
        raise InvalidInputError(f"{what}: the list of molecules is empty")
    return gen


def validity(gen: Sequence[str | None]) -> float:
    gen = _nonempty(gen)
    return sum(canonical(s) is not None for s in gen) / len(gen)


def valid_canonical(gen: Iterable[str | None]) -> list[str]:
    return [c for c in (canonical(s) for s in gen) if c is not None]


def uniqueness(gen: Sequence[str | None], k: int | None = None) -> float:
    valid = valid_canonical(_nonempty(gen))
    if k is not None:
        valid = valid[:k]
    if not valid:
        return 0.0
    return len(set(valid)) / len(valid)


def novelty(gen: Sequence[str | None], train: Iterable[str], *, canonicalize_train: bool = True) -> float:
    uniq = set(valid_canonical(_nonempty(gen)))
    if not uniq:
        return 0.0
    train_set = {canonical(s) for s in train} if canonicalize_train else set(train)
    return len(uniq - train_set) / len(uniq)


def fcd(gen: Sequence[str | None], ref: Sequence[str] | None = None, *, ref_stats: dict | None = None,
        device: str = "cpu", batch_size: int = 512) -> float:
    """Fréchet ChemNet Distance between the valid molecules of ``gen`` and a reference (fcd-torch).

    The reference is either SMILES ``ref`` or precomputed ChemNet statistics ``ref_stats``
    (``{"mu": [512], "sigma": [512, 512]}``, e.g. :func:`scigen.graphs.data.moses_fcd_stats`, the
    statistics MOSES' ``get_all_metrics`` uses for ``FCD/Test``). Inputs are canonicalised and
    invalid ones dropped first, as MOSES does (``remove_invalid(gen, canonize=True)``). Returns the
    squared Fréchet distance ``‖μ₁ − μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½)`` (FCD as published, not its root).
    """
    from fcd_torch import FCD

    if (ref is None) == (ref_stats is None):
        raise InvalidInputError("fcd: pass exactly one of ref (SMILES) or ref_stats ({'mu', 'sigma'})")
    g = valid_canonical(_nonempty(gen))
    if len(g) < 2:
        raise InvalidInputError(f"fcd needs at least 2 valid generated molecules, got {len(g)}")
    metric = FCD(device=device, n_jobs=1, batch_size=batch_size)
    if ref_stats is not None:
        if not {"mu", "sigma"} <= set(ref_stats):
            raise InvalidInputError(f"ref_stats: expected keys 'mu' and 'sigma', got {sorted(ref_stats)}")
        return float(metric(gen=g, pref=ref_stats))
    r = valid_canonical(_nonempty(ref, "ref"))
    if len(r) < 2:
        raise InvalidInputError(f"fcd needs at least 2 valid reference molecules, got {len(r)}")
    return float(metric(g, r))


def molecule_metrics(gen: Sequence[str | None], train: Sequence[str], test: Sequence[str] | None = None, *,
                     fcd_metric: bool = True) -> dict[str, float]:
    """``{"validity", "uniqueness", "novelty"[, "FCD"]}`` (FCD against ``test`` when given)."""
    out = {"validity": validity(gen), "uniqueness": uniqueness(gen), "novelty": novelty(gen, train)}
    if fcd_metric and test is not None:
        out["FCD"] = fcd(gen, test)
    return out
