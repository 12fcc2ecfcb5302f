"""A query adapter fitted per vault on its own sentences (docs/semantic.md, fifteenth pass; not kept).

Reads bench/lib/retrieval-centre-dump.ts's dump (passages, notes, queries) and
bench/lib/retrieval-ict-dump.ts's pairs (a sentence taken out of a passage, embedded as a query, and
that passage without it) and fits a 512 x 512 map W for the query side: InfoNCE over the vault's
passages (the pair's own passage the target, all the others negatives), W pulled toward the identity.
A query is then (1 - a) q + a unit(q W). Measured as retrieve()'s vector side (best passage + 0.25 x
note vector) on the tuning halves, the docs set and SciFact train, and in a rough hybrid (plain RRF
k 10 with the keyword side's top 100). --export writes W for bench/retrieval.ts's variant.
  python3 bench/lib/retrieval_ict.py [--hybrid | --export] [oh srd docs scifact-train]
"""
import json
import sys

import numpy as np

import retrieval_centre as rc


def load_pairs(name):
    meta = json.load(open(f"{rc.CACHE}/dumps/{name}.ict.json"))
    d, n = meta["dim"], len(meta["pairs"])
    a = np.fromfile(f"{rc.CACHE}/dumps/{name}.ict.f32", dtype=np.float32).reshape(2 * n, d).astype(np.float64)
    return a[:n], a[n:], np.array([p["row"] for p in meta["pairs"]])


def fit(S, P, rows, lam=0.01, tau=0.05, steps=300, lr=0.5):
    # Plain gradient descent on the softmax loss; lam keeps W near the identity (the model's own space).
    d = S.shape[1]
    W = np.eye(d)
    for _ in range(steps):
        L = (S @ W @ P.T) / tau
        L -= L.max(axis=1, keepdims=True)
        E = np.exp(L)
        E /= E.sum(axis=1, keepdims=True)
        E[np.arange(len(rows)), rows] -= 1
        W -= lr * (S.T @ (E @ P) / tau / len(rows) + lam * (W - np.eye(d)))
    return W


def fitted(name, P, **kw):
    S, _, rows = load_pairs(name)
    if len(P) <= 6000:
        return fit(S, P, rows, **kw)
    # SciFact's 23k passages: the pairs' own passages and 4,000 others as the negatives.
    cand = np.unique(np.r_[rows, np.random.default_rng(3).integers(0, len(P), 4000)])
    pos = {r: i for i, r in enumerate(cand)}
    return fit(S, P[cand], np.array([pos[r] for r in rows]), **kw)


def note_scores(meta, P, N, Q, owner, W, a):
    Qa = rc.unit((1 - a) * Q + a * rc.unit(Q @ W)) if a else Q
    best = rc.best_passages(meta, Qa @ P.T, owner, -np.inf)
    score = best + rc.NOTE_VECTOR * (Qa @ rc.unit(N).T)
    score[~np.isfinite(best)] = -np.inf
    return score


def rrf(meta, V, w):
    lists = []
    for i, q in enumerate(meta["queries"]):
        sc = {}
        for r, (row, _) in enumerate(q["keyword"]):
            sc[row] = sc.get(row, 0) + 1 / (10 + r + 1)
        for r, row in enumerate(np.argsort(-V[i])[:100]):
            sc[row] = sc.get(row, 0) + w / (10 + r + 1)
        lists.append([meta["docs"][row] for row, _ in sorted(sc.items(), key=lambda t: -t[1])])
    return lists


if __name__ == "__main__":
    args = sys.argv[1:]
    mode = args.pop(0) if args and args[0].startswith("--") else "--vector"
    for name in args or ["oh", "srd", "docs", "scifact-train"]:
        meta, P, N, Q, owner = rc.load(name)
        which = name.split("-")[0]
        if mode == "--export":
            W = fitted(name, P)
            W.astype(np.float32).tofile(f"{rc.CACHE}/dumps/{name}.adapter.f32")
            print(f"{name}: |W - I| = {np.linalg.norm(W - np.eye(W.shape[0])):.2f}", flush=True)
            continue
        print(f"\n## {name}")
        settings = [(0.05, 0.01), (0.05, 0.3), (0.1, 0.01), (0.1, 0.3)] if mode == "--vector" else [(0.05, 0.01)]
        raw = note_scores(meta, P, N, Q, owner, None, 0)
        if mode == "--hybrid":
            W = fitted(name, P)
            for w in (0.5, 1.0):
                for label, V in (("raw", raw), ("adapter a 0.5", note_scores(meta, P, N, Q, owner, W, 0.5))):
                    print(f"- RRF k 10, vector weight {w}, {label}: {rc.cells(meta, rrf(meta, V, w), np.zeros((len(Q), 30)), which)[0]}", flush=True)
            continue
        top = lambda V: np.argsort(-V, axis=1)[:, :100]
        cell = lambda V: rc.cells(meta, [[meta["docs"][i] for i in row] for row in top(V)], np.take_along_axis(V, top(V), axis=1), which)[0]
        print(f"- raw: {cell(raw)}")
        for tau, lam in settings:
            W = fitted(name, P, tau=tau, lam=lam)
            for a in (0.3, 0.5, 0.7):
                print(f"- tau {tau}, lam {lam}, a {a}: {cell(note_scores(meta, P, N, Q, owner, W, a))}", flush=True)
