/* cuda/cross.c -- a row reduction with cross reductions (Kernel.cross,
 * fusion.h): the rows reduced as usual, and in the same pass over them
 * reductions over the columns (XR_COLS: sum(x, axis=0) beside
 * sum(x, axis=1)) or over all the per-row values (XR_ROWS: the mean over
 * the rows of a row reduction's epilogue).
 *
 * The grid is tiles of columns (blockIdx.x) by chunks of rows
 * (blockIdx.y).  A block is 8 warps; a tile is CROSS_CAP vectors of V
 * elements a lane (64 V columns); warp w takes the rows w, w + 8, ... of
 * the block's chunk.  For each row a warp reads its tile once, folds every
 * element into the row's accumulators and into the lane's column
 * accumulators (registers), then reduces the row over its lanes.
 *   Rows: with one tile the warp finishes the row itself; otherwise each
 *   tile's partial goes to a slot, and the last block of the chunk (a
 *   ticket on the chunk's counter) combines the slots in tile order.
 *   Columns: the 8 warps' accumulators combine in warp order through
 *   shared memory; with one chunk the block finishes its columns,
 *   otherwise each chunk's partial goes to a slot and the last block of
 *   the tile combines the slots in chunk order.
 *   All the rows: the block that finishes a chunk's rows folds their
 *   per-row values, reduces them over the block and writes the chunk's
 *   partial; the last such block combines the partials in chunk order.
 * Every order is fixed by the sizes alone (fzk_<kernel>_grid), so results
 * are the same bits from run to run and on any GPU.  The counters live in
 * the zeroed scratch and every last block puts its counter back to 0. */
#include "cuda_priv.h"

/* column vectors a lane keeps (the tile: 32 lanes x CROSS_CAP x V) */
enum { CROSS_CAP = 2, CROSS_BS = 256, CROSS_BLOCKS = 512 };

int cu_is_cross(const Kernel *k) { return k->kind == KK_REDUCE && k->cross; }

/* Which reductions the kernel holds, by role. */
typedef struct CrossRoles {
    const IrNode *row[64], *col[64], *all[64];
    int nrow, ncol, nall;
    int kg[IR_MAX_RANK], rg[IR_MAX_RANK], nk, nr; /* kept and reduced groups */
} CrossRoles;

static int is_x(const KCtx *c, const IrNode *n)
{
    int vi = cu_value_index(c, n);
    return vi >= 0 && (c->k->level[vi] & FL_X);
}

static void roles(const KCtx *c, CrossRoles *x)
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < c->k->nvalues && i < 64 * 3; i++) {
        const IrNode *v = c->k->values[i];
        if (op_info[v->op].cls != OPC_REDUCE)
            continue;
        if (!(c->k->level[i] & FL_X))
            x->row[x->nrow++] = v;
        else if (ir_shape_eq(&v->in[0].node->shape, &c->k->space))
            x->col[x->ncol++] = v;
        else
            x->all[x->nall++] = v;
    }
    for (int g = 0; g < c->ng; g++) {
        if (c->gred[g])
            x->rg[x->nr++] = g;
        else
            x->kg[x->nk++] = g;
    }
}

/* Does (n) depend on one of the reductions in set? */
static int reaches(const IrNode *n, const IrNode *const *set, int nset, int depth)
{
    for (int i = 0; i < nset; i++)
        if (set[i] == n)
            return 1;
    if (depth > 64 || op_info[n->op].cls == OPC_REDUCE)
        return 0;
    for (int k = 0; k < n->nin; k++)
        if (reaches(n->in[k].node, set, nset, depth + 1))
            return 1;
    return 0;
}

/* bytes of every partial slot: the largest state, in 8-byte words */
static int slot_bytes(const KCtx *c)
{
    int slot = 8;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && cu_red_state_bytes(c->k->values[i]) > slot)
            slot = cu_red_state_bytes(c->k->values[i]);
    return (slot + 7) / 8 * 8;
}

/* The vector variant reads 16 bytes of every full access at once: one
 * reduced group (the columns contiguous), states of one or two words, no
 * element output (ride-along outputs are stored one by one). */
