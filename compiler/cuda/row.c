/* cuda/row.c -- row kernels (KK_ROW, and reductions over rows or any axes):
 * the cached, shared-memory and looped bodies, their element loops and
 * reduction rounds. */
#include "cuda_priv.h"

/* The end of this block's part of a cached row: the row's length, its
 * length or 0 for rows that share a warp, rhi in a cluster ([rlo, rhi)) */
static const char *row_end(const KCtx *c) { return c->cluster ? "rhi" : c->subwarp ? "Rr" : "R"; }

/* Whether the windowed cached vector kk lies whole in the row: a bit of
 * vwhole in registers (one word for every pass, where the passes' own
 * tests were kept as predicates across them and spilled), else its index
 * against [vlo, vhi) */
static const char *row_vec_whole(const KCtx *c)
{
    return c->smem ? "(vi >= vlo && vi < vhi)" : "(vwhole >> kk & 1)";
}

/* jlo and jhi, the elements [jlo, jhi) of a windowed cached vector at rb
 * that lie in the row (a partial vector, the row's first or last): the
 * checked copies compare j, a constant once unrolled, with them, where
 * 64-bit bounds on rb + j took six instructions an element (sm_90) */
static void row_vec_bounds(KCtx *c)
{
    const char *RR = row_end(c);
    emit_line(&c->w, "const int jlo = rb < 0 ? (int)-rb : 0;");
    emit_line(&c->w, "const int jhi = %s - rb < (I)V ? (int)(%s - rb) : V;", RR, RR);
}

/* The narrowest element a windowed looped row of 2-byte elements (vectors
 * of 8) reads as aligned 16-byte pieces (fz_vec_pieces) when its vector
 * at rb is not aligned.  Vectors and pieces are read in blocks of 512
 * threads or fewer (64 registers a thread); blocks of 1024 have 32, where
 * the vector's branch alone made f32 rmsnorm with a residual spill 28
 * bytes, so they read an element at a time.  On the H200, in a
 * standalone kernel of that shape, 8-byte elements misaligned beside bf16
 * rows of 32000 to 128256 took 176-178 us against 274-276 an element at
 * a time, 4-byte ones 82 against 155; 2-byte ones took 106-108 against 85
 * (the select of 8 places costs more than the loads save).  Beside f32
 * rows (vectors of 4) pieces of i64 lost: a static cross-entropy over
 * [2047, 50257] took 185-192 us against 152-156. */
#define ROW_PIECES_MIN 4

/* dst.v[j] = access a at rb + j, for j < V: a vector whose elements are not
 * aligned in a's array, an element at a time (one load each, the offset in
 * its address); `inrow`: only its elements [jlo, jhi) in the row
 * (row_vec_bounds), the others 0 */
static void row_vec_elems(KCtx *c, int a, const char *dst, int inrow)
{
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "(rb + j)";
    Buf off = {0};
    cu_acc_offset(c, &c->acc[a], "I", &off);
    c->gi[g] = saved;
    int ib = c->inbuf[c->acc[a].node->id];
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++)");
    if (inrow)
        emit_line(&c->w, "    %s.v[j] = j >= jlo && j < jhi ? in%d[%s] : (%s)0;", dst, ib, off.data,
                  cu_stype(MDT(c, c->acc[a].node)));
    else
        emit_line(&c->w, "    %s.v[j] = in%d[%s];", dst, ib, off.data);
    buf_free(&off);
}

/* The row-only inputs of a register body (layernorm's g and b): a lane's
 * vectors at rb are the same in every row, so they are read once before
 * the rows into cb<a> where they take at most 16 registers (HB), not once
 * a pass and row: the row loop would hold them only where the row's end
 * is known (a static row), since a load under `rb < R` is not moved out
 * of a loop.  Vectors narrower than 4 bytes an element (bf16) are read
 * again each pass: held, LayerNorm backward's bf16 `_rt16` took 20
 * registers more (88 -> 108) and ran slower at most row lengths.  Windowed
 * rows (SH) keep their per-row loads; shared-memory, looped and cluster
 * bodies hold no lane's fixed vectors. */
static void row_vec_hoist(KCtx *c)
{
    int vw = c->L->vw, bytes = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_rowvec(c, &c->acc[a], vw)) {
            int sz = dtype_size(MDT(c, c->acc[a].node));
            if (sz < 4)
                return;
            bytes += sz;
        }
    if (!bytes)
        return;
    emit_line(&c->w, "constexpr bool HB = CAP * %d <= 64%s; /* row-only vectors held: at most 16 registers */", bytes,
              c->window ? " && !SH" : "");
    c->hoistvb = 1;
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "rb";
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_rowvec(c, &c->acc[a], vw))
            emit_line(&c->w, "fz_vec<%s, V> cb%d[HB ? CAP / V : 1];", cu_stype(MDT(c, c->acc[a].node)), a);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int kk = 0; kk < (HB ? CAP / V : 0); kk++) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I rb = ((I)kk * vstep + vlane) * V;");
    emit_line(&c->w, "if (rb < R) {");
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_rowvec(c, &c->acc[a], vw)) {
            Buf off = {0};
            const char *st = cu_stype(MDT(c, c->acc[a].node));
            cu_acc_offset(c, &c->acc[a], "I", &off);
            emit_line(&c->w, "    cb%d[kk] = *(const fz_vec<%s, V> *)(in%d + %s);", a, st, c->inbuf[c->acc[a].node->id],
                      off.data);
            buf_free(&off);
        }
    emit_line(&c->w, "}");
    cu_close_scope(c);
    c->gi[g] = saved;
}

/* Row-only inputs (layernorm's g and b): one vector at rb, the same for
 * every row, declared before the element loop `body` of a pass for each
 * access that body reads (vb<a>.v[j]); then the body.  sh: the windowed
 * cached body, whose vector at rb may be partial (SH); 2: a windowed
 * vector inside the row (its elements, not aligned in this array): in
 * blocks of up to 512, one vector where the row starts on the grid (sh ==
 * 0) and the pointer is aligned, else pieces (ROW_PIECES_MIN); else
 * elements. */
static void row_vec_loads(KCtx *c, int vw, int sh, Buf *body)
{
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "rb";
    for (int a = 0; a < c->nacc; a++) {
        char use[32];
        snprintf(use, sizeof use, "vb%d.v[j]", a);
        if (!cu_acc_rowvec(c, &c->acc[a], vw) || !body->data || !strstr(body->data, use))
            continue;
        Buf off = {0};
        const char *st = cu_stype(MDT(c, c->acc[a].node));
        int ib = c->inbuf[c->acc[a].node->id];
        cu_acc_offset(c, &c->acc[a], "I", &off);
        char held[32] = ""; /* the vector held before the rows (row_vec_hoist) */
        if (c->hoistvb)
            snprintf(held, sizeof held, "HB ? cb%d[kk] : ", a);
        if (!sh) {
            emit_line(&c->w, "const fz_vec<%s, V> vb%d = %s*(const fz_vec<%s, V> *)(in%d + %s);", st, a, held, st, ib,
                      off.data);
            buf_free(&off);
            continue;
        }
        /* windowed rows: the vector at rb is not aligned in this array, so
         * an element at a time; inside the row as they are (sh == 2), else
         * a partial vector only its elements in the row */
        emit_line(&c->w, "fz_vec<%s, V> vb%d;", st, a);
        char dst[16];
        snprintf(dst, sizeof dst, "vb%d", a);
        if (sh == 2) {
            int es = dtype_size(MDT(c, c->acc[a].node));
            emit_line(&c->w, "if (BS <= 512 && sh == 0 && (unsigned long long)in%d %% sizeof(vb%d) == 0)", ib, a);
            emit_line(&c->w, "    vb%d = *(const fz_vec<%s, V> *)(in%d + %s);", a, st, ib, off.data);
            if (es >= ROW_PIECES_MIN && vw >= 8) {
                emit_line(&c->w, "else if (BS <= 512 && rb + V + %d <= R) /* pieces inside the row */", 16 / es);
                emit_line(&c->w, "    vb%d = fz_vec_pieces<%s, V>(in%d + %s);", a, st, ib, off.data);
            }
            emit_line(&c->w, "else {");
            cu_open_scope(c);
            row_vec_elems(c, a, dst, 0);
            cu_close_scope(c);
            buf_free(&off);
            continue;
        }
        /* a whole vector inside the row an element at a time at rb + j
         * (one load each, the offset in its address; read as the aligned
         * 16-byte pieces that hold it, shifted into place by a funnel
         * shift, bf16 layernorm's rows of 3001 and 4097 ran no faster on
         * the H100), a partial one its elements in the row (clamped
         * 64-bit indices took five instructions an element, sm_90) */
        emit_line(&c->w, "if (SH && %s) {", row_vec_whole(c));
        cu_open_scope(c);
        row_vec_elems(c, a, dst, 0);
        cu_close_scope(c);
        emit_line(&c->w, "else if (SH) {");
        cu_open_scope(c);
        row_vec_bounds(c);
        row_vec_elems(c, a, dst, 1);
        cu_close_scope(c);
        emit_line(&c->w, "else");
        emit_line(&c->w, "    vb%d = %s*(const fz_vec<%s, V> *)(in%d + %s);", a, held, st, ib, off.data);
        buf_free(&off);
    }
    c->gi[g] = saved;
    if (body->data)
        buf_puts(c->w.out, body->data);
}

