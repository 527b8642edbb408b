/* eval.c -- `fusec --emit=eval`: the command-line face of the interpreter.
 *
 *   fusec --emit=eval --fn NAME [--input NAME=FILE.npy | --input NAME=NUMBER]...
 *         [--seed S] [--output-dir DIR] FILE.fuse
 *
 * Everything is checked before anything is written: which fn, which params
 * the inputs name, scalar-versus-tensor, that every symbolic dim of an input
 * not given is known; then the interpreter runs; then the results go either
 * to stdout as text (stable, for FileCheck) or to DIR/NAME.npy, first all to
 * temporaries and then all renamed, so a failure leaves no partial set.
 *
 * Inputs not given: scalars take their default, else a seeded random value;
 * tensors are filled by tensor_fill_random(seed + param index). */
#define _POSIX_C_SOURCE 200809L
#include "interp.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EVAL_MAX_PRINT 1000 /* values printed per result before "..." */

static const IrFunc *pick_fn(const IrModule *m, const char *name)
{
    if (m->nfns == 0) {
        diag_error(LOC_NONE, "--emit=eval: the file has no fn to run");
        return NULL;
    }
    if (name) {
        for (int i = 0; i < m->nfns; i++)
            if (strcmp(m->fns[i]->name, name) == 0)
                return m->fns[i];
    } else if (m->nfns == 1) {
        return m->fns[0];
    }
    Buf list = {0};
    for (int i = 0; i < m->nfns; i++)
        buf_printf(&list, "%s%s", i ? ", " : "", m->fns[i]->name);
    if (name)
        diag_error(LOC_NONE, "--fn %s: no fn of that name in the file", name);
    else
        diag_error(LOC_NONE, "--emit=eval: the file has %d fns; choose one with --fn NAME", m->nfns);
    diag_note(LOC_NONE, "the fns are: %s", list.data);
    buf_free(&list);
    return NULL;
}

/* "x, g, b, eps": for the note under an unknown --input */
static void param_list(const IrFunc *f, Buf *b)
{
    for (int i = 0; i < f->nparams; i++)
        buf_printf(b, "%s%s", i ? ", " : "", f->params[i].name);
    if (f->nparams == 0)
        buf_puts(b, "(none)");
}

static void param_type(const IrFunc *f, const IrParam *p, Buf *b)
{
    ir_type_str(f, p->dtype, p->is_tensor ? &p->shape : &(IrShape){0}, b);
}

/* A number for a scalar: decimal/float syntax, or true/false. */
static int parse_number(const char *s, double *out)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0) {
        *out = 1;
        return 1;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0) {
        *out = 0;
        return 1;
    }
    if (!*s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s)
        return 0;
    if (errno == ERANGE && isinf(v))
        return 0; /* past the largest double: write inf to mean it */
    *out = v;
    return 1;
}

/* Load or build the input of every param; symbolic dims of tensors not
 * given must be bound by the ones given (or by -D). */
