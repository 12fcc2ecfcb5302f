"""Vector-only rankings with the query->passage cosine centred (docs/semantic.md, fourteenth pass).

Reads the dumps of bench/lib/retrieval-centre-dump.ts and ranks each set's notes by the
built-in model's vectors alone, as retrieve()'s vector side does (a note scores its best
passage, plus 0.25 x its note vector's cosine), with the cosine taken
  raw:        cos(q, d)
  centred:    cos(q - mu, d - mu), mu the mean passage vector of the vault
  abtt k:     the same after removing the top k principal directions of the centred passages
              (Mu & Viswanath's all-but-the-top)
  whiten m:   BERT-whitening: centred, rotated onto the principal axes and each axis scaled by
              1 / sqrt(variance + eps), keeping the top m axes
  shrunk-whiten a: whitening with the covariance shrunk toward the identity, (1 - a/100) C + a/100 (tr C / d) I
Tuning halves only (oh, srd), the docs QA set and SciFact train.
  python3 bench/lib/retrieval_centre.py [--only=raw,whiten,...] [oh srd docs scifact-train]
  python3 bench/lib/retrieval_centre.py --hybrid scifact-train
--hybrid: a rough hybrid offline, to see whether a better vector list adds to BM25 (no second
stage, no margin): the keyword list re-scored by min-max BM25 + share x min-max vector score (the
flat list's tie-break, RankingParams.flatConvex), and RRF k = 10 of the keyword list with the
vector list's top 100 at weight w.
"""
import json
import os
import sys

import numpy as np

CACHE = os.environ.get("LETTUCE_BENCH_CACHE", "/tmp/lettuce-bench")
NOTE_VECTOR = 0.25


def load(name):
    meta = json.load(open(f"{CACHE}/dumps/{name}.centre.json"))
    d, n_p, n_n, n_q = meta["dim"], meta["passages"], len(meta["docs"]), len(meta["queries"])
    a = np.fromfile(f"{CACHE}/dumps/{name}.centre.f32", dtype=np.float32)
    assert a.size == (n_p + n_n + n_q) * d
    P = a[: n_p * d].reshape(n_p, d)
    N = a[n_p * d : (n_p + n_n) * d].reshape(n_n, d)
    Q = a[(n_p + n_n) * d :].reshape(n_q, d)
    meta["name"] = name
    return meta, P.astype(np.float64), N.astype(np.float64), Q.astype(np.float64), np.array(meta["owner"])


def unit(x):
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1)


def transform(P, kind, k):
    """A function mapping vectors (rows) to the space the cosine is taken in, fitted on the passages P."""
    if kind == "raw":
        return lambda x: x
    mu = P.mean(axis=0)
    if kind == "centred":
        return lambda x: x - mu
    if kind == "half-centred":
        return lambda x: x - 0.5 * mu
    if kind == "mean-direction":
        # A projection, not a translation: the mean's direction taken out of both sides (a query far
        # from the passages' mean is then not pushed toward the passages farthest from it).
        u = mu / np.linalg.norm(mu)
        return lambda x: x - np.outer(x @ u, u) if x.ndim == 2 else x - (x @ u) * u
    C = np.cov((P - mu).T)
    w, U = np.linalg.eigh(C)
    order = np.argsort(w)[::-1]
    w, U = w[order], U[:, order]
    if kind == "abtt":
        Uk = U[:, :k]
        return lambda x: (x - mu) - ((x - mu) @ Uk) @ Uk.T
    if kind == "whiten":
        eps = 1e-4
        W = U[:, :k] / np.sqrt(w[:k] + eps)
        return lambda x: (x - mu) @ W
    if kind == "shrunk-whiten":
        # Whitening with the covariance shrunk toward a multiple of the identity (Ledoit-Wolf's form):
        # (1 - a) C + a (tr C / d) I, a = k / 100. Small vaults estimate the weak axes badly.
        a = k / 100
        lam = (1 - a) * w + a * w.mean()
        W = U / np.sqrt(lam)
        return lambda x: (x - mu) @ W
    raise ValueError(kind)


def best_passages(meta, S, owner, fill):
    """Each query's best passage score per note (S: queries x passages); `fill` for notes without passages."""
    order = np.argsort(owner, kind="stable")
    so = owner[order]
    starts = np.r_[0, np.flatnonzero(np.diff(so)) + 1]
    best = np.full((S.shape[0], len(meta["docs"])), fill)
    best[:, so[starts]] = np.maximum.reduceat(S[:, order], starts, axis=1)
    return best


