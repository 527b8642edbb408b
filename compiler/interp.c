/* interp.c -- the float64 reference interpreter: the oracle of every GPU test.
 *
 * Design: nodes are evaluated one at a time in IrFunc.nodes order (a
 * topological order), each into a whole host tensor of doubles.  As
 * docs/language.md defines a fn's result ("evaluating the graph op by op in
 * float64 and rounding to the result dtype"), a float value is rounded only
 * where the program says so: at an explicit cast, at a constant (the IR
 * gives literals their dtype) and at the fn's results.  Float intermediates
 * stay float64 whatever their dtype, as fused kernels keep them in f32
 * registers; integer and bool values are always exact in their dtype.  Nothing is clever on
 * purpose: an odometer walks the output of an elementwise node and carries
 * one offset per operand (stride 0 on broadcast dims, from IrUse.bcast); a
 * reduction walks its operand once in row-major order and scatters into
 * per-output accumulators, so "the first NaN / first maximum" of argmax is
 * simply the first one met.  Each value counts its remaining uses and is
 * freed after the last, so long programs need memory for their live values
 * only.  Inputs are borrowed, never copied.
 *
 * Semantics that are decisions rather than libm calls:
 *  - integer arithmetic (node dtype i32/i64) is done in int64 and wraps like
 *    two's complement; division truncates toward zero and % is C's
 *    remainder; a zero divisor is a run-time error, not a crash;
 *  - float-to-integer casts truncate, NaN gives 0, out of range saturates
 *    (round_to_dtype, half.c); integer-to-integer casts wrap (the scalar
 *    semantics of every elementwise op are op_eval_scalar's, ops.c);
 *  - max/min (elementwise and reductions) and clamp propagate NaN; argmax /
 *    argmin return the first NaN's index, else the first extreme's;
 *  - empty reductions give the identity: sum 0, prod 1, max -inf, min +inf,
 *    any false, all true, logsumexp -inf; mean/var/std NaN; argmax is an
 *    error (NumPy raises too).
 */
#include "interp.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tensors -------------------------------------------------------------- */

int tensor_strides(int rank, const int64_t *dims, int64_t *strides, int64_t *numel)
{
    int64_t n = 1;
    int overflow = 0;
    for (int d = rank - 1; d >= 0; d--) {
        if (dims[d] < 0)
            return 0;
        if (strides)
            strides[d] = n;
        if (dims[d] != 0 && n > INT64_MAX / dims[d])
            overflow = 1; /* still fine if a later dim is 0 */
        else
            n *= dims[d];
    }
    for (int d = 0; d < rank; d++)
        if (dims[d] == 0) {
            n = 0;
            overflow = 0;
        }
    if (overflow)
        return 0;
    if (numel)
        *numel = n;
    return 1;
}

int tensor_alloc(Tensor *t, DType dt, int rank, const int64_t *dims)
{
    memset(t, 0, sizeof *t);
    if (rank < 0 || rank > IR_MAX_RANK)
        return 0;
    int64_t n;
    if (!tensor_strides(rank, dims, NULL, &n))
        return 0;
    if ((uint64_t)n > SIZE_MAX / sizeof(double))
        return 0;
    t->data = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!t->data)
        return 0;
    t->dtype = dt;
    t->rank = rank;
    for (int d = 0; d < rank; d++)
        t->dims[d] = dims[d];
    t->numel = n;
    return 1;
}

void tensor_free(Tensor *t)
{
    free(t->data);
    t->data = NULL;
    t->numel = 0;
}

/* splitmix64: tiny, seedable with any value, good enough for test data. */
static uint64_t mix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Floats come from a grid in [-2, 2) fine enough to be exact in the dtype
 * (so no value rounds up to 2): step 2^-fb with fb fractional bits. */