static int cross_vec_width(KCtx *c, const CrossRoles *x)
{
    if (x->nr != 1 || x->rg[0] != c->ng - 1)
        return 1;
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    for (int i = 0; i < x->ncol; i++)
        if (cu_red_state_bytes(x->col[i]) > 8)
            return 1;
    if (!maxsz)
        return 1;
    int v = 16 / maxsz;
    return v > 4 ? 4 : v;
}

/* The variants: 16-byte vectors (`_cross_v`, rows of whole aligned
 * vectors) and elements (`_cross`), 64-bit indices. */
int cu_cross_plan(KCtx *c, Variant *v, int *vw)
{
    CrossRoles x;
    roles(c, &x);
    *vw = cross_vec_width(c, &x);
    int n = 0;
    const char *sfx[2] = {"_cross_v", "_cross"};
    for (int i = *vw > 1 ? 0 : 1; i < 2; i++) {
        Variant *p = &v[n++];
        memset(p, 0, sizeof *p);
        p->kind = VK_CROSS;
        p->i64 = 1;
        p->bs = CROSS_BS;
        p->vw = i == 0 ? *vw : 1;
        p->cl = 1;
        snprintf(p->name, sizeof p->name, "%s%s", c->k->name, sfx[i]);
    }
    return n;
}

/* ---- the body ---------------------------------------------------------- */

/* store cross output i at the current point (columns, or the scalar) */
static void cross_store(KCtx *c, int i)
{
    const IrNode *n = c->k->outputs[i];
    Access a = {n, {0}};
    cu_out_map(c, n, a.map);
    const char *v = cu_emit_value(c, n, a.map);
    Buf s = {0}, off = {0};
    cu_store_conv(&s, MDT(c, n), v);
    cu_acc_offset(c, &a, "I", &off);
    emit_line(&c->w, "out%d[%s] = %s;", i, off.data, s.data);
    buf_free(&s);
    buf_free(&off);
}

/* the outputs of one kind: 'e' per element, 'r' per row, 'c' per column,
 * 'a' the scalar over all rows */
static int out_kind(KCtx *c, const CrossRoles *x, int i)
{
    const IrNode *n = c->k->outputs[i];
    if (is_x(c, n))
        return reaches(n, x->col, x->ncol, 0) ? 'c' : 'a';
    if (cu_value_index(c, n) >= 0 && cu_out_is_elem(c, i))
        return 'e';
    return 'r';
}

static void store_kind(KCtx *c, const CrossRoles *x, int kind)
{
    for (int i = 0; i < c->k->noutputs; i++)
        if (out_kind(c, x, i) == kind) {
            if (kind == 'c' || kind == 'a')
                cross_store(c, i);
            else
                cu_emit_store(c, i, "I");
        }
}

/* One element at the current point: fold it into the row accumulators
 * a<id> and the column accumulators b<id>[k][j], store element outputs. */
static void fold_elem(KCtx *c, const CrossRoles *x, const char *colidx, const char *slot)
{
    for (int i = 0; i < x->nrow + x->ncol; i++) {
        const IrNode *n = i < x->nrow ? x->row[i] : x->col[i - x->nrow];
        int8_t m[IR_MAX_RANK];
        cu_space_map(c, n->in[0].node, m);
        const char *v = cu_emit_value(c, n->in[0].node, m);
        Buf e = {0};
        cu_red_elem(n, v, &e);
        if (i < x->nrow)
            emit_line(&c->w, "a%d = R%d::upd(a%d, %s, (long long)(%s));", n->id, n->id, n->id, e.data, colidx);
        else
            emit_line(&c->w, "b%d%s = R%d::upd(b%d%s, %s, (long long)row);", n->id, slot, n->id, n->id, slot, e.data);
        buf_free(&e);
    }
    int vec = c->vec;
    c->vec = 0; /* element outputs are stored one by one */
    store_kind(c, x, 'e');
    c->vec = vec;
}

/* A finished row (lane 0 of its warp, row reductions in a<id>): the row
 * reductions' results, the row outputs, and the per-row values folded
 * into the accumulators f<id> of the reductions over all rows. */
