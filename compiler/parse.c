/* parse.c -- from bytes to an AstFile: reading, checks around the grammar,
 * and the AST builders that the grammar's actions call.
 *
 * parse_path reads a file (or stdin) into the arena and registers it with
 * diag; parse_source then
 *   1. checks that the text is valid UTF-8 (one located error for the first
 *      bad byte: later phases may print any source line safely),
 *   2. runs the flex scanner and bison parser (grammar/), which report
 *      lexical and syntax errors and stop at the first,
 *   3. walks every expression tree with an explicit stack and rejects one
 *      deeper than PARSE_MAX_NEST, so sema, the printers and the emitters
 *      may recurse freely,
 *   4. rejects a file without any fn (docs/language.md: a file holds one or more).
 * The scanner is destroyed on every path; everything else lives in the
 * arena.  The builders below do the small checks that a context-free
 * grammar cannot (a positional argument after a keyword, a dim that is not
 * an integer, an unknown dtype) and report them without stopping. */
#include "frontend.h"
#include "ir.h"
#include "parse_priv.h"
#include "parser.h"
/* lexer.h declares the scanner under the name lexer.l gives it */
#define YY_DECL int lex_token(YYSTYPE *yylval_param, YYLTYPE *yylloc_param, yyscan_t yyscanner)
#include "lexer.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void parse_error(ParseCtx *ps, Loc loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ps->errors++;
    diag_error(loc, "%s", msg);
}

/* ---- builders: expressions ---------------------------------------------- */

static AstExpr *new_expr(ParseCtx *ps, AstExprKind kind, Loc loc)
{
    AstExpr *e = ARENA_NEW(ps->a, AstExpr);
    e->kind = kind;
    e->loc = loc;
    return e;
}

/* A numeric literal as written: 3, 1.5, .5, 5., 1e-5.  Integers must fit
 * int64 and floats a double; both are reported here, once. */
AstExpr *ast_num(ParseCtx *ps, Loc loc, const char *text, size_t len)
{
    AstExpr *e = new_expr(ps, AST_NUM, loc);
    e->text = arena_strndup(ps->a, text, len);
    e->is_int = strpbrk(e->text, ".eE") == NULL;
    errno = 0;
    if (e->is_int) {
        unsigned long long v = strtoull(e->text, NULL, 10);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
            e->overflow = 1;
            parse_error(ps, loc, "integer literal '%s' is too large", e->text);
            diag_note(LOC_NONE, "integers must fit in int64 (at most 9223372036854775807); "
                      "write a float such as 1e19 for a larger value");
        }
        e->ival = (int64_t)v;
        e->fval = (double)v;
    } else {
        e->fval = strtod(e->text, NULL);
        if (isinf(e->fval)) {
            e->overflow = 1;
            parse_error(ps, loc, "floating-point literal '%s' is too large", e->text);
            diag_note(LOC_NONE, "the largest double is about 1.8e308");
        }
        e->ival = 0;
    }
    return e;
}

AstExpr *ast_bool(ParseCtx *ps, Loc loc, int value)
{
    AstExpr *e = new_expr(ps, AST_BOOL, loc);
    e->bval = value;
    return e;
}

AstExpr *ast_name(ParseCtx *ps, Loc loc, const char *name)
{
    AstExpr *e = new_expr(ps, AST_NAME, loc);
    e->name = name;
    e->name_loc = loc;
    return e;
}

AstExpr *ast_dtype(ParseCtx *ps, Loc loc, int dtype)
{
    AstExpr *e = new_expr(ps, AST_DTYPE, loc);
    e->dtype = (DType)dtype;
    return e;
}

AstExpr *ast_unary(ParseCtx *ps, Loc loc, int op, AstExpr *x)
{
    AstExpr *e = new_expr(ps, AST_UNARY, loc);
    e->op = op;
    e->lhs = x;
    return e;
}

