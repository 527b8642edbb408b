/* cuda/module.c -- the device source of a module: the preamble, then per kernel
 * its comment, template bodies and extern "C" wrappers; the K_INDEX name
 * list. */
#include "cuda_priv.h"

/* the device preamble (fusec_preamble.cuh), one string per line, embedded
 * at build time (cmake/EmbedText.cmake) */
static const char *const preamble[] = {
#include "fusec_preamble.inc"
    NULL};
/* the atomic combine's helpers (fusec_atomic.cuh), only in modules that use
 * it (--atomic-reduce) */
static const char *const atomic_preamble[] = {
#include "fusec_atomic.inc"
    NULL};

/* ------------------------------------------------------------------ */
/* Entry points.                                                       */

/* One extern "C" __global__ per variant: a call of the template body with
 * the index type and the compile-time shape of the variant.  In the nvrtc
 * target each one is guarded by its K_INDEX (base + i): fusert compiles the
 * source once per kernel with -DFUSERT_KERNEL=<K_INDEX>, which leaves that
 * wrapper alone, so only its body template is instantiated and a launch
 * pays for the one variant it picks.  Without the macro every kernel is
 * there (a whole-module compile). */
static void emit_wrappers(KCtx *c, const Variant *v, int nv, int base)
{
    Buf ps = {0}, as = {0};
    int scalar = c->k->kind == KK_REDUCE && c->k->layout == RL_SCALAR;
    int cols = cu_is_cols_scheme(c) || c->L->mid;
    /* a row kernel with column partials: every variant takes cpart (the
     * launch's arguments are the same), the register body reads it */
    const int colp = c->L->colp >= 0;
    cu_body_params(c, &ps, scalar ? ", unsigned char *scratch, unsigned char *zscratch"
                                 : cols ? ", unsigned char *scratch, unsigned char *zscratch, int nsplit"
                                 : colp ? ", unsigned char *cpart" : NULL);
    cu_body_args(c, &as, scalar ? ", scratch, zscratch" : cols ? ", scratch, zscratch, nsplit" : NULL);
    Buf asc = {0};
    cu_body_args(c, &asc, colp ? ", cpart" : NULL);
    /* the column kernel's _colp: the row kernel's partials and their rows */
    Buf psp = {0}, asp = {0};
    cu_body_params(c, &psp, ", const unsigned char *cpart, int np");
    cu_body_args(c, &asp, ", cpart, np");
    /* the middle-axes kernels' `_warp` takes their arguments, its row body
     * not the scratch */
    Buf asr = {0};
    cu_body_args(c, &asr, NULL);
    /* the windowed looped kernels take one more: wrev (cu_emit_row_body) */
    Buf psw = {0}, asw = {0};
    cu_body_params(c, &psw, colp ? ", unsigned char *cpart, int wrev" : ", int wrev");
    cu_body_args(c, &asw, ", wrev");
    int guard = c->o && c->o->target == TARGET_NVRTC;
    for (int i = 0; i < nv; i++) {
        const char *I = v[i].i64 ? "long long" : "int";
        int wl = is_wloop(&v[i]);
        const char *pd = wl ? psw.data : v[i].kind == VK_COLP ? psp.data : ps.data;
        if (guard)
            emit_line(&c->w, "#if !defined(FUSERT_KERNEL) || FUSERT_KERNEL == %d", base + i);
        if (v[i].kind == VK_ROW_C && v[i].sm)
            /* a block a row, its row in shared memory: with only the
             * block size (1024) ptxas held the windowed bf16 body to 32
             * registers and spilled 80 bytes a thread (sm_90); (1024, 1)
             * gives it 46 and no spill, and two blocks of 512 a
             * multiprocessor (launch_row_smem) */
            emit_line(&c->w, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s)", v[i].bs, 1024 / v[i].bs,
                      v[i].name, pd);
        else if (v[i].kind == VK_ROW_C && v[i].cl > 1)
            /* two blocks of 512 a multiprocessor (64 registers): one loads
             * while the other reduces and writes (layernorm's took 86
             * registers unbounded) */
            emit_line(&c->w, "extern \"C\" __global__ void __launch_bounds__(%d, %d) FZ_CLUSTER(%d) %s(%s)", v[i].bs,
                      1024 / v[i].bs, v[i].cl, v[i].name, pd);
        else if (wl && (v[i].bs < 1024 || v[i].i64))
            /* the windowed looped body in blocks of 512: at least two a
             * multiprocessor (64 registers), or it would not be taken
             * over the block of 1024.  The int64 one, one block of 1024 a
             * multiprocessor as its launch counts rows in flight: with
             * only the block size ptxas held it to 32 registers and
             * spilled (sm_90) */
            emit_line(&c->w, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s)", v[i].bs, 1024 / v[i].bs,
                      v[i].name, pd);
        else if (v[i].mb)
            emit_line(&c->w, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s)", v[i].bs, v[i].mb,
                      v[i].name, pd);
        else
            emit_line(&c->w, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s)", v[i].bs, v[i].name, pd);
        emit_line(&c->w, "{");
        switch (v[i].kind) {
        case VK_LOOP_S: emit_line(&c->w, "    %s_s_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_LOOP_V: emit_line(&c->w, "    %s_v_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_LOOP_W: emit_line(&c->w, "    %s_w_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_ROW_C: {
            char extra[32] = "";
            int ne = 0;
            if (v[i].sm) {
                emit_line(&c->w, "    %s_rs_body<%s, %d, %d%s>(%s);", c->k->name, I, v[i].bs, v[i].vw,
                          c->window ? (v[i].sh ? ", true" : ", false") : "", as.data);
                break;
            }
            if (c->window)
                ne += snprintf(extra + ne, sizeof extra - (size_t)ne, ", %s", v[i].sh ? "true" : "false");
            if (c->cluster)
                ne += snprintf(extra + ne, sizeof extra - (size_t)ne, ", %d", v[i].cl);
            if (colp)
                snprintf(extra + ne, sizeof extra - (size_t)ne, ", %s", v[i].cs ? "true" : "false");
            emit_line(&c->w, "    %s_rc_body<%s, %d, %d, %d, %d%s>(%s);", c->k->name, I, v[i].tpr, v[i].cap, v[i].bs, v[i].vw,
                      extra, asc.data);
            break;
        }
        case VK_ROW_L:
            if (v[i].vw > 1)
                emit_line(&c->w, "    %s_%s_body<%s, %d, %d, %d>(%s);", c->k->name, v[i].sh ? "rlw" : "rlv", I, v[i].tpr,
                          v[i].bs, v[i].vw, wl ? asw.data : as.data);
            else
                emit_line(&c->w, "    %s_rl_body<%s, %d, %d>(%s);", c->k->name, I, v[i].tpr, v[i].bs, asr.data);
            break;
        case VK_SCALAR: emit_line(&c->w, "    %s_body<%s, %d, %d>(%s);", c->k->name, I, v[i].bs, v[i].vw, as.data); break;
        case VK_COLS:
            emit_line(&c->w, "    %s_cols_body<%s, %d, %d%s>(%s);", c->k->name, I, v[i].vw, v[i].ws,
                      v[i].nr ? ", true" : "", as.data);
            break;
        case VK_MID: emit_line(&c->w, "    %s_mid_body<%s, %d>(%s);", c->k->name, I, v[i].vw, as.data); break;
        case VK_COLS_ROWS: emit_line(&c->w, "    %s_rows_body<%s>(%s);", c->k->name, I, as.data); break;
        case VK_COLP: emit_line(&c->w, "    %s_colp_body<%s>(%s);", c->k->name, I, asp.data); break;
        }
        emit_line(&c->w, "}");
        if (guard)
            emit_line(&c->w, "#endif");
    }
    buf_free(&ps);
    buf_free(&as);
    buf_free(&asr);
    buf_free(&psw);
    buf_free(&asw);
    buf_free(&asc);
    buf_free(&psp);
    buf_free(&asp);
}