/* const fz_vec<T, V> xv<a>: the V elements of row-shaped input a at rb
 * (a cached access; the caller decomposed rb) */
static void row_vec_load(KCtx *c, int a)
{
    Buf off = {0};
    const char *st = cu_stype(MDT(c, c->acc[a].node));
    cu_acc_offset(c, &c->acc[a], "I", &off);
    emit_line(&c->w, "const fz_vec<%s, V> xv%d = *(const fz_vec<%s, V> *)(in%d + %s);", st, a, st, c->inbuf[c->acc[a].node->id],
              off.data);
    buf_free(&off);
}

/* fz_vec<T, V> xv<a>: as row_vec_load, for an access at another offset
 * than the window's (cu_row_win_apart): windowed (SH), an element at a
 * time at rb + j, a whole vector of the window being inside the row */
static void row_vec_load_apart(KCtx *c, int a)
{
    const char *st = cu_stype(MDT(c, c->acc[a].node));
    int ib = c->inbuf[c->acc[a].node->id];
    Buf off = {0};
    cu_acc_offset(c, &c->acc[a], "I", &off);
    char dst[16];
    snprintf(dst, sizeof dst, "xv%d", a);
    emit_line(&c->w, "fz_vec<%s, V> %s;", st, dst);
    emit_line(&c->w, "if (SH) {");
    c->w.indent++;
    row_vec_elems(c, a, dst, 0);
    c->w.indent--;
    emit_line(&c->w, "} else");
    emit_line(&c->w, "    %s = *(const fz_vec<%s, V> *)(in%d + %s);", dst, st, ib, off.data);
    buf_free(&off);
}

/* Whether the pass of rc writes element output i: the first round those
 * that need no reduction, the final pass those that do. */
static int row_pass_stores(KCtx *c, const RoundCtx *rc, int i)
{
    if (!cu_out_is_elem(c, i))
        return 0;
    int dep = cu_depends_on_red(c, c->k->outputs[i]);
    return (rc->first && !dep) || (rc->final && dep);
}

static int row_pass_stores_any(KCtx *c, const RoundCtx *rc)
{
    for (int i = 0; i < c->k->noutputs; i++)
        if (row_pass_stores(c, rc, i))
            return 1;
    return 0;
}

/* The vector stores of a pass of a row body: each element output the pass
 * writes (row_pass_stores) goes out as the V-element vector vo<i> at rb
 * (the reduced group's index); in a windowed body (sh, the template flag
 * SH) a partial first or last vector goes an element at a time. */
static void row_vec_stores(KCtx *c, const RoundCtx *rc, int sh)
{
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "rb";
    for (int i = 0; i < c->k->noutputs; i++)
        if (row_pass_stores(c, rc, i)) {
            Access a = {c->k->outputs[i], {0}};
            cu_out_map(c, c->k->outputs[i], a.map);
            Buf off = {0};
            cu_acc_offset(c, &a, "I", &off);
            if (!sh) {
                emit_line(&c->w, "*(fz_vec<%s, V> *)(out%d + %s) = vo%d;", cu_stype(MDT(c, c->k->outputs[i])), i,
                          off.data, i);
                buf_free(&off);
                continue;
            }
            emit_line(&c->w, "if (!SH || %s)", row_vec_whole(c));
            emit_line(&c->w, "    *(fz_vec<%s, V> *)(out%d + %s) = vo%d;", cu_stype(MDT(c, c->k->outputs[i])), i,
                      off.data, i);
            emit_line(&c->w, "else {");
            cu_open_scope(c);
            c->gi[g] = "(rb + j)";
            Buf offj = {0};
            cu_acc_offset(c, &a, "I", &offj);
            c->gi[g] = "rb";
            row_vec_bounds(c);
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++)");
            emit_line(&c->w, "    if (j >= jlo && j < jhi)");
            emit_line(&c->w, "        out%d[%s] = vo%d.v[j];", i, offj.data, i);
            buf_free(&offj);
            cu_close_scope(c);
            buf_free(&off);
        }
    c->gi[g] = saved;
}

/* A windowed cached vector's element loop in two copies, into c->w.out:
 * whole vectors inside the row (all but a row's first and last) run
 * `inner`, the element body, without a per-element range check, whose
 * branches would keep the compiler from batching a vector's loads; partial
 * vectors run it checked.  `inner` was emitted two levels deeper than
 * c->w.indent (the if and the j loop).  (The windowed looped body runs its
 * partial vectors apart instead: row_elem_loop_vec.) */
static void row_split_loop(KCtx *c, const Buf *inner)
{
    emit_line(&c->w, "if (!SH || %s) {", row_vec_whole(c));
    for (int w = 0; w < 2; w++) {
        c->w.indent++;
        if (w)
            row_vec_bounds(c);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++) {");
        c->w.indent++;
        emit_line(&c->w, "const int k = kk * V + j;");
        emit_line(&c->w, "const I r = rb + j;");
        if (w) {
            emit_line(&c->w, "if (j < jlo || j >= jhi)");
            emit_line(&c->w, "    continue; /* outside the row: a partial first or last vector */");
        }
        buf_puts(c->w.out, inner->data ? inner->data : "");
        c->w.indent--;
        emit_line(&c->w, "}");
        c->w.indent--;
        emit_line(&c->w, w ? "}" : "} else {");
    }
}

/* Emit the element body (cu_decompose r, then fn) two levels deeper into
 * `inner`, for row_split_loop; its values are forgotten after. */
static void row_split_inner(KCtx *c, Buf *inner, ElemFn fn, void *ctx)
{
    Buf *outer = c->w.out;
    c->w.out = inner;
    c->w.indent++;
    cu_open_scope(c);
    cu_decompose(c, "r", 1);
    fn(c, ctx);
    Buf drop = {0};
    c->w.out = &drop;
    cu_close_scope(c); /* its closing brace is not wanted */
    buf_free(&drop);
    c->w.indent--;
    c->w.out = outer;
}

/* A windowed looped pass's partial vector at `at` (a row's first or last)
 * in the lane that owns it: the element body an element at a time, loads
 * and stores included, not unrolled (at most two such vectors a row;
 * unrolled, their loads held more registers than the whole-vector loop,
 * sm_90).  For vectors of 4 elements or fewer (row_wloop_pass) */
static void row_partial_vec(KCtx *c, const char *at, ElemFn fn, void *ctx)
{
    emit_line(&c->w, "#pragma unroll 1");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I r = %s + j;", at);
    emit_line(&c->w, "if (r < 0 || r >= R)");
    emit_line(&c->w, "    continue; /* outside the row */");
    cu_decompose(c, "r", 1);
    fn(c, ctx);
    cu_close_scope(c);
}