AstExpr *ast_binary(ParseCtx *ps, Loc loc, int op, AstExpr *l, AstExpr *r)
{
    AstExpr *e = new_expr(ps, AST_BINARY, loc);
    e->op = op;
    e->lhs = l;
    e->rhs = r;
    return e;
}

AstExpr *ast_call(ParseCtx *ps, Loc loc, const char *name, Loc name_loc, ArgList *args)
{
    AstExpr *e = new_expr(ps, AST_CALL, loc);
    e->name = name;
    e->name_loc = name_loc;
    if (args) {
        e->args = args->args;
        e->nargs = args->nargs;
        e->kwargs = args->kw;
        e->nkwargs = args->nkw;
    }
    return e;
}

AstExpr *ast_tuple(ParseCtx *ps, Loc loc, ExprList *elems)
{
    AstExpr *e = new_expr(ps, AST_TUPLE, loc);
    e->args = elems->v;
    e->nargs = elems->n;
    return e;
}

/* (e) is e; the parentheses only group.  The span stays the inner one so
 * that carets underline the value, not its brackets. */
AstExpr *ast_paren(ParseCtx *ps, Loc loc, AstExpr *e)
{
    (void)ps;
    (void)loc;
    return e;
}

ExprList *ast_exprs(ParseCtx *ps, ExprList *l, AstExpr *e)
{
    if (!l)
        l = ARENA_NEW(ps->a, ExprList);
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, e);
    return l;
}

ArgList *ast_arg(ParseCtx *ps, ArgList *l, AstExpr *e)
{
    if (!l)
        l = ARENA_NEW(ps->a, ArgList);
    if (l->nkw > 0) {
        parse_error(ps, e->loc, "positional argument after keyword argument '%s'",
                    l->kw[l->nkw - 1].name);
        diag_note(LOC_NONE, "put positional arguments first: f(x, axis=1)");
    }
    ARENA_PUSH(ps->a, l->args, l->nargs, l->capargs, e);
    return l;
}

ArgList *ast_kwarg(ParseCtx *ps, ArgList *l, const char *name, Loc name_loc, AstExpr *e)
{
    if (!l)
        l = ARENA_NEW(ps->a, ArgList);
    for (int i = 0; i < l->nkw; i++)
        if (strcmp(l->kw[i].name, name) == 0) {
            parse_error(ps, name_loc, "keyword argument '%s' given twice", name);
            diag_note(l->kw[i].name_loc, "first given here");
        }
    AstKwarg kw = {name, name_loc, e};
    ARENA_PUSH(ps->a, l->kw, l->nkw, l->capkw, kw);
    return l;
}

/* ---- builders: types, params, statements, fns ----------------------------- */

AstType *ast_type(ParseCtx *ps, Loc loc, int dtype, DimList *dims)
{
    AstType *t = ARENA_NEW(ps->a, AstType);
    t->dtype = (DType)dtype;
    t->loc = loc;
    if (dims) {
        t->is_tensor = 1;
        t->rank = dims->n;
        t->dims = dims->v;
    }
    return t;
}

AstType *ast_bad_type(ParseCtx *ps, Loc loc, const char *name, Loc name_loc, DimList *dims)
{
    parse_error(ps, name_loc, "unknown dtype '%s'", name);
    const char *hint = strcmp(name, "float") == 0 || strcmp(name, "float32") == 0 ? "f32"
                       : strcmp(name, "double") == 0 || strcmp(name, "float64") == 0 ? "f64"
                       : strcmp(name, "half") == 0 || strcmp(name, "float16") == 0 ? "f16"
                       : strcmp(name, "int") == 0 || strcmp(name, "int32") == 0 ? "i32"
                       : strcmp(name, "long") == 0 || strcmp(name, "int64") == 0 ? "i64"
                       : strcmp(name, "bfloat16") == 0 ? "bf16" : NULL;
    if (hint)
        diag_note(LOC_NONE, "did you mean '%s'? the dtypes are f16 bf16 f32 f64 i32 i64 bool",
                  hint);
    else
        diag_note(LOC_NONE, "the dtypes are f16 bf16 f32 f64 i32 i64 bool");
    return ast_type(ps, loc, DT_F32, dims);
}

