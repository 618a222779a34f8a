"""Bookshelf reader / writer: parsed values, lossless round trips, errors naming file and line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.placement.bookshelf import BookshelfError, read_bookshelf, write_bookshelf
from scigen.placement.macro_only import macro_only, merge_macro_positions
from scigen.placement.synthetic import SynthConfig, generate_netlist

from .conftest import NETS, NODES, PL, SCL


def _same(a, b):
    assert a.names == b.names and a.orient == b.orient and a.pin_dir == b.pin_dir and a.net_names == b.net_names
    for f in ("size", "lower_left", "terminal", "terminal_ni", "fixed", "pin_obj", "pin_offset", "net_ptr",
              "pin_order"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert a.canvas == b.canvas and a.rows == b.rows and a.node_weights == b.node_weights


def test_read_values(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    assert nl.num_objects == 5 and nl.num_nets == 2 and nl.num_pins == 5
    assert nl.canvas == (0.0, 0.0, 100.0, 100.0)  # bounding box of the rows at y = 0 and y = 90
    i = nl.names.index("c")
    np.testing.assert_allclose(nl.pos[i], [50 + 20, 50 + 10])  # centre = lower-left + size / 2
    assert nl.orient[i] == "N"
    assert nl.fixed.tolist() == [False, False, False, True, True]
    assert nl.is_port.tolist() == [False, False, False, True, False]  # m is a fixed macro (30 > row 10)
    assert nl.is_macro.tolist() == [True, False, True, False, True]   # b (height 10) is one row tall
    # driver (the O pin) first: net n0 = b, a, p0
    assert [nl.names[o] for o in nl.pin_obj[:3]] == ["b", "a", "p0"]
    np.testing.assert_array_equal(nl.pin_offset[1], [5, -5])
    assert nl.node_weights == {"a": 1.0, "b": 2.5}


def test_round_trip_hand_file(tiny_aux, tmp_path):
    nl = read_bookshelf(tiny_aux)
    nl2 = read_bookshelf(write_bookshelf(nl, tmp_path / "out"))
    _same(nl, nl2)
    # pin order within nets restored: a before b in n0 as in the source file
    text = (tmp_path / "out" / "t.nets").read_text().split()
    assert text.index("a") < text.index("b")


@pytest.mark.parametrize("seed", [0, 1])
def test_round_trip_generated(seed, tmp_path):
    nl = generate_netlist(seed, SynthConfig.for_size(25))
    nl2 = read_bookshelf(write_bookshelf(nl, tmp_path))
    _same(nl, nl2)
    nl3 = read_bookshelf(write_bookshelf(nl2, tmp_path / "again"))
    _same(nl2, nl3)


def test_graph_normalisation_round_trip(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    g = nl.to_graph()
    # canvas (0,0,100,100) -> [-1,1]^2: x_n = 2 x / 100 - 1
    i = nl.names.index("c")
    np.testing.assert_allclose(g.pos[i].numpy(), [2 * 70 / 100 - 1, 2 * 60 / 100 - 1], rtol=1e-6)
    np.testing.assert_allclose(g.x[i].numpy(), [2 * 40 / 100, 2 * 20 / 100], rtol=1e-6)
    np.testing.assert_allclose(nl.denormalize_pos(g.pos.double()), nl.pos, atol=1e-4)
    # star edges: n0 has driver b and sinks a, p0; n1 driver c, sink m -> 3 forward + 3 reversed
    assert g.edge_index.shape == (2, 6)
    fwd = g.edge_index[:, :3].t().tolist()
    b, a, p0, c, m = (nl.names.index(k) for k in ("b", "a", "p0", "c", "m"))
    assert fwd == [[b, a], [b, p0], [c, m]]
    assert g.edge_index[:, 3:].t().tolist() == [[a, b], [p0, b], [m, c]]
    np.testing.assert_allclose(g.edge_attr[0].numpy(), [0, 0, 2 * 5 / 100, 2 * -5 / 100], atol=1e-7)
    np.testing.assert_allclose(g.edge_attr[3].numpy(), [2 * 5 / 100, 2 * -5 / 100, 0, 0], atol=1e-7)
    assert g.is_ports.tolist() == nl.is_port.tolist()


def test_macro_only_keeps_pads_as_fixed_pins_and_reroots_orphaned_nets(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    sub, keep = macro_only(nl)
    assert [nl.names[k] for k in keep] == ["a", "c", "p0", "m"]  # the cell b is dropped, the pad p0 kept
    # n0 (driver b, sinks a and p0) loses its driver -> re-rooted on a or p0 and kept; n1 (c -> m) kept
    assert sub.net_names == ["n0", "n1"] and sub.num_pins == 4
    assert sorted(sub.names[o] for o in sub.pin_obj[:2]) == ["a", "p0"]
    assert sub.fixed.tolist() == [False, False, True, True] and sub.is_port.tolist() == [False, False, True, False]
    np.testing.assert_allclose(sub.pos, nl.pos[keep])  # pads and terminals where they were
    moved = sub.with_positions(sub.pos + np.array([[1.0, 1.0]] * 2 + [[0.0, 0.0]] * 2))
    full = merge_macro_positions(nl, moved, keep)
    np.testing.assert_allclose(full.pos[keep[:2]], nl.pos[keep[:2]] + 1.0)
    np.testing.assert_allclose(full.pos[[1, 3, 4]], nl.pos[[1, 3, 4]])  # b, p0 and the fixed macro unchanged


def test_macro_only_nets_between_macros_and_pads_keep_their_exact_wirelength(tmp_path, design):
    """A macro whose only net goes to a pad keeps that net (the pad a fixed pin): for any macro positions
    the HPWL of every cell-free net is the same in the full and the macro-only netlist."""
    nets = ("UCLA nets 1.0\nNetDegree : 2 n0\n  a O : 1 2\n  p0 I\nNetDegree : 2 n1\n  c O\n  b I\n"
            "NetDegree : 2 n2\n  p0 O\n  m I\n")
    nl = read_bookshelf(design(tmp_path, {"nets": nets}))
    sub, keep = macro_only(nl)
    assert sub.net_names == ["n0", "n2"]  # n1 touches the cell b and only one macro: gone
    rng = np.random.default_rng(0)
    for _ in range(5):
        pos = nl.pos.copy()
        pos[[0, 2]] = rng.uniform(0, 100, (2, 2))  # move the movable macros a and c anywhere
        placed = sub.with_positions(pos[keep])
        cell_free = np.array([0, 2])
        for j, n in enumerate(cell_free):
            s, e = nl.net_ptr[n], nl.net_ptr[n + 1]
            pins = pos[nl.pin_obj[s:e]] + nl.pin_offset[s:e]
            ss, ee = sub.net_ptr[j], sub.net_ptr[j + 1]
            sub_pins = placed.pos[sub.pin_obj[ss:ee]] + sub.pin_offset[ss:ee]
            want = float((pins.max(0) - pins.min(0)).sum())
            assert abs(float((sub_pins.max(0) - sub_pins.min(0)).sum()) - want) < 1e-9


def test_a_macro_tied_to_a_pad_is_placed_next_to_it(tmp_path, design):
    """The macro-only placement of a macro whose only net goes to the pad at (0, 100) ends near that pad
    (before pads were kept, the net vanished and the macro landed anywhere)."""
    from scigen.placement.baselines import analytical

    nets = "UCLA nets 1.0\nNetDegree : 2 n0\n  a O\n  p0 I\nNetDegree : 2 n1\n  c O\n  b I\n"
    nl = read_bookshelf(design(tmp_path, {"nets": nets}))
    sub, keep = macro_only(nl)
    placed, _ = analytical(sub, seed=0)
    a, p0 = sub.names.index("a"), sub.names.index("p0")
    np.testing.assert_allclose(placed.pos[p0], nl.pos[nl.names.index("p0")])
    gap = np.abs(placed.pos[a] - placed.pos[p0]).sum()
    far = np.abs(np.array([nl.canvas[2], nl.canvas[1]]) - placed.pos[p0]).sum()  # the opposite corner
    assert gap < 0.5 * far, (gap, far)


def test_macro_only_reroots_driver(tmp_path, design):
    nets = "UCLA nets 1.0\nNetDegree : 3 n0\n  b O : 0 0\n  a I : 1 1\n  c I : 2 2\n"
    nl = read_bookshelf(design(tmp_path, {"nets": nets}))
    sub, keep = macro_only(nl)
    assert sub.num_nets == 1 and sub.num_pins == 2
    assert sorted(sub.names[o] for o in sub.pin_obj) == ["a", "c"]


BAD = [
    ({"nets": "UCLA nets 1.0\nNetDegree : 2 n0\n  a O\n  zz I\n"}, "t.nets:4", "unknown object 'zz'"),
    ({"nodes": "UCLA nodes 1.0\n a 1 1\n b -2 1\n"}, "t.nodes:3", "negative size"),
    ({"nodes": "UCLA nodes 1.0\n a 1 1\n a 2 2\n"}, "t.nodes:3", "duplicated object name 'a'"),
    ({"nodes": "UCLA nodes 1.0\n a 1 1\n b 200 5\n c 1 1\n p0 0 0 terminal\n m 1 1 terminal\n"}, "t.nodes:3",
     "larger than the canvas"),
    ({"pl": "UCLA pl 1.0\na 0 0 : N\nq 1 1 : N\n"}, "t.pl:3", "unknown object 'q'"),
    ({"nets": "UCLA nets 1.0\nNetDegree : 3 n0\n  a O\n  b I\n"}, "t.nets:2", "NetDegree 3 but has 2"),
    ({"pl": "UCLA pl 1.0\na x 0 : N\n"}, "t.pl:2", "x must be a number"),
]


@pytest.mark.parametrize("files,where,what", BAD)
def test_bad_files_name_file_and_line(tmp_path, design, files, where, what):
    aux = design(tmp_path, files)
    with pytest.raises(BookshelfError) as e:
        read_bookshelf(aux)
    assert where in str(e.value) and what in str(e.value)


def test_missing_scl(tmp_path, design):
    aux = design(tmp_path, aux_exts=("nodes", "nets", "pl"))
    with pytest.raises(BookshelfError, match=r"t\.aux: no \.scl file listed"):
        read_bookshelf(aux)
    aux = design(tmp_path)
    (tmp_path / "t.scl").unlink()
    with pytest.raises(BookshelfError, match="does not exist"):
        read_bookshelf(aux)


def test_missing_position(tmp_path, design):
    with pytest.raises(BookshelfError, match="object 'c' .*has no position"):
        read_bookshelf(design(tmp_path, {"pl": "UCLA pl 1.0\na 0 0\nb 0 0\np0 0 0\nm 0 0\n"}))


def test_pin_tensors_normalized(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    off, obj, ptr = nl.pin_tensors(normalized=True)
    assert torch.allclose(off[1], torch.tensor([5 * 2 / 100, -5 * 2 / 100], dtype=torch.float64))


# ----------------------------------------------------------------------------- frictions (issue 37)
FRICTIONS = [
    # a truncated or hand-edited file is not read as a smaller design
    ({"nodes": NODES.replace("NumNodes : 5", "NumNodes : 6")}, "t.nodes:3", "NumNodes declares 6 but the file has 5"),
    ({"nodes": NODES.replace("NumTerminals : 2", "NumTerminals : 3")}, "t.nodes:4",
     "NumTerminals declares 3 but the file has 2"),
    ({"nets": NETS.replace("NumNets : 2", "NumNets : 3")}, "t.nets:2", "NumNets declares 3 but the file has 2"),
    ({"nets": NETS.replace("NumPins : 5", "NumPins : 7")}, "t.nets:3", "NumPins declares 7 but the file has 5"),
    ({"scl": SCL.replace("NumRows : 2", "NumRows : 10")}, "t.scl:2", "NumRows declares 10 but the file has 2"),
    ({"pl": PL + "a 5 5 : N\n"}, "t.pl:7", "object 'a' is placed twice (first on line 2)"),
    ({"wts": "UCLA wts 1.0\na 1\nghost 3\n"}, "t.wts:3", "weight for unknown object 'ghost'"),
    ({"pl": PL.replace("c 50 50 : N", "c 50 50 : FS")}, "t.pl:4",
     "object 'c' has orientation FS; sizes and pin offsets are read as given"),
    ({"pl": PL.replace("c 50 50 : N", "c 50 50 : NE")}, "t.pl:4", "unknown orientation 'NE'"),
]


@pytest.mark.parametrize("files,where,what", FRICTIONS)
def test_what_the_reader_would_guess_is_refused(tmp_path, design, files, where, what):
    aux = design(tmp_path, files)
    with pytest.raises(BookshelfError) as e:
        read_bookshelf(aux)
    assert where in str(e.value) and what in str(e.value)


def test_ignore_orientation_states_the_n_frame_and_round_trips(tmp_path, design):
    aux = design(tmp_path, {"pl": PL.replace("c 50 50 : N", "c 50 50 : FS")})
    nl = read_bookshelf(aux, ignore_orientation=True)
    (tmp_path / "n").mkdir()
    ref = read_bookshelf(design(tmp_path / "n"))
    np.testing.assert_array_equal(nl.pin_offset, ref.pin_offset)  # no flip applied: the N frame, as stated
    np.testing.assert_array_equal(nl.size, ref.size)
    assert nl.orient[nl.names.index("c")] == "FS"
    again = read_bookshelf(write_bookshelf(nl, tmp_path / "out"), ignore_orientation=True)
    _same(nl, again)
