"""The kernels README's example runs as written and each printed number matches an independent formula:
MMD² from dense float64 kernel matrices, ⟨P, C⟩ from POT's Sinkhorn, the segment sums by hand."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest
import torch


@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")  # a fixed 200 iterations, as the op
def test_readme_example_matches_independent_formulas(readme_example):
    import ot

    scope = {"__name__": "__readme__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("kernels", "## Example"), "kernels/README.md", "exec"), scope)  # noqa: S102
    x, y, cost = scope["x"].double(), scope["y"].double(), scope["cost"].double()

    def k(a, b):
        d2 = torch.cdist(a, b) ** 2
        return sum(torch.exp(-d2 / (2 * h**2)) for h in (0.5, 1.0, 2.0)).mean()

    assert abs(float(scope["mmd2"]) - float(k(x, x) + k(y, y) - 2 * k(x, y))) < 1e-5
    plan = scope["plan"].double()
    np.testing.assert_allclose(plan.sum(1).numpy(), np.full(64, 1 / 64), rtol=1e-5)  # row marginals exact
    pot_plan = ot.sinkhorn(ot.unif(64), ot.unif(64), cost.numpy(), reg=0.5, numItermax=200, stopThr=0)
    np.testing.assert_allclose(plan.numpy(), pot_plan, atol=1e-6)
    assert abs(float(scope["ot_cost"]) - float((pot_plan * cost.numpy()).sum())) < 1e-4
    assert scope["sums"].tolist() == [3.0, 0.0, 42.0]  # 0+1+2, the empty segment, 3+...+9
    printed = re.search(r"MMD² ([\d.]+), plan \(64, 64\) mass ([\d.]+)", out.getvalue())
    assert printed and float(printed.group(2)) == 1.0
