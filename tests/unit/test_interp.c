/* test_interp.c -- the reference interpreter on hand-built IR, against
 * hand-computed values: NaN rules, empty reductions, f16/bf16 rounding,
 * integer division, broadcasting, keepdims, every reduction and every
 * elementwise op at a few points, int64 size arithmetic, input checks. */
#include "interp.h"
#include "ir.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* equal as values: NaN equals NaN, -0 differs from +0 only if sign matters */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }
#define CHECK_VAL(got, want) check_val((got), (want), __LINE__, #got)
static void check_val(double got, double want, int line, const char *what)
{
    checks++;
    if (!same(got, want)) {
        failures++;
        fprintf(stderr, "test_interp.c:%d: FAILED: %s = %.17g, want %.17g\n", line, what, got, want);
    }
}
#define CHECK_NEAR(got, want, tol) check_near((got), (want), (tol), __LINE__, #got)
static void check_near(double got, double want, double tol, int line, const char *what)
{
    checks++;
    if (!(same(got, want) || fabs(got - want) <= tol * fmax(1.0, fabs(want)))) {
        failures++;
        fprintf(stderr, "test_interp.c:%d: FAILED: %s = %.17g, want %.17g\n", line, what, got, want);
    }
}

/* ---- building IR by hand ---------------------------------------------------- */

static Arena arena;

static IrFunc *fn(void) { return ir_func_new(&arena, "t", LOC_NONE); }

/* shape from sizes; a size of -1-k means symbol k */
static IrShape shape(int rank, ...)
{
    IrShape s = {0};
    va_list ap;
    va_start(ap, rank);
    s.rank = rank;
    for (int d = 0; d < rank; d++) {
        int64_t v = va_arg(ap, int64_t);
        s.dims[d] = v >= 0 ? (IrDim){v, -1} : (IrDim){-1, (int)(-1 - v)};
    }
    va_end(ap);
    return s;
}
#define SH(...) shape(__VA_ARGS__)
#define D(x) ((int64_t)(x))

static IrNode *param(IrFunc *f, const char *name, DType dt, IrShape s)
{
    IrParam *np = ARENA_ARRAY(&arena, IrParam, f->nparams + 1);
    if (f->nparams)
        memcpy(np, f->params, sizeof(IrParam) * (size_t)f->nparams);
    IrNode *n = ir_node_new(f, OP_PARAM, dt, &s, LOC_NONE);
    n->param = f->nparams;
    np[f->nparams] = (IrParam){.name = name, .dtype = dt, .is_tensor = s.rank > 0, .shape = s, .node = n};
    f->params = np;
    f->nparams++;
    return n;
}

static void result(IrFunc *f, IrNode *n, const char *name)
{
    IrResult *nr = ARENA_ARRAY(&arena, IrResult, f->nresults + 1);
    if (f->nresults)
        memcpy(nr, f->results, sizeof(IrResult) * (size_t)f->nresults);
    nr[f->nresults] = (IrResult){.name = name, .dtype = n->dtype, .shape = n->shape, .node = n};
    f->results = nr;
    f->nresults++;
}

static IrNode *node(IrFunc *f, OpKind op, DType dt, IrShape s, IrNode *a, IrNode *b, IrNode *c)
{
    IrNode *n = ir_node_new(f, op, dt, &s, LOC_NONE);
    if (a)
        ir_add_operand(n, a);
    if (b)
        ir_add_operand(n, b);
    if (c)
        ir_add_operand(n, c);
    return n;
}

static IrNode *cnst(IrFunc *f, DType dt, double v)
{
    IrNode *n = ir_node_new(f, OP_CONST, dt, &(IrShape){0}, LOC_NONE);
    n->cval = v;
    n->ival = (int64_t)v;
    return n;
}

static IrNode *reduce(IrFunc *f, OpKind op, DType dt, IrNode *x, unsigned axes, int keep)
{
    IrShape s = {0};
    for (int d = 0; d < x->shape.rank; d++) {
        if (axes >> d & 1) {
            if (keep)
                s.dims[s.rank++] = (IrDim){1, -1};
        } else {
            s.dims[s.rank++] = x->shape.dims[d];
        }
    }
    IrNode *n = node(f, op, dt, s, x, NULL, NULL);
    n->axes = (uint8_t)axes;
    n->keepdims = keep;
    return n;
}

static Tensor tens(DType dt, int rank, const int64_t *dims, const double *vals)
{
    Tensor t;
    if (!tensor_alloc(&t, dt, rank, dims))
        abort();
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = vals ? vals[i] : 0;
    return t;
}

static Tensor vec(DType dt, int64_t n, const double *vals) { return tens(dt, 1, &n, vals); }

/* Run f on inputs; on success outputs are filled; returns interp_run's value. */
static char errbuf[1024];
static int run(IrFunc *f, Tensor *in, Tensor *out)
{
    return interp_run(f, in, out, errbuf, sizeof errbuf);
}

static void free_all(Tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tensor_free(&t[i]);
}

/* One op over a 1-d f64 input: out[i] = op(x[i]). */
static Tensor unary(OpKind op, DType dt, const double *xs, int64_t n)
{
    IrFunc *f = fn();
    IrNode *x = param(f, "x", dt, SH(1, n));
    DType rt = op_info[op].flags & OPF_BOOL_RESULT ? DT_BOOL : dt;
    result(f, node(f, op, rt, x->shape, x, NULL, NULL), "y");
    Tensor in = vec(dt, n, xs), out;
    if (!run(f, &in, &out)) {
        fprintf(stderr, "unary %s: %s\n", op_info[op].name, errbuf);
        abort();
    }
    tensor_free(&in);
    return out;
}

static Tensor binary(OpKind op, DType dt, const double *as, const double *bs, int64_t n)
{
    IrFunc *f = fn();
    IrNode *a = param(f, "a", dt, SH(1, n)), *b = param(f, "b", dt, SH(1, n));
    DType rt = op_info[op].flags & OPF_BOOL_RESULT ? DT_BOOL : dt;
    result(f, node(f, op, rt, a->shape, a, b, NULL), "y");
    Tensor in[2] = {vec(dt, n, as), vec(dt, n, bs)}, out;
    if (!run(f, in, &out)) {
        fprintf(stderr, "binary %s: %s\n", op_info[op].name, errbuf);
        abort();
    }
    free_all(in, 2);
    return out;
}

/* A reduction of a 1-d input over its only axis; 0 if interp_run failed. */
static int reduce1(OpKind op, DType dt, DType rt, const double *xs, int64_t n, double *got)
{
    IrFunc *f = fn();
    IrNode *x = param(f, "x", dt, SH(1, n));
    result(f, reduce(f, op, rt, x, 1, 0), "r");
    Tensor in = vec(dt, n, xs), out;
    int ok = run(f, &in, &out);
    if (ok) {
        *got = out.data[0];
        tensor_free(&out);
    }
    tensor_free(&in);
    return ok;
}

