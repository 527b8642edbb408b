/* test_ir.c -- ir.c on hand-built IR: dtype rounding of constants (f16,
 * bf16, f32 edges: overflow, subnormals, ties to even), constant folding
 * (C integer semantics, i32 wrap, no folding of division by zero), CSE
 * (attributes keep nodes apart), dead-node removal (parameters stay), and
 * the printed form of a small function. */
#define _POSIX_C_SOURCE 200809L
#include "ir.h"
#include "frontend.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CHECK_VAL(got, want) check_val((got), (want), __LINE__, #got)
static void check_val(double got, double want, int line, const char *what)
{
    checks++;
    if (!((isnan(got) && isnan(want)) || got == want)) {
        failures++;
        fprintf(stderr, "test_ir.c:%d: FAILED: %s = %.17g, want %.17g\n", line, what, got, want);
    }
}

static const IrShape scalar = {0, {{0, 0}}};

static IrNode *konst(IrFunc *f, DType t, double v)
{
    IrNode *n = ir_node_new(f, OP_CONST, t, &scalar, LOC_NONE);
    n->cval = v;
    n->ival = (int64_t)v;
    return n;
}

static IrNode *binop(IrFunc *f, OpKind op, DType t, IrNode *a, IrNode *b)
{
    IrShape s = a->shape.rank >= b->shape.rank ? a->shape : b->shape;
    IrNode *n = ir_node_new(f, op, t, &s, LOC_NONE);
    ir_add_operand(n, a);
    ir_add_operand(n, b);
    return n;
}

static void result(IrFunc *f, IrNode *n)
{
    f->nresults = 1;
    f->results = ARENA_NEW(f->arena, IrResult);
    f->results[0].name = "result";
    f->results[0].dtype = n->dtype;
    f->results[0].shape = n->shape;
    f->results[0].node = n;
}

static IrNode *param(IrFunc *f, const char *name, DType t, const IrShape *s)
{
    int i = f->nparams++;
    IrParam *ps = ARENA_ARRAY(f->arena, IrParam, f->nparams);
    if (i)
        memcpy(ps, f->params, sizeof(*ps) * (size_t)i);
    f->params = ps;
    ps[i].name = name;
    ps[i].dtype = t;
    ps[i].is_tensor = s->rank > 0;
    ps[i].shape = *s;
    IrNode *n = ir_node_new(f, OP_PARAM, t, s, LOC_NONE);
    n->param = i;
    n->name = name;
    ps[i].node = n;
    return n;
}

static void test_rounding(void)
{
    /* f16: 10 fraction bits, max 65504, smallest subnormal 2^-24 */
    CHECK_VAL(round_to_dtype(65504, DT_F16), 65504);
    CHECK_VAL(round_to_dtype(65519, DT_F16), 65504);      /* below the halfway point */
    CHECK_VAL(round_to_dtype(65520, DT_F16), INFINITY);   /* halfway rounds to even: inf */
    CHECK_VAL(round_to_dtype(-70000, DT_F16), -INFINITY);
    CHECK_VAL(round_to_dtype(1.0 / 3, DT_F16), 0.333251953125);
    CHECK_VAL(round_to_dtype(ldexp(1, -24), DT_F16), ldexp(1, -24));
    CHECK_VAL(round_to_dtype(ldexp(1, -26), DT_F16), 0);  /* under half the smallest */
    CHECK_VAL(round_to_dtype(ldexp(3, -26), DT_F16), ldexp(1, -24));
    CHECK_VAL(round_to_dtype(1 + ldexp(1, -11), DT_F16), 1);                    /* tie to even */
    CHECK_VAL(round_to_dtype(1 + ldexp(3, -11), DT_F16), 1 + ldexp(1, -9));     /* tie to even */
    /* bf16: 7 fraction bits, f32's exponent range */
    CHECK_VAL(round_to_dtype(1.0 / 3, DT_BF16), 0.333984375);
    CHECK(fabs(round_to_dtype(3e38, DT_BF16) / 3e38 - 1) < 1.0 / 256); /* finite, near */
    CHECK(isinf(round_to_dtype(3.4e38, DT_BF16)));
    CHECK_VAL(round_to_dtype(0.1, DT_F32), (double)0.1f);
    CHECK(isinf(round_to_dtype(3.5e38, DT_F32)));
    CHECK_VAL(round_to_dtype(0.1, DT_F64), 0.1);
    CHECK_VAL(round_to_dtype(-2.7, DT_I32), -2);
    CHECK_VAL(round_to_dtype(0.5, DT_BOOL), 1);
    CHECK(isnan(round_to_dtype(NAN, DT_F16)));
}

