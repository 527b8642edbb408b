/* emit_host.c -- the host side of generated code: the C header and the
 * entry functions of both targets.
 *
 * Design note.  Every fn becomes five extern functions (emit.h: NAME,
 * NAME_ws, NAME_workspace_size, NAME_packed, NAME_kernel_count) and three
 * static helpers:
 *
 *   NAME_layout(dims, off)  byte offsets of every intermediate and of the
 *                           scratch of every kernel in one block (256-byte
 *                           aligned pieces, intermediates first, then the
 *                           scratch, whose counters are zero-filled per call);
 *                           returns the block size, SIZE_MAX on overflow.
 *   NAME_check(...)         dims >= 0, device pointers non-NULL (NULL is
 *                           accepted for a tensor with no elements).
 *   NAME_run(...)           allocate (or carve the caller's workspace), zero
 *                           the counters, call the launch stubs of emit_cuda.c
 *                           in plan order, free.
 *
 * The typed entries pack their arguments into the three arrays the launch
 * stubs take (bufs by kernel, scalars by param index, dims by sym with the
 * static ones filled in); NAME_packed checks and calls NAME_run too.  A kernel
 * whose outputs are all empty is skipped; any other kernel is launched even
 * when its input is empty (a reduction over an empty axis writes identities:
 * the stub decides).
 *
 * What differs by target is only the support block before the stubs:
 * FUSEC_LAUNCH and four small helpers (sm count, alloc, free, memset) over
 * the CUDA runtime (.cu for nvcc) or over fusert (plain C11 with the CUDA
 * source embedded as a string for NVRTC).  Both targets link libfusert: the
 * cuda target uses it only for fusert_set_error/fusert_last_error, so that
 * the header and the error API are the same for both.
 *
 * Names in generated code come from the source (fn, params, results, dims);
 * a name that would clash with C, C++ or our own locals gets a trailing '_'.
 * Output is a pure function of the plans and options: byte-stable.
 */
#include "emit.h"
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block pieces are aligned like cudaMalloc'd memory, so every vector load
 * of a kernel that is aligned for a fresh allocation is aligned here too. */
#define HOST_ALIGN 256
/* Longest piece of one string literal of the embedded source (C99 5.2.4.1
 * allows 4095 characters; escapes can double a line, so stay well below). */
#define HOST_MAX_PIECE 1800

/* ---- the emitter context ------------------------------------------------ */

typedef struct Emitter {
    Buf *out;
    int indent;
} Emitter;

static void emit_line(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit_line(Emitter *e, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        ICE("vsnprintf failed");
    if (n > 0)
        for (int i = 0; i < e->indent; i++)
            buf_puts(e->out, "    ");
    if ((size_t)n < sizeof small) {
        buf_write(e->out, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big)
            fatal_oom();
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        buf_write(e->out, big, (size_t)n);
        free(big);
    }
    buf_putc(e->out, '\n');
}

/* A declaration at file level, broken after ", " so that no line passes
 * 100 columns; continuation lines are indented by 8. */
static void emit_wrapped(Emitter *e, const char *text)
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
static void emit_open(Emitter *e, const char *text)
{
    emit_line(e, "%s", text);
    e->indent++;
}

static void emit_close(Emitter *e, const char *text)
{
    if (e->indent <= 0)
        ICE("emit_close without emit_open");
    e->indent--;
    emit_line(e, "%s", text);
}

/* ---- per-fn facts --------------------------------------------------------- */

/* Where a value lives at run time. */
typedef enum { LOC_PARAM, LOC_RESULT, LOC_INTER } ValKind;

typedef struct FnInfo {
    const Plan *plan;
    const IrFunc *fn;
    const char *name;      /* the fn's C name */
    const char **pname;    /* C names of params (by param index) */
    const char **rname;    /* C names of results */
    const char **dname;    /* C names of syms */
    int *pbuf;             /* param index -> index in the packed buffer list, or -1 (scalar) */
    int ntensors;          /* tensor params */
    int nscalars;          /* scalar params */
    IrNode **inter;        /* intermediates: values stored by one kernel and read by another */
    int ninter, capinter;
    int line;              /* source line of the fn, 0 if unknown */
    const char *file;      /* basename of its source file */
} FnInfo;

/* Names a C identifier from .fuse must not take.  .fuse identifiers follow
 * C's rules, so the only clashes are keywords (C and C++: the header is
 * included from both), a few library macros, and the parameters and locals
 * of the generated functions themselves (a param named `stream` would
 * shadow the stream argument).  The fusec_ prefix is ours. */
static const char *const reserved[] = {
    /* C and C++ keywords an identifier of .fuse could spell */
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
    "class", "const", "constexpr", "continue", "default", "delete", "do", "double", "else",
    "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
    "operator", "or", "private", "protected", "public", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw",
    "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "while", "xor", "NULL", "errno", "main",
    /* names the generated functions use for their own parameters and locals */
    "stream", "workspace", "workspace_bytes", "bufs", "scalars", "dims", "buffers", "st",
    "block", "off", "need", "sm", "mem", "owned",
};

static int name_taken(const char *s, const char **used, int nused)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(s, reserved[i]) == 0)
            return 1;
    if (strncmp(s, "fusec_", 6) == 0)
        return 1;
    for (int i = 0; i < nused; i++)
        if (strcmp(s, used[i]) == 0)
            return 1;
    return 0;
}

/* A C name for a source name: itself, or with '_' appended until free.  A
 * name in our fusec_ prefix gets a 'u' in front first: no suffix can take a
 * name out of the prefix (appending alone looped until memory ran out). */
static const char *c_name(Arena *a, const char *s, const char **used, int *nused)
{
    const char *n = s;
    if (strncmp(n, "fusec_", 6) == 0)
        n = arena_printf(a, "u%s", n);
    while (name_taken(n, used, *nused))
        n = arena_printf(a, "%s_", n);
    used[(*nused)++] = n;
    return n;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A view moves no data: it reads its operand's buffer. */
static IrNode *storage_of(IrNode *n)
{
    while (n && op_info[n->op].cls == OPC_VIEW && n->nin > 0)
        n = n->in[0].node;
    return n;
}

static int result_of(const IrFunc *f, const IrNode *n)
{
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node == n)
            return r;
    return -1;
}

static int inter_of(const FnInfo *fi, const IrNode *n)
{
    for (int i = 0; i < fi->ninter; i++)
        if (fi->inter[i] == n)
            return i;
    return -1;
}

/* Scalar params reach kernels through `scalars`, never through `bufs`
 * (fusion.h): a kernel input that is one is skipped when packing bufs. */
static int is_scalar_param(const IrFunc *f, const IrNode *n)
{
    return n->op == OP_PARAM && n->param >= 0 && n->param < f->nparams &&
           !f->params[n->param].is_tensor;
}

/* Record n as a value that needs a buffer of its own in the block: not a
 * param (the caller's pointer), not a result (the caller's buffer). */
static void add_inter(Arena *a, FnInfo *fi, IrNode *n)
{
    n = storage_of(n);
    if (!n || n->op == OP_PARAM || result_of(fi->fn, n) >= 0 || inter_of(fi, n) >= 0)
        return;
    ARENA_PUSH(a, fi->inter, fi->ninter, fi->capinter, n);
}

/* Everything emit_* needs to know about one fn, computed once: C names,
 * the packed-buffer index of each tensor param, the intermediates, and the
 * source line for comments (basename only: byte-stable across checkouts). */
static void fn_info(Arena *a, const Plan *p, FnInfo *fi)
{
    const IrFunc *f = p->fn;
    memset(fi, 0, sizeof *fi);
    fi->plan = p;
    fi->fn = f;
    int total = f->nparams + f->nresults + f->nsyms + 1;
    const char **used = ARENA_ARRAY(a, const char *, total);
    int nused = 0;
    fi->name = f->name;
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
        fi->file = path ? base_name(path) : "";
    }
}

static int sym_is_static(const IrFunc *f, int s)
{
    return f->sym_static && f->sym_static[s] >= 0;
}

/* ---- text of types, sizes and values -------------------------------------- */

/* The C type of an element in host code (f16/bf16 as their bits). */
static const char *elem_ctype(DType t)
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
static const char *scalar_ctype(DType t)
{
    return t == DT_F16 || t == DT_BF16 ? "float" : elem_ctype(t);
}

/* The shortest %g text that reads back as the same value of dtype t (a
 * default rounded to f32 by sema prints as 1e-05, not 9.99999975e-06). */
