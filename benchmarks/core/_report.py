"""Markdown tables of a benchmark result (ratios are ours / peer)."""

from __future__ import annotations


def _f(v, nd=4):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}" if abs(v) < 1e4 else f"{v:.3g}"
    return str(v)


def _ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def _table(head, body):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_f(c) if not isinstance(c, str) else c for c in r) + " |" for r in body]
    return "\n".join(lines)


def _pick(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def _one(rows, **kw):
    got = _pick(rows, **kw)
    return got[0] if got else None


def training_table(res):
    body = []
    for ds in dict.fromkeys(r["dataset"] for r in res["training"]):
        tr = {(r["family"], r["trainer"]): r for r in res["training"] if r["dataset"] == ds}
        for (fam, name), r in tr.items():
            if fam != "flow_interleaved":
                body.append([ds, fam, name, r["steps_per_s"], r["steady_steps_per_s"], r["final_loss"]])
        peer = tr.get(("flow", "torchcfm_plain"))
        for name in ("ours_fit", "ours_plain"):
            o = tr.get(("flow", name))
            if o and peer:
                body.append([ds, "flow", f"**ratio {name} / torchcfm_plain**", _ratio(o["steps_per_s"], peer["steps_per_s"]),
                             _ratio(o["steady_steps_per_s"], peer["steady_steps_per_s"]), "-"])
    out = _table(["dataset", "family", "trainer", "steps/s (incl. set-up)", "steps/s (steady)", "final loss"], body)
    inter = [r for r in res["training"] if r["family"] == "flow_interleaved"]
    if inter:
        body = []
        for ds in dict.fromkeys(r["dataset"] for r in inter):
            tr = {r["trainer"]: r for r in inter if r["dataset"] == ds}
            peer = tr.get("torchcfm_plain")
            for name, r in tr.items():
                ratio = _ratio(r["median_steps_per_s"], peer["median_steps_per_s"]) if peer else None
                body.append([ds, name, r["median_steps_per_s"], ", ".join(map(str, r["all_steps_per_s"])), ratio])
        out += ("\n\nInterleaved steady-state throughput (flow matching; each trainer in turn on a fresh model, "
                "median of the repetitions; the robust number on a shared machine):\n\n")
        out += _table(["dataset", "trainer", "median steps/s", "repetitions", "ratio / torchcfm_plain"], body)
    return out


def diffusion_table(res):
    rows = _pick(res["samples"], family="diffusion")
    body = []
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        for nfe in sorted({r["budget"] for r in rows if r["dataset"] == ds}):
            for method, peer in (("dpmpp_2m", "diffusers_dpm"), ("unipc", "diffusers_unipc"), ("ddim", "diffusers_ddim")):
                ours = _pick(rows, dataset=ds, budget=nfe, side="ours", method=method)
                peers = _pick(rows, dataset=ds, budget=nfe, side="peer", method=peer)
                if not ours or not peers:
                    continue
                u = _one(ours, grid="uniform")
                m = _one(ours, grid="matched")
                ob = min(ours, key=lambda r: r["w2"])
                pd = _one(peers, grid="default")
                pb = min(peers, key=lambda r: r["w2"])
                body.append([ds, nfe, method, u["w2"], m["w2"], f"{ob['w2']:.4f} ({ob['grid']})", peer,
                             pd["w2"], f"{pb['w2']:.4f} ({pb['grid']})", _ratio(u["w2"], pd["w2"]),
                             _ratio(m["w2"], pd["w2"]), _ratio(ob["w2"], pb["w2"])])
    return _table(["dataset", "NFE", "ours", "W2 uniform", "W2 matched", "W2 best grid", "peer", "W2 default",
                   "W2 best variant", "ratio uniform/default", "ratio matched/default", "ratio best/best"], body)


def flow_solver_table(res):
    rows = _pick(res["samples"], family="flow")
    body = []
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        for model in ("ours_fit", "ours_plain", "torchcfm_plain"):
            for nfe in sorted({r["budget"] for r in rows if r["dataset"] == ds and r["budget"] is not None}):
                for method, peer in (("euler", "euler"), ("heun", "midpoint"), ("rk4", "rk4")):
                    o = _one(rows, dataset=ds, model=model, budget=nfe, side="ours", method=method)
                    p = _one(rows, dataset=ds, model=model, budget=nfe, side="peer", method=f"torchdiffeq_{peer}")
                    if o and p:
                        body.append([ds, model, nfe, f"{method} ({o['nfe']})", o["w2"], f"{peer} ({p['nfe']})",
                                     p["w2"], _ratio(o["w2"], p["w2"])])
    return _table(["dataset", "trained by", "budget", "ours (NFE)", "W2 ours", "torchdiffeq (NFE)", "W2 peer",
                   "ratio"], body)


def dopri_table(res):
    rows = _pick(res["samples"], family="flow")
    body = []
    for r in _pick(rows, method="torchdiffeq_dopri5"):
        ours = [o for o in _pick(rows, dataset=r["dataset"], model=r["model"], side="ours") if o["nfe"] <= r["nfe"]]
        best = min(ours, key=lambda o: o["w2"]) if ours else None
        body.append([r["dataset"], r["model"], f"{r['tol']:g}", r["nfe"], r["w2"],
                     f"{best['method']} ({best['nfe']})" if best else "-", best["w2"] if best else None,
                     _ratio(best["w2"], r["w2"]) if best else None])
    return _table(["dataset", "trained by", "dopri5 rtol=atol", "NFE", "W2 dopri5", "our best at <= NFE",
                   "W2 ours", "ratio"], body)


def training_quality_table(res):
    rows = _pick(res["samples"], family="flow")
    body = []
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        top = max(r["budget"] for r in rows if r["dataset"] == ds and r["budget"] is not None)
        for side, method, budget, tol in (("ours", "rk4", top, None), ("peer", "torchdiffeq_rk4", top, None),
                                          ("peer", "torchdiffeq_dopri5", None, min(r.get("tol") or 1 for r in rows))):
            o = _one(rows, dataset=ds, model="ours_fit", side=side, method=method, budget=budget,
                     **({"tol": tol} if tol else {}))
            q = _one(rows, dataset=ds, model="ours_plain", side=side, method=method, budget=budget,
                     **({"tol": tol} if tol else {}))
            p = _one(rows, dataset=ds, model="torchcfm_plain", side=side, method=method, budget=budget,
                     **({"tol": tol} if tol else {}))
            if o and p and q:
                label = f"{method} (NFE {o['nfe']}/{q['nfe']}/{p['nfe']})"
                body.append([ds, label, o["w2"], q["w2"], p["w2"], _ratio(o["w2"], p["w2"]), _ratio(q["w2"], p["w2"])])
    return _table(["dataset", "solver", "W2 ours_fit model", "W2 ours_plain model", "W2 torchcfm model",
                   "ratio fit/torchcfm", "ratio plain/torchcfm"], body)


def render(res) -> str:
    m = res["meta"]
    a = m["args"]
    floors = ", ".join(f"{k}: {v:.4f}" for k, v in res["floors"].items())
    parts = [
        "# scigen.core engine benchmark",
        f"steps={a['steps']} batch={a['batch_size']} lr={a['lr']} width={a['width']} depth={a['depth']} "
        f"n_train={a['n_train']} n_samples={a['n_samples']} threads={a['threads']} seed={a['seed']}; "
        f"torch {m['torch']}, {m['versions']}; load avg start {m['loadavg_start'][0]:.1f}, "
        f"end {m['loadavg_end'][0]:.1f}; wall {m['wall_s']:.0f} s.",
        f"W2 is exact (POT emd2), W2 not W2²; floor (two held-out draws of the same size): {floors}.",
        "Ratios are ours / peer: W2 ratio < 1 = ours better; steps/s ratio > 1 = ours faster.",
        "## Training throughput", training_table(res),
        "## Diffusion samplers (one eps model, VPLinear; same noise)",
        "`uniform`: our time_grid('uniform'); `matched`: diffusers' own time points; best = min over our grids "
        "(uniform, logsnr, edm, matched) and over diffusers variants (default, karras, lu / trailing).",
        diffusion_table(res),
        "## Flow-matching solvers (same model, same noise)", flow_solver_table(res),
        "## dopri5 (adaptive) vs our fixed-step solvers at no more NFE", dopri_table(res),
        "## Flow-matching training: our loss + fit vs torchcfm (same steps, batch, lr, seed)",
        training_quality_table(res),
    ]
    return "\n\n".join(parts) + "\n"
