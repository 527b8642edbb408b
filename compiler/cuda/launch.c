/* cuda/launch.c -- the launch stubs (host code, valid C11 and CUDA C++): per
 * kernel its scratch sizes and the launch that picks a variant and its
 * grid. */
#include "cuda_priv.h"

/* ------------------------------------------------------------------ */
/* Launch stubs (host code, valid C11 and CUDA C++).                   */

/* host: group sizes and their magic numbers (used by int32 variants) */
static void host_group_sizes(KCtx *c, Buf *b)
{
    for (int g = 0; g < c->ng; g++) {
        Buf s = {0};
        cu_span_host(c, c->gfirst[g], c->glast[g], &s);
        buf_printf(b, "    const int64_t gs%d = %s;\n", g, s.data);
        buf_printf(b, "    unsigned m%d, s%d;\n", g, g);
        buf_printf(b, "    fzk_magic(gs%d, &m%d, &s%d);\n", g, g, g);
        buf_free(&s);
    }
}

/* host: the same product in int64_t */
static void host_product(const KCtx *c, int red, Buf *b) { cu_product_of(c, red, "(int64_t)1", b); }

/* host: one FUSEC_LAUNCH of a 1-D grid */
static void host_launch(Buf *b, const char *indent, int kidx, const Variant *v, const char *grid,
                        const char *block)
{
    buf_printf(b, "%sreturn FUSEC_LAUNCH(%d, %s, %s, 1, 1, %s, 1, 1, 0, stream, %s);\n", indent, kidx, v->name,
               grid, block, is_wloop(v) ? "wargs" : "args");
}

/* Three sizes as host expressions, each the product of its groups: names[0]
 * of groups [0, e1), names[1] of [e1, e2), names[2] of [e2, ng). */
static void host_segment_sizes(KCtx *c, const char *const names[3], int e1, int e2, Buf *b)
{
    for (int seg = 0; seg < 3; seg++) {
        int lo = seg == 0 ? 0 : seg == 1 ? e1 : e2, hi = seg == 0 ? e1 : seg == 1 ? e2 : c->ng;
        buf_printf(b, "    const int64_t %s = (int64_t)1", names[seg]);
        for (int g = lo; g < hi; g++) {
            Buf s = {0};
            cu_span_host(c, c->gfirst[g], c->glast[g], &s);
            buf_printf(b, " * %s", s.data);
            buf_free(&s);
        }
        buf_puts(b, ";\n");
    }
}

/* nO, R, nI of the column scheme as host expressions */
static void host_cols_sizes(KCtx *c, Buf *b)
{
    int oe = 0, re = 0;
    cu_cols_split(c, &oe, &re);
    static const char *const nm[3] = {"nO", "R", "nI"};
    host_segment_sizes(c, nm, oe, re, b);
}

/* nO, nK, nI of the middle-axes scheme (outer reduced, kept, inner
 * reduced) as host expressions */
static void host_mid_sizes(KCtx *c, Buf *b)
{
    static const char *const nm[3] = {"nO", "nK", "nI"};
    host_segment_sizes(c, nm, 1, c->ng - 1, b);
}

/* Launcher: `int rvec<i>` says whether variant i's 16-byte row accesses
 * hold: rows of whole vw-element vectors, every row-shaped and per-column
 * input and every vector-stored output aligned. */
static void host_row_vec_check(KCtx *c, Buf *b, int i, int vw)
{
    buf_printf(b, "    int rvec%d = rlen %% %d == 0;\n", i, vw);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]) || cu_acc_rowvec(c, &c->acc[a], vw))
            buf_printf(b, "    rvec%d = rvec%d && (uintptr_t)in%d %% %d == 0;\n", i, i, c->inbuf[c->acc[a].node->id],
                       vw * dtype_size(MDT(c, c->acc[a].node)));
    for (int o = 0; o < c->k->noutputs; o++)
        if (cu_out_is_elem(c, o))
            buf_printf(b, "    rvec%d = rvec%d && (uintptr_t)out%d %% %d == 0;\n", i, i, o,
                       vw * dtype_size(MDT(c, c->k->outputs[o])));
}

/* Windowed row variants: every row-shaped pointer at the same element
 * offset modulo the vector vw, so one shift serves them all (but those
 * apart, read an element at a time: cu_row_win_apart).  Prints rsh and
 * rwin the first time a launcher asks (*done). */
static void host_row_window_check(KCtx *c, Buf *b, int vw, int *done)
{
    if (*done)
        return;
    *done = 1;
    int first = 1, nshaped = 0;
    for (int a = 0; a < c->nacc + c->k->noutputs; a++) {
        Access x;
        char p[32];
        if (!cu_row_shaped(c, a, &x, p, sizeof p) || cu_row_win_apart(c, a))
            continue;
        int sz = dtype_size(MDT(c, x.node));
        if (first)
            buf_printf(b, "    const uintptr_t rsh = (uintptr_t)%s / %d %% %d;\n"
                          "    int rwin = (uintptr_t)%s %% %d == 0;\n", p, sz, vw, p, sz);
        else
            buf_printf(b, "    rwin = rwin && (uintptr_t)%s %% %d == 0 && (uintptr_t)%s / %d %% %d == rsh;\n", p,
                       sz, p, sz, vw);
        first = 0;
        nshaped++;
    }
    if (nshaped == 1)
        buf_puts(b, "    (void)rsh; /* one row-shaped pointer: nothing to compare */\n");
}

/* The grid of the windowed looped kernels: a block a row, at most 32 a
 * multiprocessor (the blocks loop over the rest) */
static void host_row_wloop_grid(Buf *b, const char *in)
{
    buf_printf(b, "%sblocks = nrows;\n%sif (blocks > (int64_t)sm_count * 32)\n%s    blocks = (int64_t)sm_count * 32;\n",
               in, in, in);
}

/* Which block the windowed looped kernel with int indices v[wi] (_blockw,
 * a row a block of the launch's width) takes: 1024 threads where a
 * multiprocessor holds two such blocks (the registers ptxas gave the
 * kernel, asked at launch) and the row gives each thread of 1024 at least
 * FZK_ROW_WLOOP_VECS (4) of its vectors a pass (rows of 4 x 1024
 * vectors: 32768 bf16 elements, 16384 f32), else 512.  The block's
 * barriers and reductions cost the same at any row length; a shorter row
 * leaves each thread too few reads to cover them, and half the block
 * pays half.  Sets wbs, wb1 and wb2 (the blocks a multiprocessor holds at
 * each width; 0: not asked, or the runtime cannot say). */
