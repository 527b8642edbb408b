/* emit_cuda.c -- CUDA kernels for the kernel plan, and their launch stubs.
 *
 * Design note.  Every kernel is generated from one idea: a value is an
 * expression evaluated "at a point" of the kernel's iteration space.  A
 * point is given by the indices of the space's dims; each node reached
 * from an output carries a *map* (node dim -> space dim, or -1 where the
 * node is broadcast / size 1), derived top-down from IrUse.bcast and
 * unsqueeze, so the emitters never re-derive broadcasting.  Input reads are
 * *accesses* (node, map).  Before emitting, adjacent space dims that every
 * access treats alike are collapsed into *groups* (bias[cols] over
 * [rows, cols] stays 2 groups; a chain over [N, M] becomes 1), so index
 * arithmetic is a flat index, or a few 32-bit magic-number divisions
 * (fz_udiv) in the int32 variants.
 *
 * Kinds (fusion.h):
 *   loop      grid-stride over the flat space; a 16-byte vector variant
 *             (chosen at launch when aligned), a scalar one, and int64
 *             index versions of both.
 *   reduce    RL_SCALAR: one launch, each block a contiguous chunk of the
 *             array, per-block partials to scratch, the last block (atomic
 *             ticket) combines them in a fixed order.
 *             RL_COLS/RL_MIDDLE: threads own kept columns, rows split over
 *             blockIdx.z with a last-block-done combine per tile.
 *             --atomic-reduce (combine_of): both combine sum/mean/max/min
 *             partials with atomics into one word per result instead.
 *             RL_ROWS (and any other axis set): the row scheme below.
 *   row       one warp (or block) per "row" (a point of the kept dims);
 *             reductions in dependency rounds; the row is cached in a
 *             compile-time register array (size buckets picked at launch),
 *             or re-read from memory in the looped variant.
 * Every kernel variant is a thin extern "C" __global__ wrapper around a
 * template body; K_INDEX numbering follows plan, kernel, variant order.
 * Output is a function of the plan only: no pointers, no hash order. */
#include "emit.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* the device preamble, one string per line (ISO C limits string length) */
static const char *const preamble[] = {
#include "emit_cuda_preamble.inc"
    NULL};
/* the atomic combine's helpers, only in modules that use it (--atomic-reduce) */
static const char *const atomic_preamble[] = {
#include "emit_cuda_atomic.inc"
    NULL};

/* ------------------------------------------------------------------ */
/* Text output: indentation-aware lines.                               */

typedef struct Inst {
    const IrNode *node;
    int8_t map[IR_MAX_RANK];
    int depth;  /* scope depth where its variable was declared */
    char name[160];
} Inst;

typedef struct Access {
    const IrNode *node;
    int8_t map[IR_MAX_RANK];
} Access;

enum { MAX_INST = 4096, MAX_ACC = 96, MAX_VARIANTS = 32 };

typedef struct KCtx {
    const IrFunc *f;
    const Kernel *k;
    const EmitOptions *o;
    Buf *out;
    int ind;
    /* node roles, by node id */
    signed char *role; /* 0 none, 'v' value, 'i' input */
    /* by node id: 1 where the value is computed from a bf16 param, whose
     * results are held to bf16's tolerance (op_expr's narrow) */
    unsigned char *from_bf16;
    int *inbuf;        /* bufs index of an input node, -1 */
    /* the space */
    int R;
    unsigned red;      /* reduce mask over space dims */
    Access acc[MAX_ACC];
    int nacc;
    /* groups of collapsed space dims: [gfirst, glast], all kept or all reduced */
    int ng;
    int gfirst[IR_MAX_RANK], glast[IR_MAX_RANK], gred[IR_MAX_RANK];
    /* emission state */
    Inst *inst;
    int ninst;
    int depth;
    int tmp;           /* counter for fresh names */
    /* how the current point is named */
    const char *gi[IR_MAX_RANK]; /* per group: index expression, NULL if not available */
    const char *flat;            /* flat index over the whole space, or NULL */
    int vec;                     /* vector mode: full accesses read va<k>.v[j] */
    int wrapv;                   /* the loop's wrapping vector body: a vector may
                                  * run past the end of the innermost group */
    int loopbv;                  /* the loop's `_v` body: its vector width, and
                                  * broadcast inputs read vc<a>.v[j] (acc_loopbv) */
    int rowcache;                /* row mode with cached accesses: x_c<a>[k] */
    int subwarp;                 /* a cached row variant shares warps between rows
                                  * (TPR < 32): loops and shuffles stay warp-uniform */
    int vecstore;                /* row mode: full element outputs go to vo<i>.v[j] */
    int rowvw;                   /* row mode: row-only inputs read vb<a>.v[j] (acc_rowvec) */
    int window;                  /* the cached row body takes SH: rows at any element
                                  * offset read as aligned vectors (row_windowable) */
    int cluster;                 /* the cached row body takes CL: a row split over the
                                  * CL blocks of a cluster, [rlo, rhi) each */
    int smem;                    /* the cached row body keeps the row in dynamic shared
                                  * memory (`_rs_body`, the `_rsm` variants): CAP is
                                  * the row's, element k of a lane at xc<a>[k * TPR] */
    int loopvec;                 /* the looped row body reads V-element vectors
                                  * (`_rlv_body`, the `_blockv` variant) */
    int loopwin;                 /* ... at any element offset: windowed vectors
                                  * (`_rlw_body`, the `_blockw` variant) */
    int loopvld;                 /* its element loop: row-shaped inputs read t<a>.v[j] */
    const char *sfx;             /* suffix of gi/va/vo names (unrolled copies) */
    const char *accidx;          /* "[j]" where accumulators are per vector lane */
    char giname[IR_MAX_RANK][24];
    const char **reduced_val;    /* per value index in k->values: a reduction's variable */
    int atomic;                  /* combine block partials with atomics (--atomic-reduce) */
    /* cached rows: after the last round, row cache xc<xc_slot> holds the
     * value xc_e (at map xc_emap) instead of its input (row_cache_rewrite) */
    const IrNode *xc_e;
    int8_t xc_emap[IR_MAX_RANK];
    int xc_slot;
} KCtx;

