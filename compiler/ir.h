/* ir.h -- the typed tensor DAG that sema produces and every later phase reads.
 *
 * One IrFunc per host entry point, with every `fn` call already inlined.
 * Nodes are kept in a topological order (operands before users) in
 * IrFunc.nodes; node ids are their positions there, renumbered by
 * ir_renumber after any pass that removes nodes.
 *
 * Broadcasting is explicit: an elementwise node of rank R reads operand k of
 * rank r <= R aligned from the right (operand dim i is output dim i + R - r),
 * and IrUse.bcast has bit d set when output dim d is stretched for that
 * operand (absent from it, or size 1 in it while the output's is not static 1).
 * Emitters and the fusion pass never re-derive broadcasting from shapes.
 *
 * Views (OP_UNSQUEEZE) move no data: their linear layout is their operand's.
 * Reductions carry `axes` (a bit mask over the OPERAND's dims) and keepdims;
 * their shape is the operand's with reduced dims removed (or 1 with keepdims).
 *
 * Dtypes (sema guarantees; promotion is never re-derived later): operands
 * of an elementwise node have the node's dtype (sema inserts OP_CAST), except
 * OP_CAST, comparisons and isnan/isinf/!/&&/|| (bool result; the operands of one
 * comparison share a dtype) and where (operand 0 is bool).  A reduction's
 * operand has the node's dtype (the accumulate dtype: i64 for sum/prod of
 * ints, f32 for mean/var/std/logsumexp of ints), except any/all (bool
 * result) and argmax/argmin (i64 result).  f16/bf16 nodes compute in f32.
 */
#ifndef FUSEC_IR_H
#define FUSEC_IR_H
#include "arena.h"
#include "diag.h"
#include "dtype.h"
#include "ops.h"
#include "util.h"
#include <stdint.h>
#include <stdio.h>

#define IR_MAX_RANK 8

/* One dimension: static size, symbolic, or a symbol made static by -D. */
typedef struct IrDim {
    int64_t size; /* >= 0 static size; -1 symbolic (known at call time) */
    int sym;      /* index into IrFunc.syms, or -1 for a literal dim */
} IrDim;

typedef struct IrShape {
    int rank; /* 0 for scalars */
    IrDim dims[IR_MAX_RANK];
} IrShape;

typedef struct IrNode IrNode;

typedef struct IrUse {
    IrNode *node;
    uint8_t bcast; /* bit d: output dim d is stretched for this operand */
} IrUse;

struct IrNode {
    int id;          /* position in IrFunc.nodes; printed as %id */
    OpKind op;
    DType dtype;     /* result dtype; for OP_CAST the target */
    IrShape shape;
    IrUse in[3];
    int nin;
    /* OP_PARAM */
    int param;       /* index into IrFunc.params */
    /* OP_CONST: scalar (rank 0) literal already converted to dtype */
    double cval;
    int64_t ival;    /* exact value for integer dtypes */
    /* reductions */
    uint8_t axes;    /* bit i: operand dim i is reduced */
    int keepdims;
    /* OP_UNSQUEEZE: the new axis in the result */
    int axis;
    /* provenance, for readable plans and generated code */
    const char *name; /* value name from the source, or NULL */
    Loc loc;
    int nuses;       /* filled by ir_count_uses */
    void *aux;       /* scratch for later phases (fusion, emit); never read by ir.c */
};

typedef struct IrParam {
    const char *name;
    DType dtype;
    int is_tensor;   /* 0: scalar parameter passed by value */
    IrShape shape;   /* rank 0 for scalars */
    IrNode *node;    /* its OP_PARAM node (may be unused) */
    int has_default;
    double deflt;
    Loc loc;
} IrParam;

typedef struct IrResult {
    const char *name; /* "result" for an unnamed result */
    DType dtype;
    IrShape shape;    /* a scalar result (rank 0) is a 1-element buffer */
    IrNode *node;     /* the value written; its dtype and shape match */
    Loc loc;
} IrResult;

typedef struct IrFunc {
    const char *name;
    Loc loc;
    IrParam *params;
    int nparams;
    IrResult *results;
    int nresults;
    /* symbolic dims, in order of first appearance in the parameters, then
     * results: the order of the dim arguments of the host function */
    const char **syms;
    int nsyms;
    int64_t *sym_static; /* per sym: size given by -D, or -1 */
    IrNode **nodes;
    int nnodes, capnodes;
    /* fusion contract from @kernels(N) or --expect-kernels; -1 if none */
    int expect_kernels;
    Loc expect_loc;
    Arena *arena;
} IrFunc;

typedef struct IrModule {
    IrFunc **fns;     /* the entry points: the fns of the main file, in order */
    int nfns;
    const char **deps; /* every source file read (main first), for -MD */
    int ndeps;
} IrModule;

/* Construction (sema).  ir_node_new appends to f->nodes. */
IrFunc *ir_func_new(Arena *a, const char *name, Loc loc);
IrNode *ir_node_new(IrFunc *f, OpKind op, DType dt, const IrShape *shape, Loc loc);
void ir_add_operand(IrNode *n, IrNode *operand); /* computes bcast from the shapes */
int ir_sym_intern(IrFunc *f, const char *name);   /* index, added if new */

/* Shapes */
int ir_dim_eq(IrDim a, IrDim b);            /* same static size, or same symbol */
int ir_dim_is_one(IrDim d);                 /* static 1 */
int ir_shape_eq(const IrShape *a, const IrShape *b);
void ir_dim_str(const IrFunc *f, IrDim d, Buf *out);          /* "N", "1024" */
void ir_shape_str(const IrFunc *f, const IrShape *s, Buf *out); /* "[N, 1024]" */
void ir_type_str(const IrFunc *f, DType dt, const IrShape *s, Buf *out); /* "f32[N, 1024]", "f32" */
int ir_shape_is_static(const IrShape *s);
int64_t ir_shape_static_numel(const IrShape *s); /* -1 if any dim symbolic */

/* Passes */
void ir_count_uses(IrFunc *f);
void ir_optimize(IrFunc *f); /* constant folding, CSE, dead-node removal; renumbers */
void ir_renumber(IrFunc *f);

/* --emit=ir: stable text, one line per node, for FileCheck.  Format:
 *   fn softmax(x: f32[N, M]) -> (result: f32[N, M]) syms(N, M)
 *     %0 = param x : f32[N, M]
 *     %1 = rmax %0 axes(1) keepdims : f32[N, 1]
 *     %2 = sub %0, %1 bcast(1) : f32[N, M]
 *     ...
 *     return result = %5
 * (bcast(d...) after an operand lists the stretched output dims.)
 * Also: `const VALUE` (shortest decimal that rounds back to the dtype;
 * true/false; inf, nan), `param NAME`, `axis(k)` on unsqueeze, a trailing
 * `  # name` when the node has a source name, `= VALUE` after a param with
 * a default, `N=1024` for a -D static symbol, ` kernels(N)` after syms()
 * for @kernels(N); syms() is left out when there are none. */
void ir_print_func(FILE *out, const IrFunc *f);
void ir_print_module(FILE *out, const IrModule *m);

#endif
