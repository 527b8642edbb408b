/* cuda/reduce.c -- reductions with partials from several blocks: the full
 * reduction (one launch, the last block combines) and the column / middle
 * axes scheme (rows split over blockIdx.z, a last-block combine a tile). */
#include "cuda_priv.h"

/* The last-block ticket of the one-launch reductions: the block's writes
 * are fenced, thread 0 takes a ticket of the counter, and fz_last says
 * whether it was the last of `total` blocks. */
/* The kernel's reductions into reds (at most 64), each with its typedefs
 * (R<id>, and A<id> under --atomic-reduce) and what the body declares with
 * them: its state (RED_INIT), its shared slots for 8 warps of 32 V columns
 * (RED_SHARED), or nothing (RED_TYPES). */
enum { RED_TYPES, RED_INIT, RED_SHARED };
static int collect_reductions(KCtx *c, const IrNode **reds, int decl)
{
    const Kernel *k = c->k;
    int nreds = 0;
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE && !cu_is_side_red(c, k->values[i]) && nreds < 64) {
            const IrNode *v = k->values[i];
            reds[nreds++] = v;
            Buf t = {0};
            cu_red_type(c, v, &t);
            emit_line(&c->w, "typedef %s R%d;", t.data, v->id);
            if (c->atomic) {
                t.len = 0;
                cu_atomic_type(v, &t);
                emit_line(&c->w, "typedef %s A%d;", t.data, v->id);
            }
            if (decl == RED_INIT)
                emit_line(&c->w, "R%d::S a%d = R%d::init();", v->id, v->id, v->id);
            else if (decl == RED_SHARED)
                emit_line(&c->w, "__shared__ R%d::S sh%d[8][32 * V];", v->id, v->id);
            buf_free(&t);
        }
    return nreds;
}

static void emit_ticket(KCtx *c, const char *counter, const char *total)
{
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    fz_last = atomicAdd(%s, 1u) == %s;", counter, total);
    emit_line(&c->w, "__syncthreads();");
}

/* The body of a full reduction's vector loop (after its `for` line): the
 * vector loads at i of every full access, then each of the V elements
 * folded into the reductions */
static void scalar_vec_step(KCtx *c, RoundCtx *rc)
{
    cu_open_scope(c);
    for (int q = 0; q < c->nacc; q++)
        if (cu_acc_full(c, &c->acc[q]))
            emit_line(&c->w, "const fz_vec<%s, V> va%d = *(const fz_vec<%s, V> *)(in%d + i);", cu_stype(MDT(c, c->acc[q].node)),
                      q, cu_stype(MDT(c, c->acc[q].node)), c->inbuf[c->acc[q].node->id]);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    cu_open_scope(c);
    c->vec = 1;
    c->flat = "(i + j)";
    if (c->ng == 1)
        c->gi[0] = c->flat;
    emit_line(&c->w, "const I r = i + j;");
    cu_round_elem(c, rc);
    cu_close_scope(c);
    cu_close_scope(c);
    cu_reset_point(c);
}

/* The fold of a full reduction: each block its chunk (vector variant) or
 * a grid-stride share (plain variant) of the flat space into a<id>. */
static void scalar_fold(KCtx *c, RoundCtx *rc)
{
    int vw = c->L->vw;
    if (vw > 1) {
        /* V elements per thread and step: 16-byte loads of every full access
         * (the stub checked alignment; V == 1 is the plain variant).  Block
         * b folds the contiguous chunk of T steps from b T BS V on (the
         * launcher's grid, cu_scalar_chunk_steps), one vector a thread a step.
         * A whole chunk's loop has no bound to test, and with T known here
         * ptxas can unroll it. */
        int64_t sn = cu_static_space_len(c);
        int64_t T = sn >= 0 ? cu_scalar_chunk_steps(sn / vw * vw, 512 * vw) : -1;
        emit_line(&c->w, "const I nv = n / V * V;");
        emit_line(&c->w, "const I per = (I)BS * V; /* elements a block folds a step */");
        if (T > 0) {
            /* the plain variant (V 1) has the launcher's other grid */
            emit_line(&c->w, "const I T = V == %d ? (I)%lld /* scalar_chunk_steps */", vw, (long long)T);
            emit_line(&c->w, "                    : ((nv + per - 1) / per + gridDim.x - 1) / gridDim.x; /* steps a block */");
        } else
            emit_line(&c->w, "const I T = ((nv + per - 1) / per + gridDim.x - 1) / gridDim.x; /* steps a block */");
        emit_line(&c->w, "const I c0 = (I)blockIdx.x * T * per;");
        emit_line(&c->w, "I i = c0 + (I)threadIdx.x * V;");
        emit_line(&c->w, "if (c0 + T * per <= nv) {");
        cu_open_scope(c);
        emit_line(&c->w, T > 0 && T <= 64 ? "#pragma unroll" : "#pragma unroll 8");
        emit_line(&c->w, "for (I s = 0; s < T; s++, i += per) {");
        scalar_vec_step(c, rc);
        cu_close_scope(c);
        emit_line(&c->w, "else {");
        cu_open_scope(c);
        emit_line(&c->w, "/* the last block's chunk ends inside the array */");
        emit_line(&c->w, "for (; i < nv; i += per) {");
        scalar_vec_step(c, rc);
        cu_close_scope(c);
        emit_line(&c->w, "/* the last n - nv (< V) elements, by the last block */");
        emit_line(&c->w, "for (I i = nv + threadIdx.x; i < n && blockIdx.x == gridDim.x - 1; i += BS) {");
    } else
        emit_line(&c->w, "for (I i = (I)blockIdx.x * BS + threadIdx.x; i < n; i += (I)gridDim.x * BS) {");
    cu_open_scope(c);
    c->flat = "i";
    if (c->L->dec)
        cu_decompose(c, "i", -1);
    else if (c->ng == 1)
        c->gi[0] = "i";
    /* r is the index inside the reduced range: here the flat index */
    emit_line(&c->w, "const I r = i;");
    cu_round_elem(c, rc);
    cu_close_scope(c);
    cu_reset_point(c);
}

/* The combine of a full reduction's block partials, then the epilogue and
 * the outputs, by the block that takes the last ticket. */