static int make_inputs(const IrFunc *f, const EvalArgs *args, Tensor *in)
{
    int *given = calloc((size_t)f->nparams + 1, sizeof(int));
    int64_t *sym = malloc(sizeof(int64_t) * (size_t)(f->nsyms + 1));
    int ok = given && sym;
    if (!ok)
        fatal_oom();
    for (int s = 0; s < f->nsyms; s++)
        sym[s] = f->sym_static ? f->sym_static[s] : -1;
    for (int i = 0; ok && i < args->ninputs; i++) {
        const EvalInput *e = &args->inputs[i];
        int pi = -1;
        for (int k = 0; k < f->nparams; k++)
            if (strcmp(f->params[k].name, e->name) == 0)
                pi = k;
        if (pi < 0) {
            Buf b = {0};
            param_list(f, &b);
            diag_error(LOC_NONE, "--input %s: fn '%s' has no param named '%s'", e->name, f->name, e->name);
            diag_note(LOC_NONE, "its params are: %s", b.data);
            buf_free(&b);
            ok = 0;
            break;
        }
        const IrParam *p = &f->params[pi];
        if (given[pi]) {
            diag_error(LOC_NONE, "--input %s is given twice", e->name);
            ok = 0;
            break;
        }
        given[pi] = 1;
        double num;
        errno = 0;
        int is_num = parse_number(e->value, &num);
        const int too_large = !is_num && errno == ERANGE;
        Buf ty = {0};
        param_type(f, p, &ty);
        if (!p->is_tensor) {
            if (!is_num) {
                diag_error(LOC_NONE, "--input %s=%s: param '%s' is a scalar (%s); give a number", e->name,
                           e->value, p->name, ty.data);
                if (too_large)
                    diag_note(LOC_NONE, "%s is past the largest double; write inf for infinity",
                              e->value);
                ok = 0;
            } else if (!tensor_alloc(&in[pi], p->dtype, 0, NULL)) {
                fatal_oom();
            } else {
                in[pi].data[0] = round_to_dtype(num, p->dtype);
            }
        } else if (is_num) {
            diag_error(LOC_NONE, "--input %s=%s: param '%s' is a tensor (%s); give a .npy file", e->name,
                       e->value, p->name, ty.data);
            ok = 0;
        } else {
            char err[512];
            if (!npy_read(e->value, p->dtype, &in[pi], err, sizeof err)) {
                diag_error(LOC_NONE, "--input %s: %s", e->name, err);
                ok = 0;
            } else if (in[pi].dtype != p->dtype) {
                /* checked here, not only in interp_run: a wrong rank would
                 * otherwise surface first as an unbound dim elsewhere */
                diag_error(LOC_NONE, "input for param '%s' has dtype %s, but the param is %s", p->name,
                           dtype_name(in[pi].dtype), dtype_name(p->dtype));
                ok = 0;
            } else if (in[pi].rank != p->shape.rank) {
                diag_error(LOC_NONE, "input for param '%s' has rank %d, but the param has rank %d", p->name,
                           in[pi].rank, p->shape.rank);
                ok = 0;
            } else {
                for (int d = 0; d < p->shape.rank; d++) {
                    IrDim pd = p->shape.dims[d];
                    if (pd.size < 0 && pd.sym >= 0 && pd.sym < f->nsyms && sym[pd.sym] < 0)
                        sym[pd.sym] = in[pi].dims[d]; /* interp_run checks the rest */
                }
            }
        }
        buf_free(&ty);
    }
    for (int pi = 0; ok && pi < f->nparams; pi++) {
        const IrParam *p = &f->params[pi];
        if (given[pi])
            continue;
        uint64_t seed = args->seed + (uint64_t)pi;
        if (!p->is_tensor) {
            if (!tensor_alloc(&in[pi], p->dtype, 0, NULL))
                fatal_oom();
            if (p->has_default)
                in[pi].data[0] = round_to_dtype(p->deflt, p->dtype);
            else
                tensor_fill_random(&in[pi], seed);
            continue;
        }
        int64_t dims[IR_MAX_RANK];
        for (int d = 0; ok && d < p->shape.rank; d++) {
            IrDim pd = p->shape.dims[d];
            if (pd.size < 0 && (pd.sym < 0 || pd.sym >= f->nsyms))
                ICE("param dim is neither static nor symbolic");
            dims[d] = pd.size >= 0 ? pd.size : sym[pd.sym];
            if (dims[d] < 0) {
                const char *n = f->syms[pd.sym];
                diag_error(LOC_NONE,
                           "dim %s is not known: give an --input whose shape binds it, or compile with -D %s=SIZE",
                           n, n);
                diag_note(LOC_NONE, "param '%s' needs it, and no --input gives it", p->name);
                ok = 0;
            }
        }
        if (!ok)
            break;
        if (!tensor_alloc(&in[pi], p->dtype, p->shape.rank, dims)) {
            Buf ty = {0};
            param_type(f, p, &ty);
            int64_t n;
            if (!tensor_strides(p->shape.rank, dims, NULL, &n))
                diag_error(LOC_NONE, "param '%s' (%s) would have more elements than an int64 counts", p->name,
                           ty.data);
            else
                diag_error(LOC_NONE, "out of memory making a random input for param '%s' (%s)", p->name, ty.data);
            buf_free(&ty);
            ok = 0;
            break;
        }
        tensor_fill_random(&in[pi], seed);
    }
    free(given);
    free(sym);
    return ok;
}

/* ---- printing ----------------------------------------------------------------- */

/* One value: integers exactly, floats with 9 significant digits (enough to
 * tell any two f32 apart), and the same spelling of nan/inf everywhere
 * (printf may write "-nan"). */
static void put_value(Buf *b, double v, DType t)
{
    if (isnan(v))
        buf_puts(b, "nan");
    else if (isinf(v))
        buf_puts(b, v > 0 ? "inf" : "-inf");
    else if (t == DT_I64)
        buf_printf(b, "%lld", (long long)double_to_i64(v));
    else if (dtype_is_int(t) || t == DT_BOOL)
        buf_printf(b, "%lld", (long long)v);
    else
        buf_printf(b, "%.9g", v);
}

/* "name: f32[2, 3]" then one line per innermost row, values separated by
 * spaces; at most EVAL_MAX_PRINT values, then "...". */