/* One line of generated code at the current indentation. */
static void line(KCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(KCtx *c, const char *fmt, ...)
{
    for (int i = 0; i < c->ind; i++)
        buf_puts(c->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    char tmp[1024];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        /* long line: format into a heap buffer */
        size_t len = n > 0 ? (size_t)n + 1 : 8192;
        char *big = malloc(len);
        if (!big)
            fatal_oom();
        va_start(ap, fmt);
        vsnprintf(big, len, fmt, ap);
        va_end(ap);
        buf_puts(c->out, big);
        free(big);
    } else {
        buf_puts(c->out, tmp);
    }
    buf_putc(c->out, '\n');
}

/* Open a brace scope: values declared inside are forgotten at close. */
static void open_scope(KCtx *c)
{
    c->ind++;
    c->depth++;
}

/* Close a brace scope and forget the values declared inside it. */
static void close_scope(KCtx *c)
{
    while (c->ninst > 0 && c->inst[c->ninst - 1].depth >= c->depth)
        c->ninst--;
    c->depth--;
    c->ind--;
    line(c, "}");
}

/* ------------------------------------------------------------------ */
/* Types.                                                              */

/* compute type of a dtype (f16/bf16 compute in f32) */
static const char *ctype(DType t)
{
    switch (t) {
    case DT_BOOL: return "bool";
    case DT_I32: return "int";
    case DT_I64: return "long long";
    case DT_F16: case DT_BF16: case DT_F32: return "float";
    case DT_F64: return "double";
    default: unreachable();
    }
}

/* bytes of the compute type (ctype) */
static int ctype_bytes(DType t)
{
    switch (t) {
    case DT_BOOL: return 1;
    case DT_I64: case DT_F64: return 8;
    default: return 4;
    }
}

/* storage type in device memory */
static const char *stype(DType t)
{
    switch (t) {
    case DT_BOOL: return "fz_u8";
    case DT_I32: return "int";
    case DT_I64: return "long long";
    case DT_F16: case DT_BF16: return "fz_u16";
    case DT_F32: return "float";
    case DT_F64: return "double";
    default: unreachable();
    }
}

/* The dtype of a kernel input or output in device memory: its own, except
 * that f16 and bf16 intermediates (stored by one kernel for another) are
 * kept in f32, so that splitting a fn into kernels rounds nothing that the
 * fused kernel keeps in f32 registers (fuse_mem_dtype, fusion.h). */
#define MDT(c, n) fuse_mem_dtype((c)->f, (n))

/* the dtype whose compute type a dtype uses */
static DType cdtype(DType t)
{
    return (t == DT_F16 || t == DT_BF16) ? DT_F32 : t;
}

/* expression converting stored element `e` of dtype t to its compute type */
static void load_conv(Buf *b, DType t, const char *e)
{
    switch (t) {
    case DT_F16: buf_printf(b, "fz_f16_to_f32(%s)", e); break;
    case DT_BF16: buf_printf(b, "fz_bf16_to_f32(%s)", e); break;
    case DT_BOOL: buf_printf(b, "(%s != 0)", e); break;
    default: buf_puts(b, e); break;
    }
}

/* expression converting compute value `e` to the storage type of t */
static void store_conv(Buf *b, DType t, const char *e)
{
    switch (t) {
    case DT_F16: buf_printf(b, "fz_f32_to_f16((float)(%s))", e); break;
    case DT_BF16: buf_printf(b, "fz_f32_to_bf16((float)(%s))", e); break;
    case DT_BOOL: buf_printf(b, "(fz_u8)((%s) != 0)", e); break;
    default: buf_printf(b, "(%s)(%s)", stype(t), e); break;
    }
}

/* C identifier fragment from a source name */
static void put_ident(Buf *b, const char *s)
{
    for (; s && *s; s++) {
        char ch = *s;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        buf_putc(b, ok ? ch : '_');
    }
}

/* ------------------------------------------------------------------ */
/* Sizes.  In kernels a symbolic dim is the argument d_<sym>; on the   */
/* host it is dims[sym].                                               */

/* one dim, as a kernel expression of index type itype */
static void dim_dev(const KCtx *c, IrDim d, const char *itype, Buf *b)
{
    if (d.size >= 0)
        buf_printf(b, "(%s)%lld", itype, (long long)d.size);
    else {
        buf_printf(b, "(%s)d_", itype);
        put_ident(b, c->f->syms[d.sym]);
    }
}

/* one dim, as a host expression over the stub's dims[] */
static void dim_host(IrDim d, Buf *b)
{
    if (d.size >= 0)
        buf_printf(b, "(int64_t)%lld", (long long)d.size);
    else
        buf_printf(b, "dims[%d]", d.sym);
}

/* product of space dims [a, b] as a device expression */
static void span_dev(const KCtx *c, int a, int b, const char *itype, Buf *out)
{
    if (a > b) {
        buf_printf(out, "(%s)1", itype);
        return;
    }
    buf_putc(out, '(');
    for (int d = a; d <= b; d++) {
        if (d > a)
            buf_puts(out, " * ");
        dim_dev(c, c->k->space.dims[d], itype, out);
    }
    buf_putc(out, ')');
}

/* product of space dims [a, b] as a host expression */
static void span_host(const KCtx *c, int a, int b, Buf *out)
{
    if (a > b) {
        buf_puts(out, "(int64_t)1");
        return;
    }
    buf_putc(out, '(');
    for (int d = a; d <= b; d++) {
        if (d > a)
            buf_puts(out, " * ");
        dim_host(c->k->space.dims[d], out);
    }
    buf_putc(out, ')');
}

/* ------------------------------------------------------------------ */
/* Maps: node dim -> space dim (-1: broadcast or size 1).              */

/* map of operand u of n, given n's map */
static void operand_map(const IrNode *n, int k, const int8_t *nmap, int8_t *umap)
{
    const IrNode *u = n->in[k].node;
    int r = u->shape.rank, R = n->shape.rank;
    for (int i = 0; i < IR_MAX_RANK; i++)
        umap[i] = -1;
    OpClass cls = op_info[n->op].cls;
    if (cls == OPC_VIEW) {
        /* unsqueeze: result dim axis is new; others shift */
        for (int i = 0; i < r; i++) {
            int d = i < n->axis ? i : i + 1;
            umap[i] = d < R ? nmap[d] : -1;
        }
        return;
    }
    if (cls == OPC_REDUCE)
        return; /* handled by the caller: a reduction's operand is over the space */
    for (int i = 0; i < r; i++) {
        int d = i + (R - r);
        if (d < 0 || (n->in[k].bcast >> d) & 1)
            umap[i] = -1;
        else
            umap[i] = nmap[d];
    }
}

/* the map of a node that has the shape of the whole space (identity) */
static void space_map(const KCtx *c, const IrNode *n, int8_t *map)
{
    int r = n->shape.rank;
    for (int i = 0; i < IR_MAX_RANK; i++)
        map[i] = -1;
    for (int i = 0; i < r; i++) {
        int d = i + (c->R - r);
        if (d >= 0 && !(n->shape.dims[i].size == 1 && c->k->space.dims[d].size != 1))
            map[i] = (int8_t)d;
    }
}

/* the map of an output (or reduction result) node: the space, or its kept
 * dims (reduction results without keepdims) */
static void out_map(const KCtx *c, const IrNode *n, int8_t *map)
{
    int r = n->shape.rank;
    int nkept = 0;
    int kept[IR_MAX_RANK];
    for (int d = 0; d < c->R; d++)
        if (!((c->red >> d) & 1))
            kept[nkept++] = d;
    if (r == c->R || c->red == 0) {
        /* the space's rank: keepdims results have static 1 in reduced dims */
        space_map(c, n, map);
        return;
    }
    for (int i = 0; i < IR_MAX_RANK; i++)
        map[i] = -1;
    for (int i = 0; i < r; i++) {
        int j = i + (nkept - r);
        if (j >= 0 && n->shape.dims[i].size != 1)
            map[i] = (int8_t)kept[j];
    }
}

/* position of n in k->values, or -1 */
static int value_index(const KCtx *c, const IrNode *n)
{
    for (int i = 0; i < c->k->nvalues; i++)
        if (c->k->values[i] == n)
            return i;
    return -1;
}

/* scalar params reach kernels by value, never through bufs */
static int is_scalar_param(const KCtx *c, const IrNode *n)
{
    return n->op == OP_PARAM && n->param >= 0 && !c->f->params[n->param].is_tensor;
}

/* same map over n's dims */
static int map_eq(const IrNode *n, const int8_t *a, const int8_t *b)
{
    for (int i = 0; i < n->shape.rank; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* does the map touch a reduced dim? */
static int map_has_red(const KCtx *c, const IrNode *n, const int8_t *map)
{
    /* a reduced dim of static size 1 has one element: nothing varies along it */
    for (int i = 0; i < n->shape.rank; i++)
        if (map[i] >= 0 && ((c->red >> map[i]) & 1) && c->k->space.dims[map[i]].size != 1)
            return 1;
    return 0;
}

/* Collect the input accesses reachable from (n, map). */
static void collect(KCtx *c, const IrNode *n, const int8_t *map)
{
    if (n->op == OP_CONST || is_scalar_param(c, n))
        return;
    if (c->role[n->id] == 'i') {
        for (int a = 0; a < c->nacc; a++)
            if (c->acc[a].node == n && map_eq(n, c->acc[a].map, map))
                return;
        if (c->nacc >= MAX_ACC)
            ICE("too many input accesses in one kernel");
        c->acc[c->nacc].node = n;
        memcpy(c->acc[c->nacc].map, map, IR_MAX_RANK);
        c->nacc++;
        return;
    }
    if (c->role[n->id] != 'v')
        ICE("kernel operand is neither a value nor an input");
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        if (op_info[n->op].cls == OPC_REDUCE)
            space_map(c, n->in[k].node, um);
        else
            operand_map(n, k, map, um);
        collect(c, n->in[k].node, um);
    }
}

/* Is space dim d present in access a, and which node dim maps it? */
static int acc_dim(const Access *a, int d)
{
    for (int i = 0; i < a->node->shape.rank; i++)
        if (a->map[i] == d)
            return i;
    return -1;
}

/* Group the space dims.  Static size-1 dims are skipped (index 0). */
static void make_groups(KCtx *c)
{
    c->ng = 0;
    int prev = -1;
    for (int d = 0; d < c->R; d++) {
        if (c->k->space.dims[d].size == 1)
            continue;
        int merge = prev >= 0 && ((c->red >> prev) & 1) == ((c->red >> d) & 1);
        for (int a = 0; merge && a < c->nacc; a++) {
            int p = acc_dim(&c->acc[a], prev), q = acc_dim(&c->acc[a], d);
            if ((p < 0) != (q < 0))
                merge = 0;
            else if (p >= 0) {
                /* adjacent in the node, apart from size-1 dims */
                for (int i = p + 1; i < q; i++)
                    if (c->acc[a].node->shape.dims[i].size != 1)
                        merge = 0;
            }
        }
        if (merge) {
            c->glast[c->ng - 1] = d;
        } else {
            c->gfirst[c->ng] = c->glast[c->ng] = d;
            c->gred[c->ng] = (c->red >> d) & 1;
            c->ng++;
        }
        prev = d;
    }
}

/* Is the access present in every group (then its offset is the flat index)? */
static int acc_full(const KCtx *c, const Access *a)
{
    for (int g = 0; g < c->ng; g++)
        if (acc_dim(a, c->glast[g]) < 0)
            return 0;
    return 1;
}

/* Row kernels keep per-row data on chip: accesses that vary along the row
 * (a reduced group) and between rows (a kept group). */
static int acc_cached(const KCtx *c, const Access *a)
{
    int r = 0, kept = 0;
    for (int g = 0; g < c->ng; g++)
        if (acc_dim(a, c->glast[g]) >= 0) {
            if (c->gred[g])
                r = 1;
            else
                kept = 1;
        }
    return r && kept;
}

/* Element k of cached access a's row cache: a register array (xc<a>[k]),
 * or in shared memory (c->smem) the lane's k-th word, lanes interleaved,
 * so the 32 lanes of a warp reading one k touch 32 consecutive words (no
 * bank conflicts, no padding) */
static void xc_ref(const KCtx *c, Buf *b, int a, const char *k)
{
    if (c->smem)
        buf_printf(b, "xc%d[(%s) * TPR]", a, k);
    else
        buf_printf(b, "xc%d[%s]", a, k);
}

/* Is access a stored narrower than it computes (2-byte floats)?  The
 * shared-memory row cache holds such values as stored. */
static int acc_narrow(const KCtx *c, int a)
{
    return dtype_size(MDT(c, c->acc[a].node)) < ctype_bytes(c->acc[a].node->dtype);
}

/* Does the row cache hold access a as stored (in shared memory, 2-byte
 * floats converted where read: half the bytes), not in the compute type? */
static int xc_raw(const KCtx *c, int a)
{
    return c->smem && acc_narrow(c, a);
}

/* bytes of one element of access a's row cache in shared memory */
static int xc_bytes(const KCtx *c, int a)
{
    return acc_narrow(c, a) ? dtype_size(MDT(c, c->acc[a].node)) : ctype_bytes(c->acc[a].node->dtype);
}

/* cv = the value of access a, read as e from memory, as its row cache
 * holds it: as stored (xc_raw) or converted to the compute type */
static void xc_value(const KCtx *c, int a, const char *e, Buf *cv)
{
    if (xc_raw(c, a))
        buf_puts(cv, e);
    else
        load_conv(cv, MDT(c, c->acc[a].node), e);
}

/* Row kernels: an input that varies only along the (single, innermost)
 * reduced group, like layernorm's g and b, is the same vector for every row
 * at a given rb: the 16-byte-or-less vector passes load it whole (vb<a>)
 * instead of V scalar loads.  vw is the pass's vector width. */
static int acc_per_column(const KCtx *c, const Access *a)
{
    if (c->ng < 1 || !c->gred[c->ng - 1] || acc_cached(c, a) || c->role[a->node->id] != 'i')
        return 0;
    for (int g = 0; g < c->ng; g++)
        if ((acc_dim(a, c->glast[g]) >= 0) != (g == c->ng - 1))
            return 0;
    return 1;
}

static int acc_rowvec(const KCtx *c, const Access *a, int vw)
{
    return vw > 1 && dtype_size(MDT(c, a->node)) * vw <= 16 && acc_per_column(c, a);
}

/* The loop kernel's `_v` body: an input that is broadcast (not full) but
 * varies along the innermost group, like bias_relu's b[M] against x[N, M],
 * is V consecutive elements at every vector step: the innermost group holds
 * whole vectors there, so its offset is a multiple of V, and one aligned
 * vector load replaces V scalar ones (the kernel tests the pointer). */
static int acc_loopbv(const KCtx *c, const Access *a, int V)
{
    if (V <= 1 || c->ng <= 1 || c->role[a->node->id] != 'i' || acc_full(c, a) ||
        dtype_size(MDT(c, a->node)) * V > 16)
        return 0;
    int p = acc_dim(a, c->glast[c->ng - 1]);
    if (p < 0)
        return 0;
    for (int i = p + 1; i < a->node->shape.rank; i++)
        if (a->node->shape.dims[i].size != 1)
            return 0; /* not stride 1 along the vector */
    return 1;
}

/* the collected access of (n, map); every read was collected up front */
static int acc_index(const KCtx *c, const IrNode *n, const int8_t *map)
{
    for (int a = 0; a < c->nacc; a++)
        if (c->acc[a].node == n && map_eq(n, c->acc[a].map, map))
            return a;
    ICE("access not collected");
}

/* device expression of the offset of access a at the current point */
static void acc_offset(const KCtx *c, const Access *a, const char *itype, Buf *b)
{
    if (c->flat && acc_full(c, a)) {
        buf_puts(b, c->flat);
        return;
    }
    int any = 0;
    buf_putc(b, '(');
    for (int g = 0; g < c->ng; g++) {
        int p = acc_dim(a, c->glast[g]);
        if (p < 0)
            continue;
        if (!c->gi[g])
            ICE("group index not available here");
        if (any)
            buf_puts(b, " + ");
        any = 1;
        buf_puts(b, c->gi[g]);
        /* stride: product of node dims after p */
        for (int i = p + 1; i < a->node->shape.rank; i++) {
            if (a->node->shape.dims[i].size == 1)
                continue;
            buf_puts(b, " * ");
            dim_dev(c, a->node->shape.dims[i], itype, b);
        }
    }
    if (!any)
        buf_putc(b, '0');
    buf_putc(b, ')');
}

/* ------------------------------------------------------------------ */
/* Expressions.                                                        */

/* A float constant as a CUDA literal: f64 with 17 significant digits, f32
 * with 9 and an f suffix; inf and NaN by name (NVRTC has no math.h). */
static void float_literal(Buf *b, double v, int dbl)
{
    double big = dbl ? 1.7976931348623157e308 : 3.4028234663852886e38;
    if (v != v)
        buf_puts(b, dbl ? "FZ_DNAN" : "FZ_NAN");
    else if (v > big)
        buf_puts(b, dbl ? "FZ_DINF" : "FZ_INF");
    else if (v < -big)
        buf_puts(b, dbl ? "(-FZ_DINF)" : "(-FZ_INF)");
    else {
        char t[64];
        snprintf(t, sizeof t, dbl ? "%.17g" : "%.9g", v);
        buf_puts(b, t);
        if (!strpbrk(t, ".en"))
            buf_puts(b, ".0");
        if (!dbl)
            buf_putc(b, 'f');
    }
}

/* A constant as a literal of its dtype; inf and NaN by bit pattern, since
 * NVRTC has no math.h macros. */
static void fmt_const(const IrNode *n, Buf *b)
{
    double v = n->cval;
    switch (n->dtype) {
    case DT_BOOL: buf_puts(b, (n->ival || v != 0) ? "true" : "false"); return;
    case DT_I32:
        if (n->ival == INT32_MIN)
            buf_puts(b, "(-2147483647 - 1)");
        else
            buf_printf(b, "%lld", (long long)n->ival);
        return;
    case DT_I64:
        if (n->ival == INT64_MIN)
            buf_puts(b, "(-FZ_LLMAX - 1)");
        else
            buf_printf(b, "%lldLL", (long long)n->ival);
        return;
    case DT_F64:
        float_literal(b, v, 1);
        return;
    default:
        float_literal(b, v, 0);
        return;
    }
}

/* Instantiate an f32 template with operand strings; for f64 strip the
 * f suffix of math functions and literals (expf -> exp, 1.0f -> 1.0). */
static void apply_template(const char *t, const char *const *ops, int dbl, Buf *b)
{
    static const char *const fnames[] = {
        "fabsf", "expf", "exp2f", "logf", "log2f", "log1pf", "expm1f", "sqrtf", "rsqrtf", "cbrtf",
        "sinf", "cosf", "tanf", "tanhf", "erff", "floorf", "ceilf", "rintf", "truncf", "fmodf",
        "powf", "atan2f", "fmaf", "fminf", "fmaxf", NULL};
    for (const char *p = t; *p;) {
        if (*p == '%' && p[1] >= '0' && p[1] <= '2') {
            buf_puts(b, ops[p[1] - '0']);
            p += 2;
            continue;
        }
        if (dbl && ((*p >= 'a' && *p <= 'z') || *p == '_')) {
            const char *q = p;
            while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
                q++;
            int done = 0;
            for (int i = 0; fnames[i]; i++)
                if ((size_t)(q - p) == strlen(fnames[i]) && strncmp(p, fnames[i], (size_t)(q - p)) == 0) {
                    buf_write(b, p, (size_t)(q - p) - 1);
                    done = 1;
                }
            if (!done)
                buf_write(b, p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (dbl && *p >= '0' && *p <= '9') {
            const char *q = p;
            while ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
                   ((*q == '-' || *q == '+') && (q[-1] == 'e')))
                q++;
            buf_write(b, p, (size_t)(q - p));
            p = q;
            if (*p == 'f')
                p++;
            continue;
        }
        buf_putc(b, *p++);
    }
}

/* the expression of elementwise node n on operand expressions a[].
 * Floats use the op table's f32 templates (stripped to double for f64);
 * integers get integer arithmetic (C division and remainder); comparisons
 * compute in the promoted operand type; min/max propagate NaN. */
/* --fast-math on the cuda target: the hardware approximations that nvcc's
 * --use_fast_math would pick (the nvrtc target gets that option itself). */
static void fast_template(const char *t, const char *const *ops, Buf *b)
{
    static const char *const from[] = {"expf(", "logf(", "sinf(", "cosf(", "tanf(", "powf(", "log2f(", NULL};
    static const char *const to[] = {"__expf(", "__logf(", "__sinf(", "__cosf(", "__tanf(", "__powf(", "__log2f(", NULL};
    Buf tmp = {0};
    for (const char *p = t; *p;) {
        int done = 0;
        for (int i = 0; from[i] && !done; i++) {
            size_t len = strlen(from[i]);
            /* whole identifiers only: not the tail of expm1f( or log1pf( */
            int start = p == t || !((p[-1] >= 'a' && p[-1] <= 'z') || p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9'));
            if (start && strncmp(p, from[i], len) == 0) {
                buf_puts(&tmp, to[i]);
                p += len;
                done = 1;
            }
        }
        if (!done)
            buf_putc(&tmp, *p++);
    }
    apply_template(tmp.data ? tmp.data : "", ops, 0, b);
    buf_free(&tmp);
}

/* narrow: n is computed from a bf16 param (KCtx.from_bf16), in a loop kernel.
 * Such a result is held to bf16's tolerance (docs/language.md,
 * "Tolerances": 1.6e-2 relative, a bf16 ulp is 7.8e-3 at most), so f32 exp
 * and the sigmoid and silu built on it take the hardware's approximation,
 * __expf, whose relative error is below 1.2e-5 (measured on the H200 over
 * every float whose exp is a normal float).  Not for f16: its subnormals
 * (below 6.1e-5) are spaced wider than its tolerance allows there, and a
 * long softmax row of f16 then rounded 27 of 600000 values the other way.
 * Not in row kernels: they are bound by memory, and with __expf ptxas
 * spilled softmax's bf16 `_r4096w`. */
static void op_expr(const IrNode *n, const char *const *a, const DType *adt, Buf *b, int fast, int narrow)
{
    const OpInfo *oi = &op_info[n->op];
    DType cdt = n->dtype;
    if (oi->flags & OPF_BOOL_RESULT) {
        cdt = adt[0];
        for (int k = 1; k < n->nin; k++)
            cdt = dtype_promote(cdt, adt[k]);
    }
    cdt = cdtype(cdt);
    /* operands converted to the compute type */
    Buf cv[3] = {{0}};
    const char *ops[3] = {"", "", ""};
    for (int k = 0; k < n->nin; k++) {
        DType want = cdt;
        if (n->op == OP_WHERE && k == 0)
            want = DT_BOOL;
        if (n->op == OP_CAST)
            want = cdtype(adt[0]);
        if (strcmp(ctype(cdtype(adt[k])), ctype(want)) != 0)
            buf_printf(&cv[k], "((%s)(%s))", ctype(want), a[k]);
        else
            buf_puts(&cv[k], a[k]);
        ops[k] = cv[k].data;
    }
    int isf = dtype_is_float(cdt), dbl = cdt == DT_F64;
    switch (n->op) {
    case OP_CAST: {
        DType from = adt[0], to = n->dtype;
        if (to == DT_F16)
            buf_printf(b, "fz_f16_to_f32(fz_f32_to_f16((float)(%s)))", ops[0]);
        else if (to == DT_BF16)
            buf_printf(b, "fz_bf16_to_f32(fz_f32_to_bf16((float)(%s)))", ops[0]);
        else if (to == DT_BOOL)
            buf_printf(b, "((%s) != 0)", ops[0]);
        else
            buf_printf(b, "((%s)(%s))", ctype(to), ops[0]);
        (void)from;
        break;
    }
    case OP_MIN2: buf_printf(b, "fz_min(%s, %s)", ops[0], ops[1]); break;
    case OP_MAX2: buf_printf(b, "fz_max(%s, %s)", ops[0], ops[1]); break;
    case OP_ISNAN:
        if (isf)
            buf_printf(b, "((%s) != (%s))", ops[0], ops[0]);
        else
            buf_printf(b, "false");
        break;
    case OP_ISINF:
        if (isf)
            buf_printf(b, "(%s(%s) == %s)", dbl ? "fabs" : "fabsf", ops[0], dbl ? "FZ_DINF" : "FZ_INF");
        else
            buf_printf(b, "false");
        break;
    case OP_SIGN:
        if (isf) /* sign(NaN) is NaN, like torch and the interpreter */
            buf_printf(b, "((%s) != (%s) ? (%s) : (%s)(((%s) > 0) - ((%s) < 0)))", ops[0], ops[0], ops[0],
                       ctype(cdt), ops[0], ops[0]);
        else
            buf_printf(b, "((%s)(((%s) > 0) - ((%s) < 0)))", ctype(cdt), ops[0], ops[0]);
        break;
    case OP_CLAMP: buf_printf(b, "fz_min(fz_max(%s, %s), %s)", ops[0], ops[1], ops[2]); break;
    default:
        if (isf) {
            if (n->op == OP_RELU) /* NaN stays NaN, like torch and the interpreter */
                buf_printf(b, "(((%s) > 0 || (%s) != (%s)) ? (%s) : (%s)0)", ops[0], ops[0], ops[0], ops[0],
                           ctype(cdt));
            else if (fast && !dbl && n->op == OP_DIV)
                buf_printf(b, "__fdividef(%s, %s)", ops[0], ops[1]);
            else if (!dbl && n->op == OP_DIV)
                buf_printf(b, "fz_fdiv(%s, %s)", ops[0], ops[1]);
            else if (!dbl && !fast && n->op == OP_RECIP)
                buf_printf(b, "fz_fdiv(1.0f, %s)", ops[0]);
            else if (!dbl && !fast && narrow && n->op == OP_EXP)
                buf_printf(b, "__expf(%s)", ops[0]);
            else if (!dbl && !fast && n->op == OP_SIGMOID)
                buf_printf(b, "%s(%s)", narrow ? "fz_sigmoid_approx" : "fz_sigmoid", ops[0]);
            else if (!dbl && !fast && n->op == OP_SILU)
                buf_printf(b, "%s(%s)", narrow ? "fz_silu_approx" : "fz_silu", ops[0]);
            else if (fast && !dbl)
                fast_template(oi->cuda, ops, b);
            else
                apply_template(oi->cuda, ops, dbl, b);
            break;
        }
        /* integers and bools: integer arithmetic */
        switch (n->op) {
        case OP_ABS: buf_printf(b, "((%s) < 0 ? -(%s) : (%s))", ops[0], ops[0], ops[0]); break;
        case OP_RELU: buf_printf(b, "((%s) > 0 ? (%s) : 0)", ops[0], ops[0]); break;
        case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_TRUNC: buf_printf(b, "(%s)", ops[0]); break;
        case OP_MOD: buf_printf(b, "((%s) %% (%s))", ops[0], ops[1]); break;
        case OP_POW: buf_printf(b, "((%s)fz_ipow(%s, %s))", ctype(cdt), ops[0], ops[1]); break;
        case OP_FMA: buf_printf(b, "((%s) * (%s) + (%s))", ops[0], ops[1], ops[2]); break;
        default:
            if (!oi->cuda[0])
                ICE("no CUDA template for this op");
            apply_template(oi->cuda, ops, 0, b);
            break;
        }
        break;
    }
    for (int k = 0; k < 3; k++)
        buf_free(&cv[k]);
}

/* Variable names come from the source: v<id>_<name> (x<id>_<name> for
 * loads), plus _<k> for a second broadcast instance of the same node. */
static const char *value_name(KCtx *c, const IrNode *n, const char *prefix, char *out, size_t cap)
{
    Buf b = {0};
    buf_printf(&b, "%s%d", prefix, n->id);
    if (n->name) {
        buf_putc(&b, '_');
        put_ident(&b, n->name);
    }
    /* a second instance of the same node (another broadcast map) */
    int dup = 0;
    for (int i = 0; i < c->ninst; i++)
        if (c->inst[i].node == n)
            dup++;
    if (dup)
        buf_printf(&b, "_%d", dup);
    snprintf(out, cap, "%s", b.data);
    buf_free(&b);
    return out;
}

static const char *emit_value(KCtx *c, const IrNode *n, const int8_t *map);

/* the variable holding reduction value n (set by the reduce emitters) */
static const char *reduced_var(KCtx *c, const IrNode *n)
{
    int vi = value_index(c, n);
    if (vi < 0 || !c->reduced_val[vi])
        ICE("reduction result used before it is computed");
    return c->reduced_val[vi];
}

static Inst *new_inst(KCtx *c, const IrNode *n, const int8_t *map)
{
    if (c->ninst >= MAX_INST)
        ICE("kernel too large");
    Inst *in = &c->inst[c->ninst];
    in->node = n;
    memcpy(in->map, map, IR_MAX_RANK);
    in->depth = c->depth;
    value_name(c, n, c->role[n->id] == 'i' ? "x" : "v", in->name, sizeof in->name);
    c->ninst++;
    return in;
}

/* Emit (once per scope) the value of n at the current point; returns the
 * C expression that holds it, in n's compute type. */
static const char *emit_value(KCtx *c, const IrNode *n, const int8_t *map)
{
    /* constants and scalar params are expressions, not variables: a small
     * ring of buffers, copied by the caller before the next call */
    static char lit[8][160];
    static int litk;
    if (n->op == OP_CONST) {
        Buf b = {0};
        fmt_const(n, &b);
        char *s = lit[litk++ & 7];
        snprintf(s, 160, "%s", b.data);
        buf_free(&b);
        return s;
    }
    if (is_scalar_param(c, n)) {
        char *s = lit[litk++ & 7];
        Buf b = {0};
        buf_puts(&b, "p_");
        put_ident(&b, c->f->params[n->param].name);
        if (n->dtype == DT_BOOL)
            snprintf(s, 160, "(%s != 0)", b.data);
        else
            snprintf(s, 160, "%s", b.data);
        buf_free(&b);
        return s;
    }
    if (op_info[n->op].cls == OPC_REDUCE && c->role[n->id] == 'v')
        return reduced_var(c, n);
    /* memo: the same node at the same map is computed once per scope */
    for (int i = c->ninst - 1; i >= 0; i--)
        if (c->inst[i].node == n && map_eq(n, c->inst[i].map, map))
            return c->inst[i].name;
    if (c->rowcache && c->xc_e == n && map_eq(n, c->xc_emap, map)) {
        /* the last round left this value in the row cache */
        Inst *in = new_inst(c, n, map);
        Buf x = {0};
        xc_ref(c, &x, c->xc_slot, "k");
        line(c, "const %s %s = %s;", ctype(n->dtype), in->name, x.data);
        buf_free(&x);
        return in->name;
    }
    const char *itype = "I";
    if (c->role[n->id] == 'i') {
        /* an input: from a vector already loaded, the row cache, or memory */
        int a = acc_index(c, n, map);
        Buf e = {0}, off = {0};
        int converted = 0; /* the row cache holds values already in the compute type */
        if (c->vec && acc_full(c, &c->acc[a]))
            buf_printf(&e, "va%d%s.v[j]", a, c->sfx ? c->sfx : "");
        else if (c->vec && c->loopbv && acc_loopbv(c, &c->acc[a], c->loopbv))
            buf_printf(&e, "vc%d%s.v[j]", a, c->sfx ? c->sfx : "");
        else if (c->loopvld && acc_cached(c, &c->acc[a]))
            buf_printf(&e, "t%d.v[j]", a);
        else if (c->rowcache && acc_cached(c, &c->acc[a])) {
            xc_ref(c, &e, a, "k");
            converted = !xc_raw(c, a);
        } else if (c->rowvw && acc_rowvec(c, &c->acc[a], c->rowvw)) {
            buf_printf(&e, "vb%d.v[j]", a);
        } else {
            acc_offset(c, &c->acc[a], itype, &off);
            buf_printf(&e, "in%d[%s]", c->inbuf[n->id], off.data);
        }
        Buf conv = {0};
        if (converted)
            buf_puts(&conv, e.data);
        else
            load_conv(&conv, MDT(c, n), e.data);
        Inst *in = new_inst(c, n, map);
        line(c, "const %s %s = %s;", ctype(n->dtype), in->name, conv.data);
        buf_free(&e);
        buf_free(&off);
        buf_free(&conv);
        return in->name;
    }
    if (c->role[n->id] != 'v')
        ICE("operand outside the kernel");
    /* an elementwise value: operands first (each at its own map) */
    const char *ops[3];
    char opbuf[3][160];
    DType adt[3];
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        operand_map(n, k, map, um);
        snprintf(opbuf[k], sizeof opbuf[k], "%s", emit_value(c, n->in[k].node, um));
        ops[k] = opbuf[k];
        adt[k] = n->in[k].node->dtype;
    }
    if (op_info[n->op].cls == OPC_VIEW) {
        /* a view moves no data: it names its operand's value */
        Inst *vin = new_inst(c, n, map);
        snprintf(vin->name, sizeof vin->name, "%s", ops[0]);
        return vin->name;
    }
    Buf e = {0};
    op_expr(n, ops, adt, &e, c->o && c->o->fast_math && c->o->target == TARGET_CUDA,
            c->k->kind == KK_LOOP && c->from_bf16[n->id]);
    Inst *in = new_inst(c, n, map);
    line(c, "const %s %s = %s;", ctype(n->dtype), in->name, e.data);
    buf_free(&e);
    return in->name;
}

/* ------------------------------------------------------------------ */
/* Kernel setup.                                                       */

/* Analyse one kernel: which nodes it computes and which it reads (the
 * bufs order of the stub), every input access reachable from its outputs and
 * reductions, and the collapsed groups of its space.  Everything after this
 * is a pure function of the context, so the kernel text, the stub and the
 * name list always agree. */
static Combine combine_of(const KCtx *c, int atomic_reduce, char *why, size_t whylen);
static void kctx_init(KCtx *c, const IrFunc *f, const Kernel *k, const EmitOptions *o, Buf *out)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->k = k;
    c->o = o;
    c->out = out;
    c->role = calloc((size_t)f->nnodes + 1, 1);
    c->from_bf16 = calloc((size_t)f->nnodes + 1, 1);
    c->inbuf = malloc(sizeof(int) * ((size_t)f->nnodes + 1));
    c->inst = malloc(sizeof(Inst) * MAX_INST);
    c->reduced_val = calloc((size_t)k->nvalues + 1, sizeof(char *));
    if (!c->role || !c->from_bf16 || !c->inbuf || !c->inst || !c->reduced_val)
        fatal_oom();
    for (int i = 0; i < f->nnodes; i++) {
        const IrNode *n = f->nodes[i];
        if (n->op == OP_PARAM)
            c->from_bf16[i] = n->dtype == DT_BF16;
        for (int j = 0; j < n->nin; j++) {
            if (n->in[j].node->id >= i)
                ICE("a node uses one that comes after it");
            c->from_bf16[i] |= c->from_bf16[n->in[j].node->id];
        }
    }
    /* fixed-size tables below (reductions, vector outputs) */
    if (k->noutputs > 64)
        ICE("more than 64 outputs in one kernel");
    int nred = 0;
    for (int i = 0; i < k->nvalues; i++)
        nred += op_info[k->values[i]->op].cls == OPC_REDUCE;
    if (nred > 64)
        ICE("more than 64 reductions in one kernel");
    for (int i = 0; i < f->nnodes; i++)
        c->inbuf[i] = -1;
    int nb = 0;
    for (int i = 0; i < k->ninputs; i++) {
        if (is_scalar_param(c, k->inputs[i]))
            continue;
        c->role[k->inputs[i]->id] = 'i';
        c->inbuf[k->inputs[i]->id] = nb++;
    }
    for (int i = 0; i < k->nvalues; i++)
        if (c->role[k->values[i]->id] != 'i')
            c->role[k->values[i]->id] = 'v';
    c->R = k->space.rank;
    c->red = k->kind == KK_LOOP ? 0 : k->reduce_axes;
    /* accesses: from every output and every reduction's operand */
    for (int i = 0; i < k->noutputs; i++) {
        int8_t m[IR_MAX_RANK];
        out_map(c, k->outputs[i], m);
        collect(c, k->outputs[i], m);
    }
    for (int i = 0; i < k->nvalues; i++) {
        const IrNode *v = k->values[i];
        if (op_info[v->op].cls == OPC_REDUCE) {
            int8_t m[IR_MAX_RANK];
            space_map(c, v->in[0].node, m);
            collect(c, v->in[0].node, m);
        }
    }
    make_groups(c);
    c->atomic = o && o->atomic_reduce && combine_of(c, 1, NULL, 0) == COMBINE_ATOMIC;
}

/* everything kctx_init allocated */
static void kctx_free(KCtx *c)
{
    free(c->role);
    free(c->from_bf16);
    free(c->inbuf);
    free(c->inst);
    free(c->reduced_val);
}

/* the tensor input nodes (bufs order) */
static int ntensor_inputs(const KCtx *c)
{
    int n = 0;
    for (int i = 0; i < c->k->ninputs; i++)
        if (!is_scalar_param(c, c->k->inputs[i]))
            n++;
    return n;
}

/* the j-th tensor input (bufs[j]) */
static const IrNode *tensor_input(const KCtx *c, int j)
{
    for (int i = 0; i < c->k->ninputs; i++)
        if (!is_scalar_param(c, c->k->inputs[i]) && j-- == 0)
            return c->k->inputs[i];
    unreachable();
}

/* scalar params used by the kernel, in param order */
static int uses_param(const KCtx *c, int p)
{
    for (int i = 0; i < c->k->noutputs; i++)
        if (c->k->outputs[i]->op == OP_PARAM && c->k->outputs[i]->param == p)
            return 1; /* a scalar param returned as a result */
    for (int i = 0; i < c->k->nvalues; i++) {
        const IrNode *v = c->k->values[i];
        for (int j = 0; j < v->nin; j++)
            if (v->in[j].node->op == OP_PARAM && v->in[j].node->param == p)
                return 1;
    }
    return 0;
}

/* syms the kernel's sizes mention */
static int uses_sym(const KCtx *c, int s)
{
    for (int d = 0; d < c->R; d++)
        if (c->k->space.dims[d].size < 0 && c->k->space.dims[d].sym == s)
            return 1;
    for (int a = 0; a < c->nacc; a++)
        for (int i = 0; i < c->acc[a].node->shape.rank; i++)
            if (c->acc[a].node->shape.dims[i].size < 0 && c->acc[a].node->shape.dims[i].sym == s)
                return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        for (int d = 0; d < c->k->outputs[i]->shape.rank; d++)
            if (c->k->outputs[i]->shape.dims[d].size < 0 && c->k->outputs[i]->shape.dims[d].sym == s)
                return 1;
    return 0;
}

/* the C type of a scalar param as a kernel argument (emit.h: f16/bf16 as float) */
static const char *param_ctype(DType t)
{
    switch (t) {
    case DT_F64: return "double";
    case DT_I64: return "long long";
    case DT_I32: case DT_BOOL: return "int";
    default: return "float";
    }
}

/* The common kernel parameters: inputs, outputs, scalars, sizes.
 * Tensor inputs come first in k->inputs order without scalar params (the
 * bufs order of emit.h), then outputs; scalar params are passed by value
 * (f16/bf16/f32 as float); only the syms the kernel's shapes mention are
 * passed, as long long, so static dims fold into constants. */
static void common_params(KCtx *c, Buf *b)
{
    int first = 1;
#define SEP() (first ? (void)(first = 0) : buf_puts(b, ", "))
    int nin = ntensor_inputs(c);
    for (int j = 0; j < nin; j++) {
        SEP();
        buf_printf(b, "const %s *__restrict__ in%d", stype(MDT(c, tensor_input(c, j))), j);
    }
    for (int j = 0; j < c->k->noutputs; j++) {
        SEP();
        buf_printf(b, "%s *__restrict__ out%d", stype(MDT(c, c->k->outputs[j])), j);
    }
    for (int p = 0; p < c->f->nparams; p++)
        if (!c->f->params[p].is_tensor && uses_param(c, p)) {
            SEP();
            buf_printf(b, "%s p_", param_ctype(c->f->params[p].dtype));
            put_ident(b, c->f->params[p].name);
        }
    for (int s = 0; s < c->f->nsyms; s++)
        if (uses_sym(c, s)) {
            SEP();
            buf_puts(b, "long long d_");
            put_ident(b, c->f->syms[s]);
        }
#undef SEP
    if (first)
        buf_puts(b, "int fz_unused");
}

/* The same list as call arguments (wrapper -> body) */
static void common_args(KCtx *c, Buf *b)
{
    int first = 1;
#define SEP() (first ? (void)(first = 0) : buf_puts(b, ", "))
    int nin = ntensor_inputs(c);
    for (int j = 0; j < nin; j++) {
        SEP();
        buf_printf(b, "in%d", j);
    }
    for (int j = 0; j < c->k->noutputs; j++) {
        SEP();
        buf_printf(b, "out%d", j);
    }
    for (int p = 0; p < c->f->nparams; p++)
        if (!c->f->params[p].is_tensor && uses_param(c, p)) {
            SEP();
            buf_puts(b, "p_");
            put_ident(b, c->f->params[p].name);
        }
    for (int s = 0; s < c->f->nsyms; s++)
        if (uses_sym(c, s)) {
            SEP();
            buf_puts(b, "d_");
            put_ident(b, c->f->syms[s]);
        }
#undef SEP
    if (first)
        buf_puts(b, "fz_unused");
}

/* Host side: declare locals holding the same arguments, and push their
 * addresses to args[] (in the order of common_params). */
static void host_common_args(KCtx *c, Buf *decl, Buf *args)
{
    /* locals of the exact kernel parameter types: args[] points at them */
    int nin = ntensor_inputs(c);
    int nargs = 0;
    for (int j = 0; j < nin; j++) {
        buf_printf(decl, "    const void *in%d = bufs[%d];\n", j, j);
        buf_printf(args, "%s(void *)&in%d", nargs++ ? ", " : "", j);
    }
    for (int j = 0; j < c->k->noutputs; j++) {
        buf_printf(decl, "    void *out%d = bufs[%d];\n", j, nin + j);
        buf_printf(args, "%s(void *)&out%d", nargs++ ? ", " : "", j);
    }
    for (int p = 0; p < c->f->nparams; p++)
        if (!c->f->params[p].is_tensor && uses_param(c, p)) {
            const char *t = param_ctype(c->f->params[p].dtype);
            buf_printf(decl, "    %s p%d = (%s)scalars[%d];\n", t, p, t, p);
            buf_printf(args, "%s(void *)&p%d", nargs++ ? ", " : "", p);
        }
    for (int s = 0; s < c->f->nsyms; s++)
        if (uses_sym(c, s)) {
            buf_printf(decl, "    long long d%d = (long long)dims[%d];\n", s, s);
            buf_printf(args, "%s(void *)&d%d", nargs++ ? ", " : "", s);
        }
    if (!nargs) {
        buf_puts(decl, "    int fz_unused = 0;\n");
        buf_puts(args, "(void *)&fz_unused");
    }
}

/* The comment above each kernel: where its values come from. */
static void kernel_comment(KCtx *c)
{
    const Kernel *k = c->k;
    static const char *const kinds[] = {"loop", "reduce", "row"};
    static const char *const lays[] = {"", " (to a scalar)", " (rows)", " (columns)", " (middle axes)"};
    Buf b = {0};
    if (k->space.rank == 0)
        buf_puts(&b, "one element");
    else
        ir_shape_str(c->f, &k->space, &b);
    line(c, "/* %s: %s kernel%s over %s, fn %s", k->name, kinds[k->kind], lays[k->layout], b.data, c->f->name);
    buf_free(&b);
    for (int i = 0; i < k->nvalues; i++) {
        const IrNode *v = k->values[i];
        if (v->op == OP_CONST)
            continue;
        int ln = 0, col = 0;
        const char *path = "?";
        if (v->loc.file >= 0) {
            diag_line_col(v->loc.file, v->loc.begin, &ln, &col);
            path = diag_file_path(v->loc.file);
            const char *sl = strrchr(path, '/');
            if (sl)
                path = sl + 1;
        }
        Buf t = {0};
        ir_type_str(c->f, v->dtype, &v->shape, &t);
        char opn[32];
        snprintf(opn, sizeof opn, "%s", op_info[v->op].name);
        for (char *q = opn; *q; q++)
            if (*q >= 'A' && *q <= 'Z')
                *q = (char)(*q - 'A' + 'a');
        line(c, " *   %%%d %s = %s : %s   (%s:%d)", v->id, v->name ? v->name : "_", opn, t.data, path, ln);
        buf_free(&t);
    }
    for (int i = 0; i < k->ninputs; i++) {
        const IrNode *v = k->inputs[i];
        if (is_scalar_param(c, v))
            continue;
        line(c, " *   reads %%%d %s%s", v->id, v->name ? v->name : "(intermediate)",
             v->op == OP_PARAM ? " (param)" : "");
    }
    for (int i = 0; i < k->noutputs; i++) {
        const IrNode *v = k->outputs[i];
        int r = k->out_result ? k->out_result[i] : -1;
        if (r >= 0)
            line(c, " *   writes %%%d as result %s", v->id, c->f->results[r].name);
        else
            line(c, " *   writes %%%d (intermediate)", v->id);
    }
    line(c, " */");
}

/* emit the store of output i at the current point */
static void emit_store(KCtx *c, int i, const char *itype)
{
    const IrNode *n = c->k->outputs[i];
    int8_t m[IR_MAX_RANK];
    out_map(c, n, m);
    const char *v = emit_value(c, n, m);
    Buf s = {0}, off = {0};
    store_conv(&s, MDT(c, n), v);
    Access a = {n, {0}};
    memcpy(a.map, m, IR_MAX_RANK);
    if ((c->vec || c->vecstore) && acc_full(c, &a)) {
        line(c, "vo%d%s.v[j] = %s;", i, c->sfx ? c->sfx : "", s.data);
    } else {
        acc_offset(c, &a, itype, &off);
        line(c, "out%d[%s] = %s;", i, off.data, s.data);
    }
    buf_free(&s);
    buf_free(&off);
}


/* ------------------------------------------------------------------ */
/* Variants: the __global__ functions of one kernel, in K_INDEX order. */

typedef enum { VK_LOOP_S, VK_LOOP_V, VK_LOOP_W, VK_ROW_C, VK_ROW_L, VK_SCALAR, VK_COLS } VariantKind;

typedef struct Variant {
    VariantKind kind;
    int i64;  /* int64 indices */
    int tpr;  /* row kernels: threads per row */
    int cap;  /* cached row kernels: elements per thread */
    int bs;   /* threads per block */
    int vw;   /* cached row kernels: elements per vector access */
    int sh;   /* cached row kernels: windowed (SH), rows at any element offset */
    int cl;   /* cached row kernels: blocks per row, one thread block cluster (1: none) */
    int sm;   /* cached row kernels: the row in dynamic shared memory (cap 0: sized at launch) */
    char name[200];
} Variant;

/* The windowed looped row kernels (_blockw, _blockw512, _blockw_i64): the
 * only variants that take wrev, after the others' arguments */
static int is_wloop(const Variant *v) { return v->kind == VK_ROW_L && v->sh; }


/* Rough SASS instructions an element of op costs in f32 (CUDA's accurate
 * math library, fz_fdiv's full-range division): what sets how much
 * arithmetic a loop kernel does per byte it moves (loop_light). */
static int op_weight(OpKind op)
{
    switch (op) {
    case OP_PARAM: case OP_CONST: case OP_UNSQUEEZE:
        return 0;
    case OP_DIV: case OP_RECIP: case OP_SQRT: case OP_RSQRT:
        return 8;
    case OP_EXP: case OP_EXP2:
        return 10;
    case OP_LOG: case OP_LOG2:
        return 12;
    case OP_LOG1P: case OP_EXPM1: case OP_TANH: case OP_CBRT: case OP_MOD:
        return 15;
    case OP_SIGMOID: case OP_SILU:
        return 16;
    case OP_ERF:
        return 18;
    case OP_SIN: case OP_COS: case OP_TAN: case OP_GELU: case OP_GELU_TANH:
        return 22;
    case OP_ATAN2:
        return 30;
    case OP_POW:
        return 40;
    default:
        return 1;
    }
}

/* A light loop kernel does little arithmetic per byte it moves: at most
 * 2.5 weights (op_weight) a byte of its full accesses and outputs.  Its
 * launch gives each thread one vector, not two; the heavier ones keep two
 * in flight.  Measured on the H200 (docs/benchmarks.md, sixteenth
 * session), one vector against two: bias_relu f32 253.4 against 256.1
 * us, exp f32 255.0 against 257.6, tanh 256.6 against 257.6, but gelu f32
 * (2.75 a byte) 265.1 against 257.2, x * sigmoid(x) in bf16 (4.25) 157.2
 * against 147.4 and chain12 (7.4) 690 against 600. */
static int loop_light(const KCtx *c)
{
    int w = 0, bytes = 0;
    for (int i = 0; i < c->k->nvalues; i++)
        w += op_weight(c->k->values[i]->op);
    for (int a = 0; a < c->nacc; a++)
        if (acc_full(c, &c->acc[a]))
            bytes += dtype_size(MDT(c, c->acc[a].node));
    for (int i = 0; i < c->k->noutputs; i++)
        bytes += dtype_size(MDT(c, c->k->outputs[i]));
    return 2 * w <= 5 * bytes;
}

/* Vector width of the loop kernel: 16 bytes of the widest full access. */
static int loop_vec_width(const KCtx *c)
{
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    for (int i = 0; i < c->k->noutputs; i++) {
        int8_t m[IR_MAX_RANK];
        Access a = {c->k->outputs[i], {0}};
        out_map(c, c->k->outputs[i], m);
        memcpy(a.map, m, IR_MAX_RANK);
        if (acc_full(c, &a) && dtype_size(MDT(c, a.node)) > maxsz)
            maxsz = dtype_size(MDT(c, a.node));
    }
    if (maxsz == 0 || c->ng == 0)
        return 1;
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* Column scheme: reduced groups form one run with kept groups after it
 * (RL_COLS, RL_MIDDLE): threads own the inner kept columns. */
static int cols_split(const KCtx *c, int *o_end, int *r_end)
{
    int g = 0;
    while (g < c->ng && !c->gred[g])
        g++;
    *o_end = g;
    if (g == c->ng)
        return 0;
    while (g < c->ng && c->gred[g])
        g++;
    *r_end = g;
    if (g == c->ng)
        return 0; /* nothing kept inside: rows */
    for (int h = g; h < c->ng; h++)
        if (c->gred[h])
            return 0;
    return 1;
}

/* reduce kernels that take the column scheme */
static int is_cols_scheme(const KCtx *c)
{
    int a, b;
    return c->k->kind == KK_REDUCE && c->k->layout != RL_SCALAR && cols_split(c, &a, &b);
}

/* Vector width of the on-chip row variant: one reduced group, innermost,
 * so the row is contiguous in every cached access and element output. */
static int out_is_elem(KCtx *c, int i);
static int row_vec_width(KCtx *c)
{
    int nr = 0;
    for (int g = 0; g < c->ng; g++)
        nr += c->gred[g];
    if (nr != 1 || !c->gred[c->ng - 1])
        return 1;
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    if (!maxsz)
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (out_is_elem(c, i) && dtype_size(MDT(c, c->k->outputs[i])) > maxsz)
            maxsz = dtype_size(MDT(c, c->k->outputs[i]));
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* row kernels, and every non-scalar reduction not taken by the column scheme */
static int is_row_scheme(const Kernel *k)
{
    return k->kind == KK_ROW || (k->kind == KK_REDUCE && k->layout != RL_SCALAR);
}

/* How kernel c combines its blocks' reduction partials (emit.h).  Only the
 * full reduction and the split column scheme have partials from several
 * blocks; a kernel takes the atomic combine only when every one of its
 * reductions has a one-word state merged by add, max or min (a kernel
 * mixing, say, mean and var keeps the ordered combine for both).  why gets
 * the reason when the flag was given but the combine stays ordered. */
static Combine combine_of(const KCtx *c, int atomic_reduce, char *why, size_t whylen)
{
    const Kernel *k = c->k;
    int nred = 0;
    for (int i = 0; i < k->nvalues; i++)
        nred += op_info[k->values[i]->op].cls == OPC_REDUCE;
    if (nred == 0)
        return COMBINE_NONE;
    if (why && whylen)
        why[0] = 0;
    if (!atomic_reduce)
        return COMBINE_ORDERED;
    if (k->kind != KK_REDUCE || (k->layout != RL_SCALAR && !is_cols_scheme(c))) {
        if (why)
            snprintf(why, whylen, "each result is reduced within one block: no partials to combine");
        return COMBINE_ORDERED;
    }
    for (int i = 0; i < k->nvalues; i++) {
        const IrNode *v = k->values[i];
        const char *r = NULL;
        switch (v->op) {
        case OP_SUM: case OP_MEAN: case OP_RMAX: case OP_RMIN: continue;
        case OP_PROD: r = "has no atomic multiply"; break;
        case OP_ANY: r = "combines by logical or, not add, max or min"; break;
        case OP_ALL: r = "combines by logical and, not add, max or min"; break;
        case OP_ARGMAX: case OP_ARGMIN: r = "has a two-word state, value and index"; break;
        case OP_VAR: case OP_STD: r = "has a three-word Welford state"; break;
        case OP_LOGSUMEXP: r = "has a two-word state, max and sum"; break;
        default: continue; /* not a reduction */
        }
        if (why)
            snprintf(why, whylen, "%s %%%d %s", op_info[v->op].src, v->id, r);
        return COMBINE_ORDERED;
    }
    return COMBINE_ATOMIC;
}

Combine emit_cuda_combine(const IrFunc *f, const Kernel *k, int atomic_reduce, char *why, size_t whylen)
{
    KCtx c;
    Buf dummy = {0};
    EmitOptions o = {0};
    o.atomic_reduce = atomic_reduce;
    kctx_init(&c, f, k, &o, &dummy);
    Combine r = combine_of(&c, atomic_reduce, why, whylen);
    kctx_free(&c);
    buf_free(&dummy);
    return r;
}

/* static row length of a row kernel, or -1 */
static int64_t static_row_len(const KCtx *c)
{
    int64_t r = 1;
    for (int d = 0; d < c->R; d++)
        if ((c->red >> d) & 1) {
            if (c->k->space.dims[d].size < 0)
                return -1;
            r *= c->k->space.dims[d].size;
        }
    return r;
}

/* append a variant; its __global__ is <kernel name><suffix> */
static void add_variant(const Kernel *k, Variant *v, int *n, VariantKind kind, int i64, int tpr, int cap,
                        int bs, const char *suffix)
{
    if (*n >= MAX_VARIANTS)
        ICE("too many kernel variants");
    /* fz_block_reduce reduces over the whole block: a row of more than one
     * warp must have the block to itself (a block of 128 threads holding
     * two rows of 64 computed wrong sums on the H200) */
    if (tpr > 32 && bs != tpr)
        ICE("a row variant of more than one warp a row shares its block");
    Variant *x = &v[(*n)++];
    x->kind = kind;
    x->i64 = i64;
    x->tpr = tpr;
    x->cap = cap;
    x->bs = bs;
    x->vw = 1;
    x->sh = 0;
    x->cl = 1;
    x->sm = 0;
    snprintf(x->name, sizeof x->name, "%s%s", k->name, suffix);
}

/* The on-chip variants past 16384 elements of vw-element vectors, i (0-3):
 * 1024 threads of 32 (rows to 32768, read once; the looped kernel read
 * rows of 32000 three times, at 46% of copy: softmax, H200); then, over
 * the blocks of a thread block cluster (sm_90 on), the _r16384 body on 4
 * or 8 blocks and the _r32768 body on 8, the partial reductions combined
 * through the cluster's shared memory (fz_cluster_reduce).  Two blocks of
 * 512 a multiprocessor beat one of 1024 (H200, 2^26 f32, softmax at
 * 65536 / 131072: 190 / 204 us on 2 / 4 blocks of 1024, 170 / 173 on 4 / 8
 * of 512; torch eager 271 / 267). */
static const int long_tpr[4] = {1024, 512, 512, 1024}, long_cl[4] = {1, 4, 8, 8};
static void add_long_row(const Kernel *k, Variant *v, int *n, int i64, int vw, int i)
{
    static const char *const nm[4] = {"_r32768", "_r65536c", "_r131072c", "_r262144c"};
    add_variant(k, v, n, VK_ROW_C, i64, long_tpr[i], 32, long_tpr[i], nm[i]);
    v[*n - 1].vw = vw;
    v[*n - 1].cl = long_cl[i];
}

/* The add_long_row variant that holds a static row of len elements (at
 * most FUSE_ROW_CLUSTER_MAX, the last one's 32 elements a thread). */
static int long_row_for(int64_t len)
{
    int i = 0;
    while (i < 3 && (int64_t)long_tpr[i] * 32 * long_cl[i] < len)
        i++;
    if ((int64_t)long_tpr[i] * 32 * long_cl[i] < len || (int64_t)long_tpr[3] * 32 * long_cl[3] != FUSE_ROW_CLUSTER_MAX)
        ICE("no long-row variant holds the row");
    return i;
}

/* the exactly sized variant of a static row: span elements (the row, plus
 * V - 1 when windowed) over tpr threads, vw a vector */
static void add_static_row(const Kernel *k, Variant *v, int *n, int i64, int tpr, int vw, int64_t span, int sh,
                           const char *suffix)
{
    int cap = (int)((span + tpr - 1) / tpr);
    cap = (cap + vw - 1) / vw * vw;
    if (cap < vw)
        cap = vw;
    /* a warp a row past 512 elements (2-byte ones, fuse_row_threads): a
     * block of its own.  On the H200 (2^26 bf16 elements in rows of 1024,
     * cuda target, off/on/on/off) layernorm took 72.8 / 72.5 us four rows
     * a block of 128 and 68.4 / 68.3 one a block of 32, softmax 69.4 /
     * 69.3 and 68.3 / 68.3; f16 moved under 0.6 us either way.  Not the
     * symbolic variants: there one row a block was within 1% at 1024,
     * slower at 512 to 768 (layernorm 768: 68.3 -> 69.6 us) and much
     * slower for short rows in a long variant (bf16 160: softmax 129.6 ->
     * 150.5, layernorm 111.4 -> 130.9; f32 160: 149.0 -> 172.6), where a
     * block of 32 holds few bytes and a multiprocessor takes at most 32
     * blocks.  Cause of the static gain not isolated. */
    int bs = tpr == 32 && span > 512 ? 32 : tpr < 128 ? 128 : tpr;
    add_variant(k, v, n, VK_ROW_C, i64, tpr, cap, bs, suffix);
    v[*n - 1].vw = vw;
    v[*n - 1].sh = sh;
}

/* Rows past the register-held variants, up to what a block's shared memory
 * holds (the launcher asks the device): a block a row, the row read once
 * into dynamic shared memory, then reduced and written from there.
 * Without it odd rows past 16384 (a vocabulary of 50257) and rows where no
 * cluster launch is possible (before sm_90) took the looped kernel, which
 * reads the row from memory once per reduction round and once more to
 * write it.  _rsm: rows of whole aligned vectors; _rsmw: windowed
 * (row_windowable), rows at any element offset.  Blocks of 512 threads
 * where two rows fit a multiprocessor's shared memory (_rsmw512), else of
 * 1024.  On the H200 (fusec symbolic, 2^26 f32
 * elements, rows of 16387 / 25001 / 40001 / 50257, us): softmax looped
 * 316 / 348 / 379 / 430, 1024 threads 353 / 326 / 286 / 293, 512 threads
 * 244 / 236 / 351 / 366; layernorm 329 / 355 / 382 / 439, 344 / 340 / 294
 * / 312, 247 / 242 / 386 / 408; rmsnorm 255 / 281 / 312 / 348, 261 / 256 /
 * 238 / 248, 211 / 232 / 329 / 350.  2-byte floats are held as stored
 * (xc_raw), converted where read: held as f32 they were slower than the
 * looped kernel in bf16 (softmax 224 / 237 / 258 / 252 against 158 / 217 /
 * 237 / 254); as stored, with whole vectors unchecked (row_split_loop),
 * 189 / 199 / 164 / 158.  ncu, before that: the kernel was busy issuing rather than
 * waiting on memory (bf16 at 50257: SM throughput 70%, DRAM 22%; f32 at
 * 16387: DRAM 44%, 11.6 cycles an issued instruction, 3.7 of them on long
 * scoreboard) with a branch around each shared-memory load (the range
 * checks); without them on whole vectors f32 softmax went from 246 / 238 /
 * 288 / 295 to 190 / 215 / 266 / 261 us.  The windowed looped kernel with
 * int indices now comes first where its rows in flight fit L2
 * (host_row_wloop_fit), which left these to longer rows or smaller L2s. */
enum {
    /* room left for the kernel's static shared memory (fz_block_reduce's
     * warp partials, 32 states a reduction) */
    SMEM_ROW_STATIC = 4096,
    /* the launcher asks the device only when the row could fit the
     * largest opt-in limit (sm_90: 227 KiB) */
    SMEM_ROW_MAX_OPTIN = 232448
};
static int row_vec_width(KCtx *c);
static int row_windowable(KCtx *c);
/* Bytes a row element takes in memory, over every cached access (as
 * stored) */
static int row_read_bytes(KCtx *c)
{
    int bytes = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a]))
            bytes += dtype_size(MDT(c, c->acc[a].node));
    return bytes;
}

/* Bytes a row element takes in the shared-memory cache, over every cached
 * access (xc_bytes: 2-byte floats as stored, the rest in their compute
 * type); 0 when nothing is cached. */
static int smem_elem_bytes(KCtx *c)
{
    int bytes = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a]))
            bytes += xc_bytes(c, a);
    return bytes;
}

