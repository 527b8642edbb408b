/* fusion.c -- partition an IrFunc into kernels (the plan), with reasons.
 *
 * Design note.  Groups (kernels under construction) are grown from the
 * consumers back to the producers: nodes are visited in REVERSE
 * topological order, so when a node is visited every group that uses it
 * already exists.  A node then tries to join each group that holds one of
 * its consumers (try_join):
 *   - an elementwise node or view joins every group that accepts it, i.e.
 *     it is recomputed by each -- unless it is used by several groups and
 *     costs more than FUSE_RECOMPUTE_MAX ops, then it is stored once;
 *   - a reduction joins only when all its consumers sit in ONE group (the
 *     user groups are first united when they are independent and alike);
 *     a reduction is never computed twice.
 * What a group accepts depends on its kind (loop / reduce / row) and on the
 * level the node would have there: per element of the iteration space, or
 * per reduced element.  A loop group becomes a reduce group when a
 * reduction joins as its epilogue, and a row group when an inner-axis
 * reduction joins whose result is broadcast back over the rows.  A node
 * refused by some consumer group is materialised: a group of its own
 * writes it and the refusing group reads it; every refusal is a Rejection
 * with words.  A result is written by a group that holds it and can write
 * it (outputs have the space's shape, or the reduced shape); when none can
 * yet, the decision waits until the main pass is over (the group may have
 * become a row kernel by then), and if still none can, the plan is made
 * again with that result written by a group of its own from the start.
 * Because reads only ever go to groups created for earlier nodes, the
 * groups form a DAG.  Then: a stored loop group is folded into the kernel
 * of the same space that reads it (merge_down), independent groups of one
 * space are merged sideways (several outputs in one kernel; an elementwise
 * output riding along a reduction of its space), and the groups are put
 * in launch order.  Should that order ever be cyclic, the plan falls back
 * to one kernel per op (correct, slow) rather than fail.  verify() checks
 * every plan against the contract in fusion.h.
 * Everything iterates in node order or group-creation order: the plan is
 * the same byte for byte for the same IR.  The reports (JSON, text, dot)
 * are in report.c. */
#include "fusion.h"
#include <stdlib.h>
#include <string.h>

/* ---- groups: kernels under construction ---------------------------------- */

typedef struct Write {
    IrNode *node;
    int result; /* fn result index, or -1 for an intermediate */
} Write;

typedef struct Group {
    KernelKind kind;
    IrShape space;
    uint8_t axes;
    uint8_t side;      /* KK_REDUCE over columns: the axes of its side (row)
                          reductions, 0 if none (Kernel.side_axes) */
    uint8_t *lvl;      /* per node id: 0 absent, else FL_ELEM | FL_RED */
    Write *wr;
    int nwr, capwr;
    int dead;          /* merged into another group */
    int off_chip;      /* row kernel: the row buffer would break the register
                          budget, so the row is always re-read (looped 2) */
    int order;         /* launch position, once known */
} Group;

typedef struct Ctx {
    Arena *a;
    IrFunc *f;
    /* nnodes bytes each, reused by every merge tried: the levels it may
     * have to restore, and retag_rows' marks */
    uint8_t *scratch_lvl, *scratch_desc;
    const FusionOptions *opt;
    int no_fusion;
    Group **g;
    int ng, capg;
    Rejection *rej;
    int nrej, caprej;
    IrNode ***users; /* per node: the nodes that use it (each once) */
    int *nusers;
    int *cost;       /* per node: elementwise ops to recompute it from
                        params, constants and reductions (capped) */
    uint8_t *eager;  /* per node: a result written by a group of its own at
                        once, not left for a consumer's kernel to write */
    IrNode **pending;/* results waiting for a consumer's kernel to write them */
    int npending, cappending;
} Ctx;

/* An elementwise value needed by several kernels is recomputed by each of
 * them when it costs at most this many ops (memory, not arithmetic, bounds
 * these kernels: a few dozen ops per element are cheaper than a round trip
 * through device memory); a dearer one is stored once, which also keeps
 * deep graphs from growing quadratic kernels. */
#define FUSE_RECOMPUTE_MAX 32

static int is_reduce(const IrNode *n) { return op_info[n->op].cls == OPC_REDUCE; }
static int is_leaf(const IrNode *n) { return op_info[n->op].cls == OPC_LEAF; }
static int is_view(const IrNode *n) { return op_info[n->op].cls == OPC_VIEW; }

/* a scalar parameter: passed by value, never a buffer */
static int is_scalar_param(const IrFunc *f, const IrNode *n)
{
    return n->op == OP_PARAM && n->param >= 0 && n->param < f->nparams &&
           !f->params[n->param].is_tensor;
}

/* A new, empty group; it is appended, so creation order is stable. */
static Group *group_new(Ctx *c, KernelKind kind, const IrShape *space, uint8_t axes)
{
    Group *g = ARENA_NEW(c->a, Group);
    g->kind = kind;
    g->space = *space;
    g->axes = axes;
    g->lvl = ARENA_ARRAY(c->a, uint8_t, c->f->nnodes);
    ARENA_PUSH(c->a, c->g, c->ng, c->capg, g);
    return g;
}

/* g writes n to fn result `result` (-1: an intermediate); no duplicates. */
static void group_write(Ctx *c, Group *g, IrNode *n, int result)
{
    for (int i = 0; i < g->nwr; i++)
        if (g->wr[i].node == n && g->wr[i].result == result)
            return;
    Write w = {n, result};
    ARENA_PUSH(c->a, g->wr, g->nwr, g->capwr, w);
}

/* ---- words for reasons ---------------------------------------------------- */

static ReduceLayout layout_of(uint8_t axes, int rank)
{
    uint8_t all = (uint8_t)((1u << rank) - 1u);
    if (rank == 0 || (axes & all) == all)
        return RL_SCALAR;
    /* suffix: inner, contiguous axes; prefix: outer axes */
    for (int k = 1; k < rank; k++) {
        uint8_t suffix = (uint8_t)(all & ~((1u << (rank - k)) - 1u));
        uint8_t prefix = (uint8_t)((1u << k) - 1u);
        if (axes == suffix)
            return RL_ROWS;
        if (axes == prefix)
            return RL_COLS;
    }
    return RL_MIDDLE;
}

/* "over all axes", "over axis 1", "over axes (0, 2)": for reasons. */
static const char *axes_words(Arena *a, uint8_t axes, int rank)
{
    if (layout_of(axes, rank) == RL_SCALAR)
        return "over all axes";
    Buf b = {0};
    int n = 0;
    for (int i = 0; i < rank; i++)
        n += (axes >> i) & 1;
    buf_puts(&b, n == 1 ? "over axis " : "over axes (");
    int first = 1;
    for (int i = 0; i < rank; i++)
        if ((axes >> i) & 1) {
            buf_printf(&b, first ? "%d" : ", %d", i);
            first = 0;
        }
    if (n != 1)
        buf_putc(&b, ')');
    char *s = arena_strdup(a, b.data ? b.data : "");
    buf_free(&b);
    return s;
}

static const char *shape_words(Arena *a, const IrFunc *f, const IrShape *s)
{
    Buf b = {0};
    ir_shape_str(f, s, &b);
    char *r = arena_strdup(a, b.data ? b.data : "[]");
    buf_free(&b);
    return r;
}

/* Record a merge that was not made (once per pair and code). */
static void reject(Ctx *c, IrNode *producer, IrNode *consumer, const char *code, const char *reason)
{
    if (c->no_fusion)
        return;
    for (int i = 0; i < c->nrej; i++) /* one entry per pair and cause */
        if (c->rej[i].producer == producer && c->rej[i].consumer == consumer &&
            strcmp(c->rej[i].code, code) == 0)
            return;
    Rejection r = {producer, consumer, reason, code};
    ARENA_PUSH(c->a, c->rej, c->nrej, c->caprej, r);
}

/* ---- the register model --------------------------------------------------- */

static int acc_regs(const IrNode *n)
{
    switch (n->op) {
    case OP_ARGMAX: case OP_ARGMIN: case OP_LOGSUMEXP: case OP_SUMEXP: return 2;
    case OP_VAR: case OP_STD: return 3;
    default: return 1;
    }
}