static double r1(OpKind op, const double *xs, int64_t n)
{
    double v = -12345;
    DType rt = op == OP_ARGMAX || op == OP_ARGMIN ? DT_I64 : (op == OP_ANY || op == OP_ALL) ? DT_BOOL : DT_F64;
    if (!reduce1(op, DT_F64, rt, xs, n, &v))
        fprintf(stderr, "reduce %s: %s\n", op_info[op].name, errbuf);
    return v;
}

/* ---- f16 / bf16 / rounding ---------------------------------------------------- */

static void test_half(void)
{
    CHECK(f16_bits_from_double(1.0) == 0x3c00);
    CHECK(f16_bits_from_double(-2.0) == 0xc000);
    CHECK(f16_bits_from_double(65504.0) == 0x7bff);
    CHECK(f16_bits_from_double(65519.99) == 0x7bff);
    CHECK(f16_bits_from_double(65520.0) == 0x7c00); /* halfway to 2^16: ties to even = inf */
    CHECK(f16_bits_from_double(-1e10) == 0xfc00);
    CHECK(f16_bits_from_double(INFINITY) == 0x7c00);
    CHECK(f16_bits_from_double(-0.0) == 0x8000);
    uint16_t hn = f16_bits_from_double(NAN);
    CHECK((hn & 0x7c00) == 0x7c00 && (hn & 0x3ff) != 0);
    CHECK(isnan(f16_bits_to_double(hn)));
    /* ties to even in the normal range: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 */
    CHECK(f16_bits_from_double(1.0 + ldexp(1, -11)) == 0x3c00);
    CHECK(f16_bits_from_double(1.0 + 3 * ldexp(1, -11)) == 0x3c02);
    CHECK(f16_bits_from_double(1.0 + ldexp(1, -11) + ldexp(1, -30)) == 0x3c01);
    /* subnormals: 2^-24 is the smallest; half of it ties to 0 (even) */
    CHECK(f16_bits_from_double(ldexp(1, -24)) == 0x0001);
    CHECK(f16_bits_from_double(ldexp(1, -25)) == 0x0000);
    CHECK(f16_bits_from_double(3 * ldexp(1, -25)) == 0x0002);
    CHECK(f16_bits_from_double(1023.5 * ldexp(1, -24)) == 0x0400); /* rounds up into the normals */
    CHECK_VAL(f16_bits_to_double(0x0001), ldexp(1, -24));
    CHECK_VAL(f16_bits_to_double(0x3555), 0.333251953125);
    /* every f16 value survives the round trip */
    int bad = 0;
    for (unsigned h = 0; h < 0x10000; h++) {
        double v = f16_bits_to_double((uint16_t)h);
        if (!isnan(v) && f16_bits_from_double(v) != h)
            bad++;
        double b = bf16_bits_to_double((uint16_t)h);
        if (!isnan(b) && bf16_bits_from_double(b) != h)
            bad++;
    }
    CHECK(bad == 0);
    /* every midpoint between two neighbours (subnormals and the step into
     * inf included) goes to the even code; a hair above it goes up */
    int badties = 0;
    for (unsigned h = 0; h < 0x7c00; h++) {
        double lo = f16_bits_to_double((uint16_t)h), hi = f16_bits_to_double((uint16_t)(h + 1));
        if (isinf(hi))
            hi = ldexp(1, 16); /* where the next code would be */
        double mid = lo + (hi - lo) / 2;
        unsigned even = (h & 1) ? h + 1 : h;
        if (f16_bits_from_double(mid) != even || f16_bits_from_double(-mid) != (even | 0x8000) ||
            f16_bits_from_double(nextafter(mid, INFINITY)) != h + 1)
            badties++;
    }
    for (unsigned h = 0; h < 0x7f80; h++) {
        double lo = bf16_bits_to_double((uint16_t)h), hi = bf16_bits_to_double((uint16_t)(h + 1));
        if (isinf(hi))
            hi = ldexp(1, 128);
        double mid = lo + (hi - lo) / 2;
        unsigned even = (h & 1) ? h + 1 : h;
        if (bf16_bits_from_double(mid) != even || bf16_bits_from_double(nextafter(mid, 0)) != h)
            badties++;
    }
    CHECK(badties == 0);

    CHECK(bf16_bits_from_double(1.0) == 0x3f80);
    CHECK(bf16_bits_from_double(1.0 + ldexp(1, -8)) == 0x3f80);     /* tie, even */
    CHECK(bf16_bits_from_double(1.0 + 3 * ldexp(1, -8)) == 0x3f82); /* tie, up to even */
    CHECK(bf16_bits_from_double(ldexp(2.0 - ldexp(1, -7), 127)) == 0x7f7f);
    CHECK(bf16_bits_from_double(ldexp(2.0 - ldexp(1, -8), 127)) == 0x7f80); /* overflow */
    CHECK(bf16_bits_from_double(ldexp(1, -133)) == 0x0001);
    CHECK(bf16_bits_from_double(ldexp(1, -134)) == 0x0000);
    CHECK(bf16_bits_from_double(-3.0) == 0xc040);
    uint16_t bn = bf16_bits_from_double(-NAN);
    CHECK((bn & 0x7f80) == 0x7f80 && (bn & 0x7f) != 0);

    CHECK_VAL(round_to_dtype(1e40, DT_F32), INFINITY);
    CHECK_VAL(round_to_dtype(-1e40, DT_F32), -INFINITY);
    CHECK_VAL(round_to_dtype(0.1, DT_F32), (double)0.1f);
    CHECK_VAL(round_to_dtype(FLT_MAX, DT_F32), FLT_MAX);
    CHECK_VAL(round_to_dtype(0.1, DT_F16), f16_bits_to_double(0x2e66));
    CHECK_VAL(round_to_dtype(3.7, DT_I32), 3);
    CHECK_VAL(round_to_dtype(-3.7, DT_I32), -3);
    CHECK_VAL(round_to_dtype(NAN, DT_I32), 0);
    CHECK_VAL(round_to_dtype(1e10, DT_I32), 2147483647);
    CHECK_VAL(round_to_dtype(-1e10, DT_I32), -2147483648.0);
    CHECK_VAL(round_to_dtype(1e30, DT_I64), 9223372036854775808.0);
    CHECK(double_to_i64(1e30) == INT64_MAX);
    CHECK(double_to_i64(9223372036854775808.0) == INT64_MAX);
    CHECK(double_to_i64(-1e30) == INT64_MIN);
    CHECK(double_to_i64(9223372036854774784.0) == 9223372036854774784LL);
    CHECK_VAL(round_to_dtype(NAN, DT_BOOL), 1);
    CHECK_VAL(round_to_dtype(-0.0, DT_BOOL), 0);
    CHECK_VAL(round_to_dtype(0.5, DT_BOOL), 1);
}