void tensor_fill_random(Tensor *t, uint64_t seed)
{
    uint64_t s = seed ^ 0x5DEECE66Dull;
    int fb = 0;
    switch (t->dtype) {
    case DT_F64: fb = 50; break;
    case DT_F32: fb = 22; break;
    case DT_F16: fb = 9; break;
    case DT_BF16: fb = 6; break;
    default: break;
    }
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t u = mix_next(&s);
        if (t->dtype == DT_BOOL)
            t->data[i] = (double)(u >> 63);
        else if (dtype_is_int(t->dtype))
            t->data[i] = -8.0 + (double)(u >> 60);
        else
            t->data[i] = -2.0 + ldexp((double)(u >> (64 - (fb + 2))), -fb);
    }
}

/* ---- the run ---------------------------------------------------------------- */

typedef struct Val {
    Tensor t;
    int owned; /* t.data is ours to free (inputs are borrowed) */
    int left;  /* uses not yet done; freed at 0 */
    int live;  /* evaluated and not yet freed */
} Val;

typedef struct Run {
    const IrFunc *f;
    int64_t *sym;    /* bound size per sym, -1 while unknown */
    int *sym_param;  /* param that bound it, -1 for -D or unbound */
    Val *vals;       /* per node id */
    char *err;
    size_t errlen;
    Loc *where;      /* interp_run_at: where a run-time error happened */
} Run;

static int fail(Run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->err && r->errlen)
        vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return 0;
}

/* " (at file:line:col)" for run-time errors of a node, or "". */
static void where(Run *r, const IrNode *n, char *buf, size_t len)
{
    buf[0] = 0;
    if (n->loc.file < 0)
        return;
    if (r->where) { /* the caller shows the place itself */
        *r->where = n->loc;
        return;
    }
    int line, col;
    diag_line_col(n->loc.file, n->loc.begin, &line, &col);
    snprintf(buf, len, " (at %s:%d:%d)", diag_file_path(n->loc.file), line, col);
}

static const char *sym_name(const Run *r, int s)
{
    return s >= 0 && s < r->f->nsyms ? r->f->syms[s] : "?";
}

