/* cuda/schedule.c -- the schedule of a kernel: its variants (the __global__
 * functions, in K_INDEX order), their vector widths and row shapes, the
 * column split, the full reduction's chunking, and how block partials
 * combine. */
#include "cuda_priv.h"

static int need_decompose(const KCtx *c);
static int cols_vec_width(KCtx *c);

/* Rough SASS instructions an element of op costs in f32 (CUDA's accurate
 * math library, fz_fdiv's full-range division): what sets how much
 * arithmetic a loop kernel does per byte it moves (cu_loop_light). */
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
 * in flight.  On the H200, one vector against two: bias_relu f32 253.4 against 256.1
 * us, exp f32 255.0 against 257.6, tanh 256.6 against 257.6, but gelu f32
 * (2.75 a byte) 265.1 against 257.2, x * sigmoid(x) in bf16 (4.25) 157.2
 * against 147.4 and chain12 (7.4) 690 against 600. */
int cu_loop_light(const KCtx *c)
{
    int w = 0, bytes = 0;
    for (int i = 0; i < c->k->nvalues; i++)
        w += op_weight(c->k->values[i]->op);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_full(c, &c->acc[a]))
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
        if (cu_acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    for (int i = 0; i < c->k->noutputs; i++) {
        int8_t m[IR_MAX_RANK];
        Access a = {c->k->outputs[i], {0}};
        cu_out_map(c, c->k->outputs[i], m);
        memcpy(a.map, m, IR_MAX_RANK);
        if (cu_acc_full(c, &a) && dtype_size(MDT(c, a.node)) > maxsz)
            maxsz = dtype_size(MDT(c, a.node));
    }
    if (maxsz == 0 || c->ng == 0)
        return 1;
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* Column scheme: reduced groups form one run with kept groups after it
 * (RL_COLS, RL_MIDDLE): threads own the inner kept columns. */
int cu_cols_split(const KCtx *c, int *o_end, int *r_end)
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
int cu_is_cols_scheme(const KCtx *c)
{
    int a, b;
    return c->k->kind == KK_REDUCE && c->k->layout != RL_SCALAR && cu_cols_split(c, &a, &b);
}

/* Middle-axes reductions split over blocks (cu_emit_mid_body): groups
 * [outer reduced, kept..., inner reduced], the inner one contiguous, every
 * reduction of one round (none reads another) and no element output.
 * Other reductions with kept dims between reduced ones take the row
 * scheme, whose elements decompose their index over the reduced groups. */
static int is_mid_scheme(KCtx *c)
{
    const Kernel *k = c->k;
    if (k->kind != KK_REDUCE || k->layout == RL_SCALAR || c->ng < 3 || !c->gred[0] || !c->gred[c->ng - 1])
        return 0;
    for (int g = 1; g < c->ng - 1; g++)
        if (c->gred[g])
            return 0;
    for (int i = 0; i < k->noutputs; i++)
        if (cu_out_is_elem(c, i))
            return 0;
    for (int i = 0; i < k->nvalues; i++)
        if (op_info[k->values[i]->op].cls == OPC_REDUCE && cu_depends_on_red(c, k->values[i]->in[0].node))
            return 0;
    return 1;
}

/* The bytes of the widest full access (0 without one); 16 of them, in
 * elements (1 without one), at most 8. */
static int full_elem_bytes(const KCtx *c)
{
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_full(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    return maxsz;
}
static int full_vec_width(const KCtx *c)
{
    int maxsz = full_elem_bytes(c);
    if (!maxsz)
        return 1;
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* Vector width of the middle-axes body: 16 bytes of the widest full
 * access (every full access reads its inner rows as vectors). */
static int mid_vec_width(const KCtx *c)
{
    return full_vec_width(c);
}

/* Vector width of the on-chip row variant: one reduced group, innermost,
 * so the row is contiguous in every cached access and element output. */
static int row_vec_width(KCtx *c)
{
    int nr = 0;
    for (int g = 0; g < c->ng; g++)
        nr += c->gred[g];
    if (nr != 1 || !c->gred[c->ng - 1])
        return 1;
    int maxsz = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]) && dtype_size(MDT(c, c->acc[a].node)) > maxsz)
            maxsz = dtype_size(MDT(c, c->acc[a].node));
    if (!maxsz)
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (cu_out_is_elem(c, i) && dtype_size(MDT(c, c->k->outputs[i])) > maxsz)
            maxsz = dtype_size(MDT(c, c->k->outputs[i]));
    int v = 16 / maxsz;
    return v > 8 ? 8 : v;
}

/* row kernels, and every non-scalar reduction not taken by the column scheme */
int cu_is_row_scheme(const Kernel *k)
{
    return k->kind == KK_ROW || (k->kind == KK_REDUCE && k->layout != RL_SCALAR);
}

/* How kernel c combines its blocks' reduction partials (emit.h).  Only the
 * full reduction and the split column and middle-axes (mid) schemes have
 * partials from several blocks; a kernel takes the atomic combine only when every one of its
 * reductions has a one-word state merged by add, max or min (a kernel
 * mixing, say, mean and var keeps the ordered combine for both).  why gets
 * the reason when the flag was given but the combine stays ordered. */
static Combine combine_of(const KCtx *c, int mid, int atomic_reduce, char *why, size_t whylen)
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
    if (k->kind != KK_REDUCE || (k->layout != RL_SCALAR && !cu_is_cols_scheme(c) && !mid)) {
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
        case OP_LOGSUMEXP: case OP_SUMEXP: r = "has a two-word state, max and sum"; break;
        default: continue; /* not a reduction */
        }
        if (why)
            snprintf(why, whylen, "%s %%%d %s", op_info[v->op].src, v->id, r);
        return COMBINE_ORDERED;
    }
    return COMBINE_ATOMIC;
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
    x->ws = 0;
    x->nr = 0;
    x->mb = 0;
    x->cs = 0;
    snprintf(x->name, sizeof x->name, "%s%s", k->name, suffix);
}