/* ---- NaN rules ---------------------------------------------------------------- */

static void test_nan(void)
{
    double a[] = {1, NAN, 3};
    CHECK_VAL(r1(OP_RMAX, a, 3), NAN);
    CHECK_VAL(r1(OP_RMIN, a, 3), NAN);
    double b[] = {1, 3, NAN, 3, NAN};
    CHECK_VAL(r1(OP_ARGMAX, b, 5), 2); /* the first NaN wins */
    CHECK_VAL(r1(OP_ARGMIN, b, 5), 2);
    double c[] = {1, 3, -2, 3, -2};
    CHECK_VAL(r1(OP_ARGMAX, c, 5), 1); /* first maximum */
    CHECK_VAL(r1(OP_ARGMIN, c, 5), 2);
    double d[] = {-INFINITY, -INFINITY};
    CHECK_VAL(r1(OP_ARGMAX, d, 2), 0);
    CHECK_VAL(r1(OP_RMAX, d, 2), -INFINITY);

    double x[] = {NAN, 1, NAN, -INFINITY}, y[] = {1, NAN, NAN, 2};
    Tensor mx = binary(OP_MAX2, DT_F32, x, y, 4), mn = binary(OP_MIN2, DT_F32, x, y, 4);
    for (int i = 0; i < 3; i++) {
        CHECK_VAL(mx.data[i], NAN);
        CHECK_VAL(mn.data[i], NAN);
    }
    CHECK_VAL(mx.data[3], 2);
    CHECK_VAL(mn.data[3], -INFINITY);
    tensor_free(&mx);
    tensor_free(&mn);

    double z[] = {NAN, -1, 2, -0.0};
    Tensor s = unary(OP_SIGN, DT_F32, z, 4), rl = unary(OP_RELU, DT_F32, z, 4);
    CHECK_VAL(s.data[0], NAN);
    CHECK_VAL(s.data[1], -1);
    CHECK_VAL(s.data[2], 1);
    CHECK_VAL(s.data[3], 0);
    CHECK_VAL(rl.data[0], NAN);
    CHECK_VAL(rl.data[1], 0);
    CHECK_VAL(rl.data[2], 2);
    tensor_free(&s);
    tensor_free(&rl);

    /* clamp(NaN) = NaN; a NaN bound propagates too */
    IrFunc *f = fn();
    IrNode *p = param(f, "x", DT_F32, SH(1, D(4)));
    IrNode *lo = param(f, "lo", DT_F32, SH(1, D(4)));
    IrNode *cl = node(f, OP_CLAMP, DT_F32, p->shape, p, lo, cnst(f, DT_F32, 1));
    result(f, cl, "y");
    double xs[] = {NAN, 5, -5, 0.5}, los[] = {0, 0, NAN, 0};
    Tensor in[2] = {vec(DT_F32, 4, xs), vec(DT_F32, 4, los)}, out;
    CHECK(run(f, in, &out));
    CHECK_VAL(out.data[0], NAN);
    CHECK_VAL(out.data[1], 1);
    CHECK_VAL(out.data[2], NAN);
    CHECK_VAL(out.data[3], 0.5);
    tensor_free(&out);
    free_all(in, 2);
}

/* ---- empty reductions ----------------------------------------------------------- */

static void test_empty(void)
{
    double dummy = 0;
    CHECK_VAL(r1(OP_SUM, &dummy, 0), 0);
    CHECK_VAL(r1(OP_PROD, &dummy, 0), 1);
    CHECK_VAL(r1(OP_RMAX, &dummy, 0), -INFINITY);
    CHECK_VAL(r1(OP_RMIN, &dummy, 0), INFINITY);
    CHECK_VAL(r1(OP_MEAN, &dummy, 0), NAN);
    CHECK_VAL(r1(OP_VAR, &dummy, 0), NAN);
    CHECK_VAL(r1(OP_STD, &dummy, 0), NAN);
    CHECK_VAL(r1(OP_ANY, &dummy, 0), 0);
    CHECK_VAL(r1(OP_ALL, &dummy, 0), 1);
    CHECK_VAL(r1(OP_LOGSUMEXP, &dummy, 0), -INFINITY);
    double got;
    CHECK(!reduce1(OP_ARGMAX, DT_F32, DT_I64, &dummy, 0, &got));
    CHECK(strstr(errbuf, "empty") != NULL);
    CHECK(!reduce1(OP_ARGMIN, DT_F32, DT_I64, &dummy, 0, &got));

    /* [2, 0] reduced over axis 1 gives [2] identities; over axis 0 an empty [0] */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F32, SH(2, D(2), D(0)));
    result(f, reduce(f, OP_SUM, DT_F32, x, 2, 0), "s");
    result(f, reduce(f, OP_RMAX, DT_F32, x, 1, 1), "m");
    result(f, reduce(f, OP_ARGMAX, DT_I64, x, 1, 0), "a"); /* empty output: no error */
    Tensor in = tens(DT_F32, 2, (int64_t[]){2, 0}, NULL), out[3];
    CHECK(run(f, &in, out));
    CHECK(out[0].numel == 2 && out[0].data[0] == 0 && out[0].data[1] == 0);
    CHECK(out[1].rank == 2 && out[1].dims[0] == 1 && out[1].dims[1] == 0 && out[1].numel == 0);
    CHECK(out[2].numel == 0);
    free_all(out, 3);
    tensor_free(&in);

    /* a zero-size elementwise op is fine */
    Tensor e = unary(OP_EXP, DT_F32, &dummy, 0);
    CHECK(e.numel == 0 && e.rank == 1);
    tensor_free(&e);
}

/* ---- integers -------------------------------------------------------------------- */

