/* cuda/context.c -- the kernel context: how a kernel's space, maps and input accesses
 * are set up (kctx_init), the dtype and index text, the parameter and
 * argument lists, and the pieces every kernel body shares (group sizes,
 * flat-index decomposition). */
#include "cuda_priv.h"

/* Open a brace scope: values declared inside are forgotten at close. */
void cu_open_scope(KCtx *c)
{
    c->w.indent++;
    c->depth++;
}

/* Close a brace scope and forget the values declared inside it. */
void cu_close_scope(KCtx *c)
{
    while (c->ninst > 0 && c->inst[c->ninst - 1].depth >= c->depth)
        c->ninst--;
    c->depth--;
    emit_close(&c->w, "}");
}

/* ------------------------------------------------------------------ */
/* Types.                                                              */

/* compute type of a dtype (f16/bf16 compute in f32) */
const char *cu_ctype(DType t)
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

/* bytes of the compute type (cu_ctype) */
static int ctype_bytes(DType t)
{
    switch (t) {
    case DT_BOOL: return 1;
    case DT_I64: case DT_F64: return 8;
    default: return 4;
    }
}

/* storage type in device memory */
const char *cu_stype(DType t)
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

/* the dtype whose compute type a dtype uses */
DType cu_cdtype(DType t)
{
    return (t == DT_F16 || t == DT_BF16) ? DT_F32 : t;
}

/* expression converting stored element `e` of dtype t to its compute type */
void cu_load_conv(Buf *b, DType t, const char *e)
{
    switch (t) {
    case DT_F16: buf_printf(b, "fz_f16_to_f32(%s)", e); break;
    case DT_BF16: buf_printf(b, "fz_bf16_to_f32(%s)", e); break;
    case DT_BOOL: buf_printf(b, "(%s != 0)", e); break;
    default: buf_puts(b, e); break;
    }
}

/* expression converting compute value `e` to the storage type of t */
void cu_store_conv(Buf *b, DType t, const char *e)
{
    switch (t) {
    case DT_F16: buf_printf(b, "fz_f32_to_f16((float)(%s))", e); break;
    case DT_BF16: buf_printf(b, "fz_f32_to_bf16((float)(%s))", e); break;
    case DT_BOOL: buf_printf(b, "(fz_u8)((%s) != 0)", e); break;
    default: buf_printf(b, "(%s)(%s)", cu_stype(t), e); break;
    }
}

