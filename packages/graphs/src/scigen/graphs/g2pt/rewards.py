"""Rewards for goal-oriented fine-tuning: ``reward(graph) -> float | None`` (``None`` = reject).

QED (Bickerton et al. 2012) via RDKit for molecular graphs, as in G2PT §4.1; simple graph
properties for generic graphs.
"""

from __future__ import annotations

import networkx as nx


def leaf_fraction(g: nx.Graph) -> float:
    """Fraction of nodes of degree 1."""
    return sum(1 for _, d in g.degree() if d == 1) / g.number_of_nodes()


def n_nodes(g: nx.Graph) -> float:
    return float(g.number_of_nodes())


def density(g: nx.Graph) -> float:
    return float(nx.density(g))


def qed(g: nx.Graph) -> float | None:
    """RDKit QED of a typed molecular graph; ``None`` when the graph is not a valid molecule."""
    from rdkit.Chem import QED

    from scigen.graphs.convert import graph_to_mol

    mol = graph_to_mol(g)
    return None if mol is None else float(QED.qed(mol))


REWARDS = {"leaves": leaf_fraction, "nodes": n_nodes, "density": density, "qed": qed}
