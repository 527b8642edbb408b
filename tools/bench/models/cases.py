"""The model-layer suite: what each program of programs/ computes, at which
sizes, from which inputs, and the same computation for the peers.

Each case names a program (programs/NAME.fuse, whose fn is NAME) and gives:
  sizes   {label: {dim: size}}: a large size and an odd one (the vocabulary
          programs: one size per vocabulary of 32000, 50257 and 128256);
  check   small dims at which `run.py --check` compares the float64
          interpreter (`fusec --emit=eval`) with `ref` on the host;
  gen     how an input is made when it is not a plain normal sample (see
          INPUT_KINDS); every other float input is drawn from N(0, 1);
  scalars the value of each scalar parameter;
  ref     the computation, written once against an array namespace `F`
          (Ops below: NumPy, jax.numpy or torch), taking the inputs by name
          in a dict and returning the results in declared order.  It is the
          float64 reference (torch or NumPy in float64), and the jax.jit peer;
  native  (optional) the same through the library calls a PyTorch model
          makes (F.layer_norm, F.cross_entropy, ...): torch eager and
          torch.compile run it.  Without it they run `ref` in float32.

The bf16 variant of a program is its text with every `f32[` made `bf16[`:
tensors are stored in bf16, scalars stay f32, i64 stays i64.
"""
import math

VOCABS = {"v32000": {"N": 4096, "V": 32000},
          "v50257": {"N": 2047, "V": 50257},
          "v128256": {"N": 1024, "V": 128256}}

# How the inputs that are not N(0, 1) samples are made.  Each is valid for
# what the program does with it (a one-hot row has one 1, a label lies in
# [0, V), a variance is positive) and, apart from the exact zeros a one-hot
# or a mask holds by definition, never zero.
INPUT_KINDS = {
    "normal": "N(0, 1)",
    "pos": "uniform in [0.1, 1.1): second moments, variances, 1/std",
    "scores": "N(0, 1) * 4: attention scores before the scale",
    "small": "N(0, 1) * 0.1: optimizer momentum",
    "mask": "causal additive mask: -10000 above the diagonal, plus N(0, 1) * 0.1 everywhere",
    "onehot": "one row of zeros and a single 1 at a uniform random class",
    "labels": "uniform integers in [0, V)",
    "classes": "0, 1, ..., V-1",
}


class NumpyOps:
    """The array namespace over NumPy or jax.numpy (the same API)."""

    def __init__(self, np, erf, rsqrt=None):
        self.np, self.erf = np, erf
        self._rsqrt = rsqrt
        for name in ("exp", "log", "sqrt", "tanh", "sign", "where", "minimum"):
            setattr(self, name, getattr(np, name))

    def rsqrt(self, x):
        return self._rsqrt(x) if self._rsqrt else 1 / self.np.sqrt(x)

    def sigmoid(self, x):
        return 1 / (1 + self.np.exp(-x))

    def unsqueeze(self, x, axis):
        return self.np.expand_dims(x, axis)

    def sum(self, x, axis=None, keepdims=False):
        return self.np.sum(x, axis=axis, keepdims=keepdims)

    def mean(self, x, axis=None, keepdims=False):
        return self.np.mean(x, axis=axis, keepdims=keepdims)

    def amax(self, x, axis=None, keepdims=False):
        return self.np.max(x, axis=axis, keepdims=keepdims)

    def var(self, x, axis=None, keepdims=False):
        return self.np.var(x, axis=axis, keepdims=keepdims)

    def std(self, x, axis=None, keepdims=False):
        return self.np.std(x, axis=axis, keepdims=keepdims)

    def argmax(self, x, axis):
        return self.np.argmax(x, axis=axis)

    def logsumexp(self, x, axis, keepdims=False):
        m = self.np.max(x, axis=axis, keepdims=True)
        r = m + self.np.log(self.np.sum(self.np.exp(x - m), axis=axis, keepdims=True))
        return r if keepdims else self.np.squeeze(r, axis=axis)


def numpy_ops():
    import numpy as np
    return NumpyOps(np, np.vectorize(math.erf, otypes=[np.float64]))