/* The shared bytes of variant v for a row of rlen elements: the kernel's
 * CAP (the row, plus V - 1 when windowed, in whole spans of TPR vectors)
 * times TPR elements of `bytes` each.  The launcher prints the same
 * expression over the call's rlen (emit_launcher). */
static int64_t smem_row_bytes(const Variant *v, int64_t rlen, int bytes)
{
    int64_t span = (int64_t)v->tpr * v->vw;
    return (rlen + v->sh * (v->vw - 1) + span - 1) / span * span * bytes;
}

/* Does a block of v, and its neighbours on the multiprocessor (two of 512,
 * one of 1024), fit `limit` bytes of shared memory with smb bytes each? */
static int smem_fits(const Variant *v, int64_t smb, int64_t limit)
{
    return (1024 / v->bs) * (smb + SMEM_ROW_STATIC) <= limit;
}

static void add_smem_rows(KCtx *c, Variant *v, int *n, int i64, int64_t rl)
{
    int vw = row_vec_width(c);
    int bytes = smem_elem_bytes(c);
    if (vw <= 1 || bytes == 0)
        return;
    static const int tpr[2] = {512, 1024};
    static const char *const nm[2][2] = {{"", "_rsm"}, {"_rsmw512", "_rsmw"}};
    for (int w = 0; w < 2; w++) {
        /* aligned: rows past the registers' 32768 (_r32768); windowed: any
         * length, and pointers off the vector grid */
        if (w == 0 ? !(rl < 0 || (rl % vw == 0 && rl > (int64_t)long_tpr[0] * 32)) : !row_windowable(c))
            continue;
        /* aligned rows short enough for two a multiprocessor (26624 f32)
         * are held in registers (_r32768): no _rsm512 */
        for (int t = w == 0; t < 2; t++) {
            add_variant(c->k, v, n, VK_ROW_C, i64, tpr[t], 0, tpr[t], nm[w][t]);
            v[*n - 1].vw = vw;
            v[*n - 1].sm = 1;
            v[*n - 1].sh = w;
            /* a static row's bytes are known: only a block size some
             * device can give them */
            if (rl >= 0 && !smem_fits(&v[*n - 1], smem_row_bytes(&v[*n - 1], rl, bytes), SMEM_ROW_MAX_OPTIN))
                (*n)--;
        }
    }
}

static int need_decompose(const KCtx *c);
static int cols_vec_width(KCtx *c);
static int red_state_bytes(const IrNode *n);