static void print_result(Buf *b, const IrResult *r, const Tensor *t)
{
    buf_printf(b, "%s: %s", r->name ? r->name : "result", dtype_name(t->dtype));
    if (t->rank) {
        buf_putc(b, '[');
        for (int d = 0; d < t->rank; d++)
            buf_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        buf_putc(b, ']');
    }
    if (t->rank == 0) {
        buf_puts(b, " = ");
        put_value(b, t->data[0], t->dtype);
        buf_putc(b, '\n');
        return;
    }
    buf_putc(b, '\n');
    if (t->numel == 0) {
        buf_puts(b, "(empty)\n");
        return;
    }
    int64_t row = t->dims[t->rank - 1];
    int64_t n = t->numel < EVAL_MAX_PRINT ? t->numel : EVAL_MAX_PRINT;
    for (int64_t i = 0; i < n; i++) {
        put_value(b, t->data[i], t->dtype);
        buf_putc(b, (i + 1) % row == 0 || i + 1 == n ? '\n' : ' ');
    }
    if (n < t->numel)
        buf_printf(b, "... (%lld more values)\n", (long long)(t->numel - n));
}

/* ---- writing ------------------------------------------------------------------ */

/* Every result to DIR/NAME.npy, all or nothing: each is written in full to
 * a hidden temporary beside its final name, and only when all exist are
 * they renamed (a rename within one folder is atomic). */
static int write_results(const IrFunc *f, const Tensor *out, const char *dir)
{
    struct stat st; /* one missing level is created, as tools expect */
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0) {
            diag_error(LOC_NONE, "--output-dir %s: %s", dir, strerror(errno));
            return 0;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        diag_error(LOC_NONE, "--output-dir %s: not a directory", dir);
        return 0;
    }
    char (*tmp)[PATH_MAX] = calloc((size_t)f->nresults + 1, PATH_MAX);
    char (*fin)[PATH_MAX] = calloc((size_t)f->nresults + 1, PATH_MAX);
    if (!tmp || !fin)
        fatal_oom();
    int ok = 1, made = 0;
    /* a folder where a result goes would fail its rename after others
     * are in place: refuse before writing any */
    for (int i = 0; ok && i < f->nresults; i++) {
        char p[PATH_MAX];
        const char *name = f->results[i].name ? f->results[i].name : "result";
        if (snprintf(p, sizeof p, "%s/%s.npy", dir, name) < (int)sizeof p && stat(p, &st) == 0 &&
            S_ISDIR(st.st_mode)) {
            diag_error(LOC_NONE, "cannot write '%s': it is a directory", p);
            ok = 0;
        }
    }
    for (; ok && made < f->nresults; made++) {
        const char *name = f->results[made].name ? f->results[made].name : "result";
        if (snprintf(fin[made], PATH_MAX, "%s/%s.npy", dir, name) >= PATH_MAX ||
            snprintf(tmp[made], PATH_MAX, "%s/.%s.npy.part%ld", dir, name, (long)getpid()) >= PATH_MAX) {
            diag_error(LOC_NONE, "--output-dir %s: path too long", dir);
            ok = 0;
            break;
        }
        char err[512];
        if (!npy_write_as(tmp[made], fin[made], &out[made], err, sizeof err)) {
            diag_error(LOC_NONE, "%s", err);
            ok = 0;
            break;
        }
    }
    /* all written: now rename them into place (or remove them all) */
    for (int i = 0; i < made; i++) {
        if (ok && rename(tmp[i], fin[i]) != 0) {
            diag_error(LOC_NONE, "cannot write '%s': %s", fin[i], strerror(errno));
            ok = 0;
        }
        if (!ok)
            unlink(tmp[i]);
    }
    free(tmp);
    free(fin);
    return ok;
}

/* Inputs, run, results; every failure reports through diag and returns
 * EXIT_ERROR with nothing written. */
int eval_command(const IrModule *m, const EvalArgs *args)
{
    const IrFunc *f = pick_fn(m, args->fn);
    if (!f)
        return EXIT_ERROR;
    Tensor *in = calloc((size_t)f->nparams + 1, sizeof(Tensor));
    Tensor *out = calloc((size_t)f->nresults + 1, sizeof(Tensor));
    if (!in || !out)
        fatal_oom();
    int rc = EXIT_ERROR;
    if (make_inputs(f, args, in)) {
        char err[1024];
        Loc at;
        if (!interp_run_at(f, in, out, err, sizeof err, &at)) {
            diag_error(at, "%s", err);
        } else {
            if (args->output_dir) {
                if (write_results(f, out, args->output_dir))
                    rc = EXIT_OK;
            } else {
                Buf b = {0};
                for (int r = 0; r < f->nresults; r++)
                    print_result(&b, &f->results[r], &out[r]);
                if (b.len)
                    fwrite(b.data, 1, b.len, stdout);
                buf_free(&b);
                rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
                if (rc != EXIT_OK)
                    diag_error(LOC_NONE, "cannot write to standard output: %s", strerror(errno));
            }
            for (int r = 0; r < f->nresults; r++)
                tensor_free(&out[r]);
        }
    }
    for (int i = 0; i < f->nparams; i++)
        tensor_free(&in[i]);
    free(in);
    free(out);
    return rc;
}
