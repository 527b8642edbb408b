/* test_fusion.c -- the fusion pass on hand-built IR (no front end needed).
 *
 * Each case builds one IrFunc with the ir.c builders, plans it, and checks
 * the kernel count, kinds, layouts, outputs, and the rejections with their
 * codes: the rules of docs/fusion.md, one function per rule. */
#define _POSIX_C_SOURCE 200809L
#include "fusion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, cur, #cond); \
        failures++; } } while (0)
static const char *cur = "";

static Arena arena;
static IrFunc *F;
static int cap_params, cap_results;

/* ---- tiny builders ------------------------------------------------------- */

static IrDim sym(const char *name) { return (IrDim){-1, ir_sym_intern(F, name)}; }
static IrDim lit(int64_t n) { return (IrDim){n, -1}; }

static IrShape shp(int rank, IrDim a, IrDim b, IrDim c)
{
    IrShape s = {0};
    s.rank = rank;
    s.dims[0] = a;
    s.dims[1] = b;
    s.dims[2] = c;
    return s;
}

static void begin(const char *name)
{
    cur = name;
    F = ir_func_new(&arena, name, LOC_NONE);
    cap_params = cap_results = 0;
}

static IrNode *param(const char *name, IrShape s)
{
    IrNode *n = ir_node_new(F, OP_PARAM, DT_F32, &s, LOC_NONE);
    IrParam p = {0};
    p.name = name;
    p.dtype = DT_F32;
    p.is_tensor = s.rank > 0;
    p.shape = s;
    p.node = n;
    n->param = F->nparams;
    n->name = name;
    ARENA_PUSH(&arena, F->params, F->nparams, cap_params, p);
    return n;
}

static IrNode *cnst(double v)
{
    IrShape s = {0};
    IrNode *n = ir_node_new(F, OP_CONST, DT_F32, &s, LOC_NONE);
    n->cval = v;
    return n;
}

/* broadcast shape of two operands (right aligned) */
static IrShape bshape(const IrShape *a, const IrShape *b)
{
    IrShape s = a->rank >= b->rank ? *a : *b;
    const IrShape *o = a->rank >= b->rank ? b : a;
    for (int i = 0; i < o->rank; i++) {
        int d = s.rank - o->rank + i;
        if (ir_dim_is_one(s.dims[d]))
            s.dims[d] = o->dims[i];
    }
    return s;
}

static IrNode *un(OpKind op, IrNode *x)
{
    IrNode *n = ir_node_new(F, op, DT_F32, &x->shape, LOC_NONE);
    ir_add_operand(n, x);
    return n;
}

static IrNode *bin(OpKind op, IrNode *x, IrNode *y)
{
    IrShape s = bshape(&x->shape, &y->shape);
    IrNode *n = ir_node_new(F, op, DT_F32, &s, LOC_NONE);
    ir_add_operand(n, x);
    ir_add_operand(n, y);
    return n;
}

static IrNode *red(OpKind op, IrNode *x, uint8_t axes, int keepdims)
{
    IrShape s = {0};
    for (int i = 0; i < x->shape.rank; i++) {
        if (!((axes >> i) & 1))
            s.dims[s.rank++] = x->shape.dims[i];
        else if (keepdims)
            s.dims[s.rank++] = lit(1);
    }
    IrNode *n = ir_node_new(F, op, DT_F32, &s, LOC_NONE);
    n->axes = axes;
    n->keepdims = keepdims;
    ir_add_operand(n, x);
    return n;
}

static IrNode *unsqueeze(IrNode *x, int axis)
{
    IrShape s = {0};
    for (int i = 0, j = 0; i <= x->shape.rank; i++)
        s.dims[s.rank++] = i == axis ? lit(1) : x->shape.dims[j++];
    IrNode *n = ir_node_new(F, OP_UNSQUEEZE, DT_F32, &s, LOC_NONE);
    n->axis = axis;
    ir_add_operand(n, x);
    return n;
}