static void host_row_wloop_choose(Buf *b, const Variant *v, int wi, int base, const char *in)
{
    buf_printf(b, "%sfusert_status wst = FZK_BLOCKS_PER_SM(%d, %s, 1024, &wb1);\n", in, base + wi, v[wi].name);
    buf_printf(b, "%sif (wst != FUSERT_SUCCESS)\n%s    return wst;\n%swbs = 1024;\n", in, in, in);
    buf_printf(b, "%sif (wb1 < 2 || FZK_ROW_WLOOP_SHORT(rlen, %d)) {\n", in, v[wi].vw);
    buf_printf(b, "%s    wst = FZK_BLOCKS_PER_SM(%d, %s, 512, &wb2);\n", in, base + wi, v[wi].name);
    buf_printf(b, "%s    if (wst != FUSERT_SUCCESS)\n%s        return wst;\n%s    wbs = 512;\n%s}\n", in, in, in, in);
}

/* The windowed looped kernel with int indices before the shared-memory
 * variants, v[i] (its block from host_row_wloop_choose), taken where the
 * rows in flight fit the device's L2 (each row is read once per reduction
 * round and once more to write): the block chosen, else one of 1024 where
 * those fit.  Rows in flight = blocks a multiprocessor x multiprocessors,
 * at most the row count; blocks of 1024 keep fewer of them than 512 do
 * (two against two or three a multiprocessor), so they fit L2 to longer
 * rows.  Rows past L2 take shared memory where it holds them, else
 * host_row_wloop_rest.  The queries are skipped when the rows of one block
 * a multiprocessor do not fit (in the nvrtc target each compiles its
 * kernel).  Each launch passes wrev from the rows in flight of the block
 * it takes (fzk_row_rev). */
static void host_row_wloop_fit(KCtx *c, Buf *b, const Variant *v, int i, int base)
{
    buf_printf(b, "    const int64_t wrow = rlen * %d; /* bytes a row reads */\n", cu_row_read_bytes(c));
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
    host_launch(b, "                ", base + i, &v[i], "(unsigned)blocks", "512");
    buf_puts(b, "            }\n            if (wr1 <= (int64_t)l2) {\n"
                "                wrev = fzk_row_rev(wr1, l2);\n");
    host_launch(b, "                ", base + i, &v[i], "(unsigned)blocks", "1024");
    buf_puts(b, "            }\n        }\n    }\n");
}

/* After the shared-memory variants: the windowed looped kernel with int
 * indices (v[wi], its block from host_row_wloop_choose unless
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
    host_launch(b, "        ", base + wi, &v[wi], "(unsigned)blocks", "512");
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

/* The scratch of a kernel: NAME_scratch_bytes, and for reduce kernels
 * NAME_scratch_zero_bytes. */
static void launch_scratch(KCtx *c, Buf *b)
{
    const Kernel *k = c->k;
    int scalar = k->kind == KK_REDUCE && k->layout == RL_SCALAR;
    int nreds = cu_ncol_reds(c); /* the side reductions keep partials of their own */
    int cols = cu_is_cols_scheme(c);
    buf_printf(b, "\n/* launch %s */\n", k->name);
    buf_printf(b, "static size_t %s_scratch_bytes(const int64_t *dims)\n{\n    (void)dims;\n", k->name);
    if (scalar && c->atomic)
        buf_printf(b, "    return %d + %d; /* ticket counter, then one atomic accumulator per reduction */\n",
                   SCALAR_HEAD, nreds * 8);
    else if (scalar)
        buf_printf(b, "    return %d + (size_t)%d * %d; /* ticket counter, then partials */\n", SCALAR_HEAD,
                   nreds * SCALAR_SLOT, SCALAR_MAX_BLOCKS);
    else if (cols && c->atomic) {
        host_cols_sizes(c, b);
        if (k->side_axes) {
            cu_host_side_bytes(c, b);
            buf_puts(b, "    /* tile counters, per reduction one atomic accumulator per column, then the\n"
                        "     * side reductions' row partials */\n"
                        "    return (size_t)rpe;\n");
        } else
            buf_printf(b, "    (void)R;\n"
                          "    /* tile counters, then per reduction one atomic accumulator per column */\n"
                          "    return (size_t)(fzk_cols_cnt_bytes(nO, nI) + (int64_t)%d * nO * nI);\n",
                       nreds * 8);
    } else if (cols) {
        /* the partials of the most splits any launch of these sizes makes:
         * none where one block takes the whole reduced range */
        host_cols_sizes(c, b);
        if (k->side_axes)
            cu_host_side_bytes(c, b);
        buf_printf(b, "    /* tile counters, %sthen per reduction the partials of the most splits */\n"
                      "    const int64_t ns = fzk_cols_nsplit(nO, R, nI, (nI + %d) / %d, FZK_MAX_SMS, FZK_COLS_BPS_MAX);\n"
                      "    return (size_t)(%s + (ns > 1 ? (int64_t)%d * ns * nO * nI : 0));\n",
                   k->side_axes ? "the side reductions' row partials, " : "", 32 * c->L->vw - 1, 32 * c->L->vw,
                   k->side_axes ? "rpe" : "fzk_cols_cnt_bytes(nO, nI)", nreds * cu_cols_slot(c));
    } else if (c->L->mid) {
        host_mid_sizes(c, b);
        if (c->atomic)
            buf_printf(b, "    (void)nO;\n"
                          "    (void)nI;\n"
                          "    /* output counters, then per reduction one atomic accumulator per output */\n"
                          "    return (size_t)(fzk_mid_cnt_bytes(nK) + (int64_t)%d * nK);\n", nreds * 8);
        else
            /* the partials of the most splits any launch of these sizes makes */
            buf_printf(b, "    /* output counters, then per reduction the partials of the most splits */\n"
                          "    const int64_t ns = fzk_mid_nsplit(nK, nO * nI, FZK_MAX_SMS);\n"
                          "    return (size_t)(fzk_mid_cnt_bytes(nK) + (ns > 1 ? (int64_t)%d * ns * nK : 0));\n",
                       nreds * cu_cols_slot(c));
    } else if (c->L->colp >= 0) {
        /* the column partials: at most fzk_colp_grid's rows of rlen states
         * a column reduction, 256-byte aligned one after the other, for
         * rows a cs variant holds */
        int most = 0;
        for (int i = 0; i < c->L->nv; i++)
            if (c->L->v[i].cs) {
                int t = (c->L->v[i].tpr ? c->L->v[i].tpr : c->L->v[i].bs) * c->L->v[i].cap;
                most = t > most ? t : most;
            }
        Buf r = {0}, n = {0};
        buf_puts(&r, "(int64_t)1");
        buf_puts(&n, "(int64_t)1");
        for (int g = 0; g < c->ng; g++) {
            Buf *to = c->gred[g] ? &r : &n;
            buf_puts(to, " * ");
            cu_span_host(c, c->gfirst[g], c->glast[g], to);
        }
        buf_printf(b, "    const int64_t rlen = %s;\n", r.data);
        buf_printf(b, "    const int64_t nrows = %s; /* a block a row at most */\n", n.data);
        buf_free(&r);
        buf_free(&n);
        buf_printf(b, "    if (rlen > %d)\n        return 0;\n", most);
        buf_puts(b, "    const int64_t np = fzk_colp_grid(nrows, nrows, rlen, 1, (int)FZK_COLP_STATES, 1);\n");
        buf_puts(b, "    size_t at = 0;\n");
        const KCtx *cc = &c->L->colan;
        for (int i = 0; i < cc->k->nvalues; i++)
            if (cu_is_side_red(cc, cc->k->values[i]))
                buf_printf(b, "    at += ((size_t)np * (size_t)rlen * %d + 255) / 256 * 256;\n",
                           cu_red_state_bytes(cc->k->values[i]));
        buf_puts(b, "    return at;\n");
    } else
        buf_puts(b, "    return 0;\n");
    buf_puts(b, "}\n");
    /* What must be all zero when the kernel starts: the counters, which the
     * last block of each tile leaves at zero again, and the atomic
     * accumulators (with --atomic-reduce that is the whole scratch);
     * partials are written before they are read. */
    if (k->kind == KK_REDUCE) { /* NAME_run asks the reduce kernels only */
        buf_printf(b, "static size_t %s_scratch_zero_bytes(const int64_t *dims)\n{\n    (void)dims;\n", k->name);
        if (cols && c->atomic && k->side_axes) {
            host_cols_sizes(c, b);
            buf_printf(b, "    (void)R;\n    return (size_t)(fzk_cols_cnt_bytes(nO, nI) + (int64_t)%d * nO * nI);\n",
                       nreds * 8);
        } else if ((scalar || cols) && c->atomic)
            buf_printf(b, "    return %s_scratch_bytes(dims);\n", k->name);
        else if (scalar)
            buf_printf(b, "    return %d;\n", SCALAR_HEAD);
        else if (cols) {
            host_cols_sizes(c, b);
            buf_puts(b, "    (void)R;\n    return (size_t)fzk_cols_cnt_bytes(nO, nI);\n");
        } else if (c->L->mid && c->atomic)
            buf_printf(b, "    return %s_scratch_bytes(dims);\n", k->name);
        else if (c->L->mid) {
            host_mid_sizes(c, b);
            buf_puts(b, "    (void)nO;\n    (void)nI;\n    return (size_t)fzk_mid_cnt_bytes(nK);\n");
        } else
            buf_puts(b, "    return 0;\n");
        buf_puts(b, "}\n");
    }
}