/* A windowed looped pass's partial first and last vector spread over the
 * block: the row's elements before its first whole vector, [0, hn), and
 * after its last, [tb, R), an element a lane (lanes 0 .. hn - 1 and TPR -
 * V on), before the lanes' whole vectors.  For vectors of 8 elements or
 * more (row_wloop_pass).  The two ranges need 2 V lanes a row; where rows
 * share a warp (rows_share_warp: 4 or 8 lanes a row) the 2 V slots, first
 * vector's then last's, go over the lanes in turn instead */
static void row_partial_elems(KCtx *c, ElemFn fn, void *ctx)
{
    emit_line(&c->w, "{");
    cu_open_scope(c);
    emit_line(&c->w, "const I hn = sh ? ((I)V - sh < R ? (I)V - sh : R) : (I)0; /* the partial first vector's elements */");
    emit_line(&c->w, "const I tb = hn + (R - hn) / V * V; /* the partial last vector's first */");
    if (c->loopsub) {
        emit_line(&c->w, "for (int e = lane; e < 2 * V; e += TPR) { /* slot e: the first vector's e, the last's e - V */");
        cu_open_scope(c);
        emit_line(&c->w, "const I r = e < V ? (e < hn ? (I)e : (I)-1) : (I)(e - V) < R - tb ? tb + (I)(e - V) : (I)-1;");
    } else
        emit_line(&c->w, "const I r = lane < hn ? (I)lane : lane >= TPR - V && (I)(lane - (TPR - V)) < R - tb ? tb + (I)(lane - (TPR - V)) : (I)-1;");
    emit_line(&c->w, "if (r >= 0) {");
    cu_open_scope(c);
    cu_decompose(c, "r", 1);
    fn(c, ctx);
    cu_close_scope(c);
    if (c->loopsub)
        cu_close_scope(c);
    cu_close_scope(c);
}

/* The array a vector step collects reduction n's elements in, for
 * R::updv after the element loop: 'l' a logsumexp's (not in its two
 * sweeps), 'w' a var's or std's; 0 where n folds an element at a time. */
static char vec_fold(const KCtx *c, const IrNode *n, int sweep)
{
    if (c->lsevec && cu_red_is_lse(n) && !sweep && (!c->lsecols || cu_lse_hw(c, n)))
        return 'l';
    if (c->varvec && cu_red_is_welford(n))
        return 'w';
    return 0;
}

/* One vector step of the looped row body at rb (row_elem_loop_vec): the
 * cached inputs' vectors, the element loop, the pass's vector stores */
static void row_vec_step(KCtx *c, ElemFn fn, void *ctx, int V, int win)
{
    const RoundCtx *rc = ctx;
    int vs = row_pass_stores_any(c, rc);
    cu_decompose(c, "rb", 1);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]))
            row_vec_load(c, a);
    for (int i = 0; vs && i < c->k->noutputs; i++)
        if (row_pass_stores(c, rc, i))
            emit_line(&c->w, "fz_vec<%s, V> vo%d;", cu_stype(MDT(c, c->k->outputs[i])), i);
    /* the element loop goes to `body` first: the per-column vectors it
     * reads are declared in front of it (row_vec_loads) */
    Buf body = {0};
    Buf *outer = c->w.out;
    c->loopvld = 1;
    c->vecstore = vs;
    c->rowvw = V;
    c->w.out = &body;
    /* a logsumexp folds a vector of 8 elements (2-byte types) at once
     * (fz_lse::updv: no exp waits on another's running max); with 4 a
     * vector its extra exp costs what the shorter chain saves */
    for (int i = 0; V >= 8 && !rc->lse_sweep && i < rc->nreds; i++)
        if (cu_red_is_lse(rc->reds[i])) {
            emit_line(&c->w, "%s l%d[V];", cu_ctype(cu_red_acc_dtype(rc->reds[i])), rc->reds[i]->id);
            c->lsevec = 1;
        }
    /* a var or std folds a vector of 4 or more elements at once
     * (fz_var::updv: one division a vector, not one an element, and no
     * element's update waits on the one before), where the pass's states
     * take at most 48 bytes: row statistics (mean, var, max, argmax) hold
     * 28; beside the 76 of every reduction at once (tests/sema/
     * reductions.fuse) the vectors of values spilled 36 bytes (sm_90) */
    int state = 0;
    for (int i = 0; i < rc->nreds; i++)
        state += cu_red_state_bytes(rc->reds[i]);
    for (int i = 0; V >= 4 && state <= 48 && i < rc->nreds; i++)
        if (cu_red_is_welford(rc->reds[i])) {
            emit_line(&c->w, "%s w%d[V];", cu_ctype(cu_red_acc_dtype(rc->reds[i])), rc->reds[i]->id);
            c->varvec = 1;
        }
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I r = rb + j;");
    cu_decompose(c, "r", 1);
    fn(c, ctx);
    cu_close_scope(c);
    for (int i = 0; i < rc->nreds; i++) {
        const IrNode *n = rc->reds[i];
        char arr = vec_fold(c, n, rc->lse_sweep);
        if (arr)
            emit_line(&c->w, "a%d = R%d::updv<V>(a%d, %c%d);", n->id, n->id, n->id, arr, n->id);
    }
    c->loopvld = 0;
    c->lsevec = 0;
    c->varvec = 0;
    c->vecstore = 0;
    c->rowvw = 0;
    c->w.out = outer;
    row_vec_loads(c, V, win ? 2 : 0, &body);
    buf_free(&body);
    if (vs)
        row_vec_stores(c, rc, 0);
}

/* A reduction kernel's vector loop over its row (it writes no row, so
 * nothing else keeps loads in flight): four iterations unrolled, whose
 * loads the compiler issues ahead of their updates. */