def rank(meta, P, N, Q, owner, kind, k, note_vector=NOTE_VECTOR, note_same=True):
    if kind == "centred-queries":
        # Diagnostic, not something a vault can do: the queries centred on the tuning questions' own mean
        # (a question's vector carries a "this is a question" offset that the passages' mean does not remove).
        mu_p = P.mean(axis=0)
        tune = [i for i, q in enumerate(meta["queries"]) if q["half"] in ("tune", None)]
        mu_q = Q[tune].mean(axis=0)
        if k:
            # Not the set's own questions: the tuning questions of the other question sets (OTHER_QUESTIONS).
            mu_q = other_question_mean(meta["name"])
        T = lambda x: x - mu_p
        Pt, Qt = unit(P - mu_p), unit(Q - mu_q)
    elif kind == "passages-centred":
        # Only the passages centred; the query as it is.
        mu_p = P.mean(axis=0)
        T = lambda x: x - mu_p
        Pt, Qt = unit(P - mu_p), unit(Q)
    else:
        T = transform(P, kind, k)
        Pt, Qt = unit(T(P)), unit(T(Q))
    # notes' own vectors: the same transform (fitted on the passages)
    Nt = unit(T(N)) if note_same else unit(transform(N, kind, k)(N))
    best = best_passages(meta, Qt @ Pt.T, owner, -np.inf)
    score = best + note_vector * (Qt @ Nt.T) if note_vector else best
    score[~np.isfinite(best)] = -np.inf
    top = np.argsort(-score, axis=1)[:, :100]
    sorted_scores = np.take_along_axis(score, top, axis=1)
    docs = meta["docs"]
    return [[docs[i] for i in row] for row in top], sorted_scores


# Whose questions stand in for "a question's offset" when a set's own are not used.
OTHER_QUESTIONS = {"oh": ["srd"], "srd": ["oh"], "docs": ["oh", "srd"], "scifact-train": ["oh", "srd"], "scifact": ["oh", "srd"]}


def other_question_mean(name):
    qs = []
    for other in OTHER_QUESTIONS[name]:
        meta, _, _, Q, _ = load(other)
        qs += [Q[i] for i, q in enumerate(meta["queries"]) if q["half"] == "tune"]
    return np.mean(qs, axis=0)


def rr(ranked, rel, k):
    for i, d in enumerate(ranked[:k]):
        if d in rel:
            return 1 / (i + 1)
    return 0.0


def ndcg(ranked, rel, k):
    dcg = sum(1 / np.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in rel)
    ideal = sum(1 / np.log2(i + 2) for i in range(min(k, len(rel))))
    return dcg / ideal if ideal else 0.0


def cells(meta, lists, scores, which):
    qs = meta["queries"]
    spread = float(np.median(scores[:, 0] - scores[:, 29]))
    if which in ("oh", "srd"):
        ix = [i for i, q in enumerate(qs) if q["half"] == "tune"]
        hit = lambda i: any(d in qs[i]["relevant"] for d in lists[i][:5])
        per = [sum(hit(i) for i in ix if qs[i]["kind"] == kd) for kd in ("keyword", "paraphrase", "detail")]
        mrr = np.mean([rr(lists[i], set(qs[i]["relevant"]), 10) for i in ix])
        nd = np.mean([ndcg(lists[i], set(qs[i]["relevant"]), 10) for i in ix])
        return f"{sum(per)}/{len(ix)} ({per[0]}/{per[1]}/{per[2]}), {mrr:.3f}, {nd:.3f}", spread
    if which == "docs":
        rec3 = np.mean([len([d for d in lists[i][:3] if d in q["relevant"]]) / len(q["relevant"]) for i, q in enumerate(qs)])
        mrr3 = np.mean([rr(lists[i], set(q["relevant"]), 3) for i, q in enumerate(qs)])
        hit5 = sum(any(d in q["relevant"] for d in lists[i][:5]) for i, q in enumerate(qs))
        return f"{rec3:.3f}, {mrr3:.3f} (hit@5 {hit5})", spread
    nd = np.mean([ndcg(lists[i], set(q["relevant"]), 10) for i, q in enumerate(qs)])
    return f"{nd:.4f}", spread