/* cu_emit_row_body for a body whose rows are a block each (the shared-memory
 * and looped vector ones): no cluster, no rows sharing a warp, whatever
 * the kernel's other variants need (row_end is R) */
static void emit_block_row_body(KCtx *c, int cached)
{
    int sw = c->subwarp, cl = c->cluster;
    c->subwarp = c->cluster = 0;
    cu_emit_row_body(c, cached);
    c->subwarp = sw;
    c->cluster = cl;
}

/* The bodies of a row kernel: the ones its variants instantiate (the
 * lowering's cached, smem and looped vector flags), each once.  *dyn_smem:
 * FZ_DYN_SMEM is declared (before the module's first _rs_body). */
static void emit_row_bodies(KCtx *c, int *dyn_smem)
{
    const Lowering *L = c->L;
    c->subwarp = L->subwarp;
    c->window = L->window;
    c->cluster = L->cluster;
    if (L->cached && L->colp >= 0) {
        /* the register body from the kernel with its partner's column
         * reductions (Lowering.colk): its CS variants fold them */
        KCtx cc;
        cu_kctx_begin_an(&cc, L, &L->colan, c->o, c->w.out);
        cc.subwarp = L->subwarp;
        cc.window = L->window;
        cc.cluster = L->cluster;
        cu_emit_cached_row_body(&cc);
        cu_kctx_end(&cc);
    } else if (L->cached)
        cu_emit_cached_row_body(c);
    if (L->smem && !*dyn_smem) {
        buf_puts(c->w.out, "/* Dynamic shared memory (a launch's shared bytes), 16-byte aligned; the\n"
                           " * CPU emulator of the tests defines FZ_DYN_SMEM itself. */\n"
                           "#ifndef FZ_DYN_SMEM\n"
                           "extern __shared__ __align__(16) unsigned char fz_dyn_smem[];\n"
                           "#define FZ_DYN_SMEM fz_dyn_smem\n"
                           "#endif\n");
        *dyn_smem = 1;
    }
    if (L->smem) {
        c->smem = 1;
        emit_block_row_body(c, 1);
        c->smem = 0;
    }
    cu_emit_row_body(c, 0);
    /* the looped vector bodies: aligned (rlv), windowed (rlw) */
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < L->nv; i++)
            if (L->v[i].kind == VK_ROW_L && L->v[i].vw > 1 && L->v[i].sh == w) {
                c->loopvec = L->v[i].vw;
                c->loopwin = w;
                for (int j = 0; j < L->nv; j++)
                    c->loopsub |= w && L->v[j].kind == VK_ROW_L && L->v[j].sh && L->v[j].tpr > 0 && L->v[j].tpr < 32;
                emit_block_row_body(c, 0);
                c->loopvec = c->loopwin = c->loopsub = 0;
                break;
            }
}