def jax_ops():
    import jax
    import jax.numpy as jnp
    return NumpyOps(jnp, jax.scipy.special.erf, jax.lax.rsqrt)


class TorchOps:
    """The array namespace over torch (dim/keepdim spelled as NumPy's)."""

    def __init__(self, torch):
        self.t = torch
        for name in ("exp", "log", "sqrt", "rsqrt", "tanh", "sign", "sigmoid", "erf", "unsqueeze"):
            setattr(self, name, getattr(torch, name))

    def where(self, c, a, b):
        return self.t.where(c, a, b)

    def minimum(self, a, b):
        return self.t.clamp(a, max=b)

    def _red(self, fn, x, axis, keepdims, **kw):
        if axis is None:
            return fn(x, **kw)
        return fn(x, dim=axis, keepdim=keepdims, **kw)

    def sum(self, x, axis=None, keepdims=False):
        return self._red(self.t.sum, x, axis, keepdims)

    def mean(self, x, axis=None, keepdims=False):
        return self._red(self.t.mean, x, axis, keepdims)

    def amax(self, x, axis=None, keepdims=False):
        return self._red(self.t.amax, x, axis, keepdims)

    def var(self, x, axis=None, keepdims=False):
        return self._red(self.t.var, x, axis, keepdims, correction=0)

    def std(self, x, axis=None, keepdims=False):
        return self._red(self.t.std, x, axis, keepdims, correction=0)

    def argmax(self, x, axis):
        return self.t.argmax(x, dim=axis)

    def logsumexp(self, x, axis, keepdims=False):
        return self.t.logsumexp(x, dim=axis, keepdim=keepdims)


