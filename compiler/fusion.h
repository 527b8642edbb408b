/* fusion.h -- the kernel plan: which IR nodes share a kernel, and why not.
 *
 * fuse_plan partitions the nodes of one IrFunc into kernels of three kinds
 * (docs/fusion.md): loop, reduce, row-persistent.  Every decision is
 * deterministic.  Each rejected merge is recorded with its reason so that
 * --emit=fusion can explain the plan.
 *
 * The contract with the emitters (what a Kernel means):
 *
 * values   every node the kernel computes, in IR (topological) order.  Never
 *          params.  Constants and views (unsqueeze) used by the kernel are
 *          listed (they are free).  A cheap elementwise node may be listed in
 *          SEVERAL kernels: each recomputes it from its own inputs instead of
 *          reading a materialised copy; it is still written by at most one.
 * inputs   the nodes the kernel reads from device memory: tensor params and
 *          nodes written by EARLIER kernels (intermediates or results),
 *          in node-id order, each once.  Scalar params (IrParam.is_tensor 0)
 *          are NOT inputs: they come through the launch stub's `scalars`.
 *          Every operand of a value is a value, an input, a scalar param or
 *          a constant -- nothing else.
 * outputs  the nodes the kernel writes, with out_result[i] saying where:
 *          the index of the fn result it is (IrFunc.results), or -1 for an
 *          intermediate (a buffer from Plan.intermediates).  A node that is
 *          two results is listed twice.  An output may be an input (a param
 *          returned as a result: a copy) -- then it is not in values --
 *          or a scalar param (fill the result with its value).  A view
 *          is never an intermediate (views are always recomputed by their
 *          users), though it may be a result.
 *          Shapes: a loop kernel's outputs have the shape of space; a
 *          reduce or row kernel's have either the shape of space (FL_ELEM,
 *          e.g. y = 2*x + 1 riding along sum(x)) or the reduced shape, with
 *          or without keepdims' 1s (FL_RED: reductions, epilogues, per-row
 *          values such as a layernorm's mean and rstd).
 *          Buffers for an input node: a tensor param's pointer; a result
 *          node's result buffer (the first result naming it); otherwise its
 *          intermediate buffer.
 * space    loop: the shape every output has (the grid iterates over it).
 *          reduce/row: the shape of the reduced operand(s); every reduction
 *          in the kernel has exactly this operand shape and reduces the axes
 *          reduce_axes (bit i = space dim i), except a column kernel's
 *          side reductions, which reduce side_axes (below).
 * level    per value (same indexing as values), where it is evaluated:
 *          FL_ELEM: once per element of space (loop kernels: everything;
 *          reduce: the prologue feeding the reductions, plus "ride-along"
 *          outputs of shape space; row: per element of a row).
 *          FL_RED: once per reduced element (reduce: the reductions
 *          themselves and the epilogue applied before the final write; row:
 *          per-row values like max, mean, rsqrt(var + eps)).  A value may
 *          carry both bits (a small tensor used in prologue and epilogue).
 *          Operands of a value are indexed by IR broadcasting (IrUse.bcast,
 *          right alignment) and unsqueeze (drop its axis), as in ir.h.
 * layout   reduce and row kernels (RL_NONE for loop kernels):
 *          RL_SCALAR all axes; RL_ROWS a suffix of the dims (inner,
 *          contiguous); RL_COLS a prefix; RL_MIDDLE any other set (kept
 *          dims on both sides, or axes (0, 2) of three dims).
 *          Row kernels are always RL_ROWS.
 * looped   row kernels only.  0: the row length (product of the reduced
 *          dims) is static and <= FUSE_ROW_ONCHIP_MAX: keep the row on chip
 *          (registers), read once.  1: the row length is symbolic or longer:
 *          the emitter must provide a version that re-reads the row from
 *          global memory inside the kernel (one pass per chained
 *          reduction); for a symbolic length, or a static one up to
 *          FUSE_ROW_CLUSTER_MAX, it may also emit on-chip versions and
 *          pick one at launch when the row fits.  2: re-read the
 *          row, never keep it on chip, whatever its length: the row buffer
 *          would break the register budget (one looped kernel rather than
 *          a split into several).
 * est_registers  the model of fuse_estimate_registers (below); the emitter
 *          may pass it to __launch_bounds__ but need not.
 */