static void test_int(void)
{
    double a[] = {-7, 7, -7, 7, 2147483647, -2147483648.0, 0};
    double b[] = {2, -2, -2, 2, 1, -1, 5};
    Tensor q = binary(OP_DIV, DT_I32, a, b, 7), r = binary(OP_MOD, DT_I32, a, b, 7);
    double wq[] = {-3, -3, 3, 3, 2147483647, -2147483648.0, 0}; /* INT_MIN / -1 wraps */
    double wr[] = {-1, 1, -1, 1, 0, 0, 0};
    for (int i = 0; i < 7; i++) {
        CHECK_VAL(q.data[i], wq[i]);
        CHECK_VAL(r.data[i], wr[i]);
    }
    tensor_free(&q);
    tensor_free(&r);
    Tensor s = binary(OP_ADD, DT_I32, a, b, 7), m = binary(OP_MUL, DT_I32, a, b, 7);
    CHECK_VAL(s.data[4], -2147483648.0); /* INT_MAX + 1 wraps */
    CHECK_VAL(m.data[5], -2147483648.0); /* INT_MIN * -1 wraps */
    CHECK_VAL(m.data[0], -14);
    tensor_free(&s);
    tensor_free(&m);

    double big[] = {9007199254740992.0, -5};
    double one[] = {3, 3};
    Tensor q64 = binary(OP_DIV, DT_I64, big, one, 2), p = binary(OP_POW, DT_I64, big + 1, one, 1);
    CHECK_VAL(q64.data[0], 3002399751580330.0);
    CHECK_VAL(q64.data[1], -1);
    CHECK_VAL(p.data[0], -125);
    tensor_free(&q64);
    tensor_free(&p);

    /* integer division by zero is an error, not a crash; float division is IEEE */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_I32, SH(1, D(3)));
    IrNode *y = param(f, "y", DT_I32, SH(1, D(3)));
    result(f, node(f, OP_DIV, DT_I32, x->shape, x, y, NULL), "q");
    Tensor in[2] = {vec(DT_I32, 3, (double[]){1, 2, 3}), vec(DT_I32, 3, (double[]){1, 0, 1})}, out;
    CHECK(!run(f, in, &out));
    CHECK(strstr(errbuf, "integer division by zero") != NULL);
    free_all(in, 2);
    f = fn();
    x = param(f, "x", DT_I64, SH(1, D(1)));
    y = param(f, "y", DT_I64, SH(1, D(1)));
    result(f, node(f, OP_MOD, DT_I64, x->shape, x, y, NULL), "r");
    Tensor in2[2] = {vec(DT_I64, 1, (double[]){1}), vec(DT_I64, 1, (double[]){0})};
    CHECK(!run(f, in2, &out));
    CHECK(strstr(errbuf, "remainder by zero") != NULL);
    free_all(in2, 2);
    /* the failing node's place: in the message (interp_run) or out (interp_run_at) */
    static const char src[] = "fn f(a: i32) -> i32 {\n    return a / 0\n}\n";
    int fid = diag_add_file("t.fuse", src, sizeof src - 1);
    f = fn();
    x = param(f, "x", DT_I64, SH(1, D(1)));
    IrNode *dz = node(f, OP_DIV, DT_I64, x->shape, x, cnst(f, DT_I64, 0), NULL);
    dz->loc = (Loc){fid, 33, 38};
    result(f, dz, "q");
    Tensor onei = vec(DT_I64, 1, (double[]){1});
    CHECK(!run(f, &onei, &out));
    CHECK(strstr(errbuf, "integer division by zero (at t.fuse:2:12)") != NULL);
    Loc at = LOC_NONE;
    CHECK(!interp_run_at(f, &onei, &out, errbuf, sizeof errbuf, &at));
    CHECK(strcmp(errbuf, "integer division by zero") == 0 && at.file == fid && at.begin == 33);
    tensor_free(&onei);
    Tensor fd = binary(OP_DIV, DT_F32, (double[]){1, -1, 0}, (double[]){0, 0, 0}, 3);
    CHECK_VAL(fd.data[0], INFINITY);
    CHECK_VAL(fd.data[1], -INFINITY);
    CHECK_VAL(fd.data[2], NAN);
    tensor_free(&fd);

    /* integer sums wrap; mean of ints is computed in f64 */
    double ints[] = {2147483647, 1, 5};
    double got = 0;
    CHECK(reduce1(OP_SUM, DT_I32, DT_I32, ints, 3, &got));
    CHECK_VAL(got, -2147483643.0);
    CHECK(reduce1(OP_SUM, DT_I32, DT_I64, ints, 3, &got));
    CHECK_VAL(got, 2147483653.0);
    CHECK(reduce1(OP_MEAN, DT_I32, DT_F64, (double[]){1, 2}, 2, &got));
    CHECK_VAL(got, 1.5);
    CHECK(reduce1(OP_PROD, DT_I64, DT_I64, (double[]){-3, 4, 5}, 3, &got));
    CHECK_VAL(got, -60);
    Tensor na = unary(OP_ABS, DT_I32, (double[]){-2147483648.0, -4}, 2);
    CHECK_VAL(na.data[0], -2147483648.0);
    CHECK_VAL(na.data[1], 4);
    tensor_free(&na);
}

/* ---- casts ----------------------------------------------------------------------- */

static Tensor cast(DType from, DType to, const double *xs, int64_t n)
{
    IrFunc *f = fn();
    IrNode *x = param(f, "x", from, SH(1, n));
    result(f, node(f, OP_CAST, to, x->shape, x, NULL, NULL), "y");
    Tensor in = vec(from, n, xs), out;
    if (!run(f, &in, &out))
        abort();
    tensor_free(&in);
    return out;
}

static void test_cast(void)
{
    Tensor a = cast(DT_F32, DT_I32, (double[]){3.7, -3.7, NAN, 1e20, -1e20, INFINITY}, 6);
    double wa[] = {3, -3, 0, 2147483647, -2147483648.0, 2147483647};
    for (int i = 0; i < 6; i++)
        CHECK_VAL(a.data[i], wa[i]);
    tensor_free(&a);
    Tensor b = cast(DT_I64, DT_I32, (double[]){4294967301.0, -1, 2147483648.0}, 3);
    CHECK_VAL(b.data[0], 5); /* int to int wraps */
    CHECK_VAL(b.data[1], -1);
    CHECK_VAL(b.data[2], -2147483648.0);
    tensor_free(&b);
    Tensor c = cast(DT_F64, DT_BOOL, (double[]){0, -0.0, 2, NAN}, 4);
    CHECK(c.data[0] == 0 && c.data[1] == 0 && c.data[2] == 1 && c.data[3] == 1);
    tensor_free(&c);
    Tensor d = cast(DT_F64, DT_F16, (double[]){0.1, 70000, 1e-8}, 3);
    CHECK_VAL(d.data[0], f16_bits_to_double(0x2e66));
    CHECK_VAL(d.data[1], INFINITY);
    CHECK_VAL(d.data[2], ldexp(1, -24) * 0); /* 1e-8 < 2^-25: rounds to 0 */
    tensor_free(&d);
    Tensor e = cast(DT_F64, DT_BF16, (double[]){3.14159265358979}, 1);
    CHECK_VAL(e.data[0], 3.140625);
    tensor_free(&e);

    /* an f16 result is rounded to f16: 1 + 2^-11 in f16 is 1 */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F16, SH(1, D(2)));
    result(f, node(f, OP_ADD, DT_F16, x->shape, x, cnst(f, DT_F16, ldexp(1, -11)), NULL), "y");
    Tensor in = vec(DT_F16, 2, (double[]){1, 1 + ldexp(1, -10)}), out;
    CHECK(run(f, &in, &out));
    CHECK_VAL(out.data[0], 1);
    CHECK_VAL(out.data[1], 1 + ldexp(1, -9)); /* odd + half ulp: ties to even goes up */
    tensor_free(&out);
    tensor_free(&in);
}