# ---- the computations ----------------------------------------------------------
def gelu_tanh(F, x):
    return 0.5 * x * (1 + F.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


def softmax(F, z, axis):
    e = F.exp(z - F.amax(z, axis=axis, keepdims=True))
    return e / F.sum(e, axis=axis, keepdims=True)


def ref_rmsnorm_residual(F, a):
    h = a["x"] + a["r"]
    return h, h * F.rsqrt(F.mean(h * h, axis=1, keepdims=True) + a["eps"]) * a["w"]


def ref_layernorm(F, a):
    x = a["x"]
    xc = x - F.mean(x, axis=1, keepdims=True)
    return (xc * F.rsqrt(F.mean(xc * xc, axis=1, keepdims=True) + a["eps"]) * a["g"] + a["b"],)


def ref_ln_bwd_dgamma_dbeta(F, a):
    xhat = (a["x"] - F.unsqueeze(a["mu"], 1)) * F.unsqueeze(a["rstd"], 1)
    return F.sum(a["dy"] * xhat, axis=0), F.sum(a["dy"], axis=0)


def ref_ln_bwd_dx(F, a):
    rs = F.unsqueeze(a["rstd"], 1)
    xhat = (a["x"] - F.unsqueeze(a["mu"], 1)) * rs
    wdy = a["dy"] * a["g"]
    c1 = F.mean(xhat * wdy, axis=1, keepdims=True)
    c2 = F.mean(wdy, axis=1, keepdims=True)
    return ((wdy - xhat * c1 - c2) * rs,)


def ref_ln_bwd(F, a):
    mu = F.mean(a["x"], axis=1, keepdims=True)
    xc = a["x"] - mu
    rstd = F.rsqrt(F.mean(xc * xc, axis=1, keepdims=True) + 1e-5)
    xhat = xc * rstd
    wdy = a["dy"] * a["g"]
    c1 = F.mean(wdy * xhat, axis=1, keepdims=True)
    c2 = F.mean(wdy, axis=1, keepdims=True)
    return (wdy - xhat * c1 - c2) * rstd, F.sum(a["dy"] * xhat, axis=0), F.sum(a["dy"], axis=0)


def ref_picked(F, a):
    hit = F.unsqueeze(a["labels"], 1) == a["classes"]
    return F.sum(F.where(hit, a["x"], 0), axis=1)


def ref_adamw(F, a):
    m2 = a["b1"] * a["m"] + (1 - a["b1"]) * a["g"]
    v2 = a["b2"] * a["v"] + (1 - a["b2"]) * a["g"] * a["g"]
    p2 = a["p"] * (1 - a["lr"] * a["wd"]) - a["lr"] * (m2 / a["bc1"]) / (F.sqrt(v2 / a["bc2"]) + a["eps"])
    return p2, m2, v2


def ref_adam_l2(F, a):
    gd = a["g"] + a["wd"] * a["p"]
    m2 = a["b1"] * a["m"] + (1 - a["b1"]) * gd
    v2 = a["b2"] * a["v"] + (1 - a["b2"]) * gd * gd
    return a["p"] - a["lr"] * (m2 / a["bc1"]) / (F.sqrt(v2 / a["bc2"]) + a["eps"]), m2, v2


def ref_lion(F, a):
    c = a["b1"] * a["m"] + (1 - a["b1"]) * a["g"]
    p2 = a["p"] * (1 - a["lr"] * a["wd"]) - a["lr"] * F.sign(c)
    return p2, a["b2"] * a["m"] + (1 - a["b2"]) * a["g"]


def ref_rotary(F, a):
    c, s = F.unsqueeze(a["cos_t"], 1), F.unsqueeze(a["sin_t"], 1)
    return a["x1"] * c - a["x2"] * s, a["x2"] * c + a["x1"] * s


def ref_grad_clip(F, a):
    norm = F.sqrt(F.sum(a["g"] * a["g"]))
    return norm, a["g"] * F.minimum(a["max_norm"] / (norm + 1e-6), 1)


# ---- what a PyTorch model calls -------------------------------------------------
def _nn():
    import torch.nn.functional as tf
    return tf


def nat_layernorm(t, a):
    return (_nn().layer_norm(a["x"], (a["x"].shape[-1],), a["g"], a["b"], a["eps"]),)


def nat_softmax_scale_mask(t, a):
    return (t.softmax(a["s"] * a["scale"] + a["mask"], dim=-1),)


def nat_ce_soft(t, a):
    # probabilities as the target: F.cross_entropy's soft-label form
    return (_nn().cross_entropy(a["x"], a["t"]),)


def nat_ce_labels(t, a):
    return (_nn().cross_entropy(a["x"], a["labels"]),)


def nat_ce_rows(t, a):
    return (_nn().cross_entropy(a["x"], a["labels"], reduction="none"),)


def nat_bn_stats(axes):
    def f(t, a):
        v, mu = t.var_mean(a["x"], dim=axes, correction=0)
        return mu, v
    return f


def nat_bn_apply(t, a):
    # statistics and affine parameters in f32, as mixed-precision models keep them
    c = a["x"].shape[1]
    st = [a[k].reshape(c).float() for k in ("mu", "var_", "g", "b")]
    return (_nn().batch_norm(a["x"], st[0], st[1], st[2], st[3], training=False, eps=a["eps"]),)


def nat_row_stats(t, a):
    v, mu = t.var_mean(a["x"], dim=1, correction=0)
    mx, am = t.max(a["x"], dim=1)
    return mu, v, v.sqrt(), mx, am


ADAM = dict(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.01, bc1=1 - 0.9 ** 10, bc2=1 - 0.999 ** 10)
ROWS = {"large": {"N": 16384, "D": 4096}, "odd": {"N": 8191, "D": 3001}}
FFN = {"large": {"N": 16384, "F": 4096}, "odd": {"N": 6001, "F": 5461}}
FLAT = {"large": {"K": 1 << 26}, "odd": {"K": 33554467}}
NCHW = {"large": {"N": 64, "C": 256, "H": 64, "W": 64}, "odd": {"N": 37, "C": 129, "H": 56, "W": 57}}
POOL = {"large": {"N": 64, "C": 1024, "H": 32, "W": 32}, "odd": {"N": 129, "C": 2048, "H": 7, "W": 7}}


def case(name, sizes, check, ref, gen=None, scalars=None, native=None, note=""):
    return name, dict(name=name, sizes=sizes, check=check, ref=ref, gen=gen or {},
                      scalars=scalars or {}, native=native, note=note)


CASES = dict([
    case("rmsnorm_residual", ROWS, {"N": 5, "D": 37}, ref_rmsnorm_residual,
         gen={"w": "pos"}, scalars={"eps": 1e-6}),
    case("layernorm", ROWS, {"N": 5, "D": 37}, ref_layernorm, scalars={"eps": 1e-5},
         native=nat_layernorm),
    case("softmax_scale_mask",
         {"large": {"B": 2, "H": 32, "L": 1024}, "odd": {"B": 3, "H": 12, "L": 1027}},
         {"B": 2, "H": 3, "L": 9},
         lambda F, a: (softmax(F, a["s"] * a["scale"] + a["mask"], 3),),
         gen={"s": "scores", "mask": "mask"}, scalars={"scale": 0.125}, native=nat_softmax_scale_mask),
    case("logsumexp_rows", VOCABS, {"N": 4, "V": 301},
         lambda F, a: (F.logsumexp(a["x"], axis=1),)),
    case("log_softmax_rows", VOCABS, {"N": 4, "V": 301},
         lambda F, a: (a["x"] - F.logsumexp(a["x"], axis=1, keepdims=True),),
         native=lambda t, a: (t.log_softmax(a["x"], dim=1),)),
    case("cross_entropy_onehot", VOCABS, {"N": 4, "V": 301},
         lambda F, a: (F.mean(F.logsumexp(a["x"], axis=1) - F.sum(a["x"] * a["t"], axis=1)),),
         gen={"t": "onehot"}, native=nat_ce_soft),
    case("cross_entropy_labels", VOCABS, {"N": 4, "V": 301},
         lambda F, a: (F.mean(F.logsumexp(a["x"], axis=1) - ref_picked(F, a)),),
         gen={"labels": "labels", "classes": "classes"}, native=nat_ce_labels),
    case("cross_entropy_rows", VOCABS, {"N": 4, "V": 301},
         lambda F, a: (F.logsumexp(a["x"], axis=1) - ref_picked(F, a),),
         gen={"labels": "labels", "classes": "classes"}, native=nat_ce_rows),
    case("bias_gelu_tanh", FFN, {"N": 3, "F": 41},
         lambda F, a: (gelu_tanh(F, a["x"] + a["b"]),),
         native=lambda t, a: (_nn().gelu(a["x"] + a["b"], approximate="tanh"),)),
    case("bias_gelu_erf", FFN, {"N": 3, "F": 41},
         lambda F, a: ((lambda z: 0.5 * z * (1 + F.erf(z / math.sqrt(2))))(a["x"] + a["b"]),),
         native=lambda t, a: (_nn().gelu(a["x"] + a["b"]),)),
    case("swiglu", FFN, {"N": 3, "F": 41},
         lambda F, a: (a["gate"] * F.sigmoid(a["gate"]) * a["up"],),
         native=lambda t, a: (_nn().silu(a["gate"]) * a["up"],)),
    case("geglu", FFN, {"N": 3, "F": 41},
         lambda F, a: (gelu_tanh(F, a["gate"]) * a["up"],),
         native=lambda t, a: (_nn().gelu(a["gate"], approximate="tanh") * a["up"],)),
    case("rotary_halves",
         {"large": {"T": 16384, "H": 32, "R": 64}, "odd": {"T": 8191, "H": 25, "R": 40}},
         {"T": 3, "H": 2, "R": 5}, ref_rotary),
    case("adamw_step", FLAT, {"K": 77}, ref_adamw, gen={"m": "small", "v": "pos"}, scalars=ADAM),
    case("adam_l2_step", FLAT, {"K": 77}, ref_adam_l2, gen={"m": "small", "v": "pos"}, scalars=ADAM),
    case("lion_step", FLAT, {"K": 77}, ref_lion, gen={"m": "small"},
         scalars=dict(lr=1e-4, b1=0.9, b2=0.99, wd=0.1)),
    case("bn_stats_nchw", NCHW, {"N": 2, "C": 3, "H": 4, "W": 5},
         lambda F, a: (F.mean(a["x"], axis=(0, 2, 3)), F.var(a["x"], axis=(0, 2, 3))),
         native=nat_bn_stats((0, 2, 3))),
    case("bn_stats_nhwc", {k: {"N": v["N"], "H": v["H"], "W": v["W"], "C": v["C"]} for k, v in NCHW.items()},
         {"N": 2, "H": 4, "W": 5, "C": 3},
         lambda F, a: (F.mean(a["x"], axis=(0, 1, 2)), F.var(a["x"], axis=(0, 1, 2))),
         native=nat_bn_stats((0, 1, 2))),
    case("bn_apply_nchw", NCHW, {"N": 2, "C": 3, "H": 4, "W": 5},
         lambda F, a: ((a["x"] - a["mu"]) * F.rsqrt(a["var_"] + a["eps"]) * a["g"] + a["b"],),
         gen={"var_": "pos"}, scalars={"eps": 1e-5}, native=nat_bn_apply),
    case("avgpool_nchw", POOL, {"N": 2, "C": 3, "H": 4, "W": 5},
         lambda F, a: (F.mean(a["x"], axis=(2, 3)),)),
    case("avgpool_nhwc", {k: {"N": v["N"], "H": v["H"], "W": v["W"], "C": v["C"]} for k, v in POOL.items()},
         {"N": 2, "H": 4, "W": 5, "C": 3},
         lambda F, a: (F.mean(a["x"], axis=(1, 2)),)),
    case("ln_bwd_dgamma_dbeta", ROWS, {"N": 7, "D": 13}, ref_ln_bwd_dgamma_dbeta, gen={"rstd": "pos"}),
    case("ln_bwd", ROWS, {"N": 6, "D": 37}, ref_ln_bwd),
    case("ln_bwd_dx", ROWS, {"N": 5, "D": 37}, ref_ln_bwd_dx, gen={"rstd": "pos"}),
    case("row_stats", {"large": {"N": 65536, "M": 1024}, "odd": {"N": 30011, "M": 1531}}, {"N": 5, "M": 33},
         lambda F, a: (F.mean(a["x"], axis=1), F.var(a["x"], axis=1), F.std(a["x"], axis=1),
                       F.amax(a["x"], axis=1), F.argmax(a["x"], axis=1)),
         native=nat_row_stats),
    case("row_col_sums", {"large": {"N": 16384, "M": 8192}, "odd": {"N": 30011, "M": 1531}}, {"N": 5, "M": 33},
         lambda F, a: (F.sum(a["x"], axis=1), F.sum(a["x"], axis=0))),
    case("mean_mid3d", {"large": {"A": 32, "B": 2048, "C": 1024}, "odd": {"A": 7, "B": 4099, "C": 1531}},
         {"A": 3, "B": 5, "C": 7}, lambda F, a: (F.mean(a["x"], axis=1),)),
    case("sum_lead3d", {"large": {"A": 16, "B": 4096, "C": 1024}, "odd": {"A": 9, "B": 2051, "C": 1531}},
         {"A": 3, "B": 5, "C": 7}, lambda F, a: (F.sum(a["x"], axis=0),)),
    case("softmax_cols", {"large": {"N": 8192, "M": 8192}, "odd": {"N": 5003, "M": 4097}}, {"N": 9, "M": 4},
         lambda F, a: (softmax(F, a["x"], 0),), native=lambda t, a: (t.softmax(a["x"], dim=0),)),
    case("grad_clip", FLAT, {"K": 77}, ref_grad_clip, scalars={"max_norm": 1.0}),
    case("mse_loss", {"large": {"N": 16384, "M": 4096}, "odd": {"N": 8191, "M": 3001}}, {"N": 3, "M": 7},
         lambda F, a: (F.mean((a["pred"] - a["target"]) * (a["pred"] - a["target"])),),
         native=lambda t, a: (_nn().mse_loss(a["pred"], a["target"]),)),
])