static void scalar_combine(KCtx *c, const IrNode **reds, int nreds)
{
    const Kernel *k = c->k;
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
        emit_line(&c->w, "/* block partials combined with atomics (--atomic-reduce: not bitwise");
        emit_line(&c->w, " * reproducible); the last block reads the totals */");
    } else
        emit_line(&c->w, "/* block partials, then the last block combines them in block order */");
    emit_line(&c->w, "__shared__ int fz_last;");
    emit_line(&c->w, "unsigned *counter = (unsigned *)zscratch;");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
        if (c->atomic) {
            emit_line(&c->w, "A%d::W *acc%d = (A%d::W *)(zscratch + %d + %d);", id, id, id, SCALAR_HEAD, i * 8);
            emit_line(&c->w, "if (threadIdx.x == 0)");
            emit_line(&c->w, "    A%d::put(acc%d, a%d);", id, id, id);
        } else {
            emit_line(&c->w, "R%d::S *part%d = (R%d::S *)(scratch + %d + %d * %d);", id, id, id, SCALAR_HEAD,
                      i * SCALAR_SLOT, SCALAR_MAX_BLOCKS);
            emit_line(&c->w, "if (threadIdx.x == 0)");
            emit_line(&c->w, "    part%d[blockIdx.x] = a%d;", id, id);
        }
    }
    emit_line(&c->w, "__threadfence();");
    emit_ticket(c, "counter", "gridDim.x - 1");
    emit_line(&c->w, c->atomic ? "if (!fz_last || threadIdx.x != 0)" : "if (!fz_last)");
    emit_line(&c->w, "    return;");
    emit_line(&c->w, "__threadfence();");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        if (c->atomic) {
            emit_line(&c->w, "a%d = A%d::get(acc%d);", id, id, id);
            emit_line(&c->w, "*acc%d = 0; /* the identity, for the next call */", id);
        } else {
            emit_line(&c->w, "a%d = R%d::init();", id, id);
            emit_line(&c->w, "for (unsigned b = threadIdx.x; b < gridDim.x; b += BS)");
            emit_line(&c->w, "    a%d = R%d::comb(a%d, R%d::ldcg(part%d + b));", id, id, id, id, id);
            emit_line(&c->w, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
        }
    }
    if (!c->atomic) {
        emit_line(&c->w, "if (threadIdx.x == 0) {");
        cu_open_scope(c);
    }
    for (int i = 0; i < nreds; i++)
        cu_finish_reduction(c, reds[i], "", "n");
    for (int i = 0; i < k->noutputs; i++)
        if (!cu_out_is_elem(c, i))
            cu_emit_store(c, i, "I");
    emit_line(&c->w, "*counter = 0u; /* ready for the next call */");
    if (!c->atomic)
        cu_close_scope(c);
}

/* The start of a reduction body: the template line, the signature of
 * NAME<suffix>(the kernel's parameters, then extra) and its opening brace;
 * the group sizes follow unless the caller has lines to put first. */
static void open_body(KCtx *c, const char *tmpl, const char *suffix, const char *extra, int sizes)
{
    Buf ps = {0};
    cu_body_params(c, &ps, extra);
    cu_reset_point(c);
    emit_line(&c->w, "template <%s>", tmpl);
    emit_line(&c->w, "static __device__ __forceinline__ void %s%s(%s)", c->k->name, suffix, ps.data);
    emit_line(&c->w, "{");
    cu_open_scope(c);
    if (sizes)
        cu_emit_group_sizes(c);
    buf_free(&ps);
}

/* Full reduction in one launch.  Each block folds a contiguous chunk of T
 * steps of V-wide vectors (cu_scalar_chunk_steps; the plain variant, V 1, an
 * equal share of the array over the launcher's grid for it), reduces it in
 * shared memory and writes one partial; the block that takes the last
 * ticket of the atomic counter reads all partials in block order (so the
 * result does not depend on which block finished last), applies the
 * epilogue, writes the outputs and puts the counter back to 0 for the next
 * call. */
void cu_emit_scalar_body(KCtx *c)
{
    const Kernel *k = c->k;
    open_body(c, "class I, int BS, int V", "_body", ", unsigned char *scratch, unsigned char *zscratch", 1);
    Buf n = {0};
    cu_groups_product(c, -1, &n);
    emit_line(&c->w, "const I n = %s;", n.data);
    const IrNode *reds[64];
    int nreds = collect_reductions(c, reds, RED_INIT);
    RoundCtx rc = {reds, nreds, 1, 0, 0, 0, NULL, 0, NULL, 0};
    scalar_fold(c, &rc);
    scalar_combine(c, reds, nreds);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    buf_free(&n);
}

/* After each warp ty has put its states in sh<id>[ty]: warp 0 of the
 * block's tile of 8 warps (WS 8) combines their states of each of its
 * columns in warp order (deterministic). */
static void emit_cols_warp_combine(KCtx *c, const IrNode *const *reds, int nreds, int lanes)
{
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (ty == 0) {");
    cu_open_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++) {");
        emit_line(&c->w, "    a%d[j] = sh%d[0][tx * V + j];", id, id);
        emit_line(&c->w, "    for (int q = 1; q < 8; q++)");
        emit_line(&c->w, "        a%d[j] = R%d::comb(a%d[j], sh%d[q][tx * V + j]);", id, id, id, id);
        if (lanes) {
            /* then the other rows of each warp step, row by row */
            emit_line(&c->w, "    if (own)");
            emit_line(&c->w, "        for (int l = 1; l < rpw; l++)");
            emit_line(&c->w, "            for (int q = 0; q < 8; q++)");
            emit_line(&c->w, "                a%d[j] = R%d::comb(a%d[j], sh%d[q][tx + l * (int)nI]);", id, id, id, id);
        }
        emit_line(&c->w, "}");
    }
    cu_close_scope(c);
}

/* The reductions of a kernel that are not side reductions. */
int cu_ncol_reds(const KCtx *c)
{
    int n = 0;
    for (int i = 0; i < c->k->nvalues; i++)
        n += op_info[c->k->values[i]->op].cls == OPC_REDUCE && !cu_is_side_red(c, c->k->values[i]);
    return n;
}

/* A column kernel's side reductions (Kernel.side_axes) into side, with
 * their typedefs R<id>; how many. */
static int collect_side(KCtx *c, const IrNode **side)
{
    const Kernel *k = c->k;
    int nside = 0;
    for (int i = 0; i < k->nvalues; i++)
        if (cu_is_side_red(c, k->values[i]) && nside < 64) {
            side[nside++] = k->values[i];
            Buf t = {0};
            cu_red_type(c, k->values[i], &t);
            emit_line(&c->w, "typedef %s R%d;", t.data, k->values[i]->id);
            buf_free(&t);
        }
    return nside;
}

/* The side reductions' partial states in scratch: for each, one a row and
 * tile of 32 columns (ntw tiles, the most any launch makes: those of V 1),
 * rp<id>[row * ntw + tile], past the most tile counters (and, with atomics,
 * accumulators) any launch keeps at zscratch, which may be this buffer;
 * the column partials start at rpe, after them.  The column kernel writes
 * them, its second launch (_rows) adds them up.  The launcher's
 * scratch_bytes makes the same sum. */
static void side_partials(KCtx *c, const IrNode *const *side, int nside, int ncol)
{
    emit_line(&c->w, "const I ntw = (nI + 31) / 32; /* the most column tiles of a launch */");
    if (c->atomic)
        emit_line(&c->w, "I rpo = (nO * ntw * 4 + 255) / 256 * 256 + (I)%d * nO * nI;", ncol * 8);
    else
        emit_line(&c->w, "I rpo = (nO * ntw * 4 + 255) / 256 * 256;");
    for (int i = 0; i < nside; i++) {
        int id = side[i]->id;
        emit_line(&c->w, "R%d::S *const rp%d = (R%d::S *)(scratch + rpo);", id, id, id);
        emit_line(&c->w, "rpo = (rpo + (I)%d * ntw * R + 15) / 16 * 16;", cu_red_state_bytes(side[i]));
    }
    emit_line(&c->w, "const I rpe = (rpo + 255) / 256 * 256;");
    emit_line(&c->w, "(void)rpe;");
}

