/* ast_print.c -- `--emit=ast`: the syntax tree as indented text.
 *
 * One node per line, two spaces of indent per level, fields in a fixed
 * order, nothing that depends on pointers: the output is stable and made
 * for FileCheck.  Declarations (fn, param, result, statement) end with
 * their line:col so tests can pin locations; expressions do not, to keep
 * precedence tests short.
 *
 *   fn softmax @4:1
 *     param x: f32[N, M] @4:12
 *     result f32[N, M]
 *     assign m @5:5
 *       call max
 *         name x
 *         kwarg axis
 *           num int 1
 */
#include "frontend.h"
#include "ir.h"
#include "util.h"
#include <stdint.h>
#include <stdlib.h>

static void indent(FILE *out, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

/* Operators as written in source, so precedence tests read naturally. */
static const char *op_spelling(int op)
{
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_MOD: return "%";
    case OP_POW: return "**";
    case OP_EQ: return "==";
    case OP_NE: return "!=";
    case OP_LT: return "<";
    case OP_LE: return "<=";
    case OP_GT: return ">";
    case OP_GE: return ">=";
    case OP_AND: return "&&";
    case OP_OR: return "||";
    case OP_NEG: return "-";
    case OP_NOT: return "!";
    default: return "?";
    }
}

/* Line starts of the printed file, so that each "@line:col" is a binary
 * search rather than a scan from the top (diag_line_col): a file of 200000
 * statements prints in linear time. */
typedef struct LineTable {
    int file;
    uint32_t *starts;
    int n;
} LineTable;

static LineTable lines;

static void lines_build(int file)
{
    size_t len;
    const char *t = diag_file_text(file, &len);
    int cap = 64;
    lines = (LineTable){file, malloc(sizeof(uint32_t) * (size_t)cap), 0};
    if (!lines.starts)
        fatal_oom();
    lines.starts[lines.n++] = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] != '\n')
            continue;
        if (lines.n == cap) {
            cap *= 2;
            uint32_t *grown = realloc(lines.starts, sizeof(uint32_t) * (size_t)cap);
            if (!grown)
                fatal_oom();
            lines.starts = grown;
        }
        lines.starts[lines.n++] = (uint32_t)i + 1;
    }
}

static void print_loc(FILE *out, Loc loc)
{
    int l, c;
    if (loc.file != lines.file || !lines.starts) {
        diag_line_col(loc.file, loc.begin, &l, &c); /* another file: rare */
    } else {
        int lo = 0, hi = lines.n - 1; /* last start <= loc.begin */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (lines.starts[mid] <= loc.begin)
                lo = mid;
            else
                hi = mid - 1;
        }
        l = lo + 1;
        c = (int)(loc.begin - lines.starts[lo]) + 1;
    }
    fprintf(out, " @%d:%d\n", l, c);
}

/* Expressions nest at most PARSE_MAX_NEST deep (parse.c checks), so the
 * recursion here is bounded. */
static void print_expr(FILE *out, const AstExpr *e, int depth)
{
    indent(out, depth);
    switch (e->kind) {
    case AST_NUM:
        if (e->is_int)
            fprintf(out, "num int %s\n", e->text);
        else
            fprintf(out, "num float %s = %.15g\n", e->text, e->fval);
        return;
    case AST_BOOL:
        fprintf(out, "bool %s\n", e->bval ? "true" : "false");
        return;
    case AST_NAME:
        fprintf(out, "name %s\n", e->name);
        return;
    case AST_DTYPE:
        fprintf(out, "dtype %s\n", dtype_name(e->dtype));
        return;
    case AST_UNARY:
        fprintf(out, "unary %s\n", op_spelling(e->op));
        print_expr(out, e->lhs, depth + 1);
        return;
    case AST_BINARY:
        fprintf(out, "binary %s\n", op_spelling(e->op));
        print_expr(out, e->lhs, depth + 1);
        print_expr(out, e->rhs, depth + 1);
        return;
    case AST_CALL:
    case AST_TUPLE:
        if (e->kind == AST_CALL)
            fprintf(out, "call %s\n", e->name);
        else
            fprintf(out, "tuple\n");
        for (int i = 0; i < e->nargs; i++)
            print_expr(out, e->args[i], depth + 1);
        for (int i = 0; i < e->nkwargs; i++) {
            indent(out, depth + 1);
            fprintf(out, "kwarg %s\n", e->kwargs[i].name);
            print_expr(out, e->kwargs[i].value, depth + 2);
        }
        return;
    }
    unreachable();
}

static void print_type(FILE *out, const AstType *t)
{
    fputs(dtype_name(t->dtype), out);
    if (!t->is_tensor)
        return;
    fputc('[', out);
    for (int i = 0; i < t->rank; i++) {
        if (i)
            fputs(", ", out);
        if (t->dims[i].name)
            fputs(t->dims[i].name, out);
        else
            fprintf(out, "%lld", (long long)t->dims[i].size);
    }
    fputc(']', out);
}

static void print_fn(FILE *out, const AstFn *fn)
{
    fprintf(out, "  fn %s", fn->name);
    print_loc(out, fn->loc);
    for (int i = 0; i < fn->nattrs; i++) {
        const AstAttr *at = &fn->attrs[i];
        fprintf(out, "    attr %s", at->name);
        print_loc(out, at->loc);
        for (int k = 0; k < at->nargs; k++)
            print_expr(out, at->args[k], 3);
        for (int k = 0; k < at->nkwargs; k++) {
            fprintf(out, "      kwarg %s\n", at->kwargs[k].name);
            print_expr(out, at->kwargs[k].value, 4);
        }
    }
    for (int i = 0; i < fn->nparams; i++) {
        const AstParam *p = &fn->params[i];
        fprintf(out, "    param %s: ", p->name);
        print_type(out, &p->type);
        print_loc(out, p->loc);
        if (p->deflt) {
            fputs("      default\n", out);
            print_expr(out, p->deflt, 4);
        }
    }
    for (int i = 0; i < fn->nresults; i++) {
        const AstParam *r = &fn->results[i];
        if (fn->named_results)
            fprintf(out, "    result %s: ", r->name);
        else
            fputs("    result ", out);
        print_type(out, &r->type);
        print_loc(out, fn->named_results ? r->loc : r->type.loc);
    }
    for (int i = 0; i < fn->nbody; i++) {
        const AstStmt *s = &fn->body[i];
        if (s->kind == AST_RETURN) {
            fputs("    return", out);
        } else {
            fputs("    assign", out);
            for (int k = 0; k < s->nnames; k++)
                fprintf(out, "%s%s", k ? ", " : " ", s->names[k]);
        }
        print_loc(out, s->loc);
        print_expr(out, s->value, 3);
    }
}

void ast_print(FILE *out, const AstFile *f)
{
    lines_build(f->file);
    fprintf(out, "file %s\n", f->path);
    for (int i = 0; i < f->nimports; i++) {
        fprintf(out, "  import \"%s\"", f->imports[i].path);
        print_loc(out, f->imports[i].loc);
    }
    for (int i = 0; i < f->nfns; i++)
        print_fn(out, &f->fns[i]);
    free(lines.starts);
    lines = (LineTable){0};
}