static void shape_text(const Tensor *t, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "%s", dtype_name(t->dtype));
    for (int d = 0; d < t->rank && k < len; d++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", d ? ", " : "[", (long long)t->dims[d]);
    if (t->rank && k < len)
        snprintf(buf + k, len - k, "]");
}

/* Check one input against its param and bind its symbolic dims. */
static int bind_param(Run *r, int pi, const Tensor *in)
{
    const IrParam *p = &r->f->params[pi];
    if (in->dtype != p->dtype)
        return fail(r, "input for param '%s' has dtype %s, but the param is %s", p->name,
                    dtype_name(in->dtype), dtype_name(p->dtype));
    int prank = p->is_tensor ? p->shape.rank : 0;
    if (in->rank != prank)
        return fail(r, "input for param '%s' has rank %d, but the param has rank %d", p->name,
                    in->rank, prank);
    if (!in->data)
        return fail(r, "input for param '%s' has no data", p->name);
    for (int d = 0; d < prank; d++) {
        IrDim pd = p->shape.dims[d];
        int64_t got = in->dims[d];
        if (pd.sym >= 0 && pd.size < 0 && r->f->sym_static && r->f->sym_static[pd.sym] >= 0)
            pd.size = r->f->sym_static[pd.sym];
        if (pd.size >= 0) {
            if (got == pd.size)
                continue;
            if (pd.sym >= 0)
                return fail(r, "input for param '%s': dim %s (axis %d) is %lld, but it was fixed to %lld by -D %s=%lld",
                            p->name, sym_name(r, pd.sym), d, (long long)got, (long long)pd.size,
                            sym_name(r, pd.sym), (long long)pd.size);
            return fail(r, "input for param '%s': axis %d is %lld, but the param's dim there is %lld",
                        p->name, d, (long long)got, (long long)pd.size);
        }
        if (pd.sym < 0 || pd.sym >= r->f->nsyms)
            ICE("param dim is neither static nor symbolic");
        if (r->sym[pd.sym] < 0) {
            r->sym[pd.sym] = got;
            r->sym_param[pd.sym] = pi;
        } else if (r->sym[pd.sym] != got) {
            const char *other = r->sym_param[pd.sym] >= 0 ? r->f->params[r->sym_param[pd.sym]].name : "?";
            return fail(r, "input for param '%s': dim %s (axis %d) is %lld, but param '%s' gave %s = %lld",
                        p->name, sym_name(r, pd.sym), d, (long long)got, other, sym_name(r, pd.sym),
                        (long long)r->sym[pd.sym]);
        }
    }
    return 1;
}

/* The concrete dims of an IR shape under the current bindings. */
static int resolve_shape(Run *r, const IrShape *s, int64_t *dims)
{
    for (int d = 0; d < s->rank; d++) {
        IrDim id = s->dims[d];
        if (id.size >= 0)
            dims[d] = id.size;
        else if (id.sym >= 0 && id.sym < r->f->nsyms && r->sym[id.sym] >= 0)
            dims[d] = r->sym[id.sym];
        else
            return fail(r, "dim %s is not known: no input binds it", sym_name(r, id.sym));
    }
    return 1;
}

static int alloc_or_fail(Run *r, Tensor *t, DType dt, int rank, const int64_t *dims)
{
    if (tensor_alloc(t, dt, rank, dims))
        return 1;
    char buf[200];
    Tensor shape = {.dtype = dt, .rank = rank};
    memcpy(shape.dims, dims, sizeof(int64_t) * (size_t)rank);
    shape_text(&shape, buf, sizeof buf);
    return fail(r, "out of memory for a value of type %s", buf);
}

/* ---- elementwise ------------------------------------------------------------ */

static int64_t as_i64(double v) { return double_to_i64(v); }

/* Two's-complement wrap of an exact integer result to dtype t. */
static double wrap_int(uint64_t u, DType t)
{
    switch (t) {
    case DT_I32: return (double)(int32_t)(uint32_t)u;
    case DT_I64: return (double)(int64_t)u;
    case DT_BOOL: return u != 0;
    default: return (double)(int64_t)u;
    }
}

static int eval_elementwise(Run *r, const IrNode *n, Tensor *out)
{
    int64_t dims[IR_MAX_RANK];
    int R = n->shape.rank;
    if (!resolve_shape(r, &n->shape, dims) || !alloc_or_fail(r, out, n->dtype, R, dims))
        return 0;
    const Tensor *in[3] = {NULL, NULL, NULL};
    int64_t str[3][IR_MAX_RANK], off[3] = {0, 0, 0};
    DType idt = DT_F64;
    for (int k = 0; k < n->nin; k++) {
        in[k] = &r->vals[n->in[k].node->id].t;
        int rk = in[k]->rank;
        int64_t s[IR_MAX_RANK];
        tensor_strides(rk, in[k]->dims, s, NULL);
        if (rk > R)
            ICE("operand of higher rank than its elementwise node");
        for (int d = 0; d < R; d++) {
            int od = d - (R - rk);
            if (od < 0 || (n->in[k].bcast >> d & 1) || (in[k]->dims[od] == 1 && dims[d] != 1)) {
                str[k][d] = 0;
            } else if (in[k]->dims[od] != dims[d]) {
                char loc[300];
                where(r, n, loc, sizeof loc);
                tensor_free(out);
                return fail(r, "operand %d of '%s' has size %lld on axis %d where %lld is needed%s", k,
                            op_info[n->op].src, (long long)in[k]->dims[od], od, (long long)dims[d], loc);
            } else {
                str[k][d] = s[od];
            }
        }
        if (k == 0)
            idt = in[0]->dtype;
    }
    const OpKind op = n->op;
    const DType dt = n->dtype;
    /* flat: each operand either has the output's layout or is one value
     * (the common case), so its offset is i or 0 and the odometer idles */
    int64_t os[IR_MAX_RANK], fs[3] = {0, 0, 0};
    int flat = 1;
    tensor_strides(R, dims, os, NULL);
    for (int k = 0; k < n->nin; k++) {
        int same = 1, none = 1;
        for (int d = 0; d < R; d++) {
            if (dims[d] <= 1)
                continue;
            same &= str[k][d] == os[d];
            none &= str[k][d] == 0;
        }
        fs[k] = same && !none ? 1 : 0;
        flat &= same || none;
    }
    int64_t idx[IR_MAX_RANK] = {0};
    double a[3] = {0, 0, 0};
    /* float intermediates are not rounded (see the top of the file) */
    const int round_all = !dtype_is_float(dt) || op == OP_CAST || op == OP_CONST;
    for (int64_t i = 0; i < out->numel; i++) {
        if (flat)
            for (int k = 0; k < n->nin; k++)
                a[k] = in[k]->data[fs[k] * i];
        else
            for (int k = 0; k < n->nin; k++)
                a[k] = in[k]->data[off[k]];
        double v;
        int divzero = 0;
        if (op == OP_CONST) {
            v = dtype_is_int(dt) ? (double)n->ival : n->cval;
        } else {
            OpEvalStatus st = op_eval_scalar(op, dt, idt, a, &v);
            if (st == OPEVAL_NONE)
                ICE("an elementwise op without a scalar meaning");
            divzero = st == OPEVAL_DIVZERO;
        }
        if (divzero) {
            char loc[300];
            where(r, n, loc, sizeof loc);
            tensor_free(out);
            return fail(r, "integer %s by zero%s", op == OP_DIV ? "division" : "remainder", loc);
        }
        out->data[i] = round_all ? round_to_dtype(v, dt) : v;
        for (int d = flat ? -1 : R - 1; d >= 0; d--) {
            for (int k = 0; k < n->nin; k++)
                off[k] += str[k][d];
            if (++idx[d] < dims[d])
                break;
            for (int k = 0; k < n->nin; k++)
                off[k] -= str[k][d] * dims[d];
            idx[d] = 0;
        }
    }
    return 1;
}

/* ---- reductions --------------------------------------------------------------- */

typedef struct Acc {
    double v, v2;   /* running value; second pass (var, logsumexp) */
    double c, c2;   /* compensation of the sums v and v2 */
    uint64_t iv;    /* integer sum / prod */
    int64_t arg;    /* argmax / argmin */
    int nan;
} Acc;

/* Compensated (Neumaier) summation: the reference sum of 2^28 values
 * stays exact to a few f64 ulps, far inside any f32 tolerance.  Once the
 * running sum is inf or NaN the compensation stops (inf - inf would turn
 * it into NaN) and the sum speaks for itself. */
static void sum_add(double *s, double *c, double x)
{
    double t = *s + x;
    if (isfinite(t))
        *c += fabs(*s) >= fabs(x) ? (*s - t) + x : (x - t) + *s;
    *s = t;
}

static double sum_get(double s, double c) { return isfinite(s) ? s + c : s; }

/* A reduction's initial state: the identity of its op. */
static void acc_init(Acc *A, OpKind op)
{
    switch (op) {
    case OP_PROD: A->v = 1; A->iv = 1; break;
    case OP_RMAX: case OP_LOGSUMEXP: case OP_SUMEXP: A->v = -INFINITY; break;
    case OP_RMIN: A->v = INFINITY; break;
    case OP_ALL: A->v = 1; break;
    case OP_ARGMAX: case OP_ARGMIN: A->arg = -1; break;
    default: break;
    }
}

/* Folds element v (index ri inside the reduced range) into A: the first
 * pass of every op; intsum: an integer sum or product, exact in 64 bits. */
static void acc_fold(Acc *A, OpKind op, int intsum, double v, int64_t ri)
{
    switch (op) {
    case OP_SUM: case OP_MEAN: case OP_VAR: case OP_STD:
        if (intsum)
            A->iv += (uint64_t)as_i64(v);
        else
            sum_add(&A->v, &A->c, v);
        break;
    case OP_PROD:
        if (intsum)
            A->iv *= (uint64_t)as_i64(v);
        else
            A->v *= v;
        break;
    case OP_RMAX: case OP_LOGSUMEXP: case OP_SUMEXP: A->v = op_max_nan(A->v, v); break;
    case OP_RMIN: A->v = op_min_nan(A->v, v); break;
    case OP_ANY: if (v != 0) A->v = 1; break;
    case OP_ALL: if (v == 0) A->v = 0; break;
    case OP_ARGMAX: case OP_ARGMIN:
        if (A->nan)
            break;
        if (isnan(v)) {
            A->nan = 1;
            A->arg = ri;
        } else if (A->arg < 0 || (op == OP_ARGMAX ? v > A->v : v < A->v)) {
            A->v = v;
            A->arg = ri;
        }
        break;
    default: unreachable();
    }
}

/* The result of A over count elements, before rounding to the dtype. */
static double acc_value(const Acc *A, OpKind op, DType dt, int intsum, int64_t count)
{
    switch (op) {
    case OP_SUM: return intsum ? wrap_int(A->iv, dt) : sum_get(A->v, A->c);
    case OP_PROD: return intsum ? wrap_int(A->iv, dt) : A->v;
    case OP_MEAN: return sum_get(A->v, A->c) / (double)count;
    case OP_VAR: return sum_get(A->v2, A->c2) / (double)count;
    case OP_STD: return sqrt(sum_get(A->v2, A->c2) / (double)count);
    case OP_LOGSUMEXP:
        /* -inf max: empty or all -inf rows give -inf; +inf or NaN stays */
        return isfinite(A->v) ? A->v + log(sum_get(A->v2, A->c2)) : A->v;
    case OP_SUMEXP: return sum_get(A->v2, A->c2); /* exp(x - max) as written */
    case OP_ARGMAX: case OP_ARGMIN: return (double)A->arg;
    default: return A->v;
    }
}

static int eval_reduce(Run *r, const IrNode *n, Tensor *out)
{
    const Tensor *x = &r->vals[n->in[0].node->id].t;
    const OpKind op = n->op;
    const DType dt = n->dtype;
    const int xr = x->rank;
    if (n->axes >> xr)
        ICE("reduction axes beyond the operand's rank");
    int64_t odims[IR_MAX_RANK], ostr[IR_MAX_RANK] = {0}, rstr[IR_MAX_RANK] = {0};
    int orank = 0;
    int64_t count = 1, onum = 1, kept[IR_MAX_RANK], red[IR_MAX_RANK];
    int nk = 0, nr = 0;
    for (int d = 0; d < xr; d++) {
        if (n->axes >> d & 1)
            red[nr++] = x->dims[d];
        else
            kept[nk++] = x->dims[d];
    }
    /* an empty operand may still have huge kept or reduced sub-shapes */
    if (!tensor_strides(nk, kept, NULL, &onum) || !tensor_strides(nr, red, NULL, &count))
        return fail(r, "a reduction's shape is too large");
    /* strides over the kept dims (output) and over the reduced dims (arg index) */
    int64_t so = 1, sr = 1;
    for (int d = xr - 1; d >= 0; d--) {
        if (n->axes >> d & 1) {
            rstr[d] = sr;
            sr *= x->dims[d];
        } else {
            ostr[d] = so;
            so *= x->dims[d];
        }
    }
    for (int d = 0; d < xr; d++) {
        if (!(n->axes >> d & 1))
            odims[orank++] = x->dims[d];
        else if (n->keepdims)
            odims[orank++] = 1;
    }
    int64_t want[IR_MAX_RANK];
    if (!resolve_shape(r, &n->shape, want))
        return 0;
    if (orank != n->shape.rank || memcmp(want, odims, sizeof(int64_t) * (size_t)orank) != 0)
        ICE("reduction shape disagrees with its operand");
    if ((op == OP_ARGMAX || op == OP_ARGMIN) && count == 0 && onum > 0) {
        char loc[300];
        where(r, n, loc, sizeof loc);
        return fail(r, "%s of an empty axis (size 0) has no answer%s", op_info[op].src, loc);
    }
    if (!alloc_or_fail(r, out, dt, orank, odims))
        return 0;
    Acc *acc = calloc((size_t)(onum ? onum : 1), sizeof(Acc));
    if (!acc) {
        tensor_free(out);
        return fail(r, "out of memory for a reduction's accumulators");
    }
    const int intsum = dtype_is_int(dt) && (op == OP_SUM || op == OP_PROD);
    for (int64_t o = 0; o < onum; o++)
        acc_init(&acc[o], op);
    /* pass 1 (pass 2 for var/std/logsumexp/sumexp needs the per-output
     * pass-1 value: the mean, or the max) */
    const int lse = op == OP_LOGSUMEXP || op == OP_SUMEXP;
    int passes = (op == OP_VAR || op == OP_STD || lse) ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        if (pass == 1 && !lse)
            for (int64_t o = 0; o < onum; o++)
                acc[o].v = sum_get(acc[o].v, acc[o].c) / (double)count; /* the mean */
        int64_t idx[IR_MAX_RANK] = {0};
        int64_t oo = 0, ri = 0;
        for (int64_t i = 0; i < x->numel; i++) {
            double v = x->data[i];
            Acc *A = &acc[oo];
            if (pass == 0)
                acc_fold(A, op, intsum, v, ri);
            else if (lse)
                sum_add(&A->v2, &A->c2, exp(v - A->v));
            else
                sum_add(&A->v2, &A->c2, (v - A->v) * (v - A->v));
            for (int d = xr - 1; d >= 0; d--) {
                oo += ostr[d];
                ri += rstr[d];
                if (++idx[d] < x->dims[d])
                    break;
                oo -= ostr[d] * x->dims[d];
                ri -= rstr[d] * x->dims[d];
                idx[d] = 0;
            }
        }
    }
    for (int64_t o = 0; o < onum; o++) {
        double v = acc_value(&acc[o], op, dt, intsum, count);
        out->data[o] = dtype_is_float(dt) ? v : round_to_dtype(v, dt);
    }
    free(acc);
    return 1;
}