/* The host's rpe of side_partials (scratch_bytes): int64_t rpe. */
void cu_host_side_bytes(KCtx *c, Buf *b)
{
    int ncol = cu_ncol_reds(c);
    buf_puts(b, "    const int64_t ntw = (nI + 31) / 32;\n");
    if (c->atomic)
        buf_printf(b, "    int64_t rpo = fzk_cols_cnt_bytes(nO, nI) + (int64_t)%d * nO * nI;\n", ncol * 8);
    else
        buf_puts(b, "    int64_t rpo = fzk_cols_cnt_bytes(nO, nI);\n");
    for (int i = 0; i < c->k->nvalues; i++)
        if (cu_is_side_red(c, c->k->values[i]))
            buf_printf(b, "    rpo = (rpo + (int64_t)%d * ntw * R + 15) / 16 * 16;\n",
                       cu_red_state_bytes(c->k->values[i]));
    buf_puts(b, "    const int64_t rpe = (rpo + 255) / 256 * 256;\n");
}

/* The element work of one row step: V adjacent columns a thread (16-byte
 * loads of the full accesses where aligned, else one element). */
static void cols_step(KCtx *c, const IrNode **reds, int nreds, const IrNode **side, int nside, const int *rg,
                      int nr, const int *ig, int ni)
{
    cu_decompose_list(c, "r", rg, nr);
    RoundCtx rc = {reds, nreds, 1, 0, 0, 0, side, nside, "(civ + j)", 0};
    if (c->L->vw > 1) {
        cu_decompose_list(c, "civ", ig, ni);
        emit_line(&c->w, "if (V > 1) {");
        cu_open_scope(c);
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_full(c, &c->acc[a])) {
                Buf off = {0};
                cu_acc_offset(c, &c->acc[a], "I", &off);
                emit_line(&c->w, "const fz_vec<%s, V> va%d = *(const fz_vec<%s, V> *)(in%d + %s);", cu_stype(MDT(c, c->acc[a].node)),
                          a, cu_stype(MDT(c, c->acc[a].node)), c->inbuf[c->acc[a].node->id], off.data);
                buf_free(&off);
            }
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++) {");
        cu_open_scope(c);
        char inner[48];
        snprintf(inner, sizeof inner, "(%s + j)", c->gi[ig[0]]);
        const char *saved = c->gi[ig[0]];
        c->gi[ig[0]] = inner;
        c->vec = 1;
        c->accidx = "[j]";
        cu_round_elem(c, &rc);
        c->vec = 0;
        c->gi[ig[0]] = saved;
        cu_close_scope(c);
        cu_close_scope(c);
        emit_line(&c->w, "else {");
        cu_open_scope(c);
        c->accidx = "[0]";
        rc.sidx = "civ";
        cu_round_elem(c, &rc);
        cu_close_scope(c);
    } else {
        cu_decompose_list(c, "civ", ig, ni);
        c->accidx = "[0]";
        rc.sidx = "civ";
        cu_round_elem(c, &rc);
    }
    c->accidx = NULL;
}

/* U rows from rb, with side reductions: the element work of each row,
 * its side states kept per row (p<id>[u]), then reduced over the warp and
 * scattered (fz_warp_scatter): lane u * (32 / U) stores row u's partial of
 * the tile.  tail: rows past r1 are skipped one by one. */
static void side_group(KCtx *c, const IrNode **reds, int nreds, const IrNode **side, int nside, const int *rg,
                       int nr, const int *ig, int ni, int tail)
{
    for (int i = 0; i < nside; i++) {
        emit_line(&c->w, "R%d::S p%d[U];", side[i]->id, side[i]->id);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int u = 0; u < U; u++)");
        emit_line(&c->w, "    p%d[u] = R%d::init();", side[i]->id, side[i]->id);
    }
    emit_line(&c->w, "if (active) {");
    cu_open_scope(c);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int u = 0; u < U; u++) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I r = rb + (I)u * WS;");
    if (tail) {
        emit_line(&c->w, "if (r >= r1)");
        emit_line(&c->w, "    break;");
    }
    for (int i = 0; i < nside; i++)
        emit_line(&c->w, "R%d::S s%d = p%d[u];", side[i]->id, side[i]->id, side[i]->id);
    cols_step(c, reds, nreds, side, nside, rg, nr, ig, ni);
    for (int i = 0; i < nside; i++)
        emit_line(&c->w, "p%d[u] = s%d;", side[i]->id, side[i]->id);
    cu_close_scope(c);
    cu_close_scope(c);
    emit_line(&c->w, "const I r = rb + (I)(tx / (32 / U)) * WS; /* the row whose partial this lane gets */");
    for (int i = 0; i < nside; i++)
        emit_line(&c->w, "const R%d::S s%d = fz_warp_scatter<R%d, U>(p%d);", side[i]->id, side[i]->id, side[i]->id,
                  side[i]->id);
    emit_line(&c->w, tail ? "if (tx %% (32 / U) == 0 && r < r1) {" : "if (tx %% (32 / U) == 0) {");
    for (int i = 0; i < nside; i++)
        emit_line(&c->w, "    rp%d[r * ntw + tile] = s%d;", side[i]->id, side[i]->id);
    emit_line(&c->w, "}");
}

/* Rows a column's var or std folds at once (cols_fold_rows). */
enum { COLS_FOLD_ROWS = 8 };

/* A logsumexp state that folds groups of rows: those that take the
 * hardware's exp (cu_lse_hw, values from a bf16 param) */
static int cols_fold_lse(const KCtx *c, const IrNode *n)
{
    return cu_lse_hw(c, n);
}
/* Whether the pass folds rows a group at a time (cols_fold_rows): where it
 * has a var or std and a column a thread (Welford states never take
 * vectors of columns, cols_vec_width), or a logsumexp state that folds. */
static int cols_fold(const KCtx *c, const IrNode **reds, int nreds)
{
    for (int i = 0; i < nreds; i++)
        if ((cu_red_is_welford(reds[i]) && c->L->vw == 1) || cols_fold_lse(c, reds[i]))
            return 1;
    return 0;
}