/* The on-chip variants past 16384 elements of vw-element vectors, i (0-3):
 * 1024 threads of 32 (rows to 32768, read once; the looped kernel read
 * rows of 32000 three times, at 46% of copy: softmax, H200); then, over
 * the blocks of a thread block cluster (sm_90 on), the body of 512
 * threads of 32 on 4 or 8 blocks and the _r32768 body on 8, the partial
 * reductions combined through the cluster's shared memory
 * (fz_cluster_reduce).  Two blocks of 512 a multiprocessor beat one of 1024 (H200, 2^26 f32, softmax at
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

static int row_windowable(KCtx *c);

/* Do the add_long_row variants fit their registers?  They hold 32 elements
 * a thread under a bound of 64 registers (blocks of 1024, or two of 512):
 * one cached access of 4 bytes or less (a register an element) and up to 3
 * words of row-reduction state fit (ptxas sm_90: 43 to 64 registers, no
 * spills).  A float logsumexp holds two, its max and its sum: rows held in
 * registers take it in two sweeps of one-word reductions, the max live
 * through the second (two of them spilled 8 bytes, three 24).  Two cached
 * accesses or an 8-byte one spilled 76 to 1012 bytes a thread, 4 or more
 * one-word reductions or an argmax's state 4 to 28; such rows take the
 * shared-memory and looped variants. */
static int long_rows_fit(KCtx *c)
{
    int words = 0, state = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]))
            words += (cu_xc_bytes(c, a) + 3) / 4;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE) {
            const IrNode *r = c->k->values[i];
            int b = cu_red_state_bytes(r);
            if (b > (cu_red_is_lse(r) ? 8 : 4))
                return 0;
            state += (b + 3) / 4;
        }
    return words <= 1 && state <= 3;
}

/* Rows of which a thread of the register variants holds under 128 bytes
 * (32 elements of 2 bytes) and that the windowed looped kernel takes */
static int row_thin_windowed(KCtx *c)
{
    return 32 * cu_row_read_bytes(c) < 128 && row_windowable(c);
}

/* Does the cluster variant add_long_row(i) launch after the windowed
 * looped kernel that keeps its rows in flight in L2?  It does when a
 * thread holds under 128 bytes of the row (32 elements of 2 bytes): a
 * cluster's row costs two cluster barriers and a wave of them moves half
 * the bytes of a 4-byte row.  On the H200 (2^26 bf16 elements, rows of
 * 40000 to 114688) log-softmax took 147-186 us looped against 173-232 on
 * a cluster, softmax 135-151 against 130-160; past that the looped kernel
 * no longer keeps its rows in L2 and the cluster takes the rows: over 523
 * rows of 128256 179 us against 385 on the looped kernel of 256 threads a
 * row, but over 1024 rows 334 against 255 on the windowed one. */
static int long_row_late(KCtx *c, int i)
{
    return i > 0 && row_thin_windowed(c);
}

/* Reads of the row by the looped kernels: one per dependency round of
 * the row's reductions (a logsumexp online, in one), and one to write. */
static int row_loop_reads(KCtx *c)
{
    int rounds = cu_red_rounds(c), write = 0;
    for (int i = 0; i < c->k->noutputs; i++)
        write |= cu_out_row_pass(c, i, rounds);
    return rounds + write;
}

/* Reductions over a row's threads (a cluster's blocks) in the variants
 * that hold the row in registers: one a reduction, two a logsumexp (its
 * max, then its sum: row_rounds). */
static int row_reg_reduces(KCtx *c)
{
    int n = 0;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE)
            n += cu_red_is_lse(c->k->values[i]) ? 2 : 1;
    return n;
}

/* Do rows past the register ones that the windowed looped kernel takes
 * (2-byte elements, row_windowable) go to it whatever the L2 holds?  They
 * do where it reads the row no more often than the cluster variants
 * reduce it over their blocks: those variants are not made, nor _blockv
 * for few rows.  Past L2 the looped kernel reads from DRAM again, and a
 * cluster's wave waits through each reduction.  On the H200 (bf16,
 * 2^26 to 2^28 elements, rows of 100000 to 262144, 256 to 1024 of them)
 * log-softmax (2 reads, 2 reductions) took 129-454 us looped against
 * 166-724 on clusters, over 1024 rows of 65536 156 against 155; softmax
 * (3 reads, 2 reductions) 282 against 240
 * over 1024 rows of 128256, rmsnorm (2 reads, 1 reduction) 211 against
 * 192; over 523 rows log-softmax's _blockv took 385 us. */
static int row_loop_first(KCtx *c)
{
    return row_thin_windowed(c) && row_loop_reads(c) <= row_reg_reduces(c);
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

/* Bytes a row element takes in memory, over every cached access (as
 * stored) */
int cu_row_read_bytes(KCtx *c)
{
    int bytes = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]))
            bytes += dtype_size(MDT(c, c->acc[a].node));
    return bytes;
}

/* Bytes a row element takes in the shared-memory cache, over every cached
 * access (cu_xc_bytes: 2-byte floats as stored, the rest in their compute
 * type); 0 when nothing is cached. */
int cu_smem_elem_bytes(KCtx *c)
{
    int bytes = 0;
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_cached(c, &c->acc[a]))
            bytes += cu_xc_bytes(c, a);
    return bytes;
}

/* The shared bytes of variant v for a row of rlen elements in a block of
 * its bs threads: the kernel's CAP (the row, plus V - 1 when windowed, in
 * whole spans of bs vectors) times bs elements of `bytes` each.  The
 * launcher prints the same expression over the call's rlen and block
 * width (launch_row_smem). */
static int64_t smem_row_bytes(const Variant *v, int64_t rlen, int bytes)
{
    int64_t span = (int64_t)v->bs * v->vw;
    return (rlen + v->sh * (v->vw - 1) + span - 1) / span * span * bytes;
}

static void add_smem_rows(KCtx *c, Variant *v, int *n, int i64, int64_t rl)
{
    int vw = row_vec_width(c);
    int bytes = cu_smem_elem_bytes(c);
    if (vw <= 1 || bytes == 0)
        return;
    for (int w = 0; w < 2; w++) {
        /* aligned: rows past the registers' 32768 (_r32768); windowed: any
         * length, and pointers off the vector grid */
        if (w == 0 ? !(rl < 0 || (rl % vw == 0 && rl > (int64_t)long_tpr[0] * 32)) : !row_windowable(c))
            continue;
        /* a row a block of up to 1024 threads, the width set at launch
         * (launch_row_smem) */
        add_variant(c->k, v, n, VK_ROW_C, i64, 0, 0, 1024, w ? "_rsmw" : "_rsm");
        v[*n - 1].vw = vw;
        v[*n - 1].sm = 1;
        v[*n - 1].sh = w;
        /* a static row's bytes are known: only a variant some device
         * can give them, in a block of 1024 beside its static shared
         * memory (the launch's widest, which needs the fewest bytes) */
        if (rl >= 0 && smem_row_bytes(&v[*n - 1], rl, bytes) + SMEM_ROW_STATIC > SMEM_ROW_MAX_OPTIN)
            (*n)--;
    }
}