static void finish_row(KCtx *c, const CrossRoles *x)
{
    for (int i = 0; i < x->nrow; i++)
        cu_finish_reduction(c, x->row[i], "", "nC");
    store_kind(c, x, 'r');
    for (int i = 0; i < x->nall; i++) {
        const IrNode *n = x->all[i];
        int8_t m[IR_MAX_RANK];
        cu_red_operand_map(c, n, m);
        const char *v = cu_emit_value(c, n->in[0].node, m);
        Buf e = {0};
        cu_red_elem(n, v, &e);
        emit_line(&c->w, "f%d = R%d::upd(f%d, %s, (long long)row);", n->id, n->id, n->id, e.data);
        buf_free(&e);
    }
}

static void set_red_index(KCtx *c, const CrossRoles *x, const char *col)
{
    if (x->nr == 1) {
        c->gi[x->rg[0]] = col;
        return;
    }
    cu_decompose_list(c, col, x->rg, x->nr);
}

/* the tile of one row: CROSS_CAP vectors of V columns a lane */
static void row_tile(KCtx *c, const CrossRoles *x, int vw)
{
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int k = 0; k < %d; k++) {", CROSS_CAP);
    cu_open_scope(c);
    emit_line(&c->w, "const I col = c0 + ((I)k * 32 + lane) * V;");
    emit_line(&c->w, "if (col < nC) {");
    cu_open_scope(c);
    if (vw > 1) {
        /* whole aligned vectors (the launcher checked): 16-byte loads */
        emit_line(&c->w, "if (V > 1) {");
        cu_open_scope(c);
        c->gi[x->rg[0]] = "col";
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_full(c, &c->acc[a])) {
                Buf off = {0};
                cu_acc_offset(c, &c->acc[a], "I", &off);
                emit_line(&c->w, "const fz_vec<%s, V> va%d = *(const fz_vec<%s, V> *)(in%d + %s);",
                          cu_stype(MDT(c, c->acc[a].node)), a, cu_stype(MDT(c, c->acc[a].node)),
                          c->inbuf[c->acc[a].node->id], off.data);
                buf_free(&off);
            }
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++) {");
        cu_open_scope(c);
        c->gi[x->rg[0]] = "(col + j)";
        c->vec = 1;
        fold_elem(c, x, "col + j", "[k][j]");
        c->vec = 0;
        cu_close_scope(c);
        cu_close_scope(c);
        emit_line(&c->w, "else {");
        cu_open_scope(c);
    }
    set_red_index(c, x, "col");
    fold_elem(c, x, "col", "[k][0]");
    if (vw > 1)
        cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
    c->gi[x->rg[0]] = NULL;
}

/* The columns of the tile after the rows: the 8 warps' states combine in
 * warp order; one chunk finishes them, several write the chunk's partials
 * and the tile's last block combines them in chunk order. */