#ifndef FUSEC_FUSION_H
#define FUSEC_FUSION_H
#include "ir.h"

typedef enum {
    KK_LOOP,   /* one iteration space: elementwise and broadcast chains */
    KK_REDUCE, /* reductions (+ prologue in the loads, epilogue at the write) */
    KK_ROW,    /* row-persistent: row reductions broadcast back over the row */
} KernelKind;

typedef enum {
    RL_NONE,   /* loop kernels */
    RL_SCALAR, /* reduce everything to one value */
    RL_ROWS,   /* reduce inner (contiguous) axes */
    RL_COLS,   /* reduce outer axes */
    RL_MIDDLE, /* reduce axes with kept dims on both sides */
} ReduceLayout;

typedef struct Kernel {
    int index;
    const char *name;      /* "<fn>_k<index>_<kind>", stable */
    KernelKind kind;
    ReduceLayout layout;
    IrNode **values;       /* nodes computed here, topological order (no params) */
    int nvalues;
    IrNode **inputs;       /* nodes read from device memory: params, or outputs of earlier kernels */
    int ninputs;
    IrNode **outputs;      /* nodes written to device memory (results or intermediates) */
    int noutputs;
    /* the iteration space: loop kernels, the output shape; reduce and row
     * kernels, the shape of the reduced operand, with reduce_axes over it */
    IrShape space;
    uint8_t reduce_axes;
    /* KK_REDUCE over columns (RL_COLS) only, else 0: the axes, the
     * complement of reduce_axes, of the row reductions that ride along in
     * the same pass ("side" reductions: each block folds its rows' elements
     * of its columns and stores a partial state a row, which a second
     * launch of the kernel adds up in column order, then applies their
     * epilogue: the per-row values computed from them). */
    uint8_t side_axes;
    int looped;            /* KK_ROW: the row does not fit on chip; re-read inside the kernel */
    int est_registers;
    Loc loc;               /* source span of the kernel's first value */
    /* additive fields (fusion helper), see the contract above */
    int *out_result;       /* per output: fn result index, or -1 (intermediate) */
    uint8_t *level;        /* per value: FL_ELEM | FL_RED */
    /* report annotations (NULL: not printed), set by main.c from
     * emit_cuda_combine when --atomic-reduce is given: how the kernel
     * combines its blocks' reduction partials, "atomic" or "ordered", and
     * for "ordered" why atomics do not apply */
    const char *combine;
    const char *combine_why;
} Kernel;

enum { FL_ELEM = 1, FL_RED = 2 };
/* The most one kernel holds, beside the register budget: reductions and
 * outputs (the code generator keeps them in fixed tables) and values
 * (its code, and the recursion that writes it, stay bounded).  A merge
 * past one is refused with reason "size". */
#define FUSE_KERNEL_MAX_REDUCTIONS 64
#define FUSE_KERNEL_MAX_OUTPUTS 64
#define FUSE_KERNEL_MAX_VALUES 1024
/* Longest static row kept on chip by a row kernel (elements). */
#define FUSE_ROW_ONCHIP_MAX 16384
/* Longest row any on-chip variant picked at launch holds (elements): past
 * FUSE_ROW_ONCHIP_MAX over one block of 1024 threads or the blocks of a
 * thread block cluster (sm_90 on), 32 elements a thread either way. */
#define FUSE_ROW_CLUSTER_MAX 262144
/* Threads that share a static on-chip row of len elements (8 to 512), as
 * the register estimate assumes and the emitter launches; elem_bytes is
 * the widest element of the row in memory. */
int fuse_row_threads(int64_t len, int elem_bytes);

typedef struct Rejection {
    IrNode *producer, *consumer; /* the merge that was not made */
    const char *reason;          /* words for people, e.g. "register estimate 142 > budget 128" */
    const char *code;            /* stable key for tools: "grid-dependency", "registers", ... */
} Rejection;
/* The codes:
 *   grid-dependency     a full or outer-axis reduction needed by every
 *                       element of its consumer's kernel
 *   space               the two iterate over different spaces or axes
 *   sibling-axes        reductions of one input over different axes that
 *                       stay in kernels of their own, each reading it
 *   registers           the merged kernel would exceed --max-registers
 *   multiple-consumers  a reduction used by several kernels: computed once
 *                       in a kernel of its own and stored
 *   recompute           an elementwise value used by several kernels that
 *                       is too dear to recompute in each: stored once
 * producer is the node that was not fused, consumer its user in the kernel
 * it did not join. */