/* The larger of wide and the element size of each node shaped as space. */
static int widest_full(IrNode *const *nodes, int n, const IrShape *space, int wide)
{
    for (int i = 0; i < n; i++)
        if (ir_shape_eq(&nodes[i]->shape, space) && dtype_size(nodes[i]->dtype) > wide)
            wide = dtype_size(nodes[i]->dtype);
    return wide;
}

/* Elements of a row each thread keeps on chip (see fusion.h). */
static int row_elems_per_thread(const Kernel *k, int *looped)
{
    IrShape red = {0};
    for (int i = 0; i < k->space.rank; i++)
        if ((k->reduce_axes >> i) & 1)
            red.dims[red.rank++] = k->space.dims[i];
    int64_t len = ir_shape_static_numel(&red);
    *looped = len < 0 || len > FUSE_ROW_ONCHIP_MAX;
    if (len > FUSE_ROW_CLUSTER_MAX)
        return 0;
    if (len < 0 || len > FUSE_ROW_ONCHIP_MAX)
        return 32; /* the most any on-chip variant picked at launch holds */
    /* the widest element of the row in memory */
    int wide = widest_full(k->outputs, k->noutputs, &k->space, widest_full(k->inputs, k->ninputs, &k->space, 0));
    int threads = fuse_row_threads(len, wide ? wide : 4);
    return (int)((len + threads - 1) / threads);
}

int fuse_row_threads(int64_t len, int elem_bytes)
{
    /* 513 to 1024 elements of 4 bytes or more: a block of 128 threads per
     * row, 8 elements each, not a warp with 32: 32 registers instead of 63,
     * twice the occupancy; softmax over [65536, 1024] went from 132.9 to
     * 129.9 us on the H200 (torch.compile: 130.0).  Rows of 2-byte elements
     * keep the warp: 128 threads of one 16-byte vector each took bf16
     * softmax from 69.5 to 79.2 us. */
    if (len > 512 && len <= 1024)
        return elem_bytes >= 4 ? 128 : 32;
    return len <= 128 ? 8 : len <= 512 ? 32 : len <= 4096 ? 128 : len <= 8192 ? 256 : 512;
}

int fuse_estimate_registers(const IrFunc *f, const Kernel *k)
{
    int nv = k->nvalues;
    int accs = 0;
    /* first and last position (in values) where each node is defined or read */
    int *first = malloc(sizeof(int) * (size_t)(f->nnodes + 1));
    int *last = malloc(sizeof(int) * (size_t)(f->nnodes + 1));
    int *din = calloc((size_t)nv + 2, sizeof(int)), *dout = calloc((size_t)nv + 2, sizeof(int));
    uint8_t *isval = calloc((size_t)f->nnodes + 1, 1);
    if (!first || !last || !din || !dout || !isval)
        fatal_oom();
    for (int i = 0; i < f->nnodes; i++)
        first[i] = -1;
    for (int i = 0; i < nv; i++) {
        IrNode *v = k->values[i];
        isval[v->id] = 1;
        if (first[v->id] < 0)
            first[v->id] = i;
        last[v->id] = i;
        if (is_reduce(v))
            accs += acc_regs(v);
        for (int j = 0; j < v->nin; j++) {
            IrNode *o = v->in[j].node;
            if (first[o->id] < 0)
                first[o->id] = i;
            last[o->id] = i;
        }
    }
    /* at value i: live-in (read here, defined earlier) and live-out
     * (defined up to here, read later, plus value i itself); an input is
     * "defined" when first read, so it counts as live-in there.  Counted
     * with difference arrays over the positions. */
    for (int id = 0; id < f->nnodes; id++) {
        IrNode *n = f->nodes[id];
        if (first[id] < 0 || n->op == OP_CONST || is_view(n) || is_scalar_param(f, n))
            continue;
        /* loop and reduce kernels issue every load first (memory-level
         * parallelism): their inputs are live from the start */
        if (!isval[id] && k->kind != KK_ROW)
            first[id] = 0;
        int lo_in = isval[id] ? first[id] + 1 : first[id];
        if (lo_in <= last[id]) {
            din[lo_in]++;
            din[last[id] + 1]--;
        }
        if (first[id] < last[id]) {
            dout[first[id]]++;
            dout[last[id]]--;
        }
    }
    int live_max = nv ? 0 : 1, in = 0, out = 0; /* a copy kernel moves one value */
    for (int i = 0; i < nv; i++) {
        in += din[i];
        out += dout[i];
        /* value i itself is live-out; if it also reads later it is in out */
        int o = out + (first[k->values[i]->id] == i && last[k->values[i]->id] > i ? 0 : 1);
        if (in > live_max)
            live_max = in;
        if (o > live_max)
            live_max = o;
    }
    free(first);
    free(last);
    free(din);
    free(dout);
    free(isval);
    int width = k->kind == KK_ROW ? 1 : 4;
    int est = 16 + 2 * (k->ninputs + k->noutputs) + width * live_max + accs;
    if (k->kind == KK_ROW) {
        int looped, per = row_elems_per_thread(k, &looped), bufs = 0;
        for (int i = 0; i < k->ninputs; i++)
            if (ir_shape_eq(&k->inputs[i]->shape, &k->space))
                bufs++;
        if (k->looped != 2) /* 2: never on chip */
            est += per * bufs;
    }
    return est;
}

/* ---- a group seen as a kernel ---------------------------------------------- */

static void push_node(Arena *a, IrNode ***arr, int *n, int *cap, IrNode *v)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == v)
            return;
    ARENA_PUSH(a, *arr, *n, *cap, v);
}

/* Fill k from g: values (with the constants they use), inputs, outputs. */
static void group_to_kernel(Ctx *c, const Group *g, Kernel *k)
{
    IrFunc *f = c->f;
    memset(k, 0, sizeof *k);
    k->kind = g->kind;
    k->space = g->space;
    k->reduce_axes = g->kind == KK_LOOP ? 0 : g->axes;
    k->side_axes = g->kind == KK_REDUCE ? g->side : 0;
    k->layout = g->kind == KK_LOOP ? RL_NONE : layout_of(g->axes, g->space.rank);
    /* constants take the level of their users */
    uint8_t *lv = ARENA_ARRAY(c->a, uint8_t, f->nnodes);
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        if (!g->lvl[i] || n->op == OP_PARAM)
            continue;
        lv[i] |= g->lvl[i]; /* a constant result is a value too */
        for (int j = 0; j < n->nin; j++) {
            IrNode *o = n->in[j].node;
            if (o->op == OP_CONST)
                lv[o->id] |= is_reduce(n) ? FL_ELEM : g->lvl[i];
        }
    }
    int capi = 0, capo = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (lv[i])
            k->nvalues++;
    k->values = ARENA_ARRAY(c->a, IrNode *, k->nvalues ? k->nvalues : 1);
    k->level = ARENA_ARRAY(c->a, uint8_t, k->nvalues ? k->nvalues : 1);
    k->nvalues = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (lv[i]) {
            k->level[k->nvalues] = lv[i];
            k->values[k->nvalues++] = f->nodes[i];
        }
    /* inputs: operands that are not computed here, in node order */
    uint8_t *isin = ARENA_ARRAY(c->a, uint8_t, f->nnodes);
    for (int i = 0; i < k->nvalues; i++) {
        IrNode *v = k->values[i];
        for (int j = 0; j < v->nin; j++) {
            IrNode *o = v->in[j].node;
            if (!lv[o->id] && o->op != OP_CONST && !is_scalar_param(f, o))
                isin[o->id] = 1;
        }
    }
    for (int i = 0; i < g->nwr; i++) { /* a copied param */
        IrNode *w = g->wr[i].node;
        if (!lv[w->id] && !is_scalar_param(f, w))
            isin[w->id] = 1;
    }
    for (int i = 0; i < f->nnodes; i++)
        if (isin[i])
            push_node(c->a, &k->inputs, &k->ninputs, &capi, f->nodes[i]);
    /* outputs: results first in result order, then intermediates by node */
    k->out_result = ARENA_ARRAY(c->a, int, g->nwr ? g->nwr : 1);
    for (int r = 0; r < f->nresults; r++)
        for (int i = 0; i < g->nwr; i++)
            if (g->wr[i].result == r) {
                k->out_result[k->noutputs] = r;
                ARENA_PUSH(c->a, k->outputs, k->noutputs, capo, g->wr[i].node);
            }
    for (int id = 0; id < f->nnodes; id++)
        for (int i = 0; i < g->nwr; i++)
            if (g->wr[i].result < 0 && g->wr[i].node->id == id) {
                k->out_result[k->noutputs] = -1;
                ARENA_PUSH(c->a, k->outputs, k->noutputs, capo, g->wr[i].node);
            }
    if (k->kind == KK_ROW) {
        row_elems_per_thread(k, &k->looped);
        if (g->off_chip)
            k->looped = 2;
    }
    k->loc = k->nvalues ? k->values[0]->loc : (k->noutputs ? k->outputs[0]->loc : f->loc);
    for (int i = 0; i < k->nvalues; i++)
        if (k->values[i]->op != OP_CONST) {
            k->loc = k->values[i]->loc;
            break;
        }
    k->est_registers = fuse_estimate_registers(f, k);
}

