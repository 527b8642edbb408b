#!/usr/bin/env python3
"""gen_programs.py -- random well-typed .fuse programs for differential testing.

    gen_programs.py --seed S --files F --fns K --out DIR

Writes F files of K fns each.  Each fn is a random DAG of elementwise ops,
broadcasts (against lower-rank and size-1 operands), casts between float
dtypes, and reductions over random axes (tuples, negative axes, keepdims),
whose results are reused by later ops: the patterns the fusion pass must get
right (loop chains, sibling reductions, row-persistent normalisation, a full
reduction consumed by every element).  Values are kept in a safe range
(tanh, abs + 1 under sqrt/log, bounded exp) so that no false alarm comes from
overflow; reductions of many elements are means or bounded sums.

Shapes: symbolic dims A, B, C (bound at run time, including odd and zero
sizes by the tester) and static dims 1, 3, 5, 32.  Every fn is followed by a
comment line `# dims: A=.. B=.. C=..` with suggested sizes.
The generator itself never writes an ill-typed program: fusec must accept
every one (a rejection is a bug in one of the two and is reported).
"""
import argparse
import os
import random

FLOATS = ["f32", "f32", "f32", "f16", "bf16", "f64"]
ORDER = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3}
UNARY = ["abs", "neg", "tanh", "sigmoid", "relu", "sin", "cos", "square", "floor", "silu",
         "gelu", "erf", "sign", "round"]
BINARY = ["+", "-", "*", "max", "min"]
DISCONTINUOUS = ("floor", "round", "sign")
REDUCE = ["sum", "mean", "max", "min", "var", "std", "logsumexp", "prod"]


def promote(a, b, sa=None, sb=None):
    """Float promotion as fusec's sema does it: a rank-0 value does not widen
    a tensor (torch's rule), otherwise the wider wins and f16+bf16 is f32."""
    if sa is not None and sb is not None and (len(sa) == 0) != (len(sb) == 0):
        return b if len(sa) == 0 else a
    if {a, b} == {"f16", "bf16"}:
        return "f32"
    return a if ORDER[a] >= ORDER[b] else b


def broadcast(s1, s2):
    """NumPy broadcast of two shapes (lists of dim strings) or None."""
    out = []
    for i in range(1, max(len(s1), len(s2)) + 1):
        a = s1[-i] if i <= len(s1) else None
        b = s2[-i] if i <= len(s2) else None
        if a is None or a == b:
            out.append(b)
        elif b is None or b == "1":
            out.append(a)
        elif a == "1":
            out.append(b)
        else:
            return None
    return list(reversed(out))


