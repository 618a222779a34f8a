"""Fixtures of the placement tests: a tiny hand-written Bookshelf design."""

from __future__ import annotations

import pytest

NODES = """UCLA nodes 1.0
# a comment
NumNodes : 5
NumTerminals : 2
  a   20  30
  b   10  10
  c   40  20
  p0  0   0   terminal
  m   30  30  terminal
"""
NETS = """UCLA nets 1.0
NumNets : 2
NumPins : 5
NetDegree : 3 n0
  a I : 5 -5
  b O : 0 0
  p0 I
NetDegree : 2 n1
  c O : -10 5
  m I : 2.5 0
"""
PL = """UCLA pl 1.0
a 0 0 : N
b 30 0 : N
c 50 50 : N
p0 0 100 : N /FIXED
m 60 0 : N /FIXED
"""
SCL = """UCLA scl 1.0
NumRows : 2
CoreRow Horizontal
  Coordinate : 0
  Height : 10
  Sitewidth : 1
  Sitespacing : 1
  Siteorient : 1
  Sitesymmetry : 1
  SubrowOrigin : 0 NumSites : 100
End
CoreRow Horizontal
  Coordinate : 90
  Height : 10
  Sitewidth : 1
  Sitespacing : 1
  Siteorient : 1
  Sitesymmetry : 1
  SubrowOrigin : 0 NumSites : 100
End
"""
WTS = """UCLA wts 1.0
a 1
b 2.5
"""
FILES = {"nodes": NODES, "nets": NETS, "pl": PL, "scl": SCL, "wts": WTS}


def write_design(d, files=None, aux_exts=("nodes", "nets", "wts", "pl", "scl")):
    files = dict(FILES, **(files or {}))
    for ext, text in files.items():
        (d / f"t.{ext}").write_text(text)
    (d / "t.aux").write_text("RowBasedPlacement : " + " ".join(f"t.{e}" for e in aux_exts) + "\n")
    return d / "t.aux"


@pytest.fixture
def design():
    """``design(dir, files=None, aux_exts=...)`` writes the tiny design with some files replaced."""
    return write_design


@pytest.fixture
def tiny_aux(tmp_path):
    return write_design(tmp_path)