static void cols_combine(KCtx *c, const CrossRoles *x)
{
    emit_line(&c->w, "/* the tile's columns: the 8 warps' states in warp order */");
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int k = 0; k < %d; k++) {", CROSS_CAP);
    cu_open_scope(c);
    for (int i = 0; i < x->ncol; i++) {
        int id = x->col[i]->id;
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++)");
        emit_line(&c->w, "    sh%d[wp][lane * V + j] = b%d[k][j];", id, id);
    }
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "const I col = c0 + (I)k * 32 * V + threadIdx.x;");
    emit_line(&c->w, "if (threadIdx.x < 32 * V && col < nC) {");
    cu_open_scope(c);
    for (int i = 0; i < x->ncol; i++) {
        int id = x->col[i]->id;
        emit_line(&c->w, "R%d::S a%d = sh%d[0][threadIdx.x];", id, id, id);
        emit_line(&c->w, "for (int w = 1; w < 8; w++)");
        emit_line(&c->w, "    a%d = R%d::comb(a%d, sh%d[w][threadIdx.x]);", id, id, id, id);
    }
    emit_line(&c->w, "if (nch == 1) {");
    cu_open_scope(c);
    set_red_index(c, x, "col");
    for (int i = 0; i < x->ncol; i++)
        cu_finish_reduction(c, x->col[i], "", "nR");
    store_kind(c, x, 'c');
    cu_close_scope(c);
    emit_line(&c->w, "else {");
    cu_open_scope(c);
    for (int i = 0; i < x->ncol; i++) {
        int id = x->col[i]->id;
        emit_line(&c->w, "colp%d[(I)ch * nC + col] = a%d;", id, id);
    }
    cu_close_scope(c);
    cu_close_scope(c);
    emit_line(&c->w, "__syncthreads(); /* sh is written again for the next k */");
    cu_close_scope(c);
    for (int i = 0; i < x->ncol; i++)
        c->reduced_val[cu_value_index(c, x->col[i])] = NULL;
    emit_line(&c->w, "if (nch > 1) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    fz_last = atomicAdd(tcnt + tile, 1u) == (unsigned)nch - 1;");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (fz_last) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "for (I t = threadIdx.x; t < (I)64 * V; t += %d) {", CROSS_BS);
    cu_open_scope(c);
    emit_line(&c->w, "const I col = c0 + t;");
    emit_line(&c->w, "if (col >= nC)");
    emit_line(&c->w, "    break;");
    set_red_index(c, x, "col");
    for (int i = 0; i < x->ncol; i++) {
        int id = x->col[i]->id;
        emit_line(&c->w, "R%d::S a%d = R%d::init();", id, id, id);
        emit_line(&c->w, "#pragma unroll 8");
        emit_line(&c->w, "for (I z = 0; z < nch; z++)");
        emit_line(&c->w, "    a%d = R%d::comb(a%d, R%d::ldcg(colp%d + z * nC + col));", id, id, id, id, id);
    }
    for (int i = 0; i < x->ncol; i++)
        cu_finish_reduction(c, x->col[i], "", "nR");
    store_kind(c, x, 'c');
    cu_close_scope(c);
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    tcnt[tile] = 0u; /* ready for the next call */");
    cu_close_scope(c);
    emit_line(&c->w, "__syncthreads(); /* fz_last is taken again */");
    cu_close_scope(c);
}

/* The rows of a chunk split over tiles: the chunk's last block combines
 * each row's tile partials in tile order and finishes the row. */
static void rows_combine(KCtx *c, const CrossRoles *x)
{
    emit_line(&c->w, "bool rowfin = ntiles == 1; /* this block finished the chunk's rows */");
    emit_line(&c->w, "if (ntiles > 1) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    fz_last = atomicAdd(ccnt + ch, 1u) == (unsigned)ntiles - 1;");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "rowfin = fz_last;");
    emit_line(&c->w, "if (rowfin) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "for (I row = r0 + wp; row < r1; row += 8) {");
    cu_open_scope(c);
    cu_decompose_list(c, "row", x->kg, x->nk);
    for (int i = 0; i < x->nrow; i++) {
        int id = x->row[i]->id;
        emit_line(&c->w, "R%d::S a%d = R%d::init();", id, id, id);
        emit_line(&c->w, "for (I z = lane; z < ntiles; z += 32)");
        emit_line(&c->w, "    a%d = R%d::comb(a%d, R%d::ldcg(rowp%d + row * ntiles + z));", id, id, id, id, id);
        emit_line(&c->w, "a%d = fz_warp_reduce<R%d, 32>(a%d);", id, id, id);
    }
    emit_line(&c->w, "if (lane == 0) {");
    cu_open_scope(c);
    finish_row(c, x);
    cu_close_scope(c);
    for (int i = 0; i < x->nrow; i++)
        c->reduced_val[cu_value_index(c, x->row[i])] = NULL;
    cu_close_scope(c);
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    ccnt[ch] = 0u; /* ready for the next call */");
    cu_close_scope(c);
    emit_line(&c->w, "__syncthreads(); /* fz_last is taken again */");
    cu_close_scope(c);
}

/* The reductions over all rows: the block that finished a chunk's rows
 * writes the chunk's partial; the last of them combines in chunk order. */
static void all_combine(KCtx *c, const CrossRoles *x)
{
    emit_line(&c->w, "/* over all rows: a partial a chunk, combined in chunk order */");
    emit_line(&c->w, "if (rowfin) {");
    cu_open_scope(c);
    for (int i = 0; i < x->nall; i++) {
        int id = x->all[i]->id;
        emit_line(&c->w, "f%d = fz_block_reduce<R%d, %d>(f%d);", id, id, CROSS_BS / 32, id);
        emit_line(&c->w, "if (threadIdx.x == 0)");
        emit_line(&c->w, "    allp%d[ch] = f%d;", id, id);
    }
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    fz_last = atomicAdd(acnt, 1u) == (unsigned)nch - 1;");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (fz_last) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    for (int i = 0; i < x->nall; i++) {
        int id = x->all[i]->id;
        emit_line(&c->w, "R%d::S a%d = R%d::init();", id, id, id);
        emit_line(&c->w, "for (I z = threadIdx.x; z < nch; z += %d)", CROSS_BS);
        emit_line(&c->w, "    a%d = R%d::comb(a%d, R%d::ldcg(allp%d + z));", id, id, id, id, id);
        emit_line(&c->w, "a%d = fz_block_reduce<R%d, %d>(a%d);", id, id, CROSS_BS / 32, id);
    }
    emit_line(&c->w, "if (threadIdx.x == 0) {");
    cu_open_scope(c);
    for (int i = 0; i < x->nall; i++)
        cu_finish_reduction(c, x->all[i], "", "nR");
    store_kind(c, x, 'a');
    emit_line(&c->w, "*acnt = 0u; /* ready for the next call */");
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
}