static void result(const char *name, IrNode *n)
{
    IrResult r = {0};
    r.name = name;
    r.dtype = n->dtype;
    r.shape = n->shape;
    r.node = n;
    ARENA_PUSH(&arena, F->results, F->nresults, cap_results, r);
}

static Plan *plan_opts(int no_fusion, int maxregs)
{
    FusionOptions o = {no_fusion, maxregs, -1};
    Plan *p = fuse_plan(&arena, F, &o);
    if (!p) {
        fprintf(stderr, "%s: no plan\n", cur);
        failures++;
        exit(1);
    }
    return p;
}
static Plan *plan(void) { return plan_opts(0, 128); }

static int has_reject(const Plan *p, const char *code)
{
    for (int i = 0; i < p->nrejected; i++)
        if (strcmp(p->rejected[i].code, code) == 0)
            return 1;
    return 0;
}

static int in_list(IrNode **v, int n, const IrNode *x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* ---- the rules ------------------------------------------------------------ */

static void test_sum_abs(void)
{
    begin("sum_abs");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("result", red(OP_SUM, un(OP_ABS, x), 1, 0));
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_REDUCE);
    CHECK(p->kernels[0].layout == RL_SCALAR);
    CHECK(p->kernels[0].ninputs == 1 && p->kernels[0].inputs[0] == x);
    CHECK(p->nintermediates == 0);
    CHECK(strcmp(p->kernels[0].name, "sum_abs_k0_reduce") == 0);
    /* baseline: abs, then sum */
    Plan *q = plan_opts(1, 128);
    CHECK(q->nkernels == 2);
    CHECK(q->nintermediates == 1);
}

static void test_bias_relu(void)
{
    begin("bias_relu");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *b = param("b", shp(1, sym("M"), lit(0), lit(0)));
    result("result", un(OP_RELU, bin(OP_ADD, x, b)));
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_LOOP);
    CHECK(p->kernels[0].ninputs == 2);
    CHECK(p->kernels[0].noutputs == 1 && p->kernels[0].out_result[0] == 0);
}

/* t = x*1.5 + 0.5; u = tanh(t); v = u*sigmoid(x); w = v + x*x;
 * return sqrt(abs(w) + 1) * exp(-abs(x)) */
static IrNode *chain12(void)
{
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *t = bin(OP_ADD, bin(OP_MUL, x, cnst(1.5)), cnst(0.5));
    IrNode *u = un(OP_TANH, t);
    IrNode *v = bin(OP_MUL, u, un(OP_SIGMOID, x));
    IrNode *w = bin(OP_ADD, v, bin(OP_MUL, x, x));
    IrNode *r = bin(OP_MUL, un(OP_SQRT, bin(OP_ADD, un(OP_ABS, w), cnst(1))),
                    un(OP_EXP, un(OP_NEG, un(OP_ABS, x))));
    result("result", r);
    return x;
}

static void test_chain12(void)
{
    begin("chain12");
    chain12();
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].est_registers <= 128);
    CHECK(p->nrejected == 0);
    Plan *q = plan_opts(1, 128);
    CHECK(q->nkernels == 14);

    begin("chain12_budget");
    chain12();
    Plan *s = plan_opts(0, 32);
    if (getenv("FUSION_DEBUG"))
        fuse_print_text(stderr, &s, 1);
    CHECK(s->nkernels > 1);
    CHECK(has_reject(s, "registers"));
    for (int i = 0; i < s->nkernels; i++)
        CHECK(s->kernels[i].est_registers <= 32);
}

static void test_softmax(void)
{
    begin("softmax");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *m = red(OP_RMAX, x, 2, 1);
    IrNode *e = un(OP_EXP, bin(OP_SUB, x, m));
    IrNode *y = bin(OP_DIV, e, red(OP_SUM, e, 2, 1));
    result("result", y);
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_ROW);
    CHECK(p->kernels[0].layout == RL_ROWS);
    CHECK(p->kernels[0].reduce_axes == 2);
    CHECK(p->kernels[0].looped == 1); /* symbolic row */
    CHECK(p->nrejected == 0);
}