/* Vector width of a full reduction: flat indexing, no element outputs. */
static int scalar_vec_width(KCtx *c)
{
    if (need_decompose(c))
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (out_is_elem(c, i))
            return 1;
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    if (!maxsz)
        return 1;
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* Do the row scheme's indices need divisions (several kept or reduced groups)? */
static int row_needs_div(const KCtx *c)
{
    int nk = 0, nr = 0;
    for (int g = 0; g < c->ng; g++) {
        if (c->gred[g])
            nr++;
        else
            nk++;
    }
    return nk > 1 || nr > 1;
}

/* Does the loop kernel need the wrapping vector body: broadcast accesses
 * (group indices) and an innermost group that is not known to hold whole
 * vectors?  (bias_relu with rows of 333 on the H200: one element per
 * thread and step without it, 61% of copy; 96% with it.) */
static int loop_needs_wrap(const KCtx *c, int V)
{
    if (V <= 1 || c->ng <= 1 || !need_decompose(c))
        return 0;
    int64_t n = 1;
    for (int d = c->gfirst[c->ng - 1]; d <= c->glast[c->ng - 1]; d++) {
        if (c->k->space.dims[d].size < 0)
            return 1;
        n *= c->k->space.dims[d].size;
    }
    return n % V != 0 && n >= V;
}

/* Row kernels: does the kernel read a vector per column (acc_per_column)? */
static int reads_per_column(const KCtx *c)
{
    for (int a = 0; a < c->nacc; a++)
        if (acc_per_column(c, &c->acc[a]))
            return 1;
    return 0;
}

/* Rows whose length or address rules out whole aligned vectors can still
 * be read a vector at a time (the windowed variants, SH): a row's vectors
 * start at its element offset rounded down to V, so the first and the last
 * may be partial and go an element at a time.  That needs one shift for
 * every row-shaped access: each cached input and each element output the
 * last pass stores as vectors sits at the same offset in its array (the
 * offsets, with the group indices named, read the same), and the launcher
 * checks that their pointers are congruent modulo the vector. */
static int depends_on_red(KCtx *c, const IrNode *n);

/* The row-shaped accesses of a cached row kernel: i counts the collected
 * accesses, then the outputs.  1 for a cached input or an element output
 * the output pass stores as vectors, with *x its access and ptr its
 * pointer's name (in<b> or out<i>); 0 for the others. */
static int row_shaped(KCtx *c, int i, Access *x, char *ptr, size_t ptrlen)
{
    if (i < c->nacc) {
        if (!acc_cached(c, &c->acc[i]))
            return 0;
        *x = c->acc[i];
        snprintf(ptr, ptrlen, "in%d", c->inbuf[x->node->id]);
        return 1;
    }
    i -= c->nacc;
    if (!out_is_elem(c, i) || !depends_on_red(c, c->k->outputs[i]))
        return 0;
    x->node = c->k->outputs[i];
    out_map(c, x->node, x->map);
    snprintf(ptr, ptrlen, "out%d", i);
    return 1;
}

/* The bytes a row kernel reads and writes for each element of a row: the
 * row-shaped inputs it keeps on chip and the row-shaped outputs (at least 1). */
static int row_elem_bytes(KCtx *c)
{
    int n = 0;
    for (int a = 0; a < c->nacc + c->k->noutputs; a++) {
        Access x;
        char p[32];
        if (row_shaped(c, a, &x, p, sizeof p))
            n += dtype_size(MDT(c, x.node));
    }
    return n > 0 ? n : 1;
}

static int row_windowable(KCtx *c)
{
    if (row_vec_width(c) <= 1)
        return 0;
    char names[IR_MAX_RANK][16];
    const char *saved[IR_MAX_RANK];
    const char *saved_flat = c->flat;
    c->flat = NULL;
    for (int g = 0; g < c->ng; g++) {
        snprintf(names[g], sizeof names[g], "G%d", g);
        saved[g] = c->gi[g];
        c->gi[g] = names[g];
    }
    Buf first = {0};
    int ok = 1, any = 0;
    for (int a = 0; ok && a < c->nacc + c->k->noutputs; a++) {
        Access x;
        char ptr[32];
        if (!row_shaped(c, a, &x, ptr, sizeof ptr))
            continue;
        Buf off = {0};
        acc_offset(c, &x, "I", &off);
        if (!any)
            buf_puts(&first, off.data);
        else
            ok = strcmp(first.data, off.data) == 0;
        any = 1;
        buf_free(&off);
    }
    buf_free(&first);
    for (int g = 0; g < c->ng; g++)
        c->gi[g] = saved[g];
    c->flat = saved_flat;
    return ok && any;
}

/* Where the windowed body beat the element-wise one (V = 1) on the H200,
 * fusec's symbolic build over 2^26 f32 elements, both in one run:
 * - rows over 1024 (the element-wise body stops at 1024; such rows went to
 *   the looped kernel, which reads them two or three times): softmax at
 *   3001, 5001 and 12001 took 173.2, 180.5, 299.0 us looped, 163.6, 171.9,
 *   227.6 windowed; layernorm 171.5, 187.5, 302.5 -> 166.6, 166.7, 231.7;
 *   rmsnorm 167.7, 182.5, 240.4 -> 145.8, 143.4, 186.3;
 * - rows of 513 to 1024 in kernels that read no vector per column: softmax
 *   at 999, 183.0 -> 152.5 us.  With one the element-wise body stays:
 *   layernorm 138.1 against 153.3, rmsnorm 133.5 against 135.7;
 * - not rows up to 512, where the element-wise shapes won in all three:
 *   softmax at 77 and 333 159.7 and 157.9 against 175.4 and 161.5,
 *   layernorm 165.3 and 136.0 against 174.5 and 163.3, rmsnorm 149.1 and
 *   134.4 against 154.9 and 138.5.
 * The causes of the split were not isolated (in f32 softmax, layernorm and
 * rmsnorm the windowed variants took 8 to 19 more registers than the
 * aligned ones of the same shape, ptxas sm_90; layernorm reads g and b an
 * element at a time in them). */
static int row_window_pays(const KCtx *c, int64_t len)
{
    return len > 1024 || (len > 512 && !reads_per_column(c));
}

/* Few variants keep the NVRTC compile short: int64 indices are used
 * wherever they cost no division (a flat index or one group per segment);
 * an int32 variant exists only where magic-number division pays. */
static int plan_variants(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
    if (k->kind == KK_LOOP) {
        int dec = need_decompose(c);
        if (loop_vec_width(c) > 1)
            add_variant(k, v, &n, VK_LOOP_V, !dec, 0, 0, 256, "_v");
        if (loop_needs_wrap(c, loop_vec_width(c)))
            add_variant(k, v, &n, VK_LOOP_W, 0, 0, 0, 256, "_vw");
        add_variant(k, v, &n, VK_LOOP_S, !dec, 0, 0, 256, "_s");
        if (dec)
            add_variant(k, v, &n, VK_LOOP_S, 1, 0, 0, 256, "_s_i64");
    } else if (is_cols_scheme(c)) {
        int vw = cols_vec_width(c);
        if (vw > 1) {
            add_variant(k, v, &n, VK_COLS, 1, 0, 0, 256, "_cols_v");
            v[n - 1].vw = vw;
        }
        add_variant(k, v, &n, VK_COLS, 1, 0, 0, 256, "_cols");
    } else if (!is_row_scheme(k)) {
        if (need_decompose(c)) {
            add_variant(k, v, &n, VK_SCALAR, 0, 0, 0, 512, "");
            add_variant(k, v, &n, VK_SCALAR, 1, 0, 0, 512, "_i64");
        } else {
            int vw = scalar_vec_width(c);
            if (vw > 1) {
                add_variant(k, v, &n, VK_SCALAR, 1, 0, 0, 512, "_v");
                v[n - 1].vw = vw;
            }
            add_variant(k, v, &n, VK_SCALAR, 1, 0, 0, 512, "");
        }
    } else {
        int64_t rl = static_row_len(c);
        int i64 = !row_needs_div(c);
        int cache = 0;
        for (int a = 0; a < c->nacc; a++)
            cache |= acc_cached(c, &c->acc[a]);
        if (k->kind == KK_ROW && cache && rl >= 0 && rl <= FUSE_ROW_ONCHIP_MAX) {
            /* static row: one exactly sized on-chip variant.  A length
             * that is not a whole number of vectors takes the windowed
             * body where that pays (row_window_pays; its span grows by up
             * to V - 1 elements), then the element-wise one for pointers
             * that do not share the shift; elsewhere the element-wise one
             * alone */
            int vw = row_vec_width(c);
            int tpr = fuse_row_threads(rl, 16 / vw);
            int win = rl % vw != 0 && row_window_pays(c, rl) && row_windowable(c);
            add_static_row(k, v, &n, i64, tpr, rl % vw == 0 || win ? vw : 1, win ? rl + vw - 1 : rl, win, "_row");
            if (win)
                add_static_row(k, v, &n, i64, tpr, 1, rl, 0, "_row1");
        } else if (k->kind == KK_ROW && cache && rl > FUSE_ROW_ONCHIP_MAX && rl <= FUSE_ROW_CLUSTER_MAX) {
            /* longer static rows of whole vectors: the one variant of the
             * symbolic rows that holds them (add_long_row), picked at
             * launch when the pointers are aligned (and, past 32768, the
             * kernel has its cluster width) */
            int vw = row_vec_width(c);
            if (vw > 1 && rl % vw == 0)
                add_long_row(k, v, &n, i64, vw, long_row_for(rl));
        } else if (k->kind == KK_ROW && cache && rl < 0) {
            /* symbolic row: on chip up to 1024, 2048, 4096, 8192, 16384 or
             * 32768 elements (as the static rows), picked at launch.  Rows
             * whose length or address rules out aligned 16-byte accesses
             * take a windowed or an element-wise twin: without one an odd
             * row length fell through to the looped kernel, which reads
             * the row two or three times (333 elements on the H200:
             * softmax 29% -> 34% of copy, layernorm 28% -> 64%, rmsnorm
             * 40% -> 81% with the element-wise twin). */
            int vw = row_vec_width(c);
            if (vw > 1) {
                /* short rows: 8 lanes per row, four rows per warp, so a
                 * reduction costs three shuffles instead of five and each
                 * lane loads up to four vectors, not one (96 elements on
                 * the H200: softmax 45% -> 95% of copy, layernorm 53% ->
                 * 94%, rmsnorm 67% -> 95%) */
                add_variant(k, v, &n, VK_ROW_C, i64, 8, 16, 128, "_r128");
                v[n - 1].vw = vw;
            }
            /* a warp per row up to 512 (four rows a block); past it as the
             * static rows (fuse_row_threads): 128 threads of 8 elements,
             * or for 2-byte elements the warp of 32 */
            int t1k = fuse_row_threads(1024, 16 / vw);
            add_variant(k, v, &n, VK_ROW_C, i64, 32, 16, 128, "_r512");
            v[n - 1].vw = vw;
            add_variant(k, v, &n, VK_ROW_C, i64, t1k, 1024 / t1k, 128, "_r1024");
            v[n - 1].vw = vw;
            /* rows that are not whole aligned vectors (odd lengths, offset
             * pointers): windowed where that pays (row_window_pays), with
             * the aligned shapes; a row fits when its length plus V - 1
             * does */
            int win = vw > 1 && row_windowable(c);
            if (vw > 1) {
                /* odd short rows, loaded an element at a time: 16 lanes of
                 * 8 elements up to 128 (eight rows a block), a block of 64
                 * threads of 8 up to 512, then as _r1024.  On the H200,
                 * softmax over rows of 77 took 196.5 us with 8 lanes of 16
                 * and 162.3 with 16 of 8; rows of 333 202.2 us with a warp
                 * of 16 a lane and 162.8 with 64 threads of 8 (a warp of
                 * 32 a lane, before: 72 registers, 33% of copy).  Kernels
                 * that also read a vector per column (layernorm's g and b,
                 * rmsnorm's w) keep the warp of 16 up to 512: at 333 it
                 * took 135.4 and 134.2 us against 147.8 and 140.2 with 64
                 * threads of 8 (128 threads of 4: 170.8 and 150.1; softmax
                 * 202.9, 157.1, 188.8), cause not isolated */
                add_variant(k, v, &n, VK_ROW_C, i64, 16, 8, 128, "_r128s");
                if (reads_per_column(c))
                    add_variant(k, v, &n, VK_ROW_C, i64, 32, 16, 128, "_r512s");
                else
                    add_variant(k, v, &n, VK_ROW_C, i64, 64, 8, 64, "_r512s");
                if (win && row_window_pays(c, 1024)) {
                    add_variant(k, v, &n, VK_ROW_C, i64, t1k, 1024 / t1k, 128, "_r1024w");
                    v[n - 1].vw = vw;
                    v[n - 1].sh = 1;
                }
                add_variant(k, v, &n, VK_ROW_C, i64, t1k, 1024 / t1k, 128, "_r1024s");
            }
            /* a block of 128 threads per row, 16 elements each, up to
             * 2048 (static rows of 1025 to 4096 take 128 threads too): in
             * the block of 256 a row of 1536 gave half the threads two
             * vectors and half one */
            add_variant(k, v, &n, VK_ROW_C, i64, 128, 16, 128, "_r2048");
            v[n - 1].vw = vw;
            /* a block of 256 threads per row, 16 or 32 elements each */
            add_variant(k, v, &n, VK_ROW_C, i64, 256, 16, 256, "_r4096");
            v[n - 1].vw = vw;
            add_variant(k, v, &n, VK_ROW_C, i64, 256, 32, 256, "_r8192");
            v[n - 1].vw = vw;
            if (vw > 1) {
                /* 512 threads: rows of 8193 to 16384 (vocabularies, wide
                 * layers) read once instead of two or three times (12000
                 * and 16384 on the H200: 45-61% -> 86-95% of copy) */
                add_variant(k, v, &n, VK_ROW_C, i64, 512, 32, 512, "_r16384");
                v[n - 1].vw = vw;
                /* rows of 16385 to 262144 (add_long_row) */
                for (int i = 0; i < 4; i++)
                    add_long_row(k, v, &n, i64, vw, i);
            }
            /* no element-wise twins past 1024: on the H200 an _r8192s ran
             * odd rows of 3001 at 29% (softmax) and 55% (layernorm) of copy,
             * below the looped kernel's 73% and 74% (rmsnorm: 84% against
             * 76%); _r4096s spilled.  The windowed ones read vectors up
             * to 16384; an _r32768w spilled (1024 threads leave 64
             * registers for 32 elements and their bounds) */
            if (win) {
                static const int wt[4] = {128, 256, 256, 512}, wc[4] = {16, 16, 32, 32};
                static const char *const wn[4] = {"_r2048w", "_r4096w", "_r8192w", "_r16384w"};
                for (int i = 0; i < 4; i++) {
                    add_variant(k, v, &n, VK_ROW_C, i64, wt[i], wc[i], wt[i], wn[i]);
                    v[n - 1].vw = vw;
                    v[n - 1].sh = 1;
                }
            }
        } else if (k->kind == KK_REDUCE) {
            add_variant(k, v, &n, VK_ROW_L, i64, 32, 0, 128, "_warp");
        }
        /* rows at any offset past the on-chip ones (and aligned ones whose
         * pointers are not): the looped body with windowed 16-byte
         * accesses, a block a row (emit_launcher: blocks of 1024 or 512 by
         * what a multiprocessor holds, before or after the shared-memory
         * variants by whether the rows in flight fit L2).  int indices for
         * the tensors under 2^31 elements: 64-bit ones took f32 softmax's
         * from 32 registers to 39 (sm_90), a block of 1024 a
         * multiprocessor instead of two */
        int lvw = row_vec_width(c);
        int wloop = k->kind == KK_ROW && cache && lvw > 1 && row_windowable(c);
        if (wloop) {
            add_variant(k, v, &n, VK_ROW_L, 0, 1024, 0, 1024, "_blockw");
            v[n - 1].vw = lvw;
            v[n - 1].sh = 1;
            add_variant(k, v, &n, VK_ROW_L, 0, 512, 0, 512, "_blockw512");
            v[n - 1].vw = lvw;
            v[n - 1].sh = 1;
        }
        if (k->kind == KK_ROW && cache && (rl < 0 || rl > FUSE_ROW_ONCHIP_MAX))
            add_smem_rows(c, v, &n, i64, rl);
        /* rows past the on-chip ones, when they are whole aligned vectors
         * and few (the launcher): the looped body with 16-byte accesses.
         * Element loads (_block) keep few bytes in flight: on the H200,
         * softmax over rows of 65536 spent 49 of 53 cycles an instruction
         * waiting on memory, at 75% of DRAM bandwidth (ncu) */
        if (cache && lvw > 1 && (rl < 0 || rl % lvw == 0)) {
            add_variant(k, v, &n, VK_ROW_L, 1, 256, 0, 256, "_blockv");
            v[n - 1].vw = lvw;
        }
        /* the windowed looped body for tensors of 2^31 elements or more */
        if (wloop) {
            add_variant(k, v, &n, VK_ROW_L, 1, 1024, 0, 1024, "_blockw_i64");
            v[n - 1].vw = lvw;
            v[n - 1].sh = 1;
        }
        add_variant(k, v, &n, VK_ROW_L, 1, 256, 0, 256, "_block");
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Shared pieces of kernel bodies.                                     */

/* const I gs<g>: the size of each collapsed group, in the index type */
static void emit_group_sizes(KCtx *c)
{
    for (int g = 0; g < c->ng; g++) {
        Buf b = {0};
        span_dev(c, c->gfirst[g], c->glast[g], "I", &b);
        line(c, "const I gs%d = %s;", g, b.data);
        buf_free(&b);
    }
}

/* product of the sizes gs<g> of the groups with gred == red (all: red < 0);
 * `one` when there is none.  The names are the same in kernels and stubs. */
static void product_of(const KCtx *c, int red, const char *one, Buf *b)
{
    int any = 0;
    for (int g = 0; g < c->ng; g++)
        if (red < 0 || c->gred[g] == red) {
            buf_printf(b, "%sgs%d", any ? " * " : "", g);
            any = 1;
        }
    if (!any)
        buf_puts(b, one);
}

/* in a kernel: index type I */
static void groups_product(const KCtx *c, int red, Buf *b) { product_of(c, red, "(I)1", b); }

/* Declare gi<g> for the groups with gred == red (all: red < 0) from the
 * flat index `flat` over them (outermost first). */
static void decompose_list(KCtx *c, const char *flat, const int *gl, int n);
static void decompose(KCtx *c, const char *flat, int red)
{
    int gl[IR_MAX_RANK] = {0}, n = 0;
    for (int g = 0; g < c->ng; g++)
        if (red < 0 || c->gred[g] == red)
            gl[n++] = g;
    decompose_list(c, flat, gl, n);
}

/* the same for an explicit list of groups (outermost first) */
static void decompose_list(KCtx *c, const char *flat, const int *gl, int n)
{
    const char *sx = c->sfx ? c->sfx : "";
    for (int i = 0; i < n; i++)
        snprintf(c->giname[gl[i]], sizeof c->giname[gl[i]], "gi%d%s", gl[i], sx);
    if (n == 0)
        return;
    if (n == 1) {
        line(c, "const I %s = %s;", c->giname[gl[0]], flat);
        c->gi[gl[0]] = c->giname[gl[0]];
        return;
    }
    int t = c->tmp++;
    line(c, "I t%d = %s;", t, flat);
    for (int i = n - 1; i >= 1; i--) {
        int g = gl[i];
        line(c, "const I q%d_%d = fz_div<I>(t%d, gs%d, m%d, s%d);", t, g, t, g, g, g);
        line(c, "const I %s = t%d - q%d_%d * gs%d;", c->giname[g], t, t, g, g);
        line(c, "t%d = q%d_%d;", t, t, g);
        c->gi[g] = c->giname[g];
    }
    line(c, "const I %s = t%d;", c->giname[gl[0]], t);
    c->gi[gl[0]] = c->giname[gl[0]];
}

/* Does some access need group indices (is not addressed by the flat index)? */
static int need_decompose(const KCtx *c)
{
    if (c->ng <= 1)
        return 0;
    for (int a = 0; a < c->nacc; a++)
        if (!acc_full(c, &c->acc[a]))
            return 1;
    for (int i = 0; i < c->k->noutputs; i++) {
        Access a = {c->k->outputs[i], {0}};
        int8_t m[IR_MAX_RANK];
        out_map(c, c->k->outputs[i], m);
        memcpy(a.map, m, IR_MAX_RANK);
        if (!acc_full(c, &a))
            return 1;
    }
    return 0;
}

/* body signature: common params, magic numbers of every group, extras */
static void body_params(KCtx *c, Buf *b, const char *extra)
{
    common_params(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(b, ", unsigned m%d, unsigned s%d", g, g);
    if (extra)
        buf_puts(b, extra);
}

/* the wrapper's call of the body: the same names as body_params */
static void body_args(KCtx *c, Buf *b, const char *extra)
{
    common_args(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(b, ", m%d, s%d", g, g);
    if (extra)
        buf_puts(b, extra);
}

/* forget how the current point is named (between loops and kernels) */
static void reset_point(KCtx *c)
{
    for (int g = 0; g < IR_MAX_RANK; g++)
        c->gi[g] = NULL;
    c->flat = NULL;
    c->vec = 0;
    c->rowcache = 0;
    c->vecstore = 0;
    c->sfx = NULL;
}

/* ------------------------------------------------------------------ */
/* Loop kernels.                                                       */

/* Vector loop pieces: decompose index `iv` and load every full access as
 * va<a><sfx>; then compute V elements and store (vo<i><sfx>). */
static void loop_vec_loads(KCtx *c, int V, const char *iv, const char *sfx, int dec)
{
    c->sfx = sfx;
    if (dec)
        decompose(c, iv, -1);
    for (int a = 0; a < c->nacc; a++)
        if (acc_full(c, &c->acc[a]))
            line(c, "const fz_vec<%s, %d> va%d%s = *(const fz_vec<%s, %d> *)(in%d + %s);", stype(MDT(c, c->acc[a].node)),
                 V, a, sfx, stype(MDT(c, c->acc[a].node)), V, c->inbuf[c->acc[a].node->id], iv);
    for (int a = 0; c->loopbv && a < c->nacc; a++) {
        if (!acc_loopbv(c, &c->acc[a], V))
            continue;
        /* a broadcast input along the vector: whole when its pointer is
         * aligned (a uniform test), else an element at a time */
        const char *st = stype(MDT(c, c->acc[a].node));
        int ib = c->inbuf[c->acc[a].node->id];
        Buf off = {0};
        acc_offset(c, &c->acc[a], "I", &off);
        line(c, "fz_vec<%s, %d> vc%d%s;", st, V, a, sfx);
        line(c, "if ((unsigned long long)in%d %% %d == 0) {", ib, V * dtype_size(MDT(c, c->acc[a].node)));
        line(c, "    vc%d%s = *(const fz_vec<%s, %d> *)(in%d + %s);", a, sfx, st, V, ib, off.data);
        line(c, "} else {");
        line(c, "    #pragma unroll");
        line(c, "    for (int j = 0; j < %d; j++)", V);
        line(c, "        vc%d%s.v[j] = in%d[%s + j];", a, sfx, ib, off.data);
        line(c, "}");
        buf_free(&off);
    }
    c->sfx = NULL;
}

static void loop_vec_compute(KCtx *c, int V, const char *iv, const char *sfx)
{
    const Kernel *k = c->k;
    int fullout[64] = {0};
    c->sfx = sfx;
    for (int i = 0; i < k->noutputs && i < 64; i++) {
        Access a = {k->outputs[i], {0}};
        out_map(c, k->outputs[i], a.map);
        fullout[i] = acc_full(c, &a);
        if (fullout[i])
            line(c, "fz_vec<%s, %d> vo%d%s;", stype(MDT(c, k->outputs[i])), V, i, sfx);
    }
    /* the group indices of this copy (decomposed by loop_vec_loads) */
    for (int g = 0; g < c->ng; g++) {
        snprintf(c->giname[g], sizeof c->giname[g], "gi%d%s", g, sfx);
        c->gi[g] = c->giname[g];
    }
    if (c->ng == 1 && !need_decompose(c))
        c->gi[0] = iv;
    line(c, "#pragma unroll");
    line(c, "for (int j = 0; j < %d; j++) {", V);
    open_scope(c);
    c->vec = 1;
    char flat[40], inner[40];
    snprintf(flat, sizeof flat, "(%s + j)", iv);
    c->flat = flat;
    if (c->wrapv) {
        /* element j of the vector may lie past the end of the innermost
         * group (which holds at least V elements): carry one into the
         * group outside it, and on outwards */
        const char *sx = sfx ? sfx : "";
        int last = c->ng - 1;
        for (int g = 0; g < c->ng; g++) {
            line(c, g == last ? "I w%d%s = %s + j;" : "I w%d%s = %s;", g, sx, c->gi[g]);
            snprintf(c->giname[g], sizeof c->giname[g], "w%d%s", g, sx);
            c->gi[g] = c->giname[g];
        }
        for (int g = last; g >= 1; g--) {
            line(c, "if (w%d%s >= gs%d) {", g, sx, g);
            open_scope(c);
            line(c, "w%d%s -= gs%d;", g, sx, g);
            line(c, "w%d%s += 1;", g - 1, sx);
        }
        for (int g = last; g >= 1; g--) {
            close_scope(c);
        }
    } else if (c->ng > 0) {
        snprintf(inner, sizeof inner, "(%s + j)", c->gi[c->ng - 1]);
        c->gi[c->ng - 1] = inner;
    }
    for (int i = 0; i < k->noutputs; i++)
        emit_store(c, i, "I");
    close_scope(c);
    c->vec = 0;
    c->flat = NULL;
    for (int g = 0; g < IR_MAX_RANK; g++)
        c->gi[g] = NULL;
    for (int i = 0; i < k->noutputs && i < 64; i++)
        if (fullout[i])
            line(c, "*(fz_vec<%s, %d> *)(out%d + %s) = vo%d%s;", stype(MDT(c, k->outputs[i])), V, i, iv, i, sfx);
    c->sfx = NULL;
}

/* The element at flat index i, one at a time: the scalar body and the
 * vector bodies' tails (dec: the space needs group indices). */
static void emit_flat_elem(KCtx *c, int dec)
{
    c->flat = "i";
    if (dec)
        decompose(c, "i", -1);
    else if (c->ng == 1)
        c->gi[0] = "i";
    for (int i = 0; i < c->k->noutputs; i++)
        emit_store(c, i, "I");
}

/* A vector body (two V-wide vectors per step): `_v` when rows hold whole
 * vectors (a scalar tail when the space is one group), or with `wrap` the
 * `_w` body: 16-byte accesses of the flat index even when rows do not hold
 * whole vectors; the broadcast accesses take each element's own group
 * indices, and the last n % V elements are a scalar tail. */
static void emit_loop_vec_body(KCtx *c, int V, const char *ps, const char *n, int dec, int wrap)
{
    const Kernel *k = c->k;
    int tail = wrap || c->ng <= 1;
    reset_point(c);
    line(c, "template <class I>");
    line(c, "static __device__ __forceinline__ void %s_%s_body(%s)", k->name, wrap ? "w" : "v", ps);
    line(c, "{");
    open_scope(c);
    emit_group_sizes(c);
    line(c, "const I n = %s;", n);
    if (tail)
        line(c, "const I nv = n / %d * %d; /* the rest is the scalar tail */", V, V);
    else
        line(c, "const I nv = n; /* the stub checked that rows hold whole vectors */");
    line(c, "const I stride = (I)gridDim.x * blockDim.x * %d;", V);
    line(c, "I i = ((I)blockIdx.x * blockDim.x + threadIdx.x) * %d;", V);
    line(c, "/* two vectors per step: both loads are in flight before either is used */");
    line(c, "for (; i + stride < nv; i += 2 * stride) {");
    open_scope(c);
    line(c, "const I i_b = i + stride;");
    c->loopbv = wrap ? 0 : V;
    loop_vec_loads(c, V, "i", "", dec);
    loop_vec_loads(c, V, "i_b", "_b", dec);
    c->wrapv = wrap;
    loop_vec_compute(c, V, "i", "");
    loop_vec_compute(c, V, "i_b", "_b");
    c->wrapv = 0;
    close_scope(c);
    line(c, "if (i < nv) {");
    open_scope(c);
    loop_vec_loads(c, V, "i", "", dec);
    c->wrapv = wrap;
    loop_vec_compute(c, V, "i", "");
    c->wrapv = 0;
    c->loopbv = 0;
    close_scope(c);
    if (tail) {
        line(c, "for (I i = nv + (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {");
        open_scope(c);
        reset_point(c);
        emit_flat_elem(c, dec);
        close_scope(c);
    }
    close_scope(c);
}

/* Loop kernels: a scalar body (grid-stride, one element per step) and,
 * when some access is full, a vector body (two V-wide vectors per step, and a
 * scalar tail when the space is one group). */
static void emit_loop_bodies(KCtx *c, int V)
{
    const Kernel *k = c->k;
    Buf ps = {0};
    body_params(c, &ps, NULL);
    int dec = need_decompose(c);
    /* scalar body */
    line(c, "template <class I>");
    line(c, "static __device__ __forceinline__ void %s_s_body(%s)", k->name, ps.data);
    line(c, "{");
    open_scope(c);
    reset_point(c);
    emit_group_sizes(c);
    Buf n = {0};
    groups_product(c, -1, &n);
    line(c, "const I n = %s;", n.data);
    line(c, "const I stride = (I)gridDim.x * blockDim.x;");
    line(c, "for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {");
    open_scope(c);
    emit_flat_elem(c, dec);
    close_scope(c);
    close_scope(c);
    if (V > 1)
        emit_loop_vec_body(c, V, ps.data, n.data, dec, 0);
    if (loop_needs_wrap(c, V))
        emit_loop_vec_body(c, V, ps.data, n.data, dec, 1);
    buf_free(&n);
    buf_free(&ps);
}

/* ------------------------------------------------------------------ */
/* Reductions: the state type of each reduction value.                 */

/* accumulation dtype of reduction n (compute type of its operand) */
static DType red_acc_dtype(const IrNode *n)
{
    DType t = n->in[0].node->dtype;
    if (n->op == OP_ANY || n->op == OP_ALL)
        return DT_I32;
    if (dtype_is_float(t))
        return cdtype(t);
    if (n->op == OP_MEAN || n->op == OP_VAR || n->op == OP_STD || n->op == OP_LOGSUMEXP)
        return dtype_is_float(n->dtype) ? cdtype(n->dtype) : DT_F64;
    return DT_I64;
}

/* the preamble's reduction struct for node n */
static void red_type(const IrNode *n, Buf *b)
{
    const char *t = ctype(red_acc_dtype(n));
    switch (n->op) {
    case OP_SUM: buf_printf(b, "fz_sum<%s>", t); break;
    case OP_MEAN: buf_printf(b, "fz_mean<%s>", t); break;
    case OP_PROD: buf_printf(b, "fz_prod<%s>", t); break;
    case OP_RMAX: buf_printf(b, "fz_rmax<%s>", t); break;
    case OP_RMIN: buf_printf(b, "fz_rmin<%s>", t); break;
    case OP_ANY: buf_puts(b, "fz_any"); break;
    case OP_ALL: buf_puts(b, "fz_all"); break;
    case OP_ARGMAX: buf_printf(b, "fz_argred<%s, 1>", t); break;
    case OP_ARGMIN: buf_printf(b, "fz_argred<%s, 0>", t); break;
    case OP_VAR: buf_printf(b, "fz_var<%s, 0>", t); break;
    case OP_STD: buf_printf(b, "fz_var<%s, 1>", t); break;
    case OP_LOGSUMEXP: buf_printf(b, "fz_lse<%s>", t); break;
    default: unreachable();
    }
}

/* the atomic combine's struct for node n (a sum, mean, max or min) */
static void atomic_type(const IrNode *n, Buf *b)
{
    const char *t = ctype(red_acc_dtype(n));
    switch (n->op) {
    case OP_SUM: case OP_MEAN: buf_printf(b, "fz_aadd<%s>", t); break;
    case OP_RMAX: buf_printf(b, "fz_aext<%s, 1>", t); break;
    case OP_RMIN: buf_printf(b, "fz_aext<%s, 0>", t); break;
    default: unreachable();
    }
}

/* the element value passed to upd, converted to the accumulation type */
static void red_elem(const IrNode *n, const char *v, Buf *b)
{
    if (n->op == OP_ANY || n->op == OP_ALL)
        buf_printf(b, "(int)((%s) != 0)", v);
    else
        buf_printf(b, "(%s)(%s)", ctype(red_acc_dtype(n)), v);
}

/* reduction level: 1 + the deepest reduction it depends on (in kernel) */
static int red_level(KCtx *c, const IrNode *n, int top)
{
    if (c->role[n->id] != 'v')
        return 0;
    int l = 0;
    for (int k = 0; k < n->nin; k++) {
        int x = red_level(c, n->in[k].node, 0);
        if (x > l)
            l = x;
    }
    if (op_info[n->op].cls == OPC_REDUCE && !top)
        return l + 1;
    return l;
}

static int depends_on_red(KCtx *c, const IrNode *n)
{
    return red_level(c, n, 0) > 0;
}

/* Emit, at the current (row) scope, every sub-value of (n, map) that does
 * not vary along the reduced dims, so element loops only read it. */
static void hoist(KCtx *c, const IrNode *n, const int8_t *map)
{
    if (n->op == OP_CONST || is_scalar_param(c, n))
        return;
    if (c->role[n->id] == 'v' && op_info[n->op].cls == OPC_REDUCE)
        return;
    if (!map_has_red(c, n, map)) {
        emit_value(c, n, map);
        return;
    }
    if (c->role[n->id] != 'v')
        return;
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        operand_map(n, k, map, um);
        hoist(c, n->in[k].node, um);
    }
}

/* map of output i */
static void out_map_of(KCtx *c, int i, int8_t *m) { out_map(c, c->k->outputs[i], m); }

/* Does (n, map) vary along the reduced dims, i.e. does it read an input
 * element through no reduction of this kernel?  Shapes alone cannot say:
 * with a reduced dim of static size 1 (`max(x, axis=0, keepdims=true)` of
 * x: f32[1]) a per-row value and an element value have the same shape. */
static int varies_in_red(KCtx *c, const IrNode *n, const int8_t *map, int depth)
{
    if (n->op == OP_CONST || is_scalar_param(c, n))
        return 0;
    if (c->role[n->id] == 'v' && op_info[n->op].cls == OPC_REDUCE)
        return 0;
    if (c->role[n->id] != 'v' || depth > 64)
        return map_has_red(c, n, map);
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        operand_map(n, k, map, um);
        if (varies_in_red(c, n->in[k].node, um, depth + 1))
            return 1;
    }
    return 0;
}

/* Is output i written per element (it varies along the reduced dims)? */
static int out_is_elem(KCtx *c, int i)
{
    int8_t m[IR_MAX_RANK];
    out_map_of(c, i, m);
    return map_has_red(c, c->k->outputs[i], m) && varies_in_red(c, c->k->outputs[i], m, 0);
}

/* ------------------------------------------------------------------ */
/* Row kernels (KK_ROW, and reductions over rows / any axes).          */

/* After the combine: the reduction's final value (R::fin over `count`
 * elements of accumulator a<id><sub>) as a named value that later
 * expressions and stores of this scope use. */
static void finish_reduction(KCtx *c, const IrNode *r, const char *sub, const char *count)
{
    Inst *in = new_inst(c, r, (int8_t[IR_MAX_RANK]){-1, -1, -1, -1, -1, -1, -1, -1});
    if (r->dtype == DT_I32 && (r->op == OP_RMAX || r->op == OP_RMIN))
        /* i32 max/min fold in 64 bits: an empty axis leaves the 64-bit
         * identity, which must become i32's own (INT32_MIN/MAX), not its
         * low word (0 or -1); any other value fits */
        line(c, "const int %s = (int)fz_sat_i32((long long)R%d::fin(a%d%s, (long long)%s));", in->name,
             r->id, r->id, sub, count);
    else
        line(c, "const %s %s = (%s)R%d::fin(a%d%s, (long long)%s);", ctype(r->dtype), in->name,
             ctype(r->dtype), r->id, r->id, sub, count);
    int vi = value_index(c, r);
    if (vi >= 0)
        c->reduced_val[vi] = in->name;
}

/* one pass over the row's elements; `what` emits the per-element work */
typedef void (*ElemFn)(KCtx *c, void *ctx);

typedef struct RoundCtx RoundCtx;
struct RoundCtx {
    const IrNode **reds;
    int nreds;
    int first;   /* first round: also writes element outputs that need no reduction */
    int final;   /* the output pass */
    int last;    /* the last round of a cached row with an output pass after it */
    int rev;     /* the windowed looped body: this pass reads the row from its end
                  * where the launch asks (every second pass, row_elem_loop_vec) */
};
static int depends_on_red(KCtx *c, const IrNode *n);
/* The end of this block's part of a cached row: the row's length, its
 * length or 0 for rows that share a warp, rhi in a cluster ([rlo, rhi)) */
static const char *row_end(const KCtx *c) { return c->cluster ? "rhi" : c->subwarp ? "Rr" : "R"; }

/* Row-only inputs (layernorm's g and b): one vector at rb, the same for
 * every row, declared before the element loop `body` of a pass for each
 * access that body reads (vb<a>.v[j]); then the body.  sh: the windowed
 * cached body, whose vector at rb may be partial (SH); 2: a windowed
 * vector inside the row (its elements, not aligned in this array). */
static void row_vec_loads(KCtx *c, int vw, int sh, Buf *body)
{
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "rb";
    for (int a = 0; a < c->nacc; a++) {
        char use[32];
        snprintf(use, sizeof use, "vb%d.v[j]", a);
        if (!acc_rowvec(c, &c->acc[a], vw) || !body->data || !strstr(body->data, use))
            continue;
        Buf off = {0};
        const char *st = stype(MDT(c, c->acc[a].node));
        int ib = c->inbuf[c->acc[a].node->id];
        acc_offset(c, &c->acc[a], "I", &off);
        if (!sh) {
            line(c, "const fz_vec<%s, V> vb%d = *(const fz_vec<%s, V> *)(in%d + %s);", st, a, st, ib, off.data);
            buf_free(&off);
            continue;
        }
        /* windowed rows: the vector at rb is not aligned in this array, so
         * an element at a time; inside the row as they are (sh == 2), else
         * lanes outside the row read its nearest end */
        line(c, "fz_vec<%s, V> vb%d;", st, a);
        if (sh == 2) {
            c->gi[g] = "(rb + j)";
            Buf offj = {0};
            acc_offset(c, &c->acc[a], "I", &offj);
            c->gi[g] = "rb";
            line(c, "#pragma unroll");
            line(c, "for (int j = 0; j < V; j++)");
            line(c, "    vb%d.v[j] = in%d[%s];", a, ib, offj.data);
            buf_free(&offj);
            buf_free(&off);
            continue;
        }
        line(c, "if (SH) {");
        open_scope(c);
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        open_scope(c);
        line(c, "const I rj = rb + j < 0 ? (I)0 : rb + j < %s ? rb + j : %s - 1;", row_end(c), row_end(c));
        c->gi[g] = "rj";
        Buf offj = {0};
        acc_offset(c, &c->acc[a], "I", &offj);
        c->gi[g] = "rb";
        line(c, "vb%d.v[j] = in%d[%s];", a, ib, offj.data);
        buf_free(&offj);
        close_scope(c);
        close_scope(c);
        line(c, "else");
        line(c, "    vb%d = *(const fz_vec<%s, V> *)(in%d + %s);", a, st, ib, off.data);
        buf_free(&off);
    }
    c->gi[g] = saved;
    if (body->data)
        buf_puts(c->out, body->data);
}

/* const fz_vec<T, V> t<a>: the V elements of row-shaped input a at rb
 * (a cached access; the caller decomposed rb) */
static void row_vec_load(KCtx *c, int a)
{
    Buf off = {0};
    const char *st = stype(MDT(c, c->acc[a].node));
    acc_offset(c, &c->acc[a], "I", &off);
    line(c, "const fz_vec<%s, V> t%d = *(const fz_vec<%s, V> *)(in%d + %s);", st, a, st, c->inbuf[c->acc[a].node->id],
         off.data);
    buf_free(&off);
}

/* The output pass of a row body with vector stores: each element output
 * that needs the row's reductions goes out as the V-element vector vo<i>
 * at rb (the reduced group's index); in a windowed body (sh, the template
 * flag SH) a partial first or last vector goes an element at a time. */
static void row_vec_stores(KCtx *c, int sh)
{
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "rb";
    for (int i = 0; i < c->k->noutputs; i++)
        if (out_is_elem(c, i) && depends_on_red(c, c->k->outputs[i])) {
            Access a = {c->k->outputs[i], {0}};
            out_map(c, c->k->outputs[i], a.map);
            Buf off = {0};
            acc_offset(c, &a, "I", &off);
            if (!sh) {
                line(c, "*(fz_vec<%s, V> *)(out%d + %s) = vo%d;", stype(MDT(c, c->k->outputs[i])), i,
                     off.data, i);
                buf_free(&off);
                continue;
            }
            const char *RR = row_end(c);
            line(c, "if (!SH || (rb >= 0 && rb + V <= %s))", RR);
            line(c, "    *(fz_vec<%s, V> *)(out%d + %s) = vo%d;", stype(MDT(c, c->k->outputs[i])), i,
                 off.data, i);
            line(c, "else {");
            open_scope(c);
            c->gi[g] = "(rb + j)";
            Buf offj = {0};
            acc_offset(c, &a, "I", &offj);
            c->gi[g] = "rb";
            line(c, "#pragma unroll");
            line(c, "for (int j = 0; j < V; j++)");
            line(c, "    if (rb + j >= 0 && rb + j < %s)", RR);
            line(c, "        out%d[%s] = vo%d.v[j];", i, offj.data, i);
            buf_free(&offj);
            close_scope(c);
            buf_free(&off);
        }
    c->gi[g] = saved;
}

/* A windowed cached vector's element loop in two copies, into c->out:
 * whole vectors inside the row (all but a row's first and last) run
 * `inner`, the element body, without a per-element range check, whose
 * branches would keep the compiler from batching a vector's loads; partial
 * vectors run it checked.  `inner` was emitted two levels deeper than
 * c->ind (the if and the j loop).  (The windowed looped body runs its
 * partial vectors apart instead: row_elem_loop_vec.) */
static void row_split_loop(KCtx *c, const Buf *inner)
{
    const char *RR = row_end(c);
    line(c, "if (!SH || (rb >= 0 && rb + V <= %s)) {", RR);
    for (int w = 0; w < 2; w++) {
        c->ind++;
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        c->ind++;
        line(c, "const int k = kk * V + j;");
        line(c, "const I r = rb + j;");
        if (w) {
            line(c, "if (r < 0 || r >= %s)", RR);
            line(c, "    continue; /* outside the row: a partial first or last vector */");
        }
        buf_puts(c->out, inner->data ? inner->data : "");
        c->ind--;
        line(c, "}");
        c->ind--;
        line(c, w ? "}" : "} else {");
    }
}

/* Emit the element body (decompose r, then fn) two levels deeper into
 * `inner`, for row_split_loop; its values are forgotten after. */
static void row_split_inner(KCtx *c, Buf *inner, ElemFn fn, void *ctx)
{
    Buf *outer = c->out;
    c->out = inner;
    c->ind++;
    open_scope(c);
    decompose(c, "r", 1);
    fn(c, ctx);
    Buf drop = {0};
    c->out = &drop;
    close_scope(c); /* its closing brace is not wanted */
    buf_free(&drop);
    c->ind--;
    c->out = outer;
}

/* A windowed looped pass's partial vector at `at` (a row's first or last)
 * in the lane that owns it: the element body an element at a time, loads
 * and stores included, not unrolled (at most two such vectors a row;
 * unrolled, their loads held more registers than the whole-vector loop,
 * sm_90).  For vectors of 4 elements or fewer (row_wloop_pass) */
static void row_partial_vec(KCtx *c, const char *at, ElemFn fn, void *ctx)
{
    line(c, "#pragma unroll 1");
    line(c, "for (int j = 0; j < V; j++) {");
    open_scope(c);
    line(c, "const I r = %s + j;", at);
    line(c, "if (r < 0 || r >= R)");
    line(c, "    continue; /* outside the row */");
    decompose(c, "r", 1);
    fn(c, ctx);
    close_scope(c);
}

/* A windowed looped pass's partial first and last vector spread over the
 * block: the row's elements before its first whole vector, [0, hn), and
 * after its last, [tb, R), an element a lane (lanes 0 .. hn - 1 and TPR -
 * V on), before the lanes' whole vectors.  For vectors of 8 elements or
 * more (row_wloop_pass) */
static void row_partial_elems(KCtx *c, ElemFn fn, void *ctx)
{
    line(c, "{");
    open_scope(c);
    line(c, "const I hn = sh ? ((I)V - sh < R ? (I)V - sh : R) : (I)0; /* the partial first vector's elements */");
    line(c, "const I tb = hn + (R - hn) / V * V; /* the partial last vector's first */");
    line(c, "const I r = lane < hn ? (I)lane : lane >= TPR - V && (I)(lane - (TPR - V)) < R - tb ? tb + (I)(lane - (TPR - V)) : (I)-1;");
    line(c, "if (r >= 0) {");
    open_scope(c);
    decompose(c, "r", 1);
    fn(c, ctx);
    close_scope(c);
    close_scope(c);
}

/* One vector step of the looped row body at rb (row_elem_loop_vec): the
 * cached inputs' vectors, the element loop, the final pass's vector
 * stores (vs) */
static void row_vec_step(KCtx *c, ElemFn fn, void *ctx, int V, int vs, int win)
{
    decompose(c, "rb", 1);
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a]))
            row_vec_load(c, a);
    for (int i = 0; vs && i < c->k->noutputs; i++)
        if (out_is_elem(c, i) && depends_on_red(c, c->k->outputs[i]))
            line(c, "fz_vec<%s, V> vo%d;", stype(MDT(c, c->k->outputs[i])), i);
    /* the element loop goes to `body` first: the per-column vectors it
     * reads are declared in front of it (row_vec_loads) */
    Buf body = {0};
    Buf *outer = c->out;
    c->loopvld = 1;
    c->vecstore = vs;
    c->rowvw = V;
    c->out = &body;
    line(c, "#pragma unroll");
    line(c, "for (int j = 0; j < V; j++) {");
    open_scope(c);
    line(c, "const I r = rb + j;");
    decompose(c, "r", 1);
    fn(c, ctx);
    close_scope(c);
    c->loopvld = 0;
    c->vecstore = 0;
    c->rowvw = 0;
    c->out = outer;
    row_vec_loads(c, V, win ? 2 : 0, &body);
    buf_free(&body);
    if (vs)
        row_vec_stores(c, 0);
}