/* The rows of a pass with a var or std (a column a thread) or a bf16
 * logsumexp (cu_lse_hw), in whole groups of K rows: each var and std
 * collects the group's values in w<id>[u], each such logsumexp in
 * l<id>[column][u], and folds them at once (R::updv); the other
 * reductions fold an element at a time; then the last rows an element at
 * a time.  A var's updv divides once a group, where Welford's element step
 * divides at every row and waits on the row before; a logsumexp's takes
 * the group's max, then K + 1 exps, none waiting on the running max (upd:
 * one exp an element, each behind the last).  K is 8, or 4 where a thread
 * holds a vector of columns (their K x V values stay in registers).  On
 * the H100, bf16 column logsumexp over 8192 x 8192 took 67.7 -> 62.7 us
 * with it, a bf16 column softmax over 333 columns 292.0 -> 248.1; an f32
 * column softmax over 8192 x 8192 lost 5% (292.0 -> 308.2, its `_cols_v`
 * at 80 registers against 52), so f32 and f64 states keep the element
 * step.  The group's loads have no bounds test between them and issue
 * together. */
static void cols_fold_rows(KCtx *c, const IrNode **reds, int nreds, const int *rg, int nr, const int *ig, int ni)
{
    int K = c->L->vw > 1 ? 4 : COLS_FOLD_ROWS;
    emit_line(&c->w, "I rb = r0 + rsub;");
    emit_line(&c->w, "for (; rb + (I)%d * rstep < r1; rb += (I)%d * rstep) {", K - 1, K);
    cu_open_scope(c);
    for (int i = 0; i < nreds; i++) {
        if (cu_red_is_welford(reds[i]) && c->L->vw == 1)
            emit_line(&c->w, "%s w%d[%d];", cu_ctype(cu_red_acc_dtype(reds[i])), reds[i]->id, K);
        if (cols_fold_lse(c, reds[i]))
            emit_line(&c->w, "%s l%d[V][%d];", cu_ctype(cu_red_acc_dtype(reds[i])), reds[i]->id, K);
    }
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int u = 0; u < %d; u++) {", K);
    cu_open_scope(c);
    emit_line(&c->w, "const I r = rb + (I)u * rstep;");
    c->varvec = c->L->vw == 1;
    c->lsevec = 1;
    c->lsecols = 1;
    c->foldidx = "[u]";
    cols_step(c, reds, nreds, NULL, 0, rg, nr, ig, ni);
    c->varvec = 0;
    c->lsevec = 0;
    c->lsecols = 0;
    c->foldidx = NULL;
    cu_close_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        if (cu_red_is_welford(reds[i]) && c->L->vw == 1)
            emit_line(&c->w, "a%d[0] = R%d::updv<%d>(a%d[0], w%d);", id, id, K, id, id);
        if (cols_fold_lse(c, reds[i])) {
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++)");
            emit_line(&c->w, "    a%d[j] = R%d::updv<%d>(a%d[j], l%d[j]);", id, id, K, id, id);
        }
    }
    cu_close_scope(c);
    emit_line(&c->w, "for (; rb < r1; rb += rstep) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I r = rb;");
    cols_step(c, reds, nreds, NULL, 0, rg, nr, ig, ni);
    cu_close_scope(c);
}

/* One outer index's pass over its split of the rows, V adjacent columns a
 * thread: alone on its tile, a thread reads every row (WS 1); 8 warps on
 * one tile take a row each in turn (WS 8). */
static void cols_accumulate(KCtx *c, const IrNode **reds, int nreds, const IrNode **side, int nside,
                            const int *rg, int nr, const int *ig, int ni)
{
    /* with side reductions, every lane of a warp with columns takes each
     * row step (the warp folds the row's states); else the active lanes */
    emit_line(&c->w, nside ? "if (civ - (I)tx * V < nI) {" : "if (active) {");
    cu_open_scope(c);
    /* 8 rows a step where every state is one or two words (sum, max, ...):
     * eight independent loads in flight per thread.  On the H200 colsum
     * took, with 4 rows a step against 8: 143.1 -> 130.8 us at 96 columns,
     * 126.4 -> 103.5 at 333, 131.3 -> 103.4 at 3001, 67.8 -> 66.8 at 8192
     * (2^26 elements).  Arg states keep 4 ("#pragma unroll (V > 1 ? 4 :
     * 1)" made ptxas spill the element-wise Welford kernel of
     * tests/codegen/kernel-reduce-middle.fuse); a var or std folds 8 rows
     * at once instead (cols_fold_rows).  A warp alone on its
     * tile (WS 1) keeps half as many: with 8, ptxas spilled bf16 and
     * LayerNorm-backward column sums, with 4 an argmin. */
    /* With side reductions, U rows a step (side_group): 8, but 2 for a
     * warp alone on its tile reading 16-byte vectors and for Welford and
     * arg states (with 4 ptxas spilled 8 and 24 bytes in the emulator's
     * any/all and NaN test kernels).  Each row's loads issue together only
     * where the step has no bounds test per row: on the H200 row and column
     * sums of 30011 x 1531 f32 took 114.3 us with a test per row and 2 rows
     * a step, 77.4 in whole steps of 8 (a column sum alone: 77.1). */
    if (!nside && cols_fold(c, reds, nreds)) {
        cols_fold_rows(c, reds, nreds, rg, nr, ig, ni);
        cu_close_scope(c);
        return;
    }
    if (nside)
        emit_line(&c->w, cu_cols_small_states(reds, nreds) && cu_cols_small_states(side, nside)
                             ? "constexpr int U = V > 1 && WS == 1 ? 2 : 8; /* rows a step */"
                             : "constexpr int U = 2; /* rows a step */");
    else
        emit_line(&c->w, cu_cols_small_states(reds, nreds) ? "#pragma unroll (WS == 1 ? 4 : 8)"
                                                           : "#pragma unroll (WS == 1 ? 2 : 4)");
    if (!nside) {
        emit_line(&c->w, "for (I r = r0 + rsub; r < r1; r += rstep) {");
        cu_open_scope(c);
        cols_step(c, reds, nreds, side, nside, rg, nr, ig, ni);
        cu_close_scope(c);
        cu_close_scope(c);
        return;
    }
    /* U rows a step, their side states kept per row (p<id>[u]), then
     * reduced over the warp and scattered (side_group); whole groups of U
     * rows first, whose loads issue together, then the last one */
    emit_line(&c->w, "I rb = r0 + (WS == 1 ? 0 : ty);");
    emit_line(&c->w, "for (; rb + (I)(U - 1) * WS < r1; rb += (I)U * WS) {");
    cu_open_scope(c);
    side_group(c, reds, nreds, side, nside, rg, nr, ig, ni, 0);
    cu_close_scope(c);
    emit_line(&c->w, "if (rb < r1) {");
    cu_open_scope(c);
    side_group(c, reds, nreds, side, nside, rg, nr, ig, ni, 1);
    cu_close_scope(c);
    cu_close_scope(c);
}

/* The rows split over blocks (blockIdx.z): the partials of each split,
 * combined in split order by the tile's last block, or atomically. */
