/* test_emit_cuda.c -- the kernel emitter (compiler/cuda) on hand-built IR and plans.
 *
 * Builds small functions (bias_relu, sum_abs, softmax, layernorm, colsum,
 * argmax, f16 chains) with a plan made here, emits kernels and launch
 * stubs, and checks the text for the things the design promises: vector
 * accesses, no 64-bit division in int32 loop indexing, NaN-propagating
 * max, the last-block combine, kernel names in K_INDEX order.  With
 * FUSEC_EMIT_DUMP=path it also writes a compilable .cu (kernels + stubs +
 * a FUSEC_LAUNCH for the CUDA runtime) for `nvcc -arch=sm_90 -c`. */
#include "emit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                                 \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                      \
            fprintf(stderr, __VA_ARGS__);                                                            \
            fputc('\n', stderr);                                                                     \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static Arena arena;

static IrShape shape(IrFunc *f, int rank, const char *const *dims)
{
    IrShape s = {0};
    s.rank = rank;
    for (int i = 0; i < rank; i++) {
        char *end;
        long v = strtol(dims[i], &end, 10);
        if (*end == 0) {
            s.dims[i].size = v;
            s.dims[i].sym = -1;
        } else {
            s.dims[i].size = -1;
            s.dims[i].sym = ir_sym_intern(f, dims[i]);
        }
    }
    return s;
}

static IrNode *param(IrFunc *f, const char *name, DType dt, int rank, const char *const *dims)
{
    IrShape s = shape(f, rank, dims);
    IrNode *n = ir_node_new(f, OP_PARAM, dt, &s, LOC_NONE);
    n->name = name;
    IrParam *ps = ARENA_ARRAY(&arena, IrParam, f->nparams + 1);
    if (f->nparams)
        memcpy(ps, f->params, sizeof(IrParam) * (size_t)f->nparams);
    ps[f->nparams] = (IrParam){name, dt, rank > 0 || dims != NULL, s, n, 0, 0, LOC_NONE};
    n->param = f->nparams;
    f->params = ps;
    f->nparams++;
    return n;
}

static IrNode *scalar_param(IrFunc *f, const char *name, DType dt)
{
    IrNode *n = param(f, name, dt, 0, NULL);
    f->params[n->param].is_tensor = 0;
    return n;
}

static IrNode *cnst(IrFunc *f, DType dt, double v)
{
    IrShape s = {0};
    IrNode *n = ir_node_new(f, OP_CONST, dt, &s, LOC_NONE);
    n->cval = v;
    n->ival = (int64_t)v;
    return n;
}

/* elementwise: the result shape is the widest operand's */
static IrNode *ew(IrFunc *f, OpKind op, DType dt, IrNode *a, IrNode *b, IrNode *c, const char *name)
{
    IrShape s = a->shape;
    if (b && b->shape.rank > s.rank)
        s = b->shape;
    if (c && c->shape.rank > s.rank)
        s = c->shape;
    /* a broadcast dim of size 1 takes the other's */
    IrNode *ops[3] = {a, b, c};
    for (int k = 0; k < 3; k++)
        if (ops[k] && ops[k]->shape.rank == s.rank)
            for (int d = 0; d < s.rank; d++)
                if (s.dims[d].size == 1 && ops[k]->shape.dims[d].size != 1)
                    s.dims[d] = ops[k]->shape.dims[d];
    IrNode *n = ir_node_new(f, op, dt, &s, LOC_NONE);
    n->name = name;
    for (int k = 0; k < 3; k++)
        if (ops[k])
            ir_add_operand(n, ops[k]);
    return n;
}

static IrNode *reduce(IrFunc *f, OpKind op, DType dt, IrNode *a, unsigned axes, int keep, const char *name)
{
    IrShape s = {0};
    for (int d = 0; d < a->shape.rank; d++) {
        if ((axes >> d) & 1) {
            if (keep)
                s.dims[s.rank++] = (IrDim){1, -1};
        } else
            s.dims[s.rank++] = a->shape.dims[d];
    }
    IrNode *n = ir_node_new(f, op, dt, &s, LOC_NONE);
    n->axes = (uint8_t)axes;
    n->keepdims = keep;
    n->name = name;
    ir_add_operand(n, a);
    return n;
}

