from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def trained2():
    """A tiny nowcaster after a 2-step fit (one step per stage) on 4 synthetic storms: for wiring tests."""
    from scigen.weather import Nowcast, NowcastConfig
    from scigen.weather.data import synthetic_storms

    data = synthetic_storms(4, 26, 16, seed=0)
    model = Nowcast(NowcastConfig.preset("tiny")).fit(data, max_steps=2, progress=False, logger=None)
    return model, data