/* ---- elementwise ops vs libm ---------------------------------------------------- */

static void test_unary_ops(void)
{
    const double pts[] = {-2.5, -1, -0.5, 0, 0.5, 1, 2.5, 3.5};
    enum { NP = 8 };
    struct {
        OpKind op;
        double (*ref)(double);
    } table[] = {
        {OP_EXP, exp},     {OP_EXP2, exp2}, {OP_EXPM1, expm1}, {OP_SIN, sin},     {OP_COS, cos},
        {OP_TAN, tan},     {OP_TANH, tanh}, {OP_ERF, erf},     {OP_FLOOR, floor}, {OP_CEIL, ceil},
        {OP_TRUNC, trunc}, {OP_ROUND, rint}, {OP_CBRT, cbrt},  {OP_ABS, fabs},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        Tensor t = unary(table[k].op, DT_F64, pts, NP);
        for (int i = 0; i < NP; i++)
            CHECK_NEAR(t.data[i], table[k].ref(pts[i]), 1e-15);
        tensor_free(&t);
    }
    const double pos[] = {0.25, 1, 2, 10};
    Tensor lg = unary(OP_LOG, DT_F64, pos, 4), l2 = unary(OP_LOG2, DT_F64, pos, 4),
           l1 = unary(OP_LOG1P, DT_F64, pos, 4), sq = unary(OP_SQRT, DT_F64, pos, 4),
           rs = unary(OP_RSQRT, DT_F64, pos, 4), rc = unary(OP_RECIP, DT_F64, pos, 4);
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(lg.data[i], log(pos[i]), 1e-15);
        CHECK_NEAR(l2.data[i], log2(pos[i]), 1e-15);
        CHECK_NEAR(l1.data[i], log1p(pos[i]), 1e-15);
        CHECK_NEAR(sq.data[i], sqrt(pos[i]), 1e-15);
        CHECK_NEAR(rs.data[i], 1 / sqrt(pos[i]), 1e-15);
        CHECK_NEAR(rc.data[i], 1 / pos[i], 1e-15);
    }
    Tensor *all[] = {&lg, &l2, &l1, &sq, &rs, &rc};
    for (int i = 0; i < 6; i++)
        tensor_free(all[i]);
    Tensor ln = unary(OP_LOG, DT_F64, (double[]){0, -1}, 2);
    CHECK_VAL(ln.data[0], -INFINITY);
    CHECK_VAL(ln.data[1], NAN);
    tensor_free(&ln);

    /* round is half to even */
    Tensor rd = unary(OP_ROUND, DT_F32, (double[]){0.5, 1.5, 2.5, -0.5, -2.5}, 5);
    CHECK(rd.data[0] == 0 && rd.data[1] == 2 && rd.data[2] == 2 && rd.data[3] == 0 && rd.data[4] == -2);
    tensor_free(&rd);

    /* activations at a few points, hand-computed */
    Tensor sg = unary(OP_SIGMOID, DT_F64, (double[]){0, 2, -800}, 3);
    CHECK_NEAR(sg.data[0], 0.5, 1e-15);
    CHECK_NEAR(sg.data[1], 0.8807970779778823, 1e-15);
    CHECK_VAL(sg.data[2], 0);
    tensor_free(&sg);
    Tensor ge = unary(OP_GELU, DT_F64, (double[]){1, -1, 0}, 3);
    CHECK_NEAR(ge.data[0], 0.8413447460685429, 1e-15);
    CHECK_NEAR(ge.data[1], -0.15865525393145707, 1e-14);
    CHECK_VAL(ge.data[2], 0);
    tensor_free(&ge);
    Tensor gt = unary(OP_GELU_TANH, DT_F64, (double[]){1, -1}, 2);
    CHECK_NEAR(gt.data[0], 0.8411919906082768, 1e-14);
    CHECK_NEAR(gt.data[1], -0.15880800939172324, 1e-13);
    tensor_free(&gt);
    Tensor si = unary(OP_SILU, DT_F64, (double[]){1, -2}, 2);
    CHECK_NEAR(si.data[0], 0.7310585786300049, 1e-15);
    CHECK_NEAR(si.data[1], -0.23840584404423515, 1e-15);
    tensor_free(&si);
    Tensor sq2 = unary(OP_SQUARE, DT_F32, (double[]){-3, 1.5}, 2);
    CHECK(sq2.data[0] == 9 && sq2.data[1] == 2.25);
    tensor_free(&sq2);
    Tensor ng = unary(OP_NEG, DT_F32, (double[]){2, -0.0}, 2);
    CHECK(ng.data[0] == -2 && ng.data[1] == 0 && !signbit(ng.data[1]));
    tensor_free(&ng);
    Tensor in_ = unary(OP_ISNAN, DT_F32, (double[]){NAN, 1, INFINITY}, 3),
           ii = unary(OP_ISINF, DT_F32, (double[]){NAN, 1, -INFINITY}, 3),
           nt = unary(OP_NOT, DT_BOOL, (double[]){0, 1, 1}, 3);
    CHECK(in_.dtype == DT_BOOL && in_.data[0] == 1 && in_.data[1] == 0 && in_.data[2] == 0);
    CHECK(ii.data[0] == 0 && ii.data[1] == 0 && ii.data[2] == 1);
    CHECK(nt.data[0] == 1 && nt.data[1] == 0);
    tensor_free(&in_);
    tensor_free(&ii);
    tensor_free(&nt);
    /* f32 results are rounded: exp(1) in f32 */
    Tensor e32 = unary(OP_EXP, DT_F32, (double[]){1}, 1);
    CHECK_VAL(e32.data[0], (double)(float)exp(1.0));
    tensor_free(&e32);
}