static void result(IrFunc *f, const char *name, IrNode *n)
{
    IrResult *rs = ARENA_ARRAY(&arena, IrResult, f->nresults + 1);
    if (f->nresults)
        memcpy(rs, f->results, sizeof(IrResult) * (size_t)f->nresults);
    rs[f->nresults] = (IrResult){name, n->dtype, n->shape, n, LOC_NONE};
    f->results = rs;
    f->nresults++;
}

/* One kernel holding every non-param node; inputs are the tensor params. */
static Plan *one_kernel_plan(IrFunc *f, KernelKind kind, ReduceLayout lay, IrShape space, unsigned axes,
                             int looped)
{
    Plan *p = ARENA_NEW(&arena, Plan);
    p->fn = f;
    p->nkernels = 1;
    p->kernels = ARENA_NEW(&arena, Kernel);
    Kernel *k = &p->kernels[0];
    k->name = arena_printf(&arena, "%s_k0_%s", f->name, kind == KK_LOOP ? "loop" : kind == KK_ROW ? "row" : "reduce");
    k->kind = kind;
    k->layout = lay;
    k->space = space;
    k->reduce_axes = (uint8_t)axes;
    k->looped = looped;
    k->values = ARENA_ARRAY(&arena, IrNode *, f->nnodes);
    k->inputs = ARENA_ARRAY(&arena, IrNode *, f->nnodes);
    k->level = ARENA_ARRAY(&arena, uint8_t, f->nnodes);
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        if (n->op == OP_PARAM) {
            if (f->params[n->param].is_tensor)
                k->inputs[k->ninputs++] = n;
        } else
            k->values[k->nvalues++] = n;
    }
    k->outputs = ARENA_ARRAY(&arena, IrNode *, f->nresults);
    k->out_result = ARENA_ARRAY(&arena, int, f->nresults);
    for (int r = 0; r < f->nresults; r++) {
        k->outputs[k->noutputs] = f->results[r].node;
        k->out_result[k->noutputs++] = r;
    }
    return p;
}

static const char *const NM[] = {"N", "M"};
static const char *const N1024[] = {"N", "1024"};
static const char *const Mo[] = {"M"};
static const char *const Ko[] = {"K"};
static const char *const D1024[] = {"1024"};

static Plan *bias_relu(void)
{
    IrFunc *f = ir_func_new(&arena, "bias_relu", LOC_NONE);
    IrNode *x = param(f, "x", DT_F32, 2, NM), *b = param(f, "b", DT_F32, 1, Mo);
    IrNode *t = ew(f, OP_ADD, DT_F32, x, b, NULL, "t");
    IrNode *r = ew(f, OP_RELU, DT_F32, t, NULL, NULL, NULL);
    result(f, "result", r);
    return one_kernel_plan(f, KK_LOOP, RL_NONE, r->shape, 0, 0);
}

static Plan *chain_f16(void)
{
    IrFunc *f = ir_func_new(&arena, "chain_f16", LOC_NONE);
    IrNode *x = param(f, "x", DT_F16, 1, Ko);
    IrNode *s = scalar_param(f, "scale", DT_F32);
    IrNode *t = ew(f, OP_MUL, DT_F32, ew(f, OP_CAST, DT_F32, x, NULL, NULL, "xf"), s, NULL, "t");
    IrNode *u = ew(f, OP_TANH, DT_F32, t, NULL, NULL, "u");
    IrNode *m = ew(f, OP_MAX2, DT_F32, u, cnst(f, DT_F32, 0.25), NULL, "m");
    IrNode *h = ew(f, OP_CAST, DT_F16, m, NULL, NULL, "h");
    result(f, "y", h);
    result(f, "big", ew(f, OP_GT, DT_BOOL, m, cnst(f, DT_F32, 0.5), NULL, "big"));
    return one_kernel_plan(f, KK_LOOP, RL_NONE, x->shape, 0, 0);
}

