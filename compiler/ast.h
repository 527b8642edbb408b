/* ast.h -- the syntax tree the parser builds (grammar/parser.y).
 *
 * Nodes are arena-allocated and never freed one by one.  Every node has a
 * location covering its whole source span (for carets under the span).
 * The AST is untyped: sema (sema.c) resolves names, dtypes and shapes and
 * produces the IR (ir.h). */
#ifndef FUSEC_AST_H
#define FUSEC_AST_H
#include "diag.h"
#include "dtype.h"
#include <stdint.h>

typedef struct AstExpr AstExpr;

typedef enum {
    AST_NUM,    /* numeric literal: is_int, ival/fval, text */
    AST_BOOL,   /* true / false: bval */
    AST_NAME,   /* identifier: name */
    AST_DTYPE,  /* a dtype used as a value, as in cast(x, f16): dtype */
    AST_UNARY,  /* op (OP_NEG, OP_NOT), lhs */
    AST_BINARY, /* op (OP_ADD ... OP_OR, OP_POW for **), lhs, rhs */
    AST_CALL,   /* name(args..., kw=val...): name, name_loc, args, kwargs */
    AST_TUPLE,  /* (a, b, ...) -- only meaningful as axis=(0, 2): args */
} AstExprKind;

typedef struct AstKwarg {
    const char *name;
    Loc name_loc;
    AstExpr *value;
} AstKwarg;

struct AstExpr {
    AstExprKind kind;
    Loc loc;               /* whole span */
    /* AST_NUM */
    int is_int;            /* written without '.', 'e' or exponent */
    int overflow;          /* does not fit int64 (is_int) or double range (parser sets) */
    int64_t ival;
    double fval;           /* also set for integers */
    const char *text;      /* literal as written */
    /* AST_BOOL */
    int bval;
    /* AST_NAME, AST_CALL */
    const char *name;
    Loc name_loc;
    /* AST_DTYPE */
    DType dtype;
    /* AST_UNARY, AST_BINARY: an OP_* from ops.def */
    int op;
    AstExpr *lhs, *rhs;
    /* AST_CALL, AST_TUPLE */
    AstExpr **args;
    int nargs;
    AstKwarg *kwargs;
    int nkwargs;
};

/* One dim of a tensor type: a symbol name or an integer literal. */
typedef struct AstDim {
    const char *name; /* NULL for a literal */
    int64_t size;     /* literal value (>= 0) */
    Loc loc;
} AstDim;

typedef struct AstType {
    DType dtype;
    int is_tensor;    /* 0: scalar dtype */
    int rank;         /* tensors: 1..; parser accepts any count, sema checks <= 8 */
    AstDim *dims;
    Loc loc;
} AstType;

typedef struct AstParam {
    const char *name;
    Loc loc;          /* the name */
    AstType type;
    AstExpr *deflt;   /* default value or NULL */
} AstParam;

typedef enum {
    AST_ASSIGN, /* names[0], names[1].. = value */
    AST_RETURN, /* return value */
} AstStmtKind;

typedef struct AstStmt {
    AstStmtKind kind;
    Loc loc;
    const char **names;
    Loc *name_locs;
    int nnames;
    AstExpr *value;
} AstStmt;

/* An attribute before a fn, e.g. @kernels(1) (fusion contract). */
typedef struct AstAttr {
    const char *name;
    Loc loc;
    AstExpr **args;
    int nargs;
    AstKwarg *kwargs;
    int nkwargs;
} AstAttr;

typedef struct AstFn {
    const char *name;
    Loc loc;          /* the whole fn */
    Loc name_loc;
    AstAttr *attrs;
    int nattrs;
    AstParam *params;
    int nparams;
    /* results: either one unnamed type (-> TYPE, body ends with return)
     * or named results (-> (a: T, b: T)) */
    int named_results;
    AstParam *results; /* unnamed: one entry with name NULL */
    int nresults;
    AstStmt *body;
    int nbody;
    int file;         /* source file id */
} AstFn;

typedef struct AstImport {
    const char *path; /* as written, unescaped */
    Loc loc;
} AstImport;

typedef struct AstFile {
    int file;         /* diag file id */
    const char *path;
    AstImport *imports;
    int nimports;
    AstFn *fns;
    int nfns;
} AstFile;

#endif