static int group_estimate(Ctx *c, const Group *g)
{
    /* the kernel is thrown away: its arrays go to an arena of their own,
     * or every merge tried would keep a few arrays of nnodes */
    Arena tmp = {0}, *keep = c->a;
    c->a = &tmp;
    Kernel k;
    group_to_kernel(c, g, &k);
    c->a = keep;
    arena_free_all(&tmp);
    return k.est_registers;
}

/* The estimate of g, after giving up the on-chip row buffer of a row
 * kernel when that alone keeps it within the budget (one looped kernel is
 * better than a split into several). */
static int fit_estimate(Ctx *c, Group *g)
{
    int est = group_estimate(c, g);
    if (est > c->opt->max_registers && g->kind == KK_ROW && !g->off_chip) {
        g->off_chip = 1;
        int off = group_estimate(c, g);
        if (off <= c->opt->max_registers)
            return off;
        g->off_chip = 0;
    }
    return est;
}

/* Why g is past one of a kernel's bounds (FUSE_KERNEL_MAX_*), or NULL. */
static const char *size_refusal(Ctx *c, const Group *g)
{
    int nv = 0, nr = 0;
    for (int i = 0; i < c->f->nnodes; i++)
        if (g->lvl[i] && c->f->nodes[i]->op != OP_CONST) {
            nv++;
            nr += is_reduce(c->f->nodes[i]);
        }
    if (nr > FUSE_KERNEL_MAX_REDUCTIONS)
        return arena_printf(c->a, "the kernel would hold %d reductions; one kernel holds at most %d",
                            nr, FUSE_KERNEL_MAX_REDUCTIONS);
    if (g->nwr > FUSE_KERNEL_MAX_OUTPUTS)
        return arena_printf(c->a, "the kernel would write %d outputs; one kernel writes at most %d",
                            g->nwr, FUSE_KERNEL_MAX_OUTPUTS);
    if (nv > FUSE_KERNEL_MAX_VALUES)
        return arena_printf(c->a, "the kernel would compute %d values; one kernel computes at most %d",
                            nv, FUSE_KERNEL_MAX_VALUES);
    return NULL;
}

/* Why g cannot be one kernel: past a size bound (code "size") or over the
 * register budget (code "registers", after fit_estimate's try of the
 * looped row); NULL when it fits. */
static const char *bounds_refusal(Ctx *c, Group *g, const char **code)
{
    const char *why = size_refusal(c, g);
    *code = "size";
    if (why)
        return why;
    int est = fit_estimate(c, g);
    *code = "registers";
    if (est > c->opt->max_registers)
        return arena_printf(c->a, "register estimate %d > budget %d", est, c->opt->max_registers);
    return NULL;
}

/* ---- joining a node to a consumer's group ----------------------------------- */

/* The shape of r's result without its reduced dims (keepdims or not). */
static IrShape reduced_shape(const IrShape *space, uint8_t axes)
{
    IrShape s = {0};
    for (int i = 0; i < space->rank; i++)
        if (!((axes >> i) & 1))
            s.dims[s.rank++] = space->dims[i];
    return s;
}

static IrShape squeeze_ones(const IrShape *in, const IrShape *space, uint8_t axes)
{
    /* a keepdims result: drop the size-1 dims at the reduced positions */
    int keep = in->rank == space->rank;
    for (int i = 0; keep && i < in->rank; i++)
        if (((axes >> i) & 1) && !ir_dim_is_one(in->dims[i]))
            keep = 0;
    if (keep) {
        IrShape s = {0};
        for (int i = 0; i < in->rank; i++)
            if (!((axes >> i) & 1))
                s.dims[s.rank++] = in->dims[i];
        return s;
    }
    return *in;
}

/* Levels at which g's members use n (FL_ELEM for a reduction's operand). */
static uint8_t use_level(Ctx *c, const Group *g, const IrNode *n, IrNode **first_user)
{
    uint8_t l = 0;
    *first_user = NULL;
    for (int i = 0; i < c->nusers[n->id]; i++) {
        IrNode *u = c->users[n->id][i];
        if (!g->lvl[u->id])
            continue;
        if (!*first_user)
            *first_user = u;
        l |= is_reduce(u) ? FL_ELEM : g->lvl[u->id];
    }
    return l;
}

/* the source spelling of a reduction: "sum", "max" */
static const char *opname(const IrNode *n) { return op_info[n->op].src; }

/* Is v's shape the reduced shape of g (keepdims or not): one value per
 * row, column or scalar of the reduction? */
static int is_reduced_shape(const Group *g, const IrNode *v)
{
    IrShape rs = reduced_shape(&g->space, g->axes);
    IrShape vs = squeeze_ones(&v->shape, &g->space, g->axes);
    return ir_shape_eq(&rs, &vs);
}

/* A reduction r just joined g and is broadcast back (a row kernel): the
 * members computed from r that have the reduced shape (rsqrt(var + eps),
 * say) are per-row values now, not per-element ones. */
static void retag_rows(Ctx *c, Group *g, const IrNode *r)
{
    uint8_t *desc = c->scratch_desc;
    memset(desc, 0, (size_t)c->f->nnodes);
    desc[r->id] = 1;
    for (int i = r->id + 1; i < c->f->nnodes; i++) {
        IrNode *u = c->f->nodes[i];
        if (!g->lvl[i] || is_reduce(u))
            continue;
        for (int j = 0; j < u->nin; j++)
            desc[i] |= desc[u->in[j].node->id];
        if (desc[i] && is_reduced_shape(g, u))
            g->lvl[i] = FL_RED;
    }
}

/* Try to add n to g (which holds a user of n); on refusal record why and
 * return 0.  The kind of g may change (loop -> reduce or row, reduce ->
 * row) when a reduction joins. */
static int try_join(Ctx *c, Group *g, IrNode *n)
{
    IrNode *user;
    uint8_t ul = use_level(c, g, n, &user);
    if (!ul)
        return 0;
    if (is_view(n)) { /* free, and never a buffer of its own: always joins */
        g->lvl[n->id] |= ul;
        return 1;
    }
    Group save = *g;
    uint8_t *savelvl = c->scratch_lvl;
    memcpy(savelvl, g->lvl, (size_t)c->f->nnodes);

    if (!is_reduce(n)) {
        g->lvl[n->id] |= ul;
    } else {
        IrNode *opnd = n->in[0].node;
        const IrShape *O = &opnd->shape;
        ReduceLayout lay = layout_of(n->axes, O->rank);
        const char *ax = axes_words(c->a, n->axes, O->rank);
        int back = ul & FL_ELEM; /* the result is used per element of g */
        if (g->kind == KK_LOOP && !ir_shape_eq(O, &g->space)) {
            IrShape rs = reduced_shape(O, n->axes), gs = squeeze_ones(&g->space, O, n->axes);
            if (ir_shape_eq(&rs, &gs) || ir_shape_eq(&n->shape, &g->space)) {
                /* epilogue: g iterates over the reduction's result */
                for (int i = 0; i < c->f->nnodes; i++)
                    if (g->lvl[i])
                        g->lvl[i] = FL_RED;
                g->kind = KK_REDUCE;
                g->space = *O;
                g->axes = n->axes;
                g->lvl[n->id] = FL_RED;
                back = 0;
            } else {
                reject(c, n, user, "space",
                       arena_printf(c->a, "%%%d reduces %s but %%%d iterates over %s", n->id,
                                    shape_words(c->a, c->f, O), user->id,
                                    shape_words(c->a, c->f, &g->space)));
                return 0;
            }
        } else {
            if (g->kind == KK_LOOP)
                back = 1;
            if (ir_shape_eq(O, &g->space) && back && lay != RL_ROWS) {
                reject(c, n, user, "grid-dependency",
                       arena_printf(c->a, "%%%d (%s %s) is needed by every element of %%%d: "
                                    "needs a grid-wide barrier", n->id, opname(n), ax, user->id));
                return 0;
            }
            if (!ir_shape_eq(O, &g->space) || (g->kind != KK_LOOP && g->axes != n->axes)) {
                reject(c, n, user, "space",
                       arena_printf(c->a, "%%%d (%s %s of %s) and the kernel of %%%d (%s of %s) "
                                    "iterate differently", n->id, opname(n), ax,
                                    shape_words(c->a, c->f, O), user->id,
                                    axes_words(c->a, g->axes, g->space.rank),
                                    shape_words(c->a, c->f, &g->space)));
                return 0;
            }
            if (back && lay != RL_ROWS) {
                reject(c, n, user, "grid-dependency",
                       arena_printf(c->a, "%%%d (%s %s) is needed by every element of %%%d: "
                                    "needs a grid-wide barrier", n->id, opname(n), ax, user->id));
                return 0;
            }
            if (back)
                g->kind = KK_ROW;
            else if (g->kind == KK_LOOP)
                g->kind = KK_REDUCE;
            g->axes = n->axes;
            g->lvl[n->id] = FL_RED;
            if (back)
                retag_rows(c, g, n);
        }
    }
    const char *code, *why = bounds_refusal(c, g, &code);
    if (why) {
        memcpy(g->lvl, savelvl, (size_t)c->f->nnodes);
        uint8_t *keep = g->lvl;
        *g = save;
        g->lvl = keep;
        reject(c, n, user, code, why);
        return 0;
    }
    return 1;
}

