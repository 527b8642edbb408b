/* cuda/loop.c -- loop kernels: grid-stride over the flat space, a vector body
 * (aligned, wrapping, broadcast-vector) and a scalar one. */
#include "cuda_priv.h"

/* ------------------------------------------------------------------ */
/* Loop kernels.                                                       */

/* Vector loop pieces: cu_decompose index `iv` and load every full access as
 * va<a><sfx>; then compute V elements and store (vo<i><sfx>). */
static void loop_vec_loads(KCtx *c, int V, const char *iv, const char *sfx, int dec)
{
    c->sfx = sfx;
    if (dec)
        cu_decompose(c, iv, -1);
    for (int a = 0; a < c->nacc; a++)
        if (cu_acc_full(c, &c->acc[a]))
            emit_line(&c->w, "const fz_vec<%s, %d> va%d%s = *(const fz_vec<%s, %d> *)(in%d + %s);", cu_stype(MDT(c, c->acc[a].node)),
                      V, a, sfx, cu_stype(MDT(c, c->acc[a].node)), V, c->inbuf[c->acc[a].node->id], iv);
    for (int a = 0; c->loopbv && a < c->nacc; a++) {
        if (!cu_acc_loopbv(c, &c->acc[a], V))
            continue;
        /* a broadcast input along the vector: whole when its pointer is
         * aligned (a uniform test; past 16 bytes, to 16 and in 16-byte
         * pieces), else an element at a time */
        const char *st = cu_stype(MDT(c, c->acc[a].node));
        int ib = c->inbuf[c->acc[a].node->id];
        Buf off = {0};
        cu_acc_offset(c, &c->acc[a], "I", &off);
        int bytes = V * dtype_size(MDT(c, c->acc[a].node));
        emit_line(&c->w, "fz_vec<%s, %d> vc%d%s;", st, V, a, sfx);
        emit_line(&c->w, "if ((unsigned long long)in%d %% %d == 0) {", ib, bytes > 16 ? 16 : bytes);
        if (bytes > 16)
            emit_line(&c->w, "    vc%d%s = fz_vec_load16<%s, %d>(in%d + %s);", a, sfx, st, V, ib, off.data);
        else
            emit_line(&c->w, "    vc%d%s = *(const fz_vec<%s, %d> *)(in%d + %s);", a, sfx, st, V, ib, off.data);
        emit_line(&c->w, "} else {");
        emit_line(&c->w, "    #pragma unroll");
        emit_line(&c->w, "    for (int j = 0; j < %d; j++)", V);
        emit_line(&c->w, "        vc%d%s.v[j] = in%d[%s + j];", a, sfx, ib, off.data);
        emit_line(&c->w, "}");
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
        cu_out_map(c, k->outputs[i], a.map);
        fullout[i] = cu_acc_full(c, &a);
        if (fullout[i])
            emit_line(&c->w, "fz_vec<%s, %d> vo%d%s;", cu_stype(MDT(c, k->outputs[i])), V, i, sfx);
    }
    /* the group indices of this copy (decomposed by loop_vec_loads) */
    for (int g = 0; g < c->ng; g++) {
        snprintf(c->giname[g], sizeof c->giname[g], "gi%d%s", g, sfx);
        c->gi[g] = c->giname[g];
    }
    if (c->ng == 1 && !c->L->dec)
        c->gi[0] = iv;
    emit_line(&c->w, "#pragma unroll");
    emit_line(&c->w, "for (int j = 0; j < %d; j++) {", V);
    cu_open_scope(c);
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
            emit_line(&c->w, g == last ? "I w%d%s = %s + j;" : "I w%d%s = %s;", g, sx, c->gi[g]);
            snprintf(c->giname[g], sizeof c->giname[g], "w%d%s", g, sx);
            c->gi[g] = c->giname[g];
        }
        for (int g = last; g >= 1; g--) {
            emit_line(&c->w, "if (w%d%s >= gs%d) {", g, sx, g);
            cu_open_scope(c);
            emit_line(&c->w, "w%d%s -= gs%d;", g, sx, g);
            emit_line(&c->w, "w%d%s += 1;", g - 1, sx);
        }
        for (int g = last; g >= 1; g--) {
            cu_close_scope(c);
        }
    } else if (c->ng > 0) {
        snprintf(inner, sizeof inner, "(%s + j)", c->gi[c->ng - 1]);
        c->gi[c->ng - 1] = inner;
    }
    for (int i = 0; i < k->noutputs; i++)
        cu_emit_store(c, i, "I");
    cu_close_scope(c);
    c->vec = 0;
    c->flat = NULL;
    for (int g = 0; g < IR_MAX_RANK; g++)
        c->gi[g] = NULL;
    for (int i = 0; i < k->noutputs && i < 64; i++)
        if (fullout[i])
            emit_line(&c->w, "*(fz_vec<%s, %d> *)(out%d + %s) = vo%d%s;", cu_stype(MDT(c, k->outputs[i])), V, i, iv, i, sfx);
    c->sfx = NULL;
}