static void cols_split_combine(KCtx *c, const IrNode **reds, int nreds)
{
    emit_line(&c->w, "int done = WS == 1 || nsplit == 1; /* a warp alone on its tile reads every row */");
    emit_line(&c->w, "if (!done) {");
    cu_open_scope(c);
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
            emit_line(&c->w, "A%d::W *acc%d = (A%d::W *)(zscratch + cnt_bytes + (I)%d * nO * nI) + (I)o * nI + civ;", id,
                      id, id, i * 8);
        else
            emit_line(&c->w, "R%d::S *part%d = (R%d::S *)(scratch + %s + (I)%d * nsplit * nO * nI);", id, id,
                      id, c->k->side_axes ? "rpe" : "cnt_bytes", i * cu_cols_slot(c));
        emit_line(&c->w, "if (ty == 0 && own)");
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "    for (int j = 0; j < V; j++)");
        if (c->atomic)
            emit_line(&c->w, "        A%d::put(acc%d + j, a%d[j]);", id, id, id);
        else
            emit_line(&c->w, "        part%d[((I)o * nsplit + blockIdx.z) * nI + civ + j] = a%d[j];", id, id);
    }
    emit_line(&c->w, "__threadfence();");
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "unsigned *cnt = (unsigned *)zscratch + (o * (I)gridDim.x + blockIdx.x);");
    emit_ticket(c, "cnt", "(unsigned)nsplit - 1");
    emit_line(&c->w, "done = fz_last;");
    emit_line(&c->w, "if (done) {");
    cu_open_scope(c);
    emit_line(&c->w, "__threadfence();");
    /* the combine over the tile's warps for states of one or two words
     * without division; Welford (var, std) and argmax states keep one warp:
     * their combine divides or compares indices, and ptxas spilled the
     * 8-warp form */
    int small = cu_cols_small_states(reds, nreds);
    int par = !c->atomic;
    if (par) {
        /* 16-byte variants: all 8 warps read the partials, warp ty the
         * splits ty, ty + 8, ..., 4 loads in flight each; then the 8 states
         * combine in warp order.  On the H200 colsum's symbolic build takes
         * 142.8 us with this and the 4-row unroll, 150.7 with the unroll
         * alone, 161.8 with neither.  The element-wise variant (V == 1) keeps
         * one warp: in this form odd widths run slower (3001 columns: 40% of
         * copy against 59%), cause not isolated.  Welford and arg states
         * (V 1) take the 8 warps too, a var's or std's four splits' loads
         * issued before their folds (in split order; an argmax's spilled
         * 4 bytes beside three other states): one warp folding every split's
         * partial in turn, each fold waiting on its load and a division,
         * kept the tile's last block running long after the others (up to
         * 512 splits for at most 256 outputs) */
        emit_line(&c->w, small ? "if (V > 1) {" : "{");
        cu_open_scope(c);
        for (int i = 0; i < nreds; i++) {
            int id = reds[i]->id;
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++) {");
            emit_line(&c->w, "    a%d[j] = R%d::init();", id, id);
            emit_line(&c->w, "    if (own) {");
            if (small || !cu_red_is_welford(reds[i])) {
                emit_line(&c->w, small ? "        #pragma unroll 4" : "        #pragma unroll 1");
                emit_line(&c->w, "        for (int z = ty; z < nsplit; z += 8)");
                emit_line(&c->w, "            a%d[j] = R%d::comb(a%d[j], R%d::ldcg(part%d + ((I)o * nsplit + z) * nI + civ + j));",
                          id, id, id, id, id);
            } else {
                emit_line(&c->w, "        for (int z = ty; z < nsplit; z += 32) {");
                emit_line(&c->w, "            R%d::S t[4];", id);
                emit_line(&c->w, "            #pragma unroll");
                emit_line(&c->w, "            for (int q = 0; q < 4; q++)");
                emit_line(&c->w, "                t[q] = z + 8 * q < nsplit ? R%d::ldcg(part%d + ((I)o * nsplit + z + 8 * q) * nI + civ + j) : R%d::init();",
                          id, id, id);
                emit_line(&c->w, "            #pragma unroll");
                emit_line(&c->w, "            for (int q = 0; q < 4; q++)");
                emit_line(&c->w, "                if (z + 8 * q < nsplit)");
                emit_line(&c->w, "                    a%d[j] = R%d::comb(a%d[j], t[q]);", id, id, id);
                emit_line(&c->w, "        }");
            }
            emit_line(&c->w, "    }");
            emit_line(&c->w, "    sh%d[ty][tx * V + j] = a%d[j];", id, id);
            emit_line(&c->w, "}");
        }
        emit_cols_warp_combine(c, reds, nreds, 0);
        cu_close_scope(c);
        if (small)
            emit_line(&c->w, "else");
    }
    if (!par || small) {
        emit_line(&c->w, "if (ty == 0 && own) {");
        cu_open_scope(c);
        for (int i = 0; i < nreds; i++) {
            int id = reds[i]->id;
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++) {");
            if (c->atomic) {
                emit_line(&c->w, "    a%d[j] = A%d::get(acc%d + j);", id, id, id);
                emit_line(&c->w, "    acc%d[j] = 0; /* the identity, for the next call */", id);
            } else {
                emit_line(&c->w, "    a%d[j] = R%d::init();", id, id);
                emit_line(&c->w, "    for (int z = 0; z < nsplit; z++)");
                emit_line(&c->w, "        a%d[j] = R%d::comb(a%d[j], R%d::ldcg(part%d + ((I)o * nsplit + z) * nI + civ + j));",
                          id, id, id, id, id);
            }
            emit_line(&c->w, "}");
        }
        cu_close_scope(c);
    }
    emit_line(&c->w, "if (threadIdx.x == 0)");
    emit_line(&c->w, "    *cnt = 0u; /* ready for the next call */");
    cu_close_scope(c);
    cu_close_scope(c);
}

/* The column / middle-axes reduction (RL_COLS, RL_MIDDLE): a thread owns V
 * adjacent kept inner columns of a tile of 32 threads; each warp reads every
 * row of its own tile (WS 1, fzk_cols_ws) or the block's 8 warps take the
 * rows of one tile's split in turn (WS 8), their states combine in warp
 * order, and split blocks combine per tile (cols_split_combine). */
