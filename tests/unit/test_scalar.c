/* test_scalar.c -- the two rules every value of fusec passes through, each
 * written once:
 *   round_to_dtype (half.c): NaN, +-inf, out of range, negatives and
 *     halfway values for f16, bf16, f32, i32, i64 and bool, as
 *     docs/language.md states them (float to integer truncates, NaN gives 0,
 *     out of range saturates; to bool is x != 0; f16/bf16 round to nearest
 *     even and overflow to inf);
 *   op_eval_scalar (ops.c): every elementwise op of ops.def has a scalar
 *     meaning, and constant folding (ir_optimize) gives, for every op on a
 *     grid of values and dtypes, exactly what the interpreter computes for
 *     the same node with the values passed as params. */
#include "interp.h"
#include "ir.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

#define CHECK_ROUND(v, t, want) check_round((v), (t), (want), __LINE__)
static void check_round(double v, DType t, double want, int line)
{
    double got = round_to_dtype(v, t);
    checks++;
    /* an integer or bool is never -0 */
    int bad_zero = !dtype_is_float(t) && got == 0 && signbit(got);
    if (!same(got, want) || bad_zero) {
        failures++;
        fprintf(stderr, "test_scalar.c:%d: FAILED: round_to_dtype(%.17g, %s) = %.17g, want %.17g\n", line, v,
                dtype_name(t), got, want);
    }
}

static void test_rounding(void)
{
    const double big = 1e300;
    /* f16: max 65504, ties to even, overflow once halfway to 2^16 */
    CHECK_ROUND(NAN, DT_F16, NAN);
    CHECK_ROUND(INFINITY, DT_F16, INFINITY);
    CHECK_ROUND(-INFINITY, DT_F16, -INFINITY);
    CHECK_ROUND(65519, DT_F16, 65504);
    CHECK_ROUND(65520, DT_F16, INFINITY);
    CHECK_ROUND(-65520, DT_F16, -INFINITY);
    CHECK_ROUND(-big, DT_F16, -INFINITY);
    CHECK_ROUND(-1.5, DT_F16, -1.5);
    CHECK_ROUND(1 + ldexp(1, -11), DT_F16, 1);               /* halfway: down to even */
    CHECK_ROUND(1 + ldexp(3, -11), DT_F16, 1 + ldexp(1, -9)); /* halfway: up to even */
    CHECK_ROUND(-2049, DT_F16, -2048);                       /* spacing 2 past 2048 */
    CHECK_ROUND(2051, DT_F16, 2052);
    CHECK_ROUND(ldexp(1, -25), DT_F16, 0);                   /* half the smallest subnormal */
    CHECK_ROUND(ldexp(3, -25), DT_F16, ldexp(1, -23));
    /* bf16: f32's range, 7 fraction bits */
    CHECK_ROUND(NAN, DT_BF16, NAN);
    CHECK_ROUND(INFINITY, DT_BF16, INFINITY);
    CHECK_ROUND(-INFINITY, DT_BF16, -INFINITY);
    CHECK_ROUND(ldexp(2.0 - ldexp(1, -8), 127), DT_BF16, INFINITY); /* halfway past the max */
    CHECK_ROUND(-ldexp(2.0 - ldexp(1, -7), 127), DT_BF16, -ldexp(2.0 - ldexp(1, -7), 127));
    CHECK_ROUND(1 + ldexp(1, -8), DT_BF16, 1);
    CHECK_ROUND(1 + ldexp(3, -8), DT_BF16, 1 + ldexp(1, -6));
    CHECK_ROUND(-257, DT_BF16, -256);
    CHECK_ROUND(-259, DT_BF16, -260);
    /* f32 */
    CHECK_ROUND(NAN, DT_F32, NAN);
    CHECK_ROUND(-INFINITY, DT_F32, -INFINITY);
    CHECK_ROUND(1e39, DT_F32, INFINITY);
    CHECK_ROUND(-1e39, DT_F32, -INFINITY);
    CHECK_ROUND(FLT_MAX, DT_F32, FLT_MAX);
    CHECK_ROUND(1 + ldexp(1, -24), DT_F32, 1);
    /* i32: truncation toward zero (not to even), NaN 0, saturation */
    CHECK_ROUND(NAN, DT_I32, 0);
    CHECK_ROUND(INFINITY, DT_I32, 2147483647);
    CHECK_ROUND(-INFINITY, DT_I32, -2147483648.0);
    CHECK_ROUND(3e9, DT_I32, 2147483647);
    CHECK_ROUND(-3e9, DT_I32, -2147483648.0);
    CHECK_ROUND(2147483647.9, DT_I32, 2147483647);
    CHECK_ROUND(-2147483648.9, DT_I32, -2147483648.0);
    CHECK_ROUND(2.5, DT_I32, 2);
    CHECK_ROUND(-2.5, DT_I32, -2);
    CHECK_ROUND(3.5, DT_I32, 3);
    CHECK_ROUND(-0.5, DT_I32, 0);
    CHECK_ROUND(-0.0, DT_I32, 0);
    CHECK_ROUND(-7.9, DT_I32, -7);
    /* i64: 2^63 stands for INT64_MAX */
    CHECK_ROUND(NAN, DT_I64, 0);
    CHECK_ROUND(INFINITY, DT_I64, 9223372036854775808.0);
    CHECK_ROUND(-INFINITY, DT_I64, -9223372036854775808.0);
    CHECK_ROUND(1e19, DT_I64, 9223372036854775808.0);
    CHECK_ROUND(-big, DT_I64, -9223372036854775808.0);
    CHECK_ROUND(-7.5, DT_I64, -7);
    CHECK_ROUND(2.5, DT_I64, 2);
    CHECK_ROUND(-0.5, DT_I64, 0);
    CHECK_ROUND(4503599627370497.0, DT_I64, 4503599627370497.0);
    CHECK(double_to_i64(INFINITY) == INT64_MAX);
    CHECK(double_to_i64(-INFINITY) == INT64_MIN);
    CHECK(double_to_i64(NAN) == 0);
    CHECK(double_to_i64(-2.5) == -2);
    /* bool: x != 0, so NaN and inf are true, -0 false */
    CHECK_ROUND(NAN, DT_BOOL, 1);
    CHECK_ROUND(INFINITY, DT_BOOL, 1);
    CHECK_ROUND(-INFINITY, DT_BOOL, 1);
    CHECK_ROUND(-0.0, DT_BOOL, 0);
    CHECK_ROUND(0.5, DT_BOOL, 1);
    CHECK_ROUND(-1e-300, DT_BOOL, 1);
    CHECK_ROUND(-3, DT_BOOL, 1);
    /* f64 keeps everything */
    CHECK_ROUND(-big, DT_F64, -big);
    CHECK_ROUND(NAN, DT_F64, NAN);
}