static void test_softmax_static(void)
{
    begin("softmax_static");
    IrNode *x = param("x", shp(2, sym("N"), lit(1024), lit(0)));
    IrNode *m = red(OP_RMAX, x, 2, 1);
    IrNode *e = un(OP_EXP, bin(OP_SUB, x, m));
    result("result", bin(OP_DIV, e, red(OP_SUM, e, 2, 1)));
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_ROW && p->kernels[0].looped == 0);
    int on_chip = p->kernels[0].est_registers;

    /* past FUSE_ROW_ONCHIP_MAX the row is looped; up to
     * FUSE_ROW_CLUSTER_MAX a variant picked at launch may still hold it on
     * chip (32 elements a thread, counted), past that never */
    begin("softmax_long");
    x = param("x", shp(2, sym("N"), lit(100000), lit(0)));
    m = red(OP_RMAX, x, 2, 1);
    e = un(OP_EXP, bin(OP_SUB, x, m));
    result("result", bin(OP_DIV, e, red(OP_SUM, e, 2, 1)));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].looped == 1);
    int held = p->kernels[0].est_registers;
    CHECK(held > on_chip);

    begin("softmax_longest");
    x = param("x", shp(2, sym("N"), lit(FUSE_ROW_CLUSTER_MAX + 4), lit(0)));
    m = red(OP_RMAX, x, 2, 1);
    e = un(OP_EXP, bin(OP_SUB, x, m));
    result("result", bin(OP_DIV, e, red(OP_SUM, e, 2, 1)));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].looped == 1);
    CHECK(p->kernels[0].est_registers < on_chip);
    CHECK(held - p->kernels[0].est_registers == 32);
}

static void test_layernorm(void)
{
    begin("layernorm");
    IrNode *x = param("x", shp(2, sym("N"), sym("D"), lit(0)));
    IrNode *g = param("g", shp(1, sym("D"), lit(0), lit(0)));
    IrNode *b = param("b", shp(1, sym("D"), lit(0), lit(0)));
    IrNode *eps = param("eps", shp(0, lit(0), lit(0), lit(0)));
    IrNode *mu = red(OP_MEAN, x, 2, 1);
    IrNode *xc = bin(OP_SUB, x, mu);
    IrNode *v = red(OP_MEAN, bin(OP_MUL, xc, xc), 2, 1);
    IrNode *y = bin(OP_ADD, bin(OP_MUL, bin(OP_MUL, xc, un(OP_RSQRT, bin(OP_ADD, v, eps))), g), b);
    result("y", y);
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_ROW);
    CHECK(p->kernels[0].ninputs == 3); /* x g b; eps is a scalar */
    CHECK(!in_list(p->kernels[0].inputs, p->kernels[0].ninputs, eps));
    CHECK(p->nrejected == 0);
    /* the per-row values are FL_RED, the per-element ones FL_ELEM */
    for (int i = 0; i < p->kernels[0].nvalues; i++) {
        if (p->kernels[0].values[i] == mu)
            CHECK(p->kernels[0].level[i] == FL_RED);
        if (p->kernels[0].values[i] == xc)
            CHECK(p->kernels[0].level[i] == FL_ELEM);
    }
}

static void test_rmsnorm(void)
{
    begin("rmsnorm");
    IrNode *x = param("x", shp(2, sym("N"), sym("D"), lit(0)));
    IrNode *w = param("w", shp(1, sym("D"), lit(0), lit(0)));
    IrNode *ms = red(OP_MEAN, bin(OP_MUL, x, x), 2, 1);
    result("result", bin(OP_MUL, bin(OP_MUL, x, un(OP_RSQRT, bin(OP_ADD, ms, cnst(1e-6)))), w));
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_ROW);
}