/* May g write n (n in g)?  Outputs have the shape of the space (loop, and
 * ride-along) or of the reduced result (reduce and row kernels). */
static int can_write(const Group *g, const IrNode *n)
{
    if (ir_shape_eq(&n->shape, &g->space))
        return 1;
    if (g->kind == KK_LOOP)
        return 0;
    return (g->lvl[n->id] & FL_RED) && is_reduced_shape(g, n);
}

/* A group of n's own, which writes it. */
static Group *own_group(Ctx *c, IrNode *n)
{
    Group *g;
    if (is_reduce(n)) {
        g = group_new(c, KK_REDUCE, &n->in[0].node->shape, n->axes);
        g->lvl[n->id] = FL_RED;
    } else {
        g = group_new(c, KK_LOOP, &n->shape, 0);
        if (!is_leaf(n))
            g->lvl[n->id] = FL_ELEM;
    }
    return g;
}

/* g writes n for every fn result that is n; when n is no result and
 * `intermediate` is set, it writes n as an intermediate buffer. */
static void write_results(Ctx *c, Group *g, IrNode *n, int intermediate)
{
    int any = 0;
    for (int r = 0; r < c->f->nresults; r++)
        if (c->f->results[r].node == n) {
            group_write(c, g, n, r);
            any = 1;
        }
    if (!any && intermediate)
        group_write(c, g, n, -1);
}

static int is_result(const IrFunc *f, const IrNode *n)
{
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node == n)
            return 1;
    return 0;
}

/* no_fusion: one group per op; views are recomputed by their users. */
static void place_unfused(Ctx *c, IrNode *n)
{
    if (is_view(n)) {
        int placed = 0;
        for (int gi = 0; gi < c->ng; gi++) {
            Group *g = c->g[gi];
            IrNode *u;
            uint8_t ul = use_level(c, g, n, &u);
            if (ul) {
                g->lvl[n->id] |= ul;
                placed = 1;
            }
        }
        if (is_result(c->f, n) || !placed)
            write_results(c, own_group(c, n), n, 0);
        return;
    }
    Group *g = own_group(c, n);
    write_results(c, g, n, 1);
}

static uint8_t *dependencies(Ctx *c);
static int unite(Ctx *c, int i, int j, const uint8_t *dep);

/* A row reduction n used by several kernels (a layernorm backward's mean
 * and variance feed both the row-persistent kernel of dx and the column
 * sums of dgamma): when one user kernel is a row kernel over n's rows, n
 * joins it (that kernel holds the row on chip anyway) and the kernel
 * stores the per-row value for the other users, instead of a kernel of
 * n's own that reads the whole input again.  The row kernel may not
 * depend on the other users (they read what it writes).  The refusals
 * say where n is stored and, for a column reduction among the users, why
 * it stays apart.  1 if done. */
static int join_row_home(Ctx *c, IrNode *n, int ngroups)
{
    uint8_t *dep = dependencies(c);
    int ng = c->ng;
    for (int gi = 0; gi < ngroups; gi++) {
        Group *h = c->g[gi];
        IrNode *u;
        if (h->dead || h->kind != KK_ROW || h->axes != n->axes || !ir_shape_eq(&h->space, &n->in[0].node->shape) ||
            !is_reduced_shape(h, n) || !use_level(c, h, n, &u))
            continue;
        int indep = 1, nusers = 1;
        for (int gj = 0; gj < ngroups && indep; gj++)
            if (gj != gi && !c->g[gj]->dead && use_level(c, c->g[gj], n, &u)) {
                indep = !dep[gi * ng + gj];
                nusers++;
            }
        if (!indep || !try_join(c, h, n))
            continue;
        write_results(c, h, n, 1);
        IrNode *hu;
        use_level(c, h, n, &hu);
        for (int gj = 0; gj < ngroups; gj++) {
            Group *o = c->g[gj];
            if (gj == gi || o->dead || !use_level(c, o, n, &u))
                continue;
            reject(c, n, u, "multiple-consumers",
                   arena_printf(c->a, "%%%d is used by %d kernels: computed in the row kernel of %%%d "
                                "and stored for the others", n->id, nusers, hu->id));
            /* a column reduction of the row kernel's space among them */
            for (int m = 0; m < c->f->nnodes; m++) {
                IrNode *r = c->f->nodes[m];
                if (!o->lvl[m] || !is_reduce(r) || !ir_shape_eq(&r->in[0].node->shape, &h->space) ||
                    r->axes != (uint8_t)(((1u << h->space.rank) - 1u) & ~h->axes))
                    continue;
                int said = 0; /* once per column reduction */
                for (int x = 0; x < c->nrej; x++)
                    said |= c->rej[x].producer == r && strcmp(c->rej[x].code, "space") == 0;
                if (said)
                    continue;
                reject(c, r, hu, "space",
                       arena_printf(c->a, "%%%d (%s %s) would reduce across the rows of the row-persistent "
                                    "kernel of %%%d: it stays in a column kernel of its own, which reads "
                                    "the stored per-row values", r->id, opname(r),
                                    axes_words(c->a, r->axes, h->space.rank), hu->id));
            }
        }
        return 1;
    }
    return 0;
}

/* The main pass, for one node (every user of it already placed): join the
 * users' groups, or be materialised in a group of its own. */