/* Loop kernels: the vector variants where pointers and rows allow, one
 * pass over the whole array, int32 indices where they fit. */
static void launch_loop(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    Buf n = {0};
    int V = c->L->vw;
    host_product(c, -1, &n);
    buf_printf(b, "    const int64_t n = %s;\n", n.data);
    buf_puts(b, "    if (n == 0)\n        return FUSERT_SUCCESS;\n");
    if (V > 1) {
        buf_printf(b, "    int vec = 1; /* 16-byte accesses need aligned pointers%s */\n",
                   c->ng > 1 ? " and whole vectors per row" : "");
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_full(c, &c->acc[a]))
                buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                           V * dtype_size(MDT(c, c->acc[a].node)));
        for (int i = 0; i < k->noutputs; i++) {
            Access a = {k->outputs[i], {0}};
            cu_out_map(c, k->outputs[i], a.map);
            if (cu_acc_full(c, &a))
                buf_printf(b, "    vec = vec && (uintptr_t)out%d %% %d == 0;\n", i,
                           V * dtype_size(MDT(c, k->outputs[i])));
        }
        if (c->L->wrap) {
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
     * little arithmetic a byte (cu_loop_light).  The int32 bound is the
     * largest index the body forms: below n plus twice the grid's
     * elements, or with one vector a thread twice the grid's elements */
    const int light = cu_loop_light(c);
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
    buf_free(&n);
}

/* One pair of column variants over `tiles` blocks: the 16-byte one (of
 * two) where `vec` holds, else the element-wise one. */
#define COLS_LAUNCH "%sFUSEC_LAUNCH(%d, %s, (unsigned)%s, (unsigned)grid_y, (unsigned)ns, 256, 1, 1, 0, " \
                    "stream, args);\n"
static void launch_cols_pair(const Variant *v, int n, int base, const char *ind, const char *to, const char *vec,
                             const char *tiles, Buf *b)
{
    if (n > 1)
        buf_printf(b, "%s    if (%s)\n%s        " COLS_LAUNCH "%s    else\n", ind, vec, ind, to, base, v[0].name, tiles,
                   ind);
    buf_printf(b, "%s    %s" COLS_LAUNCH, ind, n > 1 ? "    " : "", to, base + n - 1, v[n - 1].name, tiles);
}

/* Blocks a multiprocessor that the split of column variant v counts in a
 * wave (fzk_cols_nsplit): four, or the minimum its launch bounds state
 * where that is more (plan_cols) */
static int cols_split_bps(const Variant *v)
{
    return v->mb > COLS_WAVE_BPS ? v->mb : COLS_WAVE_BPS;
}

/* `int var`: are the columns whole vectors of vw, every full access
 * aligned to them, and enough of them to keep a warp's lanes busy?  A
 * vector tile gives its 32 lanes 32 vw columns: with fewer, lanes idle
 * while the others load and fold.  A lane's vector costs a load and vw
 * folds, an element-wise lane's element a load and a fold, so the vector
 * tile pays from 16 (vw + 1) columns on (a warp holding nI / vw vectors
 * against the 32 elements of element-wise tiles). */
static void host_cols_vec(KCtx *c, Buf *b, const char *ind, const char *var, int vw)
{
    buf_printf(b, "%sint %s = nI %% %d == 0 && nI >= %d;\n", ind, var, vw, 16 * (vw + 1));
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_full(c, &c->acc[a]))
            buf_printf(b, "%s%s = %s && (uintptr_t)in%d %% %d == 0;\n", ind, var, var, c->inbuf[c->acc[a].node->id],
                       vw * dtype_size(MDT(c, c->acc[a].node)));
}

/* Column reductions: tiles of 32 columns (32 vectors when aligned), a
 * warp a tile or 8 (fzk_cols_ws), the reduced range split over
 * blockIdx.z. */