/* ---- folding against interpreting ------------------------------------------ */

static const IrShape scalar = {0, {{0, 0}}};

static const double values[] = {0,   -0.0, 1,    -1,   0.5,   -0.5,       2.5,         -2.5,     3,
                                -7,  100.25, 1e10, -1e10, 65519, 2147483647, -2147483648.0, 4e9, NAN,
                                INFINITY, -INFINITY};
#define NVALUES ((int)(sizeof values / sizeof values[0]))
/* binary and ternary ops take pairs and triples of a shorter list */
static const double few[] = {0, -0.0, 1, -2.5, 3, -7, 1e10, NAN, INFINITY, -INFINITY};
#define NFEW ((int)(sizeof few / sizeof few[0]))

static int cases, folded;

/* One node of op with operands of dtypes in[] holding v[], and node dtype
 * dt: folded (operands constants) against interpreted (operands params). */
static void compare(OpKind op, DType dt, const DType *in, const double *v)
{
    int arity = op_info[op].arity;
    double rv[3];
    for (int k = 0; k < arity; k++)
        rv[k] = round_to_dtype(v[k], in[k]);
    cases++;

    /* folded */
    Arena a = {0};
    IrFunc *f = ir_func_new(&a, "fold", LOC_NONE);
    IrNode *n = ir_node_new(f, op, dt, &scalar, LOC_NONE);
    for (int k = 0; k < arity; k++) {
        IrNode *c = ir_node_new(f, OP_CONST, in[k], &scalar, LOC_NONE);
        c->cval = rv[k];
        c->ival = dtype_is_float(in[k]) ? 0 : double_to_i64(rv[k]);
        ir_add_operand(n, c);
    }
    /* operands were created after n: move n last, as sema orders nodes */
    for (int i = 0; i < f->nnodes - 1; i++)
        f->nodes[i] = f->nodes[i + 1];
    f->nodes[f->nnodes - 1] = n;
    f->nresults = 1;
    f->results = ARENA_NEW(&a, IrResult);
    f->results[0] = (IrResult){.name = "r", .dtype = dt, .shape = scalar, .node = n};
    ir_optimize(f);
    const IrNode *fr = f->results[0].node;
    int did_fold = fr->op == OP_CONST;
    double fv = did_fold ? fr->cval : 0;

    /* interpreted */
    Arena b = {0};
    IrFunc *g = ir_func_new(&b, "interp", LOC_NONE);
    g->nparams = arity;
    g->params = ARENA_ARRAY(&b, IrParam, arity + 1);
    IrNode *ps[3];
    for (int k = 0; k < arity; k++) {
        ps[k] = ir_node_new(g, OP_PARAM, in[k], &scalar, LOC_NONE);
        ps[k]->param = k;
        g->params[k] = (IrParam){.name = k == 0 ? "a" : k == 1 ? "b" : "c", .dtype = in[k], .shape = scalar,
                                 .node = ps[k]};
    }
    IrNode *m = ir_node_new(g, op, dt, &scalar, LOC_NONE);
    for (int k = 0; k < arity; k++)
        ir_add_operand(m, ps[k]);
    g->nresults = 1;
    g->results = ARENA_NEW(&b, IrResult);
    g->results[0] = (IrResult){.name = "r", .dtype = dt, .shape = scalar, .node = m};
    Tensor ins[3], out;
    for (int k = 0; k < arity; k++) {
        if (!tensor_alloc(&ins[k], in[k], 0, NULL))
            abort();
        ins[k].data[0] = rv[k];
    }
    char err[512];
    int ok = interp_run(g, ins, &out, err, sizeof err);
    for (int k = 0; k < arity; k++)
        tensor_free(&ins[k]);

    checks++;
    int agree;
    if (did_fold) {
        folded++;
        agree = ok && same(fv, out.data[0]);
    } else {
        /* only an integer division by zero is left to run time, where the
         * interpreter reports it */
        agree = !ok && (op == OP_DIV || op == OP_MOD) && dtype_is_int(dt) && double_to_i64(rv[1]) == 0;
    }
    if (!agree) {
        failures++;
        fprintf(stderr, "test_scalar.c: FAILED: %s -> %s on", op_info[op].name, dtype_name(dt));
        for (int k = 0; k < arity; k++)
            fprintf(stderr, " %s %.17g", dtype_name(in[k]), rv[k]);
        fprintf(stderr, ": folded %s %.17g, interpreted %s %.17g\n", did_fold ? "to" : "(not)", fv,
                ok ? "to" : "(error)", ok ? out.data[0] : 0.0);
    }
    if (ok)
        tensor_free(&out);
    arena_free_all(&a);
    arena_free_all(&b);
}