class Fn:
    def __init__(self, rng, name):
        self.rng = rng
        self.name = name
        self.lines = []
        self.vals = []  # (name, dtype, shape, bounded)
        self.params = []
        self.n = 0
        # a stream of its own for the cross reductions below, so that the
        # other choices draw the same numbers as without them
        self.xrng = random.Random("cross " + name)
        # and for the softmax over leading or middle axes (online_softmax)
        self.srng = random.Random("softmax " + name)
        # and for a row statistic applied back to an input (row_norm)
        self.nrng = random.Random("rownorm " + name)
        # and for a normalisation's backward pass (backward)
        self.brng = random.Random("backward " + name)

    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def add(self, expr, dt, shape, bounded):
        v = self.fresh()
        self.lines.append("    %s = %s" % (v, expr))
        self.vals.append((v, dt, shape, bounded))
        return self.vals[-1]

    def pick(self):
        # prefer recent values: longer chains, more reuse
        k = len(self.vals)
        i = min(k - 1, int(k - 1 - abs(self.rng.gauss(0, k / 3))))
        return self.vals[max(0, i)]

    def exact(self, v):
        """Is v an input of f32/f64?  Only there may a discontinuous op
        (floor, round, sign, a comparison) apply: anywhere else, a last-place
        difference between the f32 kernel and the interpreter's float64 can
        flip its result and raise a false alarm."""
        return v[0].startswith("x") and v[1] in ("f32", "f64")

    def bounded(self, v):
        """An expression of v known to lie in [-1, 1]-ish."""
        return v[0] if v[3] else "tanh(%s)" % v[0]

    def step(self):
        r = self.rng.random()
        a = self.pick()
        if r < 0.30:  # unary
            op = self.rng.choice(UNARY)
            if op in DISCONTINUOUS and not self.exact(a):
                op = "tanh"
            if op in DISCONTINUOUS:  # on the input itself, scaled exactly
                self.add("%s(%s * 4)" % (op, a[0]), a[1], a[2], False)
            else:
                self.add("%s(%s)" % (op, self.bounded(a)), a[1], a[2], op != "square")
        elif r < 0.60:  # binary with broadcasting
            for _ in range(8):
                b = self.pick()
                shp = broadcast(a[2], b[2])
                if shp is not None:
                    break
            else:
                b, shp = a, a[2]
            op = self.rng.choice(BINARY)
            dt = promote(a[1], b[1], a[2], b[2])
            if op in ("max", "min"):
                e = "%s(%s, %s)" % (op, a[0], b[0])
            else:
                e = "%s %s %s" % (self.bounded(a), op, self.bounded(b))
            self.add(e, dt, shp, False)
        elif r < 0.66:  # guarded transcendental
            op = self.rng.choice(["sqrt", "log", "rsqrt", "exp"])
            arg = "abs(%s) + 1" % a[0] if op != "exp" else self.bounded(a)
            self.add("%s(%s)" % (op, arg), a[1], a[2], False)
        elif r < 0.70:  # division by a positive value
            b = self.pick()
            shp = broadcast(a[2], b[2])
            if shp is None:
                b, shp = a, a[2]
            self.add("%s / (abs(%s) + 1)" % (a[0], b[0]), promote(a[1], b[1], a[2], b[2]), shp, False)
        elif r < 0.74:  # cast between floats
            dt = self.rng.choice([d for d in ORDER if d != a[1]])
            self.add("cast(%s, %s)" % (self.bounded(a), dt), dt, a[2], True)
        elif r < 0.78 and self.exact(a):  # where on an exactly known condition
            b = self.pick()
            shp = broadcast(a[2], b[2])
            if shp is None:
                b, shp = a, a[2]
            self.add("where(%s > 0, %s, %s)" % (a[0], a[0], b[0]), promote(a[1], b[1], a[2], b[2]), shp, False)
        elif len(a[2]) >= 2 and self.srng.random() < 0.15:
            self.online_softmax(a)
        elif len(a[2]) >= 1 and self.nrng.random() < 0.25:
            self.row_norm()
        elif len(a[2]) >= 2 and self.brng.random() < 0.2:
            self.backward()
        elif a[2]:  # reduction
            rank = len(a[2])
            op = self.rng.choice(REDUCE)
            k = self.rng.randint(1, rank)
            axes = sorted(self.rng.sample(range(rank), k))
            keep = self.rng.random() < 0.6
            if k == rank and self.rng.random() < 0.3:
                ax = ""
            elif k == 1:
                ax = ", axis=%d" % (axes[0] - rank if self.rng.random() < 0.5 else axes[0])
            else:
                ax = ", axis=(%s)" % ", ".join(str(x) for x in axes)
            if ax == "":
                axes = list(range(rank))
            kd = ", keepdims=true" if keep else ""
            arg = self.bounded(a) if op in ("sum", "prod", "logsumexp") else a[0]
            if op == "prod":
                arg = "1 + %s * 0.01" % self.bounded(a)
            if keep:
                shp = ["1" if i in axes else d for i, d in enumerate(a[2])]
            else:
                shp = [d for i, d in enumerate(a[2]) if i not in axes]
            rv = self.add("%s(%s%s%s)" % (op, arg, ax, kd), a[1], shp, False)
            if 1 <= k < rank and axes == list(range(rank - k, rank)) and self.xrng.random() < 0.4:
                self.cross(a, rank - k, rv, keep)

    def online_softmax(self, a):
        """A softmax of a over axes that keep the innermost one: m = max(a)
        with keepdims, or without over leading axes (m broadcasts back to
        a's elements either way), then exp(a - m) over its sum, which the
        compiler takes online beside the max (sumexp)."""
        rank = len(a[2])
        k = self.srng.randint(1, rank - 1)
        keep = self.srng.random() < 0.6
        axes = list(range(k)) if not keep or self.srng.random() < 0.5 else \
            sorted(self.srng.sample(range(rank - 1), k))
        ax = ", axis=%d" % axes[0] if k == 1 else ", axis=(%s)" % ", ".join(str(x) for x in axes)
        ax += ", keepdims=true" if keep else ""
        shp = ["1" if i in axes else d for i, d in enumerate(a[2])] if keep else \
            [d for i, d in enumerate(a[2]) if i not in axes]
        m = self.add("max(%s%s)" % (a[0], ax), a[1], shp, False)
        e = self.add("exp(%s - %s)" % (a[0], m[0]), a[1], a[2], True)
        s = self.add("sum(%s%s)" % (e[0], ax), a[1], shp, False)
        self.add("%s / %s" % (e[0], s[0]), a[1], a[2], True)

    def row_norm(self):
        """A statistic of an input's rows applied back to the input itself
        (x * sum(x), x - logsumexp(x), ...): the row kernel's output pass
        reads the input from its row cache, which holds 2-byte inputs
        two to a register.  2-byte inputs first."""
        ins = [v for v in self.vals if v[0].startswith("x") and v[2]]
        narrow = [v for v in ins if v[1] in ("f16", "bf16")]
        if not ins:
            return
        x = self.nrng.choice(narrow or ins)
        op = self.nrng.choice(["sum", "mean", "max", "min", "logsumexp", "var"])
        arg = self.bounded(x) if op in ("sum", "logsumexp") else x[0]
        shp = x[2][:-1] + ["1"]
        s = self.add("%s(%s, axis=-1, keepdims=true)" % (op, arg), x[1], shp, False)
        form = self.nrng.choice(["%s - %s", "%s * %s", "%s / (abs(%s) + 1)"])
        self.add(form % (x[0], s[0]), x[1], x[2], False)

    def backward(self):
        """A normalisation's backward pass over an input x's last axis: the
        row statistics, an element result that needs them in several rounds
        (dx, with a gamma of the last axis where an input has that shape),
        and reductions over all the leading axes of values built from
        them (dgamma, dbeta): a row-persistent kernel and a column kernel
        whose reductions it folds as column partials."""
        ins = [v for v in self.vals if v[0].startswith("x") and len(v[2]) >= 2]
        if not ins:
            return
        x = self.brng.choice(ins)
        same = [v for v in self.vals if v[2] == x[2] and v is not x]
        dy = self.brng.choice(same) if same and self.brng.random() < 0.7 else x
        rank = len(x[2])
        sh = x[2][:-1] + ["1"]
        m = self.add("mean(%s, axis=-1, keepdims=true)" % x[0], x[1], sh, False)
        xc = self.add("%s - %s" % (x[0], m[0]), x[1], x[2], False)
        r = self.add("rsqrt(mean(%s * %s, axis=-1, keepdims=true) + 1)" % (xc[0], xc[0]), x[1], sh, True)
        h = self.add("%s * %s" % (xc[0], r[0]), x[1], x[2], False)
        # gamma: an input of the last axis alone, read in every row (the
        # row kernel's per-column vector); a new input where none has that
        # shape
        gams = [v for v in self.vals if v[0].startswith("x") and v[2] == x[2][-1:]]
        gam = None
        if self.brng.random() < 0.8:
            if not gams:
                gams = [("x%d" % len(self.params), self.brng.choice(FLOATS), x[2][-1:], False)]
                self.params.append(gams[0][:3])
                self.vals.append(gams[0])
            gam = self.brng.choice(gams)
        wdy = self.bounded(dy) if gam is None else "%s * %s" % (self.bounded(dy), self.bounded(gam))
        gdt = promote(dy[1], x[1], dy[2], x[2])
        if gam is not None:
            gdt = promote(gdt, gam[1], x[2], gam[2])
        g = self.add("%s * %s" % (wdy, self.bounded(h)), gdt, x[2], True)
        c = self.add("mean(%s, axis=-1, keepdims=true)" % g[0], g[1], sh, True)
        self.add("(%s - %s * %s) * %s" % (wdy, self.bounded(h), c[0], r[0]), g[1], x[2], False)
        lead = list(range(rank - 1))
        ax = ", axis=%d" % lead[0] if len(lead) == 1 else ", axis=(%s)" % ", ".join(str(i) for i in lead)
        cols = [d for i, d in enumerate(x[2]) if i == rank - 1]
        for _ in range(self.brng.randint(1, 2)):
            op = self.brng.choice(["sum", "mean", "max", "min"])
            arg = self.brng.choice([g, dy])
            self.add("%s(%s%s)" % (op, self.bounded(arg), ax), arg[1], cols, False)

    def cross(self, a, nkept, rows, keep):
        """Beside a reduction of a over its inner axes (the rows), one over
        its leading nkept axes (the columns) and at times one over all the
        per-row values: the cross reductions of one row kernel."""
        rank = len(a[2])
        op = self.xrng.choice(["sum", "max", "min", "mean", "logsumexp"])
        arg = self.bounded(a) if op in ("sum", "logsumexp") else a[0]
        lead = list(range(nkept))
        ax = ", axis=%d" % lead[0] if nkept == 1 else ", axis=(%s)" % ", ".join(str(x) for x in lead)
        self.add("%s(%s%s)" % (op, arg, ax), a[1], [d for i, d in enumerate(a[2]) if i >= nkept], False)
        if self.xrng.random() < 0.5 and not keep:
            op = self.xrng.choice(["sum", "mean", "max"])
            self.add("%s(%s - 1)" % (op, self.bounded(rows)), rows[1], [], False)

    def text(self, nresults):
        """Results: the values no other value uses (so little is dead code),
        most recent first, at most nresults + 1."""
        used = set()
        for ln in self.lines:
            rhs = ln.split("=", 1)[1]
            for tok in rhs.replace("(", " ").replace(")", " ").replace(",", " ").split():
                used.add(tok)
        outs = [v for v in reversed(self.vals) if v[0].startswith("v") and v[0] not in used]
        outs = outs[:nresults + 1] or [self.vals[-1]]
        res = []
        body = list(self.lines)
        for i, v in enumerate(outs):
            rn = "r%d" % i
            body.append("    %s = %s" % (rn, v[0]))
            res.append("%s: %s%s" % (rn, v[1], "[%s]" % ", ".join(v[2]) if v[2] else ""))
        ps = ", ".join("%s: %s[%s]" % (p[0], p[1], ", ".join(p[2])) for p in self.params)
        return "fn %s(%s) -> (%s) {\n%s\n}\n" % (self.name, ps, ", ".join(res), "\n".join(body))