static void launch_cols(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    host_cols_sizes(c, b);
    int side = k->side_axes != 0;
    /* with side reductions, rows without columns still have results (a
     * sum's 0, a product's 1): the second launch alone writes them */
    if (side)
        buf_printf(b, "    if (nO == 0)\n        return FUSERT_SUCCESS;\n"
                      "    if (nI > 0 && (!scratch || !zscratch))\n"
                      "        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, \"%s: no scratch buffer\");\n",
                   k->name);
    else
        buf_printf(b, "    if (nO == 0 || nI == 0)\n        return FUSERT_SUCCESS;\n"
                      "    if (!scratch || !zscratch)\n        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "
                      "\"%s: no scratch buffer\");\n", k->name);
    int vw = v[0].vw;
    if (vw > 1) {
        host_cols_vec(c, b, "    ", "vec", vw);
        buf_printf(b, "    const int64_t tiles_w = (nI + (vec ? %d : 32) - 1) / (vec ? %d : 32);\n", 32 * vw, 32 * vw);
    } else
        buf_puts(b, "    const int64_t tiles_w = (nI + 31) / 32;\n");
    /* the split tiles' wave: the blocks a multiprocessor keeps of the
     * variant taken (cols_split_bps) */
    int bpv = cols_split_bps(&v[0]), bps = cols_split_bps(&v[vw > 1 ? 1 : 0]);
    /* _cols_n, last but for _rows: element-wise tiles over at most
     * COLS_NARROW_MAX columns, a warp's lanes on several rows */
    int nr = !side && v[nv - 1].nr;
    char bpe[64];
    if (nr && cols_split_bps(&v[nv - 1]) != bps)
        snprintf(bpe, sizeof bpe, "nI <= %d ? %d : %d", COLS_NARROW_MAX, cols_split_bps(&v[nv - 1]), bps);
    else
        snprintf(bpe, sizeof bpe, "%d", bps);
    buf_puts(b, "    const int ws = fzk_cols_ws(nO, R, tiles_w, sm_count);\n"
                "    const int64_t tiles_x = ws == 1 ? (tiles_w + 7) / 8 : tiles_w;\n"
                "    const int64_t grid_y = nO < 65535 ? nO : 65535;\n");
    if (vw > 1 && bpv != bps)
        buf_printf(b, "    const int64_t ns = ws == 1 ? 1 : fzk_cols_nsplit(nO, R, nI, tiles_x, sm_count, vec ? %d : %s);\n",
                   bpv, bpe);
    else
        buf_printf(b, "    const int64_t ns = ws == 1 ? 1 : fzk_cols_nsplit(nO, R, nI, tiles_x, sm_count, %s);\n", bpe);
    buf_puts(b, "    nsplit = (int)ns;\n");
    /* v: [_cols_v,] _cols (8 warps a tile), then [_cols_v1,] _cols1 (a warp
     * a tile, no split): the same pair for each; then _cols_n (no side
     * reductions) or _rows, the side reductions' second launch, over the
     * rows with the tiles' count */
    int h = (nv - side - nr) / 2;
    const char *to = side ? "st = " : "return ";
    if (side)
        buf_puts(b, "    fusert_status st = FUSERT_SUCCESS;\n");
    buf_puts(b, side ? "    if (nI > 0 && ws == 1) {\n" : "    if (ws == 1) {\n");
    if (h > 1 && v[h].vw != vw) {
        /* a warp a tile reads wider vectors than split tiles do: its own
         * alignment test and tiles */
        host_cols_vec(c, b, "        ", "vec1", v[h].vw);
        buf_printf(b, "        const int64_t tiles_x1 = ((nI + (vec1 ? %d : 32) - 1) / (vec1 ? %d : 32) + 7) / 8;\n",
                   32 * v[h].vw, 32 * v[h].vw);
        launch_cols_pair(v + h, h, base + h, "    ", to, "vec1", "tiles_x1", b);
    } else
        launch_cols_pair(v + h, h, base + h, "    ", to, "vec", "tiles_x", b);
    buf_puts(b, side ? "    } else if (nI > 0) {\n" : "    }\n");
    if (nr)
        buf_printf(b, "    if (nI <= %d)\n" COLS_LAUNCH, COLS_NARROW_MAX, "        return ", base + nv - 1, v[nv - 1].name,
                   "tiles_x");
    launch_cols_pair(v, h, base, side ? "    " : "", to, "vec", "tiles_x", b);
    if (!side)
        return;
    buf_printf(b, "    }\n"
                  "    if (st != FUSERT_SUCCESS || R == 0)\n        return st; /* no rows: nothing to add */\n"
                  "    nsplit = (int)tiles_w; /* the row partials a row adds */\n"
                  "    int64_t rblocks = (R * fzk_rows_lanes(tiles_w) + 255) / 256;\n"
                  "    if (rblocks > (int64_t)sm_count * 8)\n        rblocks = (int64_t)sm_count * 8;\n"
                  "    return FUSEC_LAUNCH(%d, %s, (unsigned)rblocks, 1, 1, 256, 1, 1, 0, stream, args);\n",
               base + nv - 1, v[nv - 1].name);
}

#undef COLS_LAUNCH

/* Middle-axes reductions: a warp an output for many outputs of short
 * reduced ranges (as the row scheme), else a block an output and split
 * (fzk_mid_nsplit), with 16-byte loads where the inner rows are whole
 * aligned vectors. */
static void launch_mid(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    host_mid_sizes(c, b);
    buf_puts(b, "    const int64_t rlen = nO * nI; /* elements an output reduces */\n"
                "    if (nK == 0)\n        return FUSERT_SUCCESS;\n");
    buf_printf(b, "    if (!scratch || !zscratch)\n        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, "
                  "\"%s: no scratch buffer\");\n", k->name);
    /* v[0]: _warp, the row scheme's rule and grid (launch_rows) */
    buf_puts(b, "    const int big = nK * rlen + (int64_t)sm_count * 8192 >= (int64_t)2147483647"
                " || nK >= (int64_t)2147483647 / 4;\n");
    buf_puts(b, "    if (!big && rlen <= 1024 && nK >= (int64_t)sm_count * 8) {\n"
                "        int64_t blocks = (nK + 3) / 4;\n"
                "        if (blocks > (int64_t)sm_count * 256)\n            blocks = (int64_t)sm_count * 256;\n");
    host_launch(b, "        ", base, &v[0], "(unsigned)blocks", "128");
    buf_puts(b, "    }\n");
    buf_puts(b, "    const int64_t ns = fzk_mid_nsplit(nK, rlen, sm_count);\n"
                "    nsplit = (int)ns;\n"
                "    const int64_t gx = nK < (int64_t)2147483647 ? nK : (int64_t)2147483647;\n");
    int vw = v[1].vw;
    if (nv > 2) {
        buf_printf(b, "    int vec = nI %% %d == 0;\n", vw);
        for (int a = 0; a < c->nacc; a++)
            if (cu_acc_full(c, &c->acc[a]))
                buf_printf(b, "    vec = vec && (uintptr_t)in%d %% %d == 0;\n", c->inbuf[c->acc[a].node->id],
                           vw * dtype_size(MDT(c, c->acc[a].node)));
        buf_puts(b, "    if (vec)\n    ");
        buf_printf(b, "    return FUSEC_LAUNCH(%d, %s, (unsigned)gx, (unsigned)ns, 1, 256, 1, 1, 0, stream, args);\n",
                   base + 1, v[1].name);
    }
    buf_printf(b, "    return FUSEC_LAUNCH(%d, %s, (unsigned)gx, (unsigned)ns, 1, 256, 1, 1, 0, stream, args);\n",
               base + nv - 1, v[nv - 1].name);
}