/* C identifier fragment from a source name */
void cu_put_ident(Buf *b, const char *s)
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
        cu_put_ident(b, c->f->syms[d.sym]);
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
void cu_span_host(const KCtx *c, int a, int b, Buf *out)
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
void cu_operand_map(const IrNode *n, int k, const int8_t *nmap, int8_t *umap)
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
void cu_space_map(const KCtx *c, const IrNode *n, int8_t *map)
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
void cu_out_map(const KCtx *c, const IrNode *n, int8_t *map)
{
    int r = n->shape.rank;
    int nkept = 0;
    int kept[IR_MAX_RANK];
    /* a side reduction's output is indexed by the dims it keeps */
    unsigned red = cu_is_side(c, n) ? c->k->side_axes : c->red;
    for (int d = 0; d < c->R; d++)
        if (!((red >> d) & 1))
            kept[nkept++] = d;
    if (r == c->R || red == 0) {
        /* the space's rank: keepdims results have static 1 in reduced dims */
        cu_space_map(c, n, map);
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

/* Is n a side reduction of a column kernel (Kernel.side_axes)? */
int cu_is_side_red(const KCtx *c, const IrNode *n)
{
    return c->k->side_axes && op_info[n->op].cls == OPC_REDUCE && n->axes == c->k->side_axes;
}

/* Is n a side reduction or a per-row value computed from one (its
 * epilogue)?  Those are written by the second launch, indexed by the rows. */
int cu_is_side(const KCtx *c, const IrNode *n) { return c->sidev && c->sidev[n->id]; }

/* cp past reduction id's rows of column partials: `rows` rows of `len`
 * states, 256-byte aligned (the layout row_colp_states writes,
 * cu_emit_colp_body reads and the row kernel's scratch holds) */
void cu_colp_next(KCtx *c, int id, const char *rows, const char *len)
{
    emit_line(&c->w, "cp += ((size_t)%s * (size_t)%s * sizeof(R%d::S) + 255) / 256 * 256;", rows, len, id);
}

/* position of n in k->values, or -1 */
int cu_value_index(const KCtx *c, const IrNode *n)
{
    for (int i = 0; i < c->k->nvalues; i++)
        if (c->k->values[i] == n)
            return i;
    return -1;
}

/* scalar params reach kernels by value, never through bufs */
int cu_is_scalar_param(const KCtx *c, const IrNode *n)
{
    return n->op == OP_PARAM && n->param >= 0 && !c->f->params[n->param].is_tensor;
}

/* same map over n's dims */
int cu_map_eq(const IrNode *n, const int8_t *a, const int8_t *b)
{
    for (int i = 0; i < n->shape.rank; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* does the map touch a reduced dim? */
int cu_map_has_red(const KCtx *c, const IrNode *n, const int8_t *map)
{
    /* a reduced dim of static size 1 has one element: nothing varies along it */
    for (int i = 0; i < n->shape.rank; i++)
        if (map[i] >= 0 && ((c->red >> map[i]) & 1) && c->k->space.dims[map[i]].size != 1)
            return 1;
    return 0;
}

/* A set of (node, map) pairs: the walks over a kernel's values visit each
 * pair once.  A value that several others use (x and mean(x) in
 * x - mean(x), or x * x) would otherwise be walked once a path, and the
 * paths double with each level of such a chain. */
void cu_pairs_init(NodeMapSet *s, const IrFunc *f)
{
    memset(s, 0, sizeof *s);
    s->head = malloc(((size_t)f->nnodes + 1) * sizeof *s->head);
    if (!s->head)
        fatal_oom();
    for (int i = 0; i <= f->nnodes; i++)
        s->head[i] = -1;
}

/* Add (n, map) with the value val; 0 when (n, map) was there (*val gets
 * its value, if val is given). */
int cu_pairs_add(NodeMapSet *s, const IrNode *n, const int8_t *map, int *val)
{
    for (int i = s->head[n->id]; i >= 0; i = s->e[i].next)
        if (cu_map_eq(n, s->e[i].map, map)) {
            if (val)
                *val = s->e[i].val;
            return 0;
        }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->e = realloc(s->e, (size_t)s->cap * sizeof *s->e);
        if (!s->e)
            fatal_oom();
    }
    memcpy(s->e[s->n].map, map, IR_MAX_RANK);
    s->e[s->n].val = val ? *val : 0;
    s->e[s->n].next = s->head[n->id];
    s->head[n->id] = s->n++;
    return 1;
}

/* Set the value of (n, map), which is in the set. */
void cu_pairs_set(NodeMapSet *s, const IrNode *n, const int8_t *map, int val)
{
    for (int i = s->head[n->id]; i >= 0; i = s->e[i].next)
        if (cu_map_eq(n, s->e[i].map, map)) {
            s->e[i].val = val;
            return;
        }
    ICE("no such (node, map) pair");
}

void cu_pairs_free(NodeMapSet *s)
{
    free(s->head);
    free(s->e);
    memset(s, 0, sizeof *s);
}

/* Collect the input accesses reachable from (n, map). */
static void collect(KCtx *c, NodeMapSet *w, const IrNode *n, const int8_t *map)
{
    if (n->op == OP_CONST || cu_is_scalar_param(c, n))
        return;
    if (!cu_pairs_add(w, n, map, NULL))
        return;
    if (c->role[n->id] == 'i') {
        for (int a = 0; a < c->nacc; a++)
            if (c->acc[a].node == n && cu_map_eq(n, c->acc[a].map, map))
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
            cu_space_map(c, n->in[k].node, um);
        else
            cu_operand_map(n, k, map, um);
        collect(c, w, n->in[k].node, um);
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
int cu_acc_full(const KCtx *c, const Access *a)
{
    for (int g = 0; g < c->ng; g++)
        if (acc_dim(a, c->glast[g]) < 0)
            return 0;
    return 1;
}

/* Row kernels keep per-row data on chip: accesses that vary along the row
 * (a reduced group) and between rows (a kept group). */
int cu_acc_cached(const KCtx *c, const Access *a)
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

/* Does access a vary along a reduced group (the row, in a row kernel)? */
int cu_acc_reduced(const KCtx *c, const Access *a)
{
    for (int g = 0; g < c->ng; g++)
        if (c->gred[g] && acc_dim(a, c->glast[g]) >= 0)
            return 1;
    return 0;
}

/* Is access a stored narrower than it computes (2-byte floats)?  The
 * shared-memory row cache holds such values as stored. */
static int acc_narrow(const KCtx *c, int a)
{
    return dtype_size(MDT(c, c->acc[a].node)) < ctype_bytes(c->acc[a].node->dtype);
}

/* Does the row cache hold access a as stored (in shared memory, or two to
 * a register with c->xc_pack; 2-byte floats converted where read: half the
 * bytes or registers), not in the compute type? */
int cu_xc_raw(const KCtx *c, int a)
{
    return (c->smem || c->xc_pack) && acc_narrow(c, a);
}

/* Does a row cache of the kernel hold 2-byte floats? */
int cu_row_cache_narrow(const KCtx *c)
{
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]) && acc_narrow(c, a))
            return 1;
    return 0;
}

/* Is access a's register row cache packed, two values to a 32-bit word? */
int cu_xc_packed(const KCtx *c, int a)
{
    return !c->smem && c->xc_pack && acc_narrow(c, a);
}

/* The value of element k of cached access a's row cache: a register array
 * (xc<a>[k], or packed fz_xc2_get), or in shared memory (c->smem) the
 * lane's k-th word, the lanes of a warp interleaved, so the 32 lanes
 * reading one k touch 32 consecutive words (no bank conflicts, no
 * padding) */
void cu_xc_ref(const KCtx *c, Buf *b, int a, const char *k)
{
    if (c->smem)
        buf_printf(b, "xc%d[(%s) * 32]", a, k);
    else if (cu_xc_packed(c, a))
        buf_printf(b, "fz_xc2_get(xc%d, %s)", a, k);
    else
        buf_printf(b, "xc%d[%s]", a, k);
}

/* b = the statement (no semicolon) that sets element k of access a's row
 * cache to v */
void cu_xc_store(const KCtx *c, Buf *b, int a, const char *k, const char *v)
{
    if (cu_xc_packed(c, a))
        buf_printf(b, "fz_xc2_put(xc%d, %s, %s)", a, k, v);
    else {
        cu_xc_ref(c, b, a, k);
        buf_printf(b, " = %s", v);
    }
}

/* bytes of one element of access a's row cache in shared memory */
int cu_xc_bytes(const KCtx *c, int a)
{
    return acc_narrow(c, a) ? dtype_size(MDT(c, c->acc[a].node)) : ctype_bytes(c->acc[a].node->dtype);
}

/* cv = the value of access a, read as e from memory, as its row cache
 * holds it: as stored (cu_xc_raw) or converted to the compute type */
void cu_xc_value(const KCtx *c, int a, const char *e, Buf *cv)
{
    if (cu_xc_raw(c, a))
        buf_puts(cv, e);
    else
        cu_load_conv(cv, MDT(c, c->acc[a].node), e);
}

/* Row kernels: an input that varies only along the (single, innermost)
 * reduced group, like layernorm's g and b, is the same vector for every row
 * at a given rb: the 16-byte-or-less vector passes load it whole (vb<a>)
 * instead of V scalar loads.  vw is the pass's vector width. */
int cu_acc_per_column(const KCtx *c, const Access *a)
{
    if (c->ng < 1 || !c->gred[c->ng - 1] || cu_acc_cached(c, a) || c->role[a->node->id] != 'i')
        return 0;
    for (int g = 0; g < c->ng; g++)
        if ((acc_dim(a, c->glast[g]) >= 0) != (g == c->ng - 1))
            return 0;
    return 1;
}

/* Is a read as the V-element vector vb<a> at each vector step?  At most
 * 16 bytes, except in a reduction's windowed looped body (blocks of 256
 * or fewer; a wider vector loads as several 16-byte ones).  Elsewhere a
 * wide vector holds its registers through the element loop: a 64-byte
 * vector of i64 class indices spilled in the aligned body, and a row
 * kernel's blocks of 1024 have 32 registers a thread. */
int cu_acc_rowvec(const KCtx *c, const Access *a, int vw)
{
    int wide = c->loopwin && c->k->kind == KK_REDUCE;
    return vw > 1 && (dtype_size(MDT(c, a->node)) * vw <= 16 || wide) && cu_acc_per_column(c, a);
}

/* The loop kernel's `_v` body: an input that is broadcast (not full) but
 * varies along the innermost group, like bias_relu's b[M] against x[N, M],
 * is V consecutive elements at every vector step: the innermost group holds
 * whole vectors there, so its offset is a multiple of V, and one aligned
 * vector load replaces V scalar ones (the kernel tests the pointer).  Up to
 * 32 bytes (f32 statistics beside 2-byte elements), as 16-byte pieces:
 * element loads of such an input each span the warp's 32 lanes' vectors,
 * which kept a bf16 column softmax's normalizing pass at 51% of DRAM
 * bandwidth with the L1 fully busy (sm_90, 8192 columns). */
int cu_acc_loopbv(const KCtx *c, const Access *a, int V)
{
    if (V <= 1 || c->ng <= 1 || c->role[a->node->id] != 'i' || cu_acc_full(c, a) ||
        dtype_size(MDT(c, a->node)) * V > 32)
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
int cu_acc_index(const KCtx *c, const IrNode *n, const int8_t *map)
{
    for (int a = 0; a < c->nacc; a++)
        if (c->acc[a].node == n && cu_map_eq(n, c->acc[a].map, map))
            return a;
    ICE("access not collected");
}

/* device expression of the offset of access a at the current point */
void cu_acc_offset(const KCtx *c, const Access *a, const char *itype, Buf *b)
{
    if (c->flat && cu_acc_full(c, a)) {
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
/* Kernel setup.                                                       */

/* Analyse one kernel: which nodes it computes and which it reads (the
 * bufs order of the stub), every input access reachable from its outputs and
 * reductions, and the collapsed groups of its space.  Done once per kernel,
 * for its lowering (cu_lower_kernel); every text of the kernel starts from
 * a copy (cu_kctx_begin). */
void cu_kctx_init(KCtx *c, const IrFunc *f, const Kernel *k)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->k = k;
    c->role = calloc((size_t)f->nnodes + 1, 1);
    c->from_bf16 = calloc((size_t)f->nnodes + 1, 1);
    c->sidev = calloc((size_t)f->nnodes + 1, 1);
    c->inbuf = malloc(sizeof(int) * ((size_t)f->nnodes + 1));
    c->redlvl = calloc((size_t)f->nnodes + 1, sizeof(int));
    if (!c->role || !c->from_bf16 || !c->inbuf || !c->sidev || !c->redlvl)
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
        if (cu_is_scalar_param(c, k->inputs[i]))
            continue;
        c->role[k->inputs[i]->id] = 'i';
        c->inbuf[k->inputs[i]->id] = nb++;
    }
    for (int i = 0; i < k->nvalues; i++)
        if (c->role[k->values[i]->id] != 'i')
            c->role[k->values[i]->id] = 'v';
    /* side values, in topological order: the side reductions, then what
     * is computed from them */
    for (int i = 0; i < k->nvalues && k->side_axes; i++) {
        const IrNode *v = k->values[i];
        int side = cu_is_side_red(c, v);
        for (int j = 0; j < v->nin && !side && op_info[v->op].cls != OPC_REDUCE; j++)
            side = c->sidev[v->in[j].node->id] && c->role[v->in[j].node->id] == 'v';
        c->sidev[v->id] = (unsigned char)side;
    }
    /* reduction levels, in the same order: operands first */
    for (int i = 0; i < k->nvalues; i++) {
        const IrNode *v = k->values[i];
        if (c->role[v->id] != 'v')
            continue;
        int l = 0;
        for (int j = 0; j < v->nin; j++)
            if (c->redlvl[v->in[j].node->id] > l)
                l = c->redlvl[v->in[j].node->id];
        c->redlvl[v->id] = op_info[v->op].cls == OPC_REDUCE ? l + 1 : l;
    }
    c->R = k->space.rank;
    c->red = k->kind == KK_LOOP ? 0 : k->reduce_axes;
    /* accesses: from every output and every reduction's operand */
    NodeMapSet w;
    cu_pairs_init(&w, f);
    for (int i = 0; i < k->noutputs; i++) {
        int8_t m[IR_MAX_RANK];
        cu_out_map(c, k->outputs[i], m);
        collect(c, &w, k->outputs[i], m);
    }
    for (int i = 0; i < k->nvalues; i++) {
        const IrNode *v = k->values[i];
        if (op_info[v->op].cls == OPC_REDUCE) {
            int8_t m[IR_MAX_RANK];
            cu_space_map(c, v->in[0].node, m);
            collect(c, &w, v->in[0].node, m);
        }
    }
    cu_pairs_free(&w);
    make_groups(c);
}

/* everything cu_kctx_init allocated */
void cu_kctx_free(KCtx *c)
{
    free(c->role);
    free(c->from_bf16);
    free(c->sidev);
    free(c->inbuf);
    free(c->redlvl);
}

/* A context for writing one text of the kernel of L into out: the
 * lowering's analysis (shared, read only), no value in scope, level zero. */
void cu_kctx_begin(KCtx *c, const Lowering *L, const EmitOptions *o, Buf *out)
{
    cu_kctx_begin_an(c, L, &L->an, o, out);
}

/* cu_kctx_begin with another analysis of L's kernel (Lowering.colan) */
void cu_kctx_begin_an(KCtx *c, const Lowering *L, const KCtx *an, const EmitOptions *o, Buf *out)
{
    *c = *an;
    c->L = L;
    c->o = o;
    c->w.out = out;
    c->w.indent = 0;
    c->atomic = L->combine == COMBINE_ATOMIC;
    c->inst = malloc(sizeof(Inst) * MAX_INST);
    c->reduced_val = calloc((size_t)c->k->nvalues + 1, sizeof(char *));
    if (!c->inst || !c->reduced_val)
        fatal_oom();
}

/* the end of a text: back at level zero; frees what cu_kctx_begin took */
void cu_kctx_end(KCtx *c)
{
    emit_done(&c->w);
    free(c->inst);
    free(c->reduced_val);
}

/* the tensor input nodes (bufs order) */
static int ntensor_inputs(const KCtx *c)
{
    int n = 0;
    for (int i = 0; i < c->k->ninputs; i++)
        if (!cu_is_scalar_param(c, c->k->inputs[i]))
            n++;
    return n;
}

/* the j-th tensor input (bufs[j]) */
static const IrNode *tensor_input(const KCtx *c, int j)
{
    for (int i = 0; i < c->k->ninputs; i++)
        if (!cu_is_scalar_param(c, c->k->inputs[i]) && j-- == 0)
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
        buf_printf(b, "const %s *__restrict__ in%d", cu_stype(MDT(c, tensor_input(c, j))), j);
    }
    for (int j = 0; j < c->k->noutputs; j++) {
        SEP();
        buf_printf(b, "%s *__restrict__ out%d", cu_stype(MDT(c, c->k->outputs[j])), j);
    }
    for (int p = 0; p < c->f->nparams; p++)
        if (!c->f->params[p].is_tensor && uses_param(c, p)) {
            SEP();
            buf_printf(b, "%s p_", param_ctype(c->f->params[p].dtype));
            cu_put_ident(b, c->f->params[p].name);
        }
    for (int s = 0; s < c->f->nsyms; s++)
        if (uses_sym(c, s)) {
            SEP();
            buf_puts(b, "long long d_");
            cu_put_ident(b, c->f->syms[s]);
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
            cu_put_ident(b, c->f->params[p].name);
        }
    for (int s = 0; s < c->f->nsyms; s++)
        if (uses_sym(c, s)) {
            SEP();
            buf_puts(b, "d_");
            cu_put_ident(b, c->f->syms[s]);
        }
#undef SEP
    if (first)
        buf_puts(b, "fz_unused");
}

/* Host side: declare locals holding the same arguments, and push their
 * addresses to args[] (in the order of common_params). */
void cu_host_common_args(KCtx *c, Buf *decl, Buf *args)
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
void cu_kernel_comment(KCtx *c)
{
    const Kernel *k = c->k;
    static const char *const kinds[] = {"loop", "reduce", "row"};
    static const char *const lays[] = {"", " (to a scalar)", " (rows)", " (columns)", " (middle axes)"};
    Buf b = {0};
    if (k->space.rank == 0)
        buf_puts(&b, "one element");
    else
        ir_shape_str(c->f, &k->space, &b);
    emit_line(&c->w, "/* %s: %s kernel%s over %s, fn %s", k->name, kinds[k->kind],
              k->side_axes ? " (columns, and rows in the same pass)" : lays[k->layout], b.data, c->f->name);
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
        emit_line(&c->w, " *   %%%d %s = %s : %s   (%s:%d)", v->id, v->name ? v->name : "_", opn, t.data, path, ln);
        buf_free(&t);
    }
    for (int i = 0; i < k->ninputs; i++) {
        const IrNode *v = k->inputs[i];
        if (cu_is_scalar_param(c, v))
            continue;
        emit_line(&c->w, " *   reads %%%d %s%s", v->id, v->name ? v->name : "(intermediate)",
                  v->op == OP_PARAM ? " (param)" : "");
    }
    for (int i = 0; i < k->noutputs; i++) {
        const IrNode *v = k->outputs[i];
        int r = k->out_result ? k->out_result[i] : -1;
        if (r >= 0)
            emit_line(&c->w, " *   writes %%%d as result %s", v->id, c->f->results[r].name);
        else
            emit_line(&c->w, " *   writes %%%d (intermediate)", v->id);
    }
    emit_line(&c->w, " */");
}

/* ------------------------------------------------------------------ */
/* Shared pieces of kernel bodies.                                     */

/* const I gs<g>: the size of each collapsed group, in the index type */
void cu_emit_group_sizes(KCtx *c)
{
    for (int g = 0; g < c->ng; g++) {
        Buf b = {0};
        span_dev(c, c->gfirst[g], c->glast[g], "I", &b);
        emit_line(&c->w, "const I gs%d = %s;", g, b.data);
        buf_free(&b);
    }
}

/* product of the sizes gs<g> of the groups with gred == red (all: red < 0);
 * `one` when there is none.  The names are the same in kernels and stubs. */
void cu_product_of(const KCtx *c, int red, const char *one, Buf *b)
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
void cu_groups_product(const KCtx *c, int red, Buf *b) { cu_product_of(c, red, "(I)1", b); }

/* Declare gi<g> for the groups with gred == red (all: red < 0) from the
 * flat index `flat` over them (outermost first). */
void cu_decompose(KCtx *c, const char *flat, int red)
{
    int gl[IR_MAX_RANK] = {0}, n = 0;
    for (int g = 0; g < c->ng; g++)
        if (red < 0 || c->gred[g] == red)
            gl[n++] = g;
    cu_decompose_list(c, flat, gl, n);
}

/* the same for an explicit list of groups (outermost first) */
void cu_decompose_list(KCtx *c, const char *flat, const int *gl, int n)
{
    const char *sx = c->sfx ? c->sfx : "";
    for (int i = 0; i < n; i++)
        snprintf(c->giname[gl[i]], sizeof c->giname[gl[i]], "gi%d%s", gl[i], sx);
    if (n == 0)
        return;
    if (n == 1) {
        emit_line(&c->w, "const I %s = %s;", c->giname[gl[0]], flat);
        c->gi[gl[0]] = c->giname[gl[0]];
        return;
    }
    int t = c->tmp++;
    emit_line(&c->w, "I t%d = %s;", t, flat);
    for (int i = n - 1; i >= 1; i--) {
        int g = gl[i];
        emit_line(&c->w, "const I q%d_%d = fz_div<I>(t%d, gs%d, m%d, s%d);", t, g, t, g, g, g);
        emit_line(&c->w, "const I %s = t%d - q%d_%d * gs%d;", c->giname[g], t, t, g, g);
        emit_line(&c->w, "t%d = q%d_%d;", t, t, g);
        c->gi[g] = c->giname[g];
    }
    emit_line(&c->w, "const I %s = t%d;", c->giname[gl[0]], t);
    c->gi[gl[0]] = c->giname[gl[0]];
}

/* body signature: common params, magic numbers of every group, extras */
void cu_body_params(KCtx *c, Buf *b, const char *extra)
{
    common_params(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(b, ", unsigned m%d, unsigned s%d", g, g);
    if (extra)
        buf_puts(b, extra);
}

/* the wrapper's call of the body: the same names as cu_body_params */
void cu_body_args(KCtx *c, Buf *b, const char *extra)
{
    common_args(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(b, ", m%d, s%d", g, g);
    if (extra)
        buf_puts(b, extra);
}

/* forget how the current point is named (between loops and kernels) */
void cu_reset_point(KCtx *c)
{
    for (int g = 0; g < IR_MAX_RANK; g++)
        c->gi[g] = NULL;
    c->flat = NULL;
    c->vec = 0;
    c->rowcache = 0;
    c->vecstore = 0;
    c->sfx = NULL;
}