static void row_reduce_unroll(KCtx *c)
{
    if (c->k->kind == KK_REDUCE)
        emit_line(&c->w, "#pragma unroll 4");
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
 * (2^26 elements) spreading them
 * took bf16 softmax at 16387 / 30001 / 50257 / 65537 from 173.3 / 140.8 /
 * 135.2 / 128.8 to 149.0 / 135.3 / 130.8 / 124.4 us, layernorm bf16 at
 * 16387 / 50257 from 176.9 / 155.5 to 158.8 / 143.8.  Of 4 (f32) the
 * lane that owns them runs them (row_partial_vec), the first before its
 * loop and the last after, or the other way round backwards: spread, f32
 * softmax at 30001 / 50257 went from 188.8 / 225.0 to 194.8 / 236.5 */
static void row_wloop_pass(KCtx *c, ElemFn fn, void *ctx, int rev)
{
    int spread = c->loopvec >= 8;
    emit_line(&c->w, "{");
    cu_open_scope(c);
    if (spread)
        row_partial_elems(c, fn, ctx);
    if (rev && spread) {
        emit_line(&c->w, "const I rb0 = (I)lane * V - sh;");
        emit_line(&c->w, "I rbn = R - V - rb0 >= 0 ? rb0 + ((R - V - rb0) >> lgs << lgs) : (I)-1;");
        emit_line(&c->w, "for (; rbn >= 0; rbn -= (I)TPR * V) {");
    } else if (spread) {
        emit_line(&c->w, "I rbn = (I)lane * V - sh;");
        emit_line(&c->w, "if (rbn < 0)");
        emit_line(&c->w, "    rbn += (I)TPR * V;");
        row_reduce_unroll(c);
        emit_line(&c->w, "for (; rbn + V <= R; rbn += (I)TPR * V) {");
    } else if (rev) {
        emit_line(&c->w, "const I rb0 = (I)lane * V - sh;");
        emit_line(&c->w, "I rbn = rb0 < R ? rb0 + ((R - 1 - rb0) >> lgs << lgs) : rb0 - (I)TPR * V;");
        emit_line(&c->w, "if (rbn >= rb0 && rbn + V > R) { /* the row's partial last vector */");
        cu_open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        emit_line(&c->w, "rbn -= (I)TPR * V;");
        cu_close_scope(c);
        emit_line(&c->w, "for (; rbn >= 0; rbn -= (I)TPR * V) {");
    } else {
        emit_line(&c->w, "I rbn = (I)lane * V - sh;");
        emit_line(&c->w, "if (rbn < 0) { /* the row's partial first vector */");
        cu_open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        emit_line(&c->w, "rbn += (I)TPR * V;");
        cu_close_scope(c);
        row_reduce_unroll(c);
        emit_line(&c->w, "for (; rbn + V <= R; rbn += (I)TPR * V) {");
    }
    cu_open_scope(c);
    emit_line(&c->w, "const I rb = rbn;");
    row_vec_step(c, fn, ctx, c->loopvec, 1);
    cu_close_scope(c);
    if (!spread) {
        if (rev)
            emit_line(&c->w, "if (rbn >= rb0) { /* the row's partial first vector */");
        else
            emit_line(&c->w, "if (rbn < R) { /* the row's partial last vector */");
        cu_open_scope(c);
        row_partial_vec(c, "rbn", fn, ctx);
        cu_close_scope(c);
    }
    cu_close_scope(c);
}

/* rb, the row index of the cached body's vector kk of this lane: vectors
 * vlane, vlane + vstep, ... (cu_emit_row_body), less the window's shift */
static void row_vec_start(KCtx *c)
{
    if (c->window) {
        emit_line(&c->w, "const int vi = kk * %s + vlane;", c->smem ? "32" : "vstep");
        emit_line(&c->w, "const I rb = wb + (I)vi * V;");
    } else if (c->smem)
        emit_line(&c->w, "const I rb = ((I)kk * 32 + vlane) * V;");
    else
        emit_line(&c->w, "const I rb = %s((I)kk * vstep + vlane) * V;", c->cluster ? "rlo + " : "");
}

/* The looped row body's vector pass (`_rlv_body`, rows of whole aligned
 * vectors, checked by the launcher; `_rlw_body`, windowed: rows at any
 * offset, every row-shaped pointer at the same one): each lane reads
 * V-element vectors of the row-shaped inputs at rb, rb + TPR * V, ... (16
 * bytes a load instead of 4; windowed, from rb = -sh on, the partial first
 * and last vector apart, row_wloop_pass), the per-column inputs as
 * vectors at rb (row_vec_loads), and each pass stores its element
 * outputs as V-element vectors (the first round those that need no
 * reduction, the final pass the others): element stores of 2 bytes took
 * eight store instructions a vector. */
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
        emit_line(&c->w, "if (wrev)");
        row_wloop_pass(c, fn, ctx, 1);
        emit_line(&c->w, "else");
        row_wloop_pass(c, fn, ctx, 0);
    } else if (c->loopwin)
        row_wloop_pass(c, fn, ctx, 0);
    else {
        row_reduce_unroll(c);
        emit_line(&c->w, "for (I rb = (I)lane * V; rb < R; rb += (I)TPR * V) {");
        cu_open_scope(c);
        row_vec_step(c, fn, ctx, c->loopvec, 0);
        cu_close_scope(c);
    }
}

/* Whether a cached row's element body reads only what is safe at any
 * element of its vectors, in the row or not: the row cache, per-column
 * vectors (a partial one reads only its elements in the row,
 * row_vec_loads) and what does not vary along the row. */
static int row_out_pass_free(KCtx *c)
{
    for (int a = 0; a < c->nacc; a++)
        if (!cu_acc_cached(c, &c->acc[a]) && !cu_acc_rowvec(c, &c->acc[a], c->L->vw) &&
            cu_acc_reduced(c, &c->acc[a]))
            return 0;
    return 1;
}

static void row_elem_loop(KCtx *c, int cached, ElemFn fn, void *ctx)
{
    RoundCtx *rc = ctx;
    if (!cached && c->loopvec) {
        row_elem_loop_vec(c, fn, ctx);
        return;
    }
    /* rows in shared memory store their first round's outputs an element
     * at a time: with vectors the bf16 residual add of rmsnorm spilled */
    int vs = cached && row_pass_stores_any(c, rc) && c->L->vw > 1 && (rc->final || !c->smem);
    int vw = cached ? c->L->vw : 1;
    /* Rows at any offset: whole vectors inside the row (all but a row's
     * first and last) take a copy of the element body without the
     * per-element range check, the partial vectors the checked copy.  The
     * check took six instructions an element in 64 bits (sm_90), so the
     * windowed bf16 register rows issued half as many instructions again
     * as the aligned ones; in shared memory its branches kept the compiler
     * from batching a vector's loads.  A register row's output pass needs
     * no check where every element it reads is safe outside the row
     * (row_out_pass_free): its stores are checked.  Vectors of two 8-byte
     * elements keep one checked copy: in two, f64 softmax spilled 368
     * bytes at 128 registers. */
    int checked = cached && c->window && !(rc->final && rc->nreds == 0 && !c->smem && row_out_pass_free(c));
    int split = checked && (c->smem ? vw > 1 : vw >= 4);
    Buf body = {0};
    Buf *outer = NULL;
    if (cached) {
        /* V contiguous elements per lane and step: 16-byte accesses */
        emit_line(&c->w, c->smem ? "#pragma unroll 4" : "#pragma unroll");
        emit_line(&c->w, "for (int kk = 0; kk < CAP / V; kk++) {");
        cu_open_scope(c);
        row_vec_start(c);
        emit_line(&c->w, "if (rb < %s) {", row_end(c));
        cu_open_scope(c);
        for (int i = 0; vs && i < c->k->noutputs; i++)
            if (row_pass_stores(c, rc, i))
                emit_line(&c->w, "fz_vec<%s, V> vo%d;", cu_stype(MDT(c, c->k->outputs[i])), i);
        if (vw > 1) {
            /* the element loop goes to `body` first: the row-only vectors
             * it reads are declared in front of it (row_vec_loads) */
            outer = c->w.out;
            c->w.out = &body;
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
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++) {");
            cu_open_scope(c);
            emit_line(&c->w, "const int k = kk * V + j;");
            emit_line(&c->w, "const I r = rb + j;");
            if (checked) {
                emit_line(&c->w, "if (SH && (r < 0 || r >= %s))", row_end(c));
                emit_line(&c->w, "    continue; /* outside the row: a partial first or last vector */");
            }
        } else {
            emit_line(&c->w, "for (I r = (I)lane; r < R; r += TPR) {");
            cu_open_scope(c);
        }
        cu_decompose(c, "r", 1);
        fn(c, ctx);
        if (cached)
            cu_close_scope(c); /* the j loop; the looped one closes last */
    }
    c->rowcache = 0;
    c->vecstore = 0;
    c->rowvw = 0;
    if (cached) {
        if (outer) {
            c->w.out = outer;
            row_vec_loads(c, vw, c->window, &body);
            buf_free(&body);
        }
        if (vs)
            row_vec_stores(c, rc, c->window);
        cu_close_scope(c);
    }
    cu_close_scope(c);
}


/* Per element of a pass: fold the round's reductions, and write the
 * element outputs whose pass this is (the first round for outputs that need
 * no reduction, the final pass for those that do). */
static void row_cache_rewrite(KCtx *c, int from);

/* One element folded into reduction n's state: acc = R<id>::upd(acc, the
 * element of n's operand, its index idx); upd_max or upd_sum in the two
 * sweeps of a logsumexp (RoundCtx.lse_sweep). */
static void fold_elem(KCtx *c, const IrNode *n, const char *acc, const char *idx, int sweep, const char *guard)
{
    int8_t m[IR_MAX_RANK];
    cu_space_map(c, n->in[0].node, m);
    const char *v = cu_emit_value(c, n->in[0].node, m);
    Buf e = {0};
    cu_red_elem(n, v, &e);
    char arr = vec_fold(c, n, sweep);
    if (arr == 'l' && c->lsecols) {
        emit_line(&c->w, "l%d%s[u] = %s;", n->id, c->accidx, e.data);
        buf_free(&e);
        return;
    }
    if (arr) {
        emit_line(&c->w, "%c%d%s = %s;", arr, n->id, c->foldidx ? c->foldidx : "[j]", e.data);
        buf_free(&e);
        return;
    }
    const char *fold = !cu_red_is_lse(n) || !sweep ? "upd" : sweep == 1 ? "upd_max" : "upd_sum";
    if (guard)
        emit_line(&c->w, "if (%s)", guard);
    emit_line(&c->w, "%s%s = R%d::%s(%s, %s, (long long)%s);", guard ? "    " : "", acc, n->id, fold, acc, e.data,
              idx);
    buf_free(&e);
}