static void put_value(Buf *b, double v, DType t)
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

/* One dim of a shape as a C expression over `dims`. */
static void put_dim(Buf *b, IrDim d)
{
    if (d.size >= 0)
        buf_printf(b, "%lld", (long long)d.size);
    else
        buf_printf(b, "dims[%d]", d.sym);
}

/* Bytes of a value: "fusec_mul(fusec_mul(4, dims[0]), dims[1])", folded for
 * static dims; SIZE_MAX at run time when it overflows. */
static void put_bytes(Buf *b, DType t, const IrShape *s)
{
    int64_t stat = dtype_size(t);
    int nsym = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i].size >= 0) {
            if (s->dims[i].size != 0 && stat > INT64_MAX / s->dims[i].size)
                stat = -1; /* overflows even statically: fold at run time */
            else if (stat >= 0)
                stat *= s->dims[i].size;
        } else {
            nsym++;
        }
    }
    if (stat < 0) {
        /* keep every factor symbolic-style so fusec_mul saturates */
        for (int i = 0; i < s->rank; i++)
            buf_puts(b, "fusec_mul(");
        buf_printf(b, "(size_t)%d", dtype_size(t));
        for (int i = 0; i < s->rank; i++) {
            buf_puts(b, ", ");
            put_dim(b, s->dims[i]);
            buf_putc(b, ')');
        }
        return;
    }
    for (int i = 0; i < nsym; i++)
        buf_puts(b, "fusec_mul(");
    buf_printf(b, "(size_t)%lld", (long long)stat);
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i].size < 0)
            buf_printf(b, ", dims[%d])", s->dims[i].sym);
}

/* A C condition that holds when a value of shape s has elements, or NULL
 * when it always has (static, non-zero), or "0" when it never has. */
static const char *nonempty_cond(Arena *a, const IrShape *s)
{
    Buf b = {0};
    int n = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i].size == 0) {
            buf_free(&b);
            return "0";
        }
        if (s->dims[i].size < 0) {
            buf_printf(&b, "%sdims[%d] != 0", n++ ? " && " : "", s->dims[i].sym);
        }
    }
    const char *r = n ? arena_strndup(a, b.data, b.len) : NULL;
    buf_free(&b);
    return r;
}

/* "f32[N, 1024]" */
static const char *type_text(Arena *a, const IrFunc *f, DType t, const IrShape *s)
{
    Buf b = {0};
    ir_type_str(f, t, s, &b);
    const char *r = arena_strndup(a, b.data ? b.data : "", b.len);
    buf_free(&b);
    return r;
}