void cu_emit_cols_body(KCtx *c)
{
    const Kernel *k = c->k;
    int oe = 0, re = 0;
    cu_cols_split(c, &oe, &re);
    int og[IR_MAX_RANK] = {0}, rg[IR_MAX_RANK] = {0}, ig[IR_MAX_RANK] = {0}, no = 0, nr = 0, ni = 0;
    for (int g = 0; g < c->ng; g++) {
        if (g < oe)
            og[no++] = g;
        else if (g < re)
            rg[nr++] = g;
        else
            ig[ni++] = g;
    }
    open_body(c, "class I, int V, int WS, bool NR = false", "_cols_body", ", unsigned char *scratch, unsigned char *zscratch, int nsplit", 1);
    Buf b = {0};
    buf_puts(&b, "(I)1");
    for (int i = 0; i < no; i++)
        buf_printf(&b, " * gs%d", og[i]);
    emit_line(&c->w, "const I nO = %s; /* outer kept */", b.data);
    b.len = 0;
    buf_puts(&b, "(I)1");
    for (int i = 0; i < nr; i++)
        buf_printf(&b, " * gs%d", rg[i]);
    emit_line(&c->w, "const I R = %s; /* reduced */", b.data);
    b.len = 0;
    buf_puts(&b, "(I)1");
    for (int i = 0; i < ni; i++)
        buf_printf(&b, " * gs%d", ig[i]);
    emit_line(&c->w, "const I nI = %s; /* inner kept: the columns */", b.data);
    buf_free(&b);
    const IrNode *reds[64], *side[64];
    int nreds = collect_reductions(c, reds, RED_SHARED);
    int nside = collect_side(c, side);
    emit_line(&c->w, "__shared__ int fz_last;");
    emit_line(&c->w, "const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;");
    /* NR (_cols_n, element-wise tiles of at most COLS_NARROW_MAX columns, no side
     * reductions): a warp takes rpw = 32 / nI rows a step, nI lanes each,
     * where a row a step would leave 32 - nI lanes idle; lane tx < nI
     * (own) then folds its column's states of every warp's rows, in a
     * fixed order */
    if (nside)
        emit_line(&c->w, "const int rpw = 1, lcol = tx, lrow = 0;");
    else {
        emit_line(&c->w, "const int rpw = NR && nI > 0 && nI <= %d ? 32 / (int)nI : 1; /* rows a warp step */",
                  COLS_NARROW_MAX);
        emit_line(&c->w, "const int lcol = rpw > 1 ? tx %% (int)nI : tx, lrow = rpw > 1 ? tx / (int)nI : 0;");
    }
    emit_line(&c->w, "/* this thread's first column: in the block's tile (WS 8) or its warp's */");
    emit_line(&c->w, "const I civ = WS == 1 ? (((I)blockIdx.x * 8 + ty) * 32 + tx) * V : ((I)blockIdx.x * 32 + lcol) * V;");
    emit_line(&c->w, "const bool active = civ < nI && lrow < rpw;");
    emit_line(&c->w, "const bool own = active && lrow == 0; /* holds its column's state after the warp combine */");
    emit_line(&c->w, "const int rsub = (WS == 1 ? 0 : ty) * rpw + lrow, rstep = WS * rpw; /* first row, row step */");
    if (nside) {
        side_partials(c, side, nside, nreds);
        emit_line(&c->w, "const I tile = civ / (32 * V); /* the warp's tile of 32 V columns */");
    }
    emit_line(&c->w, "const I chunk = (R + nsplit - 1) / nsplit;");
    emit_line(&c->w, "const I r0 = (I)blockIdx.z * chunk;");
    emit_line(&c->w, "const I r1 = r0 + chunk < R ? r0 + chunk : R;");
    emit_line(&c->w, "const I cnt_bytes = (nO * (I)gridDim.x * 4 + 255) / 256 * 256;");
    emit_line(&c->w, "for (I o = blockIdx.y; o < nO; o += gridDim.y) {");
    cu_open_scope(c);
    cu_decompose_list(c, "o", og, no);
    for (int i = 0; i < nreds; i++) {
        emit_line(&c->w, "R%d::S a%d[V];", reds[i]->id, reds[i]->id);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++)");
        emit_line(&c->w, "    a%d[j] = R%d::init();", reds[i]->id, reds[i]->id);
    }
    cols_accumulate(c, reds, nreds, side, nside, rg, nr, ig, ni);
    emit_line(&c->w, "/* combine the WS warps' states of each column in warp order */");
    emit_line(&c->w, "if (WS > 1) {");
    cu_open_scope(c);
    for (int i = 0; i < nreds; i++) {
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++)");
        emit_line(&c->w, "    sh%d[ty][tx * V + j] = a%d[j];", reds[i]->id, reds[i]->id);
    }
    emit_cols_warp_combine(c, reds, nreds, !nside);
    cu_close_scope(c);
    cols_split_combine(c, reds, nreds);
    emit_line(&c->w, "if (done && (WS == 1 || ty == 0) && own) {");
    cu_open_scope(c);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    cu_open_scope(c);
    cu_decompose_list(c, "(civ + j)", ig, ni);
    for (int i = 0; i < nreds; i++) {
        cu_finish_reduction(c, reds[i], "[j]", "R");
    }
    for (int i = 0; i < k->noutputs; i++)
        if (!cu_out_is_elem(c, i) && !cu_is_side(c, k->outputs[i]))
            cu_emit_store(c, i, "I");
    cu_close_scope(c);
    cu_close_scope(c);
    emit_line(&c->w, "__syncthreads(); /* sh is reused by the next outer index */");
    cu_close_scope(c);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
}

/* The column kernel's _colp variant: the column partials its row kernel
 * left (Lowering.colp, row_colp_states), np partial rows of nI states a
 * reduction, combined in a fixed order: a block of 256 threads a tile of
 * COLP_TILE columns, 256 / COLP_TILE slots of partial rows; slot q adds
 * the rows q, q + 32, ... of every reduction in one loop, then the first
 * slot the 32 slots' states in order, finishes them (a mean divides by the
 * R rows) and writes the outputs.  The order depends on np alone.  A tile
 * of 8 columns of 4-byte states is one 32-byte sector a row, so a warp's
 * load takes 4 rows and the launch has a block for every 8 columns: the
 * partials of rows of 1024 spread over 128 blocks, not 32. */