void cu_round_elem(KCtx *c, void *vctx)
{
    RoundCtx *rc = vctx;
    int from = c->ninst;
    char acc[48];
    for (int i = 0; i < rc->nreds; i++) {
        snprintf(acc, sizeof acc, "a%d%s", rc->reds[i]->id, c->accidx ? c->accidx : "");
        fold_elem(c, rc->reds[i], acc, "r", rc->lse_sweep, NULL);
    }
    for (int i = 0; i < rc->nside; i++) {
        /* a column kernel's row states; a row kernel's column partials,
         * the state of the lane's column k in registers
         * (row_colp_states), in CS variants only */
        const int row = c->k->kind == KK_ROW;
        snprintf(acc, sizeof acc, row ? "cs%d[k]" : "s%d", rc->side[i]->id);
        fold_elem(c, rc->side[i], acc, rc->sidx, 0, row ? "CS" : NULL);
    }
    for (int i = 0; i < c->k->noutputs; i++)
        if (row_pass_stores(c, rc, i))
            cu_emit_store(c, i, "I");
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
 * Walks the operands as cu_emit_value does; reductions of the kernel are row
 * values, constants and scalars end a path.  A node met again at another
 * map than its first counts as reaching x (conservative: e is only
 * substituted at emap). */
static int reaches_x(KCtx *c, const IrNode *n, const int8_t *map, const IrNode *x, const IrNode *e,
                     const int8_t *emap, Walked *seen)
{
    if (n == e && cu_map_eq(n, map, emap))
        return 0;
    if (n == x)
        return 1;
    if (n->op == OP_CONST || cu_is_scalar_param(c, n) || c->role[n->id] != 'v' ||
        op_info[n->op].cls == OPC_REDUCE)
        return 0;
    Walked *w = &seen[n->id];
    if (w->state)
        return w->state == 2 || !cu_map_eq(n, w->map, map);
    w->state = 1;
    memcpy(w->map, map, sizeof w->map);
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        cu_operand_map(n, k, map, um);
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
 * cache, and let that pass read it (cu_emit_value): softmax's pass reads
 * e = exp(x - max) instead of computing exp again, layernorm's x - mean.
 * The latest such value wins: it saves the most work. */
static void row_cache_rewrite(KCtx *c, int from)
{
    int slot = -1;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a])) {
            if (slot >= 0)
                return; /* more than one cached access: keep it simple */
            slot = a;
        }
    if (slot < 0 || cu_xc_raw(c, slot))
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
            strcmp(cu_ctype(e->dtype), cu_ctype(x->dtype)) != 0)
            continue;
        /* e must depend on x: a value e that does not is a row value */
        memset(seen, 0, nseen);
        if (!reaches_x(c, e, c->inst[i].map, x, NULL, c->inst[i].map, seen))
            continue;
        int covers = 1;
        memset(seen, 0, nseen);
        for (int o = 0; o < c->k->noutputs && covers; o++) {
            if (!cu_out_is_elem(c, o) || !cu_depends_on_red(c, c->k->outputs[o]))
                continue;
            int8_t m[IR_MAX_RANK];
            cu_out_map_of(c, o, m);
            covers = !reaches_x(c, c->k->outputs[o], m, x, e, c->inst[i].map, seen);
        }
        /* the column partials fold in the output pass too */
        for (int v = 0; v < c->k->nvalues && covers; v++)
            if (cu_is_side_red(c, c->k->values[v])) {
                const IrNode *op = c->k->values[v]->in[0].node;
                int8_t m[IR_MAX_RANK];
                cu_space_map(c, op, m);
                covers = !reaches_x(c, op, m, x, e, c->inst[i].map, seen);
            }
        if (!covers)
            continue;
        Buf st = {0};
        cu_xc_store(c, &st, slot, "k", c->inst[i].name);
        emit_line(&c->w, "%s; /* the output pass reads it here */", st.data);
        buf_free(&st);
        c->xc_e = e;
        c->xc_rewrote = 1;
        memcpy(c->xc_emap, c->inst[i].map, sizeof c->xc_emap);
        c->xc_slot = slot;
    }
    free(seen);
}

/* const int sh: the row's element offset modulo V, from its address (the
 * launcher checked that every row-shaped pointer agrees) */
static void row_shift(KCtx *c)
{
    /* the first row-shaped access at the window's offset (not apart) */
    int a0 = 0;
    Access x;
    char ptr[32];
    while (!cu_row_shaped(c, a0, &x, ptr, sizeof ptr) || cu_row_win_apart(c, a0))
        a0++;
    int g = c->ng - 1;
    const char *saved = c->gi[g];
    c->gi[g] = "(I)0";
    Buf off = {0};
    cu_acc_offset(c, &x, "I", &off);
    c->gi[g] = saved;
    emit_line(&c->w, "const int sh = SH ? (int)((unsigned long long)(%s + %s) / sizeof(%s) %% V) : 0;", ptr,
              off.data, cu_stype(MDT(c, x.node)));
    buf_free(&off);
}

/* Does the body fold column partials (Lowering.colp, row_colp_states):
 * the register body of a row kernel with column reductions beside it */
static int row_has_colp(const KCtx *c, int cached)
{
    return cached && !c->smem && c->k->kind == KK_ROW && c->k->side_axes;
}

/* The cached row bodies: read this lane's part of the row once into
 * registers (xc<a>[CAP]) or shared memory, whole vectors, a windowed
 * partial vector an element at a time, zeros past the row's end. */