/* One kernel: its comment, template bodies and wrappers. */
static void emit_kernel(const Lowering *L, const EmitOptions *o, Buf *out, int *dyn_smem)
{
    KCtx c;
    cu_kctx_begin(&c, L, o, out);
    buf_putc(out, '\n');
    cu_kernel_comment(&c);
    const Kernel *k = c.k;
    if (k->kind == KK_LOOP)
        cu_emit_loop_bodies(&c, L->vw);
    else if (k->side_axes && !cu_is_cols_scheme(&c))
        ICE("side reductions in a kernel that does not take the column scheme");
    else if (cu_is_cols_scheme(&c)) {
        cu_emit_cols_body(&c);
        if (k->side_axes)
            cu_emit_cols_rows_body(&c);
    }
    else if (!cu_is_row_scheme(k))
        cu_emit_scalar_body(&c);
    else
        emit_row_bodies(&c, dyn_smem);
    if (L->mid)
        cu_emit_mid_body(&c);
    if (L->colp_of >= 0)
        cu_emit_colp_body(&c);
    emit_wrappers(&c, L->v, L->nv, L->kindex);
    cu_kctx_end(&c);
}

/* The device source of a module: the preamble, then per kernel its comment,
 * template bodies and extern "C" wrappers (one per variant). */
void emit_cuda_kernels(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    const CudaModule *m = cu_module(plans, nplans, o);
    for (int i = 0; preamble[i]; i++)
        buf_puts(out, preamble[i]);
    for (int i = 0; m->any_atomic && atomic_preamble[i]; i++)
        buf_puts(out, atomic_preamble[i]);
    int dyn_smem = 0;
    for (int i = 0; i < m->nkern; i++)
        emit_kernel(&m->kern[i], o, out, &dyn_smem);
}

/* Every __global__ name of the module, in K_INDEX order (the lowering's). */
void emit_cuda_kernel_names(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    const CudaModule *m = cu_module(plans, nplans, o);
    int first = 1;
    for (int i = 0; i < m->nkern; i++)
        for (int j = 0; j < m->kern[i].nv; j++) {
            buf_printf(out, "%s\"%s\"", first ? "" : ", ", m->kern[i].v[j].name);
            first = 0;
        }
}