/* The windowed looped body's pass over the row, from its start or (rev)
 * from its end.  The lane's vectors start at rb = lane * V - sh + k * TPR
 * * V; only lane 0's first one can start before the row and only the last
 * can end past it.  The loop reads whole vectors, unchecked: with no
 * branch to the element loads in it, bf16 softmax's _blockw went from 36
 * registers to 32 (sm_90), which lets a multiprocessor hold two blocks of
 * 1024.  The partial vectors run apart.  Of 8 elements or more (2-byte
 * types) they are spread over the block first (row_partial_elems): in the
 * lanes that own them, an element at a time, they took eight dependent
 * loads a pass in one warp while the others waited at the block's barrier
 * (ncu, bf16 softmax at 50257: 3.38 cycles of barrier stall an issued
 * instruction against torch eager's 1.71; after, 2.87), and on the H200
 * (2^26 elements, fifteenth session's third device call) spreading them
 * took bf16 softmax at 16387 / 30001 / 50257 / 65537 from 173.3 / 140.8 /
 * 135.2 / 128.8 to 149.0 / 135.3 / 130.8 / 124.4 us, layernorm bf16 at
 * 16387 / 50257 from 176.9 / 155.5 to 158.8 / 143.8.  Of 4 (f32) the
 * lane that owns them runs them (row_partial_vec), the first before its
 * loop and the last after, or the other way round backwards: spread, f32
 * softmax at 30001 / 50257 went from 188.8 / 225.0 to 194.8 / 236.5 */
static void row_wloop_pass(KCtx *c, ElemFn fn, void *ctx, int rev)
{
    RoundCtx *rc = ctx;
    int spread = c->loopvec >= 8;
    line(c, "{");
    open_scope(c);
    if (spread)
        row_partial_elems(c, fn, ctx);
    if (rev && spread) {
        line(c, "const I rb0 = (I)lane * V - sh;");
        line(c, "I rbn = R - V - rb0 >= 0 ? rb0 + (R - V - rb0) / ((I)TPR * V) * ((I)TPR * V) : (I)-1;");
        line(c, "for (; rbn >= 0; rbn -= (I)TPR * V) {");
    } else if (spread) {
        line(c, "I rbn = (I)lane * V - sh;");
        line(c, "if (rbn < 0)");
        line(c, "    rbn += (I)TPR * V;");
        line(c, "for (; rbn + V <= R; rbn += (I)TPR * V) {");
    } else if (rev) {
        line(c, "const I rb0 = (I)lane * V - sh;");
        line(c, "I rbn = rb0 < R ? rb0 + (R - 1 - rb0) / ((I)TPR * V) * ((I)TPR * V) : rb0 - (I)TPR * V;");
        line(c, "if (rbn >= rb0 && rbn + V > R) { /* the row's partial last vector */");
        open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        line(c, "rbn -= (I)TPR * V;");
        close_scope(c);
        line(c, "for (; rbn >= 0; rbn -= (I)TPR * V) {");
    } else {
        line(c, "I rbn = (I)lane * V - sh;");
        line(c, "if (rbn < 0) { /* the row's partial first vector */");
        open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        line(c, "rbn += (I)TPR * V;");
        close_scope(c);
        line(c, "for (; rbn + V <= R; rbn += (I)TPR * V) {");
    }
    open_scope(c);
    line(c, "const I rb = rbn;");
    row_vec_step(c, fn, ctx, c->loopvec, rc->final, 1);
    close_scope(c);
    if (!spread) {
        if (rev)
            line(c, "if (rbn >= rb0) { /* the row's partial first vector */");
        else
            line(c, "if (rbn < R) { /* the row's partial last vector */");
        open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        close_scope(c);
    }
    close_scope(c);
}

/* The looped row body's vector pass (`_rlv_body`, rows of whole aligned
 * vectors, checked by the launcher; `_rlw_body`, windowed: rows at any
 * offset, every row-shaped pointer at the same one): each lane reads
 * V-element vectors of the row-shaped inputs at rb, rb + TPR * V, ... (16
 * bytes a load instead of 4; windowed, from rb = -sh on, the partial first
 * and last vector apart, row_wloop_pass), the per-column inputs as
 * vectors at rb (row_vec_loads), and the final pass stores V-element
 * vectors. */
static void row_elem_loop_vec(KCtx *c, ElemFn fn, void *ctx)
{
    RoundCtx *rc = ctx;
    if (c->loopwin && rc->rev) {
        /* every second pass reads the row from its end where the
         * launcher asks (wrev: rows in flight past 40% of L2,
         * fzk_row_rev): the part the pass before read last, the likeliest
         * still in L2, comes first.  On the H200 (2^26 elements) f32
         * softmax at 30001 / 40001 / 50257 / 100001 went from 199.3 /
         * 235.4 / 262.7 / 285.7 to 188.2 / 205.1 / 225.2 / 261.2 us (ncu
         * at 30001: 361 -> 347 MB read from DRAM), layernorm from 230.1 /
         * 259.0 / 282.0 / 298.9 to 208.6 / 227.7 / 243.7 / 276.2; rows of
         * 16387, whose rows in flight fit L2 either way, got slower (f32
         * softmax 187.0 -> 190.0, rmsnorm 159.6 -> 173.6), hence the
         * launch-time choice */
        line(c, "if (wrev)");
        row_wloop_pass(c, fn, ctx, 1);
        line(c, "else");
        row_wloop_pass(c, fn, ctx, 0);
    } else if (c->loopwin)
        row_wloop_pass(c, fn, ctx, 0);
    else {
        line(c, "for (I rb = (I)lane * V; rb < R; rb += (I)TPR * V) {");
        open_scope(c);
        row_vec_step(c, fn, ctx, c->loopvec, rc->final, 0);
        close_scope(c);
    }
}

static void row_elem_loop(KCtx *c, int cached, ElemFn fn, void *ctx)
{
    RoundCtx *rc = ctx;
    if (!cached && c->loopvec) {
        row_elem_loop_vec(c, fn, ctx);
        return;
    }
    int vs = cached && rc->final && row_vec_width(c) > 1;
    int vw = cached ? row_vec_width(c) : 1;
    /* Rows in shared memory at any offset: whole vectors inside the row
     * (all but a row's first and last) take a copy of the element body
     * without the per-element range check, whose branches kept the
     * compiler from batching the shared-memory loads of a vector; the
     * partial vectors take the checked copy. */
    int split = cached && c->smem && c->window && vw > 1;
    Buf body = {0};
    Buf *outer = NULL;
    if (cached) {
        /* V contiguous elements per lane and step: 16-byte accesses */
        line(c, c->smem ? "#pragma unroll 4" : "#pragma unroll");
        line(c, "for (int kk = 0; kk < CAP / V; kk++) {");
        open_scope(c);
        line(c, "const I rb = %s((I)kk * TPR + lane) * V%s;", c->cluster ? "rlo + " : "", c->window ? " - sh" : "");
        line(c, "if (rb < %s) {", row_end(c));
        open_scope(c);
        for (int i = 0; vs && i < c->k->noutputs; i++)
            if (out_is_elem(c, i) && depends_on_red(c, c->k->outputs[i]))
                line(c, "fz_vec<%s, V> vo%d;", stype(MDT(c, c->k->outputs[i])), i);
        if (vw > 1) {
            /* the element loop goes to `body` first: the row-only vectors
             * it reads are declared in front of it (row_vec_loads) */
            outer = c->out;
            c->out = &body;
        }
    }
    c->rowcache = cached;
    c->vecstore = vs;
    c->rowvw = vw > 1 ? vw : 0;
    if (split) {
        Buf inner = {0};
        row_split_inner(c, &inner, fn, ctx);
        row_split_loop(c, &inner);
        buf_free(&inner);
    } else {
        if (cached) {
            line(c, "#pragma unroll");
            line(c, "for (int j = 0; j < V; j++) {");
            open_scope(c);
            line(c, "const int k = kk * V + j;");
            line(c, "const I r = rb + j;");
            if (c->window) {
                line(c, "if (SH && (r < 0 || r >= %s))", row_end(c));
                line(c, "    continue; /* outside the row: a partial first or last vector */");
            }
        } else {
            line(c, "for (I r = (I)lane; r < R; r += TPR) {");
            open_scope(c);
        }
        decompose(c, "r", 1);
        fn(c, ctx);
        if (cached)
            close_scope(c); /* the j loop; the looped one closes last */
    }
    c->rowcache = 0;
    c->vecstore = 0;
    c->rowvw = 0;
    if (cached) {
        if (outer) {
            c->out = outer;
            row_vec_loads(c, vw, c->window, &body);
            buf_free(&body);
        }
        if (vs)
            row_vec_stores(c, c->window);
        close_scope(c);
    }
    close_scope(c);
}


/* Per element of a pass: fold the round's reductions, and write the
 * element outputs whose pass this is (the first round for outputs that need
 * no reduction, the final pass for those that do). */
static void row_cache_rewrite(KCtx *c, int from);

static void round_elem(KCtx *c, void *vctx)
{
    RoundCtx *rc = vctx;
    int from = c->ninst;
    for (int i = 0; i < rc->nreds; i++) {
        const IrNode *n = rc->reds[i];
        int8_t m[IR_MAX_RANK];
        space_map(c, n->in[0].node, m);
        const char *v = emit_value(c, n->in[0].node, m);
        Buf e = {0};
        red_elem(n, v, &e);
        const char *ax = c->accidx ? c->accidx : "";
        line(c, "a%d%s = R%d::upd(a%d%s, %s, (long long)r);", n->id, ax, n->id, n->id, ax, e.data);
        buf_free(&e);
    }
    for (int i = 0; i < c->k->noutputs; i++) {
        if (!out_is_elem(c, i))
            continue;
        int dep = depends_on_red(c, c->k->outputs[i]);
        if ((rc->first && !dep) || (rc->final && dep))
            emit_store(c, i, "I");
    }
    if (rc->last)
        row_cache_rewrite(c, from);
}

/* A node walked by reaches_x: 0 not yet, 1 walked without reaching x,
 * 2 reaching x; at the map of its first walk. */
typedef struct Walked {
    unsigned char state;
    int8_t map[IR_MAX_RANK];
} Walked;

/* Does (n, map) reach the cached input x other than through (e, emap)?
 * Walks the operands as emit_value does; reductions of the kernel are row
 * values, constants and scalars end a path.  A node met again at another
 * map than its first counts as reaching x (conservative: e is only
 * substituted at emap). */
static int reaches_x(KCtx *c, const IrNode *n, const int8_t *map, const IrNode *x, const IrNode *e,
                     const int8_t *emap, Walked *seen)
{
    if (n == e && map_eq(n, map, emap))
        return 0;
    if (n == x)
        return 1;
    if (n->op == OP_CONST || is_scalar_param(c, n) || c->role[n->id] != 'v' ||
        op_info[n->op].cls == OPC_REDUCE)
        return 0;
    Walked *w = &seen[n->id];
    if (w->state)
        return w->state == 2 || !map_eq(n, w->map, map);
    w->state = 1;
    memcpy(w->map, map, sizeof w->map);
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        operand_map(n, k, map, um);
        if (reaches_x(c, n->in[k].node, um, x, e, emap, seen)) {
            w->state = 2;
            return 1;
        }
    }
    return 0;
}

/* In the last round of a cached row, the values just computed (insts from
 * `from` on) include some e = f(x, row values) of the one cached input x.
 * When the output pass needs x only through e, store e over x in the row
 * cache, and let that pass read it (emit_value): softmax's pass reads
 * e = exp(x - max) instead of computing exp again, layernorm's x - mean.
 * The latest such value wins: it saves the most work. */
static void row_cache_rewrite(KCtx *c, int from)
{
    int slot = -1;
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a])) {
            if (slot >= 0)
                return; /* more than one cached access: keep it simple */
            slot = a;
        }
    if (slot < 0 || xc_raw(c, slot))
        return; /* a cache of stored 2-byte values cannot hold e exactly */
    const IrNode *x = c->acc[slot].node;
    for (int a = 0; a < c->nacc; a++)
        if (a != slot && c->acc[a].node == x)
            return; /* x at another map too */
    size_t nseen = (size_t)c->f->nnodes * sizeof(Walked);
    Walked *seen = calloc((size_t)c->f->nnodes, sizeof *seen);
    if (!seen)
        fatal_oom();
    for (int i = c->ninst - 1; i >= from && !c->xc_e; i--) {
        const IrNode *e = c->inst[i].node;
        OpClass cls = op_info[e->op].cls;
        if (c->role[e->id] != 'v' || (cls != OPC_UNARY && cls != OPC_BINARY && cls != OPC_TERNARY) ||
            strcmp(ctype(e->dtype), ctype(x->dtype)) != 0)
            continue;
        /* e must depend on x: a value e that does not is a row value */
        memset(seen, 0, nseen);
        if (!reaches_x(c, e, c->inst[i].map, x, NULL, c->inst[i].map, seen))
            continue;
        int covers = 1;
        memset(seen, 0, nseen);
        for (int o = 0; o < c->k->noutputs && covers; o++) {
            if (!out_is_elem(c, o) || !depends_on_red(c, c->k->outputs[o]))
                continue;
            int8_t m[IR_MAX_RANK];
            out_map_of(c, o, m);
            covers = !reaches_x(c, c->k->outputs[o], m, x, e, c->inst[i].map, seen);
        }
        if (!covers)
            continue;
        Buf ref = {0};
        xc_ref(c, &ref, slot, "k");
        line(c, "%s = %s; /* the output pass reads it here */", ref.data, c->inst[i].name);
        buf_free(&ref);
        c->xc_e = e;
        memcpy(c->xc_emap, c->inst[i].map, sizeof c->xc_emap);
        c->xc_slot = slot;
    }
    free(seen);
}

/* const int sh: the row's element offset modulo V, from its address (the
 * launcher checked that every row-shaped pointer agrees) */
static void row_shift(KCtx *c)
{
    int a0 = 0;
    while (!acc_cached(c, &c->acc[a0]))
        a0++;
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "(I)0";
    Buf off = {0};
    acc_offset(c, &c->acc[a0], "I", &off);
    c->gi[g] = saved;
    line(c, "const int sh = SH ? (int)((unsigned long long)(in%d + %s) / sizeof(%s) %% V) : 0;",
         c->inbuf[c->acc[a0].node->id], off.data, stype(MDT(c, c->acc[a0].node)));
    buf_free(&off);
}

/* The row scheme.  A "row" is one point of the kept groups (flat index
 * `row`), its elements the points of the reduced groups (flat index r).
 * TPR threads own a row: lane l takes elements l, l + TPR, ... (looped) or
 * V-element chunks (cached).  Reductions run in dependency rounds (softmax:
 * max, then sum of exp(x - max)); values that do not vary along the row are
 * hoisted out of the element loops; outputs of the row's shape are written
 * in a last pass, per-row outputs by lane 0. */
