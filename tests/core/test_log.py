"""Runtime messages go through logging.getLogger("scigen..."), with one verbosity switch."""

from __future__ import annotations

import logging

import pytest

from scigen.core.errors import InvalidInputError
from scigen.core.log import get_logger, set_verbosity


def test_loggers_live_in_the_scigen_tree_and_verbosity_filters(caplog):
    log = get_logger("placement.diffusion")
    assert log.name == "scigen.placement.diffusion" and get_logger("scigen.x").name == "scigen.x"
    before = logging.getLogger("scigen").level
    try:
        set_verbosity("quiet")
        with caplog.at_level(logging.NOTSET):
            log.info("hidden")
            log.warning("shown")
        assert [r.getMessage() for r in caplog.records if r.name.startswith("scigen")] == ["shown"]
        set_verbosity("debug")
        assert log.isEnabledFor(logging.DEBUG)
        with pytest.raises(InvalidInputError, match="verbosity must be one of"):
            set_verbosity("loud")
    finally:
        logging.getLogger("scigen").setLevel(before)