static Plan *sum_abs(void)
{
    IrFunc *f = ir_func_new(&arena, "sum_abs", LOC_NONE);
    IrNode *x = param(f, "x", DT_F32, 1, Ko);
    IrNode *s = reduce(f, OP_SUM, DT_F32, ew(f, OP_ABS, DT_F32, x, NULL, NULL, "a"), 1, 0, "s");
    result(f, "result", s);
    return one_kernel_plan(f, KK_REDUCE, RL_SCALAR, x->shape, 1, 0);
}

static Plan *softmax(int stat)
{
    IrFunc *f = ir_func_new(&arena, stat ? "softmax1024" : "softmax", LOC_NONE);
    IrNode *x = param(f, "x", DT_F32, 2, stat ? N1024 : NM);
    IrNode *m = reduce(f, OP_RMAX, DT_F32, x, 2, 1, "m");
    IrNode *e = ew(f, OP_EXP, DT_F32, ew(f, OP_SUB, DT_F32, x, m, NULL, NULL), NULL, NULL, "e");
    IrNode *s = reduce(f, OP_SUM, DT_F32, e, 2, 1, "s");
    result(f, "result", ew(f, OP_DIV, DT_F32, e, s, NULL, NULL));
    return one_kernel_plan(f, KK_ROW, RL_ROWS, x->shape, 2, !stat);
}

static Plan *layernorm(void)
{
    IrFunc *f = ir_func_new(&arena, "layernorm", LOC_NONE);
    IrNode *x = param(f, "x", DT_F32, 2, N1024);
    IrNode *g = param(f, "g", DT_F32, 1, D1024), *b = param(f, "b", DT_F32, 1, D1024);
    IrNode *eps = scalar_param(f, "eps", DT_F32);
    IrNode *mu = reduce(f, OP_MEAN, DT_F32, x, 2, 1, "mu");
    IrNode *xc = ew(f, OP_SUB, DT_F32, x, mu, NULL, "xc");
    IrNode *v = reduce(f, OP_MEAN, DT_F32, ew(f, OP_MUL, DT_F32, xc, xc, NULL, NULL), 2, 1, "v");
    IrNode *rs = ew(f, OP_RSQRT, DT_F32, ew(f, OP_ADD, DT_F32, v, eps, NULL, NULL), NULL, NULL, NULL);
    IrNode *y = ew(f, OP_ADD, DT_F32, ew(f, OP_MUL, DT_F32, ew(f, OP_MUL, DT_F32, xc, rs, NULL, NULL), g, NULL, NULL),
                   b, NULL, "y");
    result(f, "y", y);
    return one_kernel_plan(f, KK_ROW, RL_ROWS, x->shape, 2, 0);
}

static Plan *colsum(void)
{
    IrFunc *f = ir_func_new(&arena, "colsum", LOC_NONE);
    IrNode *x = param(f, "x", DT_F32, 2, NM);
    result(f, "result", reduce(f, OP_SUM, DT_F32, x, 1, 0, NULL));
    return one_kernel_plan(f, KK_REDUCE, RL_COLS, x->shape, 1, 0);
}

static Plan *argmax_var(void)
{
    IrFunc *f = ir_func_new(&arena, "stats", LOC_NONE);
    IrNode *x = param(f, "x", DT_BF16, 2, NM);
    result(f, "am", reduce(f, OP_ARGMAX, DT_I64, x, 2, 0, "am"));
    result(f, "sd", reduce(f, OP_STD, DT_F32, x, 2, 0, "sd"));
    result(f, "lse", reduce(f, OP_LOGSUMEXP, DT_F32, x, 2, 0, "lse"));
    return one_kernel_plan(f, KK_REDUCE, RL_ROWS, x->shape, 2, 0);
}