static void emit_row_body(KCtx *c, int cached)
{
    const Kernel *k = c->k;
    Buf ps = {0};
    /* wrev: the windowed looped body reads every second pass from the
     * row's end (row_elem_loop_vec) */
    body_params(c, &ps, !cached && c->loopwin ? ", int wrev" : NULL);
    reset_point(c);
    if (cached && c->smem)
        line(c, "template <class I, int TPR, int BS, int V%s>", c->window ? ", bool SH" : "");
    else if (cached)
        line(c, "template <class I, int TPR, int CAP, int BS, int V%s%s>", c->window ? ", bool SH" : "",
             c->cluster ? ", int CL" : "");
    else if (c->loopvec)
        line(c, "template <class I, int TPR, int BS, int V>");
    else
        line(c, "template <class I, int TPR, int BS>");
    line(c, "static __device__ __forceinline__ void %s_%s_body(%s)", k->name,
         cached ? (c->smem ? "rs" : "rc") : c->loopwin ? "rlw" : c->loopvec ? "rlv" : "rl", ps.data);
    line(c, "{");
    open_scope(c);
    if (c->loopwin) {
        line(c, "const bool SH = true; /* windowed: the row's shift (row_shift) */");
        line(c, "(void)wrev; /* a body without a second pass does not read it */");
    }
    emit_group_sizes(c);
    Buf nr = {0}, rr = {0};
    groups_product(c, 0, &nr);
    groups_product(c, 1, &rr);
    line(c, "const I nrows = %s;", nr.data);
    line(c, "const I R = %s; /* elements per row */", rr.data);
    line(c, "const int lane = (int)(threadIdx.x %% TPR);");
    line(c, "const I rows_per_block = BS / TPR;");
    if (cached && c->smem) {
        /* the row in dynamic shared memory, CAP elements a lane (the
         * launcher's shared bytes are TPR * CAP times the cached accesses'
         * element sizes); each lane touches only its own words, so rows
         * follow each other without a barrier */
        line(c, "const int CAP = (int)((R + %s(I)TPR * V - 1) / ((I)TPR * V)) * V;", c->window ? "(SH ? V - 1 : 0) + " : "");
        line(c, "unsigned char *fz_sp = FZ_DYN_SMEM;");
        for (int a = 0; a < c->nacc; a++)
            if (acc_cached(c, &c->acc[a])) {
                const char *t = xc_raw(c, a) ? stype(MDT(c, c->acc[a].node)) : ctype(c->acc[a].node->dtype);
                line(c, "%s *const xc%d = (%s *)fz_sp + lane;", t, a, t);
                line(c, "fz_sp += (size_t)TPR * CAP * sizeof(%s);", t);
            }
        line(c, "(void)fz_sp;");
    }
    /* a cluster's row: CL blocks, consecutive in x, hold one row */
    const char *bx = cached && c->cluster ? "(blockIdx.x / CL)" : "blockIdx.x";
    const char *gx = cached && c->cluster ? "(gridDim.x / CL)" : "gridDim.x";
    if (cached && c->cluster) {
        line(c, "int clp = CL > 1 ? 2 : 0; /* fz_cluster_reduce's state: start barrier pending, slot parity */");
        line(c, "fz_cluster_start<CL>();");
    }
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE) {
            Buf t = {0};
            red_type(k->values[i], &t);
            line(c, "typedef %s R%d;", t.data, k->values[i]->id);
            buf_free(&t);
        }
    if (cached && c->subwarp) {
        /* Several rows share a warp: the warp runs while its first row
         * exists, so every lane reaches the same shuffles; a lane past the
         * last row reads the last row (indices stay in bounds), takes no
         * element (Rr = 0) and writes nothing. */
        line(c, "for (I row = (I)%s * rows_per_block + (I)(threadIdx.x / TPR);"
                " row - (I)((threadIdx.x & 31) / TPR) < nrows; row += (I)%s * rows_per_block) {",
             bx, gx);
        open_scope(c);
        line(c, "const bool rowok = row < nrows;");
        line(c, "const I rowc = rowok ? row : nrows - 1;");
        line(c, "const I Rr = rowok ? R : (I)0;");
        decompose(c, "rowc", 0);
    } else {
        line(c, "for (I row = (I)%s * rows_per_block + (I)(threadIdx.x / TPR); row < nrows;"
                " row += (I)%s * rows_per_block) {",
             bx, gx);
        open_scope(c);
        decompose(c, "row", 0);
    }
    if (!cached && c->loopwin)
        row_shift(c);
    if (cached) {
        /* read the row once into registers (or shared memory) */
        for (int a = 0; a < c->nacc && !c->smem; a++)
            if (acc_cached(c, &c->acc[a]))
                line(c, "%s xc%d[CAP];", ctype(c->acc[a].node->dtype), a);
        const char *RR = row_end(c);
        if (c->cluster) {
            /* a row over the CL blocks of a cluster: this block's part, a
             * whole number of vectors from the row's start (the launcher
             * checked that the row is CL parts of at most TPR * CAP) */
            const char *len = c->subwarp ? "Rr" : "R";
            line(c, "const I seg = CL > 1 ? (%s + (I)(CL * V) - 1) / (I)(CL * V) * (I)V : %s;", len, len);
            line(c, "const I rlo = (I)(blockIdx.x %% CL) * seg;");
            line(c, "const I rhi = rlo + seg < %s ? rlo + seg : %s;", len, len);
        }
        if (c->window)
            row_shift(c);
        line(c, c->smem ? "#pragma unroll 4" : "#pragma unroll");
        line(c, "for (int kk = 0; kk < CAP / V; kk++) {");
        open_scope(c);
        line(c, "const I rb = %s((I)kk * TPR + lane) * V%s;", c->cluster ? "rlo + " : "", c->window ? " - sh" : "");
        if (c->window)
            line(c, "if (SH ? rb >= 0 && rb + V <= %s : rb < %s) {", RR, RR);
        else
            line(c, "if (rb < %s) {", RR);
        open_scope(c);
        decompose(c, "rb", 1);
        for (int a = 0; a < c->nacc; a++)
            if (acc_cached(c, &c->acc[a])) {
                Buf e = {0}, cv = {0};
                row_vec_load(c, a);
                buf_printf(&e, "t%d.v[j]", a);
                xc_value(c, a, e.data, &cv);
                Buf x = {0};
                xc_ref(c, &x, a, "kk * V + j");
                line(c, "#pragma unroll");
                line(c, "for (int j = 0; j < V; j++)");
                line(c, "    %s = %s;", x.data, cv.data);
                buf_free(&x);
                buf_free(&e);
                buf_free(&cv);
            }
        close_scope(c);
        if (c->window) {
            /* a partial first or last vector: an element at a time */
            line(c, "else if (SH && rb < %s) {", RR);
            open_scope(c);
            line(c, "#pragma unroll");
            line(c, "for (int j = 0; j < V; j++) {");
            open_scope(c);
            line(c, "const I r = rb + j;");
            decompose(c, "r", 1);
            for (int a = 0; a < c->nacc; a++)
                if (acc_cached(c, &c->acc[a])) {
                    Buf off = {0}, e = {0}, cv = {0};
                    acc_offset(c, &c->acc[a], "I", &off);
                    buf_printf(&e, "in%d[%s]", c->inbuf[c->acc[a].node->id], off.data);
                    xc_value(c, a, e.data, &cv);
                    Buf x = {0};
                    xc_ref(c, &x, a, "kk * V + j");
                    line(c, "%s = r >= 0 && r < %s ? %s : 0;", x.data, RR, cv.data);
                    buf_free(&x);
                    buf_free(&off);
                    buf_free(&e);
                    buf_free(&cv);
                }
            close_scope(c);
            close_scope(c);
        }
        line(c, "else {");
        open_scope(c);
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        open_scope(c);
        for (int a = 0; a < c->nacc; a++)
            if (acc_cached(c, &c->acc[a])) {
                Buf x = {0};
                xc_ref(c, &x, a, "kk * V + j");
                line(c, "%s = 0;", x.data);
                buf_free(&x);
            }
        close_scope(c);
        close_scope(c);
        close_scope(c);
    }
    /* reductions in dependency rounds */
    int maxl = 0;
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE) {
            int l = red_level(c, k->values[i], 1) + 1;
            if (l > maxl)
                maxl = l;
        }
    const IrNode *reds[64];
    /* is there an output pass after the last round? */
    int has_elem_final = 0;
    for (int i = 0; i < k->noutputs; i++)
        if (out_is_elem(c, i) && (depends_on_red(c, k->outputs[i]) || maxl == 0))
            has_elem_final = 1;
    c->xc_e = NULL;
    for (int L = 1; L <= maxl; L++) {
        RoundCtx rc = {reds, 0, L == 1, 0, cached && L == maxl && has_elem_final, L % 2 == 0};
        for (int i = 0; i < k->nvalues; i++)
            if (op_info[k->values[i]->op].cls == OPC_REDUCE && red_level(c, k->values[i], 1) + 1 == L &&
                rc.nreds < 64)
                reds[rc.nreds++] = k->values[i];
        line(c, "/* round %d: %d reduction(s) over the row */", L, rc.nreds);
        for (int i = 0; i < rc.nreds; i++) {
            int8_t m[IR_MAX_RANK];
            space_map(c, reds[i]->in[0].node, m);
            hoist(c, reds[i]->in[0].node, m);
            line(c, "R%d::S a%d = R%d::init();", reds[i]->id, reds[i]->id, reds[i]->id);
        }
        row_elem_loop(c, cached, round_elem, &rc);
        for (int i = 0; i < rc.nreds; i++) {
            int id = reds[i]->id;
            line(c, "a%d = (TPR <= 32) ? fz_warp_reduce<R%d, TPR <= 32 ? TPR : 32>(a%d)"
                    " : fz_block_reduce<R%d, (TPR >= 64 ? TPR / 32 : 1)>(a%d);", id, id, id, id, id);
            if (cached && c->cluster) {
                line(c, "if (CL > 1)");
                line(c, "    a%d = fz_cluster_reduce<R%d, CL>(a%d, clp);", id, id, id);
            }
            finish_reduction(c, reds[i], "", "R");
        }
    }
    /* the outputs: per element (a last pass) and per row (lane 0) */
    for (int i = 0; i < k->noutputs; i++)
        if (out_is_elem(c, i) && (depends_on_red(c, k->outputs[i]) || maxl == 0)) {
            int8_t m[IR_MAX_RANK];
            out_map_of(c, i, m);
            hoist(c, k->outputs[i], m);
        }
    if (has_elem_final) {
        RoundCtx rc = {reds, 0, maxl == 0, 1, 0, (maxl + 1) % 2 == 0};
        line(c, "/* write the row */");
        row_elem_loop(c, cached, round_elem, &rc);
    }
    int has_row_out = 0;
    for (int i = 0; i < k->noutputs; i++)
        has_row_out |= !out_is_elem(c, i);
    if (has_row_out) {
        line(c, "if (lane == 0%s%s) {", cached && c->subwarp ? " && rowok" : "",
             cached && c->cluster ? " && blockIdx.x % CL == 0" : "");
        open_scope(c);
        for (int i = 0; i < k->noutputs; i++)
            if (!out_is_elem(c, i))
                emit_store(c, i, "I");
        close_scope(c);
    }
    close_scope(c);
    if (cached && c->cluster)
        line(c, "fz_cluster_end<CL>(clp); /* a block that reduced no row */");
    close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    c->xc_e = NULL;
    buf_free(&nr);
    buf_free(&rr);
    buf_free(&ps);
}

/* ------------------------------------------------------------------ */
/* Full reductions: one launch, last block combines.                   */

/* SCALAR_MAX_BLOCKS: the most chunks (and partial slots) of a full
 * reduction; below it, chunks of up to SCALAR_CHUNK_STEPS steps while
 * SCALAR_MIN_BLOCKS blocks remain (scalar_chunk_steps) */
enum {
    SCALAR_MAX_BLOCKS = 2048,
    SCALAR_CHUNK_STEPS = 16,
    SCALAR_MIN_BLOCKS = 512,
    SCALAR_SLOT = 32,
    SCALAR_HEAD = 256
};

/* The last-block ticket of the one-launch reductions: the block's writes
 * are fenced, thread 0 takes a ticket of the counter, and fz_last says
 * whether it was the last of `total` blocks. */
static void emit_ticket(KCtx *c, const char *counter, const char *total)
{
    line(c, "if (threadIdx.x == 0)");
    line(c, "    fz_last = atomicAdd(%s, 1u) == %s;", counter, total);
    line(c, "__syncthreads();");
}

/* Elements of the kernel's whole space, or -1 when a dim is symbolic */
static int64_t static_space_len(const KCtx *c)
{
    int64_t r = 1;
    for (int d = 0; d < c->R; d++) {
        if (c->k->space.dims[d].size < 0)
            return -1;
        r *= c->k->space.dims[d].size;
    }
    return r;
}

/* Steps (of per = BS V elements) in each block's chunk of a vector full
 * reduction over nv elements: at most SCALAR_MAX_BLOCKS chunks, and below
 * that chunks of up to SCALAR_CHUNK_STEPS steps while SCALAR_MIN_BLOCKS
 * blocks remain.  The rule takes no account of the GPU, so the grid and the
 * order of the sums depend on n alone.  The host's fzk_scalar_steps is the
 * same rule: the launcher launches ceil(steps / T) blocks; a static size's
 * kernel has this T as a constant, a symbolic one derives it from the grid.  2048 contiguous chunks of 64 steps, one
 * 16-byte load a thread a step, read 2^28 floats in 240.5 us on the H200,
 * against 242.8 for 528 blocks striding over the array with two loads a
 * step.  At 2^24 floats 2048 chunks of 4 steps took 34.9 us against the
 * striding kernel's 32.1, and 512 chunks of 16 took 28.7 against its 28.5
 * in the next run (docs/benchmarks.md, eighteenth session). */
static int64_t scalar_chunk_steps(int64_t nv, int per)
{
    int64_t steps = (nv + per - 1) / per;
    int64_t T = (steps + SCALAR_MAX_BLOCKS - 1) / SCALAR_MAX_BLOCKS;
    if (T < SCALAR_CHUNK_STEPS) {
        /* fewer, longer chunks while enough blocks remain: every block
         * ends in a block reduce and a ticket */
        T = steps / SCALAR_MIN_BLOCKS;
        T = T > SCALAR_CHUNK_STEPS ? SCALAR_CHUNK_STEPS : T;
    }
    return T < 1 ? 1 : T;
}

/* The body of a full reduction's vector loop (after its `for` line): the
 * vector loads at i of every full access, then each of the V elements
 * folded into the reductions */
static void scalar_vec_step(KCtx *c, RoundCtx *rc)
{
    open_scope(c);
    for (int q = 0; q < c->nacc; q++)
        if (acc_full(c, &c->acc[q]))
            line(c, "const fz_vec<%s, V> va%d = *(const fz_vec<%s, V> *)(in%d + i);", stype(MDT(c, c->acc[q].node)),
                 q, stype(MDT(c, c->acc[q].node)), c->inbuf[c->acc[q].node->id]);
    line(c, "#pragma unroll");
    line(c, "for (int j = 0; j < V; j++) {");
    open_scope(c);
    c->vec = 1;
    c->flat = "(i + j)";
    if (c->ng == 1)
        c->gi[0] = c->flat;
    line(c, "const I r = i + j;");
    round_elem(c, rc);
    close_scope(c);
    close_scope(c);
    reset_point(c);
}

/* Full reduction in one launch.  Each block folds a contiguous chunk of T
 * steps of V-wide vectors (scalar_chunk_steps; the plain variant, V 1, an
 * equal share of the array over the launcher's grid for it), reduces it in
 * shared memory and writes one partial; the block that takes the last
 * ticket of the atomic counter reads all partials in block order (so the
 * result does not depend on which block finished last), applies the
 * epilogue, writes the outputs and puts the counter back to 0 for the next
 * call. */
static void emit_scalar_body(KCtx *c)
{
    const Kernel *k = c->k;
    Buf ps = {0};
    body_params(c, &ps, ", unsigned char *scratch, unsigned char *zscratch");
    reset_point(c);
    line(c, "template <class I, int BS, int V>");
    line(c, "static __device__ __forceinline__ void %s_body(%s)", k->name, ps.data);
    line(c, "{");
    open_scope(c);
    emit_group_sizes(c);
    Buf n = {0};
    groups_product(c, -1, &n);
    line(c, "const I n = %s;", n.data);
    const IrNode *reds[64];
    int nreds = 0;
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE && nreds < 64) {
            const IrNode *v = k->values[i];
            reds[nreds++] = v;
            Buf t = {0};
            red_type(v, &t);
            line(c, "typedef %s R%d;", t.data, v->id);
            if (c->atomic) {
                t.len = 0;
                atomic_type(v, &t);
                line(c, "typedef %s A%d;", t.data, v->id);
            }
            line(c, "R%d::S a%d = R%d::init();", v->id, v->id, v->id);
            buf_free(&t);
        }
    RoundCtx rc = {reds, nreds, 1, 0, 0, 0};
    int vw = scalar_vec_width(c);
    if (vw > 1) {
        /* V elements per thread and step: 16-byte loads of every full access
         * (the stub checked alignment; V == 1 is the plain variant).  Block
         * b folds the contiguous chunk of T steps from b T BS V on (the
         * launcher's grid, scalar_chunk_steps), one vector a thread a step.
         * A whole chunk's loop has no bound to test, and with T known here
         * ptxas can unroll it. */
        int64_t sn = static_space_len(c);
        int64_t T = sn >= 0 ? scalar_chunk_steps(sn / vw * vw, 512 * vw) : -1;
        line(c, "const I nv = n / V * V;");
        line(c, "const I per = (I)BS * V; /* elements a block folds a step */");
        if (T > 0) {
            /* the plain variant (V 1) has the launcher's other grid */
            line(c, "const I T = V == %d ? (I)%lld /* scalar_chunk_steps */", vw, (long long)T);
            line(c, "                    : ((nv + per - 1) / per + gridDim.x - 1) / gridDim.x; /* steps a block */");
        } else
            line(c, "const I T = ((nv + per - 1) / per + gridDim.x - 1) / gridDim.x; /* steps a block */");
        line(c, "const I c0 = (I)blockIdx.x * T * per;");
        line(c, "I i = c0 + (I)threadIdx.x * V;");
        line(c, "if (c0 + T * per <= nv) {");
        open_scope(c);
        line(c, T > 0 && T <= 64 ? "#pragma unroll" : "#pragma unroll 8");
        line(c, "for (I s = 0; s < T; s++, i += per) {");
        scalar_vec_step(c, &rc);
        close_scope(c);
        line(c, "else {");
        open_scope(c);
        line(c, "/* the last block's chunk ends inside the array */");
        line(c, "for (; i < nv; i += per) {");
        scalar_vec_step(c, &rc);
        close_scope(c);
        line(c, "/* the last n - nv (< V) elements, by the last block */");
        line(c, "for (I i = nv + threadIdx.x; i < n && blockIdx.x == gridDim.x - 1; i += BS) {");
    } else
        line(c, "for (I i = (I)blockIdx.x * BS + threadIdx.x; i < n; i += (I)gridDim.x * BS) {");
    open_scope(c);
    c->flat = "i";
    if (need_decompose(c))
        decompose(c, "i", -1);
    else if (c->ng == 1)
        c->gi[0] = "i";
    /* r is the index inside the reduced range: here the flat index */
    line(c, "const I r = i;");
    round_elem(c, &rc);
    close_scope(c);
    reset_point(c);
    /* Each block's partial goes to its slot, read back in block order by
     * the last block (ordered), or with --atomic-reduce into the
     * reduction's accumulator word at zscratch + SCALAR_HEAD + 8 i by one
     * atomic, which the last block reads and puts back to 0 -- the identity
     * of every encoding of the preamble's fz_aadd/fz_aext -- for the next
     * call.  Every block's writes precede its ticket behind a fence.  The
     * counter and the accumulators live in zscratch, which is all zero when
     * the kernel starts and which it leaves all zero (the runtime's zeroed
     * scratch, or the call's own memset block); the partials in scratch. */
    if (c->atomic) {
        line(c, "/* block partials combined with atomics (--atomic-reduce: not bitwise");
        line(c, " * reproducible); the last block reads the totals */");
    } else
        line(c, "/* block partials, then the last block combines them in block order */");
    line(c, "__shared__ int fz_last;");
    line(c, "unsigned *counter = (unsigned *)zscratch;");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        line(c, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
        if (c->atomic) {
            line(c, "A%d::W *acc%d = (A%d::W *)(zscratch + %d + %d);", id, id, id, SCALAR_HEAD, i * 8);
            line(c, "if (threadIdx.x == 0)");
            line(c, "    A%d::put(acc%d, a%d);", id, id, id);
        } else {
            line(c, "R%d::S *part%d = (R%d::S *)(scratch + %d + %d * %d);", id, id, id, SCALAR_HEAD,
                 i * SCALAR_SLOT, SCALAR_MAX_BLOCKS);
            line(c, "if (threadIdx.x == 0)");
            line(c, "    part%d[blockIdx.x] = a%d;", id, id);
        }
    }
    line(c, "__threadfence();");
    emit_ticket(c, "counter", "gridDim.x - 1");
    line(c, c->atomic ? "if (!fz_last || threadIdx.x != 0)" : "if (!fz_last)");
    line(c, "    return;");
    line(c, "__threadfence();");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        if (c->atomic) {
            line(c, "a%d = A%d::get(acc%d);", id, id, id);
            line(c, "*acc%d = 0; /* the identity, for the next call */", id);
        } else {
            line(c, "a%d = R%d::init();", id, id);
            line(c, "for (unsigned b = threadIdx.x; b < gridDim.x; b += BS)");
            line(c, "    a%d = R%d::comb(a%d, R%d::ldcg(part%d + b));", id, id, id, id, id);
            line(c, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
        }
    }
    if (!c->atomic) {
        line(c, "if (threadIdx.x == 0) {");
        open_scope(c);
    }
    for (int i = 0; i < nreds; i++)
        finish_reduction(c, reds[i], "", "n");
    for (int i = 0; i < k->noutputs; i++)
        if (!out_is_elem(c, i))
            emit_store(c, i, "I");
    line(c, "*counter = 0u; /* ready for the next call */");
    if (!c->atomic)
        close_scope(c);
    close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    buf_free(&n);
    buf_free(&ps);
}


/* ------------------------------------------------------------------ */
/* Column reductions (RL_COLS, RL_MIDDLE): [outer kept, reduced, inner  */
/* kept].  A block owns 32 inner columns of one outer index; its 8 warps */
/* take every 8th reduced element, so each warp reads 128 contiguous    */
/* bytes per row.  The reduced range is split over blockIdx.z when rows  */
/* are many; the last of a tile's blocks combines the partials in split  */
/* order (deterministic) and resets the tile's counter.                  */


/* bytes of a reduction state (as the preamble lays it out) */
static int red_state_bytes(const IrNode *n)
{
    int t = dtype_size(red_acc_dtype(n));
    switch (n->op) {
    case OP_ARGMAX: case OP_ARGMIN: return 16;
    case OP_VAR: case OP_STD: return 3 * t;
    case OP_LOGSUMEXP: return 2 * t;
    default: return t;
    }
}

/* Column reductions whose states are all one or two words merged without
 * division or index compares (not Welford, not arg): they read 8 rows a
 * step and combine partials with all 8 warps; the others spilled in ptxas
 * with either (tests/codegen/kernel-reduce-middle.fuse). */
static int cols_small_states(const IrNode *const *reds, int nreds)
{
    for (int i = 0; i < nreds; i++)
        if (red_state_bytes(reds[i]) > 8 || reds[i]->op == OP_ARGMAX || reds[i]->op == OP_ARGMIN ||
            reds[i]->op == OP_VAR || reds[i]->op == OP_STD)
            return 0;
    return 1;
}

/* After each warp ty has put its states in sh<id>[ty]: warp 0 combines the
 * 8 warps' states of each of its columns in warp order (deterministic). */
static void emit_cols_warp_combine(KCtx *c, const IrNode *const *reds, int nreds)
{
    line(c, "__syncthreads();");
    line(c, "if (ty == 0) {");
    open_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        line(c, "    a%d[j] = sh%d[0][tx * V + j];", id, id);
        line(c, "    for (int q = 1; q < 8; q++)");
        line(c, "        a%d[j] = R%d::comb(a%d[j], sh%d[q][tx * V + j]);", id, id, id, id);
        line(c, "}");
    }
    close_scope(c);
}

/* bytes per partial state in the column scheme's scratch */
static int cols_slot(const KCtx *c)
{
    int slot = 8;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && red_state_bytes(c->k->values[i]) > slot)
            slot = red_state_bytes(c->k->values[i]);
    return (slot + 7) / 8 * 8;
}

/* Vector width of the column kernel: one inner group, innermost. */
static int cols_vec_width(KCtx *c)
{
    int oe = 0, re = 0;
    cols_split(c, &oe, &re);
    if (c->ng - re != 1)
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (out_is_elem(c, i))
            return 1;
    /* V states per thread: only for one-word states (sum, max, mean...) */
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && red_state_bytes(c->k->values[i]) > 8)
            return 1;
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    if (!maxsz)
        return 1;
    int v = 16 / maxsz;
    return v > 4 ? 4 : v;
}

static void emit_cols_body(KCtx *c)
{
    const Kernel *k = c->k;
    int oe = 0, re = 0;
    cols_split(c, &oe, &re);
    int og[IR_MAX_RANK] = {0}, rg[IR_MAX_RANK] = {0}, ig[IR_MAX_RANK] = {0}, no = 0, nr = 0, ni = 0;
    for (int g = 0; g < c->ng; g++) {
        if (g < oe)
            og[no++] = g;
        else if (g < re)
            rg[nr++] = g;
        else
            ig[ni++] = g;
    }
    int vecok = cols_vec_width(c) > 1;
    Buf ps = {0};
    body_params(c, &ps, ", unsigned char *scratch, unsigned char *zscratch, int nsplit");
    reset_point(c);
    line(c, "template <class I, int V>");
    line(c, "static __device__ __forceinline__ void %s_cols_body(%s)", k->name, ps.data);
    line(c, "{");
    open_scope(c);
    emit_group_sizes(c);
    Buf b = {0};
    buf_puts(&b, "(I)1");
    for (int i = 0; i < no; i++)
        buf_printf(&b, " * gs%d", og[i]);
    line(c, "const I nO = %s; /* outer kept */", b.data);
    b.len = 0;
    buf_puts(&b, "(I)1");
    for (int i = 0; i < nr; i++)
        buf_printf(&b, " * gs%d", rg[i]);
    line(c, "const I R = %s; /* reduced */", b.data);
    b.len = 0;
    buf_puts(&b, "(I)1");
    for (int i = 0; i < ni; i++)
        buf_printf(&b, " * gs%d", ig[i]);
    line(c, "const I nI = %s; /* inner kept: the columns */", b.data);
    buf_free(&b);
    const IrNode *reds[64];
    int nreds = 0;
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE && nreds < 64) {
            const IrNode *v = k->values[i];
            reds[nreds++] = v;
            Buf t = {0};
            red_type(v, &t);
            line(c, "typedef %s R%d;", t.data, v->id);
            if (c->atomic) {
                t.len = 0;
                atomic_type(v, &t);
                line(c, "typedef %s A%d;", t.data, v->id);
            }
            line(c, "__shared__ R%d::S sh%d[8][32 * V];", v->id, v->id);
            buf_free(&t);
        }
    line(c, "__shared__ int fz_last;");
    line(c, "const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;");
    line(c, "const I civ = ((I)blockIdx.x * 32 + tx) * V; /* this thread's first column */");
    line(c, "const bool active = civ < nI;");
    line(c, "const I chunk = (R + nsplit - 1) / nsplit;");
    line(c, "const I r0 = (I)blockIdx.z * chunk;");
    line(c, "const I r1 = r0 + chunk < R ? r0 + chunk : R;");
    line(c, "const I cnt_bytes = (nO * (I)gridDim.x * 4 + 255) / 256 * 256;");
    line(c, "for (I o = blockIdx.y; o < nO; o += gridDim.y) {");
    open_scope(c);
    decompose_list(c, "o", og, no);
    for (int i = 0; i < nreds; i++) {
        line(c, "R%d::S a%d[V];", reds[i]->id, reds[i]->id);
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++)");
        line(c, "    a%d[j] = R%d::init();", reds[i]->id, reds[i]->id);
    }
    line(c, "if (active) {");
    open_scope(c);
    /* 8 rows a step where every state is one or two words (sum, max, ...):
     * eight independent loads in flight per thread.  On the H200 colsum
     * took, with 4 rows a step against 8: 143.1 -> 130.8 us at 96 columns,
     * 126.4 -> 103.5 at 333, 131.3 -> 103.4 at 3001, 67.8 -> 66.8 at 8192
     * (2^26 elements).  Welford and arg states keep 4 ("#pragma unroll
     * (V > 1 ? 4 : 1)" made ptxas spill the element-wise Welford kernel
     * of tests/codegen/kernel-reduce-middle.fuse). */
    line(c, cols_small_states(reds, nreds) ? "#pragma unroll 8" : "#pragma unroll 4");
    line(c, "for (I r = r0 + ty; r < r1; r += 8) {");
    open_scope(c);
    decompose_list(c, "r", rg, nr);
    RoundCtx rc = {reds, nreds, 1, 0, 0, 0};
    if (vecok) {
        /* V adjacent columns: 16-byte loads of the full accesses */
        decompose_list(c, "civ", ig, ni);
        line(c, "if (V > 1) {");
        open_scope(c);
        for (int a = 0; a < c->nacc; a++)
            if (acc_full(c, &c->acc[a])) {
                Buf off = {0};
                acc_offset(c, &c->acc[a], "I", &off);
                line(c, "const fz_vec<%s, V> va%d = *(const fz_vec<%s, V> *)(in%d + %s);", stype(MDT(c, c->acc[a].node)),
                     a, stype(MDT(c, c->acc[a].node)), c->inbuf[c->acc[a].node->id], off.data);
                buf_free(&off);
            }
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        open_scope(c);
        char inner[48];
        snprintf(inner, sizeof inner, "(%s + j)", c->gi[ig[0]]);
        const char *saved = c->gi[ig[0]];
        c->gi[ig[0]] = inner;
        c->vec = 1;
        c->accidx = "[j]";
        round_elem(c, &rc);
        c->vec = 0;
        c->gi[ig[0]] = saved;
        close_scope(c);
        close_scope(c);
        line(c, "else {");
        open_scope(c);
        c->accidx = "[0]";
        round_elem(c, &rc);
        close_scope(c);
    } else {
        decompose_list(c, "civ", ig, ni);
        c->accidx = "[0]";
        round_elem(c, &rc);
    }
    c->accidx = NULL;
    close_scope(c);
    close_scope(c);
    line(c, "/* combine the 8 warps' states of each column in warp order */");
    for (int i = 0; i < nreds; i++) {
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++)");
        line(c, "    sh%d[ty][tx * V + j] = a%d[j];", reds[i]->id, reds[i]->id);
    }
    emit_cols_warp_combine(c, reds, nreds);
    line(c, "int done = nsplit == 1;");
    line(c, "if (!done) {");
    open_scope(c);
    /* Split over blocks: warp 0 stores its columns' states into the split's
     * partial slots, read back in split order by the block that takes the
     * tile's last ticket (ordered); or, with --atomic-reduce, into one
     * accumulator word per (outer index, column) at
     * zscratch + cnt_bytes + 8 nO nI i with an atomic, which the last block
     * reads and puts back to 0 (the identity of every encoding).  The last
     * block also puts the counter back to 0, for the next call: zscratch is
     * left all zero, as the kernel found it. */
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        if (c->atomic)
            line(c, "A%d::W *acc%d = (A%d::W *)(zscratch + cnt_bytes + (I)%d * nO * nI) + (I)o * nI + civ;", id,
                 id, id, i * 8);
        else
            line(c, "R%d::S *part%d = (R%d::S *)(scratch + cnt_bytes + (I)%d * nsplit * nO * nI);", id, id, id,
                 i * cols_slot(c));
        line(c, "if (ty == 0 && active)");
        line(c, "#pragma unroll");
        line(c, "    for (int j = 0; j < V; j++)");
        if (c->atomic)
            line(c, "        A%d::put(acc%d + j, a%d[j]);", id, id, id);
        else
            line(c, "        part%d[((I)o * nsplit + blockIdx.z) * nI + civ + j] = a%d[j];", id, id);
    }
    line(c, "__threadfence();");
    line(c, "__syncthreads();");
    line(c, "unsigned *cnt = (unsigned *)zscratch + (o * (I)gridDim.x + blockIdx.x);");
    emit_ticket(c, "cnt", "(unsigned)nsplit - 1");
    line(c, "done = fz_last;");
    line(c, "if (done) {");
    open_scope(c);
    line(c, "__threadfence();");
    /* the 8-warp combine for states of one or two words without division;
     * Welford (var, std) and argmax states keep one warp: their combine
     * divides or compares indices, and ptxas spilled the 8-warp form */
    int par = !c->atomic && cols_small_states(reds, nreds);
    if (par) {
        /* 16-byte variants: all 8 warps read the partials, warp ty the
         * splits ty, ty + 8, ..., 4 loads in flight each; then the 8 states
         * combine in warp order.  On the H200 colsum's symbolic build took
         * 161.8 us before the 4-row unroll, 150.7 with it, 142.8 with this
         * as well (separate runs).  The element-wise variant (V == 1) keeps
         * one warp: with the new form odd widths ran slower (3001 columns:
         * 40% of copy against 59%), cause not isolated. */
        line(c, "if (V > 1) {");
        open_scope(c);
        for (int i = 0; i < nreds; i++) {
            int id = reds[i]->id;
            line(c, "#pragma unroll");
            line(c, "for (int j = 0; j < V; j++) {");
            line(c, "    a%d[j] = R%d::init();", id, id);
            line(c, "    if (active) {");
            line(c, "        #pragma unroll 4");
            line(c, "        for (int z = ty; z < nsplit; z += 8)");
            line(c, "            a%d[j] = R%d::comb(a%d[j], R%d::ldcg(part%d + ((I)o * nsplit + z) * nI + civ + j));",
                 id, id, id, id, id);
            line(c, "    }");
            line(c, "    sh%d[ty][tx * V + j] = a%d[j];", id, id);
            line(c, "}");
        }
        emit_cols_warp_combine(c, reds, nreds);
        close_scope(c);
        line(c, "else");
    }
    line(c, "if (ty == 0 && active) {");
    open_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        line(c, "#pragma unroll");
        line(c, "for (int j = 0; j < V; j++) {");
        if (c->atomic) {
            line(c, "    a%d[j] = A%d::get(acc%d + j);", id, id, id);
            line(c, "    acc%d[j] = 0; /* the identity, for the next call */", id);
        } else {
            line(c, "    a%d[j] = R%d::init();", id, id);
            line(c, "    for (int z = 0; z < nsplit; z++)");
            line(c, "        a%d[j] = R%d::comb(a%d[j], R%d::ldcg(part%d + ((I)o * nsplit + z) * nI + civ + j));",
                 id, id, id, id, id);
        }
        line(c, "}");
    }
    close_scope(c);
    line(c, "if (threadIdx.x == 0)");
    line(c, "    *cnt = 0u; /* ready for the next call */");
    close_scope(c);
    close_scope(c);
    line(c, "if (done && ty == 0 && active) {");
    open_scope(c);
    line(c, "#pragma unroll");
    line(c, "for (int j = 0; j < V; j++) {");
    open_scope(c);
    decompose_list(c, "(civ + j)", ig, ni);
    for (int i = 0; i < nreds; i++) {
        finish_reduction(c, reds[i], "[j]", "R");
    }
    for (int i = 0; i < k->noutputs; i++)
        if (!out_is_elem(c, i))
            emit_store(c, i, "I");
    close_scope(c);
    close_scope(c);
    line(c, "__syncthreads(); /* sh is reused by the next outer index */");
    close_scope(c);
    close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    buf_free(&ps);
}