typedef struct Plan {
    IrFunc *fn;
    Kernel *kernels;       /* in launch order */
    int nkernels;
    Rejection *rejected;
    int nrejected;
    IrNode **intermediates; /* values written by one kernel and read by a later
                               one that are not fn results: the workspace
                               buffers, in node order, each of its own
                               dtype and shape */
    int nintermediates;
} Plan;

typedef struct FusionOptions {
    int no_fusion;     /* one kernel per op: the baseline */
    int max_registers; /* per-thread budget; default 128 */
    int expect_kernels;/* --expect-kernels: -1 none; overridden by @kernels(N) */
} FusionOptions;

/* Returns NULL after a diagnostic when a fusion contract cannot be met.
 * With no_fusion: one kernel per non-leaf node, except views, which are
 * folded into (recomputed by) their consumers; a view that is itself a
 * result gets its own copy kernel.  Rejections are not recorded then. */
Plan *fuse_plan(Arena *a, IrFunc *f, const FusionOptions *opt);

/* The register model, per thread (monotone: adding a value never lowers it):
 *   16 (base: indices, loop counters)
 *   + 2 per input and per output (a 64-bit pointer)
 *   + W * L, L = max scalars live at once, walking the values in order: at
 *     value i, the larger of live-in (read at i, defined before) and
 *     live-out (defined up to i and read after, plus value i).  A value
 *     lives from its definition, an input from its first read -- from the
 *     start in loop and reduce kernels, which issue all loads first -- to
 *     its last use; constants, views and scalar params are free.
 *     W = 4 for loop and reduce kernels (4-wide vector accesses), 1 for row
 *     kernels
 *   + accumulators: 1 per reduction, 2 for argmax/argmin/logsumexp, 3 for
 *     var/std (Welford)
 *   + row kernels: B * ceil(R / T) for the row buffer, R = static row
 *     length (1024 when symbolic: the on-chip variant; 0 when looped and
 *     static, or looped 2), T = 32 threads per row up to 1024, 128 up to
 *     4096, else 256 (as compiler/cuda); B = inputs of shape space.
 * Checked against ptxas (sm_90, -Xptxas -v) on the examples: within about
 * 10 registers of the larger variant, except that 4-wide loop kernels with
 * many inputs run higher (adam_step: ~50 here, 64 for ptxas). */
int fuse_estimate_registers(const IrFunc *f, const Kernel *k);

/* The column kernel whose reductions the row kernel ki can fold while it
 * writes its rows, as per-block column partials ("column partials",
 * docs/fusion.md), or -1.  It is a later KK_REDUCE kernel over the same
 * space that reduces exactly the row kernel's kept axes with sums, means,
 * maxima or minima, and reads nothing but what the row kernel reads or
 * computes (no scalar param of its own).  The plan keeps both kernels: the
 * code generator adds the partials where a variant of the row kernel holds
 * its columns in registers, and the column kernel then only combines them;
 * otherwise the column kernel reads its inputs again. */
int fuse_colp_partner(const Plan *p, int ki);

/* The dtype value n has in device memory when a kernel reads or writes it:
 * its own for params and results (the caller's buffers), f32 for an f16 or
 * bf16 intermediate (a buffer of the workspace).  An intermediate is rounded
 * only where the fused kernel would round it: at casts, not at the kernel
 * boundary, so a split (or --no-fusion) gives the fused kernel's results. */
DType fuse_mem_dtype(const IrFunc *f, const IrNode *n);

/* "loop", "reduce" or "row": the suffix of kernel names, the word in reports. */
const char *fuse_kind_name(KernelKind k);

/* Reports (report.c; main.c calls these for --emit=plan|fusion|dot). */
void fuse_print_json(FILE *out, Plan **plans, int nplans);
void fuse_print_text(FILE *out, Plan **plans, int nplans);
void fuse_print_dot(FILE *out, Plan **plans, int nplans);

#endif
