/* parse_priv.h -- what the scanner (lexer.l), the grammar (parser.y) and
 * the AST builders (compiler/parse.c) share; nothing outside the front end
 * includes it.
 *
 * One ParseCtx lives for the parse of one file.  The scanner keeps its
 * byte offset and the stack of open brackets here: the stack bounds the
 * nesting depth (so 5000 '(' end in a located error, not a blown stack) and
 * lets a syntax error say which '(' a missing ')' should close.  The
 * grammar's semantic values are arena-owned lists that the builders grow;
 * each grammar action is one builder call. */
#ifndef FUSEC_PARSE_PRIV_H
#define FUSEC_PARSE_PRIV_H
#include "arena.h"
#include "ast.h"
#include <stddef.h>
#include <stdint.h>

/* Deepest bracket nesting, and deepest expression tree, that we accept. */
#define PARSE_MAX_NEST 256

typedef struct ExprList { AstExpr **v; int n, cap; } ExprList;
typedef struct ArgList {
    AstExpr **args;
    int nargs, capargs;
    AstKwarg *kw;
    int nkw, capkw;
} ArgList;
typedef struct ParamList {
    AstParam *v;
    int n, cap;
    int named; /* results: -> (a: T, ...) rather than -> T */
} ParamList;
typedef struct DimList { AstDim *v; int n, cap; } DimList;
typedef struct NameList { const char **v; Loc *locs; int n, cap, caplocs; } NameList;
typedef struct StmtList { AstStmt *v; int n, cap; } StmtList;
typedef struct AttrList { AstAttr *v; int n, cap; } AttrList;

typedef struct Bracket {
    char ch;  /* '(', '[' or '{' */
    Loc loc;
} Bracket;

typedef struct ParseCtx {
    Arena *a;
    int file;
    const char *text;
    size_t len;
    AstFile *out;
    int capfns, capimports;
    /* scanner state */
    uint32_t off;        /* byte offset where the next token starts */
    uint32_t prev_end;   /* end of the token before the current lookahead */
    uint32_t cur_end;    /* end of the current lookahead */
    int prev_tok, cur_tok; /* their token kinds (parser.h), for messages */
    Bracket open[PARSE_MAX_NEST + 8];
    int nopen;
    int nparen;          /* '(' and '[' among them: the nesting limit */
    int cur_popped;      /* the lookahead closed the bracket on top */
    int in_results;      /* between '->' and '{': names there are results */
    int errors;          /* errors reported while parsing this file */
} ParseCtx;

/* Builders, one per grammar action (compiler/parse.c). */
AstExpr *ast_num(ParseCtx *ps, Loc loc, const char *text, size_t len);
AstExpr *ast_bool(ParseCtx *ps, Loc loc, int value);
AstExpr *ast_name(ParseCtx *ps, Loc loc, const char *name);
AstExpr *ast_dtype(ParseCtx *ps, Loc loc, int dtype);
AstExpr *ast_unary(ParseCtx *ps, Loc loc, int op, AstExpr *e);
AstExpr *ast_binary(ParseCtx *ps, Loc loc, int op, AstExpr *l, AstExpr *r);
AstExpr *ast_call(ParseCtx *ps, Loc loc, const char *name, Loc name_loc, ArgList *args);
AstExpr *ast_tuple(ParseCtx *ps, Loc loc, ExprList *elems);
AstExpr *ast_paren(ParseCtx *ps, Loc loc, AstExpr *e);
ExprList *ast_exprs(ParseCtx *ps, ExprList *l, AstExpr *e);
ArgList *ast_arg(ParseCtx *ps, ArgList *l, AstExpr *e);
ArgList *ast_kwarg(ParseCtx *ps, ArgList *l, const char *name, Loc name_loc, AstExpr *e);
AstType *ast_type(ParseCtx *ps, Loc loc, int dtype, DimList *dims);
AstType *ast_bad_type(ParseCtx *ps, Loc loc, const char *name, Loc name_loc, DimList *dims);
DimList *ast_dim_name(ParseCtx *ps, DimList *l, const char *name, Loc loc);
DimList *ast_dim_size(ParseCtx *ps, DimList *l, AstExpr *num, Loc loc);
ParamList *ast_param(ParseCtx *ps, ParamList *l, const char *name, Loc loc, AstType *t,
                     AstExpr *deflt);
ParamList *ast_result_type(ParseCtx *ps, AstType *t);
ParamList *ast_named_results(ParseCtx *ps, ParamList *l);
NameList *ast_names(ParseCtx *ps, NameList *l, const char *name, Loc loc);
StmtList *ast_assign(ParseCtx *ps, StmtList *l, Loc loc, NameList *names, AstExpr *value);
StmtList *ast_return(ParseCtx *ps, StmtList *l, Loc loc, AstExpr *value);
AttrList *ast_attr(ParseCtx *ps, AttrList *l, Loc loc, const char *name, Loc name_loc,
                   ArgList *args);
void ast_fn(ParseCtx *ps, Loc loc, AttrList *attrs, const char *name, Loc name_loc,
            ParamList *params, ParamList *results, StmtList *body);
void ast_import(ParseCtx *ps, Loc loc, const char *path);

/* Scanner helpers (compiler/parse.c): a lexical error, counted. */
void parse_error(ParseCtx *ps, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
