"""gen_big.py KIND N: a large program for tests/fusion/kernel-bounds.test.
  center N: v_i = v_(i-1) - mean(v_(i-1), axis=1, keepdims=true), N times
  diamond N: v_i = v_(i-1) * v_(i-1) * 0.5 + v_(i-1), N times, then softmax-like
  chain N: v_i = v_(i-1) * 1.0001 + x, N times (elementwise)
  outputs N: N results x * k of one fn"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
out = []
if kind == "outputs":
    out.append("fn g(x: f32[N]) -> (%s) {" % ", ".join("r%d: f32[N]" % i for i in range(n)))
    out += ["    r%d = x * %d" % (i, i + 1) for i in range(n)]
else:
    body = {
        "center": "v{i} = v{p} - mean(v{p}, axis=1, keepdims=true)",
        "diamond": "v{i} = v{p} * v{p} * 0.5 + v{p}",
        "chain": "v{i} = v{p} * 1.0001 + x",
    }[kind]
    ret = "v{n} / sum(v{n}, axis=1, keepdims=true)" if kind == "diamond" else "v{n}"
    shape = "f32[N]" if kind == "chain" else "f32[N, M]"
    out.append("fn f(x: %s) -> %s {" % (shape, shape))
    out.append("    v0 = x")
    out += ["    " + body.format(i=i, p=i - 1) for i in range(1, n + 1)]
    out.append("    return " + ret.format(n=n))
out.append("}")
print("\n".join(out))