void cu_emit_colp_body(KCtx *c)
{
    const Kernel *k = c->k;
    int oe = 0, re = 0;
    cu_cols_split(c, &oe, &re);
    if (oe != 0)
        ICE("column partials of a kernel with outer kept dims");
    int ig[IR_MAX_RANK] = {0}, ni = 0;
    Buf r = {0}, b = {0};
    buf_puts(&r, "(I)1");
    buf_puts(&b, "(I)1");
    for (int g = 0; g < c->ng; g++) {
        if (g < re)
            buf_printf(&r, " * gs%d", g);
        else {
            ig[ni++] = g;
            buf_printf(&b, " * gs%d", g);
        }
    }
    open_body(c, "class I", "_colp_body", ", const unsigned char *cpart, int np", 1);
    emit_line(&c->w, "const I R = %s; /* reduced: the rows */", r.data);
    emit_line(&c->w, "const I nI = %s; /* inner kept: the columns */", b.data);
    emit_line(&c->w, "(void)R;");
    buf_free(&r);
    buf_free(&b);
    const IrNode *reds[64];
    int nreds = collect_reductions(c, reds, RED_TYPES);
    emit_line(&c->w, "const int tx = threadIdx.x %% %d, ty = threadIdx.x / %d; /* column, slot */", COLP_TILE,
              COLP_TILE);
    emit_line(&c->w, "const unsigned char *cp = cpart;");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "__shared__ R%d::S sh%d[%d][%d];", id, id, 256 / COLP_TILE, COLP_TILE);
        emit_line(&c->w, "const R%d::S *const cp%d = (const R%d::S *)cp;", id, id, id);
        cu_colp_next(c, id, "np", "nI");
    }
    emit_line(&c->w, "(void)cp;");
    emit_line(&c->w, "for (I t = blockIdx.x; t * %d < nI; t += gridDim.x) {", COLP_TILE);
    cu_open_scope(c);
    emit_line(&c->w, "const I col = t * %d + tx;", COLP_TILE);
    for (int i = 0; i < nreds; i++)
        emit_line(&c->w, "R%d::S a%d = R%d::init();", reds[i]->id, reds[i]->id, reds[i]->id);
    emit_line(&c->w, "if (col < nI) {");
    emit_line(&c->w, "    #pragma unroll 4");
    emit_line(&c->w, "    for (int z = ty; z < np; z += %d) {", 256 / COLP_TILE);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "        a%d = R%d::comb(a%d, cp%d[(I)z * nI + col]);", id, id, id, id);
    }
    emit_line(&c->w, "    }");
    emit_line(&c->w, "}");
    for (int i = 0; i < nreds; i++)
        emit_line(&c->w, "sh%d[ty][tx] = a%d;", reds[i]->id, reds[i]->id);
    emit_line(&c->w, "__syncthreads();");
    emit_line(&c->w, "if (ty == 0 && col < nI) {");
    cu_open_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "a%d = sh%d[0][tx];", id, id);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int q = 1; q < %d; q++)", 256 / COLP_TILE);
        emit_line(&c->w, "    a%d = R%d::comb(a%d, sh%d[q][tx]);", id, id, id, id);
    }
    cu_decompose_list(c, "col", ig, ni);
    for (int i = 0; i < nreds; i++)
        cu_finish_reduction(c, reds[i], "", "R");
    for (int i = 0; i < k->noutputs; i++)
        if (!cu_out_is_elem(c, i))
            cu_emit_store(c, i, "I");
    cu_close_scope(c);
    emit_line(&c->w, "__syncthreads(); /* sh is reused by the next tile */");
    cu_close_scope(c);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
}

/* The second launch of a column kernel with side reductions: L lanes a
 * row (a power of two up to 32, or the block's 256 threads, about one lane
 * per 8 tiles) add the row's partial states of the nt column tiles, which
 * the launch passes as nsplit: lane l the tiles l, l + L, ... in order,
 * then the L lanes' states in a fixed tree; lane 0 finishes and stores
 * them.  The order depends on nt alone. */
void cu_emit_cols_rows_body(KCtx *c)
{
    const Kernel *k = c->k;
    int oe = 0, re = 0;
    cu_cols_split(c, &oe, &re);
    int rg[IR_MAX_RANK] = {0}, nr = 0;
    Buf b = {0};
    open_body(c, "class I", "_rows_body", ", unsigned char *scratch, unsigned char *zscratch, int nsplit", 1);
    buf_puts(&b, "(I)1");
    for (int g = oe; g < re; g++) {
        rg[nr++] = g;
        buf_printf(&b, " * gs%d", g);
    }
    emit_line(&c->w, "const I R = %s; /* rows */", b.data);
    b.len = 0;
    buf_puts(&b, "(I)1");
    for (int g = re; g < c->ng; g++)
        buf_printf(&b, " * gs%d", g);
    emit_line(&c->w, "const I nI = %s; /* the columns of a row */", b.data);
    emit_line(&c->w, "const I nO = 1; /* side reductions: no outer kept dims */");
    emit_line(&c->w, "const int nt = nsplit; /* the column tiles of the first launch */");
    emit_line(&c->w, "(void)zscratch;");
    const IrNode *side[64];
    int nside = collect_side(c, side);
    side_partials(c, side, nside, cu_ncol_reds(c));
    emit_line(&c->w, "int L = 1; /* lanes a row (fzk_rows_lanes) */");
    emit_line(&c->w, "while (L < 32 && L * 8 < nt)");
    emit_line(&c->w, "    L *= 2;");
    emit_line(&c->w, "if (L == 32 && L * 8 < nt)");
    emit_line(&c->w, "    L = 256;");
    emit_line(&c->w, "const int lane = (int)threadIdx.x %% L;");
    emit_line(&c->w, "for (I g = blockIdx.x; g * (256 / L) < R; g += gridDim.x) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I r = g * (256 / L) + (I)(threadIdx.x / L);");
    for (int i = 0; i < nside; i++) {
        int id = side[i]->id;
        emit_line(&c->w, "R%d::S a%d = R%d::init();", id, id, id);
        emit_line(&c->w, "if (r < R) {");
        emit_line(&c->w, "    #pragma unroll 4");
        emit_line(&c->w, "    for (int t = lane; t < nt; t += L)");
        emit_line(&c->w, "        a%d = R%d::comb(a%d, rp%d[r * ntw + t]);", id, id, id, id);
        emit_line(&c->w, "}");
        emit_line(&c->w, "if (L == 256)");
        emit_line(&c->w, "    a%d = fz_block_reduce<R%d, 8>(a%d);", id, id, id);
        emit_line(&c->w, "else");
        emit_line(&c->w, "    for (int o = L / 2; o > 0; o >>= 1)");
        emit_line(&c->w, "        a%d = R%d::comb(a%d, R%d::shfl(a%d, o));", id, id, id, id, id);
    }
    emit_line(&c->w, "if (lane == 0 && r < R) {");
    cu_open_scope(c);
    cu_decompose_list(c, "r", rg, nr);
    for (int i = 0; i < nside; i++)
        cu_finish_reduction(c, side[i], "", "nI");
    for (int i = 0; i < k->noutputs; i++)
        if (cu_is_side(c, k->outputs[i]))
            cu_emit_store(c, i, "I");
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    buf_free(&b);
}

/* The middle-axes reduction (is_mid_scheme, schedule.c): groups [outer
 * reduced, kept..., inner reduced] with the inner one contiguous, as a
 * BatchNorm's statistics over (N, H, W) of [N, C, H, W].  A block takes
 * one output (blockIdx.x over the kept points) and one of nsplit
 * contiguous pieces of its reduced range (blockIdx.y): the range is nO
 * rows of nI contiguous elements, walked in V-element steps (16-byte
 * loads where the launcher found whole aligned vectors, else V 1), each
 * thread a step of BS apart.  A step's row and column advance by a
 * quotient and remainder taken once, so no element divides its index.
 * The block's states reduce in shared memory; with nsplit > 1 each block
 * writes its partial, and the output's last block (ticket of a counter
 * per output, which it puts back to 0) combines them in split order, or
 * with --atomic-reduce reads the accumulator its blocks added into. */