static void row_cache_load(KCtx *c)
{
    /* read the row once into registers (or shared memory) */
    for (int a = 0; a < c->nacc && !c->smem; a++)
        if (cu_acc_cached(c, &c->acc[a])) {
            if (cu_xc_packed(c, a))
                emit_line(&c->w, "unsigned xc%d[(CAP + 1) / 2]; /* two values a word */", a);
            else
                emit_line(&c->w, "%s xc%d[CAP];", cu_ctype(c->acc[a].node->dtype), a);
        }
    const char *RR = row_end(c);
    if (c->cluster) {
        /* a row over the CL blocks of a cluster: this block's part, a
         * whole number of vectors from the row's start (the launcher
         * checked that the row is CL parts of at most TPR * CAP) */
        const char *len = c->subwarp ? "Rr" : "R";
        emit_line(&c->w, "const I seg = CL > 1 ? (%s + (I)(CL * V) - 1) / (I)(CL * V) * (I)V : %s;", len, len);
        emit_line(&c->w, "const I rlo = (I)(blockIdx.x %% CL) * seg;");
        emit_line(&c->w, "const I rhi = rlo + seg < %s ? rlo + seg : %s;", len, len);
    }
    if (c->window) {
        row_shift(c);
        if (row_has_colp(c, 1))
            emit_line(&c->w, "csh = sh;");
        /* the lane's vectors vi at rb = wb + vi * V: those in [vlo, vhi)
         * lie whole in the row (32-bit tests, where rb's took four
         * instructions a vector and kept predicates across passes) */
        emit_line(&c->w, "const I wb = %s(I)-sh;", c->cluster && !c->smem ? "rlo + " : "");
        emit_line(&c->w, "const int vlo = wb < 0 ? (int)((-wb + V - 1) / V) : 0;");
        emit_line(&c->w, "const int vhi = (int)((%s - wb) / V);", RR);
        if (!c->smem)
            emit_line(&c->w, "unsigned vwhole = 0; /* bit kk: vector kk lies whole in the row */");
    }
    emit_line(&c->w, c->smem ? "#pragma unroll 4" : "#pragma unroll");
    emit_line(&c->w, "for (int kk = 0; kk < CAP / V; kk++) {");
    cu_open_scope(c);
    row_vec_start(c);
    if (c->window) {
        emit_line(&c->w, "if (SH ? vi >= vlo && vi < vhi : rb < %s) {", RR);
        if (!c->smem)
            emit_line(&c->w, "    vwhole |= 1u << kk;");
    } else
        emit_line(&c->w, "if (rb < %s) {", RR);
    cu_open_scope(c);
    cu_decompose(c, "rb", 1);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a])) {
            Buf e = {0}, cv = {0};
            if (c->window && !c->smem && cu_row_win_apart(c, a))
                row_vec_load_apart(c, a);
            else
                row_vec_load(c, a);
            buf_printf(&e, "xv%d.v[j]", a);
            cu_xc_value(c, a, e.data, &cv);
            Buf x = {0};
            cu_xc_store(c, &x, a, "kk * V + j", cv.data);
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int j = 0; j < V; j++)");
            emit_line(&c->w, "    %s;", x.data);
            buf_free(&x);
            buf_free(&e);
            buf_free(&cv);
        }
    cu_close_scope(c);
    if (c->window) {
        /* a partial first or last vector: an element at a time */
        emit_line(&c->w, "else if (SH && rb < %s) {", RR);
        cu_open_scope(c);
        row_vec_bounds(c);
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "for (int j = 0; j < V; j++) {");
        cu_open_scope(c);
        emit_line(&c->w, "const I r = rb + j;");
        cu_decompose(c, "r", 1);
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_cached(c, &c->acc[a])) {
                Buf off = {0}, e = {0}, cv = {0};
                cu_acc_offset(c, &c->acc[a], "I", &off);
                buf_printf(&e, "in%d[%s]", c->inbuf[c->acc[a].node->id], off.data);
                cu_xc_value(c, a, e.data, &cv);
                Buf v = {0}, x = {0};
                buf_printf(&v, "j >= jlo && j < jhi ? %s : 0", cv.data);
                cu_xc_store(c, &x, a, "kk * V + j", v.data);
                emit_line(&c->w, "%s;", x.data);
                buf_free(&v);
                buf_free(&x);
                buf_free(&off);
                buf_free(&e);
                buf_free(&cv);
            }
        cu_close_scope(c);
        cu_close_scope(c);
    }
    emit_line(&c->w, "else {");
    cu_open_scope(c);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    cu_open_scope(c);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a])) {
            Buf x = {0};
            cu_xc_store(c, &x, a, "kk * V + j", "0");
            emit_line(&c->w, "%s;", x.data);
            buf_free(&x);
        }
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
}
/* a<id><field> reduced over the row's threads (a warp's lanes, the block,
 * the cluster of a cached row) with R<id><red>: the state's reduction,
 * or one of logsumexp's two sweeps */
static void row_thread_reduce(KCtx *c, int cached, int id, const char *field, const char *red)
{
    if (cached && c->smem)
        /* the shared-memory body: a row a block, the launch's width */
        emit_line(&c->w, "a%d%s = fz_block_reduce_n<R%d%s, BS / 32>(a%d%s, (int)blockDim.x / 32);", id, field, id,
                  red, id, field);
    else if (cached || c->loopwin)
        /* the register and windowed looped bodies: TPRC threads a row,
         * or (0) a block's width */
        emit_line(&c->w, "a%d%s = (TPRC == 0) ? fz_block_reduce_n<R%d%s, BS / 32>(a%d%s, TPR / 32)"
                     " : (TPRC <= 32) ? fz_warp_reduce<R%d%s, (TPRC > 0 && TPRC <= 32 ? TPRC : 32)>(a%d%s)"
                     " : fz_block_reduce<R%d%s, (TPRC >= 64 ? TPRC / 32 : 1)>(a%d%s);",
                  id, field, id, red, id, field, id, red, id, field, id, red, id, field);
    else
        emit_line(&c->w, "a%d%s = (TPR <= 32) ? fz_warp_reduce<R%d%s, TPR <= 32 ? TPR : 32>(a%d%s)"
                     " : fz_block_reduce<R%d%s, (TPR >= 64 ? TPR / 32 : 1)>(a%d%s);",
                  id, field, id, red, id, field, id, red, id, field);
    if (cached && c->cluster) {
        emit_line(&c->w, "if (CL > 1)");
        emit_line(&c->w, "    a%d%s = fz_cluster_reduce<R%d%s, CL>(a%d%s, clp);", id, field, id, red, id, field);
    }
}

/* The reductions of a row in dependency rounds (each a pass over the
 * row, then a warp, block or cluster reduce), then the outputs: a last
 * pass for the element outputs, lane 0 for the per-row ones. */
/* Several rows share a warp: the register body's sub-warp rows, or the
 * looped body in a module with a sub-warp reduction variant */
static int rows_share_warp(const KCtx *c, int cached)
{
    return cached ? c->subwarp : c->loopsub;
}

static void row_rounds(KCtx *c, int cached)
{
    const Kernel *k = c->k;
    /* reductions in dependency rounds */
    const int maxl = cu_red_rounds(c);
    const IrNode *reds[64], *side[64];
    int nside = 0;
    for (int i = 0; i < k->nvalues && cached && !c->smem; i++)
        if (cu_is_side_red(c, k->values[i]) && nside < 64)
            side[nside++] = k->values[i];
    /* is there an output pass after the last round? (the column partials
     * fold in it) */
    int has_elem_final = nside > 0;
    for (int i = 0; i < k->noutputs; i++)
        has_elem_final |= cu_out_row_pass(c, i, maxl);
    c->xc_e = NULL;
    for (int L = 1; L <= maxl; L++) {
        RoundCtx rc = {reds, 0, L == 1, 0, cached && L == maxl && has_elem_final, L % 2 == 0, NULL, 0, NULL, 0};
        for (int i = 0; i < k->nvalues; i++)
            if (op_info[k->values[i]->op].cls == OPC_REDUCE && !cu_is_side_red(c, k->values[i]) &&
                cu_red_level(c, k->values[i], 1) + 1 == L && rc.nreds < 64)
                reds[rc.nreds++] = k->values[i];
        emit_line(&c->w, "/* round %d: %d reduction(s) over the row */", L, rc.nreds);
        for (int i = 0; i < rc.nreds; i++) {
            int8_t m[IR_MAX_RANK];
            cu_space_map(c, reds[i]->in[0].node, m);
            cu_hoist(c, reds[i]->in[0].node, m);
            emit_line(&c->w, "R%d::S a%d = R%d::init();", reds[i]->id, reds[i]->id, reds[i]->id);
        }
        /* A row held in registers takes its logsumexps in two sweeps, the
         * row's max and then the sum of exp against it, as softmax does:
         * the threads of a row combine plain maxima and sums, not states
         * whose combine takes two exps a step.  On the H200 (2^26
         * elements) f32 log-softmax over rows of 1024 went from 187 to
         * 135 us, bf16 over 4096 from 160 to 96.  Rows in shared memory
         * keep the running state: a second sweep there reads shared
         * memory again, and was not measured. */
        if (cached && !c->smem) {
            const IrNode *lse[64];
            RoundCtx pre = {lse, 0, 0, 0, 0, 0, NULL, 0, NULL, 1};
            for (int i = 0; i < rc.nreds; i++)
                if (cu_red_is_lse(reds[i]))
                    lse[pre.nreds++] = reds[i];
            if (pre.nreds) {
                emit_line(&c->w, "/* the row's max of each logsumexp first */");
                row_elem_loop(c, cached, cu_round_elem, &pre);
                for (int i = 0; i < pre.nreds; i++)
                    row_thread_reduce(c, cached, lse[i]->id, ".m", "::MaxR");
                rc.lse_sweep = 2;
            }
        }
        row_elem_loop(c, cached, cu_round_elem, &rc);
        for (int i = 0; i < rc.nreds; i++) {
            int id = reds[i]->id;
            const int two = rc.lse_sweep && cu_red_is_lse(reds[i]);
            row_thread_reduce(c, cached, id, two ? ".s" : "", two ? "::SumR" : "");
            cu_finish_reduction(c, reds[i], "", "R");
        }
    }
    /* the outputs: per element (a last pass) and per row (lane 0) */
    for (int i = 0; i < k->noutputs; i++)
        if (cu_out_row_pass(c, i, maxl)) {
            int8_t m[IR_MAX_RANK];
            cu_out_map_of(c, i, m);
            cu_hoist(c, k->outputs[i], m);
        }
    for (int i = 0; i < nside; i++) {
        int8_t m[IR_MAX_RANK];
        cu_space_map(c, side[i]->in[0].node, m);
        cu_hoist(c, side[i]->in[0].node, m);
    }
    if (has_elem_final) {
        RoundCtx rc = {reds, 0, maxl == 0, 1, 0, (maxl + 1) % 2 == 0, side, nside, "r", 0};
        emit_line(&c->w, nside ? "/* write the row, fold its columns */" : "/* write the row */");
        row_elem_loop(c, cached, cu_round_elem, &rc);
    }
    int has_row_out = 0;
    for (int i = 0; i < k->noutputs; i++)
        has_row_out |= !cu_out_is_elem(c, i);
    if (has_row_out) {
        emit_line(&c->w, "if (lane == 0%s%s) {", rows_share_warp(c, cached) ? " && rowok" : "",
                  cached && c->cluster ? " && blockIdx.x % CL == 0" : "");
        cu_open_scope(c);
        for (int i = 0; i < k->noutputs; i++)
            if (!cu_out_is_elem(c, i))
                cu_emit_store(c, i, "I");
        cu_close_scope(c);
    }
}
/* A row kernel's column partials (Lowering.colp), in the register body
 * of a CS variant: each row group (the block, or TPRC threads of it) takes
 * a row at a time, so each lane keeps the same columns from row to row
 * (whole aligned vectors, or windowed ones of the one shift csh that all
 * the block's rows have), and folds the column reductions' elements of its
 * rows into a state a column and reduction, cs<id>[k] for its row cache
 * slot k.  !flush: the states, before the first row.  flush: after the
 * block's last row, the first group adds the others' states in group
 * order, and the block's partial row z = blockIdx.x of each reduction goes
 * to cpart: gridDim.x rows of R states, one reduction's after another's,
 * each 256-byte aligned; the column kernel's _colp variant combines them
 * in a fixed order. */