/* Full reductions: a chunk a block, the vector variant on aligned inputs. */
static void launch_scalar(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    Buf n = {0};
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
            if (cu_acc_full(c, &c->acc[a]))
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
    buf_free(&n);
}

/* A row held in dynamic shared memory (the _rsm variants): CAP elements a
 * thread (as the kernel computes it), when the device lets a block have
 * them beside its static shared memory.  Blocks of 512 threads where two
 * rows fit a multiprocessor's shared memory, else of 1024: one block
 * loads while the other reduces and writes. */
static void launch_row_smem(KCtx *c, const Variant *v, int i, int base, const char *cond, int ebytes, Buf *b)
{
    char ok[32];
    if (v[i].sh)
        snprintf(ok, sizeof ok, "rwin");
    else {
        host_row_vec_check(c, b, i, v[i].vw);
        snprintf(ok, sizeof ok, "rvec%d", i);
    }
    /* smb<i>_<bs>: smem_row_bytes over the call's rlen; per: the blocks a
     * multiprocessor holds at that width (two of 512, one of 1024) */
    const int bss[2] = {v[i].bs / 2, v[i].bs};
    for (int w = 0; w < 2; w++) {
        int span = bss[w] * v[i].vw;
        buf_printf(b, "    const int64_t smb%d_%d = (rlen + %d) / %d * %d;\n", i, bss[w],
                   v[i].sh * (v[i].vw - 1) + span - 1, span, span * cu_smem_elem_bytes(c));
    }
    /* the device is asked only where some width could fit its largest
     * opt-in limit */
    buf_printf(b, "    if (%s%s && (2 * (smb%d_%d + %d) <= %d || smb%d_%d + %d <= %d)) {\n", cond, ok, i, bss[0],
               SMEM_ROW_STATIC, SMEM_ROW_MAX_OPTIN, i, bss[1], SMEM_ROW_STATIC, SMEM_ROW_MAX_OPTIN);
    buf_puts(b, "        int smo = 0;\n"
                "        const fusert_status sst = FUSEC_SMEM_OPTIN(&smo);\n"
                "        if (sst != FUSERT_SUCCESS)\n"
                "            return sst;\n");
    for (int w = 0; w < 2; w++) {
        buf_printf(b, w ? "        if (smb%d_%d + %d <= smo && smb%d_%d <= (int64_t)(FZK_ROW_SMEM_MAX)) {\n"
                        : "        if (2 * (smb%d_%d + %d) <= smo && smb%d_%d <= (int64_t)(FZK_ROW_SMEM_MAX)) {\n",
                   i, bss[w], SMEM_ROW_STATIC, i, bss[w]);
        buf_printf(b, "            blocks = fzk_row_grid(nrows, rlen * %d, %d, sm_count, 1);\n", ebytes, bss[w]);
        buf_printf(b, "            return FUSEC_LAUNCH(%d, %s, (unsigned)blocks, 1, 1, %d, 1, 1, smb%d_%d, "
                      "stream, args);\n", base + i, v[i].name, bss[w], i, bss[w]);
        buf_puts(b, "        }\n");
    }
    buf_puts(b, "    }\n");
}
/* The rows a block of register variant v takes at once */
static int rpb_of(const Variant *v)
{
    return v->tpr ? v->bs / v->tpr : 1;
}

/* Row kernels: the first variant whose row shape and alignment hold, in
 * plan order: on-chip, warp a row, windowed looped, block a row. */