/* Vector width of a full reduction: flat indexing, no element outputs. */
static int scalar_vec_width(KCtx *c)
{
    if (need_decompose(c))
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (cu_out_is_elem(c, i))
            return 1;
    return full_vec_width(c);
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

/* Row kernels: does the kernel read a vector per column (cu_acc_per_column)? */
static int reads_per_column(const KCtx *c)
{
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_per_column(c, &c->acc[a]))
            return 1;
    return 0;
}

/* Rows whose length or address rules out whole aligned vectors can still
 * be read a vector at a time (the windowed variants, SH): a row's vectors
 * start at its element offset rounded down to V, so the first and the last
 * may be partial and go an element at a time.  That needs one shift for
 * every row-shaped access: each cached input and each element output
 * (stored as vectors) sits at the same offset in its array (the
 * offsets, with the group indices named, read the same), and the launcher
 * checks that their pointers are congruent modulo the vector. */

/* The row-shaped accesses of a cached row kernel: i counts the collected
 * accesses, then the outputs.  1 for a cached input or an element output
 * (each pass stores its element outputs as vectors), with *x its access and ptr its
 * pointer's name (in<b> or out<i>); 0 for the others. */
int cu_row_shaped(KCtx *c, int i, Access *x, char *ptr, size_t ptrlen)
{
    if (i < c->nacc) {
        if (!cu_acc_cached(c, &c->acc[i]))
            return 0;
        *x = c->acc[i];
        snprintf(ptr, ptrlen, "in%d", c->inbuf[x->node->id]);
        return 1;
    }
    i -= c->nacc;
    if (!cu_out_is_elem(c, i))
        return 0;
    x->node = c->k->outputs[i];
    cu_out_map(c, x->node, x->map);
    snprintf(ptr, ptrlen, "out%d", i);
    return 1;
}

/* The bytes a row kernel reads and writes for each element of a row: the
 * row-shaped inputs it keeps on chip and the row-shaped outputs (at least 1). */
int cu_row_elem_bytes(KCtx *c)
{
    int n = 0;
    for (int a = 0; a < c->nacc + c->k->noutputs; a++) {
        Access x;
        char p[32];
        if (cu_row_shaped(c, a, &x, p, sizeof p))
            n += dtype_size(MDT(c, x.node));
    }
    return n > 0 ? n : 1;
}

/* The offset of row-shaped access x with the groups named G0, G1, ...:
 * two accesses at the same offset share a row's shift modulo the vector */
static void row_sym_offset(KCtx *c, const Access *x, Buf *off)
{
    char names[IR_MAX_RANK][16];
    const char *saved[IR_MAX_RANK];
    const char *saved_flat = c->flat;
    c->flat = NULL;
    for (int g = 0; g < c->ng; g++) {
        snprintf(names[g], sizeof names[g], "G%d", g);
        saved[g] = c->gi[g];
        c->gi[g] = names[g];
    }
    cu_acc_offset(c, x, "I", off);
    for (int g = 0; g < c->ng; g++)
        c->gi[g] = saved[g];
    c->flat = saved_flat;
}

/* The windowed row's reference access: its first row-shaped output, else
 * its first cached input (in cu_row_shaped's order); 0 when it has none */
static int row_win_ref_acc(KCtx *c, Access *x)
{
    char ptr[32];
    for (int pass = 0; pass < 2; pass++)
        for (int a = pass ? 0 : c->nacc; a < (pass ? c->nacc : c->nacc + c->k->noutputs); a++)
            if (cu_row_shaped(c, a, x, ptr, sizeof ptr))
                return 1;
    return 0;
}

/* The offset of the windowed row's reference access; 0 when it has none */
static int row_win_ref(KCtx *c, Buf *ref)
{
    Access x;
    if (!row_win_ref_acc(c, &x))
        return 0;
    row_sym_offset(c, &x, ref);
    return 1;
}

/* Is the windowed row's reference access in every group, its offset the
 * flat index (row * R + r)?  Then rows a multiple of V apart share their
 * shift (row_shift) */
static int row_win_flat(KCtx *c)
{
    Access x;
    return row_win_ref_acc(c, &x) && cu_acc_full(c, &x);
}

/* Is row-shaped access a (cu_row_shaped's index) at another offset than
 * the window's reference (a mask [L, L] beside scores [B, H, L, L])?  The
 * windowed register rows read it an element at a time and leave it out of
 * the launch's shift check. */
int cu_row_win_apart(KCtx *c, int a)
{
    Access x;
    char ptr[32];
    if (!cu_row_shaped(c, a, &x, ptr, sizeof ptr))
        return 0;
    Buf ref = {0}, off = {0};
    row_win_ref(c, &ref);
    row_sym_offset(c, &x, &off);
    int apart = strcmp(ref.data ? ref.data : "", off.data ? off.data : "") != 0;
    buf_free(&ref);
    buf_free(&off);
    return apart;
}

/* Can rows take the windowed bodies: vectors of several elements and every
 * row-shaped access at the reference offset, or (apart: the register rows)
 * the row-shaped outputs at it and inputs anywhere */
static int row_windowable_as(KCtx *c, int apart)
{
    Buf ref = {0};
    int ok = row_vec_width(c) > 1 && row_win_ref(c, &ref);
    buf_free(&ref);
    for (int a = 0; ok && a < c->nacc + c->k->noutputs; a++)
        if (cu_row_win_apart(c, a))
            ok = apart && a < c->nacc;
    return ok;
}

