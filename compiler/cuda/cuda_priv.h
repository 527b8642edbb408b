/* cuda_priv.h -- what the files of compiler/cuda/ share: the kernel
 * context, the variant type and the functions one file calls in another.
 * Private to compiler/cuda/; the public interface is emit.h.
 *
 * Files, each calling only those above it: context.c, expr.c, schedule.c,
 * then the bodies (loop.c, row.c, reduce.c), then module.c (the kernel
 * source) and launch.c (the launch stubs).  The device code every module
 * starts with is fusec_preamble.cuh (and fusec_atomic.cuh with
 * --atomic-reduce), embedded at build time.
 *
 * Every planned kernel is lowered once (struct Lowering, built by
 * emit_cuda_lower in schedule.c): its analysis, variants, combine mode and
 * vector width.  Each text of the kernel (its source, its name-list entry,
 * its launch stub) starts a KCtx from that lowering (cu_kctx_begin) and
 * decides nothing again.
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
 *             RL_MIDDLE over [outer, kept, inner] (reduced outer and inner):
 *             a block an output and split, 16-byte reads along the inner
 *             rows, a last-block-done combine per output (mid).
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
#ifndef FUSEC_CUDA_PRIV_H
#define FUSEC_CUDA_PRIV_H
#include "emit.h"
#include "emit_writer.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct Lowering Lowering;

/* A kernel being written: the analysis of cu_kctx_init (roles, accesses,
 * groups), then the state of the text being written (values in scope, how
 * the current point is named, the body's modes).  cu_kctx_begin makes one
 * from the kernel's lowering for each text (kernel source, launch stub). */
typedef struct KCtx {
    const IrFunc *f;
    const Kernel *k;
    const EmitOptions *o;
    const Lowering *L; /* the kernel's lowering (NULL while it is built) */
    Emitter w;         /* the text being written */
    /* node roles, by node id */
    signed char *role; /* 0 none, 'v' value, 'i' input */
    /* by node id: 1 where the value is computed from a bf16 param, whose
     * results are held to bf16's tolerance (op_expr's narrow) */
    unsigned char *from_bf16;
    /* by node id: 1 for a column kernel's side reductions and the per-row
     * values computed from them (cu_is_side) */
    unsigned char *sidev;
    int *inbuf;        /* bufs index of an input node, -1 */
    /* by node id: 1 + the deepest in-kernel reduction a value's own
     * reduction (or, for an elementwise value, the deepest it reads)
     * depends on; 0 for what the kernel does not compute (cu_red_level) */
    int *redlvl;
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
                                  * broadcast inputs read vc<a>.v[j] (cu_acc_loopbv) */
    int rowcache;                /* row mode with cached accesses: x_c<a>[k] */
    int hoistvb;                 /* the register body holds its row-only vectors in cb<a> (row_vec_hoist) */
    int subwarp;                 /* a cached row variant shares warps between rows
                                  * (TPR < 32): loops and shuffles stay warp-uniform */
    int vecstore;                /* row mode: full element outputs go to vo<i>.v[j] */
    int rowvw;                   /* row mode: row-only inputs read vb<a>.v[j] (cu_acc_rowvec) */
    int window;                  /* the cached row body takes SH: rows at any element
                                  * offset read as aligned vectors (row_windowable) */
    int cluster;                 /* the cached row body takes CL: a row split over the
                                  * CL blocks of a cluster, [rlo, rhi) each */
    int smem;                    /* the cached row body keeps the row in dynamic shared
                                  * memory (`_rs_body`, the `_rsm` variants): CAP is
                                  * the row's, element k of a lane at xc<a>[k * 32]
                                  * (each warp holds its own run) */
    int loopvec;                 /* the looped row body reads V-element vectors
                                  * (`_rlv_body`, the `_blockv` variant) */
    int loopwin;                 /* ... at any element offset: windowed vectors
                                  * (`_rlw_body`, the `_blockw` variant) */
    int loopvld;                 /* its element loop: row-shaped inputs read t<a>.v[j] */
    int loopsub;                 /* ... and rows may share a warp (TPRC < 32, a
                                  * reduction's _sub4w, _sub8w): loops stay warp-uniform */
    int lsevec;                  /* ... and a logsumexp's elements go to l<id>[j],
                                  * folded a vector at a time (R::updv) */
    int varvec;                  /* ... and a var's or std's to w<id>[j], likewise */
    const char *foldidx;         /* the index of those arrays where not "[j]": a column
                                  * kernel's rows of a fold, "[u]" */
    int lsecols;                 /* a column kernel's fold: a logsumexp's elements go
                                  * to l<id>[column][u] (the accumulator's index, then u) */
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
    int xc_rewrote;              /* row_cache_rewrite stored a computed value over the cache */
    int xc_pack;                 /* register row caches of 2-byte floats hold them
                                  * as stored, two to a word (cu_xc_packed) */
} KCtx;