VARIANTS = [("raw", 0), ("centred", 0), ("half-centred", 0), ("passages-centred", 0), ("mean-direction", 0), ("centred-queries", 0), ("centred-queries", 1), ("abtt", 1), ("abtt", 2), ("abtt", 3), ("abtt", 5), ("abtt", 10), ("whiten", 128), ("whiten", 256), ("whiten", 512), ("shrunk-whiten", 5), ("shrunk-whiten", 20), ("shrunk-whiten", 50)]

def note_scores(meta, P, N, Q, owner, kind, k):
    """Every query's score for every note (best passage + 0.25 x note vector), in the transformed space."""
    T = transform(P, kind, k)
    Pt, Qt, Nt = unit(T(P)), unit(T(Q)), unit(T(N))
    return best_passages(meta, Qt @ Pt.T, owner, -1.0) + NOTE_VECTOR * (Qt @ Nt.T)


def hybrid(name):
    meta, P, N, Q, owner = load(name)
    docs, qs = meta["docs"], meta["queries"]
    ix = [i for i, q in enumerate(qs) if q["half"] in ("tune", None)]

    def ev(lists):
        nd = np.mean([ndcg(lists[i], set(qs[i]["relevant"]), 10) for i in ix])
        mrr = np.mean([rr(lists[i], set(qs[i]["relevant"]), 10) for i in ix])
        hit = sum(any(d in qs[i]["relevant"] for d in lists[i][:5]) for i in ix)
        return f"nDCG@10 {nd:.4f}, MRR@10 {mrr:.3f}, hit@5 {hit}/{len(ix)}"

    mm = lambda x: (x - x.min()) / (x.max() - x.min()) if x.max() > x.min() else np.ones_like(x)
    print(f"\n## {name}, rough hybrid\n\nkeyword alone: {ev([[docs[r] for r, _ in q['keyword']] for q in qs])}")
    for kind, k in [("raw", 0), ("centred", 0), ("whiten", 256), ("whiten", 512), ("shrunk-whiten", 5), ("shrunk-whiten", 20)]:
        V = note_scores(meta, P, N, Q, owner, kind, k)
        label = f"{kind} {k}" if k else kind
        for share in (0.5, 1.0):
            lists = []
            for i, q in enumerate(qs):
                rows = np.array([r for r, _ in q["keyword"]], dtype=int)
                if not len(rows):
                    lists.append([])
                    continue
                f = (mm(np.array([s for _, s in q["keyword"]])) + share * mm(V[i, rows])) / (1 + share)
                lists.append([docs[rows[j]] for j in np.argsort(-f, kind="stable")])
            print(f"- {label}, convex share {share}: {ev(lists)}", flush=True)
        for w in (0.1, 0.25, 0.5):
            lists = []
            for i, q in enumerate(qs):
                sc = {}
                for r, (row, _) in enumerate(q["keyword"]):
                    sc[row] = sc.get(row, 0) + 1 / (10 + r + 1)
                for r, row in enumerate(np.argsort(-V[i])[:100]):
                    sc[row] = sc.get(row, 0) + w / (10 + r + 1)
                lists.append([docs[row] for row, _ in sorted(sc.items(), key=lambda t: -t[1])])
            print(f"- {label}, RRF k 10, vector weight {w}: {ev(lists)}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--hybrid":
        for name in args[1:] or ["scifact-train"]:
            hybrid(name)
        sys.exit(0)
    if args and args[0].startswith("--only="):
        keep = args.pop(0)[7:].split(",")
        VARIANTS = [v for v in VARIANTS if v[0] in keep]
    sets = args or ["oh", "srd", "docs", "scifact-train"]
    for name in sets:
        meta, P, N, Q, owner = load(name)
        which = name.split("-")[0]
        print(f"\n## {name}: {P.shape[0]} passages, {len(meta['docs'])} notes, {Q.shape[0]} queries")
        print("| cosine | best passage | spread 1st-30th | best + 0.25 x note | spread |")
        print("|---|---|---:|---|---:|")
        for kind, k in VARIANTS:
            row = [("centred, queries on the other sets' question mean" if kind == "centred-queries" else f"{kind} {k}") if k else kind]
            for nv in (0, NOTE_VECTOR):
                lists, scores = rank(meta, P, N, Q, owner, kind, k, note_vector=nv)
                c, sp = cells(meta, lists, scores, which)
                row += [c, f"{sp:.3f}"]
            print("| " + " | ".join(row) + " |", flush=True)