static int row_windowable(KCtx *c)
{
    return row_windowable_as(c, 0);
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
 * The causes of the split were not isolated.  The windowed bodies timed
 * here checked every element against the row, which whole vectors skip in
 * row_elem_loop, so the split may fall at shorter rows. */
static int row_window_pays(const KCtx *c, int64_t len)
{
    return len > 1024 || (len > 512 && !reads_per_column(c));
}

/* Loop kernels: the vector body (when some access is full), the wrapping
 * one for rows that are not whole vectors, the scalar one, and the int64
 * scalar one where group indices are decomposed. */
static int plan_loop(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
    int dec = need_decompose(c);
    if (loop_vec_width(c) > 1)
        add_variant(k, v, &n, VK_LOOP_V, !dec, 0, 0, 256, "_v");
    if (loop_needs_wrap(c, loop_vec_width(c)))
        add_variant(k, v, &n, VK_LOOP_W, 0, 0, 0, 256, "_vw");
    add_variant(k, v, &n, VK_LOOP_S, !dec, 0, 0, 256, "_s");
    if (dec)
        add_variant(k, v, &n, VK_LOOP_S, 1, 0, 0, 256, "_s_i64");
    return n;
}

/* Column reductions: a vector variant, then the scalar one, for tiles of 8
 * warps and of one (fzk_cols_ws); then, with side reductions, `_rows`.
 * Tiles of 8 warps, whose blocks split the rows, read at most
 * COLS_SPLIT_VW columns a thread: with 8 the tiles halve, the splits
 * double and each split tile's last block adds 4 times the partials. */
enum { COLS_SPLIT_VW = 4 };
/* Split tiles read an element at a time (widths that are not whole
 * aligned vectors) with a quarter of the vector tiles' bytes a load, so
 * they keep more warps in flight: 6 blocks of 256 a multiprocessor
 * (launch bounds, 40 registers) and a wave of 6 (cols_split_bps), where
 * every state is one word of 4 bytes or less (cols_elem_light).  Wider
 * states (Welford's three words, arg, logsumexp, f64) spilled 4 to 208
 * bytes in 40 registers (sm_90) and keep the four blocks. */
enum { COLS_ELEM_BPS = 6 };
static int cols_elem_light(const KCtx *c)
{
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && cu_red_state_bytes(c->k->values[i]) > 4)
            return 0;
    return 1;
}
/* Whether c's column kernel folds a bf16 logsumexp in groups of rows
 * (cols_fold_rows; kernels with side reductions take U rows a step
 * instead).  Its variants ask for 3 blocks of 256 a multiprocessor: with
 * the block size alone ptxas held bf16 sumexp's `_cols_v` to 48 registers
 * and spilled 8 bytes (sm_90), with 4 blocks a softmax's to 64 and spilled
 * 4; with 3 they take 58 to 80 and none. */
static int cols_fold_lse_kernel(const KCtx *c)
{
    const Kernel *k = c->k;
    int any = 0;
    for (int i = 0; i < k->nvalues; i++) {
        if (op_info[k->values[i]->op].cls != OPC_REDUCE)
            continue;
        if (cu_is_side_red(c, k->values[i]))
            return 0;
        any |= cu_lse_hw(c, k->values[i]);
    }
    return any;
}
static int plan_cols(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
    int vw = cols_vec_width(c);
    int mb = cols_fold_lse_kernel(c) ? 3 : 0;
    for (int ws = 8; ws >= 1; ws -= 7) {
        if (vw > 1) {
            add_variant(k, v, &n, VK_COLS, 1, 0, 0, 256, ws == 8 ? "_cols_v" : "_cols_v1");
            v[n - 1].vw = ws == 8 && vw > COLS_SPLIT_VW ? COLS_SPLIT_VW : vw;
            v[n - 1].ws = ws;
            /* the split counts COLS_WAVE_BPS blocks a multiprocessor,
             * and the variant says so where every state is a word
             * (cols_elem_light) and no side reduction (row results) shares
             * its tiles: bounded by the block size alone ptxas held
             * LayerNorm backward's static 4096 one to 48 registers and
             * spilled 4 bytes (sm_90), asked for 4 blocks it has 64 and
             * none.  Wider states (logsumexp, int64 sums) spilled 4 bytes
             * at 64; row and column sums of 16384 x 8192 ran 2.4% slower
             * with it (H100).  Those keep the block size alone */
            v[n - 1].mb = mb ? mb : ws == 8 && cols_elem_light(c) && !k->side_axes ? COLS_WAVE_BPS : 0;
        }
        add_variant(k, v, &n, VK_COLS, 1, 0, 0, 256, ws == 8 ? "_cols" : "_cols1");
        v[n - 1].ws = ws;
        v[n - 1].mb = ws == 8 && !mb && cols_elem_light(c) ? COLS_ELEM_BPS : mb;
    }
    /* element-wise tiles over at most 16 columns, rows a warp step from
     * the columns (cu_emit_cols_body) */
    if (!k->side_axes) {
        add_variant(k, v, &n, VK_COLS, 1, 0, 0, 256, "_cols_n");
        v[n - 1].ws = 8;
        v[n - 1].nr = 1;
        v[n - 1].mb = mb; /* else 4 (bound_narrow_cols) */
    }
    /* the side reductions' second launch: their partials, added a row */
    if (k->side_axes)
        add_variant(k, v, &n, VK_COLS_ROWS, 1, 0, 0, 256, "_rows");
    return n;
}

/* Middle-axes reductions (is_mid_scheme): a warp an output for many
 * outputs of short reduced ranges (the row scheme's `_warp`), else the
 * split body (cu_emit_mid_body) reading the inner rows as 16-byte vectors
 * where they hold whole aligned vectors, or an element at a time. */
static int plan_mid(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
    add_variant(k, v, &n, VK_ROW_L, 0, 32, 0, 128, "_warp");
    int vw = mid_vec_width(c);
    if (vw > 1) {
        add_variant(k, v, &n, VK_MID, 1, 0, 0, 256, "_mid_v");
        v[n - 1].vw = vw;
    }
    add_variant(k, v, &n, VK_MID, 1, 0, 0, 256, "_mid");
    return n;
}

/* Full reductions: int32 and int64 where group indices are decomposed,
 * else a flat vector variant and the scalar one. */
static int plan_scalar(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
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
    return n;
}