/* The dtype of a kernel input or output in device memory: its own, except
 * that f16 and bf16 intermediates (stored by one kernel for another) are
 * kept in f32, so that splitting a fn into kernels rounds nothing that the
 * fused kernel keeps in f32 registers (fuse_mem_dtype, fusion.h). */
#define MDT(c, n) fuse_mem_dtype((c)->f, (n))


/* ------------------------------------------------------------------ */
/* Variants: the __global__ functions of one kernel, in K_INDEX order. */

typedef enum { VK_LOOP_S, VK_LOOP_V, VK_LOOP_W, VK_ROW_C, VK_ROW_L, VK_SCALAR, VK_COLS, VK_MID, VK_COLS_ROWS, VK_COLP } VariantKind;

/* _cols_n: the most columns whose element-wise tile leaves a warp room for
 * two rows a step (cu_emit_cols_body, launch_cols) */
enum { COLS_NARROW_MAX = 16 };
/* The blocks of 256 a multiprocessor that a column kernel's split counts
 * in a wave (cols_split_bps) unless its launch bound states more; the
 * vector tiles of light states ask for them (plan_cols). */
enum { COLS_WAVE_BPS = 4 };

typedef struct Variant {
    VariantKind kind;
    int i64;  /* int64 indices */
    int tpr;  /* row kernels: threads per row (0: a row a block, its width set at launch) */
    int cap;  /* cached row kernels: elements per thread */
    int bs;   /* threads per block */
    int vw;   /* cached row kernels: elements per vector access */
    int sh;   /* cached row kernels: windowed (SH), rows at any element offset */
    int cl;   /* cached row kernels: blocks per row, one thread block cluster (1: none) */
    int sm;   /* cached row kernels: the row in dynamic shared memory (cap 0: sized at launch) */
    int ws;   /* column kernels: warps a tile of 32 threads' columns (1 or 8, fzk_cols_ws) */
    int nr;   /* column kernels: a warp takes 32 / nI rows a step over at most COLS_NARROW_MAX columns (_cols_n) */
    int mb;   /* cached row kernels: blocks of bs a multiprocessor its launch bound asks for (0: none) */
    int cs;   /* cached row kernels: folds the column partials of the kernel's partner (Lowering.colp) */
    char name[200];
} Variant;

/* The windowed looped row kernels (_blockw, _blockw_i64): the
 * only variants that take wrev, after the others' arguments */
static inline int is_wloop(const Variant *v) { return v->kind == VK_ROW_L && v->sh; }

/* The lowering of one planned kernel: how it becomes CUDA, decided once
 * (cu_lower_kernel, schedule.c) and read by every writer: the kernel
 * source, the K_INDEX name list, the launch stubs and the fusion report
 * (emit_cuda_combine).  Nothing after it decides again. */
struct Lowering {
    KCtx an;             /* the analysis: maps, accesses, groups; writes nothing */
    int kindex;          /* K_INDEX of v[0] in the module */
    Variant v[MAX_VARIANTS]; /* the __global__ functions, in K_INDEX order */
    int nv;
    Combine combine;     /* how blocks combine reduction partials */
    char why[160];       /* ORDERED under --atomic-reduce: the reason, else "" */
    int vw;              /* the vector width of the kernel's scheme: loop
                          * (16 bytes of the widest full access), column
                          * (innermost group), full reduction, or on-chip row;
                          * 1: no vector variant */
    int dec;             /* the flat index is decomposed into group indices */
    int wrap;            /* loop: rows that are not whole vectors take the
                          * wrapping vector body (_vw) */
    int wloop;           /* a windowed looped row variant, which takes wrev */
    int mid;             /* the middle-axes scheme (cu_emit_mid_body): groups
                          * [outer reduced, kept..., inner reduced] */
    /* row kernels: which bodies the variants instantiate */
    int cached;          /* the register-cached body (_rc_body) */
    int smem;            /* the shared-memory body (_rs_body) */
    int subwarp;         /* a cached variant shares warps between rows (TPR < 32) */
    int window;          /* a cached variant is windowed (SH) */
    int cluster;         /* a cached variant spans a thread block cluster */
    /* column partials (fuse_colp_partner): a row kernel's partner, the
     * column kernel whose reductions its cs variants fold (module index,
     * -1 none), with colk the row kernel plus those reductions and what
     * they read (their epilogue left out), colan its analysis; a column
     * kernel's colp_of, the row kernel whose partials its _colp variant
     * combines (-1 none) */
    int colp, colp_of;
    /* the launch stubs' partials arguments (emit_host.c passes them for
     * every pair fuse_colp_partner names, partials or not) */
    int colp_sig, colp_of_sig;
    Kernel colk;
    KCtx colan;
};