static void row_colp_states(KCtx *c, int flush)
{
    const Kernel *k = c->k;
    int ids[64], n = 0, sb = 0; /* sb: the largest state's bytes */
    for (int i = 0; i < k->nvalues && n < 64; i++)
        if (cu_is_side_red(c, k->values[i])) {
            ids[n++] = k->values[i]->id;
            if (cu_red_state_bytes(k->values[i]) > sb)
                sb = cu_red_state_bytes(k->values[i]);
        }
    if (!flush) {
        emit_line(&c->w, "/* column partials: the lane's columns' states of the block's rows */");
        for (int i = 0; i < n; i++) {
            emit_line(&c->w, "R%d::S cs%d[CAP];", ids[i], ids[i]);
            emit_line(&c->w, "#pragma unroll");
            emit_line(&c->w, "for (int q = 0; q < CAP; q++)");
            emit_line(&c->w, "    cs%d[q] = R%d::init();", ids[i], ids[i]);
        }
        if (c->window)
            emit_line(&c->w, "int csh = 0; /* windowed: the shift of the block's rows, a grid of a multiple of V */");
        return;
    }
    emit_line(&c->w, "if (CS) {");
    cu_open_scope(c);
    /* several rows a block (TPRC): the row groups hold the same columns;
     * the first adds the others' states in group order, through shared
     * memory a group and a reduction at a time, so a block leaves one
     * partial row and the order is fixed */
    emit_line(&c->w, "const int grp = TPRC ? (int)(threadIdx.x / TPR) : 0; /* the row group */");
    emit_line(&c->w, "if (TPRC && BS / TPR > 1) {");
    cu_open_scope(c);
    emit_line(&c->w, "__shared__ __align__(16) unsigned char csm[(TPRC && BS / TPRC > 1 ? TPRC * CAP : 1) * %d];", sb);
    emit_line(&c->w, "for (int g = 1; g < BS / TPR; g++) {");
    cu_open_scope(c);
    for (int i = 0; i < n; i++) {
        emit_line(&c->w, "R%d::S *const cq%d = (R%d::S *)csm;", ids[i], ids[i], ids[i]);
        emit_line(&c->w, "if (grp == g) {");
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "    for (int q = 0; q < CAP; q++)");
        emit_line(&c->w, "        cq%d[q * TPR + lane] = cs%d[q];", ids[i], ids[i]);
        emit_line(&c->w, "}");
        emit_line(&c->w, "__syncthreads();");
        emit_line(&c->w, "if (grp == 0) {");
        emit_line(&c->w, "#pragma unroll");
        emit_line(&c->w, "    for (int q = 0; q < CAP; q++)");
        emit_line(&c->w, "        cs%d[q] = R%d::comb(cs%d[q], cq%d[q * TPR + lane]);", ids[i], ids[i], ids[i], ids[i]);
        emit_line(&c->w, "}");
        emit_line(&c->w, "__syncthreads();");
    }
    cu_close_scope(c);
    cu_close_scope(c);
    emit_line(&c->w, "if (grp == 0) {");
    cu_open_scope(c);
    emit_line(&c->w, "/* the block's partial row of each column reduction */");
    emit_line(&c->w, "unsigned char *cp = cpart;");
    for (int i = 0; i < n; i++) {
        emit_line(&c->w, "R%d::S *const cp%d = (R%d::S *)cp + (I)blockIdx.x * R;", ids[i], ids[i], ids[i]);
        cu_colp_next(c, ids[i], "gridDim.x", "R");
    }
    emit_line(&c->w, "(void)cp;");
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int kk = 0; kk < CAP / V; kk++) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I rb = %s((I)kk * vstep + vlane) * V;", c->window ? "(SH ? (I)-csh : (I)0) + " : "");
    emit_line(&c->w, "if (rb < R) {");
    cu_open_scope(c);
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < V; j++) {");
    if (c->window) {
        emit_line(&c->w, "    if (SH && (rb + j < 0 || rb + j >= R))");
        emit_line(&c->w, "        continue; /* outside the row: a partial first or last vector */");
    }
    for (int i = 0; i < n; i++)
        emit_line(&c->w, "    cp%d[rb + j] = cs%d[kk * V + j];", ids[i], ids[i]);
    emit_line(&c->w, "}");
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
    cu_close_scope(c);
}

/* The row scheme.  A "row" is one point of the kept groups (flat index
 * `row`), its elements the points of the reduced groups (flat index r).
 * TPR threads own a row: lane l takes elements l, l + TPR, ... (looped) or
 * V-element chunks (cached).  Reductions run in dependency rounds (softmax:
 * max, then sum of exp(x - max)); values that do not vary along the row are
 * hoisted out of the element loops; outputs of the row's shape are written
 * in a last pass, per-row outputs by lane 0. */