void cu_emit_mid_body(KCtx *c)
{
    const Kernel *k = c->k;
    const int L = c->ng - 1;
    int kg[IR_MAX_RANK] = {0}, nk = 0;
    for (int g = 1; g < L; g++)
        kg[nk++] = g;
    open_body(c, "class I, int V", "_mid_body", ", unsigned char *scratch, unsigned char *zscratch, int nsplit", 0);
    emit_line(&c->w, "enum { BS = 256 };");
    cu_emit_group_sizes(c);
    Buf b = {0};
    buf_puts(&b, "(I)1");
    for (int i = 0; i < nk; i++)
        buf_printf(&b, " * gs%d", kg[i]);
    emit_line(&c->w, "const I nO = gs0; /* outer reduced: rows */");
    emit_line(&c->w, "const I nK = %s; /* kept: the outputs */", b.data);
    emit_line(&c->w, "const I nI = gs%d; /* inner reduced: a row's contiguous elements */", L);
    buf_free(&b);
    const IrNode *reds[64];
    int nreds = collect_reductions(c, reds, RED_TYPES);
    emit_line(&c->w, "__shared__ int fz_last;");
    emit_line(&c->w, "/* this split's steps [u0, u1) of the nO rows of nIv vectors */");
    emit_line(&c->w, "const I nIv = nI / V;");
    emit_line(&c->w, "const I nu = nO * nIv;");
    emit_line(&c->w, "const I chunk = (nu + nsplit - 1) / nsplit;");
    emit_line(&c->w, "const I u0 = (I)blockIdx.y * chunk;");
    emit_line(&c->w, "const I u1 = u0 + chunk < nu ? u0 + chunk : nu;");
    emit_line(&c->w, "/* a thread's next step is BS on: dq rows and dr vectors */");
    emit_line(&c->w, "const I dq = nIv > 0 ? (I)BS / nIv : 0;");
    emit_line(&c->w, "const I dr = (I)BS - dq * nIv;");
    emit_line(&c->w, "const I cnt_bytes = (nK * 4 + 255) / 256 * 256;");
    emit_line(&c->w, "for (I ko = blockIdx.x; ko < nK; ko += gridDim.x) {");
    cu_open_scope(c);
    cu_decompose_list(c, "ko", kg, nk);
    for (int i = 0; i < nreds; i++) {
        int8_t m[IR_MAX_RANK];
        cu_space_map(c, reds[i]->in[0].node, m);
        cu_hoist(c, reds[i]->in[0].node, m);
        emit_line(&c->w, "R%d::S a%d = R%d::init();", reds[i]->id, reds[i]->id, reds[i]->id);
    }
    emit_line(&c->w, "I u = u0 + threadIdx.x;");
    emit_line(&c->w, "I o = nIv > 0 ? u / nIv : 0;");
    emit_line(&c->w, "I iv = u - o * nIv;");
    /* four steps' loads in flight for states of one or two words; Welford
     * and arg states (a division or index compares an element) are not
     * unrolled: two steps of var over f32 with V 1 spilled (ptxas, sm_90) */
    emit_line(&c->w, cu_cols_small_states(reds, nreds) ? "#pragma unroll 4" : "#pragma unroll 1");
    emit_line(&c->w, "for (; u < u1; u += BS) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I i0 = iv * V;");
    c->gi[0] = "o";
    c->gi[L] = "i0";
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
    c->gi[L] = "(i0 + j)";
    c->vec = 1;
    emit_line(&c->w, "const I r = o * nI + i0 + j; /* the index in the reduced range */");
    RoundCtx rc = {reds, nreds, 1, 0, 0, 0, NULL, 0, NULL, 0};
    cu_round_elem(c, &rc);
    c->vec = 0;
    cu_close_scope(c);
    c->gi[0] = c->gi[L] = NULL;
    emit_line(&c->w, "iv += dr;");
    emit_line(&c->w, "o += dq;");
    emit_line(&c->w, "if (iv >= nIv) {");
    emit_line(&c->w, "    iv -= nIv;");
    emit_line(&c->w, "    o++;");
    emit_line(&c->w, "}");
    cu_close_scope(c);
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        emit_line(&c->w, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
    }
    emit_line(&c->w, "if (nsplit > 1) {");
    cu_open_scope(c);
    if (c->atomic)
        emit_line(&c->w, "/* the splits add into one accumulator an output (--atomic-reduce) */");
    else
        emit_line(&c->w, "/* the splits' partials, combined in split order by the output's last block */");
    for (int i = 0; i < nreds; i++) {
        int id = reds[i]->id;
        if (c->atomic) {
            emit_line(&c->w, "A%d::W *acc%d = (A%d::W *)(zscratch + cnt_bytes + (I)%d * nK) + ko;", id, id, id, i * 8);
            emit_line(&c->w, "if (threadIdx.x == 0)");
            emit_line(&c->w, "    A%d::put(acc%d, a%d);", id, id, id);
        } else {
            emit_line(&c->w, "R%d::S *part%d = (R%d::S *)(scratch + cnt_bytes + (I)%d * nsplit * nK) + ko * nsplit;",
                      id, id, id, i * cu_cols_slot(c));
            emit_line(&c->w, "if (threadIdx.x == 0)");
            emit_line(&c->w, "    part%d[blockIdx.y] = a%d;", id, id);
        }
    }
    emit_line(&c->w, "__threadfence();");
    emit_ticket(c, "(unsigned *)zscratch + ko", "(unsigned)nsplit - 1");
    emit_line(&c->w, "if (!fz_last)");
    emit_line(&c->w, "    continue;");
    emit_line(&c->w, "__threadfence();");
    if (c->atomic) {
        /* thread 0 alone finishes the output: it reads the totals */
        emit_line(&c->w, "if (threadIdx.x == 0) {");
        for (int i = 0; i < nreds; i++) {
            int id = reds[i]->id;
            emit_line(&c->w, "    a%d = A%d::get(acc%d);", id, id, id);
            emit_line(&c->w, "    *acc%d = 0; /* the identity, for the next call */", id);
        }
        emit_line(&c->w, "    ((unsigned *)zscratch)[ko] = 0u; /* ready for the next call */");
        emit_line(&c->w, "}");
    } else {
        for (int i = 0; i < nreds; i++) {
            int id = reds[i]->id;
            emit_line(&c->w, "a%d = R%d::init();", id, id);
            emit_line(&c->w, "for (I z = threadIdx.x; z < nsplit; z += BS)");
            emit_line(&c->w, "    a%d = R%d::comb(a%d, R%d::ldcg(part%d + z));", id, id, id, id, id);
            emit_line(&c->w, "a%d = fz_block_reduce<R%d, BS / 32>(a%d);", id, id, id);
        }
        emit_line(&c->w, "if (threadIdx.x == 0)");
        emit_line(&c->w, "    ((unsigned *)zscratch)[ko] = 0u; /* ready for the next call */");
    }
    cu_close_scope(c);
    emit_line(&c->w, "if (threadIdx.x == 0) {");
    cu_open_scope(c);
    for (int i = 0; i < nreds; i++)
        cu_finish_reduction(c, reds[i], "", "(nO * nI)");
    for (int i = 0; i < k->noutputs; i++)
        if (!cu_out_is_elem(c, i))
            cu_emit_store(c, i, "I");
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
}
