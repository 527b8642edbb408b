/* cuda/expr.c -- expressions: literals, the op templates, the values of a kernel
 * at a point (cu_emit_value), output stores, and the state type and
 * helpers of each reduction value. */
#include "cuda_priv.h"

/* ------------------------------------------------------------------ */
/* Expressions.                                                        */

/* A float constant as a CUDA literal: f64 with 17 significant digits, f32
 * with 9 and an f suffix; inf and NaN by name (NVRTC has no math.h). */
static void float_literal(Buf *b, double v, int dbl)
{
    double big = dbl ? 1.7976931348623157e308 : 3.4028234663852886e38;
    if (v != v)
        buf_puts(b, dbl ? "FZ_DNAN" : "FZ_NAN");
    else if (v > big)
        buf_puts(b, dbl ? "FZ_DINF" : "FZ_INF");
    else if (v < -big)
        buf_puts(b, dbl ? "(-FZ_DINF)" : "(-FZ_INF)");
    else {
        char t[64];
        snprintf(t, sizeof t, dbl ? "%.17g" : "%.9g", v);
        buf_puts(b, t);
        if (!strpbrk(t, ".en"))
            buf_puts(b, ".0");
        if (!dbl)
            buf_putc(b, 'f');
    }
}

/* A constant as a literal of its dtype; inf and NaN by bit pattern, since
 * NVRTC has no math.h macros. */
static void fmt_const(const IrNode *n, Buf *b)
{
    double v = n->cval;
    switch (n->dtype) {
    case DT_BOOL: buf_puts(b, (n->ival || v != 0) ? "true" : "false"); return;
    case DT_I32:
        if (n->ival == INT32_MIN)
            buf_puts(b, "(-2147483647 - 1)");
        else
            buf_printf(b, "%lld", (long long)n->ival);
        return;
    case DT_I64:
        if (n->ival == INT64_MIN)
            buf_puts(b, "(-FZ_LLMAX - 1)");
        else
            buf_printf(b, "%lldLL", (long long)n->ival);
        return;
    case DT_F64:
        float_literal(b, v, 1);
        return;
    default:
        float_literal(b, v, 0);
        return;
    }
}

/* Instantiate an f32 template with operand strings; for f64 strip the
 * f suffix of math functions and literals (expf -> exp, 1.0f -> 1.0). */
