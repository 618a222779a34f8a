"""Bookshelf reader and writer (``.aux .nodes .nets .pl .scl .wts``; UCLA/ISPD 2005 placement format).

Format (Caldwell, Kahng & Markov, "Toward CAD-IP reuse: the MARCO GSRC bookshelf", 2000; ISPD 2005
contest files): ``.nodes`` lists ``name w h [terminal|terminal_NI]``; ``.nets`` lists ``NetDegree : k
[name]`` followed by k pin lines ``object I|O|B [: dx dy]`` with offsets from the object **centre**;
``.pl`` lists ``name x y : orient [/FIXED|/FIXED_NI]`` with ``(x, y)`` the **lower-left** corner;
``.scl`` lists ``CoreRow Horizontal ... End`` blocks; ``.wts`` lists ``name weight``.

:func:`read_bookshelf` returns a :class:`~scigen.placement.netlist.Netlist`; :func:`write_bookshelf`
writes one back. Numbers are written with ``repr`` (integers without a decimal point), so
``read(write(netlist))`` reproduces every array bit for bit. Every error is a
:class:`BookshelfError` naming the file and line.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_write_text
from scigen.placement.netlist import Netlist, Row

__all__ = ["BookshelfError", "read_bookshelf", "write_bookshelf", "write_pl"]


class BookshelfError(InvalidInputError):
    """A Bookshelf file that cannot be read or that disagrees with the others (file and line named)."""


def _err(path: Path, line: int | None, msg: str) -> BookshelfError:
    return BookshelfError(f"{path}:{line}: {msg}" if line else f"{path}: {msg}")


def _lines(path: Path):
    """Yield ``(line_number, tokens)`` for non-empty, non-comment lines after the ``UCLA`` header."""
    if not path.is_file():
        raise _err(path, None, "file not found")
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, raw in enumerate(f, 1):
            if "\x00" in raw or "\ufffd" in raw:
                raise _err(path, i, "not a UTF-8 text Bookshelf file (binary content)")
            line = raw.split("#", 1)[0].strip()
            if not line or line.startswith("UCLA"):
                continue
            yield i, line


def _float(tok: str, path: Path, line: int, what: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise _err(path, line, f"{what} must be a number, got {tok!r}") from None
    if not np.isfinite(v):
        raise _err(path, line, f"{what} must be finite, got {tok!r}")
    return v


def _num(x: float) -> str:
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


# ---------------------------------------------------------------------------------------------- read
def _read_aux(aux: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for ln, line in _lines(aux):
        if ":" not in line:
            raise _err(aux, ln, f"expected 'RowBasedPlacement : a.nodes a.nets ...', got {line!r}")
        for name in line.split(":", 1)[1].split():
            ext = Path(name).suffix.lower().lstrip(".")
            if ext in files:
                raise _err(aux, ln, f"two .{ext} files listed")
            files[ext] = aux.parent / name
    for ext in ("nodes", "nets", "pl", "scl"):
        if ext not in files:
            raise _err(aux, None, f"no .{ext} file listed (needs .nodes, .nets, .pl and .scl)")
    for ext, f in files.items():
        if not f.is_file():
            raise _err(aux, None, f"the listed .{ext} file {f} does not exist")
    return files


def _declared(tok: list[str], path: Path, ln: int, declared: dict) -> None:
    """Record a ``NumX : n`` header (checked against the records read by :func:`_check_declared`)."""
    vals = [t for t in tok[1:] if t != ":"]
    if not vals:
        raise _err(path, ln, f"{tok[0]} without a value")
    n = _float(vals[0], path, ln, tok[0])
    if n < 0 or n != int(n):
        raise _err(path, ln, f"{tok[0]} must be a non-negative integer, got {vals[0]!r}")
    declared[tok[0]] = (int(n), ln)


def _check_declared(path: Path, declared: dict, found: dict) -> None:
    """A ``NumX`` header that disagrees with the records is an error (a truncated or hand-edited file is not
    read as a smaller design)."""
    for key, n in found.items():
        if key in declared and declared[key][0] != n:
            raise _err(path, declared[key][1], f"{key} declares {declared[key][0]} but the file has {n} "
                                               "(truncated or edited?); fix the header or the records")


def _read_nodes(path: Path):
    names, sizes, term, term_ni, lines = [], [], [], [], []
    index: dict[str, int] = {}
    declared: dict = {}
    for ln, line in _lines(path):
        tok = line.replace(":", " : ").split()
        if tok[0] in ("NumNodes", "NumTerminals"):
            _declared(tok, path, ln, declared)
            continue
        if len(tok) < 3:
            raise _err(path, ln, f"expected 'name width height [terminal]', got {line!r}")
        name = tok[0]
        if name in index:
            raise _err(path, ln, f"duplicated object name {name!r} (first on line {lines[index[name]]})")
        w = _float(tok[1], path, ln, f"width of {name!r}")
        h = _float(tok[2], path, ln, f"height of {name!r}")
        if w < 0 or h < 0:
            raise _err(path, ln, f"object {name!r} has a negative size ({tok[1]} x {tok[2]})")
        kind = tok[3] if len(tok) > 3 else ""
        if kind not in ("", "terminal", "terminal_NI"):
            raise _err(path, ln, f"unknown node kind {kind!r} (expected terminal or terminal_NI)")
        index[name] = len(names)
        names.append(name)
        sizes.append((w, h))
        term.append(kind != "")
        term_ni.append(kind == "terminal_NI")
        lines.append(ln)
    if not names:
        raise _err(path, None, "no objects in the .nodes file (the netlist is empty)")
    _check_declared(path, declared, {"NumNodes": len(names), "NumTerminals": int(sum(term))})
    return names, index, np.array(sizes, dtype=np.float64).reshape(-1, 2), np.array(term, bool), \
        np.array(term_ni, bool), lines


def _read_nets(path: Path, index: dict[str, int]):
    pin_obj, pin_off, pin_dir, pin_order, ptr, net_names = [], [], [], [], [0], []
    cur: list[tuple[int, float, float, str]] = []
    expected, header_ln = None, None
    declared: dict = {}

    def close():
        if expected is None:
            return
        if len(cur) != expected:
            raise _err(path, header_ln, f"net {net_names[-1]!r} declares NetDegree {expected} but has {len(cur)} pins")
        drv = next((k for k, c in enumerate(cur) if c[3] == "O"), 0)
        order = [drv] + [k for k in range(len(cur)) if k != drv]
        for k in order:
            o, dx, dy, d = cur[k]
            pin_obj.append(o)
            pin_off.append((dx, dy))
            pin_dir.append(d)
            pin_order.append(k)
        ptr.append(len(pin_obj))

    for ln, line in _lines(path):
        tok = line.replace(":", " : ").split()
        if tok[0] in ("NumNets", "NumPins"):
            _declared(tok, path, ln, declared)
            continue
        if tok[0] == "NetDegree":
            close()
            rest = [t for t in tok[1:] if t != ":"]
            if not rest:
                raise _err(path, ln, "NetDegree without a pin count")
            try:
                expected = int(rest[0])
            except ValueError:
                raise _err(path, ln, f"NetDegree must be an integer, got {rest[0]!r}") from None
            if expected < 0:
                raise _err(path, ln, f"NetDegree must be >= 0, got {expected}")
            net_names.append(rest[1] if len(rest) > 1 else f"net{len(net_names)}")
            header_ln, cur = ln, []
            continue
        if expected is None:
            raise _err(path, ln, f"pin line before any 'NetDegree' header: {line!r}")
        name = tok[0]
        if name not in index:
            raise _err(path, ln, f"net {net_names[-1]!r} names unknown object {name!r} (not in the .nodes file)")
        d = tok[1] if len(tok) > 1 and tok[1] != ":" else "B"
        if d not in ("I", "O", "B"):
            raise _err(path, ln, f"pin direction must be I, O or B, got {d!r}")
        dx = dy = 0.0
        if ":" in tok:
            k = tok.index(":")
            if len(tok) < k + 3:
                raise _err(path, ln, f"expected ': dx dy' pin offsets, got {line!r}")
            dx = _float(tok[k + 1], path, ln, "pin x offset")
            dy = _float(tok[k + 2], path, ln, "pin y offset")
        cur.append((index[name], dx, dy, d))
    close()
    if not net_names:
        raise _err(path, None, "no nets (NetDegree blocks) in the .nets file (the netlist is empty)")
    _check_declared(path, declared, {"NumNets": len(net_names), "NumPins": len(pin_obj)})
    return (np.array(pin_obj, np.int64), np.array(pin_off, np.float64).reshape(-1, 2), pin_dir,
            np.array(pin_order, np.int64), np.array(ptr, np.int64), net_names)


_ORIENTS = ("N", "S", "E", "W", "FN", "FS", "FE", "FW")


def _read_pl(path: Path, index: dict[str, int], v: int, ignore_orientation: bool = False):
    ll = np.full((v, 2), np.nan)
    orient = ["N"] * v
    fixed = np.zeros(v, bool)
    seen: dict[int, int] = {}
    for ln, line in _lines(path):
        tok = line.replace(":", " : ").split()
        if len(tok) < 3:
            raise _err(path, ln, f"expected 'name x y : orient [/FIXED]', got {line!r}")
        name = tok[0]
        if name not in index:
            raise _err(path, ln, f"unknown object {name!r} (not in the .nodes file)")
        i = index[name]
        if i in seen:
            raise _err(path, ln, f"object {name!r} is placed twice (first on line {seen[i]})")
        seen[i] = ln
        ll[i] = (_float(tok[1], path, ln, "x"), _float(tok[2], path, ln, "y"))
        rest = [t for t in tok[3:] if t != ":"]
        for t in rest:
            if t.startswith("/"):
                if t not in ("/FIXED", "/FIXED_NI"):
                    raise _err(path, ln, f"unknown flag {t!r} (expected /FIXED or /FIXED_NI)")
                fixed[i] = True
            else:
                if t not in _ORIENTS:
                    raise _err(path, ln, f"unknown orientation {t!r} of {name!r} (expected one of {', '.join(_ORIENTS)})")
                if t != "N" and not ignore_orientation:
                    raise _err(path, ln, f"object {name!r} has orientation {t}; sizes and pin offsets are read as "
                                         "given (the N frame) and no rotation or flip is applied, so its pins would be "
                                         "misplaced: re-orient the design to N, or pass ignore_orientation=True (CLI "
                                         "--ignore-orientation) to read every object as N (the orientation is kept and written back)")
                orient[i] = t
    return ll, orient, fixed


_ROW_KEYS = {"coordinate": "coordinate", "height": "height", "sitewidth": "sitewidth",
             "sitespacing": "sitespacing", "siteorient": "siteorient", "sitesymmetry": "sitesymmetry"}


def _read_scl(path: Path) -> list[Row]:
    rows: list[Row] = []
    cur: dict | None = None
    start = 0
    declared: dict = {}
    for ln, line in _lines(path):
        tok = line.replace(":", " : ").split()
        key = tok[0].lower()
        if key == "numrows":
            _declared(["NumRows"] + tok[1:], path, ln, declared)
            continue
        if key == "corerow":
            if cur is not None:
                raise _err(path, ln, "CoreRow inside another CoreRow (missing End)")
            cur, start = {"direction": tok[1] if len(tok) > 1 else "Horizontal"}, ln
            continue
        if cur is None:
            raise _err(path, ln, f"{tok[0]!r} outside a CoreRow block")
        if key == "end":
            for need in ("coordinate", "height", "num_sites"):
                if need not in cur:
                    raise _err(path, start, f"CoreRow without {need}")
            if cur["height"] <= 0:
                raise _err(path, start, f"row height must be > 0, got {cur['height']}")
            rows.append(Row(**cur))
            cur = None
            continue
        vals = [t for t in tok[1:] if t != ":"]
        if key == "subroworigin":
            if len(vals) < 3 or vals[1].lower() != "numsites":
                raise _err(path, ln, f"expected 'SubrowOrigin : x NumSites : n', got {line!r}")
            cur["subrow_origin"] = _float(vals[0], path, ln, "SubrowOrigin")
            n = _float(vals[2], path, ln, "NumSites")
            if n <= 0 or n != int(n):
                raise _err(path, ln, f"NumSites must be a positive integer, got {vals[2]!r}")
            cur["num_sites"] = int(n)
        elif key in _ROW_KEYS:
            if not vals:
                raise _err(path, ln, f"{tok[0]} without a value")
            f = _ROW_KEYS[key]
            cur[f] = vals[0] if f in ("siteorient", "sitesymmetry") else _float(vals[0], path, ln, tok[0])
            if f in ("sitewidth", "sitespacing") and cur[f] <= 0:
                raise _err(path, ln, f"{tok[0]} must be > 0, got {vals[0]!r}")
        else:
            raise _err(path, ln, f"unknown row field {tok[0]!r}")
    if cur is not None:
        raise _err(path, start, "CoreRow block not closed by End")
    if not rows:
        raise _err(path, None, "no CoreRow in the .scl file (the canvas is undefined)")
    _check_declared(path, declared, {"NumRows": len(rows)})
    return rows


def _read_wts(path: Path, index: dict[str, int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for ln, line in _lines(path):
        tok = line.split()
        if len(tok) < 2:
            raise _err(path, ln, f"expected 'name weight', got {line!r}")
        w = _float(tok[1], path, ln, "weight")
        if tok[0] not in index:
            raise _err(path, ln, f"weight for unknown object {tok[0]!r} (not in the .nodes file)")
        if tok[0] in out:
            raise _err(path, ln, f"object {tok[0]!r} is weighted twice")
        out[tok[0]] = w
    return out


def read_bookshelf(aux_path: str | os.PathLike, *, ignore_orientation: bool = False) -> Netlist:
    """Read the design listed in ``aux_path`` into a :class:`Netlist` (chip units).

    The canvas is the bounding box of the ``.scl`` rows. Raises :class:`BookshelfError` (file and line
    named) for: a missing or binary file, an ``.aux`` naming a file that does not exist or no ``.scl``,
    malformed lines, non-numeric, non-finite or negative sizes, duplicated names, no objects or no nets,
    a net or ``.pl`` entry naming an unknown object, an object without a ``.pl`` position, a NetDegree
    that disagrees with its pins, a row without a positive integer NumSites, and a movable object larger
    than the canvas.
    """
    aux = Path(aux_path)
    if aux.is_dir():
        cands = sorted(aux.glob("*.aux"))
        if len(cands) != 1:
            raise _err(aux, None, f"expected exactly one .aux file in the directory, found {len(cands)}")
        aux = cands[0]
    if not aux.is_file():
        raise _err(aux, None, "file not found")
    files = _read_aux(aux)
    names, index, size, term, term_ni, node_lines = _read_nodes(files["nodes"])
    pin_obj, pin_off, pin_dir, pin_order, ptr, net_names = _read_nets(files["nets"], index)
    ll, orient, fixed = _read_pl(files["pl"], index, len(names), ignore_orientation)
    missing = np.nonzero(np.isnan(ll).any(1))[0]
    if missing.size:
        i = int(missing[0])
        raise _err(files["pl"], None, f"object {names[i]!r} (.nodes line {node_lines[i]}) has no position "
                                      f"({missing.size} objects missing)")
    rows = _read_scl(files["scl"])
    canvas = (min(r.subrow_origin for r in rows), min(r.coordinate for r in rows),
              max(r.x_hi for r in rows), max(r.coordinate + r.height for r in rows))
    cw, ch = canvas[2] - canvas[0], canvas[3] - canvas[1]
    for i in np.nonzero(~term & ((size[:, 0] > cw) | (size[:, 1] > ch)))[0]:
        raise _err(files["nodes"], node_lines[i], f"movable object {names[i]!r} ({_num(size[i, 0])} x "
                                                  f"{_num(size[i, 1])}) is larger than the canvas ({_num(cw)} x {_num(ch)})")
    weights = _read_wts(files["wts"], index) if "wts" in files else {}
    return Netlist(names=names, size=size, lower_left=ll, terminal=term, terminal_ni=term_ni,
                   fixed=fixed | term, orient=orient, pin_obj=pin_obj, pin_offset=pin_off, pin_dir=pin_dir,
                   net_ptr=ptr, net_names=net_names, pin_order=pin_order, rows=rows, canvas=canvas,
                   node_weights=weights, name=aux.stem)


# --------------------------------------------------------------------------------------------- write


def _pl_text(nl: Netlist) -> str:
    out = ["UCLA pl 1.0", ""]
    for i, nm in enumerate(nl.names):
        flag = (" /FIXED_NI" if nl.terminal_ni[i] else " /FIXED") if nl.fixed[i] else ""
        out.append(f"{nm}\t{_num(nl.lower_left[i, 0])}\t{_num(nl.lower_left[i, 1])}\t: {nl.orient[i]}{flag}")
    return "\n".join(out) + "\n"


def write_pl(nl: Netlist, path: str | os.PathLike) -> Path:
    """Write only the ``.pl`` (placement) of ``nl`` to ``path`` (atomically)."""
    return atomic_write_text(path, _pl_text(nl))


def write_bookshelf(nl: Netlist, out_dir: str | os.PathLike, name: str | None = None) -> Path:
    """Write ``nl`` as ``<name>.aux/.nodes/.nets/.pl/.scl/.wts`` into ``out_dir``; return the ``.aux`` path.

    Fixed non-terminal objects are written ``/FIXED`` in the ``.pl``; terminals keep their kind.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = name or nl.name
    v = nl.num_objects
    nodes = ["UCLA nodes 1.0", "", f"NumNodes : {v}", f"NumTerminals : {int(nl.terminal.sum())}"]
    for i, nm in enumerate(nl.names):
        kind = ("\tterminal_NI" if nl.terminal_ni[i] else "\tterminal") if nl.terminal[i] else ""
        nodes.append(f"\t{nm}\t{_num(nl.size[i, 0])}\t{_num(nl.size[i, 1])}{kind}")
    nets = ["UCLA nets 1.0", "", f"NumNets : {nl.num_nets}", f"NumPins : {nl.num_pins}"]
    for n in range(nl.num_nets):
        s, e = int(nl.net_ptr[n]), int(nl.net_ptr[n + 1])
        nets.append(f"NetDegree : {e - s}\t{nl.net_names[n]}")
        for p in sorted(range(s, e), key=lambda q: nl.pin_order[q]):
            nets.append(f"\t{nl.names[nl.pin_obj[p]]}\t{nl.pin_dir[p]} : "
                        f"{_num(nl.pin_offset[p, 0])}\t{_num(nl.pin_offset[p, 1])}")
    scl = ["UCLA scl 1.0", "", f"NumRows : {len(nl.rows)}", ""]
    for r in nl.rows:
        scl += [f"CoreRow {r.direction}", f"  Coordinate    :  {_num(r.coordinate)}", f"  Height        :  {_num(r.height)}",
                f"  Sitewidth     :  {_num(r.sitewidth)}", f"  Sitespacing   :  {_num(r.sitespacing)}",
                f"  Siteorient    :  {r.siteorient}", f"  Sitesymmetry  :  {r.sitesymmetry}",
                f"  SubrowOrigin  :  {_num(r.subrow_origin)}\tNumSites  :  {int(r.num_sites)}", "End"]
    wts = ["UCLA wts 1.0", ""] + [f"\t{k}\t{_num(w)}" for k, w in nl.node_weights.items()]
    files = {"nodes": nodes, "nets": nets, "wts": wts, "pl": None, "scl": scl}
    for ext, lines in files.items():
        text = _pl_text(nl) if ext == "pl" else "\n".join(lines) + "\n"
        atomic_write_text(out / f"{name}.{ext}", text)
    aux = out / f"{name}.aux"
    atomic_write_text(aux, f"RowBasedPlacement :  {name}.nodes  {name}.nets  {name}.wts  {name}.pl  {name}.scl\n")
    return aux