static void declare_reds(KCtx *c, const IrNode *const *reds, int n)
{
    for (int i = 0; i < n; i++) {
        Buf t = {0};
        cu_red_type(reds[i], &t);
        emit_line(&c->w, "typedef %s R%d;", t.data, reds[i]->id);
        buf_free(&t);
    }
}

void cu_emit_cross_body(KCtx *c)
{
    const Kernel *k = c->k;
    CrossRoles x;
    roles(c, &x);
    int vw = c->L->vw, slot = slot_bytes(c);
    Buf ps = {0};
    cu_body_params(c, &ps, ", unsigned char *scratch, unsigned char *zscratch");
    cu_reset_point(c);
    emit_line(&c->w, "template <class I, int V>");
    emit_line(&c->w, "static __device__ __forceinline__ void %s_cross_body(%s)", k->name, ps.data);
    emit_line(&c->w, "{");
    cu_open_scope(c);
    cu_emit_group_sizes(c);
    Buf b = {0};
    cu_groups_product(c, 0, &b);
    emit_line(&c->w, "const I nR = %s; /* rows */", b.data);
    b.len = 0;
    cu_groups_product(c, 1, &b);
    emit_line(&c->w, "const I nC = %s; /* columns: the row length */", b.data);
    buf_free(&b);
    declare_reds(c, x.row, x.nrow);
    declare_reds(c, x.col, x.ncol);
    declare_reds(c, x.all, x.nall);
    emit_line(&c->w, "__shared__ int fz_last;");
    for (int i = 0; i < x.ncol; i++)
        emit_line(&c->w, "__shared__ R%d::S sh%d[8][32 * V];", x.col[i]->id, x.col[i]->id);
    emit_line(&c->w, "const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;");
    emit_line(&c->w, "const I ntiles = gridDim.x, nch = gridDim.y, tile = blockIdx.x, ch = blockIdx.y;");
    emit_line(&c->w, "const I c0 = tile * %d * V; /* the tile's first column */", 32 * CROSS_CAP);
    emit_line(&c->w, "const I rpc = (nR + nch - 1) / nch; /* rows a chunk */");
    emit_line(&c->w, "const I r0 = ch * rpc, r1 = r0 + rpc < nR ? r0 + rpc : nR;");
    /* the scratch: counters (tiles, chunks, one), then the partials:
     * columns [chunk][column], rows [row][tile], all rows [chunk] */
    emit_line(&c->w, "unsigned *tcnt = (unsigned *)zscratch, *ccnt = tcnt + ntiles, *acnt = ccnt + nch;");
    emit_line(&c->w, "unsigned char *part = scratch + ((ntiles + nch + 1) * 4 + 255) / 256 * 256;");
    emit_line(&c->w, "(void)tcnt;");
    emit_line(&c->w, "(void)ccnt;");
    emit_line(&c->w, "(void)acnt;");
    int at = 0;
    for (int i = 0; i < x.ncol; i++, at++)
        emit_line(&c->w, "R%d::S *colp%d = (R%d::S *)(part + (I)%d * nch * nC);", x.col[i]->id, x.col[i]->id,
                  x.col[i]->id, at * slot);
    emit_line(&c->w, "unsigned char *rpart = part + (I)%d * nch * nC;", x.ncol * slot);
    emit_line(&c->w, "(void)rpart;");
    for (int i = 0; i < x.nrow; i++)
        emit_line(&c->w, "R%d::S *rowp%d = (R%d::S *)(rpart + (I)%d * nR * ntiles);", x.row[i]->id, x.row[i]->id,
                  x.row[i]->id, i * slot);
    emit_line(&c->w, "unsigned char *apart = rpart + (ntiles > 1 ? (I)%d * nR * ntiles : 0);", x.nrow * slot);
    emit_line(&c->w, "(void)apart;");
    for (int i = 0; i < x.nall; i++)
        emit_line(&c->w, "R%d::S *allp%d = (R%d::S *)(apart + (I)%d * nch);", x.all[i]->id, x.all[i]->id,
                  x.all[i]->id, i * slot);
    for (int i = 0; i < x.ncol; i++) {
        int id = x.col[i]->id;
        emit_line(&c->w, "R%d::S b%d[%d][V];", id, id, CROSS_CAP);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int k = 0; k < %d; k++)", CROSS_CAP);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "    for (int j = 0; j < V; j++)");
        emit_line(&c->w, "        b%d[k][j] = R%d::init();", id, id);
    }
    for (int i = 0; i < x.nall; i++)
        emit_line(&c->w, "R%d::S f%d = R%d::init();", x.all[i]->id, x.all[i]->id, x.all[i]->id);
    emit_line(&c->w, "for (I row = r0 + wp; row < r1; row += 8) {");
    cu_open_scope(c);
    cu_decompose_list(c, "row", x.kg, x.nk);
    for (int i = 0; i < x.nrow; i++)
        emit_line(&c->w, "R%d::S a%d = R%d::init();", x.row[i]->id, x.row[i]->id, x.row[i]->id);
    row_tile(c, &x, vw);
    for (int i = 0; i < x.nrow; i++)
        emit_line(&c->w, "a%d = fz_warp_reduce<R%d, 32>(a%d);", x.row[i]->id, x.row[i]->id, x.row[i]->id);
    emit_line(&c->w, "if (ntiles == 1) {");
    cu_open_scope(c);
    emit_line(&c->w, "if (lane == 0) {");
    cu_open_scope(c);
    finish_row(c, &x);
    cu_close_scope(c);
    for (int i = 0; i < x.nrow; i++)
        c->reduced_val[cu_value_index(c, x.row[i])] = NULL;
    cu_close_scope(c);
    if (x.nrow) {
        emit_line(&c->w, "else if (lane == 0) {");
        cu_open_scope(c);
        for (int i = 0; i < x.nrow; i++)
            emit_line(&c->w, "rowp%d[row * ntiles + tile] = a%d;", x.row[i]->id, x.row[i]->id);
        cu_close_scope(c);
    }
    cu_close_scope(c);
    if (x.ncol)
        cols_combine(c, &x);
    rows_combine(c, &x);
    if (x.nall)
        all_combine(c, &x);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    buf_free(&ps);
}