static void place(Ctx *c, IrNode *n)
{
    int ngroups = c->ng; /* groups that exist now hold all of n's users */
    int nuser_groups = 0, bad = 0;
    Group *single = NULL;
    for (int gi = 0; gi < ngroups; gi++) {
        IrNode *u;
        if (c->g[gi]->dead || !use_level(c, c->g[gi], n, &u))
            continue;
        nuser_groups++;
        single = c->g[gi];
    }
    if (nuser_groups == 0) {
        if (is_result(c->f, n))
            write_results(c, own_group(c, n), n, 0);
        return;
    }
    if (is_reduce(n) && nuser_groups > 1) {
        /* independent user kernels of one space become one (softmax and
         * logsumexp of the same rows share their max) */
        uint8_t *dep = dependencies(c);
        int first = -1, left = 0;
        for (int gi = 0; gi < ngroups; gi++) {
            IrNode *u;
            if (c->g[gi]->dead || !use_level(c, c->g[gi], n, &u))
                continue;
            if (first < 0)
                first = gi;
            else if (unite(c, first, gi, dep))
                dep = dependencies(c);
            else
                left++;
        }
        if (!left) {
            nuser_groups = 1;
            single = c->g[first];
        }
    }
    if (is_reduce(n) && nuser_groups > 1 && join_row_home(c, n, ngroups))
        return;
    if (is_reduce(n) && nuser_groups > 1) {
        IrNode *u = c->users[n->id][0];
        reject(c, n, u, "multiple-consumers",
               arena_printf(c->a, "%%%d is used by %d kernels: computed once and stored",
                            n->id, nuser_groups));
        write_results(c, own_group(c, n), n, 1);
        return;
    }
    if (is_reduce(n)) {
        if (!try_join(c, single, n)) {
            write_results(c, own_group(c, n), n, 1);
            return;
        }
        if (is_result(c->f, n)) {
            if (can_write(single, n))
                write_results(c, single, n, 0);
            else
                ICE("a reduction placed where it cannot be written");
        }
        return;
    }
    if (nuser_groups > 1 && c->cost[n->id] > FUSE_RECOMPUTE_MAX && !is_view(n)) {
        IrNode *u = NULL;
        for (int gi = ngroups - 1; gi >= 0 && !u; gi--) /* a user in another kernel */
            if (!c->g[gi]->dead && c->g[gi] != single)
                use_level(c, c->g[gi], n, &u);
        if (!u)
            use_level(c, single, n, &u);
        reject(c, n, u, "recompute",
               arena_printf(c->a, "%%%d is needed by %d kernels and costs %d ops to recompute: "
                            "stored once instead", n->id, nuser_groups, c->cost[n->id]));
        write_results(c, own_group(c, n), n, 1);
        return;
    }
    Group *writer = NULL;
    for (int gi = 0; gi < ngroups; gi++) {
        IrNode *u;
        Group *g = c->g[gi];
        if (g->dead || !use_level(c, g, n, &u))
            continue;
        if (!try_join(c, g, n))
            bad = 1;
        else if (!writer && can_write(g, n))
            writer = g;
    }
    if (bad)
        write_results(c, own_group(c, n), n, 1);
    else if (is_result(c->f, n) && writer)
        write_results(c, writer, n, 0);
    else if (is_result(c->f, n) && c->eager[n->id])
        write_results(c, own_group(c, n), n, 0);
    else if (is_result(c->f, n)) /* a consumer's kernel may become able to */
        ARENA_PUSH(c->a, c->pending, c->npending, c->cappending, n);
}

/* After the main pass: a pending result goes to a kernel that holds it and
 * can now write it (a loop that became a row kernel writes per-row values).
 * Returns the id of one that none can write (plan again, eagerly), or -1. */
static int settle_pending(Ctx *c)
{
    for (int i = 0; i < c->npending; i++) {
        IrNode *n = c->pending[i];
        Group *w = NULL;
        for (int gi = 0; gi < c->ng && !w; gi++)
            if (!c->g[gi]->dead && c->g[gi]->lvl[n->id] && can_write(c->g[gi], n))
                w = c->g[gi];
        if (!w)
            return n->id;
        write_results(c, w, n, 0);
    }
    return -1;
}

/* ---- dependencies, sideways merges, order ------------------------------------ */

/* home[id]: the group writing node id, or -1. */
static int *homes(Ctx *c)
{
    int *home = ARENA_ARRAY(c->a, int, c->f->nnodes);
    for (int i = 0; i < c->f->nnodes; i++)
        home[i] = -1;
    for (int gi = 0; gi < c->ng; gi++)
        if (!c->g[gi]->dead)
            for (int w = 0; w < c->g[gi]->nwr; w++)
                if (home[c->g[gi]->wr[w].node->id] < 0)
                    home[c->g[gi]->wr[w].node->id] = gi;
    return home;
}

/* dep[i*ng+j]: group i reads something group j writes (transitively). */
static uint8_t *dependencies(Ctx *c)
{
    int ng = c->ng;
    int *home = homes(c);
    uint8_t *dep = ARENA_ARRAY(c->a, uint8_t, (size_t)ng * (size_t)ng + 1);
    for (int gi = 0; gi < ng; gi++) {
        Group *g = c->g[gi];
        if (g->dead)
            continue;
        /* what g reads: operands of its members that it does not compute
         * (the inputs of group_to_kernel, without building the kernel) */
        for (int id = 0; id < c->f->nnodes; id++) {
            IrNode *n = c->f->nodes[id];
            if (!g->lvl[id] || n->op == OP_PARAM)
                continue;
            for (int j = 0; j < n->nin; j++) {
                IrNode *in = n->in[j].node;
                if (g->lvl[in->id] || is_leaf(in) || home[in->id] < 0 || home[in->id] == gi)
                    continue; /* home < 0: not placed yet (during the main pass) */
                dep[gi * ng + home[in->id]] = 1;
            }
        }
    }
    /* transitive closure (Warshall) on 64-bit rows: big graphs have
     * hundreds of groups */
    int words = (ng + 63) / 64;
    uint64_t *bits = ARENA_ARRAY(c->a, uint64_t, (size_t)ng * (size_t)words + 1);
    for (int i = 0; i < ng; i++)
        for (int j = 0; j < ng; j++)
            if (dep[i * ng + j])
                bits[(size_t)i * (size_t)words + (size_t)(j / 64)] |= (uint64_t)1 << (j % 64);
    for (int m = 0; m < ng; m++)
        for (int i = 0; i < ng; i++)
            if ((bits[(size_t)i * (size_t)words + (size_t)(m / 64)] >> (m % 64)) & 1)
                for (int w = 0; w < words; w++)
                    bits[(size_t)i * (size_t)words + (size_t)w] |= bits[(size_t)m * (size_t)words + (size_t)w];
    for (int i = 0; i < ng; i++)
        for (int j = 0; j < ng; j++)
            dep[i * ng + j] = (uint8_t)((bits[(size_t)i * (size_t)words + (size_t)(j / 64)] >> (j % 64)) & 1);
    return dep;
}

/* Can b join a sideways (b independent of a)?  Same space; a loop joins a
 * reduce or row kernel whose space it iterates as a ride-along; reductions
 * over the same axes share a kernel (a row kernel takes a row reduce). */
static int sideways_ok(const Group *a, const Group *b)
{
    if (!ir_shape_eq(&a->space, &b->space))
        return 0;
    if (a->kind == KK_LOOP || b->kind == KK_LOOP)
        return 1;
    return a->axes == b->axes;
}

/* Can the row reductions of b ride along the column reductions of a, in
 * one pass over their space (side reductions, Kernel.side_axes)?  Both
 * reduce kernels of one space, a over a prefix of its axes (columns), b
 * over the rest (rows), with no rows shorter than a warp's 32 columns.
 * The pass reads the space once instead of twice and stores a
 * partial state per row and 32-column tile (1/32 of the elements at most),
 * which a second launch adds up.  NULL if it can, else why not (words for
 * the sibling-axes report). */
static const char *side_refusal(Ctx *c, const Group *a, const Group *b)
{
    int rank = a->space.rank;
    uint8_t all = (uint8_t)((1u << rank) - 1u);
    if (a->kind == KK_ROW || b->kind == KK_ROW)
        return "a row-persistent kernel folds column reductions only as partials for a column kernel";
    if (a->kind != KK_REDUCE || b->kind != KK_REDUCE || b->side || !ir_shape_eq(&a->space, &b->space))
        return "they are not two plain reductions of one space";
    if (layout_of(a->axes, rank) != RL_COLS || (a->axes | b->axes) != all || (a->axes & b->axes) ||
        (a->side && a->side != b->axes))
        return "one pass takes a reduction over leading axes beside one over all the other axes";
    /* both axis sets span elements (static 1s collapse: the pass would
     * have no rows or no columns) */
    int arows = 0, bcols = 0;
    for (int d = 0; d < rank; d++) {
        arows |= ((a->axes >> d) & 1) && a->space.dims[d].size != 1;
        bcols |= ((b->axes >> d) & 1) && a->space.dims[d].size != 1;
    }
    if (!arows || !bcols)
        return "one of the two reduces only axes of static size 1";
    /* a static row shorter than a warp's 32 columns would leave most lanes
     * of the column kernel idle: the row kernel's lanes share such rows */
    int64_t row = 1;
    for (int d = 0; d < rank; d++)
        if ((b->axes >> d) & 1)
            row = a->space.dims[d].size > 0 && row > 0 ? row * a->space.dims[d].size : -1;
    if (row > 0 && row < 32)
        return arena_printf(c->a, "its rows of %lld elements are narrower than a warp's 32 columns", (long long)row);
    /* per row: the reductions and what is computed from them (an
     * epilogue, which the second launch applies); nothing b needs both
     * per element and per row */
    for (int n = 0; n < c->f->nnodes; n++) {
        const IrNode *v = c->f->nodes[n];
        if ((b->lvl[n] & FL_RED) && (b->lvl[n] & FL_ELEM) && v->op != OP_CONST)
            return arena_printf(c->a, "%%%d is needed per element and per row", v->id);
        if ((b->lvl[n] & FL_RED) && is_reduce(v) && v->axes != b->axes)
            return "the row kernel holds reductions over other axes";
    }
    return NULL;
}