/* The register variants of rows past 1024 whose block width the launch
 * sets (tpr 0): 16 elements a thread on up to 256 threads, then 32 on up
 * to 512 (rows up to 4096 and 16384, plus V - 1 when windowed: sh).  The
 * launch gives a row the fewest warps that hold it, so no more than a
 * warp's share of a block idles, where fixed widths of a power of two
 * would leave half of a block of 256 threads of 32 idle for rows of 4097,
 * and three eighths for rows of 5120.
 *
 * Windowed rows of 2-byte elements (vectors of 8) under 128 bytes in a
 * thread's 32 elements (row_thin_windowed) take 16 elements a thread on up
 * to 512 threads and have no _rt32w; longer rows go to the windowed looped
 * kernel.  A windowed thread of 32 such elements holds four vectors, each
 * with its bounds tests and partial-vector path, at 62 to 74 registers
 * (bf16 softmax, layernorm; sm_90): 4 or 5 blocks of 5 warps a
 * multiprocessor at rows of 4097.  On the H200 (2^26 bf16 elements, us,
 * _rt32w -> _rt16w at rows of 4097 / 6001): softmax 150.9 / 140.7 ->
 * 118.4 / 120.4, log-softmax 138.4 / 130.2 -> 126.4 / 124.5, layernorm
 * 183.2 / 151.6 -> 158.7 / 157.7, rmsnorm 106.7 / 105.7 -> 110.5 / 108.4;
 * _rt32w -> the looped kernel at 8191 / 12001 / 16001: layernorm 196.9 /
 * 161.4 / 233.7 -> 149.1 / 139.8 / 134.6, softmax 143.3 / 149.0 / 205.0 ->
 * 143.5 / 130.7 / 122.0, log-softmax 146.8 / 153.2 / 140.5 -> 151.0 /
 * 126.8 / 117.8.  f32 rows keep _rt32w: _rt16w on 512 threads took f32
 * layernorm at 6001 from 156.8 to 192.5 us, the looped kernel at 8191
 * from 181.2 to 194.3. */
static void add_width_rows(KCtx *c, Variant *v, int *n, int i64, int vw, int sh)
{
    static const char *const nm[2][2] = {{"_rt16", "_rt32"}, {"_rt16w", "_rt32w"}};
    int thin = sh && vw == 8 && row_thin_windowed(c);
    for (int i = 0; i < 2 - thin; i++) {
        /* rows that are not contiguous (vw 1) keep 256 threads of 32,
         * the most registers a thread */
        add_variant(c->k, v, n, VK_ROW_C, i64, 0, 16 << i, vw > 1 ? 256 << (i + thin) : 256, nm[sh][i]);
        v[*n - 1].vw = vw;
        v[*n - 1].sh = sh;
        /* 512 threads of 32 whole vectors: two blocks a multiprocessor
         * (64 registers) where the long rows' rule says they fit
         * (long_rows_fit); with the block size alone ptxas gives f32
         * layernorm's 78 registers, one block of 512 a multiprocessor */
        if (i == 1 && !sh && vw > 1 && long_rows_fit(c))
            v[*n - 1].mb = 2;
        /* windowed, one block a multiprocessor stated: with the block
         * size alone ptxas held f32 rows at 64 registers and spilled 16
         * bytes (a mean and a variance over the row), where they fit 71 */
        if (i == 1 && sh && vw > 1)
            v[*n - 1].mb = 1;
    }
}

/* Symbolic rows of a row kernel whose row is cached: the on-chip size
 * buckets (with windowed and element-wise twins), picked at launch. */
static void plan_symbolic_rows(KCtx *c, Variant *v, int *np, int i64)
{
    const Kernel *k = c->k;
    int n = *np;
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
    int win = vw > 1 && row_windowable_as(c, 1);
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
    /* rows past 1024: a row a block, 16 elements a thread on up to 256
     * threads, then 32 on up to 512 (vocabularies, wide layers: rows
     * of 12000 and 16384 on the H200 went from 45-61% to 86-95% of
     * copy against the looped kernel, which reads them two or three
     * times).  The launch sets the block's width: the fewest warps
     * that hold the row (add_width_rows) */
    add_width_rows(c, v, &n, i64, vw, 0);
    if (vw > 1) {
        /* rows of 16385 to 262144 (add_long_row; the late ones in
         * plan_rows) */
        for (int i = 0; long_rows_fit(c) && i < 4; i++)
            if (!long_row_late(c, i))
                add_long_row(k, v, &n, i64, vw, i);
    }
    /* no element-wise twins past 1024: on the H200 an _r8192s ran
     * odd rows of 3001 at 29% (softmax) and 55% (layernorm) of copy,
     * below the looped kernel's 73% and 74% (rmsnorm: 84% against
     * 76%); _r4096s spilled.  The windowed ones read vectors up
     * to 16384; an _r32768w spilled (1024 threads leave 64
     * registers for 32 elements and their bounds) */
    if (win)
        add_width_rows(c, v, &n, i64, vw, 1);
    *np = n;
}

/* A reduction over plain rows (one kept and one reduced group: the row
 * is contiguous) read as 16-byte vectors at any offset (windowed: one
 * shift for every row-shaped pointer, the partial first and last vector
 * apart), a warp a row (_warpw) or a block a row (_blockw), int indices:
 * 16 bytes a lane in each load, where element loads keep 4 in flight. */
static int reduce_rows_vec(KCtx *c)
{
    if (c->k->kind != KK_REDUCE || row_needs_div(c) || row_vec_width(c) <= 1)
        return 0;
    int cache = 0;
    for (int a = 0; a < c->nacc; a++)
        cache |= cu_acc_cached(c, &c->acc[a]);
    return cache && row_windowable(c);
}

/* Row kernels (and reductions over rows or any axes): the on-chip
 * variants for the row length, then the looped and shared-memory ones. */