/* ---- views ---------------------------------------------------------------------- */

/* OP_UNSQUEEZE: the same data under a shape with a 1 inserted.  The data is
 * taken over when this is the operand's last use, borrowed when the operand
 * is an input (alive for the whole run), copied otherwise. */
static int eval_view(Run *r, const IrNode *n, Tensor *out, int *owned)
{
    Val *xv = &r->vals[n->in[0].node->id];
    int64_t dims[IR_MAX_RANK];
    if (!resolve_shape(r, &n->shape, dims))
        return 0;
    int64_t numel;
    if (!tensor_strides(n->shape.rank, dims, NULL, &numel) || numel != xv->t.numel)
        ICE("view changes the number of elements");
    if (xv->owned && xv->left == 1) {
        *out = xv->t;
        xv->owned = 0; /* now ours */
        *owned = 1;
    } else if (!xv->owned) {
        *out = xv->t;
        *owned = 0;
    } else {
        if (!alloc_or_fail(r, out, n->dtype, n->shape.rank, dims))
            return 0;
        memcpy(out->data, xv->t.data, sizeof(double) * (size_t)numel);
        *owned = 1;
    }
    out->rank = n->shape.rank;
    memcpy(out->dims, dims, sizeof dims);
    out->dtype = n->dtype;
    return 1;
}