static int side_ok(Ctx *c, const Group *a, const Group *b) { return !side_refusal(c, a, b); }

/* Merge group j into group i when they are independent (dep: the
 * transitive dependencies) and the register budget allows; 1 if done.
 * Row reductions join a column kernel as its side reductions (side_ok). */
static int unite(Ctx *c, int i, int j, const uint8_t *dep)
{
    Group *a = c->g[i], *b = c->g[j];
    int ng = c->ng;
    if (a->dead || b->dead || dep[i * ng + j] || dep[j * ng + i])
        return 0;
    int side = !sideways_ok(a, b) && side_ok(c, a, b);
    if (!side && !sideways_ok(a, b))
        return 0;
    Group save = *a;
    uint8_t *lv = c->scratch_lvl;
    memcpy(lv, a->lvl, (size_t)c->f->nnodes);
    if (b->kind == KK_ROW || (a->kind == KK_LOOP && b->kind == KK_REDUCE)) {
        a->kind = b->kind;
        a->axes = b->axes;
    }
    if (side)
        a->side = b->axes;
    for (int n = 0; n < c->f->nnodes; n++)
        a->lvl[n] |= b->lvl[n];
    for (int w = 0; w < b->nwr; w++)
        group_write(c, a, b->wr[w].node, b->wr[w].result);
    const char *code, *why = bounds_refusal(c, a, &code);
    if (why) {
        uint8_t *keep = a->lvl;
        memcpy(keep, lv, (size_t)c->f->nnodes);
        *a = save;
        a->lvl = keep;
        IrNode *pa = save.nwr ? save.wr[0].node : NULL, *pb = b->nwr ? b->wr[0].node : NULL;
        if (pa && pb && pa != pb)
            reject(c, pb, pa, code, why);
        return 0;
    }
    b->dead = 1;
    return 1;
}

/* The tensor parameter of space's shape that both groups read (directly or
 * through views), or NULL. */
static const IrNode *shared_input(Ctx *c, const Group *a, const Group *b)
{
    for (int p = 0; p < c->f->nnodes; p++) {
        const IrNode *x = c->f->nodes[p];
        if (x->op != OP_PARAM || !ir_shape_eq(&x->shape, &a->space))
            continue;
        int in_a = 0, in_b = 0;
        for (int u = 0; u < c->nusers[p]; u++) {
            const IrNode *y = c->users[p][u];
            while (is_view(y) && c->nusers[y->id] == 1)
                y = c->users[y->id][0];
            in_a |= a->lvl[y->id] != 0;
            in_b |= b->lvl[y->id] != 0;
        }
        if (in_a && in_b)
            return x;
    }
    return NULL;
}

/* Reductions of one input over different axes (row and column sums of a
 * matrix) stay in kernels of their own, each reading the input: say so,
 * with the read it costs. */
static void report_sibling_axes(Ctx *c)
{
    const uint8_t *dep = dependencies(c);
    for (int i = 0; i < c->ng; i++)
        for (int j = i + 1; j < c->ng; j++) {
            Group *a = c->g[i], *b = c->g[j];
            if (a->dead || b->dead || a->kind == KK_LOOP || b->kind == KK_LOOP || a->axes == b->axes ||
                !ir_shape_eq(&a->space, &b->space) || !a->nwr || !b->nwr)
                continue;
            const IrNode *x = shared_input(c, a, b);
            if (!x)
                continue;
            int rank = a->space.rank;
            const char *xn = x->name ? x->name : "the input";
            /* two reduce kernels of which one needs the other's results: no
             * single pass; else the refusal of the order that has a chance,
             * the column group first (a row kernel's: it keeps no column
             * states) */
            const char *why = a->kind != KK_ROW && b->kind != KK_ROW && (dep[i * c->ng + j] || dep[j * c->ng + i])
                                  ? "one kernel needs the other's results"
                              : layout_of(a->axes, rank) == RL_COLS ? side_refusal(c, a, b)
                                                                    : side_refusal(c, b, a);
            reject(c, b->wr[0].node, a->wr[0].node, "sibling-axes",
                   arena_printf(c->a, "%%%d (%s) and %%%d (%s) reduce %s over different axes: each reads "
                                "%s %s, one read more than a single pass; %s",
                                b->wr[0].node->id, axes_words(c->a, b->axes, rank), a->wr[0].node->id,
                                axes_words(c->a, a->axes, rank), xn, xn, shape_words(c->a, c->f, &x->shape),
                                why ? why : "the merged kernel would break the register budget"));
        }
}

static void merge_sideways(Ctx *c)
{
    uint8_t *dep = dependencies(c); /* recomputed after each merge only */
    for (int i = 0; i < c->ng; i++)
        for (int j = i + 1; j < c->ng; j++)
            if (unite(c, i, j, dep) || (!sideways_ok(c->g[i], c->g[j]) && unite(c, j, i, dep)))
                dep = dependencies(c);
}

/* A loop group whose outputs a later group of the same space reads (a value
 * stored because it was too dear to recompute, say) is folded into that
 * reader when nothing else runs between them: the reader computes the
 * values itself and writes them as ride-along outputs.  Readers that are
 * reduce or row kernels are tried first; the register budget still holds. */
static void merge_down(Ctx *c)
{
    uint8_t *dep = dependencies(c);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->ng; i++) {
            Group *a = c->g[i];
            if (a->dead || a->kind != KK_LOOP)
                continue;
            for (int j = 0; j < c->ng; j++) {
                Group *b = c->g[j];
                int ng = c->ng;
                if (j == i || b->dead || (pass == 0) != (b->kind != KK_LOOP) ||
                    !ir_shape_eq(&a->space, &b->space) || !dep[j * ng + i])
                    continue;
                int between = 0;
                for (int x = 0; x < ng && !between; x++)
                    between = x != i && x != j && !c->g[x]->dead && dep[j * ng + x] && dep[x * ng + i];
                if (between)
                    continue;
                uint8_t *lv = c->scratch_lvl;
                memcpy(lv, b->lvl, (size_t)c->f->nnodes);
                int nwr = b->nwr;
                for (int n = 0; n < c->f->nnodes; n++)
                    if (a->lvl[n])
                        b->lvl[n] |= FL_ELEM;
                for (int w = 0; w < a->nwr; w++)
                    group_write(c, b, a->wr[w].node, a->wr[w].result);
                int off = b->off_chip;
                const char *code;
                if (bounds_refusal(c, b, &code)) {
                    memcpy(b->lvl, lv, (size_t)c->f->nnodes);
                    b->nwr = nwr;
                    b->off_chip = off;
                    continue;
                }
                a->dead = 1;
                dep = dependencies(c);
                break;
            }
        }
}

/* Launch order: dependencies first; among ready groups, the one whose
 * first written node comes first.  Returns 0 on a cycle. */
static int order_groups(Ctx *c, Group ***out, int *nout)
{
    uint8_t *dep = dependencies(c);
    int ng = c->ng, n = 0;
    Group **ord = ARENA_ARRAY(c->a, Group *, ng ? ng : 1);
    uint8_t *done = ARENA_ARRAY(c->a, uint8_t, ng ? ng : 1);
    int live = 0;
    for (int i = 0; i < ng; i++)
        live += !c->g[i]->dead;
    while (n < live) {
        int best = -1, bestkey = 0;
        for (int i = 0; i < ng; i++) {
            if (c->g[i]->dead || done[i] || dep[i * ng + i])
                continue;
            int ready = 1;
            for (int j = 0; j < ng && ready; j++)
                if (j != i && dep[i * ng + j] && !done[j] && !c->g[j]->dead)
                    ready = 0;
            if (!ready)
                continue;
            int key = c->f->nnodes;
            for (int w = 0; w < c->g[i]->nwr; w++)
                if (c->g[i]->wr[w].node->id < key)
                    key = c->g[i]->wr[w].node->id;
            if (best < 0 || key < bestkey) {
                best = i;
                bestkey = key;
            }
        }
        if (best < 0)
            return 0;
        done[best] = 1;
        ord[n++] = c->g[best];
    }
    *out = ord;
    *nout = n;
    return 1;
}