DimList *ast_dim_name(ParseCtx *ps, DimList *l, const char *name, Loc loc)
{
    if (!l)
        l = ARENA_NEW(ps->a, DimList);
    AstDim d = {name, 0, loc};
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, d);
    return l;
}

DimList *ast_dim_size(ParseCtx *ps, DimList *l, AstExpr *num, Loc loc)
{
    if (!l)
        l = ARENA_NEW(ps->a, DimList);
    if (!num->is_int) {
        parse_error(ps, loc, "dim size '%s' is not an integer", num->text);
        diag_note(LOC_NONE, "a dim is a name (N) or a non-negative integer (1024)");
    }
    AstDim d = {NULL, num->ival, loc};
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, d);
    return l;
}

ParamList *ast_param(ParseCtx *ps, ParamList *l, const char *name, Loc loc, AstType *t,
                     AstExpr *deflt)
{
    if (!l)
        l = ARENA_NEW(ps->a, ParamList);
    AstParam p = {name, loc, *t, deflt};
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, p);
    return l;
}

ParamList *ast_result_type(ParseCtx *ps, AstType *t)
{
    ParamList *l = ast_param(ps, NULL, NULL, t->loc, t, NULL);
    l->named = 0;
    return l;
}

ParamList *ast_named_results(ParseCtx *ps, ParamList *l)
{
    (void)ps;
    l->named = 1;
    return l;
}

NameList *ast_names(ParseCtx *ps, NameList *l, const char *name, Loc loc)
{
    if (!l)
        l = ARENA_NEW(ps->a, NameList);
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, name);
    int nlocs = l->n - 1; /* locs runs alongside v */
    ARENA_PUSH(ps->a, l->locs, nlocs, l->caplocs, loc);
    return l;
}

/* Statements are separated by a newline or ';'.  The grammar alone would
 * accept `y = x z = 2` (newlines are white space there); this check keeps
 * such a line an error. */
static void check_separated(ParseCtx *ps, const StmtList *l, Loc loc)
{
    if (!l || l->n == 0)
        return;
    uint32_t from = l->v[l->n - 1].loc.end;
    for (uint32_t i = from; i < loc.begin && i < ps->len; i++)
        if (ps->text[i] == '\n' || ps->text[i] == ';')
            return;
    parse_error(ps, (Loc){loc.file, loc.begin, loc.begin},
                "expected ';' or a newline before this statement");
    diag_note(LOC_NONE, "statements are separated by newlines or ';'");
}

StmtList *ast_assign(ParseCtx *ps, StmtList *l, Loc loc, NameList *names, AstExpr *value)
{
    check_separated(ps, l, loc);
    if (!l)
        l = ARENA_NEW(ps->a, StmtList);
    AstStmt st = {AST_ASSIGN, loc, names->v, names->locs, names->n, value};
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, st);
    return l;
}

StmtList *ast_return(ParseCtx *ps, StmtList *l, Loc loc, AstExpr *value)
{
    check_separated(ps, l, loc);
    if (!l)
        l = ARENA_NEW(ps->a, StmtList);
    AstStmt st = {AST_RETURN, loc, NULL, NULL, 0, value};
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, st);
    return l;
}

AttrList *ast_attr(ParseCtx *ps, AttrList *l, Loc loc, const char *name, Loc name_loc,
                   ArgList *args)
{
    if (!l)
        l = ARENA_NEW(ps->a, AttrList);
    /* loc: the whole attribute, '@' to ')' */
    AstAttr at = {name, loc, NULL, 0, NULL, 0};
    (void)name_loc;
    if (args) {
        at.args = args->args;
        at.nargs = args->nargs;
        at.kwargs = args->kw;
        at.nkwargs = args->nkw;
    }
    ARENA_PUSH(ps->a, l->v, l->n, l->cap, at);
    return l;
}