static void test_adam(void)
{
    begin("adam_step");
    IrShape k = shp(1, sym("K"), lit(0), lit(0)), s0 = {0};
    IrNode *pp = param("p", k), *g = param("g", k), *m = param("m", k), *v = param("v", k);
    IrNode *lr = param("lr", s0), *b1 = param("b1", s0), *b2 = param("b2", s0);
    IrNode *m2 = bin(OP_ADD, bin(OP_MUL, b1, m), bin(OP_MUL, bin(OP_SUB, cnst(1), b1), g));
    IrNode *v2 = bin(OP_ADD, bin(OP_MUL, b2, v),
                     bin(OP_MUL, bin(OP_MUL, bin(OP_SUB, cnst(1), b2), g), g));
    IrNode *p2 = bin(OP_SUB, pp, bin(OP_DIV, bin(OP_MUL, lr, m2),
                                     bin(OP_ADD, un(OP_SQRT, v2), cnst(1e-8))));
    result("p2", p2);
    result("m2", m2);
    result("v2", v2);
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].noutputs == 3);
    CHECK(p->kernels[0].out_result[0] == 0 && p->kernels[0].out_result[2] == 2);
    CHECK(p->kernels[0].ninputs == 4);
    CHECK(p->nintermediates == 0);
}

static void test_grid_dependency(void)
{
    begin("normalize");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *s = red(OP_SUM, x, 1, 0);
    IrNode *d = bin(OP_DIV, x, s);
    result("result", d);
    Plan *p = plan();
    CHECK(p->nkernels == 2);
    CHECK(p->kernels[0].kind == KK_REDUCE && p->kernels[1].kind == KK_LOOP);
    CHECK(p->nrejected == 1);
    if (getenv("FUSION_DEBUG"))
        fuse_print_text(stderr, &p, 1);
    CHECK(strcmp(p->rejected[0].code, "grid-dependency") == 0);
    CHECK(strcmp(p->rejected[0].reason,
                 "%1 (sum over all axes) is needed by every element of %2: needs a grid-wide "
                 "barrier; x is read twice, 4 bytes an element of [N] more than one pass") == 0);
    CHECK(p->nintermediates == 1 && p->intermediates[0] == s);
    CHECK(p->kernels[1].ninputs == 2);

    /* column reduction broadcast back: also a grid dependency */
    begin("center_cols");
    x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    result("result", bin(OP_SUB, x, red(OP_MEAN, x, 1, 1)));
    p = plan();
    CHECK(p->nkernels == 2);
    CHECK(has_reject(p, "grid-dependency"));
}

static void test_layouts(void)
{
    begin("colsum");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    result("result", red(OP_SUM, x, 1, 0));
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].layout == RL_COLS);

    begin("rowsum");
    x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    result("result", red(OP_SUM, x, 2, 0));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].layout == RL_ROWS);

    begin("middle");
    x = param("x", shp(3, sym("A"), sym("B"), sym("C")));
    result("result", red(OP_SUM, x, 2, 0));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].layout == RL_MIDDLE);
}

static void test_epilogue(void)
{
    /* sqrt(sum(x*x, axis=0)) + b: prologue and epilogue in one reduce */
    begin("colnorm");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *b = param("b", shp(1, sym("M"), lit(0), lit(0)));
    IrNode *s = red(OP_SUM, bin(OP_MUL, x, x), 1, 0);
    IrNode *y = bin(OP_ADD, un(OP_SQRT, s), b);
    result("result", y);
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_REDUCE && p->kernels[0].layout == RL_COLS);
    CHECK(p->kernels[0].noutputs == 1 && p->kernels[0].outputs[0] == y);
}