/* ---- the plan ------------------------------------------------------------------ */

const char *fuse_kind_name(KernelKind k)
{
    switch (k) {
    case KK_LOOP: return "loop";
    case KK_REDUCE: return "reduce";
    case KK_ROW: return "row";
    }
    unreachable();
}

/* The kernel of p that writes n, else the first that computes it (a
 * value of it), other than one that computes `not`; NULL if none. */
static const Kernel *kernel_of(const Plan *p, const IrNode *n, const IrNode *not)
{
    for (int i = 0; i < p->nkernels; i++)
        for (int o = 0; o < p->kernels[i].noutputs; o++)
            if (p->kernels[i].outputs[o] == n)
                return &p->kernels[i];
    for (int i = 0; i < p->nkernels; i++) {
        const Kernel *k = &p->kernels[i];
        int has = 0, hasnot = 0;
        for (int v = 0; v < k->nvalues; v++) {
            has |= k->values[v] == n;
            hasnot |= not && k->values[v] == not;
        }
        if (has && !hasnot)
            return k;
    }
    return NULL;
}

static int reads(const Kernel *k, const IrNode *n)
{
    for (int i = 0; i < k->ninputs; i++)
        if (k->inputs[i] == n)
            return 1;
    return 0;
}

/* Is n a kernel's input or value? */
static int in_kernel(const Kernel *k, const IrNode *n)
{
    if (reads(k, n))
        return 1;
    for (int v = 0; v < k->nvalues; v++)
        if (k->values[v] == n)
            return 1;
    return 0;
}

int fuse_colp_partner(const Plan *p, int ki)
{
    const Kernel *k = &p->kernels[ki];
    if (k->kind != KK_ROW)
        return -1;
    const uint8_t all = (uint8_t)((1u << k->space.rank) - 1);
    for (int j = ki + 1; j < p->nkernels; j++) {
        const Kernel *q = &p->kernels[j];
        if (q->kind != KK_REDUCE || q->layout != RL_COLS || q->side_axes || !ir_shape_eq(&q->space, &k->space) ||
            q->reduce_axes != (uint8_t)(all & ~k->reduce_axes))
            continue;
        int ok = 1, nred = 0;
        for (int v = 0; v < q->nvalues && ok; v++) {
            const IrNode *n = q->values[v];
            if (op_info[n->op].cls == OPC_REDUCE) {
                ok = n->op == OP_SUM || n->op == OP_MEAN || n->op == OP_RMAX || n->op == OP_RMIN;
                nred++;
            }
            for (int u = 0; u < n->nin && ok; u++) {
                const IrNode *o = n->in[u].node;
                ok = !(o->op == OP_PARAM && !p->fn->params[o->param].is_tensor);
            }
        }
        for (int i = 0; i < q->ninputs && ok; i++)
            ok = in_kernel(k, q->inputs[i]);
        /* _colp only adds partials: an element result of the column
         * kernel's space needs the column kernel's own pass */
        for (int i = 0; i < q->noutputs && ok; i++)
            ok = !ir_shape_eq(&q->outputs[i]->shape, &q->space);
        if (ok && nred)
            return j;
    }
    return -1;
}

/* What a split costs, said once for each pair of kernels, on the first
 * rejection between them (the producer's kernel and the consumer's that
 * the producer did not join; sibling-axes says its own): the inputs of
 * the consumer kernel's space that both read (read twice), and the
 * producer when it has that shape and goes from one to the other through
 * memory (written and read back), in bytes an element of that space that
 * a single pass would not move. */
static void cost_splits(Arena *a, Plan *p)
{
    int nr = p->nrejected;
    const Kernel **kp = ARENA_ARRAY(a, const Kernel *, nr ? nr : 1);
    const Kernel **kc = ARENA_ARRAY(a, const Kernel *, nr ? nr : 1);
    for (int i = 0; i < nr; i++) {
        const Rejection *r = &p->rejected[i];
        int own = strcmp(r->code, "sibling-axes") == 0;
        kp[i] = own ? NULL : kernel_of(p, r->producer, NULL);
        kc[i] = own ? NULL : kernel_of(p, r->consumer, r->producer);
    }
    for (int i = 0; i < nr; i++) {
        Rejection *r = &p->rejected[i];
        if (!kp[i] || !kc[i] || kp[i] == kc[i])
            continue;
        int said = 0;
        for (int j = 0; j < i; j++)
            said |= (kp[j] == kp[i] && kc[j] == kc[i]) || (kp[j] == kc[i] && kc[j] == kp[i]);
        if (said)
            continue;
        const Kernel *k = kc[i];
        int n = 0, bytes = 0, back = 0;
        const IrNode **twice = ARENA_ARRAY(a, const IrNode *, k->ninputs ? k->ninputs : 1);
        for (int x = 0; x < k->ninputs; x++) {
            const IrNode *in = k->inputs[x];
            if (!ir_shape_eq(&in->shape, &k->space))
                continue;
            if (reads(kp[i], in)) {
                twice[n++] = in;
                bytes += dtype_size(fuse_mem_dtype(p->fn, in));
            } else if (in == r->producer) {
                back = 1;
                bytes += 2 * dtype_size(fuse_mem_dtype(p->fn, in));
            }
        }
        if (!n && !back)
            continue;
        Buf what = {0};
        for (int m = 0; m < n; m++) {
            const char *sep = m == 0 ? "" : m == n - 1 ? " and " : ", ";
            if (twice[m]->name)
                buf_printf(&what, "%s%s", sep, twice[m]->name);
            else
                buf_printf(&what, "%s%%%d", sep, twice[m]->id);
        }
        /* a row kernel and the column kernel whose reductions it folds
         * (fuse_colp_partner) read them once where it leaves partials */
        int ip = (int)(kp[i] - p->kernels), ic = (int)(kc[i] - p->kernels);
        int colp = fuse_colp_partner(p, ip) == ic || fuse_colp_partner(p, ic) == ip;
        if (n)
            buf_printf(&what, " %s read twice%s", n == 1 ? "is" : "are", colp ? " where no column partials are left" : "");
        if (back)
            buf_printf(&what, "%s%%%d is written and read back", n ? ", " : "", r->producer->id);
        r->reason = arena_printf(a, "%s; %s, %d byte%s an element of %s more than one pass", r->reason, what.data,
                                 bytes, bytes == 1 ? "" : "s", shape_words(a, p->fn, &k->space));
        buf_free(&what);
    }
}

/* One planning attempt.  Returns NULL with *retry set to a result node
 * that must be written eagerly (plan again), or NULL with *retry -1 when
 * the groups could not be ordered. */