void cu_emit_row_body(KCtx *c, int cached)
{
    const Kernel *k = c->k;
    Buf ps = {0};
    /* the register body of a row kernel with column partials
     * (Lowering.colp): CS, whether the variant folds them, and cpart,
     * where they go */
    const int colp = row_has_colp(c, cached);
    /* wrev: the windowed looped body reads every second pass from the
     * row's end (row_elem_loop_vec) */
    cu_body_params(c, &ps, !cached && c->loopwin ? ", int wrev" : colp ? ", unsigned char *cpart" : NULL);
    cu_reset_point(c);
    if (cached && c->smem)
        emit_line(&c->w, "template <class I, int BS, int V%s>", c->window ? ", bool SH" : "");
    else if (cached)
        emit_line(&c->w, "template <class I, int TPRC, int CAP, int BS, int V%s%s%s>", c->window ? ", bool SH" : "",
                  c->cluster ? ", int CL" : "", colp ? ", bool CS" : "");
    else if (c->loopwin)
        emit_line(&c->w, "template <class I, int TPRC, int BS, int V>");
    else if (c->loopvec)
        emit_line(&c->w, "template <class I, int TPR, int BS, int V>");
    else
        emit_line(&c->w, "template <class I, int TPR, int BS>");
    emit_line(&c->w, "static __device__ __forceinline__ void %s_%s_body(%s)", k->name,
              cached ? (c->smem ? "rs" : "rc") : c->loopwin ? "rlw" : c->loopvec ? "rlv" : "rl", ps.data);
    emit_line(&c->w, "{");
    cu_open_scope(c);
    if (c->loopwin) {
        emit_line(&c->w, "const bool SH = true; /* windowed: the row's shift (row_shift) */");
        /* the backwards pass finds a lane's last vector with a shift: the
         * block's width is a power of two (launched with 512 or 1024
         * threads, or TPRC), where a division by it took ptxas to 32
         * registers and a spill (bf16 LayerNorm backward's dx, sm_90) */
        emit_line(&c->w, "const int lgs = __ffs((TPRC ? TPRC : (int)blockDim.x) * V) - 1; /* log2 of a pass's stride */");
        emit_line(&c->w, "(void)lgs;");
        emit_line(&c->w, "(void)wrev; /* a body without a second pass does not read it */");
    }
    cu_emit_group_sizes(c);
    Buf nr = {0}, rr = {0};
    cu_groups_product(c, 0, &nr);
    cu_groups_product(c, 1, &rr);
    emit_line(&c->w, "const I nrows = %s;", nr.data);
    emit_line(&c->w, "const I R = %s; /* elements per row */", rr.data);
    /* the register and windowed looped bodies' rows: TPRC threads each,
     * BS / TPRC a block; or (TPRC 0) one a block, the launch's block width
     * of threads */
    const int rc = (cached && !c->smem) || (!cached && c->loopwin);
    if (rc) {
        emit_line(&c->w, "const int TPR = TPRC ? TPRC : (int)blockDim.x; /* threads a row */");
        emit_line(&c->w, "const int lane = (int)(TPRC ? threadIdx.x %% TPR : threadIdx.x);");
        emit_line(&c->w, "const I rows_per_block = TPRC ? BS / TPR : 1;");
    } else if (cached) {
        /* the shared-memory body: a row a block of the launch's width (at
         * most BS) */
        emit_line(&c->w, "const int TPR = (int)blockDim.x; /* threads a row */");
        emit_line(&c->w, "const int lane = (int)threadIdx.x;");
        emit_line(&c->w, "const I rows_per_block = 1;");
    } else {
        emit_line(&c->w, "const int lane = (int)(threadIdx.x %% TPR);");
        emit_line(&c->w, "const I rows_per_block = BS / TPR;");
    }
    if (cached && !c->smem) {
        /* a lane's vectors: vlane, vlane + vstep, ...  TPRC 0: each warp
         * holds a run of CAP / V times 32 vectors, so they lie 32 apart
         * whatever the width (constant offsets, where a stride of the
         * width takes ptxas up to 24 registers more) */
        emit_line(&c->w, "const int vlane = TPRC ? lane : (lane >> 5) * (CAP / V) * 32 + (lane & 31);");
        emit_line(&c->w, "const int vstep = TPRC ? TPR : 32;");
    }
    const char *rib = rc ? "(TPRC ? threadIdx.x / TPR : 0)" : cached ? "0" : "(threadIdx.x / TPR)";
    if (cached && c->smem) {
        /* the row in dynamic shared memory, CAP elements a lane (the
         * launcher's shared bytes are TPR * CAP times the cached accesses'
         * element sizes), each warp holding a run of CAP / V times 32
         * vectors like the register body, its lanes' words interleaved;
         * each lane touches only its own words, so rows follow each other
         * without a barrier */
        emit_line(&c->w, "const int CAP = (int)(((unsigned)R + %s(unsigned)(TPR * V) - 1) / (unsigned)(TPR * V)) * V; /* R fits: the launcher checked its bytes */",
                  c->window ? "(SH ? V - 1 : 0) + " : "");
        emit_line(&c->w, "const int vlane = (lane >> 5) * (CAP / V) * 32 + (lane & 31);");
        emit_line(&c->w, "unsigned char *fz_sp = FZ_DYN_SMEM;");
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_cached(c, &c->acc[a])) {
                const char *t = cu_xc_raw(c, a) ? cu_stype(MDT(c, c->acc[a].node)) : cu_ctype(c->acc[a].node->dtype);
                emit_line(&c->w, "%s *const xc%d = (%s *)fz_sp + (lane >> 5) * CAP * 32 + (lane & 31);", t, a, t);
                emit_line(&c->w, "fz_sp += (size_t)TPR * CAP * sizeof(%s);", t);
            }
        emit_line(&c->w, "(void)fz_sp;");
    }
    /* a cluster's row: CL blocks, consecutive in x, hold one row */
    const char *bx = cached && c->cluster ? "(blockIdx.x / CL)" : "blockIdx.x";
    const char *gx = cached && c->cluster ? "(gridDim.x / CL)" : "gridDim.x";
    if (cached && c->cluster) {
        emit_line(&c->w, "int clp = CL > 1 ? 2 : 0; /* fz_cluster_reduce's state: start barrier pending, slot parity */");
        emit_line(&c->w, "fz_cluster_start<CL>();");
    }
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE) {
            Buf t = {0};
            cu_red_type(c, k->values[i], &t);
            emit_line(&c->w, "typedef %s R%d;", t.data, k->values[i]->id);
            buf_free(&t);
        }
    if (colp)
        row_colp_states(c, 0);
    if (cached && !c->smem && !c->cluster && c->L->vw > 1)
        row_vec_hoist(c);
    if (rows_share_warp(c, cached)) {
        /* Several rows share a warp: the warp runs while its first row
         * exists, so every lane reaches the same shuffles; a lane past the
         * last row reads the last row (indices stay in bounds), takes no
         * element (Rr = 0; the looped reduction body takes the last row's
         * again) and writes nothing. */
        emit_line(&c->w, "for (I row = (I)%s * rows_per_block + (I)%s;"
                     " row - (I)%s < nrows; row += (I)%s * rows_per_block) {",
             bx, rib, rc ? "(TPRC ? (threadIdx.x & 31) / TPR : 0)" : "((threadIdx.x & 31) / TPR)", gx);
        cu_open_scope(c);
        emit_line(&c->w, "const bool rowok = row < nrows;");
        emit_line(&c->w, "const I rowc = rowok ? row : nrows - 1;");
        if (cached)
            emit_line(&c->w, "const I Rr = rowok ? R : (I)0;");
        cu_decompose(c, "rowc", 0);
    } else {
        emit_line(&c->w, "for (I row = (I)%s * rows_per_block + (I)%s; row < nrows;"
                     " row += (I)%s * rows_per_block) {",
             bx, rib, gx);
        cu_open_scope(c);
        cu_decompose(c, "row", 0);
    }
    if (!cached && c->loopwin)
        row_shift(c);
    if (cached)
        row_cache_load(c);
    row_rounds(c, cached);
    cu_close_scope(c);
    if (cached && c->cluster)
        emit_line(&c->w, "fz_cluster_end<CL>(clp); /* a block that reduced no row */");
    if (colp)
        row_colp_states(c, 1);
    c->hoistvb = 0;
    cu_close_scope(c);
    for (int i = 0; i < k->nvalues; i++)
        c->reduced_val[i] = NULL;
    c->xc_e = NULL;
    buf_free(&nr);
    buf_free(&rr);
    buf_free(&ps);
}

/* The register-cached row body.  2-byte floats in its row cache are held
 * as stored, two to a word, unless the last round stores a computed value
 * over them (row_cache_rewrite, which needs the compute type): a first
 * emission, dropped, tells which.  Packed, the windowed bf16 log-softmax
 * up to 8192 takes 62 registers instead of 79. */
void cu_emit_cached_row_body(KCtx *c)
{
    if (cu_row_cache_narrow(c)) {
        Buf scratch = {0};
        Buf *out = c->w.out;
        const int tmp = c->tmp;
        c->w.out = &scratch;
        c->xc_rewrote = 0;
        cu_emit_row_body(c, 1);
        c->w.out = out;
        c->tmp = tmp;
        buf_free(&scratch);
        c->xc_pack = !c->xc_rewrote;
    }
    cu_emit_row_body(c, 1);
    c->xc_pack = 0;
}
