"""Safe persistence of systems: round trip, atomic replacement, clear refusals of bad files."""

from __future__ import annotations

import json

import pydantic
import pytest
import torch
from torch import nn

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.system import System, SystemConfig
from scigen.core.system.persistence import CONFIG_FILE, FORMAT_VERSION, WEIGHTS_FILE


class LineConfig(SystemConfig):
    width: int = pydantic.Field(3, gt=0)
    scale: float = 1.0


class Line(System):
    """y = W x: the smallest system that exercises the base class."""

    domain = "testing"
    name = "line"
    Config = LineConfig

    def build_network(self):
        return nn.Linear(self.config.width, 1, bias=False)

    def fit(self, data, *, max_steps=10):
        x, y = data
        opt = torch.optim.SGD(self.network.parameters(), lr=0.1)
        for _ in range(max_steps):
            opt.zero_grad()
            loss = ((self.network(x).squeeze(-1) - y) ** 2).mean()
            loss.backward()
            opt.step()
        self.metadata["steps"] = max_steps
        return self

    def sample(self, x):
        with torch.no_grad():
            return self.network(x).squeeze(-1) * self.config.scale

    def evaluate(self, data):
        x, y = data
        return {"mse": float(((self.sample(x) - y) ** 2).mean())}


def _resign(run):
    """Recompute a saved run's checksums (to reach the checks that come after them)."""
    from scigen.core.system.persistence import _checked_part, _sha256_file, _sha256_json

    cfg = run / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["checksum"] = {"weights_sha256": _sha256_file(run / WEIGHTS_FILE),
                          "config_sha256": _sha256_json(_checked_part(header))}
    cfg.write_text(json.dumps(header))


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=g)
    return x, x @ torch.tensor([1.0, -2.0, 0.5])


def test_round_trip_reproduces_outputs_config_and_metadata(tmp_path):
    model = Line(scale=2.0).fit(_data(), max_steps=50)
    model.save(tmp_path / "run")
    again = Line.load(tmp_path / "run")
    x, _ = _data()
    assert torch.equal(model.sample(x), again.sample(x))
    assert again.config == model.config and again.config.scale == 2.0
    assert again.metadata == {"steps": 50}
    header = json.loads((tmp_path / "run" / CONFIG_FILE).read_text())
    assert header["format_version"] == FORMAT_VERSION and header["system"] == "testing/line"


def test_fit_learns_the_line():
    model = Line()
    before = model.evaluate(_data())["mse"]
    after = model.fit(_data(), max_steps=200).evaluate(_data())["mse"]
    assert after < 1e-4 < before


def test_save_replaces_existing_run_atomically(tmp_path):
    Line(width=3).save(tmp_path / "run")
    with pytest.raises(CheckpointError, match="already exists; pass overwrite=True"):
        Line(width=5).save(tmp_path / "run")
    assert Line.load(tmp_path / "run").config.width == 3
    Line(width=5).save(tmp_path / "run", overwrite=True)
    assert Line.load(tmp_path / "run").config.width == 5
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "run"]
    assert leftovers == []


