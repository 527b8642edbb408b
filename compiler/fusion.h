/* fusion.h -- the kernel plan: which IR nodes share a kernel, and why not.
 *
 * fuse_plan partitions the nodes of one IrFunc into kernels of three kinds
 * (DESIGN.md): loop, reduce, row-persistent.  Every decision is
 * deterministic.  Each rejected merge is recorded with its reason so that
 * --emit=fusion can explain the plan. */
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
    int looped;            /* KK_ROW: the row does not fit on chip; re-read inside the kernel */
    int est_registers;
    Loc loc;               /* source span of the kernel's first value */
} Kernel;

typedef struct Rejection {
    IrNode *producer, *consumer; /* the merge that was not made */
    const char *reason;          /* words for people, e.g. "register estimate 142 > budget 128" */
    const char *code;            /* stable key for tools: "grid-dependency", "registers", ... */
} Rejection;

typedef struct Plan {
    IrFunc *fn;
    Kernel *kernels;       /* in launch order */
    int nkernels;
    Rejection *rejected;
    int nrejected;
    IrNode **intermediates; /* values written by one kernel and read by a later one */
    int nintermediates;
} Plan;

typedef struct FusionOptions {
    int no_fusion;     /* one kernel per op: the baseline */
    int max_registers; /* per-thread budget; default 128 */
    int expect_kernels;/* --expect-kernels: -1 none; overridden by @kernels(N) */
} FusionOptions;

/* Returns NULL after a diagnostic when a fusion contract cannot be met. */
Plan *fuse_plan(Arena *a, IrFunc *f, const FusionOptions *opt);

/* Reports (main.c calls these for --emit=plan|fusion|dot). */
void fuse_print_json(FILE *out, Plan **plans, int nplans);
void fuse_print_text(FILE *out, Plan **plans, int nplans);
void fuse_print_dot(FILE *out, Plan **plans, int nplans);

#endif