static const DType all_dtypes[] = {DT_BOOL, DT_I32, DT_I64, DT_F16, DT_BF16, DT_F32, DT_F64};
#define NDT ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

static void test_every_op(void)
{
    for (int op = 0; op < OP_COUNT; op++) {
        int cls = op_info[op].cls;
        double v[3] = {1, 2, 3}, r;
        int elementwise = cls == OPC_UNARY || cls == OPC_BINARY || cls == OPC_TERNARY;
        /* every elementwise op of ops.def has a scalar meaning; others none */
        checks++;
        if ((op_eval_scalar((OpKind)op, DT_F32, DT_F32, v, &r) != OPEVAL_NONE) != elementwise) {
            failures++;
            fprintf(stderr, "test_scalar.c: FAILED: op_eval_scalar(%s) %s a scalar meaning\n", op_info[op].name,
                    elementwise ? "lacks" : "has");
        }
        if (!elementwise)
            continue;
        for (int di = 0; di < NDT; di++) {
            DType t = all_dtypes[di];
            int flags = op_info[op].flags;
            if (op == OP_CAST) {
                for (int to = 0; to < NDT; to++)
                    if (all_dtypes[to] != t)
                        for (int i = 0; i < NVALUES; i++)
                            compare((OpKind)op, all_dtypes[to], &t, &values[i]);
                continue;
            }
            if ((flags & OPF_FLOAT_ONLY) && !dtype_is_float(t))
                continue;
            /* bool operands only where the language gives them a meaning */
            int logical = op == OP_NOT || op == OP_AND || op == OP_OR || op == OP_EQ || op == OP_NE;
            if (t == DT_BOOL && !logical)
                continue;
            DType in[3] = {t, t, t};
            DType dt = (flags & OPF_BOOL_RESULT) ? DT_BOOL : t;
            if (op == OP_WHERE)
                in[0] = DT_BOOL;
            if (op_info[op].arity == 1) {
                for (int i = 0; i < NVALUES; i++)
                    compare((OpKind)op, dt, in, &values[i]);
            } else if (op_info[op].arity == 2) {
                for (int i = 0; i < NFEW; i++)
                    for (int j = 0; j < NFEW; j++)
                        compare((OpKind)op, dt, in, (double[]){few[i], few[j]});
            } else {
                for (int i = 0; i < NFEW; i++)
                    for (int j = 0; j < NFEW; j++)
                        for (int k = 0; k < NFEW; k += 2)
                            compare((OpKind)op, dt, in, (double[]){few[i], few[j], few[k]});
            }
        }
    }
    /* the grid reaches every kind of result: most fold, int x / 0 does not */
    CHECK(cases > 10000);
    CHECK(folded > cases - 200 && folded < cases);
}