static void test_binary_ops(void)
{
    double a[] = {-3, 2, 5.5, 0}, b[] = {2, 2, -1.5, 0};
    struct {
        OpKind op;
        double want[4];
    } table[] = {
        {OP_ADD, {-1, 4, 4, 0}},
        {OP_SUB, {-5, 0, 7, 0}},
        {OP_MUL, {-6, 4, -8.25, 0}},
        {OP_MOD, {-1, 0, 1, NAN}}, /* fmod: sign of the dividend */
        {OP_POW, {9, 4, 1 / (5.5 * sqrt(5.5)), 1}},
        {OP_MIN2, {-3, 2, -1.5, 0}},
        {OP_MAX2, {2, 2, 5.5, 0}},
        {OP_EQ, {0, 1, 0, 1}},
        {OP_NE, {1, 0, 1, 0}},
        {OP_LT, {1, 0, 0, 0}},
        {OP_LE, {1, 1, 0, 1}},
        {OP_GT, {0, 0, 1, 0}},
        {OP_GE, {0, 1, 1, 1}},
        {OP_AND, {1, 1, 1, 0}},
        {OP_OR, {1, 1, 1, 0}},
        {OP_ATAN2, {atan2(-3, 2), atan2(2, 2), atan2(5.5, -1.5), 0}},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        Tensor t = binary(table[k].op, DT_F64, a, b, 4);
        for (int i = 0; i < 4; i++)
            CHECK_NEAR(t.data[i], table[k].want[i], 1e-15);
        tensor_free(&t);
    }
    /* fma and where */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F64, SH(1, D(3)));
    IrNode *c = param(f, "c", DT_BOOL, SH(1, D(3)));
    result(f, node(f, OP_FMA, DT_F64, x->shape, x, x, cnst(f, DT_F64, 1)), "fma");
    result(f, node(f, OP_WHERE, DT_F64, x->shape, c, x, cnst(f, DT_F64, -1)), "w");
    Tensor in[2] = {vec(DT_F64, 3, (double[]){2, 3, 1 + ldexp(1, -30)}), vec(DT_BOOL, 3, (double[]){1, 0, 1})};
    Tensor out[2];
    CHECK(run(f, in, out));
    CHECK_VAL(out[0].data[0], 5);
    CHECK_VAL(out[0].data[1], 10);
    CHECK_VAL(out[0].data[2], fma(1 + ldexp(1, -30), 1 + ldexp(1, -30), 1));
    CHECK_VAL(out[1].data[0], 2);
    CHECK_VAL(out[1].data[1], -1);
    free_all(out, 2);
    free_all(in, 2);
}

/* ---- broadcasting, keepdims, views ---------------------------------------------- */

static void test_broadcast(void)
{
    IrFunc *f = fn();
    int N = ir_sym_intern(f, "N");
    IrNode *x = param(f, "x", DT_F32, SH(2, D(-1 - N), D(3)));
    IrNode *b = param(f, "b", DT_F32, SH(1, D(3)));
    IrNode *c = param(f, "c", DT_F32, SH(1, D(-1 - N)));
    IrNode *s = node(f, OP_ADD, DT_F32, x->shape, x, b, NULL);               /* [N,3] + [3] */
    IrNode *cu = node(f, OP_UNSQUEEZE, DT_F32, SH(2, D(-1 - N), D(1)), c, NULL, NULL);
    cu->axis = 1;
    IrNode *m = node(f, OP_MUL, DT_F32, x->shape, s, cu, NULL);             /* [N,3] * [N,1] */
    IrNode *rs = reduce(f, OP_SUM, DT_F32, m, 2, 1);                         /* [N,1] */
    IrNode *dv = node(f, OP_DIV, DT_F32, x->shape, m, rs, NULL);            /* [N,3] / [N,1] */
    IrNode *outer = node(f, OP_MUL, DT_F32, SH(2, D(-1 - N), D(3)), cu, b, NULL); /* [N,1]*[3] */
    result(f, m, "m");
    result(f, rs, "rs");
    result(f, dv, "dv");
    result(f, outer, "outer");
    result(f, cu, "cu");
    CHECK(m->in[1].bcast == 2 && s->in[1].bcast == 1 && outer->in[0].bcast == 2 && outer->in[1].bcast == 1);
    double xs[] = {1, 2, 3, 4, 5, 6}, bs[] = {10, 20, 30}, cs[] = {2, -1};
    Tensor in[3] = {tens(DT_F32, 2, (int64_t[]){2, 3}, xs), vec(DT_F32, 3, bs), vec(DT_F32, 2, cs)};
    Tensor out[5];
    CHECK(run(f, in, out));
    double wm[] = {22, 44, 66, -14, -25, -36};
    for (int i = 0; i < 6; i++)
        CHECK_VAL(out[0].data[i], wm[i]);
    CHECK(out[1].rank == 2 && out[1].dims[0] == 2 && out[1].dims[1] == 1);
    CHECK_VAL(out[1].data[0], 132);
    CHECK_VAL(out[1].data[1], -75);
    CHECK_VAL(out[2].data[0], (double)(float)(22.0 / 132));
    CHECK_VAL(out[2].data[5], (double)(float)(36.0 / 75));
    double wo[] = {20, 40, 60, -10, -20, -30};
    for (int i = 0; i < 6; i++)
        CHECK_VAL(out[3].data[i], wo[i]);
    CHECK(out[4].rank == 2 && out[4].dims[1] == 1 && out[4].data[1] == -1);
    free_all(out, 5);
    free_all(in, 3);

    /* a rank-0 param broadcast against a tensor */
    f = fn();
    x = param(f, "x", DT_F32, SH(1, D(2)));
    IrNode *k = param(f, "k", DT_F32, SH(0));
    result(f, node(f, OP_SUB, DT_F32, x->shape, k, x, NULL), "y");
    Tensor in2[2] = {vec(DT_F32, 2, (double[]){1, 2}), tens(DT_F32, 0, NULL, (double[]){10})};
    CHECK(run(f, in2, out));
    CHECK(out[0].data[0] == 9 && out[0].data[1] == 8);
    tensor_free(&out[0]);
    free_all(in2, 2);
}