def gen_fn(rng, name):
    f = Fn(rng, name)
    rank = rng.choice([1, 2, 2, 2, 3, 3])
    pool = ["A", "B", "C", "1", "3", "5", "32"]
    full = []
    for i in range(rank):
        d = rng.choice(pool[:3] if rng.random() < 0.75 else pool[3:])
        while d in full and d not in ("1", "3", "5", "32"):
            d = rng.choice(pool)
        full.append(d)
    nparams = rng.randint(1, 3)
    for i in range(nparams):
        if i == 0:
            shp = list(full)
        else:
            k = rng.randint(1, rank)
            shp = list(full[rank - k:])
            if rng.random() < 0.3:
                j = rng.randrange(len(shp))
                shp[j] = "1"
        dt = rng.choice(FLOATS)
        pname = "x%d" % i
        f.params.append((pname, dt, shp))
        f.vals.append((pname, dt, shp, False))
    for _ in range(rng.randint(2, 9)):
        f.step()
    return f.text(rng.randint(1, 3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--fns", type=int, default=20)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for fi in range(a.files):
        rng = random.Random(a.seed * 100003 + fi)
        parts = ["# generated by tests/fuzz/gen_programs.py --seed %d (file %d)\n" % (a.seed, fi)]
        for k in range(a.fns):
            parts.append(gen_fn(rng, "g%d_%d" % (fi, k)))
        with open(os.path.join(a.out, "gen%03d.fuse" % fi), "w") as fh:
            fh.write("\n".join(parts))


if __name__ == "__main__":
    main()