void ast_fn(ParseCtx *ps, Loc loc, AttrList *attrs, const char *name, Loc name_loc,
            ParamList *params, ParamList *results, StmtList *body)
{
    AstFn fn = {0};
    fn.name = name;
    fn.loc = loc;
    fn.name_loc = name_loc;
    fn.file = ps->file;
    if (attrs) {
        fn.attrs = attrs->v;
        fn.nattrs = attrs->n;
        fn.loc = loc_span(attrs->v[0].loc, loc);
    }
    if (params) {
        fn.params = params->v;
        fn.nparams = params->n;
    }
    fn.named_results = results->named;
    fn.results = results->v;
    fn.nresults = results->n;
    if (body) {
        fn.body = body->v;
        fn.nbody = body->n;
    }
    ARENA_PUSH(ps->a, ps->out->fns, ps->out->nfns, ps->capfns, fn);
}

void ast_import(ParseCtx *ps, Loc loc, const char *path)
{
    AstImport im = {path, loc};
    ARENA_PUSH(ps->a, ps->out->imports, ps->out->nimports, ps->capimports, im);
}

/* ---- checks around the grammar ------------------------------------------- */

/* The first byte that is not part of valid UTF-8 (overlong forms,
 * surrogates and code points past U+10FFFF included), or len if none. */
static size_t bad_utf8(const char *text, size_t len, int *incomplete)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        unsigned c = t[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
        if (c >= 0xc2 && c <= 0xdf)
            need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            need = 2;
            lo = c == 0xe0 ? 0xa0 : 0x80;
            hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3;
            lo = c == 0xf0 ? 0x90 : 0x80;
            hi = c == 0xf4 ? 0x8f : 0xbf;
        } else {
            *incomplete = 0;
            return i;
        }
        for (size_t k = 1; k <= need; k++) {
            unsigned b = i + k < len ? t[i + k] : 0;
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) {
                *incomplete = 1;
                return i;
            }
        }
        i += need + 1;
    }
    return len;
}

/* Depth of every expression tree, walked with an explicit stack: a tree
 * deeper than PARSE_MAX_NEST (a long run of unary minus, a chain of **) is
 * rejected here so that every later phase may recurse on expressions. */
typedef struct DepthItem {
    const AstExpr *e;
    int depth;
} DepthItem;

static int check_depth(ParseCtx *ps, const AstExpr *root)
{
    if (!root)
        return 1;
    int n = 0, cap = 64;
    DepthItem *st = malloc(sizeof(*st) * (size_t)cap);
    if (!st)
        fatal_oom();
    st[n++] = (DepthItem){root, 1};
    int ok = 1;
    while (n > 0 && ok) {
        DepthItem it = st[--n];
        if (it.depth > PARSE_MAX_NEST) {
            /* located at the whole expression: the deepest node says little */
            parse_error(ps, root->loc, "expression nested too deeply (limit %d)",
                        PARSE_MAX_NEST);
            diag_note(LOC_NONE, "split it into several statements");
            ok = 0;
            break;
        }
        int kids = 2 + it.e->nargs + it.e->nkwargs;
        if (n + kids > cap) {
            while (n + kids > cap)
                cap *= 2;
            DepthItem *grown = realloc(st, sizeof(*st) * (size_t)cap);
            if (!grown) {
                free(st);
                fatal_oom();
            }
            st = grown;
        }
        if (it.e->lhs)
            st[n++] = (DepthItem){it.e->lhs, it.depth + 1};
        if (it.e->rhs)
            st[n++] = (DepthItem){it.e->rhs, it.depth + 1};
        for (int i = 0; i < it.e->nargs; i++)
            st[n++] = (DepthItem){it.e->args[i], it.depth + 1};
        for (int i = 0; i < it.e->nkwargs; i++)
            st[n++] = (DepthItem){it.e->kwargs[i].value, it.depth + 1};
    }
    free(st);
    return ok;
}