/* ------------------------------------------------------------------ */
/* Entry points.                                                       */

/* One extern "C" __global__ per variant: a call of the template body with
 * the index type and the compile-time shape of the variant.  In the nvrtc
 * target each one is guarded by its K_INDEX (base + i): fusert compiles the
 * source once per kernel with -DFUSERT_KERNEL=<K_INDEX>, which leaves that
 * wrapper alone, so only its body template is instantiated and a launch
 * pays for the one variant it picks.  Without the macro every kernel is
 * there (a whole-module compile, as older fusert does). */
static void emit_wrappers(KCtx *c, const Variant *v, int nv, int base)
{
    Buf ps = {0}, as = {0};
    int scalar = c->k->kind == KK_REDUCE && c->k->layout == RL_SCALAR;
    int cols = is_cols_scheme(c);
    body_params(c, &ps, scalar ? ", unsigned char *scratch, unsigned char *zscratch"
                              : cols ? ", unsigned char *scratch, unsigned char *zscratch, int nsplit" : NULL);
    body_args(c, &as, scalar ? ", scratch, zscratch" : cols ? ", scratch, zscratch, nsplit" : NULL);
    /* the windowed looped kernels take one more: wrev (emit_row_body) */
    Buf psw = {0}, asw = {0};
    body_params(c, &psw, ", int wrev");
    body_args(c, &asw, ", wrev");
    int guard = c->o && c->o->target == TARGET_NVRTC;
    for (int i = 0; i < nv; i++) {
        const char *I = v[i].i64 ? "long long" : "int";
        int wl = is_wloop(&v[i]);
        const char *pd = wl ? psw.data : ps.data;
        if (guard)
            line(c, "#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == %d", base + i);
        if (v[i].kind == VK_ROW_C && v[i].sm)
            /* a block a row, its row in shared memory: with only the
             * block size (1024) ptxas held the windowed bf16 body to 32
             * registers and spilled 80 bytes a thread (sm_90); (1024, 1)
             * gives it 46 and no spill; (512, 2) two blocks of 512 */
            line(c, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s)", v[i].bs, 1024 / v[i].bs,
                 v[i].name, pd);
        else if (v[i].kind == VK_ROW_C && v[i].cl > 1)
            /* two blocks of 512 a multiprocessor (64 registers): one loads
             * while the other reduces and writes (layernorm's took 86
             * registers unbounded) */
            line(c, "extern \"C\" __global__ void __launch_bounds__(%d, %d) FZ_CLUSTER(%d) %s(%s)", v[i].bs,
                 1024 / v[i].bs, v[i].cl, v[i].name, pd);
        else if (wl && v[i].bs < 1024)
            /* the windowed looped body in blocks of 512: at least two a
             * multiprocessor (64 registers), or it would not be taken
             * over the block of 1024 */
            line(c, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s)", v[i].bs, 1024 / v[i].bs,
                 v[i].name, pd);
        else
            line(c, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s)", v[i].bs, v[i].name, pd);
        line(c, "{");
        switch (v[i].kind) {
        case VK_LOOP_S: line(c, "    %s_s_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_LOOP_V: line(c, "    %s_v_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_LOOP_W: line(c, "    %s_w_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_ROW_C: {
            char extra[32] = "";
            int ne = 0;
            if (v[i].sm) {
                line(c, "    %s_rs_body<%s, %d, %d, %d%s>(%s);", c->k->name, I, v[i].tpr, v[i].bs, v[i].vw,
                     c->window ? (v[i].sh ? ", true" : ", false") : "", as.data);
                break;
            }
            if (c->window)
                ne += snprintf(extra + ne, sizeof extra - (size_t)ne, ", %s", v[i].sh ? "true" : "false");
            if (c->cluster)
                snprintf(extra + ne, sizeof extra - (size_t)ne, ", %d", v[i].cl);
            line(c, "    %s_rc_body<%s, %d, %d, %d, %d%s>(%s);", c->k->name, I, v[i].tpr, v[i].cap, v[i].bs, v[i].vw,
                 extra, as.data);
            break;
        }
        case VK_ROW_L:
            if (v[i].vw > 1)
                line(c, "    %s_%s_body<%s, %d, %d, %d>(%s);", c->k->name, v[i].sh ? "rlw" : "rlv", I, v[i].tpr,
                     v[i].bs, v[i].vw, wl ? asw.data : as.data);
            else
                line(c, "    %s_rl_body<%s, %d, %d>(%s);", c->k->name, I, v[i].tpr, v[i].bs, as.data);
            break;
        case VK_SCALAR: line(c, "    %s_body<%s, %d, %d>(%s);", c->k->name, I, v[i].bs, v[i].vw, as.data); break;
        case VK_COLS: line(c, "    %s_cols_body<%s, %d>(%s);", c->k->name, I, v[i].vw, as.data); break;
        }
        line(c, "}");
        if (guard)
            line(c, "#endif");
    }
    buf_free(&ps);
    buf_free(&as);
    buf_free(&psw);
    buf_free(&asw);
}

/* emit_row_body for a body whose rows are a block each (the shared-memory
 * and looped vector ones): no cluster, no rows sharing a warp, whatever
 * the kernel's other variants need (row_end is R) */
static void emit_block_row_body(KCtx *c, int cached)
{
    int sw = c->subwarp, cl = c->cluster;
    c->subwarp = c->cluster = 0;
    emit_row_body(c, cached);
    c->subwarp = sw;
    c->cluster = cl;
}

/* The device source of a module: the preamble, then per kernel its comment,
 * template bodies and extern "C" wrappers (one per variant). */
void emit_cuda_kernels(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    for (int i = 0; preamble[i]; i++)
        buf_puts(out, preamble[i]);
    int any_atomic = 0;
    for (int p = 0; p < nplans && o->atomic_reduce && !any_atomic; p++)
        for (int ki = 0; ki < plans[p]->nkernels && !any_atomic; ki++)
            any_atomic = emit_cuda_combine(plans[p]->fn, &plans[p]->kernels[ki], 1, NULL, 0) == COMBINE_ATOMIC;
    for (int i = 0; any_atomic && atomic_preamble[i]; i++)
        buf_puts(out, atomic_preamble[i]);
    int kindex = 0; /* K_INDEX of the kernel's first variant */
    int dyn_smem = 0; /* FZ_DYN_SMEM declared (before the first _rs_body) */
    for (int p = 0; p < nplans; p++) {
        const Plan *pl = plans[p];
        for (int ki = 0; ki < pl->nkernels; ki++) {
            KCtx c;
            kctx_init(&c, pl->fn, &pl->kernels[ki], o, out);
            Variant v[MAX_VARIANTS];
            int nv = plan_variants(&c, v);
            buf_putc(out, '\n');
            kernel_comment(&c);
            const Kernel *k = c.k;
            if (k->kind == KK_LOOP)
                emit_loop_bodies(&c, loop_vec_width(&c));
            else if (is_cols_scheme(&c))
                emit_cols_body(&c);
            else if (!is_row_scheme(k))
                emit_scalar_body(&c);
            else {
                int cached = 0, smem = 0;
                for (int i = 0; i < nv; i++) {
                    cached |= v[i].kind == VK_ROW_C && !v[i].sm;
                    smem |= v[i].kind == VK_ROW_C && v[i].sm;
                    c.subwarp |= v[i].kind == VK_ROW_C && v[i].tpr < 32;
                    c.window |= v[i].kind == VK_ROW_C && v[i].sh;
                    c.cluster |= v[i].kind == VK_ROW_C && v[i].cl > 1;
                }
                if (cached)
                    emit_row_body(&c, 1);
                if (smem && !dyn_smem) {
                    buf_puts(out, "/* Dynamic shared memory (a launch's shared bytes), 16-byte aligned; the\n"
                                  " * CPU emulator of the tests defines FZ_DYN_SMEM itself. */\n"
                                  "#ifndef FZ_DYN_SMEM\n"
                                  "extern __shared__ __align__(16) unsigned char fz_dyn_smem[];\n"
                                  "#define FZ_DYN_SMEM fz_dyn_smem\n"
                                  "#endif\n");
                    dyn_smem = 1;
                }
                if (smem) {
                    c.smem = 1;
                    emit_block_row_body(&c, 1);
                    c.smem = 0;
                }
                emit_row_body(&c, 0);
                /* the looped vector bodies: aligned (rlv), windowed (rlw) */
                for (int w = 0; w < 2; w++)
                    for (int i = 0; i < nv; i++)
                        if (v[i].kind == VK_ROW_L && v[i].vw > 1 && v[i].sh == w) {
                            c.loopvec = v[i].vw;
                            c.loopwin = w;
                            emit_block_row_body(&c, 0);
                            c.loopvec = c.loopwin = 0;
                            break;
                        }
            }
            emit_wrappers(&c, v, nv, kindex);
            kindex += nv;
            if (c.ind != 0)
                ICE("unbalanced indentation in a generated kernel");
            kctx_free(&c);
        }
    }
}

/* K_INDEX order: plans, kernels, variants, exactly as the launchers count. */
void emit_cuda_kernel_names(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    int first = 1;
    for (int p = 0; p < nplans; p++)
        for (int ki = 0; ki < plans[p]->nkernels; ki++) {
            KCtx c;
            Buf dummy = {0};
            kctx_init(&c, plans[p]->fn, &plans[p]->kernels[ki], o, &dummy);
            Variant v[MAX_VARIANTS];
            int nv = plan_variants(&c, v);
            for (int i = 0; i < nv; i++) {
                buf_printf(out, "%s\"%s\"", first ? "" : ", ", v[i].name);
                first = 0;
            }
            kctx_free(&c);
            buf_free(&dummy);
        }
}

/* ------------------------------------------------------------------ */
/* Launch stubs (host code, valid C11 and CUDA C++).                   */

/* host: group sizes and their magic numbers (used by int32 variants) */
static void host_group_sizes(KCtx *c, Buf *b)
{
    for (int g = 0; g < c->ng; g++) {
        Buf s = {0};
        span_host(c, c->gfirst[g], c->glast[g], &s);
        buf_printf(b, "    const int64_t gs%d = %s;\n", g, s.data);
        buf_printf(b, "    unsigned m%d, s%d;\n", g, g);
        buf_printf(b, "    fzk_magic(gs%d, &m%d, &s%d);\n", g, g, g);
        buf_free(&s);
    }
}

/* host: the same product in int64_t */
static void host_product(const KCtx *c, int red, Buf *b) { product_of(c, red, "(int64_t)1", b); }

/* host: one FUSEC_LAUNCH of a 1-D grid */
static void host_launch(Buf *b, const char *indent, int kidx, const Variant *v, const char *grid,
                        const char *block)
{
    buf_printf(b, "%sreturn FUSEC_LAUNCH(%d, %s, %s, 1, 1, %s, 1, 1, 0, stream, %s);\n", indent, kidx, v->name,
               grid, block, is_wloop(v) ? "wargs" : "args");
}

/* nO, R, nI of the column scheme as host expressions */
static void host_cols_sizes(KCtx *c, Buf *b)
{
    int oe = 0, re = 0;
    cols_split(c, &oe, &re);
    const char *nm[3] = {"nO", "R", "nI"};
    for (int seg = 0; seg < 3; seg++) {
        int lo = seg == 0 ? 0 : seg == 1 ? oe : re, hi = seg == 0 ? oe : seg == 1 ? re : c->ng;
        buf_printf(b, "    const int64_t %s = (int64_t)1", nm[seg]);
        for (int g = lo; g < hi; g++) {
            Buf s = {0};
            span_host(c, c->gfirst[g], c->glast[g], &s);
            buf_printf(b, " * %s", s.data);
            buf_free(&s);
        }
        buf_puts(b, ";\n");
    }
}

/* Launcher: `int rvec<i>` says whether variant i's 16-byte row accesses
 * hold: rows of whole vw-element vectors, every row-shaped and per-column
 * input and every vector-stored output aligned. */
static void host_row_vec_check(KCtx *c, Buf *b, int i, int vw)
{
    buf_printf(b, "    int rvec%d = rlen %% %d == 0;\n", i, vw);
    for (int a = 0; a < c->nacc; a++)
        if (acc_cached(c, &c->acc[a]) || acc_rowvec(c, &c->acc[a], vw))
            buf_printf(b, "    rvec%d = rvec%d && (uintptr_t)in%d %% %d == 0;\n", i, i, c->inbuf[c->acc[a].node->id],
                       vw * dtype_size(MDT(c, c->acc[a].node)));
    for (int o = 0; o < c->k->noutputs; o++)
        if (out_is_elem(c, o) && depends_on_red(c, c->k->outputs[o]))
            buf_printf(b, "    rvec%d = rvec%d && (uintptr_t)out%d %% %d == 0;\n", i, i, o,
                       vw * dtype_size(MDT(c, c->k->outputs[o])));
}

/* Windowed row variants: every row-shaped pointer at the same element
 * offset modulo the vector vw, so one shift serves them all.  Prints rsh
 * and rwin the first time a launcher asks (*done). */
static void host_row_window_check(KCtx *c, Buf *b, int vw, int *done)
{
    if (*done)
        return;
    *done = 1;
    int first = 1;
    for (int a = 0; a < c->nacc + c->k->noutputs; a++) {
        Access x;
        char p[32];
        if (!row_shaped(c, a, &x, p, sizeof p))
            continue;
        int sz = dtype_size(MDT(c, x.node));
        if (first)
            buf_printf(b, "    const uintptr_t rsh = (uintptr_t)%s / %d %% %d;\n"
                          "    int rwin = (uintptr_t)%s %% %d == 0;\n", p, sz, vw, p, sz);
        else
            buf_printf(b, "    rwin = rwin && (uintptr_t)%s %% %d == 0 && (uintptr_t)%s / %d %% %d == rsh;\n", p,
                       sz, p, sz, vw);
        first = 0;
    }
}

/* The grid of the windowed looped kernels: a block a row, at most 32 a
 * multiprocessor (the blocks loop over the rest) */
static void host_row_wloop_grid(Buf *b, const char *in)
{
    buf_printf(b, "%sblocks = nrows;\n%sif (blocks > (int64_t)sm_count * 32)\n%s    blocks = (int64_t)sm_count * 32;\n",
               in, in, in);
}

/* Which of the windowed looped kernels with int indices v[wi] (_blockw,
 * blocks of 1024) and v[wi + 1] (_blockw512) to take: 1024 where a
 * multiprocessor holds two such blocks (the registers ptxas gave the
 * kernel, asked at launch), else 512, which it then holds two or three
 * of.  Sets wbs, wb1 and wb2 (the blocks a multiprocessor holds of each;
 * 0: not asked, or the runtime cannot say). */
static void host_row_wloop_choose(Buf *b, const Variant *v, int wi, int base, const char *in)
{
    buf_printf(b, "%sfusert_status wst = FZK_BLOCKS_PER_SM(%d, %s, 1024, &wb1);\n", in, base + wi, v[wi].name);
    buf_printf(b, "%sif (wst != FUSERT_SUCCESS)\n%s    return wst;\n%swbs = 1024;\n", in, in, in);
    buf_printf(b, "%sif (wb1 < 2) {\n", in);
    buf_printf(b, "%s    wst = FZK_BLOCKS_PER_SM(%d, %s, 512, &wb2);\n", in, base + wi + 1, v[wi + 1].name);
    buf_printf(b, "%s    if (wst != FUSERT_SUCCESS)\n%s        return wst;\n%s    wbs = 512;\n%s}\n", in, in, in, in);
}

/* The windowed looped kernels with int indices before the shared-memory
 * variants, v[i] and v[i + 1] (host_row_wloop_choose), taken where the
 * rows in flight fit the device's L2 (each row is read once per reduction
 * round and once more to write): the block chosen, else one of 1024 where
 * those fit.  On the H200 (2^26 elements, rows of 20001 to 100001) f32
 * softmax and rmsnorm took 32 registers: two blocks of 1024 beat four of
 * 512 (softmax at 20001 187.5 against 231.8 us, fewer rows in flight) and
 * the rows in shared memory (219.7) up to 40001; the bf16 kernels (36 to
 * 64 registers) held one block of 1024 and two or three of 512, and 512
 * won (softmax at 30001 129.8 against 188.1, 156.2 in shared memory);
 * f32 layernorm (48 registers) held one of 1024 and three of 512, which
 * won at 20001 (230.2 against 279.8) and lost from 40001 (297.2 against
 * 261.8), where its 396 rows in flight no longer fit L2 (the first device
 * call of the fourteenth session; since the partial vectors left the loop,
 * row_wloop_pass, the six benchmark kernels take at most 32 registers
 * and blocks of 1024, and 512 is for bodies of more).  Rows past L2
 * take shared memory where it holds them, else host_row_wloop_rest.  The
 * queries are skipped when the rows of one block a multiprocessor do not
 * fit (in the nvrtc target each compiles its kernel).  Each launch passes
 * wrev from the rows in flight of the block it takes (fzk_row_rev). */
static void host_row_wloop_fit(KCtx *c, Buf *b, const Variant *v, int i, int base)
{
    buf_printf(b, "    const int64_t wrow = rlen * %d; /* bytes a row reads */\n", row_read_bytes(c));
    buf_puts(b, "    int wbs = 0, wb1 = 0, wb2 = 0, l2 = 0;\n    if (!big && rwin) {\n"
                "        fusert_status lst = FZK_L2_QUERY(&l2);\n        if (lst != FUSERT_SUCCESS)\n"
                "            return lst;\n"
                "        if (fzk_row_flight(nrows, 1, sm_count) * wrow <= (int64_t)l2) {\n");
    host_row_wloop_choose(b, v, i, base, "            ");
    buf_puts(b, "            /* the bytes the rows in flight read, for each block */\n"
                "            const int64_t wr1 = fzk_row_flight(nrows, wb1, sm_count) * wrow;\n"
                "            const int64_t wr2 = fzk_row_flight(nrows, wb2, sm_count) * wrow;\n");
    host_row_wloop_grid(b, "            ");
    buf_puts(b, "            if (wbs == 512 && wr2 <= (int64_t)l2) {\n"
                "                wrev = fzk_row_rev(wr2, l2);\n");
    host_launch(b, "                ", base + i + 1, &v[i + 1], "(unsigned)blocks", "512");
    buf_puts(b, "            }\n            if (wr1 <= (int64_t)l2) {\n"
                "                wrev = fzk_row_rev(wr1, l2);\n");
    host_launch(b, "                ", base + i, &v[i], "(unsigned)blocks", "1024");
    buf_puts(b, "            }\n        }\n    }\n");
}

/* After the shared-memory variants: the windowed looped kernels with int
 * indices (v[wi], v[wi + 1]; host_row_wloop_choose unless
 * host_row_wloop_fit chose already) for rows no shared-memory variant
 * took, then the one with 64-bit indices, v[i] (blocks of 1024), for the
 * tensors of 2^31 elements or more */
static void host_row_wloop_rest(Buf *b, const Variant *v, int wi, int i, int base)
{
    if (wi < 0)
        ICE("the windowed looped kernels with int indices are missing");
    buf_puts(b, "    if (!big && rwin) {\n        if (!wbs) {\n");
    host_row_wloop_choose(b, v, wi, base, "            ");
    buf_puts(b, "        }\n");
    host_row_wloop_grid(b, "        ");
    buf_puts(b, "        wrev = fzk_row_rev(fzk_row_flight(nrows, wbs == 1024 ? wb1 : wb2, sm_count) * wrow, l2);\n");
    buf_puts(b, "        if (wbs == 1024)\n");
    host_launch(b, "            ", base + wi, &v[wi], "(unsigned)blocks", "1024");
    host_launch(b, "        ", base + wi + 1, &v[wi + 1], "(unsigned)blocks", "512");
    /* 2^31 elements or more: the L2 was not asked yet; rows in flight
     * counted at a block a multiprocessor (the kernel's occupancy is not
     * asked) */
    buf_puts(b, "    }\n    if (rwin) {\n        if (!l2) {\n"
                "            fusert_status lst = FZK_L2_QUERY(&l2);\n            if (lst != FUSERT_SUCCESS)\n"
                "                return lst;\n        }\n");
    host_row_wloop_grid(b, "        ");
    buf_puts(b, "        wrev = fzk_row_rev(fzk_row_flight(nrows, 1, sm_count) * wrow, l2);\n");
    host_launch(b, "        ", base + i, &v[i], "(unsigned)blocks", "1024");
    buf_puts(b, "    }\n");
}

/* The stub of one kernel (emit.h): recompute the group sizes and magic
 * numbers from dims, pick the variant (alignment, row length, int32 range)
 * and the grid from sm_count, and launch through FUSEC_LAUNCH.  Every size
 * test is done here, on the host, once per call. */
