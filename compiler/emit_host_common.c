/* emit_host_common.c -- what the header writer (emit_header.c) and the
 * host entries (emit_host.c) share: the wrapped declaration line, the C names of
 * a fn's params, results and dims, and the C text of its types, values and
 * signatures.
 *
 * Names in generated code come from the source (fn, params, results, dims);
 * a param, result or dim name that would clash with C, C++, the headers'
 * macros or our own locals gets a trailing '_' (sema refuses such fn names).
 * Every function here is a pure function of the plan: byte-stable output.
 */
#include "emit_host_common.h"
#include "frontend.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the emitter context ------------------------------------------------ */

void host_wrapped(Emitter *e, const char *text)
{
    const char *p = text;
    size_t col = 0;
    while (*p) {
        const char *comma = strstr(p, ", ");
        size_t n = comma ? (size_t)(comma - p) + 1 : strlen(p);
        if (col > 8 && col + n + (comma ? 0 : 0) > 100) {
            buf_puts(e->out, "\n        ");
            col = 8;
        } else if (col > 0) {
            buf_putc(e->out, ' ');
            col++;
        }
        buf_write(e->out, p, n);
        col += n;
        p += n;
        if (*p == ' ')
            p++;
    }
    buf_putc(e->out, '\n');
}

/* "header {" and one level deeper; emit_close undoes it. */
/* ---- per-fn facts --------------------------------------------------------- */


/* Names a param, result or dim must not keep in C.  Its C name is an
 * argument of the header's functions, declared after the headers the
 * output includes and read in the function bodies, so it cannot be a name
 * no identifier can be spelled as (cnames.c): a C or C++ keyword (the
 * header is included from both), an object-like macro of those headers
 * (EOF, SIZE_MAX, stdin, linux: the macro would replace it); a name the
 * bodies use, which the argument would hide (the C types of the
 * signatures, the fn's own helpers NAME_run and NAME_layout, and the
 * parameters and locals of the generated functions: a param named
 * `stream` would shadow the stream argument); nor a name of fusec's
 * namespaces or one C reserves. */
static const char *const reserved[] = {
    "main",
    /* the C types of the generated signatures and bodies */
    "int64_t", "int32_t", "uint16_t", "size_t",
    /* names the generated functions use for their own parameters and locals */
    "stream", "workspace", "workspace_bytes", "bufs", "scalars", "dims", "buffers", "st",
    "block", "off", "need", "sm", "mem", "owned",
};

static int name_taken(const char *s, const char **used, int nused)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(s, reserved[i]) == 0)
            return 1;
    if (c_name_unspellable(s) || c_name_ours(s))
        return 1;
    for (int i = 0; i < nused; i++)
        if (strcmp(s, used[i]) == 0)
            return 1;
    return 0;
}

/* A C name for a source name: itself, or with '_' appended until free.  A
 * name in fusec's namespaces, or one C reserves ('__', '_' and a capital),
 * gets a 'u' in front first: no suffix can take a name out of its prefix
 * (appending alone looped until memory ran out). */
static const char *c_name(Arena *a, const char *s, const char **used, int *nused)
{
    const char *n = s;
    if (c_name_ours(n) || c_name_c_reserved(n))
        n = arena_printf(a, "u%s", n);
    while (name_taken(n, used, *nused))
        n = arena_printf(a, "%s_", n);
    used[(*nused)++] = n;
    return n;
}

const char *host_base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A view moves no data: it reads its operand's buffer. */
IrNode *host_storage_of(IrNode *n)
{
    while (n && op_info[n->op].cls == OPC_VIEW && n->nin > 0)
        n = n->in[0].node;
    return n;
}

int host_result_of(const IrFunc *f, const IrNode *n)
{
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node == n)
            return r;
    return -1;
}

int host_inter_of(const FnInfo *fi, const IrNode *n)
{
    for (int i = 0; i < fi->ninter; i++)
        if (fi->inter[i] == n)
            return i;
    return -1;
}

/* Scalar params reach kernels through `scalars`, never through `bufs`
 * (fusion.h): a kernel input that is one is skipped when packing bufs. */
int host_is_scalar_param(const IrFunc *f, const IrNode *n)
{
    return n->op == OP_PARAM && n->param >= 0 && n->param < f->nparams &&
           !f->params[n->param].is_tensor;
}

/* Record n as a value that needs a buffer of its own in the block: not a
 * param (the caller's pointer), not a result (the caller's buffer). */
static void add_inter(Arena *a, FnInfo *fi, IrNode *n)
{
    n = host_storage_of(n);
    if (!n || n->op == OP_PARAM || host_result_of(fi->fn, n) >= 0 || host_inter_of(fi, n) >= 0)
        return;
    ARENA_PUSH(a, fi->inter, fi->ninter, fi->capinter, n);
}

/* Everything emit_* needs to know about one fn, computed once: C names,
 * the packed-buffer index of each tensor param, the intermediates, and the
 * source line for comments (basename only: byte-stable across checkouts). */