/* ---- random graphs through the real fusion pass: the emitter never ICEs,
 * braces balance, and every variant in the name list is defined ---------- */

static unsigned rng = 2463534242u;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng % n;
}

static int can_bcast(const IrShape *a, const IrShape *b)
{
    int r = a->rank < b->rank ? a->rank : b->rank;
    for (int i = 1; i <= r; i++) {
        IrDim x = a->dims[a->rank - i], y = b->dims[b->rank - i];
        if (!ir_dim_eq(x, y) && x.size != 1 && y.size != 1)
            return 0;
    }
    return 1;
}

/* Every launch in the stubs names the variant that the name list puts at
 * its K_INDEX: the two read one lowering. */
static int launches_match_names(const Buf *l, const Buf *names)
{
    char *list[256];
    int n = 0;
    static char copy[1 << 16];
    snprintf(copy, sizeof copy, "%s", names->data ? names->data : "");
    for (char *q = copy; (q = strchr(q, '"')) && n < 256;) {
        char *e = strchr(q + 1, '"');
        *e = 0;
        list[n++] = q + 1;
        q = e + 1;
    }
    int launches = 0;
    for (const char *q = l->data; q && (q = strstr(q, "FUSEC_LAUNCH("));) {
        int idx;
        char sym[200];
        q += strlen("FUSEC_LAUNCH(");
        if (sscanf(q, "%d, %199[A-Za-z0-9_],", &idx, sym) != 2)
            continue; /* the macro's definition */
        if (idx < 0 || idx >= n || strcmp(list[idx], sym) != 0)
            return 0;
        launches++;
    }
    return launches > 0;
}