static void test_folding(Arena *a)
{
    /* (7 / -2) in i32 is -3 (C truncation); 2147483647 + 1 wraps in i32 */
    IrFunc *f = ir_func_new(a, "fold", LOC_NONE);
    IrNode *q = binop(f, OP_DIV, DT_I32, konst(f, DT_I32, 7), konst(f, DT_I32, -2));
    IrNode *w = binop(f, OP_ADD, DT_I32, konst(f, DT_I32, 2147483647), konst(f, DT_I32, 1));
    IrNode *sum = binop(f, OP_MUL, DT_I32, q, w);
    result(f, sum);
    ir_optimize(f);
    CHECK(f->nnodes == 1);
    CHECK(f->results[0].node->op == OP_CONST);
    /* -3 * INT32_MIN = 6442450944, which wraps to INT32_MIN in i32 */
    CHECK(f->results[0].node->ival == INT32_MIN);

    /* integer division by zero is left for run time, not folded */
    IrFunc *g = ir_func_new(a, "div0", LOC_NONE);
    IrNode *d = binop(g, OP_DIV, DT_I32, konst(g, DT_I32, 1), konst(g, DT_I32, 0));
    result(g, d);
    ir_optimize(g);
    CHECK(g->results[0].node->op == OP_DIV);
    CHECK(g->nnodes == 3);

    /* float folding rounds to the node's dtype: 1/3 in f16 */
    IrFunc *h = ir_func_new(a, "f16", LOC_NONE);
    IrNode *t = binop(h, OP_DIV, DT_F16, konst(h, DT_F16, 1), konst(h, DT_F16, 3));
    IrNode *e = ir_node_new(h, OP_EXP, DT_F32, &scalar, LOC_NONE);
    ir_add_operand(e, konst(h, DT_F32, 0));
    IrNode *s = binop(h, OP_ADD, DT_F16, t, konst(h, DT_F16, 0));
    (void)e;
    result(h, s);
    ir_optimize(h);
    CHECK(h->nnodes == 1);
    CHECK_VAL(h->results[0].node->cval, 0.333251953125);
}

static void test_cse_dce(Arena *a)
{
    IrFunc *f = ir_func_new(a, "cse", LOC_NONE);
    int n = ir_sym_intern(f, "N"), m = ir_sym_intern(f, "M");
    IrShape s2 = {2, {{-1, n}, {-1, m}}};
    IrNode *x = param(f, "x", DT_F32, &s2);
    IrNode *unused = param(f, "unused", DT_F32, &s2);
    (void)unused;
    IrNode *e1 = ir_node_new(f, OP_EXP, DT_F32, &s2, LOC_NONE);
    ir_add_operand(e1, x);
    IrNode *e2 = ir_node_new(f, OP_EXP, DT_F32, &s2, LOC_NONE);
    ir_add_operand(e2, x);
    e2->name = "e2";
    IrShape r1 = {1, {{-1, n}}}, r0 = {1, {{-1, m}}};
    IrNode *s_a = ir_node_new(f, OP_SUM, DT_F32, &r1, LOC_NONE);
    s_a->axes = 2;
    ir_add_operand(s_a, e1);
    IrNode *s_b = ir_node_new(f, OP_SUM, DT_F32, &r0, LOC_NONE);
    s_b->axes = 1;
    ir_add_operand(s_b, e2);
    IrNode *dead = ir_node_new(f, OP_LOG, DT_F32, &s2, LOC_NONE);
    ir_add_operand(dead, x);
    /* two results: the sums differ by their axes, so both stay */
    f->nresults = 2;
    f->results = ARENA_ARRAY(a, IrResult, 2);
    f->results[0] = (IrResult){"r", DT_F32, r1, s_a, LOC_NONE};
    f->results[1] = (IrResult){"c", DT_F32, r0, s_b, LOC_NONE};
    ir_optimize(f);
    CHECK(f->nnodes == 5); /* x, unused, exp, sum, sum */
    CHECK(f->nodes[1]->op == OP_PARAM);
    CHECK(f->nodes[2]->op == OP_EXP);
    CHECK(f->nodes[2]->name && strcmp(f->nodes[2]->name, "e2") == 0); /* the name survives */
    CHECK(f->results[0].node->in[0].node == f->results[1].node->in[0].node);
    CHECK(f->results[0].node != f->results[1].node);
    for (int i = 0; i < f->nnodes; i++)
        CHECK(f->nodes[i]->id == i);
    CHECK(f->nodes[2]->nuses == 2);

    /* the printed form */
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    ir_print_func(out, f);
    fclose(out);
    const char *want = "fn cse(x: f32[N, M], unused: f32[N, M]) -> (r: f32[N], c: f32[M]) syms(N, M)\n"
                       "  %0 = param x : f32[N, M]\n"
                       "  %1 = param unused : f32[N, M]\n"
                       "  %2 = exp %0 : f32[N, M]  # e2\n"
                       "  %3 = sum %2 axes(1) : f32[N]\n"
                       "  %4 = sum %2 axes(0) : f32[M]\n"
                       "  return r = %3\n"
                       "  return c = %4\n";
    CHECK(buf && strcmp(buf, want) == 0);
    if (buf && strcmp(buf, want) != 0)
        fprintf(stderr, "got:\n%s", buf);
    free(buf);
}