/* Every reduction over axes (0, 2) of a [2, 3, 4] tensor, against a naive loop. */
static void test_reductions(void)
{
    const OpKind ops[] = {OP_SUM, OP_PROD, OP_RMAX, OP_RMIN, OP_MEAN, OP_ANY, OP_ALL, OP_VAR, OP_STD, OP_LOGSUMEXP};
    double xs[24];
    for (int i = 0; i < 24; i++)
        xs[i] = ((i * 7) % 11 - 5) * 0.25; /* includes zeros */
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        for (int keep = 0; keep < 2; keep++) {
            IrFunc *f = fn();
            IrNode *x = param(f, "x", DT_F64, SH(3, D(2), D(3), D(4)));
            DType rt = (ops[k] == OP_ANY || ops[k] == OP_ALL) ? DT_BOOL : DT_F64;
            result(f, reduce(f, ops[k], rt, x, 5, keep), "r");
            Tensor in = tens(DT_F64, 3, (int64_t[]){2, 3, 4}, xs), out;
            CHECK(run(f, &in, &out));
            CHECK(out.rank == (keep ? 3 : 1) && out.numel == 3);
            if (keep)
                CHECK(out.dims[0] == 1 && out.dims[1] == 3 && out.dims[2] == 1);
            for (int j = 0; j < 3; j++) {
                double v[8];
                int n = 0;
                for (int a = 0; a < 2; a++)
                    for (int c = 0; c < 4; c++)
                        v[n++] = xs[a * 12 + j * 4 + c];
                double s = 0, p = 1, mx = -INFINITY, mn = INFINITY, any = 0, all = 1;
                for (int i = 0; i < 8; i++) {
                    s += v[i];
                    p *= v[i];
                    mx = fmax(mx, v[i]);
                    mn = fmin(mn, v[i]);
                    any = any || v[i] != 0;
                    all = all && v[i] != 0;
                }
                double mean = s / 8, var = 0, lse = 0;
                for (int i = 0; i < 8; i++) {
                    var += (v[i] - mean) * (v[i] - mean) / 8;
                    lse += exp(v[i]);
                }
                double want = 0;
                switch (ops[k]) {
                case OP_SUM: want = s; break;
                case OP_PROD: want = p; break;
                case OP_RMAX: want = mx; break;
                case OP_RMIN: want = mn; break;
                case OP_MEAN: want = mean; break;
                case OP_ANY: want = any; break;
                case OP_ALL: want = all; break;
                case OP_VAR: want = var; break;
                case OP_STD: want = sqrt(var); break;
                case OP_LOGSUMEXP: want = log(lse); break;
                default: break;
                }
                CHECK_NEAR(out.data[j], want, 1e-14);
            }
            tensor_free(&out);
            tensor_free(&in);
        }
    }
    /* argmax over the middle axis of [2, 3, 2]; reductions over all axes of rank 3 */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F32, SH(3, D(2), D(3), D(2)));
    result(f, reduce(f, OP_ARGMAX, DT_I64, x, 2, 0), "am");
    result(f, reduce(f, OP_ARGMIN, DT_I64, x, 2, 1), "an");
    result(f, reduce(f, OP_SUM, DT_F32, x, 7, 0), "all");
    double ys[] = {0, 5, 3, 5, 3, 1, /**/ 9, -1, 9, -2, 1, -2};
    Tensor in = tens(DT_F32, 3, (int64_t[]){2, 3, 2}, ys), out[3];
    CHECK(run(f, &in, out));
    CHECK(out[0].dtype == DT_I64 && out[0].rank == 2 && out[0].numel == 4);
    CHECK(out[0].data[0] == 1 && out[0].data[1] == 0 && out[0].data[2] == 0 && out[0].data[3] == 0);
    CHECK(out[1].rank == 3 && out[1].dims[1] == 1);
    CHECK(out[1].data[0] == 0 && out[1].data[1] == 2 && out[1].data[2] == 2 && out[1].data[3] == 1);
    CHECK(out[2].rank == 0 && out[2].data[0] == 31);
    free_all(out, 3);
    tensor_free(&in);

    /* sums are compensated: exact where a plain f64 sum loses the 1 */
    CHECK_VAL(r1(OP_SUM, (double[]){1e16, 1, -1e16}, 3), 1);
    CHECK_VAL(r1(OP_MEAN, (double[]){1e16, 1, -1e16, 3}, 4), 1);
    CHECK_VAL(r1(OP_SUM, (double[]){INFINITY, 1, 1e300}, 3), INFINITY);
    CHECK_VAL(r1(OP_SUM, (double[]){INFINITY, -INFINITY}, 2), NAN);
    CHECK_VAL(r1(OP_SUM, (double[]){1e308, 1e308, -1e308}, 3), INFINITY); /* overflow stays */
    /* var and std are population statistics; logsumexp is stable */
    double four[] = {1, 2, 3, 4};
    CHECK_VAL(r1(OP_VAR, four, 4), 1.25);
    CHECK_VAL(r1(OP_STD, four, 4), sqrt(1.25));
    CHECK_NEAR(r1(OP_LOGSUMEXP, (double[]){1000, 1000}, 2), 1000 + log(2), 1e-15);
    CHECK_VAL(r1(OP_LOGSUMEXP, (double[]){-INFINITY, -INFINITY}, 2), -INFINITY);
    CHECK_VAL(r1(OP_LOGSUMEXP, (double[]){INFINITY, 1}, 2), INFINITY);
    CHECK_VAL(r1(OP_LOGSUMEXP, (double[]){NAN, 1}, 2), NAN);
    CHECK_NEAR(r1(OP_LOGSUMEXP, (double[]){-INFINITY, 0}, 2), 0, 1e-15);
}

/* ---- sizes and input checks -------------------------------------------------------- */

static void test_sizes(void)
{
    int64_t st[IR_MAX_RANK], n = 0;
    int64_t big[] = {((int64_t)1 << 31) + 5, 3};
    CHECK(tensor_strides(2, big, st, &n));
    CHECK(st[0] == 3 && st[1] == 1 && n == (((int64_t)1 << 31) + 5) * 3);
    int64_t r8[] = {3, 1 << 20, 1 << 20, 2, 2, 2, 2, 2};
    CHECK(tensor_strides(8, r8, st, &n));
    CHECK(n == (int64_t)3 << 45 && st[0] == (int64_t)1 << 45 && st[2] == 32 && st[7] == 1);
    int64_t over[] = {(int64_t)1 << 40, (int64_t)1 << 40};
    CHECK(!tensor_strides(2, over, st, &n));
    int64_t over0[] = {(int64_t)1 << 40, (int64_t)1 << 40, 0};
    CHECK(tensor_strides(3, over0, st, &n) && n == 0);
    int64_t neg[] = {2, -1};
    CHECK(!tensor_strides(2, neg, st, &n));
    Tensor t;
    CHECK(!tensor_alloc(&t, DT_F32, 2, over));

    /* a rank-8 program: every axis except the last two reduced */
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F64, SH(8, D(2), D(1), D(2), D(1), D(2), D(1), D(2), D(3)));
    result(f, reduce(f, OP_SUM, DT_F64, x, 0x3f, 0), "s");
    Tensor in = tens(DT_F64, 8, (int64_t[]){2, 1, 2, 1, 2, 1, 2, 3}, NULL), out;
    for (int64_t i = 0; i < in.numel; i++)
        in.data[i] = (double)i;
    CHECK(run(f, &in, &out));
    CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 3);
    /* element (j, k) sums i = a*24 + b*12 + c*6 + j*3 + k over a,b,c in {0,1} */
    CHECK_VAL(out.data[0], 8 * 0 + 4 * (24 + 12 + 6));
    CHECK_VAL(out.data[5], 8 * 5 + 4 * (24 + 12 + 6));
    tensor_free(&out);
    tensor_free(&in);
}

