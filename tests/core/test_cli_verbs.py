"""The one helper every extra CLI verb is built from (issue 32, item 6): ``scigen.core.cli.verbs``."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from scigen.core.cli.verbs import extra_verb, n_samples_option

runner = CliRunner()


def _app(calls: list, **verb_kw) -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """test app"""

    @extra_verb(app, "make", out="Where the thing goes.", deprecated_flags={"--count": "n_samples"},
                deprecated_names=("build",), **verb_kw)
    def make(run: Path, out: Path, overwrite: bool, n_samples: int = n_samples_option(3, "How many."),
             tag: str = typer.Option("x", "--tag")) -> None:
        """Make a thing."""
        import torch

        calls.append({"run": run, "out": out, "overwrite": overwrite, "n_samples": n_samples, "tag": tag,
                      "threads": torch.get_num_threads()})
        if tag == "boom":
            raise ValueError("the tag went boom")

    return app


def test_the_common_options_are_added_and_threads_applied(tmp_path):
    import torch

    calls: list = []
    before = torch.get_num_threads()
    res = runner.invoke(_app(calls), ["make", "--run", "r", "--out", str(tmp_path / "o.txt"), "--threads", "2",
                                      "--n-samples", "5", "--tag", "t"])
    assert res.exit_code == 0, res.output
    assert calls == [{"run": Path("r"), "out": tmp_path / "o.txt", "overwrite": False, "n_samples": 5, "tag": "t",
                      "threads": 2}]
    assert torch.get_num_threads() == before  # restored after the verb
    shown = runner.invoke(_app([]), ["make", "--help"]).output
    for flag in ("--run", "--out", "--overwrite", "--threads", "--n-samples", "--tag"):
        assert flag in shown, flag
    assert "--count" not in shown  # deprecated flags are hidden
    assert "build" not in runner.invoke(_app([]), ["--help"]).output


def test_out_is_checked_before_any_work(tmp_path):
    calls: list = []
    existing = tmp_path / "o.txt"
    existing.write_text("keep")
    res = runner.invoke(_app(calls), ["make", "--run", "r", "--out", str(existing)])
    assert res.exit_code == 2 and "already exists; pass --overwrite" in res.output and calls == []
    res = runner.invoke(_app(calls), ["make", "--run", "r", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "is a directory" in res.output and calls == []
    res = runner.invoke(_app(calls), ["make", "--run", "r", "--out", str(existing), "--overwrite"])
    assert res.exit_code == 0 and calls[-1]["overwrite"] is True
    run_dir = tmp_path / "not_a_run"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine")
    res = runner.invoke(_app(calls, out_kind="run"), ["make", "--run", "r", "--out", str(run_dir), "--overwrite"])
    assert res.exit_code == 2 and "not a saved scigen run" in res.output and len(calls) == 1


def test_user_errors_in_the_body_are_one_line(tmp_path):
    res = runner.invoke(_app([]), ["make", "--run", "r", "--out", str(tmp_path / "o"), "--tag", "boom"])
    assert res.exit_code == 2 and "error: the tag went boom" in res.output and "Traceback" not in res.output


def test_deprecated_flags_and_verb_names_warn_and_still_work(tmp_path):
    calls: list = []
    res = runner.invoke(_app(calls), ["build", "--run", "r", "--out", str(tmp_path / "o"), "--count", "7"])
    assert res.exit_code == 0, res.output
    assert calls[-1]["n_samples"] == 7
    assert "warning: --count is deprecated" in res.output and "use --n-samples" in res.output
    assert "the verb 'build' is deprecated" in res.output and "use 'make'" in res.output


def test_a_deprecated_flag_must_feed_a_parameter_of_the_verb():
    app = typer.Typer()
    with pytest.raises(ValueError, match="does not take"):
        @extra_verb(app, "x", out="o", deprecated_flags={"--members": "n_samples"})
        def x(run: Path, out: Path, overwrite: bool) -> None:
            """x"""