static int random_check(int seed, Plan **keep)
{
    static const char *const D3[] = {"N", "M", "K"};
    static const char *const D2s[] = {"N", "64"};
    static const char *const Mo1[] = {"M"};
    IrFunc *f = ir_func_new(&arena, arena_printf(&arena, "r%d", seed), LOC_NONE);
    static const DType dts[] = {DT_F32, DT_F16, DT_BF16, DT_F64};
    DType dt = dts[rnd(4)];
    IrNode *pool[48];
    int n = 0;
    pool[n++] = param(f, "x", dt, 2, rnd(3) ? NM : D2s);
    pool[n++] = param(f, "b", dt, 1, rnd(2) ? Mo1 : (const char *const *)(D2s + 1));
    pool[n++] = param(f, "z", dt, 3, D3);
    pool[n++] = scalar_param(f, "s", DT_F32);
    static const OpKind un[] = {OP_EXP, OP_ABS, OP_TANH, OP_NEG, OP_SQRT, OP_SIGMOID, OP_RELU, OP_ISNAN};
    static const OpKind bi[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX2, OP_MIN2, OP_POW};
    static const OpKind rd[] = {OP_SUM, OP_RMAX, OP_MEAN, OP_VAR, OP_ARGMAX, OP_LOGSUMEXP, OP_PROD, OP_ANY};
    int want = 6 + (int)rnd(14);
    while (n < want) {
        IrNode *a = pool[rnd((unsigned)n)];
        if (a->op == OP_PARAM && !f->params[a->param].is_tensor)
            continue;
        DType t = dtype_is_float(a->dtype) ? a->dtype : DT_F32;
        switch (rnd(5)) {
        case 0: {
            OpKind op = un[rnd(8)];
            pool[n++] = ew(f, op, op == OP_ISNAN ? DT_BOOL : t, a, NULL, NULL, NULL);
            break;
        }
        case 1: case 2: {
            IrNode *b = rnd(4) ? pool[rnd((unsigned)n)] : cnst(f, t, 0.5);
            if (!can_bcast(&a->shape, &b->shape))
                break;
            DType rt = dtype_promote(t, b->dtype == DT_BOOL ? t : b->dtype);
            if (b->dtype == DT_BOOL || a->dtype == DT_BOOL)
                break;
            pool[n++] = ew(f, bi[rnd(7)], rt, a, b, NULL, NULL);
            break;
        }
        default:
            if (a->shape.rank >= 1 && a->dtype != DT_BOOL) {
                unsigned axes = 1u + rnd((1u << a->shape.rank) - 1);
                OpKind op = rd[rnd(8)];
                if ((op == OP_ARGMAX) && __builtin_popcount(axes) != 1)
                    break;
                DType rt = op == OP_ARGMAX ? DT_I64 : op == OP_ANY ? DT_BOOL : t;
                pool[n++] = reduce(f, op, rt, a, axes, (int)rnd(2), NULL);
            }
            break;
        }
    }
    int nres = 1 + (int)rnd(2);
    for (int r = 0; r < nres; r++)
        result(f, arena_printf(&arena, "o%d", r), pool[n - 1 - (int)rnd(n < 4 ? (unsigned)n - 3 : 3)]);
    ir_count_uses(f);
    int ok = 1;
    for (int mode = 0; mode < 2; mode++) {
        FusionOptions fo = {mode, 128, -1};
        Plan *p = fuse_plan(&arena, f, &fo);
        if (!p)
            continue;
        /* the default, and --atomic-reduce on the second plan of each graph */
        CudaModule *cm = emit_cuda_lower(&p, 1, mode);
        EmitOptions o = {TARGET_CUDA, "t", "t.h", "t.fuse", 0, mode, cm};
        Buf k = {0}, l = {0}, names = {0};
        emit_cuda_kernels(&k, &p, 1, &o);
        emit_cuda_launchers(&l, &p, 1, &o);
        emit_cuda_kernel_names(&names, &p, 1, &o);
        emit_cuda_module_free(cm);
        if (!launches_match_names(&l, &names))
            ok = 0;
        long depth = 0;
        for (size_t i = 0; i < k.len; i++)
            depth += k.data[i] == '{' ? 1 : k.data[i] == '}' ? -1 : 0;
        if (depth != 0)
            ok = 0;
        /* every listed name is a __global__ of the source */
        for (char *q = names.data; q && (q = strchr(q, '"'));) {
            char *e = strchr(q + 1, '"');
            size_t len = (size_t)(e - q - 1);
            char want2[300];
            snprintf(want2, sizeof want2, ") %.*s(", (int)len, q + 1);
            if (!strstr(k.data, want2))
                ok = 0;
            q = e + 1;
        }
        if (keep && mode == 0)
            *keep = p;
        buf_free(&k);
        buf_free(&l);
        buf_free(&names);
    }
    return ok;
}

/* EMIT_RANDOM_DUMP=file.cu writes the first 40 plans as one module, for
 * `nvcc -arch=sm_90 -c` by hand. */
static void test_random(void)
{
    int count = getenv("EMIT_RANDOM") ? atoi(getenv("EMIT_RANDOM")) : 300;
    Plan *kept[40];
    int nkept = 0, emitted = 0;
    for (int i = 0; i < count; i++) {
        Plan *p = NULL;
        CHECK(random_check(i, &p), "random graph %d: unbalanced braces, a missing kernel or a launch of another variant", i);
        emitted += p != NULL;
        if (p && nkept < 40)
            kept[nkept++] = p;
    }
    CHECK(emitted > count / 2, "only %d of %d random graphs were planned", emitted, count);
    const char *dump = getenv("EMIT_RANDOM_DUMP");
    FILE *fp = dump ? fopen(dump, "w") : NULL;
    if (fp) {
        CudaModule *cm = emit_cuda_lower(kept, nkept, 0);
        EmitOptions o = {TARGET_CUDA, "t", "t.h", "t.fuse", 0, 0, cm};
        Buf k = {0}, l = {0};
        emit_cuda_kernels(&k, kept, nkept, &o);
        emit_cuda_launchers(&l, kept, nkept, &o);
        emit_cuda_module_free(cm);
        fputs("#include \"fusert.h\"\n#include <cuda_runtime.h>\n", fp);
        fputs(k.data, fp);
        fputs("#define FUSEC_LAUNCH(K, SYM, gx, gy, gz, bx, by, bz, sh, st, args) "
              "(cudaLaunchKernel((const void *)SYM, dim3(gx, gy, gz), dim3(bx, by, bz), args, sh, "
              "(cudaStream_t)st) == cudaSuccess ? FUSERT_SUCCESS : FUSERT_ERROR_LAUNCH)\n", fp);
        fputs(l.data, fp);
        fclose(fp);
        buf_free(&k);
        buf_free(&l);
    }
}