static void test_siblings(void)
{
    begin("mean_var");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    result("mu", red(OP_MEAN, x, 2, 0));
    result("v", red(OP_VAR, x, 2, 0));
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].noutputs == 2);

    begin("sum_sumsq");
    x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("s", red(OP_SUM, x, 1, 0));
    result("q", red(OP_SUM, bin(OP_MUL, x, x), 1, 0));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].noutputs == 2);

    /* rows beside columns: one pass, the rows as side reductions */
    begin("two_axes");
    x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    result("r", red(OP_SUM, x, 2, 0));
    result("c", red(OP_SUM, x, 1, 0));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].layout == RL_COLS && p->kernels[0].reduce_axes == 1 &&
          p->kernels[0].side_axes == 2 && p->kernels[0].noutputs == 2);

    /* a middle axis beside the others: two kernels */
    begin("mid_axes");
    x = param("x", shp(3, sym("A"), sym("B"), sym("C")));
    result("r", red(OP_SUM, x, 2, 0));
    result("c", red(OP_SUM, x, 5, 0));
    p = plan();
    CHECK(p->nkernels == 2 && p->kernels[0].side_axes == 0 && p->kernels[1].side_axes == 0);
}

static void test_ride_along(void)
{
    begin("ride_along");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *y = bin(OP_ADD, bin(OP_MUL, cnst(2), x), cnst(1));
    result("y", y);
    result("s", red(OP_SUM, x, 1, 0));
    Plan *p = plan();
    CHECK(p->nkernels == 1);
    CHECK(p->kernels[0].kind == KK_REDUCE && p->kernels[0].noutputs == 2);

    begin("two_outputs");
    x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("a", un(OP_EXP, x));
    result("b", un(OP_LOG, x));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].noutputs == 2);
}

static void test_copies(void)
{
    begin("identity");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("r", x);
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_LOOP);
    CHECK(p->kernels[0].nvalues == 0 && p->kernels[0].ninputs == 1);
    CHECK(p->kernels[0].noutputs == 1 && p->kernels[0].outputs[0] == x);

    begin("twice");
    x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *e = un(OP_EXP, x);
    result("a", e);
    result("b", e);
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].noutputs == 2);
    CHECK(p->kernels[0].out_result[0] == 0 && p->kernels[0].out_result[1] == 1);
}

static void test_views(void)
{
    /* x[N, M] - unsqueeze(rowmax without keepdims, 1): still one row kernel */
    begin("unsqueeze_row");
    IrNode *x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *m = red(OP_RMAX, x, 2, 0);
    result("result", bin(OP_SUB, x, unsqueeze(m, 1)));
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_ROW);
    Plan *q = plan_opts(1, 128);
    CHECK(q->nkernels == 2); /* the view rides with its consumer */

    begin("bias_col");
    x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *b = param("b", shp(1, sym("N"), lit(0), lit(0)));
    result("result", bin(OP_ADD, x, unsqueeze(b, 1)));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_LOOP);
}

static void test_recompute(void)
{
    /* e = exp(x) feeds a full sum and the division: recomputed, not stored */
    begin("recompute");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *e = un(OP_EXP, x);
    result("result", bin(OP_DIV, e, red(OP_SUM, e, 1, 0)));
    Plan *p = plan();
    CHECK(p->nkernels == 2);
    CHECK(p->nintermediates == 1);
    CHECK(in_list(p->kernels[0].values, p->kernels[0].nvalues, e));
    CHECK(in_list(p->kernels[1].values, p->kernels[1].nvalues, e));
}

static void test_contract(void)
{
    begin("contract");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("result", bin(OP_DIV, x, red(OP_SUM, x, 1, 0)));
    F->expect_kernels = 1;
    F->expect_loc = LOC_NONE;
    FusionOptions o = {0, 128, -1};
    CHECK(fuse_plan(&arena, F, &o) == NULL);
    CHECK(diag_error_count() == 1);
    diag_reset();
    F->expect_kernels = 2;
    CHECK(fuse_plan(&arena, F, &o) != NULL);
    F->expect_kernels = -1;
    o.expect_kernels = 1;
    CHECK(fuse_plan(&arena, F, &o) == NULL);
    diag_reset();
}