/* The most state words of its columns a cs variant's thread holds (CAP
 * times the words of a column's states): 32 registers.  Its grid
 * (fzk_colp_grid) bounds the partial rows it leaves. */
enum { COLP_MAX_WORDS = 32 };
/* columns a block of the _colp variant takes (cu_emit_colp_body) */
enum { COLP_TILE = 8 };

/* The lowering of a module: every kernel of every plan, in K_INDEX order. */
struct CudaModule {
    Plan **plans;
    int nplans;
    int atomic_reduce;   /* built for --atomic-reduce */
    Lowering *kern;      /* plans, then kernels, in order */
    int nkern;
    int nglobal;         /* __global__ functions in the module */
    int any_atomic;      /* some kernel combines with atomics: the atomic helpers */
};

/* Rows past the register-held variants, up to what a block's shared memory
 * holds (the launcher asks the device): a block a row, the row read once
 * into dynamic shared memory, then reduced and written from there.
 * Without it odd rows past 16384 (a vocabulary of 50257) and rows where no
 * cluster launch is possible (before sm_90) took the looped kernel, which
 * reads the row from memory once per reduction round and once more to
 * write it.  _rsm: rows of whole aligned vectors; _rsmw: windowed
 * (row_windowable), rows at any element offset.  Blocks of 512 threads
 * where two rows fit a multiprocessor's shared memory, else of
 * 1024.  On the H200 (fusec symbolic, 2^26 f32
 * elements, rows of 16387 / 25001 / 40001 / 50257, us): softmax looped
 * 316 / 348 / 379 / 430, 1024 threads 353 / 326 / 286 / 293, 512 threads
 * 244 / 236 / 351 / 366; layernorm 329 / 355 / 382 / 439, 344 / 340 / 294
 * / 312, 247 / 242 / 386 / 408; rmsnorm 255 / 281 / 312 / 348, 261 / 256 /
 * 238 / 248, 211 / 232 / 329 / 350.  2-byte floats are held as stored
 * (cu_xc_raw), converted where read: held as f32 they were slower than the
 * looped kernel in bf16 (softmax 224 / 237 / 258 / 252 against 158 / 217 /
 * 237 / 254); as stored, with whole vectors unchecked (row_split_loop),
 * 189 / 199 / 164 / 158.  With a branch around each shared-memory load
 * (the range checks) the kernel is busy issuing rather than waiting on
 * memory (ncu, bf16 at 50257: SM throughput 70%, DRAM 22%; f32 at 16387:
 * DRAM 44%, 11.6 cycles an issued instruction, 3.7 of them on long
 * scoreboard); without them on whole vectors f32 softmax takes 190 / 215 /
 * 266 / 261 us against 246 / 238 / 288 / 295.  The windowed looped kernel
 * with int indices comes first where its rows in flight fit L2
 * (host_row_wloop_fit), which leaves these to longer rows or smaller L2s. */
enum {
    /* room left for the kernel's static shared memory (fz_block_reduce's
     * warp partials, 32 states a reduction) */
    SMEM_ROW_STATIC = 4096,
    /* the launcher asks the device only when the row could fit the
     * largest opt-in limit (sm_90: 227 KiB) */
    SMEM_ROW_MAX_OPTIN = 232448
};

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
    /* a column kernel's side reductions: folded into s<id> per row step,
     * with sidx the element's column index (argmax's) */
    const IrNode **side;
    int nside;
    const char *sidx;
    /* a cached row's logsumexp folds in two sweeps (row_rounds): 1, the
     * sweep that takes the max (R::upd_max); 2, the one that adds exp
     * against it (R::upd_sum); 0, one sweep (R::upd) */
    int lse_sweep;
};