static int contains(const Buf *b, const char *s) { return b->data && strstr(b->data, s) != NULL; }

int main(void)
{
    Plan *plans[] = {bias_relu(), chain_f16(), sum_abs(), softmax(0), softmax(1), layernorm(), colsum(),
                     argmax_var()};
    int np = (int)(sizeof plans / sizeof plans[0]);
    CudaModule *cm = emit_cuda_lower(plans, np, 0);
    EmitOptions o = {TARGET_CUDA, "t", "t.h", "t.fuse", 0, 0, cm};
    Buf k = {0}, l = {0}, names = {0};
    emit_cuda_kernels(&k, plans, np, &o);
    emit_cuda_launchers(&l, plans, np, &o);
    emit_cuda_kernel_names(&names, plans, np, &o);
    CHECK(launches_match_names(&l, &names), "a launch's K_INDEX names another variant");

    /* loop kernels: vector variant with 16-byte accesses; the bias, indexed
     * by the column group, is one vector when aligned, else element loads */
    CHECK(contains(&k, "fz_vec<float, 4> va0"), "bias_relu has no float4 loads");
    CHECK(contains(&k, "extern \"C\" __global__ void __launch_bounds__(256) bias_relu_k0_loop_v("),
          "bias_relu vector variant missing");
    CHECK(contains(&k, "vc1 = *(const fz_vec<float, 4> *)(in1 + (gi1));"), "bias not a vector at the column group");
    CHECK(contains(&k, "vc1.v[j] = in1[(gi1) + j];"), "misaligned bias not read by element");
    CHECK(!contains(&k, "% gs"), "modulo in loop indexing");
    CHECK(contains(&k, "fz_vec<fz_u16, 8>"), "f16 chain not vectorised to f32 width");
    CHECK(contains(&k, "fz_max(v"), "elementwise max must propagate NaN");
    /* reductions */
    CHECK(contains(&k, "atomicAdd(counter, 1u) == gridDim.x - 1"), "sum_abs: no last-block combine");
    CHECK(contains(&k, "*counter = 0u;"), "sum_abs: counter not reset");
    CHECK(contains(&k, "softmax1024_k0_row_row("), "static softmax: no on-chip variant");
    CHECK(contains(&k, "<long long, 128, 8, 128, 4>"), "static softmax: 128 threads x 8 elements");
    CHECK(contains(&k, "softmax_k0_row_r1024("), "symbolic softmax: no 1024 bucket");
    CHECK(contains(&k, "softmax_k0_row_r512("), "symbolic softmax: no 512 bucket");
    CHECK(contains(&k, "[CAP];"), "row kernel does not cache the row");
    CHECK(contains(&k, "fz_argred<float, 1>"), "argmax state");
    CHECK(contains(&k, "fz_var<float, 1>"), "std state");
    CHECK(contains(&k, "fz_lse<float, true>"), "logsumexp state of bf16 values: the hardware exp");
    CHECK(contains(&l, "bias_relu_k0_loop_launch("), "launch stub missing");
    CHECK(contains(&l, "FUSEC_LAUNCH(0, bias_relu_k0_loop_v,"), "K_INDEX 0 is the first variant");
    CHECK(contains(&l, "vec = vec && gs1 % 4 == 0;"), "row width check for vectors");
    CHECK(contains(&l, "const int vecw = vec && gs1 % 4 != 0 && gs1 >= 4;"), "rows without whole vectors");
    CHECK(contains(&names, "\"bias_relu_k0_loop_v\", \"bias_relu_k0_loop_vw\", \"bias_relu_k0_loop_s\", "
                           "\"bias_relu_k0_loop_s_i64\""), "names order");
    /* determinism */
    Buf k2 = {0};
    emit_cuda_kernels(&k2, plans, np, &o);
    CHECK(k.len == k2.len && memcmp(k.data, k2.data, k.len) == 0, "output differs between runs");

    /* --atomic-reduce: sum_abs and colsum (one-word sums) take the atomic
     * combine; rows, argmax/std/logsumexp and loops keep theirs, with a reason */
    {
        const char *why = "";
        CudaModule *ca = emit_cuda_lower(plans, np, 1);
        CHECK(emit_cuda_combine(ca, 2, 0, &why) == COMBINE_ATOMIC, "sum_abs: not atomic");
        CHECK(emit_cuda_combine(cm, 2, 0, &why) == COMBINE_ORDERED, "sum_abs: atomic without the flag");
        CHECK(emit_cuda_combine(ca, 6, 0, &why) == COMBINE_ATOMIC, "colsum: not atomic");
        CHECK(emit_cuda_combine(ca, 0, 0, &why) == COMBINE_NONE, "bias_relu: a loop has no combine");
        CHECK(emit_cuda_combine(ca, 3, 0, &why) == COMBINE_ORDERED && strstr(why, "within one block"),
              "softmax: no row reason (%s)", why);
        CHECK(emit_cuda_combine(ca, 7, 0, &why) == COMBINE_ORDERED && why[0], "stats: no reason");
        EmitOptions oa = o;
        oa.atomic_reduce = 1;
        oa.cuda = ca;
        Buf ka = {0}, la = {0};
        emit_cuda_kernels(&ka, plans, np, &oa);
        emit_cuda_launchers(&la, plans, np, &oa);
        CHECK(!contains(&k, "fz_aadd"), "atomic helpers without the flag");
        CHECK(contains(&ka, "typedef fz_aadd<float> A"), "sum_abs: no atomic add");
        CHECK(contains(&ka, "::put(acc"), "no atomic put");
        CHECK(contains(&ka, "::get(acc"), "no read of the accumulator");
        CHECK(contains(&ka, "= 0; /* the identity, for the next call */"), "accumulator not reset");
        CHECK(contains(&ka, "*counter = 0u;") && contains(&ka, "*cnt = 0u;"), "counters not reset");
        CHECK(contains(&la, "return 256 + 8; /* ticket counter, then one atomic accumulator per reduction */"),
              "sum_abs: atomic scratch size");
        CHECK(contains(&ka, "fz_argred<float, 1>"), "argmax kernel changed by the flag");
        buf_free(&ka);
        buf_free(&la);
        emit_cuda_module_free(ca);
    }

    const char *dump = getenv("FUSEC_EMIT_DUMP");
    if (dump) {
        FILE *fp = fopen(dump, "w");
        if (fp) {
            fputs("#include \"fusert.h\"\n#include <cuda_runtime.h>\n", fp);
            fputs(k.data, fp);
            fputs("#define FUSEC_LAUNCH(K, SYM, gx, gy, gz, bx, by, bz, sh, st, args) "
                  "(cudaLaunchKernel((const void *)SYM, dim3(gx, gy, gz), dim3(bx, by, bz), args, sh, "
                  "(cudaStream_t)st) == cudaSuccess ? FUSERT_SUCCESS : FUSERT_ERROR_LAUNCH)\n", fp);
            fputs(l.data, fp);
            fprintf(fp, "static const char *const fz_names[] = {%s};\n", names.data);
            fprintf(fp, "const char *const *fz_all_names(void) { (void)bias_relu_k0_loop_scratch_bytes; return fz_names; }\n");
            fclose(fp);
        }
    }
    test_random();
    buf_free(&k);
    buf_free(&k2);
    buf_free(&l);
    buf_free(&names);
    emit_cuda_module_free(cm);
    arena_free_all(&arena);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
