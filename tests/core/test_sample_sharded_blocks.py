"""``sample_in_shards(block=)``: ranks own whole blocks of keys (rank ``r`` of ``W``: keys ``r·m .. (r+1)·m - 1``,
``m = block · ceil(n / (W · block))``), so block-aligned batches have the same members on any number of processes."""

from __future__ import annotations

import textwrap

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system.sharded import sample_in_shards


def test_block_is_checked_and_one_process_draws_all_keys_at_once():
    seen = []
    out = sample_in_shards(lambda keys: seen.append(keys.tolist()) or keys * 2, 5, block=4)
    assert seen == [[0, 1, 2, 3, 4]] and out.tolist() == [0, 2, 4, 6, 8]
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InvalidInputError, match="block must be a positive int"):
            sample_in_shards(lambda keys: keys, 3, block=bad)


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import torch
    from scigen.core.system.sharded import sample_in_shards

    if __name__ == "__main__":
        rank = int(os.environ.get("LOCAL_RANK", 0))
        drawn = {}

        def draw(keys):
            drawn.setdefault(len(drawn), keys.tolist())
            return {"key": keys, "rank": torch.full_like(keys, rank)}

        out = {name: sample_in_shards(draw, n, devices=2, block=b) for name, n, b in
               (("n7b3", 7, 3), ("n7b1", 7, 1), ("n5b4", 5, 4))}
        torch.save({"out": out, "drawn": drawn}, os.path.join(sys.argv[1], f"rank{rank}.pt"))
    """
)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_split_the_keys_in_whole_blocks(tmp_path, run_script):
    run_script(tmp_path / "run.py", tmp_path, cwd=tmp_path, text=SCRIPT)
    # m = block·ceil(n / (2·block)): n=7, block 3 -> m=6; block 1 -> m=4; n=5, block 4 -> m=4
    want_rank = {"n7b3": [0] * 6 + [1], "n7b1": [0] * 4 + [1] * 3, "n5b4": [0] * 4 + [1]}
    want_drawn = {0: ([0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]), 1: ([0, 1, 2, 3], [4, 5, 6, 7]),
                  2: ([0, 1, 2, 3], [4, 5, 6, 7])}
    for r in (0, 1):
        got = torch.load(tmp_path / f"rank{r}.pt")
        for name, ranks in want_rank.items():
            assert got["out"][name]["key"].tolist() == list(range(len(ranks)))  # gathered in key order, trimmed
            assert got["out"][name]["rank"].tolist() == ranks
        assert {i: got["drawn"][i] for i in range(3)} == {i: keys[r] for i, keys in want_drawn.items()}