static int plan_rows(KCtx *c, Variant *v)
{
    const Kernel *k = c->k;
    int n = 0;
    int64_t rl = static_row_len(c);
    int i64 = !row_needs_div(c);
    int cache = 0;
    for (int a = 0; a < c->nacc; a++)
        cache |= cu_acc_cached(c, &c->acc[a]);
    int srow = -1; /* the add_long_row variant of a static row */
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
        if (vw > 1 && rl % vw == 0 && long_rows_fit(c))
            srow = long_row_for(rl);
        if (srow >= 0 && !long_row_late(c, srow))
            add_long_row(k, v, &n, i64, vw, srow);
    } else if (k->kind == KK_ROW && cache && rl < 0) {
        plan_symbolic_rows(c, v, &n, i64);
    } else if (k->kind == KK_REDUCE) {
        if (reduce_rows_vec(c)) {
            /* rows of at most RED_SUB_ROW_BYTES: 4 or 8 lanes a row, so
             * each shuffle step serves 8 or 4 rows and a row takes two or
             * three steps (the launcher picks by the states' bytes) */
            static const struct { int tpr; const char *name; } sub[] = {{4, "_sub4w"}, {8, "_sub8w"}};
            for (int s = 0; s < 2; s++) {
                add_variant(k, v, &n, VK_ROW_L, 0, sub[s].tpr, 0, 128, sub[s].name);
                v[n - 1].vw = row_vec_width(c);
                v[n - 1].sh = 1;
            }
            add_variant(k, v, &n, VK_ROW_L, 0, 32, 0, 128, "_warpw");
            v[n - 1].vw = row_vec_width(c);
            v[n - 1].sh = 1;
        }
        add_variant(k, v, &n, VK_ROW_L, i64, 32, 0, 128, "_warp");
        if (reduce_rows_vec(c)) {
            add_variant(k, v, &n, VK_ROW_L, 0, 256, 0, 256, "_blockw");
            v[n - 1].vw = row_vec_width(c);
            v[n - 1].sh = 1;
        }
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
    int lfirst = wloop && row_loop_first(c);
    if (wloop) {
        /* a row a block of 1024 or 512 threads (host_row_wloop_choose) */
        add_variant(k, v, &n, VK_ROW_L, 0, 0, 0, 1024, "_blockw");
        v[n - 1].vw = lvw;
        v[n - 1].sh = 1;
        /* the cluster variants that launch after it (long_row_late) */
        for (int i = 1; i < 4 && !lfirst; i++)
            if ((rl < 0 ? long_rows_fit(c) : i == srow) && long_row_late(c, i))
                add_long_row(k, v, &n, i64, lvw, i);
    }
    if (k->kind == KK_ROW && cache && (rl < 0 || rl > FUSE_ROW_ONCHIP_MAX))
        add_smem_rows(c, v, &n, i64, rl);
    /* rows past the on-chip ones, when they are whole aligned vectors
     * and few (the launcher): the looped body with 16-byte accesses.
     * Element loads (_block) keep few bytes in flight: on the H200,
     * softmax over rows of 65536 spent 49 of 53 cycles an instruction
     * waiting on memory, at 75% of DRAM bandwidth (ncu) */
    if (cache && lvw > 1 && (rl < 0 || rl % lvw == 0) && !lfirst) {
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
    return n;
}

/* Few variants keep the NVRTC compile short: int64 indices are used
 * wherever they cost no division (a flat index or one group per segment);
 * an int32 variant exists only where magic-number division pays. */
static int plan_variants(KCtx *c, int mid, Variant *v)
{
    const Kernel *k = c->k;
    if (k->kind == KK_LOOP)
        return plan_loop(c, v);
    if (cu_is_cols_scheme(c))
        return plan_cols(c, v);
    if (mid)
        return plan_mid(c, v);
    if (!cu_is_row_scheme(k))
        return plan_scalar(c, v);
    return plan_rows(c, v);
}

/* Does some access need group indices (is not addressed by the flat index)? */
static int need_decompose(const KCtx *c)
{
    if (c->ng <= 1)
        return 0;
    for (int a = 0; a < c->nacc; a++)
        if (!cu_acc_full(c, &c->acc[a]))
            return 1;
    for (int i = 0; i < c->k->noutputs; i++) {
        Access a = {c->k->outputs[i], {0}};
        int8_t m[IR_MAX_RANK];
        cu_out_map(c, c->k->outputs[i], m);
        memcpy(a.map, m, IR_MAX_RANK);
        if (!cu_acc_full(c, &a))
            return 1;
    }
    return 0;
}

/* Elements of the kernel's whole space, or -1 when a dim is symbolic */
int64_t cu_static_space_len(const KCtx *c)
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
 * kernel has this T as a constant, a symbolic one derives it from the grid.
 * 2048 contiguous chunks of 64 steps, one
 * 16-byte load a thread a step, read 2^28 floats in 240.5 us on the H200,
 * against 242.8 for 528 blocks striding over the array with two loads a
 * step.  At 2^24 floats 2048 chunks of 4 steps took 34.9 us against the
 * striding kernel's 32.1, and 512 chunks of 16 took 28.7 against its 28.5
 * (H200). */
int64_t cu_scalar_chunk_steps(int64_t nv, int per)
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

/* Column reductions whose states are all one or two words merged without
 * division or index compares (not Welford, not arg): they read 8 rows a
 * step and combine partials with all 8 warps; the others spilled in ptxas
 * with either (tests/codegen/kernel-reduce-middle.fuse). */
int cu_cols_small_states(const IrNode *const *reds, int nreds)
{
    for (int i = 0; i < nreds; i++)
        if (cu_red_state_bytes(reds[i]) > 8 || reds[i]->op == OP_ARGMAX || reds[i]->op == OP_ARGMIN ||
            cu_red_is_welford(reds[i]))
            return 0;
    return 1;
}

/* bytes per partial state in the column scheme's scratch */
int cu_cols_slot(const KCtx *c)
{
    int slot = 8;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && cu_red_state_bytes(c->k->values[i]) > slot)
            slot = cu_red_state_bytes(c->k->values[i]);
    return (slot + 7) / 8 * 8;
}

/* Vector width of the column kernel (of its widest variant, a warp a
 * tile): one inner group, innermost; 16 bytes
 * a load (4 columns of 4-byte elements, 8 of 2-byte ones) while the V
 * states a thread keeps of every reduction stay within COLS_STATE_BYTES:
 * 32 registers a thread, and 32 KiB for the block's 8 x 32 x V of them in
 * the warp-order combine.  The bf16 sum over the leading axis of
 * [16, 4096, 1024] took 49.5 us on the H200 (65% of copy) reading 8 bytes
 * a load, 39.2 (86%) reading 16, in two runs of the suite. */