static void test_reports(void)
{
    begin("report");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    result("result", bin(OP_DIV, x, red(OP_SUM, x, 1, 0)));
    Plan *p = plan();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fuse_print_json(f, &p, 1);
    fuse_print_text(f, &p, 1);
    fuse_print_dot(f, &p, 1);
    fclose(f);
    CHECK(strstr(buf, "\"name\": \"report_k0_reduce\", \"kind\": \"reduce\", \"layout\": \"scalar\""));
    CHECK(strstr(buf, "\"code\": \"grid-dependency\", \"producer\": \"%1\", \"consumer\": \"%2\""));
    CHECK(strstr(buf, "\"syms\": [\"N\"]"));
    CHECK(strstr(buf, "fn report: 2 kernels\n"));
    CHECK(strstr(buf, "subgraph cluster_f0_k1"));
    free(buf);
}

static void test_row_results(void)
{
    /* mu and rstd are results: the row kernel writes them once per row */
    begin("ln_stats");
    IrNode *x = param("x", shp(2, sym("N"), sym("D"), lit(0)));
    IrNode *mu = red(OP_MEAN, x, 2, 1);
    IrNode *xc = bin(OP_SUB, x, mu);
    IrNode *rstd = un(OP_RSQRT, bin(OP_ADD, red(OP_MEAN, bin(OP_MUL, xc, xc), 2, 1), cnst(1e-5)));
    IrNode *y = bin(OP_MUL, xc, rstd);
    result("y", y);
    result("mu", mu);
    result("rstd", rstd);
    Plan *p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_ROW);
    CHECK(p->kernels[0].noutputs == 3 && p->nintermediates == 0);
    for (int i = 0; i < p->kernels[0].nvalues; i++)
        if (p->kernels[0].values[i] == rstd)
            CHECK(p->kernels[0].level[i] == FL_RED);

    /* two row kernels sharing one row max become one */
    begin("shared_max");
    x = param("x", shp(2, sym("N"), sym("M"), lit(0)));
    IrNode *m = red(OP_RMAX, x, 2, 1);
    IrNode *e = un(OP_EXP, bin(OP_SUB, x, m));
    result("p", bin(OP_DIV, e, red(OP_SUM, e, 2, 1)));
    result("lse", bin(OP_ADD, un(OP_LOG, red(OP_SUM, e, 2, 1)), m));
    p = plan();
    CHECK(p->nkernels == 1 && p->kernels[0].kind == KK_ROW);
    CHECK(!has_reject(p, "multiple-consumers"));
}

static void test_recompute_limit(void)
{
    /* 40 ops feeding a full sum and the division by it: stored once, by
     * the reduce kernel, not recomputed by both */
    begin("dear");
    IrNode *x = param("x", shp(1, sym("N"), lit(0), lit(0)));
    IrNode *t = x;
    for (int i = 0; i < 20; i++)
        t = un(OP_TANH, bin(OP_MUL, t, cnst(0.5)));
    result("result", bin(OP_DIV, t, red(OP_SUM, t, 1, 0)));
    Plan *p = plan();
    CHECK(p->nkernels == 2);
    CHECK(has_reject(p, "recompute"));
    CHECK(p->kernels[0].kind == KK_REDUCE && p->kernels[0].noutputs == 2);
    CHECK(p->nintermediates == 2); /* t and the sum */
    CHECK(!in_list(p->kernels[1].values, p->kernels[1].nvalues, t));
}

/* ---- random graphs: every plan keeps the promises of fusion.h ------------- */

static unsigned rng = 12345u;
static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 16) % n;
}

/* can a and b broadcast together (right aligned, equal or static 1)? */
static int bcast_ok(const IrShape *a, const IrShape *b)
{
    int r = a->rank < b->rank ? a->rank : b->rank;
    for (int i = 1; i <= r; i++) {
        IrDim x = a->dims[a->rank - i], y = b->dims[b->rank - i];
        if (!ir_dim_eq(x, y) && !ir_dim_is_one(x) && !ir_dim_is_one(y))
            return 0;
    }
    return 1;
}