/* The element at flat index i, one at a time: the scalar body and the
 * vector bodies' tails (dec: the space needs group indices). */
static void emit_flat_elem(KCtx *c, int dec)
{
    c->flat = "i";
    if (dec)
        cu_decompose(c, "i", -1);
    else if (c->ng == 1)
        c->gi[0] = "i";
    for (int i = 0; i < c->k->noutputs; i++)
        cu_emit_store(c, i, "I");
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
    cu_reset_point(c);
    emit_line(&c->w, "template <class I>");
    emit_line(&c->w, "static __device__ __forceinline__ void %s_%s_body(%s)", k->name, wrap ? "w" : "v", ps);
    emit_line(&c->w, "{");
    cu_open_scope(c);
    cu_emit_group_sizes(c);
    emit_line(&c->w, "const I n = %s;", n);
    if (tail)
        emit_line(&c->w, "const I nv = n / %d * %d; /* the rest is the scalar tail */", V, V);
    else
        emit_line(&c->w, "const I nv = n; /* the stub checked that rows hold whole vectors */");
    emit_line(&c->w, "const I stride = (I)gridDim.x * blockDim.x * %d;", V);
    emit_line(&c->w, "I i = ((I)blockIdx.x * blockDim.x + threadIdx.x) * %d;", V);
    emit_line(&c->w, "/* two vectors per step: both loads are in flight before either is used */");
    emit_line(&c->w, "for (; i + stride < nv; i += 2 * stride) {");
    cu_open_scope(c);
    emit_line(&c->w, "const I i_b = i + stride;");
    c->loopbv = wrap ? 0 : V;
    loop_vec_loads(c, V, "i", "", dec);
    loop_vec_loads(c, V, "i_b", "_b", dec);
    c->wrapv = wrap;
    loop_vec_compute(c, V, "i", "");
    loop_vec_compute(c, V, "i_b", "_b");
    c->wrapv = 0;
    cu_close_scope(c);
    emit_line(&c->w, "if (i < nv) {");
    cu_open_scope(c);
    loop_vec_loads(c, V, "i", "", dec);
    c->wrapv = wrap;
    loop_vec_compute(c, V, "i", "");
    c->wrapv = 0;
    c->loopbv = 0;
    cu_close_scope(c);
    if (tail) {
        emit_line(&c->w, "for (I i = nv + (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {");
        cu_open_scope(c);
        cu_reset_point(c);
        emit_flat_elem(c, dec);
        cu_close_scope(c);
    }
    cu_close_scope(c);
}

/* Loop kernels: a scalar body (grid-stride, one element per step) and,
 * when some access is full, a vector body (two V-wide vectors per step, and a
 * scalar tail when the space is one group). */
void cu_emit_loop_bodies(KCtx *c, int V)
{
    const Kernel *k = c->k;
    Buf ps = {0};
    cu_body_params(c, &ps, NULL);
    int dec = c->L->dec;
    /* scalar body */
    emit_line(&c->w, "template <class I>");
    emit_line(&c->w, "static __device__ __forceinline__ void %s_s_body(%s)", k->name, ps.data);
    emit_line(&c->w, "{");
    cu_open_scope(c);
    cu_reset_point(c);
    cu_emit_group_sizes(c);
    Buf n = {0};
    cu_groups_product(c, -1, &n);
    emit_line(&c->w, "const I n = %s;", n.data);
    emit_line(&c->w, "const I stride = (I)gridDim.x * blockDim.x;");
    emit_line(&c->w, "for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {");
    cu_open_scope(c);
    emit_flat_elem(c, dec);
    cu_close_scope(c);
    cu_close_scope(c);
    if (V > 1)
        emit_loop_vec_body(c, V, ps.data, n.data, dec, 0);
    if (c->L->wrap)
        emit_loop_vec_body(c, V, ps.data, n.data, dec, 1);
    buf_free(&n);
    buf_free(&ps);
}