static int check_file_depth(ParseCtx *ps)
{
    for (int f = 0; f < ps->out->nfns; f++) {
        const AstFn *fn = &ps->out->fns[f];
        for (int i = 0; i < fn->nattrs; i++) {
            for (int k = 0; k < fn->attrs[i].nargs; k++)
                if (!check_depth(ps, fn->attrs[i].args[k]))
                    return 0;
            for (int k = 0; k < fn->attrs[i].nkwargs; k++)
                if (!check_depth(ps, fn->attrs[i].kwargs[k].value))
                    return 0;
        }
        for (int i = 0; i < fn->nparams; i++)
            if (!check_depth(ps, fn->params[i].deflt))
                return 0;
        for (int i = 0; i < fn->nbody; i++)
            if (!check_depth(ps, fn->body[i].value))
                return 0;
    }
    return 1;
}

/* ---- entry points ----------------------------------------------------------- */

AstFile *parse_source(Arena *a, int file)
{
    size_t len;
    const char *text = diag_file_text(file, &len);
    Loc start_loc = {file, 0, 0};
    if (len > (size_t)INT32_MAX - 16) {
        diag_error(start_loc, "source file is too large (the limit is 2 GiB)");
        return NULL;
    }
    int incomplete = 0;
    size_t bad = bad_utf8(text, len, &incomplete);
    if (bad < len) {
        Loc at = {file, (uint32_t)bad, (uint32_t)bad + 1};
        diag_error(at, "invalid UTF-8 byte 0x%02x%s", (unsigned char)text[bad],
                   incomplete ? " (an incomplete sequence)" : "");
        diag_note(LOC_NONE, "fusec reads source files as UTF-8; is this file in another encoding?");
        return NULL;
    }

    ParseCtx ps = {0};
    ps.a = a;
    ps.file = file;
    ps.text = text;
    ps.len = len;
    ps.out = ARENA_NEW(a, AstFile);
    ps.out->file = file;
    ps.out->path = diag_file_path(file);
    /* a UTF-8 byte order mark is skipped; offsets still count it */
    uint32_t start = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    ps.off = ps.prev_end = ps.cur_end = start;

    yyscan_t scanner;
    if (yylex_init_extra(&ps, &scanner) != 0)
        fatal_oom();
    YY_BUFFER_STATE buf = yy_scan_bytes(text + start, (int)(len - start), scanner);
    int rc = yyparse(scanner, &ps);
    yy_delete_buffer(buf, scanner);
    yylex_destroy(scanner);

    if (rc != 0 && ps.errors == 0)
        diag_error(start_loc, "cannot parse this file"); /* not expected: every path reports */
    if (rc != 0 || ps.errors > 0)
        return NULL;
    if (!check_file_depth(&ps))
        return NULL;
    if (ps.out->nfns == 0) {
        int blank = 1;
        for (size_t i = start; i < len && blank; i++)
            blank = text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r';
        diag_error(start_loc, "%s", blank ? "empty file: no fn defined" : "no fn defined in this file");
        diag_note(LOC_NONE, "a .fuse file holds one or more fn, such as: "
                  "fn f(x: f32[N]) -> f32[N] { return x }");
        return NULL;
    }
    return ps.out;
}

AstFile *parse_path(Arena *a, const char *path, Loc from)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        diag_error(from, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *data = NULL;
    size_t len = 0, cap = 0;
    int err = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fatal_oom();
            }
            data = grown;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
        if (len > (size_t)INT32_MAX) /* parse_source reports the size */
            break;
    }
    if (!is_stdin)
        fclose(f);
    if (err) {
        free(data);
        diag_error(from, "cannot read '%s': %s", is_stdin ? "<stdin>" : path, strerror(err));
        return NULL;
    }
    char *text = arena_alloc(a, len + 1);
    if (len)
        memcpy(text, data, len);
    free(data);
    int id = diag_add_file(is_stdin ? "<stdin>" : arena_strdup(a, path), text, len);
    diag_set_import_site(id, from);
    return parse_source(a, id);
}