enum { COLS_STATE_BYTES = 128 };
static int cols_vec_width(KCtx *c)
{
    int oe = 0, re = 0;
    cu_cols_split(c, &oe, &re);
    if (c->ng - re != 1)
        return 1;
    for (int i = 0; i < c->k->noutputs; i++)
        if (cu_out_is_elem(c, i))
            return 1;
    int sb = 0;
    for (int i = 0; i < c->k->nvalues; i++) {
        const IrNode *n = c->k->values[i];
        if (op_info[n->op].cls != OPC_REDUCE)
            continue;
        /* states of more than two words (Welford's three, an arg
         * reduction's value and index): one column a thread.  At V = 4
         * and 8, BatchNorm statistics (mean and var) over [64, 64, 64,
         * 256] took 1.50 (f32) and 3.30 (bf16) times the best peer's time
         * on the H200, against 1.04 and 1.27 at one column in an earlier
         * run of the suite (cause not isolated), and
         * argmax spilled at V = 2 (ptxas, sm_90) */
        if (cu_red_state_bytes(n) > 8)
            return 1;
        sb += cu_red_state_bytes(n);
    }
    int v = full_vec_width(c);
    /* 8 columns of 1-byte elements, and 8 beside row reductions (their U
     * row states a step), spilled 8 bytes under ptxas (sm_90): 4 */
    if (v > 4 && (c->k->side_axes || full_elem_bytes(c) < 2))
        v = 4;
    while (v > 1 && v * sb > COLS_STATE_BYTES)
        v /= 2;
    return v;
}

/* ------------------------------------------------------------------ */
/* The lowering: every decision above, once per kernel.                */

/* Does kernel c compute a value in f64? */
static int computes_f64(const KCtx *c)
{
    for (int i = 0; i < c->k->nvalues; i++)
        if (c->k->values[i]->dtype == DT_F64)
            return 1;
    return 0;
}

/* Variants of a kernel that computes in f64 state the blocks a
 * multiprocessor that leave a thread 128 registers (one block of 512 or
 * more): with the block size alone ptxas held CUDA's f64 exp and log and
 * f64 Welford and logsumexp states to 40 registers and spilled 8 to 132
 * bytes a thread (sm_90).  A bound the plan states is kept. */
static void bound_f64(const KCtx *c, Variant *v, int nv)
{
    if (!computes_f64(c))
        return;
    for (int i = 0; i < nv; i++)
        if (!v[i].mb) {
            int mb = 65536 / (v[i].bs * 128);
            v[i].mb = mb < 1 ? 1 : mb;
        }
}

/* _cols_n without a bound of its own (nor f64's, bound_f64) asks for 4
 * blocks of 256 a multiprocessor, 64 registers: with the block size alone
 * ptxas gave LayerNorm backward's column sums 128. */
static void bound_narrow_cols(Variant *v, int nv)
{
    for (int i = 0; i < nv; i++)
        if (v[i].nr && !v[i].mb)
            v[i].mb = 65536 / (v[i].bs * 64);
}

/* Lower kernel k of f: analyse it, take its combine mode, plan its
 * variants and note what the bodies and the launch need from them. */
static void lower_kernel(Lowering *L, const IrFunc *f, const Kernel *k, int atomic_reduce)
{
    KCtx *c = &L->an;
    cu_kctx_init(c, f, k);
    L->mid = is_mid_scheme(c);
    L->combine = combine_of(c, L->mid, atomic_reduce, L->why, sizeof L->why);
    L->nv = plan_variants(c, L->mid, L->v);
    bound_f64(c, L->v, L->nv);
    bound_narrow_cols(L->v, L->nv);
    L->dec = need_decompose(c);
    if (k->kind == KK_LOOP) {
        L->vw = loop_vec_width(c);
        L->wrap = loop_needs_wrap(c, L->vw);
    } else if (cu_is_cols_scheme(c)) {
        L->vw = cols_vec_width(c);
    } else if (L->mid) {
        L->vw = mid_vec_width(c);
    } else if (!cu_is_row_scheme(k)) {
        L->vw = scalar_vec_width(c);
    } else {
        L->vw = row_vec_width(c);
    }
    for (int i = 0; i < L->nv; i++) {
        const Variant *v = &L->v[i];
        L->wloop |= is_wloop(v);
        if (v->kind != VK_ROW_C)
            continue;
        L->cached |= !v->sm;
        L->smem |= v->sm;
        L->subwarp |= v->tpr > 0 && v->tpr < 32;
        L->window |= v->sh;
        L->cluster |= v->cl > 1;
    }
}

/* Column partials (fuse_colp_partner): row kernel L folds the column
 * reductions of column kernel Q (module indices a, b) in its cached
 * variants that hold their rows in registers (a row a block, or several
 * of TPRC threads), without a cluster, and keep at most COLP_MAX_WORDS
 * state words a thread; windowed ones a row a block where the block's rows
 * share their shift (row_win_flat: a lane's columns move with the row's
 * offset).  Q takes a _colp variant that combines them.  None such: no
 * partials. */