/* A few values pinned, so that a rule cannot change on both sides at once. */
static void test_pinned(void)
{
    double r;
    CHECK(op_eval_scalar(OP_RELU, DT_F32, DT_F32, (double[]){NAN}, &r) == OPEVAL_OK && isnan(r));
    CHECK(op_eval_scalar(OP_SIGN, DT_F32, DT_F32, (double[]){NAN}, &r) == OPEVAL_OK && isnan(r));
    CHECK(op_eval_scalar(OP_MAX2, DT_F32, DT_F32, (double[]){1, NAN}, &r) == OPEVAL_OK && isnan(r));
    CHECK(op_eval_scalar(OP_CLAMP, DT_F32, DT_F32, (double[]){5, NAN, 9}, &r) == OPEVAL_OK && isnan(r));
    CHECK(op_eval_scalar(OP_ROUND, DT_F32, DT_F32, (double[]){2.5}, &r) == OPEVAL_OK && r == 2);
    CHECK(op_eval_scalar(OP_DIV, DT_I32, DT_I32, (double[]){-7, 2}, &r) == OPEVAL_OK && r == -3);
    CHECK(op_eval_scalar(OP_MOD, DT_I32, DT_I32, (double[]){-7, 2}, &r) == OPEVAL_OK && r == -1);
    CHECK(op_eval_scalar(OP_DIV, DT_I32, DT_I32, (double[]){1, 0}, &r) == OPEVAL_DIVZERO);
    CHECK(op_eval_scalar(OP_ADD, DT_I32, DT_I32, (double[]){2147483647, 1}, &r) == OPEVAL_OK &&
          r == -2147483648.0);
    CHECK(op_eval_scalar(OP_POW, DT_I32, DT_I32, (double[]){2, -1}, &r) == OPEVAL_OK && r == 0);
    /* i64 -> i32 wraps; f64 -> i32 is left to round_to_dtype, which saturates */
    CHECK(op_eval_scalar(OP_CAST, DT_I32, DT_I64, (double[]){4294967297.0}, &r) == OPEVAL_OK && r == 1);
    CHECK(op_eval_scalar(OP_CAST, DT_I32, DT_F64, (double[]){4294967297.0}, &r) == OPEVAL_OK &&
          round_to_dtype(r, DT_I32) == 2147483647);
    int64_t i;
    CHECK(op_eval_int(OP_MUL, DT_I64, (int64_t[]){INT64_MAX, 2}, &i) == OPEVAL_OK && i == -2);
    CHECK(op_eval_int(OP_DIV, DT_I64, (int64_t[]){INT64_MIN, -1}, &i) == OPEVAL_OK && i == INT64_MIN);
    CHECK(op_eval_int(OP_EXP, DT_I64, (int64_t[]){1}, &i) == OPEVAL_NONE);
}

int main(void)
{
    test_rounding();
    test_pinned();
    test_every_op();
    if (failures) {
        fprintf(stderr, "test_scalar: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_scalar: %d checks passed (%d folded of %d cases)\n", checks, folded, cases);
    return 0;
}