def test_save_never_removes_a_users_files(tmp_path):
    """A folder holding a user's notes is refused, with or without overwrite, and keeps its contents."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    for overwrite in (False, True):
        with pytest.raises(CheckpointError):
            Line().save(folder, overwrite=overwrite)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "my notes"
    Line().save(tmp_path / "run")
    (tmp_path / "run" / "notes.txt").write_text("added later")
    with pytest.raises(CheckpointError, match=r"holds files save did not write \(notes.txt\)"):
        Line().save(tmp_path / "run", overwrite=True)
    assert (tmp_path / "run" / "notes.txt").read_text() == "added later"
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="not a saved scigen run"):
        Line().save(tmp_path / "file", overwrite=True)
    assert (tmp_path / "file").read_text() == "x"


def test_flipped_bytes_in_the_weights_are_refused(tmp_path):
    model = Line(width=64)
    model.save(tmp_path / "run")
    w = tmp_path / "run" / WEIGHTS_FILE
    raw = bytearray(w.read_bytes())
    for i in range(len(raw) - 64, len(raw)):  # the last 64 bytes: inside the tensor data
        raw[i] ^= 0x01
    w.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"weights.safetensors: contents do not match the checksum"):
        Line.load(tmp_path / "run")


def test_edited_config_is_refused(tmp_path):
    Line().save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["config"]["scale"] = 3.0
    cfg.write_text(json.dumps(header))
    with pytest.raises(CheckpointError, match="do not match their checksum"):
        Line.load(tmp_path / "run")


@pytest.mark.parametrize("version", [0, -3, "2", True])
def test_invalid_format_versions_are_refused(tmp_path, version):
    Line().save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["format_version"] = version
    cfg.write_text(json.dumps(header))
    with pytest.raises(CheckpointError, match="format_version"):
        Line.load(tmp_path / "run")


def test_nan_weights_are_refused(tmp_path):
    model = Line()
    with torch.no_grad():
        model.network.weight[0, 0] = float("nan")
    model.save(tmp_path / "run")
    with pytest.raises(CheckpointError, match="'network.weight' holds NaN"):
        Line.load(tmp_path / "run")


def test_format_1_runs_without_checksum_still_load(tmp_path):
    model = Line()
    model.save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["format_version"] = 1
    del header["checksum"]
    cfg.write_text(json.dumps(header))
    x, _ = _data()
    assert torch.equal(Line.load(tmp_path / "run").sample(x), model.sample(x))


def test_config_errors_name_the_field():
    with pytest.raises(InvalidInputError, match=r"LineConfig.width.*greater than 0.*got -1"):
        Line(width=-1)
    with pytest.raises(InvalidInputError, match=r"LineConfig.depth: unknown field"):
        Line(depth=3)


def test_missing_directory(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        Line.load(tmp_path / "nope")


def test_truncated_json(tmp_path):
    Line().save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    cfg.write_text(cfg.read_text()[:20])
    with pytest.raises(CheckpointError, match="corrupted or truncated JSON"):
        Line.load(tmp_path / "run")


def test_truncated_weights(tmp_path):
    Line().save(tmp_path / "run")
    w = tmp_path / "run" / WEIGHTS_FILE
    w.write_bytes(w.read_bytes()[:30])
    with pytest.raises(CheckpointError, match="do not match the checksum"):
        Line.load(tmp_path / "run")
    _resign(tmp_path / "run")  # a truncated file whose checksum was recomputed still fails to parse
    with pytest.raises(CheckpointError, match="corrupted or truncated safetensors"):
        Line.load(tmp_path / "run")


def test_newer_format_is_refused(tmp_path):
    Line().save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["format_version"] = FORMAT_VERSION + 1
    cfg.write_text(json.dumps(header))
    with pytest.raises(CheckpointError, match="newer than this scigen-core"):
        Line.load(tmp_path / "run")


def test_foreign_file_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / CONFIG_FILE).write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(CheckpointError, match="not a scigen system file"):
        Line.load(tmp_path / "run")


def test_pickle_checkpoint_is_never_unpickled(tmp_path):
    """A torch.save pickle where safetensors is expected is rejected without executing anything."""
    Line().save(tmp_path / "run")
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    torch.save({"x": Evil()}, tmp_path / "run" / WEIGHTS_FILE)
    with pytest.raises(CheckpointError):
        Line.load(tmp_path / "run")
    assert not marker.exists()


def test_other_systems_run_is_refused(tmp_path):
    class Other(Line):
        name = "other"

    Other().save(tmp_path / "run")
    with pytest.raises(CheckpointError, match="holds a 'testing/other' system"):
        Line.load(tmp_path / "run")


def test_weights_that_do_not_fit_are_named(tmp_path):
    Line(width=3).save(tmp_path / "run")
    cfg = tmp_path / "run" / CONFIG_FILE
    header = json.loads(cfg.read_text())
    header["config"]["width"] = 4
    cfg.write_text(json.dumps(header))
    _resign(tmp_path / "run")
    with pytest.raises(CheckpointError, match=r"shape mismatch weight: saved \(1, 3\) vs model \(1, 4\)"):
        Line.load(tmp_path / "run")


class TiedConfig(SystemConfig):
    vocab: int = 5


class Tied(System):
    """Input embedding and output projection share one weight (as in GPT-2)."""

    domain = "testing"
    name = "tied"
    Config = TiedConfig

    def build_network(self):
        emb = nn.Embedding(self.config.vocab, 4)
        head = nn.Linear(4, self.config.vocab, bias=False)
        head.weight = emb.weight
        return nn.ModuleDict({"emb": emb, "head": head})

    def fit(self, data, *, max_steps=1):
        return self

    def sample(self, tokens):
        return self.network["head"](self.network["emb"](tokens))

    def evaluate(self, data):
        return {}


def test_tied_weights_save_and_stay_tied_after_load(tmp_path):
    model = Tied()
    with torch.no_grad():
        model.network["emb"].weight.mul_(3.0)
    model.save(tmp_path / "run")
    again = Tied.load(tmp_path / "run")
    tokens = torch.tensor([0, 3, 4])
    assert torch.equal(again.sample(tokens), model.sample(tokens))
    assert again.network["head"].weight is again.network["emb"].weight