void host_fn_info(Arena *a, const Plan *p, FnInfo *fi)
{
    const IrFunc *f = p->fn;
    memset(fi, 0, sizeof *fi);
    fi->plan = p;
    fi->fn = f;
    int total = f->nparams + f->nresults + f->nsyms + 3;
    const char **used = ARENA_ARRAY(a, const char *, total);
    int nused = 0;
    fi->name = f->name;
    /* the helpers the entry functions call, which an argument would hide */
    used[nused++] = arena_printf(a, "%s_run", f->name);
    used[nused++] = arena_printf(a, "%s_layout", f->name);
    fi->pname = ARENA_ARRAY(a, const char *, f->nparams + 1);
    fi->rname = ARENA_ARRAY(a, const char *, f->nresults + 1);
    fi->dname = ARENA_ARRAY(a, const char *, f->nsyms + 1);
    fi->pbuf = ARENA_ARRAY(a, int, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) {
        fi->pname[i] = c_name(a, f->params[i].name, used, &nused);
        fi->pbuf[i] = f->params[i].is_tensor ? fi->ntensors++ : -1;
        if (!f->params[i].is_tensor)
            fi->nscalars++;
    }
    for (int i = 0; i < f->nresults; i++)
        fi->rname[i] = c_name(a, f->results[i].name, used, &nused);
    for (int i = 0; i < f->nsyms; i++)
        fi->dname[i] = c_name(a, f->syms[i], used, &nused);
    /* the plan's intermediates first (its order), then anything else a
     * kernel stores that is neither a result nor a param */
    for (int i = 0; i < p->nintermediates; i++)
        add_inter(a, fi, p->intermediates[i]);
    for (int k = 0; k < p->nkernels; k++)
        for (int o = 0; o < p->kernels[k].noutputs; o++)
            if (!p->kernels[k].out_result || p->kernels[k].out_result[o] < 0)
                add_inter(a, fi, p->kernels[k].outputs[o]);
    Loc loc = f->loc;
    fi->file = "";
    if (loc.file >= 0) {
        int col;
        diag_line_col(loc.file, loc.begin, &fi->line, &col);
        const char *path = diag_file_path(loc.file);
        fi->file = path ? host_base_name(path) : "";
    }
}

int host_sym_is_static(const IrFunc *f, int s)
{
    return f->sym_static && f->sym_static[s] >= 0;
}

/* ---- text of types, sizes and values -------------------------------------- */

/* The C type of an element in host code (f16/bf16 as their bits). */
const char *host_elem_ctype(DType t)
{
    switch (t) {
    case DT_BOOL: return "bool";
    case DT_I32: return "int32_t";
    case DT_I64: return "int64_t";
    case DT_F16: return "uint16_t";
    case DT_BF16: return "uint16_t";
    case DT_F32: return "float";
    case DT_F64: return "double";
    default: unreachable();
    }
}

/* A scalar param passed by value (f16/bf16 as float). */
const char *host_scalar_ctype(DType t)
{
    return t == DT_F16 || t == DT_BF16 ? "float" : host_elem_ctype(t);
}

/* The shortest %g text that reads back as the same value of dtype t (a
 * default rounded to f32 by sema prints as 1e-05, not 9.99999975e-06). */
void host_put_value(Buf *b, double v, DType t)
{
    char s[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        double back = strtod(s, NULL);
        if (t == DT_F32 || t == DT_F16 || t == DT_BF16 ? (float)back == (float)v : back == v)
            break;
    }
    buf_puts(b, s);
}


/* "f32[N, 1024]" */
const char *host_type_text(Arena *a, const IrFunc *f, DType t, const IrShape *s)
{
    Buf b = {0};
    ir_type_str(f, t, s, &b);
    const char *r = arena_strndup(a, b.data ? b.data : "", b.len);
    buf_free(&b);
    return r;
}

/* The .fuse signature: "fn softmax(x: f32[N, M]) -> (result: f32[N, M])". */
const char *host_signature(Arena *a, const IrFunc *f)
{
    Buf b = {0};
    buf_printf(&b, "fn %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *p = &f->params[i];
        buf_printf(&b, "%s%s: ", i ? ", " : "", p->name);
        ir_type_str(f, p->dtype, &p->shape, &b);
        if (p->has_default) {
            buf_puts(&b, " = ");
            host_put_value(&b, p->deflt, p->dtype);
        }
    }
    buf_puts(&b, ") -> (");
    for (int i = 0; i < f->nresults; i++) {
        const IrResult *r = &f->results[i];
        buf_printf(&b, "%s%s: ", i ? ", " : "", r->name);
        ir_type_str(f, r->dtype, &r->shape, &b);
    }
    buf_putc(&b, ')');
    const char *s = arena_strndup(a, b.data, b.len);
    buf_free(&b);
    return s;
}

/* The typed parameter list shared by NAME and NAME_ws, without the tail. */
const char *host_typed_params(Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    const char *sep = "";
    for (int i = 0; i < f->nparams; i++, sep = ", ") {
        const IrParam *p = &f->params[i];
        if (p->is_tensor)
            buf_printf(&b, "%sconst %s *%s", sep, host_elem_ctype(p->dtype), fi->pname[i]);
        else
            buf_printf(&b, "%s%s %s", sep, host_scalar_ctype(p->dtype), fi->pname[i]);
    }
    for (int i = 0; i < f->nresults; i++, sep = ", ")
        buf_printf(&b, "%s%s *%s", sep, host_elem_ctype(f->results[i].dtype), fi->rname[i]);
    for (int i = 0; i < f->nsyms; i++)
        if (!host_sym_is_static(f, i)) {
            buf_printf(&b, "%sint64_t %s", sep, fi->dname[i]);
            sep = ", ";
        }
    const char *s = arena_strndup(a, b.data ? b.data : "", b.len);
    buf_free(&b);
    return s;
}

/* Just the dims, for NAME_workspace_size ("void" if none). */
const char *host_dim_params(Arena *a, const FnInfo *fi, int with_names_only)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    const char *sep = "";
    for (int i = 0; i < f->nsyms; i++)
        if (!host_sym_is_static(f, i)) {
            buf_printf(&b, with_names_only ? "%s%s" : "%sint64_t %s", sep, fi->dname[i]);
            sep = ", ";
        }
    const char *s = b.len ? arena_strndup(a, b.data, b.len) : (with_names_only ? "" : "void");
    buf_free(&b);
    return s;
}