static Plan *build(Arena *a, IrFunc *f, const FusionOptions *opt, int no_fusion, uint8_t *eager,
                   int *retry)
{
    Ctx c = {0};
    *retry = -1;
    c.eager = eager;
    c.a = a;
    c.f = f;
    c.opt = opt;
    c.no_fusion = no_fusion;
    ir_count_uses(f);
    c.scratch_lvl = ARENA_ARRAY(a, uint8_t, f->nnodes ? f->nnodes : 1);
    c.scratch_desc = ARENA_ARRAY(a, uint8_t, f->nnodes ? f->nnodes : 1);
    c.users = ARENA_ARRAY(a, IrNode **, f->nnodes ? f->nnodes : 1);
    c.nusers = ARENA_ARRAY(a, int, f->nnodes ? f->nnodes : 1);
    int *capu = ARENA_ARRAY(a, int, f->nnodes ? f->nnodes : 1);
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        for (int j = 0; j < n->nin; j++) {
            IrNode *o = n->in[j].node;
            int seen = 0;
            for (int k = 0; k < c.nusers[o->id]; k++)
                seen |= c.users[o->id][k] == n;
            if (!seen)
                ARENA_PUSH(a, c.users[o->id], c.nusers[o->id], capu[o->id], n);
        }
    }
    c.cost = ARENA_ARRAY(a, int, f->nnodes ? f->nnodes : 1);
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        if (is_leaf(n) || is_reduce(n))
            continue;
        int64_t k = is_view(n) ? 0 : 1;
        for (int j = 0; j < n->nin; j++)
            k += c.cost[n->in[j].node->id];
        c.cost[i] = k > 1000000 ? 1000000 : (int)k;
    }
    /* results that are leaves: a param is copied, a constant is filled */
    for (int r = 0; r < f->nresults; r++) {
        IrNode *n = f->results[r].node;
        if (n && is_leaf(n)) {
            int seen = 0; /* the same leaf twice: one group writes both */
            for (int q = 0; q < r; q++)
                seen |= f->results[q].node == n;
            if (seen)
                continue;
            Group *g = own_group(&c, n);
            if (n->op == OP_CONST)
                g->lvl[n->id] = FL_ELEM;
            write_results(&c, g, n, 0);
        }
    }
    for (int i = f->nnodes - 1; i >= 0; i--) {
        IrNode *n = f->nodes[i];
        if (is_leaf(n))
            continue;
        if (no_fusion)
            place_unfused(&c, n);
        else
            place(&c, n);
    }
    if (!no_fusion && (*retry = settle_pending(&c)) >= 0)
        return NULL;
    if (!no_fusion) {
        merge_down(&c);
        merge_sideways(&c);
        report_sibling_axes(&c);
    }
    Group **ord;
    int nord;
    if (!order_groups(&c, &ord, &nord))
        return NULL;

    Plan *p = ARENA_NEW(a, Plan);
    p->fn = f;
    p->nkernels = nord;
    p->kernels = ARENA_ARRAY(a, Kernel, nord ? nord : 1);
    for (int i = 0; i < nord; i++) {
        Kernel *k = &p->kernels[i];
        group_to_kernel(&c, ord[i], k);
        k->index = i;
        k->name = arena_printf(a, "%s_k%d_%s", f->name, i, fuse_kind_name(k->kind));
    }
    /* intermediates: written, read later, not results */
    int cap = 0;
    for (int id = 0; id < f->nnodes; id++)
        for (int i = 0; i < nord; i++)
            for (int o = 0; o < p->kernels[i].noutputs; o++)
                if (p->kernels[i].outputs[o]->id == id && p->kernels[i].out_result[o] < 0)
                    push_node(a, &p->intermediates, &p->nintermediates, &cap, f->nodes[id]);
    p->rejected = c.rej;
    p->nrejected = c.nrej;
    cost_splits(a, p);
    return p;
}

/* The plan's promises to the emitters (fusion.h), checked on every plan:
 * a broken one is a bug in this file, never in the input. */
static void verify(const Plan *p)
{
    const IrFunc *f = p->fn;
    int *writer = calloc((size_t)f->nnodes + 1, sizeof(int));
    if (!writer)
        fatal_oom();
    for (int i = 0; i < f->nnodes; i++)
        writer[i] = -1;
    for (int ki = 0; ki < p->nkernels; ki++) {
        const Kernel *k = &p->kernels[ki];
        uint8_t *here = calloc((size_t)f->nnodes + 1, 1);
        if (!here)
            fatal_oom();
        for (int i = 0; i < k->nvalues; i++)
            here[k->values[i]->id] = 1;
        for (int i = 0; i < k->ninputs; i++) {
            const IrNode *in = k->inputs[i];
            if (here[in->id] || is_scalar_param(f, in))
                ICE("plan: an input is also a value, or a scalar");
            if (in->op != OP_PARAM && (writer[in->id] < 0 || writer[in->id] >= ki))
                ICE("plan: a kernel reads a value no earlier kernel writes");
            here[in->id] = 2;
        }
        for (int i = 0; i < k->nvalues; i++) {
            const IrNode *v = k->values[i];
            if (v->op == OP_PARAM || !k->level[i])
                ICE("plan: a param among the values, or a value without a level");
            if (is_reduce(v) && (k->kind == KK_LOOP || !ir_shape_eq(&v->in[0].node->shape, &k->space) ||
                                 (v->axes != k->reduce_axes && (!k->side_axes || v->axes != k->side_axes))))
                ICE("plan: a reduction that does not match its kernel");
            for (int j = 0; j < v->nin; j++) {
                const IrNode *o = v->in[j].node;
                if (!here[o->id] && o->op != OP_CONST && !is_scalar_param(f, o))
                    ICE("plan: an operand that is neither computed nor read");
            }
        }
        if (k->kind == KK_ROW && k->layout != RL_ROWS)
            ICE("plan: a row kernel not over rows");
        for (int i = 0; i < k->noutputs; i++) {
            const IrNode *o = k->outputs[i];
            int r = k->out_result[i];
            if (r >= f->nresults || (r >= 0 && f->results[r].node != o) ||
                (!here[o->id] && !is_scalar_param(f, o)))
                ICE("plan: an output that is not what it claims");
            if (r < 0 && is_view(o))
                ICE("plan: a view stored as an intermediate");
            if (writer[o->id] >= 0 && writer[o->id] != ki)
                ICE("plan: a value written by two kernels");
            writer[o->id] = ki;
            if (ir_shape_eq(&o->shape, &k->space))
                continue;
            IrShape rs = reduced_shape(&k->space, k->reduce_axes);
            IrShape os = squeeze_ones(&o->shape, &k->space, k->reduce_axes);
            IrShape ss = reduced_shape(&k->space, k->side_axes);
            IrShape so = squeeze_ones(&o->shape, &k->space, k->side_axes);
            if (k->kind == KK_LOOP || (!ir_shape_eq(&rs, &os) && !(k->side_axes && ir_shape_eq(&ss, &so))))
                ICE("plan: an output of the wrong shape for its kernel");
        }
        free(here);
    }
    for (int r = 0; r < f->nresults; r++) {
        int found = 0;
        for (int ki = 0; ki < p->nkernels; ki++)
            for (int i = 0; i < p->kernels[ki].noutputs; i++)
                found |= p->kernels[ki].out_result[i] == r;
        if (!found)
            ICE("plan: a result that no kernel writes");
    }
    free(writer);
}

/* @kernels(N) / --expect-kernels: an error with the reasons as notes. */
static void check_contract(const Plan *p, const FusionOptions *opt, int *ok)
{
    const IrFunc *f = p->fn;
    int want = f->expect_kernels >= 0 ? f->expect_kernels : opt->expect_kernels;
    *ok = 1;
    if (want < 0 || p->nkernels <= want)
        return;
    *ok = 0;
    if (f->expect_kernels >= 0)
        diag_error(f->expect_loc.file >= 0 ? f->expect_loc : f->loc,
                   "fn %s needs %d kernels, but @kernels(%d) allows %d", f->name, p->nkernels,
                   want, want);
    else
        diag_error(f->loc, "fn %s needs %d kernels, but --expect-kernels=%d allows %d", f->name,
                   p->nkernels, want, want);
    enum { MAX_NOTES = 8 }; /* the first few say enough; --emit=fusion has all */
    for (int i = 0; i < p->nrejected && i < MAX_NOTES; i++) {
        const Rejection *r = &p->rejected[i];
        diag_note(r->producer->loc, "not fused into %%%d: %s", r->consumer->id, r->reason);
    }
    if (p->nrejected > MAX_NOTES)
        diag_note(LOC_NONE, "and %d more merges not made; --emit=fusion lists them all",
                  p->nrejected - MAX_NOTES);
}

Plan *fuse_plan(Arena *a, IrFunc *f, const FusionOptions *opt)
{
    uint8_t *eager = ARENA_ARRAY(a, uint8_t, f->nnodes ? f->nnodes : 1);
    int retry;
    Plan *p = build(a, f, opt, opt->no_fusion, eager, &retry);
    while (!p && retry >= 0 && !eager[retry]) { /* a result no kernel could write */
        eager[retry] = 1;
        p = build(a, f, opt, opt->no_fusion, eager, &retry);
    }
    if (!p) /* a cyclic grouping: never expected; stay correct */
        p = build(a, f, opt, 1, eager, &retry);
    if (!p)
        ICE("no acyclic kernel order");
    verify(p);
    int ok;
    check_contract(p, opt, &ok);
    return ok ? p : NULL;
}

/* ---- storage dtypes ---------------------------------------------------------- */

DType fuse_mem_dtype(const IrFunc *f, const IrNode *n)
{
    for (;;) {
        if (n->dtype != DT_F16 && n->dtype != DT_BF16)
            return n->dtype;
        if (n->op == OP_PARAM)
            return n->dtype;
        for (int r = 0; r < f->nresults; r++)
            if (f->results[r].node == n)
                return n->dtype; /* a result view has a buffer of its own */
        if (!is_view(n) || n->nin < 1)
            return DT_F32;
        n = n->in[0].node; /* another view is stored as its operand */
    }
}