/* Reductions over rows of at most RED_SUB_ROW_BYTES (the `_sub4w` and
 * `_sub8w` variants): 4 or 8 lanes a row, 8 or 4 rows a warp.  A row's
 * states fold in two or three shuffle steps, each serving every row of the
 * warp, where a warp a row takes five for one.  The launcher takes the
 * fewest lanes whose share of a row (its bytes across the row-shaped
 * inputs over the lanes) is at most RED_SUB_BYTES_PER_STATE times the
 * bytes of the kernel's reduction states: fewer lanes shorten the folds
 * and lengthen each lane's dependent chain of loads, and the folds weigh
 * more the larger the states (H100, 2^25 elements: bf16 row statistics
 * over rows of 96 took 53.6 us with 4 lanes, 120.3 with 16, 230.9 with a
 * warp; a bf16 sum over rows of 512 34.0 with 8 lanes, 42.5 with 4). */
enum { RED_SUB_ROW_BYTES = 1024, RED_SUB_BYTES_PER_STATE = 16 };

/* SCALAR_MAX_BLOCKS: the most chunks (and partial slots) of a full
 * reduction; below it, chunks of up to SCALAR_CHUNK_STEPS steps while
 * SCALAR_MIN_BLOCKS blocks remain (cu_scalar_chunk_steps) */
enum {
    SCALAR_MAX_BLOCKS = 2048,
    SCALAR_CHUNK_STEPS = 16,
    SCALAR_MIN_BLOCKS = 512,
    SCALAR_SLOT = 32,
    SCALAR_HEAD = 256
};

/* ---- context.c ----------------------------------------------------------- */
void cu_open_scope(KCtx *c);
void cu_close_scope(KCtx *c);
const char *cu_ctype(DType t);
const char *cu_stype(DType t);
DType cu_cdtype(DType t);
void cu_load_conv(Buf *b, DType t, const char *e);
void cu_store_conv(Buf *b, DType t, const char *e);
void cu_put_ident(Buf *b, const char *s);
void cu_span_host(const KCtx *c, int a, int b, Buf *out);
void cu_operand_map(const IrNode *n, int k, const int8_t *nmap, int8_t *umap);
void cu_space_map(const KCtx *c, const IrNode *n, int8_t *map);
void cu_out_map(const KCtx *c, const IrNode *n, int8_t *map);
int cu_value_index(const KCtx *c, const IrNode *n);
int cu_is_scalar_param(const KCtx *c, const IrNode *n);
int cu_map_eq(const IrNode *n, const int8_t *a, const int8_t *b);
/* a set of (node, map) pairs with an int each, for walks that visit a
 * shared value once (context.c) */
typedef struct NodeMapSet {
    int *head; /* per node id: its first entry, -1 none */
    struct NodeMapEntry {
        int8_t map[IR_MAX_RANK];
        int val, next;
    } *e;
    int n, cap;
} NodeMapSet;
void cu_pairs_init(NodeMapSet *s, const IrFunc *f);
int cu_pairs_add(NodeMapSet *s, const IrNode *n, const int8_t *map, int *val);
void cu_pairs_set(NodeMapSet *s, const IrNode *n, const int8_t *map, int val);
void cu_pairs_free(NodeMapSet *s);
int cu_map_has_red(const KCtx *c, const IrNode *n, const int8_t *map);
int cu_acc_full(const KCtx *c, const Access *a);
int cu_acc_cached(const KCtx *c, const Access *a);
int cu_acc_reduced(const KCtx *c, const Access *a);
void cu_xc_ref(const KCtx *c, Buf *b, int a, const char *k);
void cu_xc_store(const KCtx *c, Buf *b, int a, const char *k, const char *v);
int cu_xc_raw(const KCtx *c, int a);
int cu_xc_packed(const KCtx *c, int a);
int cu_row_cache_narrow(const KCtx *c);
int cu_xc_bytes(const KCtx *c, int a);
void cu_xc_value(const KCtx *c, int a, const char *e, Buf *cv);
int cu_acc_per_column(const KCtx *c, const Access *a);
int cu_acc_rowvec(const KCtx *c, const Access *a, int vw);
int cu_acc_loopbv(const KCtx *c, const Access *a, int V);
int cu_acc_index(const KCtx *c, const IrNode *n, const int8_t *map);
void cu_acc_offset(const KCtx *c, const Access *a, const char *itype, Buf *b);
void cu_kctx_init(KCtx *c, const IrFunc *f, const Kernel *k);
void cu_kctx_free(KCtx *c);
void cu_kctx_begin(KCtx *c, const Lowering *L, const EmitOptions *o, Buf *out);
void cu_kctx_begin_an(KCtx *c, const Lowering *L, const KCtx *an, const EmitOptions *o, Buf *out);
void cu_kctx_end(KCtx *c);
void cu_host_common_args(KCtx *c, Buf *decl, Buf *args);
void cu_kernel_comment(KCtx *c);
void cu_emit_group_sizes(KCtx *c);
void cu_product_of(const KCtx *c, int red, const char *one, Buf *b);
void cu_groups_product(const KCtx *c, int red, Buf *b);
void cu_decompose(KCtx *c, const char *flat, int red);
void cu_decompose_list(KCtx *c, const char *flat, const int *gl, int n);
void cu_body_params(KCtx *c, Buf *b, const char *extra);
void cu_body_args(KCtx *c, Buf *b, const char *extra);
void cu_reset_point(KCtx *c);
int cu_is_side_red(const KCtx *c, const IrNode *n);
int cu_is_side(const KCtx *c, const IrNode *n);
void cu_colp_next(KCtx *c, int id, const char *rows, const char *len);