static void random_fn(int seed, int nops, int nres)
{
    char *name = arena_printf(&arena, "rand%d", seed);
    begin(name);
    IrNode *pool[64];
    int n = 0;
    IrDim M = rnd(2) ? sym("M") : lit(64 << rnd(10));
    pool[n++] = param("x", shp(2, sym("N"), M, lit(0)));
    pool[n++] = param("y", shp(2, sym("N"), M, lit(0)));
    pool[n++] = param("b", shp(1, M, lit(0), lit(0)));
    pool[n++] = param("c", shp(1, sym("N"), lit(0), lit(0)));
    pool[n++] = param("s", shp(0, lit(0), lit(0), lit(0)));
    static const OpKind unops[] = {OP_EXP, OP_ABS, OP_TANH, OP_NEG, OP_SQRT};
    static const OpKind binops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX2};
    static const OpKind redops[] = {OP_SUM, OP_RMAX, OP_MEAN, OP_VAR, OP_ARGMAX};
    while (n < nops && n < 60) {
        IrNode *a = pool[rnd((unsigned)n)];
        switch (rnd(6)) {
        case 0:
            pool[n++] = un(unops[rnd(5)], a);
            break;
        case 1: case 2: {
            IrNode *b = rnd(4) ? pool[rnd((unsigned)n)] : cnst(0.5);
            if (bcast_ok(&a->shape, &b->shape))
                pool[n++] = bin(binops[rnd(5)], a, b);
            break;
        }
        case 3: case 4:
            if (a->shape.rank >= 1) {
                uint8_t axes = a->shape.rank == 1 ? 1 : (uint8_t)(1 + rnd(3));
                pool[n++] = red(redops[rnd(5)], a, axes, (int)rnd(2));
            }
            break;
        default:
            if (a->shape.rank == 1)
                pool[n++] = unsqueeze(a, (int)rnd(2));
            break;
        }
    }
    for (int r = 0; r < nres; r++)
        result(arena_printf(&arena, "r%d", r), pool[n - 1 - (int)rnd((unsigned)(n < 6 ? n : 6))]);
    ir_count_uses(F);
    for (int mode = 0; mode < 4; mode++) {
        FusionOptions o = {mode == 3, mode == 1 ? 16 : mode == 2 ? 40 : 128, -1};
        if (getenv("FUSION_DEBUG"))
            fprintf(stderr, "%s mode %d\n", cur, mode);
        if (getenv("FUSION_DUMP") && strcmp(cur, getenv("FUSION_DUMP")) == 0) {
            ir_print_func(stderr, F);
            Plan *d = fuse_plan(&arena, F, &o);
            fuse_print_text(stderr, &d, 1);
        }
        Plan *p = fuse_plan(&arena, F, &o); /* ICEs (exit 70) on a broken promise */
        CHECK(p != NULL);
        if (p && mode == 3) {
            int ops = 0;
            for (int i = 0; i < F->nnodes; i++)
                ops += op_info[F->nodes[i]->op].cls != OPC_LEAF &&
                       op_info[F->nodes[i]->op].cls != OPC_VIEW;
            CHECK(p->nkernels >= ops);
        }
    }
}

static void test_random(void)
{
    int count = getenv("FUSION_RANDOM") ? atoi(getenv("FUSION_RANDOM")) : 400;
    for (int i = 0; i < count; i++)
        random_fn(i, 8 + (int)rnd(20), 1 + (int)rnd(3));
}

int main(void)
{
    test_sum_abs();
    test_bias_relu();
    test_chain12();
    test_softmax();
    test_softmax_static();
    test_layernorm();
    test_rmsnorm();
    test_adam();
    test_grid_dependency();
    test_layouts();
    test_epilogue();
    test_siblings();
    test_ride_along();
    test_copies();
    test_views();
    test_recompute();
    test_contract();
    test_reports();
    test_row_results();
    test_recompute_limit();
    test_random();
    arena_free_all(&arena);
    if (failures)
        fprintf(stderr, "test_fusion: %d failure(s)\n", failures);
    else
        printf("test_fusion: all passed\n");
    return failures != 0;
}