/* the table of names a fn cannot export to C is searched by bsearch */
static void test_c_names(void)
{
    CHECK(c_name_table_sorted());
    CHECK(c_name_clash("double") != NULL);
    CHECK(c_name_clash("norm") != NULL);
    CHECK(c_name_clash("ynf") != NULL);
    CHECK(c_name_clash("abort") != NULL);
    CHECK(c_name_clash("cuLaunch") != NULL);
    CHECK(c_name_clash("softmax") == NULL);
    CHECK(c_name_clash("cute") == NULL);
    CHECK(c_name_clash("_x") == NULL);
    /* what the headers the output includes declare, and our namespaces */
    CHECK(c_name_clash("threadIdx") != NULL);
    CHECK(c_name_clash("float4") != NULL);
    CHECK(c_name_clash("dim3") != NULL);
    CHECK(c_name_clash("EOF") != NULL);
    CHECK(c_name_clash("random") != NULL);
    CHECK(c_name_clash("linux") != NULL);
    CHECK(c_name_clash("fz_vec") != NULL);
    CHECK(c_name_clash("FZK_MAX_SMS") != NULL);
    CHECK(c_name_clash("FUSERT_SUCCESS") != NULL);
    CHECK(c_name_clash("CUresult") != NULL);
    CHECK(c_name_clash("CUDA_R_16F") != NULL);
    CHECK(c_name_clash("half") == NULL);
    CHECK(c_name_clash("float5") == NULL);
    CHECK(c_name_clash("CUTOFF") == NULL);
    CHECK(c_name_clash("fzk") == NULL);
    /* NAME_ws, NAME_packed, ... in a namespace */
    CHECK(c_name_stem_clash("_") != NULL);
    CHECK(c_name_stem_clash("fz") != NULL);
    CHECK(c_name_stem_clash("FUSERT") != NULL);
    CHECK(c_name_stem_clash("CU") != NULL);
    CHECK(c_name_stem_clash("cu") == NULL);
    CHECK(c_name_stem_clash("softmax") == NULL);
    /* C's own namespace, where emitted names get a prefix */
    CHECK(c_name_c_reserved("__x"));
    CHECK(c_name_c_reserved("_X"));
    CHECK(!c_name_c_reserved("_x"));
    CHECK(!c_name_c_reserved("fz_x"));
    /* --prefix */
    CHECK(c_prefix_clash("__x") != NULL);
    CHECK(c_prefix_clash("_X") != NULL);
    CHECK(c_prefix_clash("fusec_") != NULL);
    CHECK(c_prefix_clash("FZ_") != NULL);
    CHECK(c_prefix_clash("cu") != NULL);
    CHECK(c_prefix_clash("cuda") != NULL);
    CHECK(c_prefix_clash("cudaX") != NULL);
    CHECK(c_prefix_clash("_") == NULL);
    CHECK(c_prefix_clash("a_") == NULL);
    CHECK(c_prefix_clash("cub_") == NULL);
    CHECK(c_prefix_clash("fusec") == NULL);
    /* params: keywords and object-like macros, not functions or types */
    CHECK(c_name_unspellable("EOF"));
    CHECK(c_name_unspellable("SIZE_MAX"));
    CHECK(c_name_unspellable("static_cast"));
    CHECK(!c_name_unspellable("offsetof"));
    CHECK(!c_name_unspellable("random"));
    CHECK(!c_name_unspellable("float4"));
    CHECK(c_name_ours("fzk_x") && c_name_ours("FUSEC_X") && !c_name_ours("fzx"));
}

int main(void)
{
    Arena a = {0};
    test_c_names();
    test_rounding();
    test_folding(&a);
    test_cse_dce(&a);
    arena_free_all(&a);
    printf("test_ir: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