/* ---- the driver ------------------------------------------------------------------ */

static void release(Val *v)
{
    if (v->owned)
        tensor_free(&v->t);
    v->owned = 0;
    v->live = 0;
}

static int run_nodes(Run *r, const Tensor *inputs)
{
    const IrFunc *f = r->f;
    for (int i = 0; i < f->nparams; i++)
        if (!bind_param(r, i, &inputs[i]))
            return 0;
    for (int i = 0; i < f->nnodes; i++) {
        const IrNode *n = f->nodes[i];
        Val *v = &r->vals[i];
        if (v->left == 0)
            continue; /* dead: nothing reads it */
        int ok = 1;
        switch (op_info[n->op].cls) {
        case OPC_LEAF:
            if (n->op == OP_PARAM) {
                if (n->param < 0 || n->param >= f->nparams)
                    ICE("param node without a param");
                v->t = inputs[n->param];
                v->owned = 0;
            } else {
                ok = eval_elementwise(r, n, &v->t);
                v->owned = 1;
            }
            break;
        case OPC_UNARY: case OPC_BINARY: case OPC_TERNARY:
            ok = eval_elementwise(r, n, &v->t);
            v->owned = 1;
            break;
        case OPC_VIEW: ok = eval_view(r, n, &v->t, &v->owned); break;
        case OPC_REDUCE:
            ok = eval_reduce(r, n, &v->t);
            v->owned = 1;
            break;
        }
        if (!ok) {
            v->owned = 0;
            return 0;
        }
        v->live = 1;
        for (int k = 0; k < n->nin; k++) {
            Val *in = &r->vals[n->in[k].node->id];
            if (--in->left == 0)
                release(in);
        }
    }
    return 1;
}

