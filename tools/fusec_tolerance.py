"""fusec_tolerance -- how close a GPU result must be to its reference: the one
definition that tools/fuse-run, the random differential tester
(tests/fuzz/difftest.py) and the benchmark (tools/bench/bench.py) import.
docs/language.md ("Tolerances") states the per-element rule in words; its
table is these numbers (tests/cli/tolerance-docs.test checks that).

Three uses, three forms of one rule:
  element(...)   per element against the float64 interpreter (fuse-run):
                 |got - want| <= rtol * |want| + afrac * scale, scale the
                 largest finite |want| of that result;
  chain(...)     the same check for random programs (difftest), looser per
                 dtype because a random fn chains up to a dozen ops;
  L2[dtype]      the relative L2 error of a whole result against a float64
                 PyTorch reference (the benchmark's correctness check).
Integers and bools are exact everywhere; NaN must meet NaN and +-inf the
same inf.
"""
import math

# result dtype -> (rtol, afrac) per element
ELEMENT = {
    "f64": (1e-12, 1e-13),   # computed in f64; library functions within a few ulp
    "f32": (1e-5, 1e-6),     # about 80 ulp: a chain of f32 ops, each within a few ulp
    "f16": (2e-3, 2e-3),     # two units in the last place of f16
    "bf16": (1.6e-2, 1.6e-2),  # two units in the last place of bf16
}
# f32/f64 rows with a transcendental op (the CUDA math library's f32
# functions are within 1 to 4 ulp), and further with --fast-math
TRANSCENDENTAL_FACTOR = 4.0
FAST_MATH_FACTOR = 25.0
# the precision of a reduction's accumulator (f32, f64 for f64): afrac grows
# by this times sqrt(K), K the reduced extent
ACCUMULATOR = {"f64": 1e-13, "f32": 1e-6}
# ops that count as transcendental (as --emit=plan's "ops" and --emit=ir
# name them; builtins such as softplus are made of these)
TRANSCENDENTAL = frozenset("""exp exp2 log log2 log1p expm1 sqrt rsqrt cbrt sin cos tan
    tanh sigmoid gelu gelu_tanh silu erf pow atan2 logsumexp std""".split())

# random programs: one number per dtype, used as both rtol and afrac
CHAIN = {"f64": 1e-9, "f32": 2e-4, "f16": 2e-2, "bf16": 8e-2}

# benchmark: relative L2 error of a result against float64
L2 = {"f32": 2e-5, "f16": 2e-3, "bf16": 1.6e-2}


# float dtypes from the most precise to the least
LOOSENESS = ("f64", "f32", "f16", "bf16")


def narrowest(dtype, others):
    """The least precise float dtype among dtype and others (a result is only
    as precise as the least precise float it is computed from)."""
    floats = [d for d in [dtype] + list(others) if d in LOOSENESS]
    return max(floats, key=LOOSENESS.index) if floats else dtype


def element(dtype, param_dtypes, transcendental=False, reduce_extent=0, fast_math=False):
    """(rtol, afrac) for one result of dtype computed from params of
    param_dtypes; (0, 0) for integers and bools (exact).  transcendental:
    the fn uses an op of TRANSCENDENTAL; reduce_extent: the longest reduced
    extent K of the fn (0 when it does not reduce)."""
    if dtype not in ELEMENT:
        return 0.0, 0.0
    row = narrowest(dtype, param_dtypes)
    rtol, afrac = ELEMENT[row]
    scale = 1.0
    if row in ("f32", "f64") and transcendental:
        scale = TRANSCENDENTAL_FACTOR * (FAST_MATH_FACTOR if fast_math else 1.0)
    rtol *= scale
    afrac *= scale
    if reduce_extent:
        afrac += ACCUMULATOR["f64" if row == "f64" else "f32"] * scale * math.sqrt(reduce_extent)
    return rtol, afrac


def chain(dtype, other_dtypes):
    """The tolerance (rtol = afrac) of a random program's result."""
    return CHAIN[narrowest(dtype, other_dtypes)]