static void launch_rows(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    Buf n = {0};
    Buf r = {0};
    host_product(c, 0, &n);
    host_product(c, 1, &r);
    buf_printf(b, "    const int64_t nrows = %s;\n", n.data);
    buf_printf(b, "    const int64_t rlen = %s; /* elements per row */\n", r.data);
    buf_puts(b, "    if (nrows == 0)\n        return FUSERT_SUCCESS;\n");
    buf_puts(b, "    const int big = nrows * rlen + (int64_t)sm_count * 8192 >= (int64_t)2147483647"
                " || nrows >= (int64_t)2147483647 / 4;\n    (void)big;\n");
    buf_puts(b, "    int64_t blocks;\n");
    const int ebytes = cu_row_elem_bytes(c);
    /* on-chip variants first, then warp per row, then block per row */
    int win_checked = 0;
    int wi = -1; /* the index of _blockw (host_row_wloop_fit) */
    for (int i = 0; i < nv; i++) {
        const char *cond = v[i].i64 ? "" : "!big && ";
        if (v[i].kind == VK_ROW_C) {
            /* tpr 0: a row a block, of at most bs threads (the width set below) */
            const int maxt = v[i].tpr ? v[i].tpr : v[i].bs;
            int rpb = rpb_of(&v[i]);
            if (v[i].sh)
                host_row_window_check(c, b, v[i].vw, &win_checked);
            if (v[i].sm) {
                launch_row_smem(c, v, i, base, cond, ebytes, b);
                continue;
            }
            if (v[i].sh) {
                /* the row plus its shift fits */
                buf_printf(b, "    if (%srwin && rlen + %d <= %d) {\n", cond, v[i].vw - 1, maxt * v[i].cap);
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
                buf_printf(b, "    if (%srvec%d && rlen <= %d) {\n", cond, i, maxt * v[i].cap);
            } else
                buf_printf(b, "    if (%srlen <= %d) {\n", cond, maxt * v[i].cap);
            if (v[i].cl == 1)
                buf_printf(b, "        blocks = (nrows + %d) / %d;\n", rpb - 1, rpb);
        } else if (v[i].tpr > 0 && v[i].tpr < 32 && v[i].sh) {
            /* tpr lanes a row (a reduction's rows of at most
             * RED_SUB_ROW_BYTES, windowed vectors): where a lane's share
             * of the row is at most RED_SUB_BYTES_PER_STATE times the
             * states' bytes, and rows enough for 8 warps a multiprocessor */
            int sb = 0;
            for (int q = 0; q < c->k->nvalues; q++)
                if (op_info[c->k->values[q]->op].cls == OPC_REDUCE)
                    sb += cu_red_state_bytes(c->k->values[q]);
            int64_t maxb = (int64_t)v[i].tpr * RED_SUB_BYTES_PER_STATE * sb;
            host_row_window_check(c, b, v[i].vw, &win_checked);
            buf_printf(b, "    if (%srwin && rlen * %d <= %d && nrows >= (int64_t)sm_count * %d) {\n", cond, ebytes,
                       (int)(maxb < RED_SUB_ROW_BYTES ? maxb : RED_SUB_ROW_BYTES), 8 * 32 / v[i].tpr);
            buf_printf(b, "        blocks = (nrows + %d) / %d;\n", rpb_of(&v[i]) - 1, rpb_of(&v[i]));
        } else if (v[i].tpr == 32) {
            /* a warp a row: rows enough for 8 warps a multiprocessor.
             * Windowed 16-byte loads up to FZK_RED_WARP_MAX (4096): on
             * the H200, logsumexp over 32768 rows of 2048 f32 takes 82
             * us a warp a row against 242 a block a row, row_stats
             * (five statistics) over 30011 rows of 1531 85 against 256 */
            if (v[i].sh) {
                host_row_window_check(c, b, v[i].vw, &win_checked);
                buf_printf(b, "    if (%srwin && rlen <= FZK_RED_WARP_MAX && nrows >= (int64_t)sm_count * 8) {\n",
                           cond);
            } else
                buf_printf(b, "    if (%srlen <= 1024 && nrows >= (int64_t)sm_count * 8) {\n", cond);
            buf_puts(b, "        blocks = (nrows + 3) / 4;\n");
        } else if (v[i].sh && c->k->kind == KK_REDUCE) {
            /* a reduction's block a row, windowed vectors: any row length
             * and offset that every row-shaped pointer shares */
            host_row_window_check(c, b, v[i].vw, &win_checked);
            buf_printf(b, "    if (%srwin) {\n", cond);
            host_row_wloop_grid(b, "        ");
            host_launch(b, "        ", base + i, &v[i], "(unsigned)blocks", "256");
            buf_puts(b, "    }\n");
            continue;
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
            if (c->k->kind == KK_REDUCE) {
                /* a reduction reads its row once: any row count (the
                 * blocks loop over the rows) */
                buf_printf(b, "    if (rvec%d) {\n", i);
                host_row_wloop_grid(b, "        ");
                host_launch(b, "        ", base + i, &v[i], "(unsigned)blocks", "256");
                buf_puts(b, "    }\n");
                continue;
            }
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
        char bs[16];
        snprintf(bs, sizeof bs, "%d", v[i].bs);
        if (v[i].kind == VK_ROW_C && !v[i].tpr) {
            /* the fewest warps whose CAP elements each hold the row (and
             * its shift, windowed) */
            buf_printf(b, "        const int tw = (int)((rlen + %d) / %d + 31) / 32 * 32;\n",
                       v[i].sh ? v[i].vw - 1 + v[i].cap - 1 : v[i].cap - 1, v[i].cap);
            snprintf(bs, sizeof bs, "tw");
        }
        if (v[i].kind == VK_ROW_C) {
            /* blocks holds groups of rows (one row for a cluster, else
             * the block's rows); the grid follows from their bytes */
            int gr = v[i].cl > 1 ? 1 : rpb_of(&v[i]);
            buf_printf(b, "        blocks = fzk_row_grid(blocks, rlen * %d, %s, sm_count, %d);\n", gr * ebytes,
                       bs, v[i].cl);
            if (v[i].cs) {
                /* one wave: the blocks the multiprocessors hold at once */
                buf_printf(b, "        int cres = 0;\n"
                              "        const fusert_status cst = FZK_BLOCKS_PER_SM(%d, %s, %s, &cres);\n"
                              "        if (cst != FUSERT_SUCCESS)\n            return cst;\n",
                           base + i, v[i].name, bs);
                /* windowed: the block's rows V apart share their shift */
                buf_printf(b, "        blocks = fzk_colp_grid(blocks, nrows, rlen, sm_count, cres, %d);\n",
                           v[i].sh ? v[i].vw : 1);
                buf_puts(b, "        *colp_np = (int)blocks; /* its partial rows */\n");
            }
        } else {
            /* a row reduction, a warp a row: at most 256 blocks a
             * multiprocessor, the grid these kernels are measured with
             * (fzk_row_grid is measured on the cached ones above) */
            buf_puts(b, "        if (blocks > (int64_t)sm_count * 256)\n            blocks = (int64_t)sm_count * 256;\n");
        }
        host_launch(b, "        ", base + i, &v[i], "(unsigned)blocks", bs);
        buf_puts(b, "    }\n");
    }
    buf_free(&r);
    buf_free(&n);
}
/* The stub of one kernel (emit.h): recompute the group sizes and magic
 * numbers from dims, pick the variant (alignment, row length, int32 range)
 * and the grid from sm_count, and launch through FUSEC_LAUNCH.  Every size
 * test is done here, on the host, once per call. */
static void emit_launcher(KCtx *c, const Variant *v, int nv, int base, Buf *b)
{
    const Kernel *k = c->k;
    int scalar = k->kind == KK_REDUCE && k->layout == RL_SCALAR;
    int cols = cu_is_cols_scheme(c);
    int mid = c->L->mid;
    const int colp = c->L->colp >= 0, colp_of = c->L->colp_of >= 0;
    launch_scratch(c, b);
    buf_printf(b,
               "static fusert_status %s_launch(void *const *bufs, const double *scalars, const int64_t *dims,\n"
               "        void *scratch, void *zscratch, int sm_count, fusert_stream stream%s)\n{\n",
               k->name, c->L->colp_sig ? ", int *colp_np" : c->L->colp_of_sig ? ", int colp_np, const void *colp_part" : "");
    if (c->L->colp_sig && !colp)
        buf_puts(b, "    *colp_np = 0; /* no variant leaves column partials */\n");
    if (c->L->colp_of_sig && !colp_of)
        buf_puts(b, "    (void)colp_np; /* the row kernel leaves no column partials */\n    (void)colp_part;\n");
    Buf decl = {0}, args = {0};
    cu_host_common_args(c, &decl, &args);
    buf_puts(b, decl.data);
    buf_puts(b, "    (void)bufs;\n    (void)scalars;\n    (void)dims;\n    (void)scratch;\n    (void)zscratch;\n");
    host_group_sizes(c, b);
    for (int g = 0; g < c->ng; g++)
        buf_printf(&args, ", (void *)&m%d, (void *)&s%d", g, g);
    if (colp) {
        /* the column partials of the cs variants go to the scratch; the
         * partial rows they leave go to the column kernel (0: none) */
        buf_puts(b, "    unsigned char *cpart = (unsigned char *)scratch;\n    *colp_np = 0;\n");
        buf_puts(&args, ", (void *)&cpart");
    }
    if (colp_of) {
        /* the row kernel left its column partials: combine them */
        const Variant *cv = &v[nv - 1];
        buf_puts(b, "    if (colp_np > 0) {\n");
        buf_puts(b, "        const unsigned char *cpart = (const unsigned char *)colp_part;\n");
        buf_puts(b, "        int np = colp_np;\n");
        buf_printf(b, "        void *cargs[] = {%s, (void *)&cpart, (void *)&np};\n", args.data);
        buf_puts(b, "        const int64_t ncol = (int64_t)1");
        int oe = 0, re = 0;
        cu_cols_split(c, &oe, &re);
        for (int g = re; g < c->ng; g++)
            buf_printf(b, " * gs%d", g);
        buf_puts(b, ";\n        if (ncol == 0)\n            return FUSERT_SUCCESS;\n");
        buf_printf(b, "        return FUSEC_LAUNCH(%d, %s, (unsigned)((ncol + %d) / %d), 1, 1, 256, 1, 1, 0, stream, cargs);\n",
                   base + nv - 1, cv->name, COLP_TILE - 1, COLP_TILE);
        buf_puts(b, "    }\n");
        nv--;
    }
    if (scalar || cols || mid) {
        buf_puts(b, "    unsigned char *scr = (unsigned char *)scratch;\n");
        buf_puts(b, "    unsigned char *zscr = (unsigned char *)zscratch;\n");
        buf_puts(&args, ", (void *)&scr, (void *)&zscr");
    }
    if (cols || mid) {
        buf_puts(b, "    int nsplit = 1;\n");
        buf_puts(&args, ", (void *)&nsplit");
    }
    buf_printf(b, "    void *args[] = {%s};\n", args.data);
    if (c->L->wloop)
        /* wrev: whether every second pass reads the row from its end
         * (fzk_row_rev, row_elem_loop_vec) */
        buf_printf(b, "    int wrev = 0;\n    void *wargs[] = {%s, (void *)&wrev};\n", args.data);
    buf_puts(b, "    if (sm_count < 1)\n        sm_count = 108;\n");
    if (k->kind == KK_LOOP)
        launch_loop(c, v, nv, base, b);
    else if (cols)
        launch_cols(c, v, nv, base, b);
    else if (mid)
        launch_mid(c, v, nv, base, b);
    else if (scalar)
        launch_scalar(c, v, nv, base, b);
    else
        launch_rows(c, v, nv, base, b);
    buf_puts(b, "}\n");
    buf_free(&decl);
    buf_free(&args);
}

/* The host helpers every module's stubs share: magic numbers, the row,
 * column and full-reduction grid rules and the macros a build may set.
 * The generated text states each rule; what chose it (H200):
 * - fzk_row_grid: a bound of 256 blocks a multiprocessor is slower, at
 *   262144 softmax rows of 1024 f32 each block takes 8 rows in turn and
 *   the last ones run on alone (523.3 us against 507.8 without it); a
 *   block a group for every length is slower for short rows (2^26
 *   elements: 333 f32 157.6 -> 167.6 us, 64 bf16 91.0 -> 98.9); 12288
 *   bytes a block whatever its size slows static rows of 1024 bf16 in
 *   blocks of 32 (68.0 -> 69.6 us).
 * - fzk_cols_nsplit: 96 columns in 64 blocks ran at 20% of copy, in 2048
 *   at 43%, in 512 at 69% (the last block's combine of 2048 partials a
 *   column cost more than the wider split won); [16384, 8192] took 137 us
 *   split 64 ways (4096 blocks, 3.9 waves), 134 us 16 ways and 130 us 8
 *   ways (512 blocks).  At most 256 outputs split into one wave, not 32
 *   blocks a multiprocessor cut at 512 splits (1.3 waves; H100, 2^26 f32,
 *   sums over 63 / 129 / 256 columns 147.1 / 148.6 / 128.3 -> 121.3 /
 *   119.2 / 113.6 us, mean and var 142.2 / 147.6 / 141.5 -> 114.3 / 110.5
 *   / 100.6; two waves fell between).
 * - fzk_cols_ws: a sum over 9 rows of 3140081 f32 columns took 53 us
 *   with a warp a tile against 239 with 8, over 16 rows of 4194304 80
 *   against 102; over 33 rows or more 8 warps were 2-10% faster. */
static void emit_launch_helpers(Buf *out, int any_mid, int any_colp)
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
             " * blocks of 64 threads); past that it grows with the rows, with no\n"
             " * bound of blocks a multiprocessor, so no last blocks run on alone.\n"
             " * FZK_ROW_GRID_MAX(sms) bounds the grid: 2^30 keeps gridDim.x in\n"
             " * range; a build may define it smaller to have blocks loop over more\n"
             " * rows, as tests do. */\n"
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
             "#define FZK_ROW_WLOOP_SHORT(rlen, V) 0\n"
             "#else\n"
             "#define FZK_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n)\n"
             "/* FZK_ROW_WLOOP_VECS: a row with fewer V-element vectors than this\n"
             " * many per thread of a block of 1024 takes the blocks of 512 */\n"
             "#ifndef FZK_ROW_WLOOP_VECS\n"
             "#define FZK_ROW_WLOOP_VECS 4\n"
             "#endif\n"
             "#define FZK_ROW_WLOOP_SHORT(rlen, V) ((rlen) < (int64_t)(FZK_ROW_WLOOP_VECS) * 1024 * (V))\n"
             "#endif\n");
    /* On the H200 (2^26 elements, every second pass backwards always /
     * never): f32 softmax at 16387 /
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
             "/* FZK_RED_WARP_MAX: the longest row a reduction over rows reads with a\n"
             " * warp a row when there are rows for 8 warps a multiprocessor (longer\n"
             " * rows, or fewer, take a block a row) */\n"
             "#ifndef FZK_RED_WARP_MAX\n"
             "#define FZK_RED_WARP_MAX 4096\n"
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
             "/* fzk_cols_nsplit: how many blocks a column reduction splits its\n"
             " * reduced range R over, for nO x nI kept outputs in tiles of columns:\n"
             " * one wave of about bps blocks per multiprocessor (those its launch\n"
             " * bounds let a multiprocessor keep; a second, partial wave left most\n"
             " * of the GPU idle); at most 64 splits, or for at most\n"
             " * 256 outputs up to 512 (2^18 partial states at most); and at least 64\n"
             " * rows a split: a wider split costs the last block more partials to\n"
             " * combine than it wins in parallel reads.  It grows with\n"
             " * sm_count and shrinks with tiles, so the scratch is sized with\n"
             " * FZK_MAX_SMS and the fewest tiles (the widest vector): it holds the\n"
             " * partials of any launch and nothing for a range one block reads. */\n"
             "#define FZK_MAX_SMS 1024\n"
             "#define FZK_COLS_BPS_MAX 6 /* the most blocks a wave counts a multiprocessor */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_cols_nsplit(int64_t nO, int64_t R, int64_t nI,\n"
             "                                                        int64_t tiles, int64_t sm_count, int bps)\n"
             "{\n"
             "    const int64_t n = nO * nI;\n"
             "    const int64_t blocks = tiles * (nO < 65535 ? nO : 65535);\n"
             "    if (blocks < 1)\n"
             "        return 1;\n"
             "    if (sm_count > FZK_MAX_SMS)\n"
             "        sm_count = FZK_MAX_SMS;\n"
             "    int64_t ns = sm_count * bps / blocks;\n"
             "    int64_t cap = 64;\n"
             "    if (n <= 256) {\n"
             "        cap = n > 0 ? ((int64_t)1 << 18) / n : 512;\n"
             "        cap = cap < 64 ? 64 : cap > 512 ? 512 : cap;\n"
             "    }\n"
             "    if (ns > cap)\n"
             "        ns = cap;\n"
             "    if (ns > R / 64)\n"
             "        ns = R / 64;\n"
             "    return ns < 1 ? 1 : ns;\n"
             "}\n"
             "/* fzk_cols_ws: how many of a block's 8 warps share a tile of 32\n"
             " * threads' columns (nO x tiles tiles), taking its rows in turn: 1\n"
             " * where 8 warps would get fewer than 4 of the R rows each and the\n"
             " * columns alone give each thread the GPU keeps resident (2048 a\n"
             " * multiprocessor) columns of its own, so that a thread reads all R\n"
             " * rows and nothing combines through shared memory; else 8, whose\n"
             " * shared rows keep more loads in flight. */\n"
             "static FUSEC_MAYBE_UNUSED inline int fzk_cols_ws(int64_t nO, int64_t R, int64_t tiles, int64_t sm_count)\n"
             "{\n"
             "    return R < 32 && nO * tiles * 32 >= sm_count * 2048 ? 1 : 8;\n"
             "}\n");
    /* the column partials' grid, in modules with a row kernel that leaves them */
    if (any_colp)
        buf_puts(out,
             "/* fzk_colp_grid: the grid of a row kernel that leaves column partials,\n"
             " * from its row grid n: one wave, the `resident` blocks a multiprocessor\n"
             " * holds at once (where the runtime cannot say, 0: blocks that keep\n"
             " * FZK_COLP_SM_STATES columns' states, or one row's), each taking rows\n"
             " * in turn; a block's partial row of each column reduction is written\n"
             " * once and read once more, so a launch keeps at most FZK_COLP_STATES.\n"
             " * Windowed rows (step V, else 1) take a multiple of V blocks, or\n"
             " * min(nrows, V), so the rows of a block, a grid apart, share their shift;\n"
             " * a row that keeps partials holds at most 1024 x 32 elements, so V <= 16\n"
             " * stays within FZK_COLP_STATES / rlen */\n"
             "#ifndef FZK_COLP_SM_STATES\n"
             "#define FZK_COLP_SM_STATES 8192\n"
             "#endif\n"
             "#ifndef FZK_COLP_STATES\n"
             "#define FZK_COLP_STATES 2097152\n"
             "#endif\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_colp_grid(int64_t n, int64_t nrows, int64_t rlen, int64_t sm_count, int resident, int step)\n"
             "{\n"
             "    const int64_t w = rlen < 1 ? 1 : rlen; /* rows of no element: no state */\n"
             "    const int64_t per = resident > 0 ? resident : w < FZK_COLP_SM_STATES ? FZK_COLP_SM_STATES / w : 1;\n"
             "    const int64_t most = w < FZK_COLP_STATES ? FZK_COLP_STATES / w : 1;\n"
             "    int64_t cap = (sm_count < 1 ? 1 : sm_count) * per;\n"
             "    if (cap > most)\n"
             "        cap = most;\n"
             "    int64_t g = n < cap ? n : cap;\n"
             "    if (step > 1 && g < nrows)\n"
             "        g = g < step ? (nrows < step ? nrows : step) : g / step * step;\n"
             "    return g;\n"
             "}\n");
    buf_puts(out,
             "/* fzk_rows_lanes: the lanes that add a row's nt partial states in the\n"
             " * second launch of a column reduction with row reductions beside it:\n"
             " * a power of two up to 32 with about 8 tiles a lane, past 256 tiles\n"
             " * the block's 256 threads (the kernel makes the same choice) */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_rows_lanes(int64_t nt)\n"
             "{\n"
             "    int64_t l = 1;\n"
             "    while (l < 32 && l * 8 < nt)\n"
             "        l *= 2;\n"
             "    return l == 32 && l * 8 < nt ? 256 : l;\n"
             "}\n"
             "/* fzk_cols_cnt_bytes: the tile counters at the start of a column\n"
             " * reduction's scratch, one per (outer index, tile of 32 columns), in\n"
             " * whole 256-byte pieces (the kernel's cnt_bytes, from its grid) */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_cols_cnt_bytes(int64_t nO, int64_t nI)\n"
             "{\n"
             "    return (nO * ((nI + 31) / 32) * 4 + 255) / 256 * 256;\n"
             "}\n");
    /* the middle-axes scheme's split, in modules that have one */
    if (any_mid)
        buf_puts(out,
             "/* fzk_mid_nsplit: how many blocks a middle-axes reduction splits each\n"
             " * of its nK outputs over (R elements each, blocks of 256 threads): at\n"
             " * least four blocks a multiprocessor in all, so that few outputs still\n"
             " * keep every multiprocessor's loads in flight, with at least 4096\n"
             " * elements (16 a thread) a split.  It grows with sm_count, so the\n"
             " * scratch is sized with FZK_MAX_SMS. */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_mid_nsplit(int64_t nK, int64_t R, int64_t sm_count)\n"
             "{\n"
             "    if (nK < 1)\n"
             "        return 1;\n"
             "    if (sm_count > FZK_MAX_SMS)\n"
             "        sm_count = FZK_MAX_SMS;\n"
             "    int64_t ns = (sm_count * 4 + nK - 1) / nK;\n"
             "    if (ns > R / 4096)\n"
             "        ns = R / 4096;\n"
             "    if (ns > 65535)\n"
             "        ns = 65535;\n"
             "    return ns < 1 ? 1 : ns;\n"
             "}\n"
             "/* fzk_mid_cnt_bytes: the output counters at the start of a middle-axes\n"
             " * reduction's scratch, one per output, in whole 256-byte pieces (the\n"
             " * kernel's cnt_bytes) */\n"
             "static FUSEC_MAYBE_UNUSED inline int64_t fzk_mid_cnt_bytes(int64_t nK)\n"
             "{\n"
             "    return (nK * 4 + 255) / 256 * 256;\n"
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
}

/* The stubs of every kernel of the module, after the shared helpers. */
void emit_cuda_launchers(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    const CudaModule *m = cu_module(plans, nplans, o);
    int any_mid = 0, any_colp = 0;
    for (int i = 0; i < m->nkern; i++) {
        any_mid |= m->kern[i].mid;
        any_colp |= m->kern[i].colp >= 0;
    }
    emit_launch_helpers(out, any_mid, any_colp);
    for (int i = 0; i < m->nkern; i++) {
        const Lowering *L = &m->kern[i];
        KCtx c;
        Buf none = {0};
        cu_kctx_begin(&c, L, o, &none);
        emit_launcher(&c, L->v, L->nv, L->kindex, out);
        cu_kctx_end(&c);
        buf_free(&none);
    }
}