static void apply_template(const char *t, const char *const *ops, int dbl, Buf *b)
{
    static const char *const fnames[] = {
        "fabsf", "expf", "exp2f", "logf", "log2f", "log1pf", "expm1f", "sqrtf", "rsqrtf", "cbrtf",
        "sinf", "cosf", "tanf", "tanhf", "erff", "floorf", "ceilf", "rintf", "truncf", "fmodf",
        "powf", "atan2f", "fmaf", "fminf", "fmaxf", NULL};
    for (const char *p = t; *p;) {
        if (*p == '%' && p[1] >= '0' && p[1] <= '2') {
            buf_puts(b, ops[p[1] - '0']);
            p += 2;
            continue;
        }
        if (dbl && ((*p >= 'a' && *p <= 'z') || *p == '_')) {
            const char *q = p;
            while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
                q++;
            int done = 0;
            for (int i = 0; fnames[i]; i++)
                if ((size_t)(q - p) == strlen(fnames[i]) && strncmp(p, fnames[i], (size_t)(q - p)) == 0) {
                    buf_write(b, p, (size_t)(q - p) - 1);
                    done = 1;
                }
            if (!done)
                buf_write(b, p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (dbl && *p >= '0' && *p <= '9') {
            const char *q = p;
            while ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
                   ((*q == '-' || *q == '+') && (q[-1] == 'e')))
                q++;
            buf_write(b, p, (size_t)(q - p));
            p = q;
            if (*p == 'f')
                p++;
            continue;
        }
        buf_putc(b, *p++);
    }
}

/* the expression of elementwise node n on operand expressions a[].
 * Floats use the op table's f32 templates (stripped to double for f64);
 * integers get integer arithmetic (C division and remainder); comparisons
 * compute in the promoted operand type; min/max propagate NaN. */
/* --fast-math on the cuda target: the hardware approximations that nvcc's
 * --use_fast_math would pick (the nvrtc target gets that option itself). */
static void fast_template(const char *t, const char *const *ops, Buf *b)
{
    static const char *const from[] = {"expf(", "logf(", "sinf(", "cosf(", "tanf(", "powf(", "log2f(", NULL};
    static const char *const to[] = {"__expf(", "__logf(", "__sinf(", "__cosf(", "__tanf(", "__powf(", "__log2f(", NULL};
    Buf tmp = {0};
    for (const char *p = t; *p;) {
        int done = 0;
        for (int i = 0; from[i] && !done; i++) {
            size_t len = strlen(from[i]);
            /* whole identifiers only: not the tail of expm1f( or log1pf( */
            int start = p == t || !((p[-1] >= 'a' && p[-1] <= 'z') || p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9'));
            if (start && strncmp(p, from[i], len) == 0) {
                buf_puts(&tmp, to[i]);
                p += len;
                done = 1;
            }
        }
        if (!done)
            buf_putc(&tmp, *p++);
    }
    apply_template(tmp.data ? tmp.data : "", ops, 0, b);
    buf_free(&tmp);
}

/* narrow: n is computed from a bf16 param (KCtx.from_bf16), in a loop kernel.
 * Such a result is held to bf16's tolerance (docs/language.md,
 * "Tolerances": 1.6e-2 relative, a bf16 ulp is 7.8e-3 at most), so f32 exp
 * and the sigmoid and silu built on it take the hardware's approximation,
 * __expf, whose relative error is below 1.2e-5 (measured on the H200 over
 * every float whose exp is a normal float).  Not for f16: its subnormals
 * (below 6.1e-5) are spaced wider than its tolerance allows there, and a
 * long softmax row of f16 then rounded 27 of 600000 values the other way.
 * Not in row kernels: their bf16 rows are bound by instruction issue,
 * which __expf would cut, but with it ptxas spills 24 bytes in bf16
 * softmax's _r1024s (sm_90, launch bounds of the block size alone; in
 * logsumexp's state, 16 in the _rt32 of a kernel of two of them). */
static void op_expr(const IrNode *n, const char *const *a, const DType *adt, Buf *b, int fast, int narrow)
{
    const OpInfo *oi = &op_info[n->op];
    DType cdt = n->dtype;
    if (oi->flags & OPF_BOOL_RESULT) {
        cdt = adt[0];
        for (int k = 1; k < n->nin; k++)
            cdt = dtype_promote(cdt, adt[k]);
    }
    cdt = cu_cdtype(cdt);
    /* operands converted to the compute type */
    Buf cv[3] = {{0}};
    const char *ops[3] = {"", "", ""};
    for (int k = 0; k < n->nin; k++) {
        DType want = cdt;
        if (n->op == OP_WHERE && k == 0)
            want = DT_BOOL;
        if (n->op == OP_CAST)
            want = cu_cdtype(adt[0]);
        if (strcmp(cu_ctype(cu_cdtype(adt[k])), cu_ctype(want)) != 0)
            buf_printf(&cv[k], "((%s)(%s))", cu_ctype(want), a[k]);
        else
            buf_puts(&cv[k], a[k]);
        ops[k] = cv[k].data;
    }
    int isf = dtype_is_float(cdt), dbl = cdt == DT_F64;
    switch (n->op) {
    case OP_CAST: {
        DType from = adt[0], to = n->dtype;
        if (to == DT_F16)
            buf_printf(b, "fz_f16_to_f32(fz_f32_to_f16((float)(%s)))", ops[0]);
        else if (to == DT_BF16)
            buf_printf(b, "fz_bf16_to_f32(fz_f32_to_bf16((float)(%s)))", ops[0]);
        else if (to == DT_BOOL)
            buf_printf(b, "((%s) != 0)", ops[0]);
        else
            buf_printf(b, "((%s)(%s))", cu_ctype(to), ops[0]);
        (void)from;
        break;
    }
    case OP_MIN2: buf_printf(b, "fz_min(%s, %s)", ops[0], ops[1]); break;
    case OP_MAX2: buf_printf(b, "fz_max(%s, %s)", ops[0], ops[1]); break;
    case OP_ISNAN:
        if (isf)
            buf_printf(b, "((%s) != (%s))", ops[0], ops[0]);
        else
            buf_printf(b, "false");
        break;
    case OP_ISINF:
        if (isf)
            buf_printf(b, "(%s(%s) == %s)", dbl ? "fabs" : "fabsf", ops[0], dbl ? "FZ_DINF" : "FZ_INF");
        else
            buf_printf(b, "false");
        break;
    case OP_SIGN:
        if (isf) /* sign(NaN) is NaN, like torch and the interpreter */
            buf_printf(b, "((%s) != (%s) ? (%s) : (%s)(((%s) > 0) - ((%s) < 0)))", ops[0], ops[0], ops[0],
                       cu_ctype(cdt), ops[0], ops[0]);
        else
            buf_printf(b, "((%s)(((%s) > 0) - ((%s) < 0)))", cu_ctype(cdt), ops[0], ops[0]);
        break;
    case OP_CLAMP: buf_printf(b, "fz_min(fz_max(%s, %s), %s)", ops[0], ops[1], ops[2]); break;
    default:
        if (isf) {
            if (n->op == OP_RELU) /* NaN stays NaN, like torch and the interpreter */
                buf_printf(b, "(((%s) > 0 || (%s) != (%s)) ? (%s) : (%s)0)", ops[0], ops[0], ops[0], ops[0],
                           cu_ctype(cdt));
            else if (fast && !dbl && n->op == OP_DIV)
                buf_printf(b, "__fdividef(%s, %s)", ops[0], ops[1]);
            else if (!dbl && n->op == OP_DIV)
                buf_printf(b, "fz_fdiv(%s, %s)", ops[0], ops[1]);
            else if (!dbl && !fast && n->op == OP_RECIP)
                buf_printf(b, "fz_fdiv(1.0f, %s)", ops[0]);
            else if (!dbl && !fast && narrow && n->op == OP_EXP)
                buf_printf(b, "__expf(%s)", ops[0]);
            else if (!dbl && !fast && n->op == OP_SIGMOID)
                buf_printf(b, "%s(%s)", narrow ? "fz_sigmoid_approx" : "fz_sigmoid", ops[0]);
            else if (!dbl && !fast && n->op == OP_SILU)
                buf_printf(b, "%s(%s)", narrow ? "fz_silu_approx" : "fz_silu", ops[0]);
            else if (fast && !dbl)
                fast_template(oi->cuda, ops, b);
            else
                apply_template(oi->cuda, ops, dbl, b);
            break;
        }
        /* integers and bools: integer arithmetic */
        switch (n->op) {
        case OP_ABS: buf_printf(b, "((%s) < 0 ? -(%s) : (%s))", ops[0], ops[0], ops[0]); break;
        case OP_RELU: buf_printf(b, "((%s) > 0 ? (%s) : 0)", ops[0], ops[0]); break;
        case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_TRUNC: buf_printf(b, "(%s)", ops[0]); break;
        case OP_MOD: buf_printf(b, "((%s) %% (%s))", ops[0], ops[1]); break;
        case OP_POW: buf_printf(b, "((%s)fz_ipow(%s, %s))", cu_ctype(cdt), ops[0], ops[1]); break;
        case OP_FMA: buf_printf(b, "((%s) * (%s) + (%s))", ops[0], ops[1], ops[2]); break;
        default:
            if (!oi->cuda[0])
                ICE("no CUDA template for this op");
            apply_template(oi->cuda, ops, 0, b);
            break;
        }
        break;
    }
    for (int k = 0; k < 3; k++)
        buf_free(&cv[k]);
}

/* Variable names come from the source: v<id>_<name> (x<id>_<name> for
 * loads), plus _<k> for a second broadcast instance of the same node. */
static const char *value_name(KCtx *c, const IrNode *n, const char *prefix, char *out, size_t cap)
{
    Buf b = {0};
    buf_printf(&b, "%s%d", prefix, n->id);
    if (n->name) {
        buf_putc(&b, '_');
        cu_put_ident(&b, n->name);
    }
    /* a second instance of the same node (another broadcast map) */
    int dup = 0;
    for (int i = 0; i < c->ninst; i++)
        if (c->inst[i].node == n)
            dup++;
    if (dup)
        buf_printf(&b, "_%d", dup);
    snprintf(out, cap, "%s", b.data);
    buf_free(&b);
    return out;
}

/* the variable holding reduction value n (set by the reduce emitters) */
static const char *reduced_var(KCtx *c, const IrNode *n)
{
    int vi = cu_value_index(c, n);
    if (vi < 0 || !c->reduced_val[vi])
        ICE("reduction result used before it is computed");
    return c->reduced_val[vi];
}

static Inst *new_inst(KCtx *c, const IrNode *n, const int8_t *map)
{
    if (c->ninst >= MAX_INST)
        ICE("kernel too large");
    Inst *in = &c->inst[c->ninst];
    in->node = n;
    memcpy(in->map, map, IR_MAX_RANK);
    in->depth = c->depth;
    value_name(c, n, c->role[n->id] == 'i' ? "x" : "v", in->name, sizeof in->name);
    c->ninst++;
    return in;
}

/* Emit (once per scope) the value of n at the current point; returns the
 * C expression that holds it, in n's compute type. */
const char *cu_emit_value(KCtx *c, const IrNode *n, const int8_t *map)
{
    /* constants and scalar params are expressions, not variables: a small
     * ring of buffers, copied by the caller before the next call */
    static char lit[8][160];
    static int litk;
    if (n->op == OP_CONST) {
        Buf b = {0};
        fmt_const(n, &b);
        char *s = lit[litk++ & 7];
        snprintf(s, 160, "%s", b.data);
        buf_free(&b);
        return s;
    }
    if (cu_is_scalar_param(c, n)) {
        char *s = lit[litk++ & 7];
        Buf b = {0};
        buf_puts(&b, "p_");
        cu_put_ident(&b, c->f->params[n->param].name);
        if (n->dtype == DT_BOOL)
            snprintf(s, 160, "(%s != 0)", b.data);
        else
            snprintf(s, 160, "%s", b.data);
        buf_free(&b);
        return s;
    }
    if (op_info[n->op].cls == OPC_REDUCE && c->role[n->id] == 'v')
        return reduced_var(c, n);
    /* memo: the same node at the same map is computed once per scope */
    for (int i = c->ninst - 1; i >= 0; i--)
        if (c->inst[i].node == n && cu_map_eq(n, c->inst[i].map, map))
            return c->inst[i].name;
    if (c->rowcache && c->xc_e == n && cu_map_eq(n, c->xc_emap, map)) {
        /* the last round left this value in the row cache */
        Inst *in = new_inst(c, n, map);
        Buf x = {0};
        cu_xc_ref(c, &x, c->xc_slot, "k");
        emit_line(&c->w, "const %s %s = %s;", cu_ctype(n->dtype), in->name, x.data);
        buf_free(&x);
        return in->name;
    }
    const char *itype = "I";
    if (c->role[n->id] == 'i') {
        /* an input: from a vector already loaded, the row cache, or memory */
        int a = cu_acc_index(c, n, map);
        Buf e = {0}, off = {0};
        int converted = 0; /* the row cache holds values already in the compute type */
        if (c->vec && cu_acc_full(c, &c->acc[a]))
            buf_printf(&e, "va%d%s.v[j]", a, c->sfx ? c->sfx : "");
        else if (c->vec && c->loopbv && cu_acc_loopbv(c, &c->acc[a], c->loopbv))
            buf_printf(&e, "vc%d%s.v[j]", a, c->sfx ? c->sfx : "");
        else if (c->loopvld && cu_acc_cached(c, &c->acc[a]))
            buf_printf(&e, "xv%d.v[j]", a);
        else if (c->rowcache && cu_acc_cached(c, &c->acc[a])) {
            cu_xc_ref(c, &e, a, "k");
            converted = !cu_xc_raw(c, a);
        } else if (c->rowvw && cu_acc_rowvec(c, &c->acc[a], c->rowvw)) {
            buf_printf(&e, "vb%d.v[j]", a);
        } else {
            cu_acc_offset(c, &c->acc[a], itype, &off);
            buf_printf(&e, "in%d[%s]", c->inbuf[n->id], off.data);
        }
        Buf conv = {0};
        if (converted)
            buf_puts(&conv, e.data);
        else
            cu_load_conv(&conv, MDT(c, n), e.data);
        Inst *in = new_inst(c, n, map);
        emit_line(&c->w, "const %s %s = %s;", cu_ctype(n->dtype), in->name, conv.data);
        buf_free(&e);
        buf_free(&off);
        buf_free(&conv);
        return in->name;
    }
    if (c->role[n->id] != 'v')
        ICE("operand outside the kernel");
    /* an elementwise value: operands first (each at its own map) */
    const char *ops[3];
    char opbuf[3][160];
    DType adt[3];
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        cu_operand_map(n, k, map, um);
        snprintf(opbuf[k], sizeof opbuf[k], "%s", cu_emit_value(c, n->in[k].node, um));
        ops[k] = opbuf[k];
        adt[k] = n->in[k].node->dtype;
    }
    if (op_info[n->op].cls == OPC_VIEW) {
        /* a view moves no data: it names its operand's value */
        Inst *vin = new_inst(c, n, map);
        snprintf(vin->name, sizeof vin->name, "%s", ops[0]);
        return vin->name;
    }
    Buf e = {0};
    op_expr(n, ops, adt, &e, c->o && c->o->fast_math && c->o->target == TARGET_CUDA,
            c->k->kind == KK_LOOP && c->from_bf16[n->id]);
    Inst *in = new_inst(c, n, map);
    emit_line(&c->w, "const %s %s = %s;", cu_ctype(n->dtype), in->name, e.data);
    buf_free(&e);
    return in->name;
}

/* emit the store of output i at the current point */
void cu_emit_store(KCtx *c, int i, const char *itype)
{
    const IrNode *n = c->k->outputs[i];
    int8_t m[IR_MAX_RANK];
    cu_out_map(c, n, m);
    const char *v = cu_emit_value(c, n, m);
    Buf s = {0}, off = {0};
    cu_store_conv(&s, MDT(c, n), v);
    Access a = {n, {0}};
    memcpy(a.map, m, IR_MAX_RANK);
    if ((c->vec || c->vecstore) && cu_acc_full(c, &a)) {
        emit_line(&c->w, "vo%d%s.v[j] = %s;", i, c->sfx ? c->sfx : "", s.data);
    } else {
        cu_acc_offset(c, &a, itype, &off);
        emit_line(&c->w, "out%d[%s] = %s;", i, off.data, s.data);
    }
    buf_free(&s);
    buf_free(&off);
}

/* ------------------------------------------------------------------ */
/* Reductions: the state type of each reduction value.                 */

/* accumulation dtype of reduction n (compute type of its operand) */
DType cu_red_acc_dtype(const IrNode *n)
{
    DType t = n->in[0].node->dtype;
    if (n->op == OP_ANY || n->op == OP_ALL)
        return DT_I32;
    if (dtype_is_float(t))
        return cu_cdtype(t);
    if (n->op == OP_MEAN || n->op == OP_VAR || n->op == OP_STD || cu_red_is_lse(n))
        return dtype_is_float(n->dtype) ? cu_cdtype(n->dtype) : DT_F64;
    return DT_I64;
}

/* whether reduction n keeps a Welford state (count, mean, squared
 * deviations): var and std */
int cu_red_is_welford(const IrNode *n)
{
    return n->op == OP_VAR || n->op == OP_STD;
}

/* whether reduction n keeps logsumexp's state (a running max and a sum of
 * exp against it): logsumexp and sumexp */
int cu_red_is_lse(const IrNode *n)
{
    return n->op == OP_LOGSUMEXP || n->op == OP_SUMEXP;
}

/* Does reduction n take the hardware's exp (fz_lse_exp)?  A logsumexp's
 * f32 state of values computed from a bf16 param does in reduction
 * kernels, by the rule loop kernels follow (op_expr): a bf16 column
 * softmax's column pass is bound by instruction issue, and expf is eight
 * instructions of the 24 an element.  Row kernels keep expf (op_expr says
 * why). */
int cu_lse_hw(const KCtx *c, const IrNode *n)
{
    return cu_red_is_lse(n) && c->k->kind == KK_REDUCE && c->from_bf16[n->id] && cu_red_acc_dtype(n) == DT_F32;
}

/* the preamble's reduction struct for node n in c's kernel */
void cu_red_type(const KCtx *c, const IrNode *n, Buf *b)
{
    const char *t = cu_ctype(cu_red_acc_dtype(n));
    if (cu_lse_hw(c, n)) {
        buf_printf(b, "%s<%s, true>", n->op == OP_LOGSUMEXP ? "fz_lse" : "fz_sumexp", t);
        return;
    }
    switch (n->op) {
    case OP_SUM: buf_printf(b, "fz_sum<%s>", t); break;
    case OP_MEAN: buf_printf(b, "fz_mean<%s>", t); break;
    case OP_PROD: buf_printf(b, "fz_prod<%s>", t); break;
    case OP_RMAX: buf_printf(b, "fz_rmax<%s>", t); break;
    case OP_RMIN: buf_printf(b, "fz_rmin<%s>", t); break;
    case OP_ANY: buf_puts(b, "fz_any"); break;
    case OP_ALL: buf_puts(b, "fz_all"); break;
    case OP_ARGMAX: buf_printf(b, "fz_argred<%s, 1>", t); break;
    case OP_ARGMIN: buf_printf(b, "fz_argred<%s, 0>", t); break;
    case OP_VAR: buf_printf(b, "fz_var<%s, 0>", t); break;
    case OP_STD: buf_printf(b, "fz_var<%s, 1>", t); break;
    case OP_LOGSUMEXP: buf_printf(b, "fz_lse<%s>", t); break;
    case OP_SUMEXP: buf_printf(b, "fz_sumexp<%s>", t); break;
    default: unreachable();
    }
}

/* the atomic combine's struct for node n (a sum, mean, max or min) */
void cu_atomic_type(const IrNode *n, Buf *b)
{
    const char *t = cu_ctype(cu_red_acc_dtype(n));
    switch (n->op) {
    case OP_SUM: case OP_MEAN: buf_printf(b, "fz_aadd<%s>", t); break;
    case OP_RMAX: buf_printf(b, "fz_aext<%s, 1>", t); break;
    case OP_RMIN: buf_printf(b, "fz_aext<%s, 0>", t); break;
    default: unreachable();
    }
}

/* the element value passed to upd, converted to the accumulation type */
void cu_red_elem(const IrNode *n, const char *v, Buf *b)
{
    if (n->op == OP_ANY || n->op == OP_ALL)
        buf_printf(b, "(int)((%s) != 0)", v);
    else
        buf_printf(b, "(%s)(%s)", cu_ctype(cu_red_acc_dtype(n)), v);
}

/* reduction level: 1 + the deepest reduction it depends on (in kernel);
 * with top, a reduction's own level less one (what its operand needs) */
int cu_red_level(KCtx *c, const IrNode *n, int top)
{
    if (c->role[n->id] != 'v')
        return 0;
    const int l = c->redlvl[n->id];
    return top && op_info[n->op].cls == OPC_REDUCE ? l - 1 : l;
}

int cu_depends_on_red(KCtx *c, const IrNode *n)
{
    return cu_red_level(c, n, 0) > 0;
}

/* The dependency rounds of a row kernel's reductions: each a pass over
 * the row (softmax: the max, then the sum of exp(x - max)) */
int cu_red_rounds(KCtx *c)
{
    int rounds = 0;
    for (int i = 0; i < c->k->nvalues; i++)
        if (op_info[c->k->values[i]->op].cls == OPC_REDUCE && !cu_is_side_red(c, c->k->values[i])) {
            int l = cu_red_level(c, c->k->values[i], 1) + 1;
            if (l > rounds)
                rounds = l;
        }
    return rounds;
}

/* Is output i written per element in a pass after the `rounds` rounds (it
 * depends on a reduction, or there is none)? */
int cu_out_row_pass(KCtx *c, int i, int rounds)
{
    return cu_out_is_elem(c, i) && (cu_depends_on_red(c, c->k->outputs[i]) || rounds == 0);
}

/* Emit, at the current (row) scope, every sub-value of (n, map) that does
 * not vary along the reduced dims, so element loops only read it. */
static void hoist_walk(KCtx *c, NodeMapSet *seen, const IrNode *n, const int8_t *map)
{
    if (n->op == OP_CONST || cu_is_scalar_param(c, n))
        return;
    if (c->role[n->id] == 'v' && op_info[n->op].cls == OPC_REDUCE)
        return;
    if (!cu_map_has_red(c, n, map)) {
        cu_emit_value(c, n, map);
        return;
    }
    if (c->role[n->id] != 'v' || !cu_pairs_add(seen, n, map, NULL))
        return;
    for (int k = 0; k < n->nin; k++) {
        int8_t um[IR_MAX_RANK];
        cu_operand_map(n, k, map, um);
        hoist_walk(c, seen, n->in[k].node, um);
    }
}

void cu_hoist(KCtx *c, const IrNode *n, const int8_t *map)
{
    NodeMapSet seen;
    cu_pairs_init(&seen, c->f);
    hoist_walk(c, &seen, n, map);
    cu_pairs_free(&seen);
}

/* map of output i */
void cu_out_map_of(KCtx *c, int i, int8_t *m) { cu_out_map(c, c->k->outputs[i], m); }

/* Does (n, map) vary along the reduced dims, i.e. does it read an input
 * element through no reduction of this kernel?  Shapes alone cannot say:
 * with a reduced dim of static size 1 (`max(x, axis=0, keepdims=true)` of
 * x: f32[1]) a per-row value and an element value have the same shape. */
static int varies_walk(KCtx *c, NodeMapSet *seen, const IrNode *n, const int8_t *map)
{
    if (n->op == OP_CONST || cu_is_scalar_param(c, n))
        return 0;
    if (c->role[n->id] == 'v' && op_info[n->op].cls == OPC_REDUCE)
        return 0;
    if (c->role[n->id] != 'v')
        return cu_map_has_red(c, n, map);
    int known = 0;
    if (!cu_pairs_add(seen, n, map, &known))
        return known; /* walked: its answer */
    int v = 0;
    for (int k = 0; k < n->nin && !v; k++) {
        int8_t um[IR_MAX_RANK];
        cu_operand_map(n, k, map, um);
        v = varies_walk(c, seen, n->in[k].node, um);
    }
    cu_pairs_set(seen, n, map, v);
    return v;
}

static int varies_in_red(KCtx *c, const IrNode *n, const int8_t *map)
{
    NodeMapSet seen;
    cu_pairs_init(&seen, c->f);
    const int v = varies_walk(c, &seen, n, map);
    cu_pairs_free(&seen);
    return v;
}

/* Is output i written per element (it varies along the reduced dims)? */
int cu_out_is_elem(KCtx *c, int i)
{
    if (cu_is_side(c, c->k->outputs[i]))
        return 0; /* per row */
    int8_t m[IR_MAX_RANK];
    cu_out_map_of(c, i, m);
    return cu_map_has_red(c, c->k->outputs[i], m) && varies_in_red(c, c->k->outputs[i], m);
}

/* ------------------------------------------------------------------ */
/* Row kernels (KK_ROW, and reductions over rows / any axes).          */

/* After the combine: the reduction's final value (R::fin over `count`
 * elements of accumulator a<id><sub>) as a named value that later
 * expressions and stores of this scope use. */
void cu_finish_reduction(KCtx *c, const IrNode *r, const char *sub, const char *count)
{
    Inst *in = new_inst(c, r, (int8_t[IR_MAX_RANK]){-1, -1, -1, -1, -1, -1, -1, -1});
    if (r->dtype == DT_I32 && (r->op == OP_RMAX || r->op == OP_RMIN))
        /* i32 max/min fold in 64 bits: an empty axis leaves the 64-bit
         * identity, which must become i32's own (INT32_MIN/MAX), not its
         * low word (0 or -1); any other value fits */
        emit_line(&c->w, "const int %s = (int)fz_sat_i32((long long)R%d::fin(a%d%s, (long long)%s));", in->name,
                  r->id, r->id, sub, count);
    else
        emit_line(&c->w, "const %s %s = (%s)R%d::fin(a%d%s, (long long)%s);", cu_ctype(r->dtype), in->name,
                  cu_ctype(r->dtype), r->id, r->id, sub, count);
    int vi = cu_value_index(c, r);
    if (vi >= 0)
        c->reduced_val[vi] = in->name;
}


/* ------------------------------------------------------------------ */
/* Column reductions (RL_COLS, RL_MIDDLE): [outer kept, reduced, inner  */
/* kept].  A block owns 32 inner columns of one outer index; its 8 warps */
/* take every 8th reduced element, so each warp reads 128 contiguous    */
/* bytes per row.  The reduced range is split over blockIdx.z when rows  */
/* are many; the last of a tile's blocks combines the partials in split  */
/* order (deterministic) and resets the tile's counter.                  */


/* bytes of a reduction state (as the preamble lays it out) */
int cu_red_state_bytes(const IrNode *n)
{
    int t = dtype_size(cu_red_acc_dtype(n));
    switch (n->op) {
    case OP_ARGMAX: case OP_ARGMIN: return 16;
    case OP_VAR: case OP_STD: return 3 * t;
    case OP_LOGSUMEXP: case OP_SUMEXP: return 2 * t;
    default: return t;
    }
}