static void emit_launcher(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    int scalar = k->kind == KK_REDUCE && k->layout == RL_SCALAR;
    int nreds = 0;
    for (int i = 0; i < k->nvalues; i++)
        nreds += op_info[k->values[i]->op].cls == OPC_REDUCE;
    buf_printf(b, "\n/* launch %s */\n", k->name);
    buf_printf(b, "static size_t %s_scratch_bytes(const int64_t *dims)\n{\n    (void)dims;\n", k->name);
    int cols = is_cols_scheme(c);
    if (scalar && c->atomic)
        buf_printf(b, "    return %d + %d; /* ticket counter, then one atomic accumulator per reduction */\n",
                   SCALAR_HEAD, nreds * 8);
    else if (scalar)
        buf_printf(b, "    return %d + (size_t)%d * %d; /* ticket counter, then partials */\n", SCALAR_HEAD,
                   nreds * SCALAR_SLOT, SCALAR_MAX_BLOCKS);
    else if (cols && c->atomic) {
        host_cols_sizes(c, b);
        buf_printf(b, "    (void)R;\n"
                      "    /* tile counters, then per reduction one atomic accumulator per column */\n"
                      "    return (size_t)(fzk_cols_cnt_bytes(nO, nI) + (int64_t)%d * nO * nI);\n",
                   nreds * 8);
    } else if (cols) {
        host_cols_sizes(c, b);
        buf_printf(b, "    (void)R;\n"
                      "    /* tile counters, then per reduction the partials of the most splits */\n"
                      "    return (size_t)(fzk_cols_cnt_bytes(nO, nI) + (int64_t)%d * fzk_cols_splits(nO * nI) * nO * nI);\n",
                   nreds * cols_slot(c));
    } else
        buf_puts(b, "    return 0;\n");
    buf_puts(b, "}\n");
    /* What must be all zero when the kernel starts: the counters, which the
     * last block of each tile leaves at zero again, and the atomic
     * accumulators (with --atomic-reduce that is the whole scratch);
     * partials are written before they are read. */
    if (k->kind == KK_REDUCE) { /* NAME_run asks the reduce kernels only */
        buf_printf(b, "static size_t %s_scratch_zero_bytes(const int64_t *dims)\n{\n    (void)dims;\n", k->name);
        if ((scalar || cols) && c->atomic)
            buf_printf(b, "    return %s_scratch_bytes(dims);\n", k->name);
        else if (scalar)
            buf_printf(b, "    return %d;\n", SCALAR_HEAD);
        else if (cols) {
            host_cols_sizes(c, b);
            buf_puts(b, "    (void)R;\n    return (size_t)fzk_cols_cnt_bytes(nO, nI);\n");
        } else
            buf_puts(b, "    return 0;\n");
        buf_puts(b, "}\n");
    }
    buf_printf(b,
               "static fusert_status %s_launch(void *const *bufs, const double *scalars, const int64_t *dims,\n"
               "        void *scratch, void *zscratch, int sm_count, fusert_stream stream)\n{\n",
               k->name);
    Buf decl = {0}, args = {0};
    host_common_args(c, &decl, &args);
    buf_puts(b, decl.data);
    buf_puts(b, "    (void)bufs;\n    (void)scalars;\n    (void)dims;\n    (void)scratch;\n    (void)zscratch;\n");
    host_group_sizes(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(&args, ", (void *)&m%d, (void *)&s%d", g, g);
    if (scalar || cols) {
        buf_puts(b, "    unsigned char *scr = (unsigned char *)scratch;\n");
        buf_puts(b, "    unsigned char *zscr = (unsigned char *)zscratch;\n");
        buf_puts(&args, ", (void *)&scr, (void *)&zscr");
    }
    if (cols) {
        buf_puts(b, "    int nsplit = 1;\n");
        buf_puts(&args, ", (void *)&nsplit");
    }
    buf_printf(b, "    void *args[] = {%s};\n", args.data);
    int wloop = 0;
    for (int i = 0; i < nv; i++)
        wloop |= is_wloop(&v[i]);
    if (wloop)
        /* wrev: whether every second pass reads the row from its end
         * (fzk_row_rev, row_elem_loop_vec) */
        buf_printf(b, "    int wrev = 0;\n    void *wargs[] = {%s, (void *)&wrev};\n", args.data);
    buf_puts(b, "    if (sm_count < 1)\n        sm_count = 108;\n");
    Buf n = {0};
    if (k->kind == KK_LOOP) {
        int V = loop_vec_width(c);
        host_product(c, -1, &n);
        buf_printf(b, "    const int64_t n = %s;\n", n.data);
        buf_puts(b, "    if (n == 0)\n        return FUSERT_SUCCESS;\n");
        if (V > 1) {
            buf_printf(b, "    int vec = 1; /* 16-byte accesses need aligned pointers%s */\n",
                       c->ng > 1 ? " and whole vectors per row" : "");
            for (int a = 0; a < c->nacc; a++)
                if (acc_full(c, &c->acc[a]))
                    buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                               V * dtype_size(MDT(c, c->acc[a].node)));
            for (int i = 0; i < k->noutputs; i++) {
                Access a = {k->outputs[i], {0}};
                out_map(c, k->outputs[i], a.map);
                if (acc_full(c, &a))
                    buf_printf(b, "    vec = vec && (uintptr_t)out%d %% %d == 0;\n", i,
                               V * dtype_size(MDT(c, k->outputs[i])));
            }
            if (loop_needs_wrap(c, V)) {
                /* aligned, but rows that do not hold whole vectors: the
                 * wrapping body, when a row holds at least one vector */
                buf_printf(b, "    const int vecw = vec && gs%d %% %d != 0 && gs%d >= %d;\n", c->ng - 1, V,
                           c->ng - 1, V);
                buf_printf(b, "    vec = vec && gs%d %% %d == 0;\n", c->ng - 1, V);
                buf_printf(b, "    const int64_t per = vec || vecw ? %d : 1;\n", V);
            } else {
                if (c->ng > 1)
                    buf_printf(b, "    vec = vec && gs%d %% %d == 0;\n", c->ng - 1, V);
                buf_printf(b, "    const int64_t per = vec ? %d : 1;\n", V);
            }
        } else {
            buf_puts(b, "    const int vec = 0;\n    const int64_t per = 1;\n");
        }
        /* the whole array in one pass: a thread takes one double step (two
         * vectors, both loads in flight), or one vector when the body does
         * little arithmetic a byte (loop_light).  The int32 bound is the
         * largest index the body forms: below n plus twice the grid's
         * elements, or with one vector a thread twice the grid's elements */
        const int light = loop_light(c);
        if (light)
            buf_puts(b, "    /* light: one vector a thread */\n");
        buf_printf(b, "    int64_t blocks = (n + per * %d - 1) / (per * %d);\n", light ? 256 : 512,
                   light ? 256 : 512);
        buf_puts(b, "    if (blocks > (int64_t)1 << 30)\n        blocks = (int64_t)1 << 30;\n");
        buf_printf(b, "    const int big = %s2 * blocks * 256 * per >= (int64_t)2147483647;\n    (void)big;\n",
                   light ? "" : "n + ");
        buf_puts(b, "    (void)vec;\n");
        for (int i = 0; i < nv; i++) {
            if (v[i].kind == VK_LOOP_V && v[i].i64)
                buf_puts(b, "    if (vec)\n");
            else if (v[i].kind == VK_LOOP_V)
                buf_puts(b, "    if (vec && !big)\n");
            else if (v[i].kind == VK_LOOP_W)
                buf_puts(b, "    if (vecw && !big)\n");
            else if (!v[i].i64)
                buf_puts(b, "    if (!big)\n");
            int last = i == nv - 1;
            host_launch(b, last ? "    " : "        ", base + i, &v[i], "(unsigned)blocks", "256");
        }
    } else if (cols) {
        host_cols_sizes(c, b);
        buf_printf(b, "    if (nO == 0 || nI == 0)\n        return FUSERT_SUCCESS;\n"
                      "    if (!scratch || !zscratch)\n        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "
                      "\"%s: no scratch buffer\");\n", k->name);
        int vw = v[0].vw;
        if (vw > 1) {
            buf_printf(b, "    int vec = nI %% %d == 0;\n", vw);
            for (int a = 0; a < c->nacc; a++)
                if (acc_full(c, &c->acc[a]))
                    buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                               vw * dtype_size(MDT(c, c->acc[a].node)));
            buf_printf(b, "    const int64_t tiles_x = (nI + (vec ? %d : 32) - 1) / (vec ? %d : 32);\n", 32 * vw, 32 * vw);
        } else
            buf_puts(b, "    const int64_t tiles_x = (nI + 31) / 32;\n");
        buf_puts(b, "    const int64_t grid_y = nO < 65535 ? nO : 65535;\n"
                    "    /* split the reduced range into one wave of about four blocks per\n"
                    "     * multiprocessor; a few outputs (two tiles) into several waves */\n"
                    "    int64_t ns = nO * nI > 256 ? (int64_t)sm_count * 4 / (tiles_x * grid_y)\n"
                    "                               : ((int64_t)sm_count * 32 + tiles_x * grid_y - 1) / (tiles_x * grid_y);\n");
        buf_puts(b, "    if (ns > fzk_cols_splits(nO * nI))\n        ns = fzk_cols_splits(nO * nI);\n");
        buf_puts(b, "    if (ns > R / 64)\n        ns = R / 64;\n    if (ns < 1)\n        ns = 1;\n"
                    "    nsplit = (int)ns;\n");
        if (vw > 1) {
            buf_puts(b, "    if (vec)\n    ");
            buf_printf(b, "    return FUSEC_LAUNCH(%d, %s, (unsigned)tiles_x, (unsigned)grid_y, (unsigned)ns, 256, 1, 1, 0, "
                          "stream, args);\n", base, v[0].name);
        }
        buf_printf(b, "    return FUSEC_LAUNCH(%d, %s, (unsigned)tiles_x, (unsigned)grid_y, (unsigned)ns, 256, 1, 1, 0, "
                      "stream, args);\n", base + nv - 1, v[nv - 1].name);
    } else if (scalar) {
        host_product(c, -1, &n);
        buf_printf(b, "    const int64_t n = %s;\n", n.data);
        buf_printf(b, "    if (!scratch || !zscratch)\n        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "
                      "\"%s: no scratch buffer\");\n", k->name);
        buf_puts(b, "    int64_t blocks = (n + 511) / 512;\n");
        buf_printf(b, "    if (blocks > (int64_t)sm_count * 4)\n        blocks = (int64_t)sm_count * 4;\n"
                      "    if (blocks > %d)\n        blocks = %d;\n    if (blocks < 1)\n        blocks = 1;\n",
                   SCALAR_MAX_BLOCKS, SCALAR_MAX_BLOCKS);
        if (v[0].vw > 1) {
            /* vector variant: aligned full accesses */
            buf_puts(b, "    int vec = 1;\n");
            for (int a = 0; a < c->nacc; a++)
                if (acc_full(c, &c->acc[a]))
                    buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                               v[0].vw * dtype_size(MDT(c, c->acc[a].node)));
            buf_puts(b, "    if (vec) {\n");
            /* contiguous chunks of T steps (fzk_scalar_steps) */
            buf_printf(b, "        const int64_t steps = (n / %d * %d + %d) / %d;\n", v[0].vw, v[0].vw,
                       512 * v[0].vw - 1, 512 * v[0].vw);
            buf_puts(b, "        const int64_t T = fzk_scalar_steps(steps);\n"
                        "        blocks = (steps + T - 1) / T;\n        if (blocks < 1)\n            blocks = 1;\n");
            host_launch(b, "        ", base, &v[0], "(unsigned)blocks", "512");
            buf_puts(b, "    }\n");
        } else if (nv > 1) {
            buf_puts(b, "    if (n + blocks * 512 < (int64_t)2147483647)\n");
            host_launch(b, "        ", base + 0, &v[0], "(unsigned)blocks", "512");
        }
        host_launch(b, "    ", base + nv - 1, &v[nv - 1], "(unsigned)blocks", "512");
    } else {
        Buf r = {0};
        host_product(c, 0, &n);
        host_product(c, 1, &r);
        buf_printf(b, "    const int64_t nrows = %s;\n", n.data);
        buf_printf(b, "    const int64_t rlen = %s; /* elements per row */\n", r.data);
        buf_puts(b, "    if (nrows == 0)\n        return FUSERT_SUCCESS;\n");
        buf_puts(b, "    const int big = nrows * rlen + (int64_t)sm_count * 8192 >= (int64_t)2147483647"
                    " || nrows >= (int64_t)2147483647 / 4;\n    (void)big;\n");
        buf_puts(b, "    int64_t blocks;\n");
        const int ebytes = row_elem_bytes(c);
        /* on-chip variants first, then warp per row, then block per row */
        int win_checked = 0;
        int wi = -1; /* the index of _blockw (host_row_wloop_fit) */
        for (int i = 0; i < nv; i++) {
            const char *cond = v[i].i64 ? "" : "!big && ";
            if (v[i].kind == VK_ROW_C) {
                int rpb = v[i].bs / v[i].tpr;
                if (v[i].sh)
                    host_row_window_check(c, b, v[i].vw, &win_checked);
                if (v[i].sm) {
                    /* the row in shared memory: CAP elements a thread (as
                     * the kernel computes it), when the device lets a block
                     * have them beside its static shared memory */
                    /* smem_row_bytes and smem_fits, over the call's rlen */
                    int span = v[i].tpr * v[i].vw;
                    int per = 1024 / v[i].bs;
                    char ok[32];
                    if (v[i].sh)
                        snprintf(ok, sizeof ok, "rwin");
                    else {
                        host_row_vec_check(c, b, i, v[i].vw);
                        snprintf(ok, sizeof ok, "rvec%d", i);
                    }
                    buf_printf(b, "    const int64_t smb%d = (rlen + %d) / %d * %d;\n", i,
                               v[i].sh * (v[i].vw - 1) + span - 1, span, span * smem_elem_bytes(c));
                    buf_printf(b, "    if (%s%s && %d * (smb%d + %d) <= %d) {\n", cond, ok, per, i, SMEM_ROW_STATIC,
                               SMEM_ROW_MAX_OPTIN);
                    buf_puts(b, "        int smo = 0;\n"
                                "        const fusert_status sst = FUSEC_SMEM_OPTIN(&smo);\n"
                                "        if (sst != FUSERT_SUCCESS)\n"
                                "            return sst;\n");
                    buf_printf(b, "        if (%d * (smb%d + %d) <= smo && smb%d <= (int64_t)(FZK_ROW_SMEM_MAX)) {\n",
                               per, i, SMEM_ROW_STATIC, i);
                    buf_printf(b, "            blocks = fzk_row_grid(nrows, rlen * %d, %d, sm_count, 1);\n", ebytes,
                               v[i].bs);
                    buf_printf(b, "            return FUSEC_LAUNCH(%d, %s, (unsigned)blocks, 1, 1, %d, 1, 1, smb%d, "
                                  "stream, args);\n", base + i, v[i].name, v[i].bs, i);
                    buf_puts(b, "        }\n    }\n");
                    continue;
                }
                if (v[i].sh) {
                    /* the row plus its shift fits */
                    buf_printf(b, "    if (%srwin && rlen + %d <= %d) {\n", cond, v[i].vw - 1, v[i].tpr * v[i].cap);
                } else if (v[i].cl > 1) {
                    /* a row over the blocks of a cluster: whole aligned
                     * vectors, and a kernel built with the cluster width
                     * (sm_90 on; FUSEC_CLUSTER_WIDTH reads 0 otherwise) */
                    host_row_vec_check(c, b, i, v[i].vw);
                    buf_printf(b, "    int clw%d = 0;\n", i);
                    buf_printf(b, "    if (%srvec%d && rlen <= %d) {\n", cond, i, v[i].cl * v[i].tpr * v[i].cap);
                    buf_printf(b, "        const fusert_status cst = FUSEC_CLUSTER_WIDTH(%d, %s, &clw%d);\n", base + i,
                               v[i].name, i);
                    buf_puts(b, "        if (cst != FUSERT_SUCCESS)\n            return cst;\n    }\n");
                    buf_printf(b, "    if (clw%d == %d) {\n", i, v[i].cl);
                    buf_puts(b, "        blocks = nrows;\n");
                } else if (v[i].vw > 1) {
                    /* 16-byte row accesses: whole vectors per row, aligned rows */
                    host_row_vec_check(c, b, i, v[i].vw);
                    buf_printf(b, "    if (%srvec%d && rlen <= %d) {\n", cond, i, v[i].tpr * v[i].cap);
                } else
                    buf_printf(b, "    if (%srlen <= %d) {\n", cond, v[i].tpr * v[i].cap);
                if (v[i].cl == 1)
                    buf_printf(b, "        blocks = (nrows + %d) / %d;\n", rpb - 1, rpb);
            } else if (v[i].tpr == 32) {
                buf_printf(b, "    if (%srlen <= 1024 && nrows >= (int64_t)sm_count * 8) {\n", cond);
                buf_puts(b, "        blocks = (nrows + 3) / 4;\n");
            } else if (v[i].sh) {
                /* the looped body with windowed vectors: rows at any
                 * offset past the on-chip variants (host_row_wloop) */
                host_row_window_check(c, b, v[i].vw, &win_checked);
                if (!v[i].i64 && v[i].bs == 1024) {
                    host_row_wloop_fit(c, b, v, i, base);
                    wi = i;
                } else if (v[i].i64)
                    host_row_wloop_rest(b, v, wi, i, base);
                continue;
            } else if (v[i].vw > 1) {
                /* the looped body with vectors: rows of whole aligned vectors,
                 * when there are too few rows to fill the machine.  On the
                 * H200 (2^26 f32 elements) it took softmax, layernorm and
                 * rmsnorm at 262144 (256 rows) from 471, 501, 330 us to 401,
                 * 332, 225, and at 131072 (512 rows) from 318, 329, 236 to
                 * 320, 316, 223; with rows enough for a full wave it was
                 * slower (65536, 1024 rows: 271, 279, 212 -> 335, 361, 236;
                 * 40000: 284 -> 328 softmax), cause not isolated */
                host_row_vec_check(c, b, i, v[i].vw);
                buf_printf(b, "    if (rvec%d && nrows <= (int64_t)sm_count * 4)\n", i);
                host_launch(b, "        ", base + i, &v[i], "(unsigned)nrows", "256");
                continue;
            } else {
                /* the last resort: any row length, int64 indices */
                buf_puts(b, "    blocks = nrows;\n");
                buf_puts(b, "    if (blocks > (int64_t)sm_count * 32)\n        blocks = (int64_t)sm_count * 32;\n");
                host_launch(b, "    ", base + i, &v[i], "(unsigned)blocks", "256");
                continue;
            }
            if (v[i].kind == VK_ROW_C) {
                /* blocks holds groups of rows (one row for a cluster, else
                 * the block's rows); the grid follows from their bytes */
                int gr = v[i].cl > 1 ? 1 : v[i].bs / v[i].tpr;
                buf_printf(b, "        blocks = fzk_row_grid(blocks, rlen * %d, %d, sm_count, %d);\n", gr * ebytes,
                           v[i].bs, v[i].cl);
            } else {
                /* a row reduction, a warp a row: the grid fzk_row_grid
                 * replaced for the kernels above was not measured on these
                 * (docs/benchmarks.md, eleventh session), so they keep it */
                buf_puts(b, "        if (blocks > (int64_t)sm_count * 256)\n            blocks = (int64_t)sm_count * 256;\n");
            }
            char bs[16];
            snprintf(bs, sizeof bs, "%d", v[i].bs);
            host_launch(b, "        ", base + i, &v[i], "(unsigned)blocks", bs);
            buf_puts(b, "    }\n");
        }
        buf_free(&r);
    }
    buf_puts(b, "}\n");
    buf_free(&n);
    buf_free(&decl);
    buf_free(&args);
}

/* The stubs of every kernel of the module, after the magic-number helper. */
void emit_cuda_launchers(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    buf_puts(out,
             "/* fzk_magic: m, s such that n / d == (umulhi(n, m) + n) >> s for n, d < 2^31\n"
             " * (fz_udiv in the kernels); unused by the int64 variants. */\n"
             "static inline void fzk_magic(int64_t d, unsigned *m, unsigned *s)\n"
             "{\n"
             "    unsigned sh = 0;\n"
             "    if (d < 1 || d >= (int64_t)2147483647) {\n"
             "        *m = 0;\n"
             "        *s = 0;\n"
             "        return;\n"
             "    }\n"
             "    while (((int64_t)1 << sh) < d)\n"
             "        sh++;\n"
             "    *s = sh;\n"
             "    *m = (unsigned)(((uint64_t)1 << 32) * (((uint64_t)1 << sh) - (uint64_t)d) / (uint64_t)d + 1);\n"
             "}\n"
             "/* fzk_row_grid: the grid of a row kernel for n groups of rows (the rows\n"
             " * a block of bs threads takes at once, or one row for a cluster of g\n"
             " * blocks) that read and write gbytes each.  A block takes groups in\n"
             " * turn until its threads have moved about FZK_ROW_THREAD_BYTES each,\n"
             " * so short rows share a block's start-up, but the grid keeps 32 blocks\n"
             " * a multiprocessor while there are groups for them (a full machine of\n"
             " * blocks of 64 threads); past that it grows with the rows.  It was at\n"
             " * most 256 blocks a multiprocessor: at 262144 softmax rows of 1024 f32\n"
             " * (H200) each block then took 8 rows in turn and the last ones ran on\n"
             " * alone: 523.3 us against 507.8 without the bound, in one run.  A\n"
             " * block a group for every length was slower for short rows (2^26\n"
             " * elements: 333 f32 157.6 -> 167.6 us, 64 bf16 91.0 -> 98.9), and\n"
             " * 12288 bytes a block whatever its size slowed static rows of 1024\n"
             " * bf16 in blocks of 32 (68.0 -> 69.6 us) (docs/benchmarks.md, eleventh\n"
             " * session).  FZK_ROW_GRID_MAX(sms) bounds the grid: 2^30 keeps\n"
             " * gridDim.x in range; a build may define it smaller to have blocks\n"
             " * loop over more rows, as tests do. */\n"
             "#ifndef FZK_ROW_THREAD_BYTES\n"
             "#define FZK_ROW_THREAD_BYTES 96\n"
             "#endif\n"
             "#ifndef FZK_ROW_GRID_MAX\n"
             "#define FZK_ROW_GRID_MAX(sms) ((int64_t)1 << 30)\n"
             "#endif\n"
             "/* FZK_ROW_SMEM_MAX: the most dynamic shared memory a row kernel takes\n"
             " * to hold its row (the _rsm variants), beside the device's own limit; a\n"
             " * build may define it 0 to keep such rows on the looped kernel, as\n"
             " * tests do. */\n"
             "#ifndef FZK_ROW_SMEM_MAX\n"
             "#define FZK_ROW_SMEM_MAX 2147483647\n"
             "#endif\n");
    /* the windowed looped row kernels' launch (host_row_wloop_fit) */
    buf_puts(out,
             "/* FZK_L2_BYTES: the L2 the row launch rules assume, instead of the\n"
             " * device's (a build may define it, as tests do) */\n"
             "#ifdef FZK_L2_BYTES\n"
             "#define FZK_L2_QUERY(bytes) (*(bytes) = (int)(FZK_L2_BYTES), FUSERT_SUCCESS)\n"
             "#else\n"
             "#define FZK_L2_QUERY(bytes) FUSEC_L2_BYTES(bytes)\n"
             "#endif\n"
             "/* FZK_ROW_WLOOP_BLOCK: the block (1024 or 512) the windowed looped row\n"
             " * kernels take, instead of the one the kernel's occupancy picks (a\n"
             " * build may define it, as tests do) */\n"
             "#ifdef FZK_ROW_WLOOP_BLOCK\n"
             "#define FZK_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) \\\n"
             "    (*(n) = (block) == (FZK_ROW_WLOOP_BLOCK) ? 2 : 1, FUSERT_SUCCESS)\n"
             "#else\n"
             "#define FZK_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n)\n"
             "#endif\n");
    /* On the H200 (2^26 elements, fifteenth session's first device call,
     * every second pass backwards always / never): f32 softmax at 16387 /
     * 22001 / 25001 / 28001 192.0 / 182.8 / 183.1 / 185.3 against 189.1 /
     * 182.3 / 186.0 / 191.7 us, rmsnorm 175.4 / 167.4 / 172.8 / 175.5
     * against 160.1 / 166.5 / 172.7 / 179.1; bf16 softmax at 30001 /
     * 50257 / 65537 141.0 / 135.1 / 128.3 against 140.0 / 136.0 / 130.2.
     * Rows in flight of 28%, 37%, 42%, 47% of L2 (f32) and 25%, 42%, 55%
     * (bf16): backwards won from about 40% */
    buf_puts(out,
             "/* FZK_ROW_REV_PCT: the windowed looped row kernels read every second\n"
             " * pass from the row's end where the rows in flight read more than this\n"
             " * percent of L2 (a build may define it, as tests do: 0, always; past\n"
             " * 100, only rows past L2) */\n"
             "#ifndef FZK_ROW_REV_PCT\n"
             "#define FZK_ROW_REV_PCT 40\n"
             "#endif\n"
             "/* The rows a windowed looped kernel has in flight: bps blocks a\n"
             " * multiprocessor (at least one; 0 where the runtime cannot say), at most\n"
             " * every row */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_row_flight(int64_t nrows, int bps, int sms)\n"
             "{\n"
             "    const int64_t f = (int64_t)(bps > 1 ? bps : 1) * sms;\n"
             "    return f < nrows ? f : nrows;\n"
             "}\n"
             "/* wrev for rows in flight that read `bytes` */\n"
             "static FUSEC_MAYBE_UNUSED inline int fzk_row_rev(int64_t bytes, int l2)\n"
             "{\n"
             "    return bytes > (int64_t)l2 * (FZK_ROW_REV_PCT) / 100;\n"
             "}\n");
    buf_puts(out,
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_row_grid(int64_t n, int64_t gbytes, int bs, int sms, int g)\n"
             "{\n"
             "    int64_t k = gbytes > 0 ? (int64_t)FZK_ROW_THREAD_BYTES * bs / gbytes : 1;\n"
             "    const int64_t lo = (int64_t)sms * 32;\n"
             "    int64_t cap = (int64_t)(FZK_ROW_GRID_MAX(sms));\n"
             "    if (k < 1)\n"
             "        k = 1;\n"
             "    if (cap > ((int64_t)1 << 30))\n"
             "        cap = (int64_t)1 << 30;\n"
             "    cap = cap / g * g;\n"
             "    if (cap < g)\n"
             "        cap = g;\n"
             "    int64_t m = (n + k - 1) / k;\n"
             "    if (m < lo)\n"
             "        m = n < lo ? n : lo;\n"
             "    return m < cap / g ? m * g : cap;\n"
             "}\n"
             "/* fzk_cols_splits: the most blocks a column reduction splits its rows\n"
             " * over, for n kept outputs: 64, or for at most 256 outputs (two tiles)\n"
             " * up to 512, 2^18 partial states at most.  On the H200, 96 columns in\n"
             " * 64 blocks ran at 20% of copy, in 2048 at 43%, in 512 at 69% (the\n"
             " * last block's combine of 2048 partials a column cost more than the\n"
             " * wider split won).  Past two tiles the\n"
             " * launch aims at one wave of four blocks per multiprocessor instead:\n"
             " * [16384, 8192] took 137 us split 64 ways (4096 blocks, 3.9 waves),\n"
             " * 134 us 16 ways and 130 us 8 ways (512 blocks), in one run. */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_cols_splits(int64_t n)\n"
             "{\n"
             "    if (n > 256)\n"
             "        return 64;\n"
             "    int64_t s = n > 0 ? ((int64_t)1 << 18) / n : 512;\n"
             "    return s < 64 ? 64 : s > 512 ? 512 : s;\n"
             "}\n"
             "/* fzk_cols_cnt_bytes: the tile counters at the start of a column\n"
             " * reduction's scratch, one per (outer index, tile of 32 columns), in\n"
             " * whole 256-byte pieces (the kernel's cnt_bytes, from its grid) */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_cols_cnt_bytes(int64_t nO, int64_t nI)\n"
             "{\n"
             "    return (nO * ((nI + 31) / 32) * 4 + 255) / 256 * 256;\n"
             "}\n");
    buf_printf(out,
               "/* fzk_scalar_steps: the steps of each block's chunk in a vector full\n"
               " * reduction of `steps` steps: at most %d chunks, and below that chunks of\n"
               " * up to %d steps while %d blocks remain (the compiler's scalar_chunk_steps,\n"
               " * which gives a static size's kernel the same T as a constant) */\n"
               "static FUSEC_MAYBE_UNUSED inline int64_t fzk_scalar_steps(int64_t steps)\n"
               "{\n"
               "    int64_t T = (steps + %d) / %d;\n"
               "    if (T < %d)\n"
               "        T = steps / %d > %d ? %d : steps / %d;\n"
               "    return T < 1 ? 1 : T;\n"
               "}\n",
               SCALAR_MAX_BLOCKS, SCALAR_CHUNK_STEPS, SCALAR_MIN_BLOCKS, SCALAR_MAX_BLOCKS - 1, SCALAR_MAX_BLOCKS,
               SCALAR_CHUNK_STEPS, SCALAR_MIN_BLOCKS, SCALAR_CHUNK_STEPS, SCALAR_CHUNK_STEPS, SCALAR_MIN_BLOCKS);
    int base = 0;
    for (int p = 0; p < nplans; p++)
        for (int ki = 0; ki < plans[p]->nkernels; ki++) {
            KCtx c;
            Buf dummy = {0};
            kctx_init(&c, plans[p]->fn, &plans[p]->kernels[ki], o, &dummy);
            Variant v[MAX_VARIANTS];
            int nv = plan_variants(&c, v);
            emit_launcher(&c, v, nv, base, out);
            base += nv;
            kctx_free(&c);
            buf_free(&dummy);
        }
}