static void test_checks(void)
{
    IrFunc *f = fn();
    int N = ir_sym_intern(f, "N");
    IrNode *x = param(f, "x", DT_F32, SH(1, D(-1 - N)));
    IrNode *y = param(f, "y", DT_F32, SH(2, D(-1 - N), D(4)));
    IrNode *xu = node(f, OP_UNSQUEEZE, DT_F32, SH(2, D(-1 - N), D(1)), x, NULL, NULL);
    xu->axis = 1;
    result(f, node(f, OP_ADD, DT_F32, y->shape, xu, y, NULL), "z");
    Tensor out;
    Tensor ok_in[2] = {vec(DT_F32, 3, NULL), tens(DT_F32, 2, (int64_t[]){3, 4}, NULL)};
    CHECK(run(f, ok_in, &out));
    tensor_free(&out);
    free_all(ok_in, 2);

    Tensor bad_n[2] = {vec(DT_F32, 3, NULL), tens(DT_F32, 2, (int64_t[]){5, 4}, NULL)};
    CHECK(!run(f, bad_n, &out));
    CHECK(strstr(errbuf, "'y'") && strstr(errbuf, "dim N") && strstr(errbuf, "5") && strstr(errbuf, "3") &&
          strstr(errbuf, "'x'"));
    free_all(bad_n, 2);

    Tensor bad_static[2] = {vec(DT_F32, 3, NULL), tens(DT_F32, 2, (int64_t[]){3, 5}, NULL)};
    CHECK(!run(f, bad_static, &out));
    CHECK(strstr(errbuf, "'y'") && strstr(errbuf, "axis 1") && strstr(errbuf, "5") && strstr(errbuf, "4"));
    free_all(bad_static, 2);

    Tensor bad_rank[2] = {tens(DT_F32, 2, (int64_t[]){3, 1}, NULL), tens(DT_F32, 2, (int64_t[]){3, 4}, NULL)};
    CHECK(!run(f, bad_rank, &out));
    CHECK(strstr(errbuf, "'x'") && strstr(errbuf, "rank 2") && strstr(errbuf, "rank 1"));
    free_all(bad_rank, 2);

    Tensor bad_dt[2] = {vec(DT_F64, 3, NULL), tens(DT_F32, 2, (int64_t[]){3, 4}, NULL)};
    CHECK(!run(f, bad_dt, &out));
    CHECK(strstr(errbuf, "'x'") && strstr(errbuf, "f64") && strstr(errbuf, "f32"));
    free_all(bad_dt, 2);

    /* -D N=3 made N static: a size-2 input is refused, naming -D */
    f->sym_static[N] = 3;
    Tensor bad_d[2] = {vec(DT_F32, 2, NULL), tens(DT_F32, 2, (int64_t[]){2, 4}, NULL)};
    CHECK(!run(f, bad_d, &out));
    CHECK(strstr(errbuf, "-D N=3") != NULL && strstr(errbuf, "'x'"));
    free_all(bad_d, 2);
}

/* A long chain reuses memory: only live values are held (checked under
 * valgrind/ASan for leaks; here for the right answer through steals). */
static void test_chain(void)
{
    IrFunc *f = fn();
    IrNode *x = param(f, "x", DT_F64, SH(1, D(1000)));
    IrNode *v = x;
    for (int i = 0; i < 200; i++)
        v = node(f, OP_ADD, DT_F64, x->shape, v, cnst(f, DT_F64, 1), NULL);
    IrNode *u = node(f, OP_UNSQUEEZE, DT_F64, SH(2, D(1), D(1000)), v, NULL, NULL);
    u->axis = 0;
    result(f, u, "y");
    result(f, x, "x_again");
    /* a dead node is never evaluated: its division by zero does not happen */
    IrNode *xi = node(f, OP_CAST, DT_I32, x->shape, x, NULL, NULL);
    node(f, OP_DIV, DT_I32, x->shape, xi, cnst(f, DT_I32, 0), NULL);
    Tensor in = vec(DT_F64, 1000, NULL), out[2];
    for (int i = 0; i < 1000; i++)
        in.data[i] = i;
    CHECK(run(f, &in, out));
    CHECK(out[0].rank == 2 && out[0].data[999] == 1199 && out[0].data[0] == 200);
    CHECK(out[1].data != in.data && out[1].data[7] == 7); /* results never alias inputs */
    free_all(out, 2);
    tensor_free(&in);
}

static void test_random(void)
{
    Tensor a, b, h;
    int64_t n = 4096;
    tensor_alloc(&a, DT_F32, 1, &n);
    tensor_alloc(&b, DT_F32, 1, &n);
    tensor_alloc(&h, DT_BF16, 1, &n);
    tensor_fill_random(&a, 7);
    tensor_fill_random(&b, 7);
    tensor_fill_random(&h, 7);
    int same_all = 1, in_range = 1, exact = 1;
    for (int64_t i = 0; i < n; i++) {
        same_all &= a.data[i] == b.data[i];
        in_range &= a.data[i] >= -2 && a.data[i] < 2 && h.data[i] >= -2 && h.data[i] < 2;
        exact &= round_to_dtype(a.data[i], DT_F32) == a.data[i] && round_to_dtype(h.data[i], DT_BF16) == h.data[i];
    }
    CHECK(same_all && in_range && exact);
    tensor_fill_random(&b, 8);
    CHECK(memcmp(a.data, b.data, sizeof(double) * (size_t)n) != 0);
    tensor_free(&a);
    tensor_free(&b);
    tensor_free(&h);
    Tensor iv;
    tensor_alloc(&iv, DT_I32, 1, &n);
    tensor_fill_random(&iv, 1);
    int ok = 1;
    for (int64_t i = 0; i < n; i++)
        ok &= iv.data[i] >= -8 && iv.data[i] < 8 && iv.data[i] == trunc(iv.data[i]);
    CHECK(ok);
    tensor_free(&iv);
}

int main(void)
{
    test_half();
    test_nan();
    test_empty();
    test_int();
    test_cast();
    test_unary_ops();
    test_binary_ops();
    test_broadcast();
    test_reductions();
    test_sizes();
    test_checks();
    test_chain();
    test_random();
    arena_free_all(&arena);
    printf("test_interp: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