static void lower_colp(Lowering *L, Lowering *Q, int a, int b, const IrFunc *f)
{
    const Kernel *k = L->an.k, *q = Q->an.k;
    /* Q's values that are not L's, less their epilogue (what is
     * computed from Q's reductions), merged into L's in IR order */
    IrNode **vals = malloc(sizeof(IrNode *) * (size_t)(k->nvalues + q->nvalues + 1));
    unsigned char *after = calloc((size_t)f->nnodes + 1, 1);
    if (!vals || !after)
        fatal_oom();
    int n = 0, words = 0, nred = 0;
    for (int v = 0; v < q->nvalues; v++) {
        const IrNode *x = q->values[v];
        for (int u = 0; u < x->nin; u++)
            after[x->id] |= after[x->in[u].node->id];
        if (op_info[x->op].cls == OPC_REDUCE) {
            after[x->id] = 1;
            nred++;
            words += (cu_red_state_bytes(x) + 3) / 4;
        }
    }
    int ki = 0, qi = 0;
    while (ki < k->nvalues || qi < q->nvalues) {
        IrNode *x = qi < q->nvalues ? q->values[qi] : NULL;
        if (x && (cu_value_index(&L->an, x) >= 0 || (after[x->id] && op_info[x->op].cls != OPC_REDUCE))) {
            qi++;
            continue;
        }
        if (ki < k->nvalues && (!x || k->values[ki]->id < x->id))
            vals[n++] = k->values[ki++];
        else {
            vals[n++] = x;
            qi++;
        }
    }
    free(after);
    if (nred == 0 || Q->nv >= MAX_VARIANTS) {
        free(vals);
        return;
    }
    /* keep[i]: variant i leaves partials.  A fixed-width register variant
     * whose columns' states would not fit (a static row: 4096 f32 take 128
     * threads of 32) takes twice the threads for half the elements each,
     * up to 1024 threads; several rows a block stay so while a row takes a
     * warp at most, past it a row a block (bf16 rows of 1024: a block of
     * 64 threads, not 4 rows of 32).  Windowed rows keep partials where a
     * block's rows share their shift: the launch makes the grid a multiple
     * of V and the shift follows the flat index (row_win_flat) */
    const int wflat = row_win_flat(&L->an);
    int keep[MAX_VARIANTS] = {0}, any = 0;
    for (int i = 0; i < L->nv; i++) {
        Variant *v = &L->v[i];
        /* several rows a block (tpr < bs) add their groups' states in the
         * block (row_colp_states); windowed ones would need the grid times
         * the rows a block to be a multiple of V: none */
        if (v->kind != VK_ROW_C || v->sm || v->cl != 1 || (v->sh && (!wflat || (v->tpr && v->tpr < v->bs))))
            continue;
        const int fixed = v->tpr && v->tpr == v->bs; /* a row a block of fixed width */
        int tpr = v->tpr, cap = v->cap;
        while (v->tpr && cap * words > COLP_MAX_WORDS && tpr * 2 <= 1024 && cap > v->vw) {
            tpr *= 2;
            cap = ((cap + 1) / 2 + v->vw - 1) / v->vw * v->vw;
        }
        if (cap * words > COLP_MAX_WORDS)
            continue;
        keep[i] = any = 1;
        if (tpr != v->tpr) {
            /* rows a block share the block's threads a warp at most (a
             * row's reduction is a warp's, or the block's) */
            if (fixed || tpr > 32 || tpr > v->bs)
                v->bs = tpr;
            v->tpr = tpr;
            v->cap = cap;
            v->mb = 0;
        }
    }
    if (!any) {
        free(vals);
        return;
    }
    for (int i = 0; i < L->nv; i++) {
        Variant *v = &L->v[i];
        v->cs = keep[i];
        /* a fixed-width one asks for the blocks that leave it 128
         * registers: with the block size alone ptxas gave LayerNorm
         * backward's _r1024 56 and a 4-byte spill (64 with 4 blocks of 128,
         * no spill); with 8 blocks its static row of 768 spilled 12 bytes */
        if (v->cs && v->tpr && !v->mb)
            v->mb = v->bs >= 512 ? 1 : 512 / v->bs;
        /* a row a block of the launch's width takes up to 512 threads
         * where twice its elements a thread would not fit the states:
         * symbolic f32 rows of 4097 to 8192 keep their partials on 512
         * threads of 16 (_rt16) instead of reading again under _rt32 */
        if (v->cs && !v->tpr && v->bs < 512 && 2 * v->cap * words > COLP_MAX_WORDS)
            v->bs = 512;
    }
    L->colk = *k;
    L->colk.values = vals;
    L->colk.nvalues = n;
    L->colk.side_axes = q->reduce_axes;
    cu_kctx_init(&L->colan, f, &L->colk);
    L->colp = b;
    Q->colp_of = a;
    add_variant(q, Q->v, &Q->nv, VK_COLP, 1, 0, 0, 256, "_colp");
}

CudaModule *emit_cuda_lower(Plan **plans, int nplans, int atomic_reduce)
{
    CudaModule *m = calloc(1, sizeof *m);
    if (!m)
        fatal_oom();
    m->plans = plans;
    m->nplans = nplans;
    m->atomic_reduce = atomic_reduce;
    for (int p = 0; p < nplans; p++)
        m->nkern += plans[p]->nkernels;
    m->kern = calloc((size_t)m->nkern + 1, sizeof *m->kern);
    if (!m->kern)
        fatal_oom();
    int i = 0;
    for (int p = 0; p < nplans; p++)
        for (int ki = 0; ki < plans[p]->nkernels; ki++, i++) {
            Lowering *L = &m->kern[i];
            lower_kernel(L, plans[p]->fn, &plans[p]->kernels[ki], atomic_reduce);
            L->colp = L->colp_of = -1;
            m->any_atomic |= L->combine == COMBINE_ATOMIC;
        }
    i = 0;
    for (int p = 0; p < nplans; p++) {
        for (int ki = 0; ki < plans[p]->nkernels; ki++) {
            int j = fuse_colp_partner(plans[p], ki);
            if (j >= 0) {
                m->kern[i + ki].colp_sig = 1;
                m->kern[i + j].colp_of_sig = 1;
                lower_colp(&m->kern[i + ki], &m->kern[i + j], i + ki, i + j, plans[p]->fn);
            }
        }
        i += plans[p]->nkernels;
    }
    for (i = 0; i < m->nkern; i++) {
        m->kern[i].kindex = m->nglobal;
        m->nglobal += m->kern[i].nv;
    }
    return m;
}

void emit_cuda_module_free(CudaModule *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nkern; i++) {
        cu_kctx_free(&m->kern[i].an);
        if (m->kern[i].colp >= 0) {
            cu_kctx_free(&m->kern[i].colan);
            free(m->kern[i].colk.values);
        }
    }
    free(m->kern);
    free(m);
}

/* the lowering of kernel ki of plans[p] */
static const Lowering *lowering_of(const CudaModule *m, int p, int ki)
{
    if (p < 0 || p >= m->nplans || ki < 0 || ki >= m->plans[p]->nkernels)
        ICE("no such kernel in the lowered module");
    int i = ki;
    for (int q = 0; q < p; q++)
        i += m->plans[q]->nkernels;
    return &m->kern[i];
}

Combine emit_cuda_combine(const CudaModule *m, int p, int ki, const char **why)
{
    const Lowering *L = lowering_of(m, p, ki);
    if (why)
        *why = L->why;
    return L->combine;
}

const CudaModule *cu_module(Plan **plans, int nplans, const EmitOptions *o)
{
    const CudaModule *m = o->cuda;
    if (!m)
        ICE("a CUDA emitter called without the module's lowering (emit_cuda_lower)");
    if (m->plans != plans || m->nplans != nplans || m->atomic_reduce != o->atomic_reduce)
        ICE("a CUDA emitter called with another module's lowering");
    return m;
}
