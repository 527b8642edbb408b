/* ops.h -- the operators of the IR: their kinds (from ops.def), the
 * table of their names, spellings and CUDA templates, and what an
 * elementwise op computes on one element (ops.c).  Nothing here needs an
 * IR node, so ops.c depends on this header alone and ir.h builds on it. */
#ifndef FUSEC_OPS_H
#define FUSEC_OPS_H
#include "dtype.h"
#include <stdint.h>

typedef enum { OPC_LEAF, OPC_UNARY, OPC_BINARY, OPC_TERNARY, OPC_VIEW, OPC_REDUCE } OpClass;
enum {
    OPF_INT_OK = 1,      /* defined on integer and bool operands */
    OPF_FLOAT_ONLY = 2,  /* integer operands are promoted to f32 first */
    OPF_BOOL_RESULT = 4, /* result dtype bool */
    OPF_I64_RESULT = 8,  /* result dtype i64 (argmax, argmin) */
    OPF_INTERNAL = 16,   /* made by the compiler, not a builtin of the language */
};

typedef enum {
#define OP(name, src, arity, cls, flags, cuda) OP_##name,
#include "ops.def"
    OP_COUNT
} OpKind;

typedef struct OpInfo {
    const char *name;  /* lower-case enum name, used by the IR printer: "add", "rmax" */
    const char *src;   /* source spelling */
    int arity;
    OpClass cls;
    int flags;
    const char *cuda;  /* f32 CUDA template, %0..%2 operands; "" if special */
} OpInfo;
extern const OpInfo op_info[OP_COUNT];
/* OP is a builtin function of the language, called by its source name
 * (exp, sum, where): spelled as an identifier, not a leaf, not made by
 * the compiler. */
int op_is_named(int op);
/* NAME is a builtin function's name (a named op or cast): no fn may take it. */
int op_builtin_name(const char *name);

/* ---- what an elementwise op computes on one element (ops.c) -----------
 * Shared by constant folding and the interpreter, so that they cannot
 * disagree.  dt is the node's dtype, in_dt its first operand's (a cast needs
 * it).  Integer nodes compute in int64 and wrap to dt; a float result is
 * float64 and not rounded: the caller rounds with round_to_dtype where the
 * language rounds. */
typedef enum {
    OPEVAL_OK,
    OPEVAL_DIVZERO, /* integer / or % by zero */
    OPEVAL_NONE,    /* no scalar meaning: a leaf, view or reduction */
} OpEvalStatus;
OpEvalStatus op_eval_scalar(OpKind op, DType dt, DType in_dt, const double *args, double *out);
/* The integer arithmetic of an i32/i64 node on exact int64 operands (and a
 * cast between integers); OPEVAL_NONE for an op that has none (its value
 * is op_eval_scalar's). */
OpEvalStatus op_eval_int(OpKind op, DType dt, const int64_t *args, int64_t *out);
/* max and min that propagate NaN (elementwise, clamp and reductions). */
double op_max_nan(double a, double b);
double op_min_nan(double a, double b);

#endif