int interp_run(const IrFunc *f, const Tensor *inputs, Tensor *outputs, char *err, size_t errlen)
{
    return interp_run_at(f, inputs, outputs, err, errlen, NULL);
}

int interp_run_at(const IrFunc *f, const Tensor *inputs, Tensor *outputs, char *err, size_t errlen,
                  Loc *where_out)
{
    Run r = {f, NULL, NULL, NULL, err, errlen, where_out};
    if (err && errlen)
        err[0] = 0;
    if (where_out)
        *where_out = LOC_NONE;
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i]->id != i)
            ICE("IR node ids are not positions (ir_renumber was not run)");
    r.sym = malloc(sizeof(int64_t) * (size_t)(f->nsyms + 1));
    r.sym_param = malloc(sizeof(int) * (size_t)(f->nsyms + 1));
    r.vals = calloc((size_t)f->nnodes + 1, sizeof(Val));
    if (!r.sym || !r.sym_param || !r.vals) {
        free(r.sym);
        free(r.sym_param);
        free(r.vals);
        return fail(&r, "out of memory");
    }
    for (int s = 0; s < f->nsyms; s++) {
        r.sym[s] = f->sym_static ? f->sym_static[s] : -1;
        r.sym_param[s] = -1;
    }
    /* use counts: results, then the operand slots of nodes that are used,
     * walking users before operands, so that dead nodes hold nothing alive */
    for (int o = 0; o < f->nresults; o++) {
        if (!f->results[o].node)
            ICE("result without a node");
        r.vals[f->results[o].node->id].left++;
    }
    for (int i = f->nnodes - 1; i >= 0; i--)
        if (r.vals[i].left > 0)
            for (int k = 0; k < f->nodes[i]->nin; k++)
                r.vals[f->nodes[i]->in[k].node->id].left++;
    int ok = run_nodes(&r, inputs);
    int made = 0;
    for (; ok && made < f->nresults; made++) {
        const IrResult *res = &f->results[made];
        Val *v = &r.vals[res->node->id];
        Tensor *o = &outputs[made];
        if (v->owned && v->left == 1) {
            *o = v->t; /* the last reader takes the buffer */
            v->owned = 0;
        } else if (!alloc_or_fail(&r, o, v->t.dtype, v->t.rank, v->t.dims)) {
            ok = 0;
            break;
        } else {
            memcpy(o->data, v->t.data, sizeof(double) * (size_t)v->t.numel);
        }
        o->dtype = res->dtype;
        for (int64_t e = 0; e < o->numel; e++) /* the only rounding of a float value */
            o->data[e] = round_to_dtype(o->data[e], res->dtype);
        if (--v->left == 0)
            release(v);
    }
    if (!ok)
        for (int i = 0; i < made; i++)
            tensor_free(&outputs[i]);
    for (int i = 0; i < f->nnodes; i++)
        if (r.vals[i].live)
            release(&r.vals[i]);
    free(r.sym);
    free(r.sym_param);
    free(r.vals);
    return ok;
}