/* ---- the launch ---------------------------------------------------------- */

/* host: nR, nC and the grid rule of the kernel, a function of the sizes
 * alone: tiles of 64 V columns, chunks of rows while the grid stays
 * within CROSS_BLOCKS blocks (each chunk at least 8 rows, one a warp) */
static void host_sizes(KCtx *c, Buf *b)
{
    Buf r = {0}, n = {0};
    for (int g = 0; g < c->ng; g++) {
        Buf s = {0};
        cu_span_host(c, c->gfirst[g], c->glast[g], &s);
        buf_printf(c->gred[g] ? &n : &r, " * %s", s.data);
        buf_free(&s);
    }
    buf_printf(b, "    const int64_t nR = (int64_t)1%s, nC = (int64_t)1%s;\n", r.data ? r.data : "",
               n.data ? n.data : "");
    buf_free(&r);
    buf_free(&n);
}

static void host_grid_fn(KCtx *c, Buf *b)
{
    buf_printf(b,
               "/* %s: tiles of 64 V columns, chunks of rows (at least 8 a chunk) while\n"
               " * the grid stays within %d blocks; the order of every combine follows */\n"
               "static void %s_grid(int64_t nR, int64_t nC, int V, int64_t *ntiles, int64_t *nch)\n"
               "{\n"
               "    int64_t t = (nC + 64 * V - 1) / (64 * V);\n"
               "    if (t < 1)\n"
               "        t = 1;\n"
               "    int64_t h = %d / t;\n"
               "    if (h > (nR + 7) / 8)\n"
               "        h = (nR + 7) / 8;\n"
               "    if (h > 65535)\n"
               "        h = 65535;\n"
               "    *ntiles = t;\n"
               "    *nch = h < 1 ? 1 : h;\n"
               "}\n",
               c->k->name, CROSS_BLOCKS, c->k->name, CROSS_BLOCKS);
}