/* ---- expr.c -------------------------------------------------------------- */
const char *cu_emit_value(KCtx *c, const IrNode *n, const int8_t *map);
void cu_emit_store(KCtx *c, int i, const char *itype);
int cu_red_is_welford(const IrNode *n);
int cu_red_is_lse(const IrNode *n);
void cu_red_type(const KCtx *c, const IrNode *n, Buf *b);
int cu_lse_hw(const KCtx *c, const IrNode *n);
void cu_atomic_type(const IrNode *n, Buf *b);
DType cu_red_acc_dtype(const IrNode *n);
void cu_red_elem(const IrNode *n, const char *v, Buf *b);
int cu_red_level(KCtx *c, const IrNode *n, int top);
int cu_depends_on_red(KCtx *c, const IrNode *n);
int cu_red_rounds(KCtx *c);
int cu_out_row_pass(KCtx *c, int i, int rounds);
void cu_hoist(KCtx *c, const IrNode *n, const int8_t *map);
void cu_out_map_of(KCtx *c, int i, int8_t *m);
int cu_out_is_elem(KCtx *c, int i);
void cu_finish_reduction(KCtx *c, const IrNode *r, const char *sub, const char *count);
int cu_red_state_bytes(const IrNode *n);

/* ---- schedule.c ---------------------------------------------------------- */
int cu_loop_light(const KCtx *c);
int cu_cols_split(const KCtx *c, int *o_end, int *r_end);
int cu_is_cols_scheme(const KCtx *c);
int cu_is_row_scheme(const Kernel *k);
int cu_row_read_bytes(KCtx *c);
int cu_smem_elem_bytes(KCtx *c);
int cu_row_shaped(KCtx *c, int i, Access *x, char *ptr, size_t ptrlen);
int cu_row_win_apart(KCtx *c, int a);
int cu_row_elem_bytes(KCtx *c);
int64_t cu_static_space_len(const KCtx *c);
int64_t cu_scalar_chunk_steps(int64_t nv, int per);
int cu_cols_small_states(const IrNode *const *reds, int nreds);
int cu_cols_slot(const KCtx *c);
/* o->cuda, checked to be the lowering of these plans with these options */
const CudaModule *cu_module(Plan **plans, int nplans, const EmitOptions *o);

/* ---- loop.c -------------------------------------------------------------- */
void cu_emit_loop_bodies(KCtx *c, int V);

/* ---- row.c --------------------------------------------------------------- */
void cu_round_elem(KCtx *c, void *vctx);
void cu_emit_row_body(KCtx *c, int cached);
void cu_emit_cached_row_body(KCtx *c);

/* ---- reduce.c ------------------------------------------------------------ */
void cu_emit_scalar_body(KCtx *c);
void cu_emit_cols_body(KCtx *c);
void cu_emit_mid_body(KCtx *c);
void cu_emit_cols_rows_body(KCtx *c);
void cu_emit_colp_body(KCtx *c);
void cu_host_side_bytes(KCtx *c, Buf *b);
int cu_ncol_reds(const KCtx *c);

#endif
