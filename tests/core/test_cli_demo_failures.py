"""``scigen demo`` when one demo cannot run: one line that says why and how to fix it, never a traceback,
the other demos still run, and the exit status says that not every demo succeeded (issue 34)."""

from __future__ import annotations

import io

from rich.console import Console

from scigen.core.cli import demo as demo_cli
from scigen.core.system import DemoResult


class _Spec:
    def __init__(self, domain, name, cls):
        self.domain, self.name, self._cls = domain, name, cls

    def load(self):
        return self._cls


class _NeedsData:
    @classmethod
    def demo(cls, out, *, quick, threads):
        raise ImportError("QM9 needs the optional qm9pack data wheel (224 MB): pip install 'scigen-molecules[qm9]'")


class _Broken:
    @classmethod
    def demo(cls, out, *, quick, threads):
        raise RuntimeError("shape mismatch in layer 3")


class _Fine:
    @classmethod
    def demo(cls, out, *, quick, threads):
        return DemoResult(metrics={"W2": 0.25}, files=[], seconds=0.1)


def _run(monkeypatch, tmp_path, debug="0"):
    monkeypatch.setenv("SCIGEN_DEBUG", debug)
    table = {"testing": {"a_needs_data": _Spec("testing", "a_needs_data", _NeedsData),
                         "b_broken": _Spec("testing", "b_broken", _Broken),
                         "c_fine": _Spec("testing", "c_fine", _Fine)}}
    monkeypatch.setattr(demo_cli, "discover", lambda: (table, []))
    buf = io.StringIO()
    code = demo_cli.run_demos(domain=None, quick=True, out=tmp_path, console=Console(file=buf, width=200))
    return code, buf.getvalue()


def test_a_demo_that_cannot_run_prints_one_line_with_the_fix_and_no_traceback(monkeypatch, tmp_path):
    code, text = _run(monkeypatch, tmp_path)
    assert code == 1  # not every demo ran: the quick start must not pretend it did
    assert "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith("testing/a_needs_data c")]
    assert lines == ["testing/a_needs_data cannot run here: QM9 needs the optional qm9pack data wheel (224 MB): "
                     "pip install 'scigen-molecules[qm9]'"]
    broken = [ln for ln in text.splitlines() if ln.startswith("testing/b_broken f")]
    assert broken == ["testing/b_broken failed: RuntimeError: shape mismatch in layer 3 "
                      "(scigen --debug demo shows the traceback)"]
    assert "unavailable" in text and "failed" in text
    assert "testing/c_fine" in text and "W2=0.25" in text  # the others still ran


def test_debug_shows_the_traceback(monkeypatch, tmp_path):
    code, text = _run(monkeypatch, tmp_path, debug="1")
    assert code == 1 and "Traceback" in text and "RuntimeError: shape mismatch" in text


def test_all_demos_ok_exits_zero(monkeypatch, tmp_path):
    monkeypatch.setattr(demo_cli, "discover", lambda: ({"testing": {"c": _Spec("testing", "c", _Fine)}}, []))
    code = demo_cli.run_demos(domain=None, quick=True, out=tmp_path, console=Console(file=io.StringIO()))
    assert code == 0