/* bytes of the scratch for vector width V (the launcher's grid) */
static void host_need(KCtx *c, Buf *b, const char *V)
{
    CrossRoles x;
    roles(c, &x);
    int slot = slot_bytes(c);
    buf_printf(b,
               "    %s_grid(nR, nC, %s, &t, &h);\n"
               "    cnt = ((t + h + 1) * 4 + 255) / 256 * 256;\n"
               "    need = cnt + (int64_t)%d * h * nC + (t > 1 ? (int64_t)%d * nR * t : 0) + (int64_t)%d * h;\n",
               c->k->name, V, x.ncol * slot, x.nrow * slot, x.nall * slot);
}

/* NAME_scratch_bytes and NAME_scratch_zero_bytes: the most either
 * variant's grid uses, and its counters */
void cu_cross_scratch(KCtx *c, Buf *b)
{
    const Kernel *k = c->k;
    int vw = c->L->vw;
    buf_printf(b, "\n/* launch %s */\n", k->name);
    host_grid_fn(c, b);
    for (int z = 0; z < 2; z++) {
        buf_printf(b, "static size_t %s_scratch_%sbytes(const int64_t *dims)\n{\n    (void)dims;\n", k->name,
                   z ? "zero_" : "");
        host_sizes(c, b);
        buf_puts(b, "    int64_t t, h, cnt, need, most = 0;\n");
        for (int v = 0; v < (vw > 1 ? 2 : 1); v++) {
            host_need(c, b, v ? "1" : vw > 1 ? (vw == 2 ? "2" : "4") : "1");
            buf_printf(b, "    if (%s > most)\n        most = %s;\n", z ? "cnt" : "need", z ? "cnt" : "need");
        }
        buf_puts(b, "    (void)need;\n    (void)cnt;\n    return (size_t)most;\n}\n");
    }
}

/* the launch: the vector variant on rows of whole aligned vectors */
void cu_cross_launch(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    host_sizes(c, b);
    buf_printf(b, "    if (!scratch || !zscratch)\n        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "
                  "\"%s: no scratch buffer\");\n", k->name);
    buf_puts(b, "    (void)sm_count;\n    int64_t t, h;\n");
    if (nv > 1) {
        int vw = v[0].vw;
        buf_printf(b, "    int vec = nC %% %d == 0;\n", vw);
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_full(c, &c->acc[a]))
                buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                           vw * dtype_size(MDT(c, c->acc[a].node)));
        buf_printf(b, "    if (vec) {\n        %s_grid(nR, nC, %d, &t, &h);\n", k->name, vw);
        buf_printf(b, "        return FUSEC_LAUNCH(%d, %s, (unsigned)t, (unsigned)h, 1, %d, 1, 1, 0, stream, args);\n    }\n",
                   base, v[0].name, CROSS_BS);
    }
    buf_printf(b, "    %s_grid(nR, nC, 1, &t, &h);\n", k->name);
    buf_printf(b, "    return FUSEC_LAUNCH(%d, %s, (unsigned)t, (unsigned)h, 1, %d, 1, 1, 0, stream, args);\n",
               base + nv - 1, v[nv - 1].name, CROSS_BS);
}