/* The .fuse signature: "fn softmax(x: f32[N, M]) -> (result: f32[N, M])". */
static const char *signature(Arena *a, const IrFunc *f)
{
    Buf b = {0};
    buf_printf(&b, "fn %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *p = &f->params[i];
        buf_printf(&b, "%s%s: ", i ? ", " : "", p->name);
        ir_type_str(f, p->dtype, &p->shape, &b);
        if (p->has_default) {
            buf_puts(&b, " = ");
            put_value(&b, p->deflt, p->dtype);
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
static const char *typed_params(Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    const char *sep = "";
    for (int i = 0; i < f->nparams; i++, sep = ", ") {
        const IrParam *p = &f->params[i];
        if (p->is_tensor)
            buf_printf(&b, "%sconst %s *%s", sep, elem_ctype(p->dtype), fi->pname[i]);
        else
            buf_printf(&b, "%s%s %s", sep, scalar_ctype(p->dtype), fi->pname[i]);
    }
    for (int i = 0; i < f->nresults; i++, sep = ", ")
        buf_printf(&b, "%s%s *%s", sep, elem_ctype(f->results[i].dtype), fi->rname[i]);
    for (int i = 0; i < f->nsyms; i++)
        if (!sym_is_static(f, i)) {
            buf_printf(&b, "%sint64_t %s", sep, fi->dname[i]);
            sep = ", ";
        }
    const char *s = arena_strndup(a, b.data ? b.data : "", b.len);
    buf_free(&b);
    return s;
}

/* Just the dims, for NAME_workspace_size ("void" if none). */
static const char *dim_params(Arena *a, const FnInfo *fi, int with_names_only)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    const char *sep = "";
    for (int i = 0; i < f->nsyms; i++)
        if (!sym_is_static(f, i)) {
            buf_printf(&b, with_names_only ? "%s%s" : "%sint64_t %s", sep, fi->dname[i]);
            sep = ", ";
        }
    const char *s = b.len ? arena_strndup(a, b.data, b.len) : (with_names_only ? "" : "void");
    buf_free(&b);
    return s;
}

/* ---- the header ------------------------------------------------------------ */

/* The doc comment above a fn's declarations: what a caller must know to
 * call it right without reading the .fuse file -- every argument's dtype,
 * shape and C type, defaults, which dims are passed, the packed layout. */
static void header_fn_doc(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    emit_line(e, "/* %s", signature(a, f));
    if (fi->line)
        emit_line(e, " *   from %s:%d; %d kernel%s per call.", fi->file, fi->line, p->nkernels,
                  p->nkernels == 1 ? "" : "s");
    else
        emit_line(e, " *   %d kernel%s per call.", p->nkernels, p->nkernels == 1 ? "" : "s");
    emit_line(e, " *   Arguments (pointers are device memory):");
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *pa = &f->params[i];
        const char *ty = type_text(a, f, pa->dtype, &pa->shape);
        if (pa->is_tensor) {
            emit_line(e, " *     %-10s %s, read (const %s *)", fi->pname[i], ty,
                      elem_ctype(pa->dtype));
        } else if (pa->has_default) {
            Buf d = {0};
            put_value(&d, pa->deflt, pa->dtype);
            emit_line(e, " *     %-10s %s scalar (%s), default %.*s", fi->pname[i], ty,
                      scalar_ctype(pa->dtype), (int)d.len, d.data);
            buf_free(&d);
        } else {
            emit_line(e, " *     %-10s %s scalar (%s)", fi->pname[i], ty, scalar_ctype(pa->dtype));
        }
    }
    for (int i = 0; i < f->nresults; i++) {
        const IrResult *r = &f->results[i];
        emit_line(e, " *     %-10s %s, written (%s *%s)", fi->rname[i],
                  type_text(a, f, r->dtype, &r->shape), elem_ctype(r->dtype),
                  r->shape.rank == 0 ? ", a 1-element buffer" : "");
    }
    int ndyn = 0;
    for (int i = 0; i < f->nsyms; i++)
        ndyn += !sym_is_static(f, i);
    if (ndyn)
        emit_line(e, " *   Dims (int64_t, >= 0): %s.", dim_params(a, fi, 1));
    for (int i = 0; i < f->nsyms; i++)
        if (sym_is_static(f, i))
            emit_line(e, " *   Dim %s is %lld (-D %s=%lld): not passed to %s, but passed to %s_packed.",
                      f->syms[i], (long long)f->sym_static[i], f->syms[i],
                      (long long)f->sym_static[i], fi->name, fi->name);
    emit_line(e, " *   %s_packed: %d buffer%s (tensor params, then results), %d scalar%s,", fi->name,
              fi->ntensors + f->nresults, fi->ntensors + f->nresults == 1 ? "" : "s", fi->nscalars,
              fi->nscalars == 1 ? "" : "s");
    emit_line(e, " *     %d dim%s (every dim in order, static ones too).", f->nsyms,
              f->nsyms == 1 ? "" : "s");
    emit_line(e, " */");
}

/* The header: include-guarded, usable from C99+ and C++ (extern "C"), and
 * self-contained apart from fusert.h (fusert_status, fusert_stream). */
void emit_header(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    Arena a = {0};
    Emitter e = {out, 0};
    char *guard = arena_printf(&a, "FUSEC_GENERATED_%s_H", o->module);
    for (char *c = guard; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    emit_line(&e, "/* %s -- generated by fusec %s from %s; do not edit.", o->header_name,
              FUSEC_VERSION, base_name(o->source_name ? o->source_name : o->module));
    emit_line(&e, " *");
    emit_line(&e, " * Host API of module %s (target %s).  Every pointer is device memory;", o->module,
              o->target == TARGET_CUDA ? "cuda" : "nvrtc");
    emit_line(&e, " * every function is stream-ordered on `stream` (NULL: the default stream)");
    emit_line(&e, " * and returns FUSERT_SUCCESS or a status whose message fusert_last_error()");
    emit_line(&e, " * gives.  Per fn NAME:");
    emit_line(&e, " *   NAME(...)               allocates intermediates stream-ordered per call;");
    emit_line(&e, " *   NAME_ws(..., workspace, workspace_bytes, stream)");
    emit_line(&e, " *                           takes them from a caller's device workspace of at");
    emit_line(&e, " *                           least NAME_workspace_size(dims) bytes, 256-aligned;");
    emit_line(&e, " *   NAME_packed(buffers, scalars, dims, stream)   the generic entry for tools;");
    emit_line(&e, " *   NAME_kernel_count()     kernels launched per call.");
    emit_line(&e, " * A tensor with no elements may be passed as NULL.  Link with libfusert. */");
    emit_line(&e, "#ifndef %s", guard);
    emit_line(&e, "#define %s", guard);
    emit_line(&e, "%s", "");
    emit_line(&e, "#include <stddef.h>");
    emit_line(&e, "#include <stdint.h>");
    emit_line(&e, "#ifndef __cplusplus");
    emit_line(&e, "#include <stdbool.h>");
    emit_line(&e, "#endif");
    emit_line(&e, "#include \"fusert.h\"");
    emit_line(&e, "%s", "");
    emit_line(&e, "#ifdef __cplusplus");
    emit_line(&e, "extern \"C\" {");
    emit_line(&e, "#endif");
    for (int i = 0; i < nplans; i++) {
        FnInfo fi;
        fn_info(&a, plans[i], &fi);
        const char *tp = typed_params(&a, &fi);
        const char *sep = *tp ? ", " : "";
        emit_line(&e, "%s", "");
        header_fn_doc(&e, &a, &fi);
        emit_wrapped(&e, arena_printf(&a, "fusert_status %s(%s%sfusert_stream stream);", fi.name, tp, sep));
        emit_wrapped(&e, arena_printf(&a, "fusert_status %s_ws(%s%svoid *workspace, size_t workspace_bytes, "
                                          "fusert_stream stream);",
                                      fi.name, tp, sep));
        emit_line(&e, "/* bytes %s_ws needs; SIZE_MAX for negative or overflowing dims */", fi.name);
        emit_wrapped(&e, arena_printf(&a, "size_t %s_workspace_size(%s);", fi.name, dim_params(&a, &fi, 0)));
        emit_line(&e, "fusert_status %s_packed(void *const *buffers, const double *scalars,",
                  fi.name);
        emit_line(&e, "        const int64_t *dims, fusert_stream stream);");
        emit_line(&e, "int %s_kernel_count(void);", fi.name);
    }
    emit_line(&e, "%s", "");
    emit_line(&e, "#ifdef __cplusplus");
    emit_line(&e, "}");
    emit_line(&e, "#endif");
    emit_line(&e, "#endif /* %s */", guard);
    assert(e.indent == 0);
    arena_free_all(&a);
}

/* ---- the embedded CUDA source (nvrtc target) ------------------------------- */

/* src as adjacent C string literals, one per source line (split further
 * when long), escaped so that no trigraph or non-ASCII byte survives. */
/* Why the care: gcc -std=c11 honours trigraphs ("??=" would become '#'),
 * non-ASCII bytes would depend on the compiler's source charset, and long
 * lines hit translation limits.  Readers still see the kernel line by line. */
static void put_c_string(Buf *out, const char *src, size_t len)
{
    size_t i = 0;
    if (len == 0) {
        buf_puts(out, "    \"\"\n");
        return;
    }
    while (i < len) {
        size_t piece = 0;
        buf_puts(out, "    \"");
        while (i < len) {
            unsigned char c = (unsigned char)src[i++];
            if (c == '\n') {
                buf_puts(out, "\\n");
                break;
            }
            if (c == '\\' || c == '"') {
                buf_putc(out, '\\');
                buf_putc(out, (char)c);
            } else if (c == '\t') {
                buf_puts(out, "\\t");
            } else if (c == '?' && i < len && src[i] == '?') {
                buf_puts(out, "?\\"); /* no trigraphs: ?\? */
            } else if (c < 0x20 || c >= 0x7f) {
                buf_printf(out, "\\%03o", c);
            } else {
                buf_putc(out, (char)c);
            }
            if (++piece >= HOST_MAX_PIECE && i < len && src[i] != '\n')
                break;
        }
        buf_puts(out, "\"\n");
    }
}

/* ---- the target support block ------------------------------------------------ */

/* Saturating size arithmetic and block carving, shared by both targets.
 * Every helper is static and may be unused in a given module, hence
 * FUSEC_MAYBE_UNUSED (generated code must compile under -Werror). */
static void emit_common_helpers(Emitter *e)
{
    emit_line(e, "#if defined(__GNUC__)");
    emit_line(e, "#define FUSEC_MAYBE_UNUSED __attribute__((unused))");
    emit_line(e, "#else");
    emit_line(e, "#define FUSEC_MAYBE_UNUSED");
    emit_line(e, "#endif");
    emit_line(e, "%s", "");
    emit_line(e, "/* Sizes in bytes saturate at SIZE_MAX, which no allocation can meet. */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED size_t fusec_mul(size_t a, int64_t b)\n{");
    emit_line(e, "if (b < 0 || a == SIZE_MAX || (b != 0 && a > SIZE_MAX / (uint64_t)b))");
    emit_line(e, "    return SIZE_MAX;");
    emit_line(e, "return a * (size_t)b;");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED size_t fusec_add(size_t a, size_t b)\n{");
    emit_line(e, "return a > SIZE_MAX - b ? SIZE_MAX : a + b;");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED size_t fusec_align(size_t a)\n{");
    emit_line(e, "return a > SIZE_MAX - %d ? SIZE_MAX : (a + %d) & ~(size_t)%d;", HOST_ALIGN - 1,
              HOST_ALIGN - 1, HOST_ALIGN - 1);
    emit_close(e, "}");
    emit_line(e, "/* A piece of the block; NULL when there is no block (nothing needed). */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED void *fusec_piece(void *block, size_t off)\n{");
    emit_line(e, "return block ? (void *)((char *)block + off) : NULL;");
    emit_close(e, "}");
}

/* The cuda target's FUSEC_LAUNCH and helpers over the CUDA runtime.  Each
 * CUDA error is cleared (cudaGetLastError) once reported, so that it does
 * not resurface in the caller's next CUDA call, and becomes a fusert status
 * with a message naming the fn or kernel. */
static void emit_cuda_support(Emitter *e, Arena *a, const char *names, const char *module)
{
    emit_line(e, "/* ==== host support: the CUDA runtime ==== */");
    emit_line(e, "%s", "");
    emit_line(e, "/* Kernel names in K_INDEX order, for messages. */");
    emit_wrapped(e, arena_printf(a, "static const char *const fusec_kernel_names[] = {%s};", *names ? names : "NULL"));
    emit_line(e, "%s", "");
    emit_common_helpers(e);
    emit_line(e, "%s", "");
    emit_line(e, "#define FUSEC_LAUNCH(K_INDEX, KERNEL_SYMBOL, gx, gy, gz, bx, by, bz, shared_bytes, \\");
    emit_line(e, "                     stream, args) \\");
    emit_line(e, "    fusec_launch((K_INDEX), (const void *)(KERNEL_SYMBOL), (unsigned)(gx), (unsigned)(gy), \\");
    emit_line(e, "                 (unsigned)(gz), (unsigned)(bx), (unsigned)(by), (unsigned)(bz), \\");
    emit_line(e, "                 (size_t)(shared_bytes), (stream), (args))");
    emit_line(e, "%s", "");
    emit_line(e, "/* Launch kernel `fn`; a failure becomes FUSERT_ERROR_LAUNCH with the");
    emit_line(e, " * kernel's name and CUDA's words for it (the CUDA error is cleared). */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_launch(int k, const void *fn, unsigned gx, "
                 "unsigned gy,\n        unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shared_bytes,\n"
                 "        fusert_stream stream, void **args)\n{");
    emit_line(e, "cudaError_t err = cudaSuccess;");
    emit_line(e, "if (shared_bytes > 48 * 1024)");
    emit_line(e, "    err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,");
    emit_line(e, "                               (int)shared_bytes);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    err = cudaLaunchKernel(fn, dim3(gx, gy, gz), dim3(bx, by, bz), args, shared_bytes,");
    emit_line(e, "                           (cudaStream_t)stream);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    return FUSERT_SUCCESS;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(FUSERT_ERROR_LAUNCH,");
    emit_line(e, "                        \"%s: launch of kernel %%s (grid %%u x %%u x %%u, block %%u x %%u x %%u, \"", module);
    emit_line(e, "                        \"%%zu bytes of shared memory) failed: %%s\",");
    emit_line(e, "                        fusec_kernel_names[k], gx, gy, gz, bx, by, bz, shared_bytes,");
    emit_line(e, "                        cudaGetErrorString(err));");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The cluster width a kernel was built with: 0 where the binary's");
    emit_line(e, " * architecture has no clusters (before sm_90) or the runtime cannot say. */");
    emit_line(e, "#define FUSEC_CLUSTER_WIDTH(K_INDEX, KERNEL_SYMBOL, width) \\");
    emit_line(e, "    fusec_cluster_width((const void *)(KERNEL_SYMBOL), (width))");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_cluster_width(const void *fn, int *width)\n{");
    emit_line(e, "cudaFuncAttributes attr;");
    emit_line(e, "*width = 0;");
    emit_open(e, "if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "*width = attr.requiredClusterWidth;");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "static fusert_status fusec_cuda_error(cudaError_t err, const char *fn, const char *what)");
    emit_open(e, "{");
    emit_line(e, "fusert_status s = FUSERT_ERROR_CUDA;");
    emit_line(e, "if (err == cudaErrorMemoryAllocation)");
    emit_line(e, "    s = FUSERT_ERROR_OUT_OF_MEMORY;");
    emit_line(e, "else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)");
    emit_line(e, "    s = FUSERT_ERROR_NO_DEVICE;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(s, \"%%s: %%s: %%s\", fn, what, cudaGetErrorString(err));");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Attribute a of device dev, cached per device in cache[dev] (atomic:");
    emit_line(e, " * threads may race to store the same value; 0: not asked yet). */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED cudaError_t fusec_device_attr(std::atomic<int> *cache, cudaDeviceAttr a, int dev,\n"
                 "        int *out)\n{");
    emit_line(e, "int n = dev >= 0 && dev < FUSERT_MAX_DEVICES ? cache[dev].load(std::memory_order_relaxed) : 0;");
    emit_open(e, "if (n <= 0) {");
    emit_line(e, "cudaError_t err = cudaDeviceGetAttribute(&n, a, dev);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return err;");
    emit_line(e, "if (dev >= 0 && dev < FUSERT_MAX_DEVICES)");
    emit_line(e, "    cache[dev].store(n, std::memory_order_relaxed);");
    emit_close(e, "}");
    emit_line(e, "*out = n;");
    emit_line(e, "return cudaSuccess;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Multiprocessor count of the current device. */");
    emit_line(e, "static std::atomic<int> fusec_sm_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_sm_count(const char *fn, int *count)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "cudaError_t err = cudaGetDevice(&dev);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, fn, \"no CUDA device\");");
    emit_line(e, "err = fusec_device_attr(fusec_sm_cache, cudaDevAttrMultiProcessorCount, dev, count);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, fn, \"cannot query the multiprocessor count\");");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* How many blocks of `block` threads of a kernel a multiprocessor holds");
    emit_line(e, " * at once (its registers, shared memory, launch bounds); 0 where the");
    emit_line(e, " * runtime cannot say. */");
    emit_line(e, "#define FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) \\");
    emit_line(e, "    fusec_blocks_per_sm((const void *)(KERNEL_SYMBOL), (block), (n))");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_blocks_per_sm(const void *fn, int block, int *n)\n{");
    emit_open(e, "if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, fn, block, 0) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "*n = 0;");
    emit_close(e, "}");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The L2 cache size of the current device in bytes. */");
    emit_line(e, "#define FUSEC_L2_BYTES(bytes) fusec_l2_bytes(bytes)");
    emit_line(e, "static std::atomic<int> fusec_l2_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_l2_bytes(int *bytes)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "cudaError_t err = cudaGetDevice(&dev);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    err = fusec_device_attr(fusec_l2_cache, cudaDevAttrL2CacheSize, dev, bytes);");
    emit_line(e, "if (err != cudaSuccess)");
    emit_line(e, "    return fusec_cuda_error(err, \"fusec\", \"cannot query the L2 cache size\");");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The most shared memory a block of the current device may opt in to;");
    emit_line(e, " * 0 where the runtime cannot say (no such launch). */");
    emit_line(e, "#define FUSEC_SMEM_OPTIN(bytes) fusec_smem_optin(bytes)");
    emit_line(e, "static std::atomic<int> fusec_smem_cache[FUSERT_MAX_DEVICES];");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_smem_optin(int *bytes)\n{");
    emit_line(e, "int dev = 0;");
    emit_line(e, "if (cudaGetDevice(&dev) != cudaSuccess ||");
    emit_open(e, "    fusec_device_attr(fusec_smem_cache, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev, bytes) != cudaSuccess) {");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "*bytes = 0;");
    emit_close(e, "}");
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* Stream-ordered memory for intermediates and scratch. */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_alloc(const char *fn, void **ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaMallocAsync(ptr, bytes, (cudaStream_t)stream);");
    emit_line(e, "if (err == cudaSuccess)");
    emit_line(e, "    return FUSERT_SUCCESS;");
    emit_line(e, "*ptr = NULL;");
    emit_line(e, "(void)cudaGetLastError();");
    emit_line(e, "return fusert_set_error(err == cudaErrorMemoryAllocation ? FUSERT_ERROR_OUT_OF_MEMORY");
    emit_line(e, "                                                       : FUSERT_ERROR_CUDA,");
    emit_line(e, "                        \"%%s: cannot allocate %%zu bytes for intermediates: %%s\", fn, bytes,");
    emit_line(e, "                        cudaGetErrorString(err));");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_free(const char *fn, void *ptr, fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaFreeAsync(ptr, (cudaStream_t)stream);");
    emit_line(e, "return err == cudaSuccess ? FUSERT_SUCCESS");
    emit_line(e, "                          : fusec_cuda_error(err, fn, \"cannot free the intermediates\");");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_zero(const char *fn, void *ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "cudaError_t err = cudaMemsetAsync(ptr, 0, bytes, (cudaStream_t)stream);");
    emit_line(e, "return err == cudaSuccess ? FUSERT_SUCCESS");
    emit_line(e, "                          : fusec_cuda_error(err, fn, \"cannot zero the kernel scratch\");");
    emit_close(e, "}");
}

/* The nvrtc target's FUSEC_LAUNCH and helpers: everything goes through
 * fusert, which compiles fusec_source per kernel and device on the kernel's
 * first launch (.per_kernel: -DFUSERT_KERNEL=<K_INDEX> keeps the one
 * variant a launch picked, see emit_wrappers) and caches it on disk, finds
 * kernels by K_INDEX and records its own error messages. */
static void emit_nvrtc_support(Emitter *e, Arena *a, const char *names, int fast_math)
{
    emit_line(e, "/* ==== host support: fusert (NVRTC and the driver API) ==== */");
    emit_line(e, "%s", "");
    emit_line(e, "/* Kernel names in K_INDEX order. */");
    emit_wrapped(e, arena_printf(a, "static const char *const fusec_kernel_names[] = {%s};", *names ? names : "NULL"));
    emit_line(e, "%s", "");
    emit_line(e, "/* The module: each kernel is compiled alone for the current device on its");
    emit_line(e, " * first launch, then cached. */");
    emit_open(e, "static fusert_program fusec_program = {");
    emit_line(e, ".name = fusec_module_name,");
    emit_line(e, ".source = fusec_source,");
    emit_line(e, ".kernels = fusec_kernel_names,");
    if (*names)
        emit_line(e, ".nkernels = (int)(sizeof fusec_kernel_names / sizeof fusec_kernel_names[0]),");
    else
        emit_line(e, ".nkernels = 0,");
    /* -minimal: NVRTC leaves out textures, the device runtime and the CUDA
     * runtime's types, none of which the source uses: the same CUBIN, byte
     * for byte, for each of the 672 kernels of the examples and the emulator
     * and GPU test inputs (NVRTC 13.0, sm_90; tools/bench/nvrtc_same_sass.py),
     * compiled 3-6% faster (docs/benchmarks.md, "Latency and JIT"); fusert
     * drops it for an NVRTC before 12.4 */
    emit_line(e, ".options = %s,", fast_math ? "\"-minimal --use_fast_math\"" : "\"-minimal\"");
    emit_line(e, ".per_kernel = 1,");
    emit_close(e, "};");
    emit_line(e, "%s", "");
    emit_common_helpers(e);
    emit_line(e, "%s", "");
    emit_line(e, "/* The kernel symbol is not needed here: kernels are found by index. */");
    emit_line(e, "#define FUSEC_LAUNCH(K_INDEX, KERNEL_SYMBOL, gx, gy, gz, bx, by, bz, shared_bytes, \\");
    emit_line(e, "                     stream, args) \\");
    emit_line(e, "    fusec_launch((K_INDEX), (unsigned)(gx), (unsigned)(gy), (unsigned)(gz), (unsigned)(bx), \\");
    emit_line(e, "                 (unsigned)(by), (unsigned)(bz), (unsigned)(shared_bytes), (stream), (args))");
    emit_line(e, "%s", "");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_launch(int k, unsigned gx, unsigned gy, unsigned gz,\n"
                 "        unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes, fusert_stream stream,\n"
                 "        void **args)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_launch(fn, gx, gy, gz, bx, by, bz, shared_bytes, stream, args);");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The cluster width kernel K_INDEX was built with (0: none), compiling it. */");
    emit_line(e, "#define FUSEC_CLUSTER_WIDTH(K_INDEX, KERNEL_SYMBOL, width) fusec_cluster_width((K_INDEX), (width))");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_cluster_width(int k, int *width)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "*width = 0;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_kernel_cluster_width(fn, width);");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* How many blocks of `block` threads of kernel K_INDEX a multiprocessor");
    emit_line(e, " * holds at once (0: the driver cannot say), compiling it. */");
    emit_line(e, "#define FUSEC_BLOCKS_PER_SM(K_INDEX, KERNEL_SYMBOL, block, n) fusec_blocks_per_sm((K_INDEX), (block), (n))");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_blocks_per_sm(int k, int block, int *n)\n{");
    emit_line(e, "void *fn = NULL;");
    emit_line(e, "*n = 0;");
    emit_line(e, "fusert_status st = fusert_program_kernel(&fusec_program, k, &fn);");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "return fusert_kernel_blocks_per_sm(fn, block, 0, n);");
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_line(e, "/* The L2 cache size of the current device in bytes. */");
    emit_line(e, "#define FUSEC_L2_BYTES(bytes) fusert_device_l2_bytes(bytes)");
    emit_line(e, "%s", "");
    emit_line(e, "/* The most shared memory a block of the current device may opt in to. */");
    emit_line(e, "#define FUSEC_SMEM_OPTIN(bytes) fusert_device_shared_optin(bytes)");
    emit_line(e, "%s", "");
    emit_line(e, "/* fusert keeps the messages; these only fit the cuda target's shapes. */");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_sm_count(const char *fn, int *count)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_device_sm_count(count);");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_alloc(const char *fn, void **ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_alloc_async(ptr, bytes, stream);");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_free(const char *fn, void *ptr, fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_free_async(ptr, stream);");
    emit_close(e, "}");
    emit_open(e, "static FUSEC_MAYBE_UNUSED fusert_status fusec_zero(const char *fn, void *ptr, size_t bytes,\n"
                 "        fusert_stream stream)\n{");
    emit_line(e, "(void)fn;");
    emit_line(e, "return fusert_memset_async(ptr, 0, bytes, stream);");
    emit_close(e, "}");
}

/* ---- entry functions ------------------------------------------------------------ */

/* The buffer expression of a kernel input or output inside NAME_run. */
static void put_buffer(Buf *b, const FnInfo *fi, IrNode *n, int is_output)
{
    const IrFunc *f = fi->fn;
    IrNode *s = storage_of(n);
    if (!is_output && s && s->op == OP_PARAM && s->param >= 0 && s->param < f->nparams &&
        fi->pbuf[s->param] >= 0) {
        buf_printf(b, "bufs[%d]", fi->pbuf[s->param]);
        return;
    }
    int r = s ? result_of(f, s) : -1;
    if (r >= 0) {
        buf_printf(b, "bufs[%d]", fi->ntensors + r);
        return;
    }
    int i = s ? inter_of(fi, s) : -1;
    if (i < 0)
        ICE(is_output ? "a kernel stores into a parameter" : "a kernel reads a value that no kernel stores");
    buf_printf(b, "fusec_piece(block, off[%d])", i);
}

/* How people know a value: its param or result name, its source name, or %id. */
static void value_name(Buf *b, const FnInfo *fi, IrNode *n)
{
    const IrFunc *f = fi->fn;
    IrNode *s = storage_of(n);
    int r = s ? result_of(f, s) : -1;
    if (s && s->op == OP_PARAM && s->param >= 0 && s->param < f->nparams)
        buf_puts(b, f->params[s->param].name);
    else if (r >= 0)
        buf_puts(b, f->results[r].name);
    else if (s && s->name)
        buf_puts(b, s->name);
    else
        buf_printf(b, "%%%d", s ? s->id : n->id);
}

static void value_comment(Buf *b, Arena *a, const FnInfo *fi, const IrNode *n)
{
    buf_printf(b, "%%%d", n->id);
    if (n->name)
        buf_printf(b, " %s", n->name);
    buf_printf(b, ": %s", type_text(a, fi->fn, n->dtype, &n->shape));
}

/* NAME_layout: the one place that decides where every piece of the block
 * lives, used by NAME_run (to carve) and NAME_workspace_size (to size), so
 * the two can never disagree.  Scratch comes last so that a single memset
 * zeroes what needs it: from its start to the end of the last kernel's
 * counters (NAME_scratch_zero_bytes). */
static void emit_layout(Emitter *e, Arena *a, const FnInfo *fi)
{
    const Plan *p = fi->plan;
    emit_line(e, "/* Offsets of the pieces of %s's block: %d intermediate%s, then the scratch",
              fi->name, fi->ninter, fi->ninter == 1 ? "" : "s");
    emit_line(e, " * of each kernel (off[%d] on; its counters zero-filled per call).  Returns the size. */",
              fi->ninter);
    emit_open(e, arena_printf(a, "static size_t %s_layout(const int64_t *dims, size_t *off)\n{",
                              fi->name));
    emit_line(e, "size_t at = 0;");
    emit_line(e, "(void)dims;");
    for (int i = 0; i < fi->ninter; i++) {
        Buf c = {0}, s = {0};
        value_comment(&c, a, fi, fi->inter[i]);
        DType md = fuse_mem_dtype(fi->fn, fi->inter[i]);
        if (md != fi->inter[i]->dtype)
            buf_printf(&c, ", kept as %s", dtype_name(md));
        put_bytes(&s, md, &fi->inter[i]->shape);
        emit_line(e, "off[%d] = at; /* %.*s */", i, (int)c.len, c.data);
        emit_line(e, "at = fusec_align(fusec_add(at, %.*s));", (int)s.len, s.data);
        buf_free(&c);
        buf_free(&s);
    }
    emit_line(e, "off[%d] = at; /* scratch */", fi->ninter);
    for (int k = 0; k < p->nkernels; k++) {
        emit_line(e, "off[%d] = at;", fi->ninter + 1 + k);
        emit_line(e, "at = fusec_align(fusec_add(at, %s_scratch_bytes(dims)));", p->kernels[k].name);
    }
    emit_line(e, "return at;");
    emit_close(e, "}");
}

/* argmax/argmin over an empty axis has no answer (docs/language.md; NumPy
 * raises too, and the interpreter reports it): the entry refuses such dims
 * with a status instead of writing an index that means nothing. */
static void emit_empty_arg_checks(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    for (int i = 0; i < f->nnodes; i++) {
        const IrNode *n = f->nodes[i];
        if ((n->op != OP_ARGMAX && n->op != OP_ARGMIN) || n->nin < 1)
            continue;
        const IrShape *in = &n->in[0].node->shape;
        Buf cond = {0}, what = {0};
        int never = 0, stat = 0;
        for (int d = 0; d < in->rank; d++) {
            if (!(n->axes & (1u << d)))
                continue;
            if (in->dims[d].size > 0)
                never = 1; /* a static, non-empty reduced dim */
            else if (in->dims[d].size == 0)
                stat = 1;
            else {
                buf_printf(&cond, "%sdims[%d] == 0", cond.len ? " || " : "", in->dims[d].sym);
                buf_printf(&what, "%s%s = 0", what.len ? ", " : "", f->syms[in->dims[d].sym]);
            }
        }
        const char *out = nonempty_cond(a, &n->shape);
        if (!never && (stat || cond.len) && !(out && strcmp(out, "0") == 0)) {
            int line = 0, col;
            const char *path = "";
            if (n->loc.file >= 0) {
                diag_line_col(n->loc.file, n->loc.begin, &line, &col);
                path = diag_file_path(n->loc.file) ? base_name(diag_file_path(n->loc.file)) : "";
            }
            if (stat)
                emit_line(e, "if (%s)", out ? out : "1");
            else if (out)
                emit_line(e, "if ((%s) && %s)", cond.data, out);
            else
                emit_line(e, "if (%s)", cond.data);
            emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, \"%s: %s over an empty axis "
                         "(%s) has no answer (%s:%d)\");", f->name, op_info[n->op].src,
                      stat ? "a static size 0" : what.data, path, line);
        }
        buf_free(&cond);
        buf_free(&what);
    }
}

/* NAME_check: argument errors in the caller's words, before any CUDA call,
 * so they need no device.  A NULL pointer is accepted for a tensor with
 * no elements (cudaMalloc(0) may give NULL); static dims need no check in
 * the typed entries since they are not passed. */
static void emit_check(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    emit_line(e, "/* Dims first (the empty-tensor rule needs them), then pointers. */");
    emit_open(e, arena_printf(a, "static fusert_status %s_check(void *const *bufs, const int64_t *dims)\n{",
                              fi->name));
    emit_line(e, "(void)bufs;");
    emit_line(e, "(void)dims;");
    for (int i = 0; i < f->nsyms; i++) {
        if (sym_is_static(f, i))
            continue;
        emit_line(e, "if (dims[%d] < 0)", i);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE, \"%s: %s = %%lld is negative\",",
                  f->name, f->syms[i]);
        emit_line(e, "                            (long long)dims[%d]);", i);
    }
    for (int b = 0; b < fi->ntensors + f->nresults; b++) {
        const IrShape *s = NULL;
        const char *name = NULL;
        if (b < fi->ntensors) {
            for (int i = 0; i < f->nparams; i++)
                if (fi->pbuf[i] == b) {
                    s = &f->params[i].shape;
                    name = f->params[i].name;
                }
        } else {
            s = &f->results[b - fi->ntensors].shape;
            name = f->results[b - fi->ntensors].name;
        }
        const char *cond = nonempty_cond(a, s);
        if (cond && strcmp(cond, "0") == 0)
            continue; /* always empty: any pointer will do */
        if (cond)
            emit_line(e, "if (!bufs[%d] && %s)", b, cond);
        else
            emit_line(e, "if (!bufs[%d])", b);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s: %s is NULL\");", f->name,
                  name);
    }
    emit_empty_arg_checks(e, a, fi);
    emit_line(e, "return FUSERT_SUCCESS;");
    emit_close(e, "}");
}

/* Whether "(c)" is already one of the alternatives in cond. */
static int cond_has(const Buf *cond, const char *c)
{
    size_t n = strlen(c);
    for (size_t i = 0; i + n + 2 <= cond->len; i++)
        if (cond->data[i] == '(' && memcmp(cond->data + i + 1, c, n) == 0 &&
            cond->data[i + 1 + n] == ')' && (i + n + 2 == cond->len || cond->data[i + n + 2] == ' '))
            return 1;
    return 0;
}

/* When kernel k has something to write: NULL always, "0" never, else a C
 * condition "(dims[0] != 0) || (...)" over its outputs' dims. */
static const char *launch_cond(Arena *a, const Kernel *kn)
{
    Buf cond = {0};
    if (kn->noutputs == 0)
        return NULL;
    for (int i = 0; i < kn->noutputs; i++) {
        const char *c = nonempty_cond(a, &kn->outputs[i]->shape);
        if (!c) {
            buf_free(&cond);
            return NULL;
        }
        if (strcmp(c, "0") != 0 && !cond_has(&cond, c))
            buf_printf(&cond, "%s(%s)", cond.len ? " || " : "", c);
    }
    const char *r = cond.len ? arena_strndup(a, cond.data, cond.len) : "0";
    buf_free(&cond);
    return r;
}

/* NAME_run: the body shared by NAME and NAME_ws.  One block per call
 * (one allocation, not one per intermediate: fewer pool operations and one
 * free), stream-ordered so that the call never synchronises.  After the
 * first failure no further kernel is launched, but the block is still
 * freed, and the first error is the one returned. */
static void emit_run(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    int npieces = fi->ninter + 1 + p->nkernels;
    emit_line(e, "/* Check, get the block (the caller's workspace when ws is set), zero the");
    emit_line(e, " * scratch, launch the %d kernel%s in order, free. */", p->nkernels,
              p->nkernels == 1 ? "" : "s");
    emit_open(e, arena_printf(a, "static fusert_status %s_run(void *const *bufs, const double *scalars, "
                                 "const int64_t *dims,\n        int ws, void *workspace, size_t workspace_bytes, "
                                 "fusert_stream stream)\n{",
                              fi->name));
    emit_line(e, "size_t off[%d];", npieces + 1);
    emit_line(e, "void *block = NULL;");
    emit_line(e, "int owned = 0, sm = 0;");
    emit_line(e, "fusert_status st = %s_check(bufs, dims);", fi->name);
    emit_line(e, "size_t need;");
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].kind == KK_REDUCE) {
            emit_line(e, "size_t zero_end, zero_need = 0;");
            emit_line(e, "void *zs = NULL;");
            break;
        }
    emit_line(e, "(void)scalars;");
    emit_line(e, "(void)sm;");
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    /* with nothing to write, nothing is allocated, zeroed or launched */
    {
        Buf any = {0};
        int always = p->nkernels == 0;
        for (int k = 0; k < p->nkernels && !always; k++) {
            const Kernel *kn = &p->kernels[k];
            if (!launch_cond(a, kn))
                always = 1;
            for (int i = 0; i < kn->noutputs && !always; i++) {
                const char *c = nonempty_cond(a, &kn->outputs[i]->shape);
                if (c && strcmp(c, "0") != 0 && !cond_has(&any, c))
                    buf_printf(&any, "%s(%s)", any.len ? " || " : "", c);
            }
        }
        if (!always) {
            emit_line(e, "if (!(%s))", any.len ? any.data : "0");
            emit_line(e, "    return FUSERT_SUCCESS; /* every output is empty */");
        }
        buf_free(&any);
    }
    emit_line(e, "need = %s_layout(dims, off);", fi->name);
    emit_line(e, "if (need == SIZE_MAX)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,");
    emit_line(e, "                            \"%s: the dims are too large: intermediates overflow size_t\");",
              f->name);
    emit_open(e, "if (ws) {");
    emit_line(e, "if (need > 0 && !workspace)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER,");
    emit_line(e, "                            \"%s_ws: workspace is NULL but %%zu bytes are needed\", need);",
              f->name);
    emit_line(e, "if (workspace_bytes < need)");
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_WORKSPACE_TOO_SMALL,");
    emit_line(e, "                            \"%s_ws: workspace of %%zu bytes is too small: %%zu bytes \"", f->name);
    emit_line(e, "                            \"needed (%s_workspace_size)\", workspace_bytes, need);", f->name);
    emit_line(e, "if (need > 0 && ((uintptr_t)workspace %% %d) != 0)", HOST_ALIGN);
    emit_line(e, "    return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,");
    emit_line(e, "                            \"%s_ws: workspace must be %d-byte aligned\");", f->name, HOST_ALIGN);
    emit_line(e, "block = need > 0 ? workspace : NULL;");
    e->indent--;
    emit_open(e, "} else if (need > 0) {");
    emit_line(e, "st = fusec_alloc(\"%s\", &block, need, stream);", f->name);
    emit_line(e, "if (st != FUSERT_SUCCESS)");
    emit_line(e, "    return st;");
    emit_line(e, "owned = 1;");
    emit_close(e, "}");
    /* The counters and atomic accumulators of the reduce kernels must be
     * all zero when each starts, and each leaves them so: all of them use
     * the runtime's zeroed scratch of the stream, with no memset.  Where
     * there is none (a stream being captured into a graph, an old driver),
     * zero this call's scratch up to the end of the last counters that need
     * it (a memset of the partials would only cost time). */
    int nred = 0;
    for (int k = 0; k < p->nkernels; k++)
        nred += p->kernels[k].kind == KK_REDUCE;
    if (nred > 0) {
        for (int k = 0; k < p->nkernels; k++)
            if (p->kernels[k].kind == KK_REDUCE) {
                emit_line(e, "if (%s_scratch_zero_bytes(dims) > zero_need)", p->kernels[k].name);
                emit_line(e, "    zero_need = %s_scratch_zero_bytes(dims);", p->kernels[k].name);
            }
        emit_line(e, "if (zero_need > 0)");
        emit_line(e, "    st = fusert_zeroed_scratch(stream, zero_need, &zs);");
        emit_open(e, "if (st == FUSERT_SUCCESS && !zs) {");
        emit_line(e, "zero_end = off[%d];", fi->ninter);
        for (int k = 0; k < p->nkernels; k++)
            if (p->kernels[k].kind == KK_REDUCE) {
                emit_line(e, "if (%s_scratch_zero_bytes(dims) > 0)", p->kernels[k].name);
                emit_line(e, "    zero_end = off[%d] + %s_scratch_zero_bytes(dims);", fi->ninter + 1 + k,
                          p->kernels[k].name);
            }
        emit_line(e, "if (zero_end > off[%d])", fi->ninter);
        emit_line(e, "    st = fusec_zero(\"%s\", fusec_piece(block, off[%d]), zero_end - off[%d], stream);",
                  f->name, fi->ninter, fi->ninter);
        emit_close(e, "}");
    }
    if (p->nkernels > 0) {
        emit_line(e, "if (st == FUSERT_SUCCESS)");
        emit_line(e, "    st = fusec_sm_count(\"%s\", &sm);", f->name);
    }
    for (int k = 0; k < p->nkernels; k++) {
        const Kernel *kn = &p->kernels[k];
        Buf list = {0};
        const char *sep = "";
        const char *cond = launch_cond(a, kn);
        for (int i = 0; i < kn->ninputs; i++) {
            if (is_scalar_param(f, storage_of(kn->inputs[i])))
                continue;
            buf_puts(&list, sep);
            put_buffer(&list, fi, kn->inputs[i], 0);
            sep = ", ";
        }
        for (int i = 0; i < kn->noutputs; i++) {
            buf_puts(&list, sep);
            if (kn->out_result && kn->out_result[i] >= 0)
                buf_printf(&list, "bufs[%d]", fi->ntensors + kn->out_result[i]);
            else
                put_buffer(&list, fi, kn->outputs[i], 1);
            sep = ", ";
        }
        int line = 0, col;
        if (kn->loc.file >= 0)
            diag_line_col(kn->loc.file, kn->loc.begin, &line, &col);
        emit_line(e, "%s", "");
        Buf what = {0};
        for (int i = 0; i < kn->ninputs; i++) {
            buf_puts(&what, i ? ", " : "; reads ");
            value_name(&what, fi, kn->inputs[i]);
        }
        for (int i = 0; i < kn->noutputs; i++) {
            buf_puts(&what, i ? ", " : "; writes ");
            if (kn->out_result && kn->out_result[i] >= 0)
                buf_puts(&what, f->results[kn->out_result[i]].name);
            else
                value_name(&what, fi, kn->outputs[i]);
        }
        if (line)
            emit_line(e, "/* kernel %d: %s (%s:%d)%.*s */", k, kn->name, fi->file, line, (int)what.len,
                      what.data ? what.data : "");
        else
            emit_line(e, "/* kernel %d: %s%.*s */", k, kn->name, (int)what.len, what.data ? what.data : "");
        buf_free(&what);
        if (!cond)
            emit_open(e, "if (st == FUSERT_SUCCESS) {");
        else if (strcmp(cond, "0") == 0)
            emit_open(e, "if (0) { /* every output is empty */");
        else if (!strstr(cond, " || ")) /* one alternative: its own parens do */
            emit_open(e, arena_printf(a, "if (st == FUSERT_SUCCESS && %s) {", cond));
        else
            emit_open(e, arena_printf(a, "if (st == FUSERT_SUCCESS && (%s)) {", cond));
        emit_line(e, "void *const kbufs[] = {%s};", list.len ? list.data : "NULL");
        if (kn->kind == KK_REDUCE) {
            emit_line(e, "st = %s_launch(kbufs, scalars, dims, fusec_piece(block, off[%d]),", kn->name,
                      fi->ninter + 1 + k);
            emit_line(e, "        zs ? zs : fusec_piece(block, off[%d]), sm, stream);", fi->ninter + 1 + k);
        } else
            emit_line(e, "st = %s_launch(kbufs, scalars, dims, fusec_piece(block, off[%d]), NULL, sm, stream);",
                      kn->name, fi->ninter + 1 + k);
        emit_close(e, "}");
        buf_free(&list);
    }
    emit_open(e, "if (owned) {");
    emit_line(e, "fusert_status st2 = fusec_free(\"%s\", block, stream);", f->name);
    emit_line(e, "if (st == FUSERT_SUCCESS)");
    emit_line(e, "    st = st2;");
    emit_close(e, "}");
    emit_line(e, "return st;");
    emit_close(e, "}");
}

/* The arrays the typed entries hand to NAME_run. */
static void emit_pack(Emitter *e, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    Buf b = {0};
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_tensor)
            buf_printf(&b, "%s(void *)%s", b.len ? ", " : "", fi->pname[i]);
    for (int i = 0; i < f->nresults; i++)
        buf_printf(&b, "%s(void *)%s", b.len ? ", " : "", fi->rname[i]);
    emit_line(e, "void *const bufs[] = {%s};", b.len ? b.data : "NULL");
    b.len = 0;
    for (int i = 0; i < f->nparams; i++)
        buf_printf(&b, "%s%s%s", i ? ", " : "", f->params[i].is_tensor ? "0" : "(double)",
                   f->params[i].is_tensor ? "" : fi->pname[i]);
    emit_line(e, "const double scalars[] = {%s};", b.len ? b.data : "0");
    b.len = 0;
    for (int i = 0; i < f->nsyms; i++) {
        if (sym_is_static(f, i))
            buf_printf(&b, "%s%lld", i ? ", " : "", (long long)f->sym_static[i]);
        else
            buf_printf(&b, "%s%s", i ? ", " : "", fi->dname[i]);
    }
    emit_line(e, "const int64_t dims[] = {%s};", b.len ? b.data : "0");
    buf_free(&b);
}

/* The five extern functions of a fn.  NAME_packed's dims are every sym in
 * IrFunc.syms order, static ones included (and checked): a tool that reads
 * shapes from .npy files can fill them without knowing about -D. */
static void emit_entries(Emitter *e, Arena *a, const FnInfo *fi)
{
    const IrFunc *f = fi->fn;
    const Plan *p = fi->plan;
    const char *tp = typed_params(a, fi);
    const char *sep = *tp ? ", " : "";
    emit_line(e, "%s", "");
    emit_wrapped(e, arena_printf(a, "fusert_status %s(%s%sfusert_stream stream)", fi->name, tp, sep));
    emit_open(e, "{");
    emit_pack(e, fi);
    emit_line(e, "return %s_run(bufs, scalars, dims, 0, NULL, 0, stream);", fi->name);
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_wrapped(e, arena_printf(a, "fusert_status %s_ws(%s%svoid *workspace, size_t workspace_bytes, "
                                    "fusert_stream stream)",
                                 fi->name, tp, sep));
    emit_open(e, "{");
    emit_pack(e, fi);
    emit_line(e, "return %s_run(bufs, scalars, dims, 1, workspace, workspace_bytes, stream);", fi->name);
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_wrapped(e, arena_printf(a, "size_t %s_workspace_size(%s)", fi->name, dim_params(a, fi, 0)));
    emit_open(e, "{");
    Buf b = {0};
    int ndyn = 0;
    for (int i = 0; i < f->nsyms; i++) {
        if (sym_is_static(f, i)) {
            buf_printf(&b, "%s%lld", i ? ", " : "", (long long)f->sym_static[i]);
        } else {
            buf_printf(&b, "%s%s", i ? ", " : "", fi->dname[i]);
            ndyn++;
        }
    }
    emit_line(e, "const int64_t dims[] = {%s};", b.len ? b.data : "0");
    emit_line(e, "size_t off[%d];", fi->ninter + 2 + p->nkernels);
    for (int i = 0; i < f->nsyms; i++)
        if (!sym_is_static(f, i)) {
            emit_line(e, "if (%s < 0)", fi->dname[i]);
            emit_line(e, "    return SIZE_MAX;");
        }
    emit_line(e, "return %s_layout(dims, off);", fi->name);
    emit_close(e, "}");
    (void)ndyn;

    /* _packed: check the arrays and the static dims, call NAME_run */
    emit_line(e, "%s", "");
    emit_open(e, arena_printf(a, "fusert_status %s_packed(void *const *buffers, const double *scalars,\n"
                                 "        const int64_t *dims, fusert_stream stream)\n{",
                              fi->name));
    emit_line(e, "(void)scalars;");
    emit_line(e, "(void)dims;");
    if (fi->ntensors + f->nresults > 0) {
        emit_line(e, "if (!buffers)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: buffers is NULL\");",
                  f->name);
    } else {
        emit_line(e, "(void)buffers;");
    }
    if (fi->nscalars > 0) {
        emit_line(e, "if (!scalars)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: scalars is NULL\");",
                  f->name);
    }
    if (f->nsyms > 0) {
        emit_line(e, "if (!dims)");
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_NULL_POINTER, \"%s_packed: dims is NULL\");",
                  f->name);
    }
    for (int i = 0; i < f->nsyms; i++) {
        if (!sym_is_static(f, i))
            continue;
        long long v = (long long)f->sym_static[i];
        emit_line(e, "if (dims[%d] != %lld)", i, v);
        emit_line(e, "    return fusert_set_error(FUSERT_ERROR_SHAPE_MISMATCH,");
        emit_line(e, "                            \"%s: dim %s must be %lld (compiled with -D %s=%lld), got %%lld\",",
                  f->name, f->syms[i], v, f->syms[i], v);
        emit_line(e, "                            (long long)dims[%d]);", i);
    }
    /* straight to NAME_run, not through the exported NAME: one packing, and
     * no call that another library's symbol of the same name could take
     * (ELF interposition) when the module is loaded into a process.  The
     * scalars go through the C type NAME takes, as they would there. */
    b.len = 0;
    int si = 0;
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *pa = &f->params[i];
        if (i)
            buf_puts(&b, ", ");
        if (pa->is_tensor)
            buf_puts(&b, "0");
        else if (pa->dtype == DT_BOOL)
            buf_printf(&b, "(double)(scalars[%d] != 0)", si++);
        else
            buf_printf(&b, "(double)(%s)scalars[%d]", scalar_ctype(pa->dtype), si++);
    }
    emit_line(e, "const double sc[] = {%s};", b.len ? b.data : "0");
    if (f->nsyms == 0)
        emit_line(e, "static const int64_t no_dims[1] = {0};");
    emit_line(e, "return %s_run(buffers, sc, %s, 0, NULL, 0, stream);", fi->name,
              f->nsyms ? "dims" : "no_dims");
    buf_free(&b);
    emit_close(e, "}");
    emit_line(e, "%s", "");
    emit_open(e, arena_printf(a, "int %s_kernel_count(void)\n{", fi->name));
    emit_line(e, "return %d;", p->nkernels);
    emit_close(e, "}");
}

/* ---- the source ------------------------------------------------------------------- */

/* The main output.  Order matters: the stubs use FUSEC_LAUNCH, so the
 * support block comes first; the entries call the stubs, so they come last.
 * In the nvrtc target the kernels are data (a string), in the cuda target
 * they are code compiled by nvcc together with the host part. */
void emit_host_source(Buf *out, Plan **plans, int nplans, const EmitOptions *o)
{
    Arena a = {0};
    Emitter e = {out, 0};
    Buf names = {0}, kernels = {0}, stubs = {0};
    emit_cuda_kernel_names(&names, plans, nplans, o);
    emit_cuda_kernels(&kernels, plans, nplans, o);
    emit_cuda_launchers(&stubs, plans, nplans, o);
    /* the names list goes on one line: strip trailing blanks and commas */
    while (names.len && (names.data[names.len - 1] == '\n' || names.data[names.len - 1] == ' ' ||
                         names.data[names.len - 1] == ','))
        names.len--;
    buf_putc(&names, 0);
    const char *src = base_name(o->source_name ? o->source_name : o->module);
    int cuda = o->target == TARGET_CUDA;

    emit_line(&e, "/* %s.%s -- generated by fusec %s from %s; do not edit.", o->module, cuda ? "cu" : "c",
              FUSEC_VERSION, src);
    if (cuda) {
        emit_line(&e, " * Target cuda: compile with nvcc (-I for fusert.h) and link with libfusert");
        emit_line(&e, " * (used only for fusert_set_error and fusert_last_error). */");
    } else {
        emit_line(&e, " * Target nvrtc: plain C11; the kernels are compiled at run time by fusert");
        emit_line(&e, " * (NVRTC, cached on disk).  Compile with -I for fusert.h, link with");
        emit_line(&e, " * libfusert. */");
    }
    emit_line(&e, "#include \"%s\"", o->header_name);
    if (cuda) {
        emit_line(&e, "#include <cuda_runtime.h>");
        emit_line(&e, "#include <atomic>");
    }
    emit_line(&e, "#include <stddef.h>");
    emit_line(&e, "#include <stdint.h>");
    emit_line(&e, "%s", "");
    if (cuda) {
        emit_line(&e, "/* ==== kernels ==== */");
        emit_line(&e, "/* Not every module uses every helper of the kernel preamble: no warning");
        emit_line(&e, " * #177 (declared but never referenced) for the kernels' part. */");
        emit_line(&e, "#if defined(__NVCC__)");
        emit_line(&e, "#pragma nv_diag_suppress 177");
        emit_line(&e, "#endif");
        buf_write(out, kernels.data ? kernels.data : "", kernels.len);
        if (kernels.len && kernels.data[kernels.len - 1] != '\n')
            buf_putc(out, '\n');
        emit_line(&e, "#if defined(__NVCC__)");
        emit_line(&e, "#pragma nv_diag_default 177");
        emit_line(&e, "#endif");
        emit_line(&e, "%s", "");
        emit_cuda_support(&e, &a, names.data, o->module);
    } else {
        emit_line(&e, "static const char fusec_module_name[] = \"%s\";", o->module);
        emit_line(&e, "%s", "");
        emit_line(&e, "/* ==== kernels: CUDA source for NVRTC ==== */");
        emit_line(&e, "#if defined(__GNUC__)");
        emit_line(&e, "#pragma GCC diagnostic push");
        emit_line(&e, "#pragma GCC diagnostic ignored \"-Woverlength-strings\"");
        emit_line(&e, "#endif");
        emit_line(&e, "static const char fusec_source[] =");
        put_c_string(out, kernels.data ? kernels.data : "", kernels.len);
        emit_line(&e, "    ;");
        emit_line(&e, "#if defined(__GNUC__)");
        emit_line(&e, "#pragma GCC diagnostic pop");
        emit_line(&e, "#endif");
        emit_line(&e, "%s", "");
        emit_nvrtc_support(&e, &a, names.data, o->fast_math);
    }
    emit_line(&e, "%s", "");
    emit_line(&e, "/* ==== launch stubs ==== */");
    buf_write(out, stubs.data ? stubs.data : "", stubs.len);
    if (stubs.len && stubs.data[stubs.len - 1] != '\n')
        buf_putc(out, '\n');

    for (int i = 0; i < nplans; i++) {
        FnInfo fi;
        fn_info(&a, plans[i], &fi);
        emit_line(&e, "%s", "");
        if (fi.line)
            emit_line(&e, "/* ==== %s (%s:%d): %d kernel%s ==== */", fi.name, fi.file, fi.line,
                      plans[i]->nkernels, plans[i]->nkernels == 1 ? "" : "s");
        else
            emit_line(&e, "/* ==== %s: %d kernel%s ==== */", fi.name, plans[i]->nkernels,
                      plans[i]->nkernels == 1 ? "" : "s");
        emit_line(&e, "/* %s */", signature(&a, fi.fn));
        emit_line(&e, "%s", "");
        emit_layout(&e, &a, &fi);
        emit_line(&e, "%s", "");
        emit_check(&e, &a, &fi);
        emit_line(&e, "%s", "");
        emit_run(&e, &a, &fi);
        emit_entries(&e, &a, &fi);
    }
    assert(e.indent == 0);
    buf_free(&names);
    buf_free(&kernels);
    buf_free(&stubs);
    arena_free_all(&a);
}
