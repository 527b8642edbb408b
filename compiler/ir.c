/* ir.c -- building the IR, shapes, and (below) printing and optimising it. */
#include "ir.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

IrFunc *ir_func_new(Arena *a, const char *name, Loc loc)
{
    IrFunc *f = ARENA_NEW(a, IrFunc);
    f->name = name;
    f->loc = loc;
    f->arena = a;
    f->expect_kernels = -1;
    return f;
}

IrNode *ir_node_new(IrFunc *f, OpKind op, DType dt, const IrShape *shape, Loc loc)
{
    IrNode *n = ARENA_NEW(f->arena, IrNode);
    n->op = op;
    n->dtype = dt;
    if (shape)
        n->shape = *shape;
    n->loc = loc;
    n->param = -1;
    n->id = f->nnodes;
    ARENA_PUSH(f->arena, f->nodes, f->nnodes, f->capnodes, n);
    return n;
}

/* Operand k of an elementwise node: aligned from the right; a dim is
 * stretched when the operand lacks it or has static 1 where the output
 * does not. */
void ir_add_operand(IrNode *n, IrNode *operand)
{
    if (n->nin >= 3)
        ICE("too many operands");
    IrUse u = {operand, 0};
    int R = n->shape.rank, r = operand->shape.rank;
    if (op_info[n->op].cls != OPC_REDUCE && op_info[n->op].cls != OPC_VIEW) {
        for (int d = 0; d < R; d++) {
            int od = d - (R - r);
            if (od < 0 || (ir_dim_is_one(operand->shape.dims[od]) && !ir_dim_is_one(n->shape.dims[d])))
                u.bcast |= (uint8_t)(1u << d);
        }
    }
    n->in[n->nin++] = u;
}

int ir_sym_intern(IrFunc *f, const char *name)
{
    for (int i = 0; i < f->nsyms; i++)
        if (strcmp(f->syms[i], name) == 0)
            return i;
    int cap = f->nsyms, cap2 = f->nsyms;
    /* syms and sym_static grow together; capacity equals count (small) */
    const char **s = ARENA_ARRAY(f->arena, const char *, cap + 1);
    int64_t *st = ARENA_ARRAY(f->arena, int64_t, cap2 + 1);
    if (f->nsyms) {
        memcpy(s, f->syms, sizeof(*s) * (size_t)f->nsyms);
        memcpy(st, f->sym_static, sizeof(*st) * (size_t)f->nsyms);
    }
    s[f->nsyms] = name;
    st[f->nsyms] = -1;
    f->syms = s;
    f->sym_static = st;
    return f->nsyms++;
}

int ir_dim_eq(IrDim a, IrDim b)
{
    if (a.size >= 0 && b.size >= 0)
        return a.size == b.size;
    if (a.size < 0 && b.size < 0)
        return a.sym == b.sym;
    return 0;
}

int ir_dim_is_one(IrDim d) { return d.size == 1; }

int ir_shape_eq(const IrShape *a, const IrShape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!ir_dim_eq(a->dims[i], b->dims[i]))
            return 0;
    return 1;
}

void ir_dim_str(const IrFunc *f, IrDim d, Buf *out)
{
    if (d.sym >= 0 && f && d.sym < f->nsyms)
        buf_puts(out, f->syms[d.sym]);
    else
        buf_printf(out, "%lld", (long long)d.size);
    if (d.sym >= 0 && d.size >= 0)
        buf_printf(out, "=%lld", (long long)d.size);
}

void ir_shape_str(const IrFunc *f, const IrShape *s, Buf *out)
{
    buf_putc(out, '[');
    for (int i = 0; i < s->rank; i++) {
        if (i)
            buf_puts(out, ", ");
        ir_dim_str(f, s->dims[i], out);
    }
    buf_putc(out, ']');
}

void ir_type_str(const IrFunc *f, DType dt, const IrShape *s, Buf *out)
{
    buf_puts(out, dtype_name(dt));
    if (s->rank > 0)
        ir_shape_str(f, s, out);
}

int ir_shape_is_static(const IrShape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i].size < 0)
            return 0;
    return 1;
}

int64_t ir_shape_static_numel(const IrShape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i].size < 0)
            return -1;
        n *= s->dims[i].size;
    }
    return n;
}

void ir_count_uses(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++)
        f->nodes[i]->nuses = 0;
    for (int i = 0; i < f->nnodes; i++)
        for (int k = 0; k < f->nodes[i]->nin; k++)
            f->nodes[i]->in[k].node->nuses++;
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node)
            f->results[r].node->nuses++;
}

void ir_renumber(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++)
        f->nodes[i]->id = i;
}

/* ---- printing --------------------------------------------------------------
 * One line per node, operands as %id, then the op's attributes, then the
 * result type after ':'.  The value name from the source, when there is
 * one, ends the line as a '# name' comment.  Nothing here depends on
 * pointers or hash order, so the text is stable for FileCheck. */

/* The shortest decimal that reads back as v once rounded to dtype t. */
static void print_float(Buf *b, DType t, double v)
{
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (round_to_dtype(strtod(tmp, NULL), t) == v)
            break;
    }
    buf_puts(b, tmp);
}

/* op_info names come from the enum (upper case); the text form is lower. */
static void print_opname(Buf *b, OpKind op)
{
    for (const char *c = op_info[op].name; *c; c++)
        buf_putc(b, (char)tolower((unsigned char)*c));
}

static void print_const(Buf *b, const IrNode *n)
{
    if (n->dtype == DT_BOOL)
        buf_puts(b, n->ival ? "true" : "false");
    else if (dtype_is_int(n->dtype))
        buf_printf(b, "%lld", (long long)n->ival);
    else if (isnan(n->cval))
        buf_puts(b, "nan");
    else if (isinf(n->cval))
        buf_puts(b, n->cval < 0 ? "-inf" : "inf");
    else
        print_float(b, n->dtype, n->cval);
}

/*   %id = op [param name | const value] %a [bcast(d..)], ... [axes(..)
 *   [keepdims] | axis(k)] : type  [# name]  */
static void print_node(Buf *b, const IrFunc *f, const IrNode *n)
{
    buf_printf(b, "  %%%d = ", n->id);
    print_opname(b, n->op);
    if (n->op == OP_PARAM)
        buf_printf(b, " %s", n->param >= 0 && n->param < f->nparams ? f->params[n->param].name : "?");
    else if (n->op == OP_CONST) {
        buf_putc(b, ' ');
        print_const(b, n);
    }
    for (int k = 0; k < n->nin; k++) {
        buf_printf(b, "%s %%%d", k ? "," : "", n->in[k].node->id);
        if (n->in[k].bcast) {
            buf_puts(b, " bcast(");
            int first = 1;
            for (int d = 0; d < IR_MAX_RANK; d++)
                if (n->in[k].bcast & (1u << d)) {
                    buf_printf(b, first ? "%d" : ", %d", d);
                    first = 0;
                }
            buf_putc(b, ')');
        }
    }
    if (op_info[n->op].cls == OPC_REDUCE) {
        buf_puts(b, " axes(");
        int first = 1;
        for (int d = 0; d < IR_MAX_RANK; d++)
            if (n->axes & (1u << d)) {
                buf_printf(b, first ? "%d" : ", %d", d);
                first = 0;
            }
        buf_putc(b, ')');
        if (n->keepdims)
            buf_puts(b, " keepdims");
    }
    if (n->op == OP_UNSQUEEZE)
        buf_printf(b, " axis(%d)", n->axis);
    buf_puts(b, " : ");
    ir_type_str(f, n->dtype, &n->shape, b);
    if (n->name && n->op != OP_PARAM)
        buf_printf(b, "  # %s", n->name);
    buf_putc(b, '\n');
}

/* The header line names the params (with defaults), the results, the
 * symbols in host-argument order (NAME=SIZE when -D made one static) and
 * the @kernels contract; one `return` line per result follows the nodes. */
static void print_func(Buf *b, const IrFunc *f)
{
    buf_printf(b, "fn %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *p = &f->params[i];
        buf_printf(b, "%s%s: ", i ? ", " : "", p->name);
        ir_type_str(f, p->dtype, &p->shape, b);
        if (p->has_default) {
            buf_puts(b, " = ");
            if (dtype_is_float(p->dtype))
                print_float(b, p->dtype, p->deflt);
            else if (p->dtype == DT_BOOL)
                buf_puts(b, p->deflt != 0 ? "true" : "false");
            else
                buf_printf(b, "%lld", (long long)p->deflt);
        }
    }
    buf_puts(b, ") -> (");
    for (int i = 0; i < f->nresults; i++) {
        const IrResult *r = &f->results[i];
        buf_printf(b, "%s%s: ", i ? ", " : "", r->name);
        ir_type_str(f, r->dtype, &r->shape, b);
    }
    buf_putc(b, ')');
    if (f->nsyms) {
        buf_puts(b, " syms(");
        for (int i = 0; i < f->nsyms; i++) {
            buf_printf(b, "%s%s", i ? ", " : "", f->syms[i]);
            if (f->sym_static && f->sym_static[i] >= 0)
                buf_printf(b, "=%lld", (long long)f->sym_static[i]);
        }
        buf_putc(b, ')');
    }
    if (f->expect_kernels >= 0)
        buf_printf(b, " kernels(%d)", f->expect_kernels);
    buf_putc(b, '\n');
    for (int i = 0; i < f->nnodes; i++)
        print_node(b, f, f->nodes[i]);
    for (int i = 0; i < f->nresults; i++)
        buf_printf(b, "  return %s = %%%d\n", f->results[i].name,
                   f->results[i].node ? f->results[i].node->id : -1);
}

void ir_print_func(FILE *out, const IrFunc *f)
{
    Buf b = {0};
    print_func(&b, f);
    if (b.len)
        fwrite(b.data, 1, b.len, out);
    buf_free(&b);
}

void ir_print_module(FILE *out, const IrModule *m)
{
    for (int i = 0; i < m->nfns; i++) {
        if (i)
            fputc('\n', out);
        ir_print_func(out, m->fns[i]);
    }
}

/* ---- optimisation ------------------------------------------------------------
 * Small passes over the node list, each O(n^2) at worst (a few
 * hundred nodes):
 *   fold: an elementwise node whose operands are all constants (so it is a
 *         scalar) becomes a constant, computed in double and rounded to its
 *         dtype exactly as the device would store it; x ** 2 becomes
 *         square(x) and x ** -1 recip(x);
 *   cse:  a node equal to an earlier one (op, dtype, shape, operands with
 *         their bcast bits, attributes) is replaced by it;
 *   share: std beside a var of the same operand and axes reads that var;
 *   dce:  nodes that no result depends on are dropped, except parameters
 *         (the host signature must not change). */

/* Evaluate op on constant operands with op_eval_scalar, the interpreter's
 * semantics, and round to the node's dtype as a constant is; 0 if it cannot
 * be folded (integer division by zero: left to run time, which reports it;
 * an op without a scalar meaning).  Integer operands are taken from ival,
 * exact beyond 2^53. */
static int fold_value(const IrNode *n, double *out_f, int64_t *out_i)
{
    double args[3] = {0, 0, 0};
    int64_t iargs[3] = {0, 0, 0};
    int int_args = 1;
    for (int k = 0; k < n->nin && k < 3; k++) {
        args[k] = n->in[k].node->cval;
        iargs[k] = n->in[k].node->ival;
        int_args &= !dtype_is_float(n->in[k].node->dtype);
    }
    if (dtype_is_int(n->dtype) && int_args) {
        int64_t r;
        OpEvalStatus st = op_eval_int(n->op, n->dtype, iargs, &r);
        if (st == OPEVAL_DIVZERO)
            return 0;
        if (st == OPEVAL_OK) {
            *out_i = r;
            *out_f = (double)r;
            return 1;
        }
    }
    DType in_dt = n->nin > 0 ? n->in[0].node->dtype : n->dtype;
    double r;
    if (op_eval_scalar(n->op, n->dtype, in_dt, args, &r) != OPEVAL_OK)
        return 0;
    r = round_to_dtype(r, n->dtype);
    if (dtype_is_float(n->dtype)) {
        *out_f = r;
        *out_i = 0;
    } else {
        *out_i = double_to_i64(r);
        *out_f = (double)*out_i;
    }
    return 1;
}

/* Nodes are rewritten in place into OP_CONST, so their users (and the
 * results) need no update; CSE then merges equal constants. */
static void fold_constants(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        OpClass cls = op_info[n->op].cls;
        if (n->nin == 0 || n->shape.rank != 0 || (cls != OPC_UNARY && cls != OPC_BINARY && cls != OPC_TERNARY))
            continue;
        int all = 1;
        for (int k = 0; k < n->nin; k++)
            all &= n->in[k].node->op == OP_CONST;
        double fv;
        int64_t iv;
        if (!all || !fold_value(n, &fv, &iv))
            continue;
        n->op = OP_CONST;
        n->nin = 0;
        n->cval = fv;
        n->ival = iv;
    }
}

/* Two nodes compute the same value: parameters never compare equal (each
 * is its own input), constants compare by value and sign of zero. */
/* x ** 2 -> square(x), x ** -1 -> recip(x) (floats): exact rewrites that
 * spare the device a powf; the constant's other users keep it alive. */
static void strength_reduce(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        if (n->op != OP_POW || n->in[1].node->op != OP_CONST || n->in[0].node->shape.rank != n->shape.rank)
            continue;
        double e = n->in[1].node->cval;
        if (e == 2)
            n->op = OP_SQUARE;
        else if (e == -1 && dtype_is_float(n->dtype))
            n->op = OP_RECIP;
        else
            continue;
        n->nin = 1;
    }
}

static int same_node(const IrNode *a, const IrNode *b)
{
    if (a->op != b->op || a->dtype != b->dtype || a->nin != b->nin || !ir_shape_eq(&a->shape, &b->shape))
        return 0;
    if (a->op == OP_PARAM)
        return 0;
    for (int k = 0; k < a->nin; k++)
        if (a->in[k].node != b->in[k].node || a->in[k].bcast != b->in[k].bcast)
            return 0;
    /* a static dim and a -D dim of the same size compare equal above; keep
     * them apart so printed shapes do not change under CSE */
    for (int d = 0; d < a->shape.rank; d++)
        if (a->shape.dims[d].sym != b->shape.dims[d].sym)
            return 0;
    if (a->op == OP_CONST)
        return a->ival == b->ival && (a->cval == b->cval || (isnan(a->cval) && isnan(b->cval))) &&
               signbit(a->cval) == signbit(b->cval);
    return a->axes == b->axes && a->keepdims == b->keepdims && a->axis == b->axis;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* A hash of everything same_node compares, so CSE is linear on average. */
static uint64_t node_hash(const IrNode *n)
{
    uint64_t h = mix((uint64_t)n->op, (uint64_t)n->dtype);
    h = mix(h, (uint64_t)n->shape.rank);
    for (int d = 0; d < n->shape.rank; d++)
        h = mix(mix(h, (uint64_t)n->shape.dims[d].size), (uint64_t)(n->shape.dims[d].sym + 1));
    for (int k = 0; k < n->nin; k++)
        h = mix(mix(h, (uint64_t)n->in[k].node->id), n->in[k].bcast);
    h = mix(mix(mix(h, n->axes), (uint64_t)n->keepdims), (uint64_t)n->axis);
    if (n->op == OP_CONST) {
        double c = n->cval == 0 ? 0.0 * (signbit(n->cval) ? -1 : 1) : n->cval;
        uint64_t bits;
        memcpy(&bits, &c, sizeof bits);
        h = mix(mix(h, (uint64_t)n->ival), isnan(c) ? 1 : bits);
    }
    /* splitmix64's finaliser: constants differ in their high bits only,
     * and the table is indexed by the low ones */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* repl[id]: the node that replaces node id (itself if kept).  Nodes are
 * visited in order, so operands are already replaced when a node is
 * hashed; the table holds indices of kept nodes (open addressing). */
static void cse(IrFunc *f, IrNode **repl)
{
    size_t cap = 16;
    while (cap < (size_t)f->nnodes * 2)
        cap <<= 1;
    int *table = malloc(sizeof(int) * cap);
    if (!table)
        fatal_oom();
    for (size_t i = 0; i < cap; i++)
        table[i] = -1;
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *n = f->nodes[i];
        for (int k = 0; k < n->nin; k++)
            n->in[k].node = repl[n->in[k].node->id];
        repl[i] = n;
        if (n->op == OP_PARAM)
            continue;
        size_t slot = (size_t)node_hash(n) & (cap - 1);
        for (; table[slot] >= 0; slot = (slot + 1) & (cap - 1)) {
            IrNode *m = f->nodes[table[slot]];
            if (same_node(m, n)) {
                repl[i] = m;
                if (!m->name)
                    m->name = n->name;
                break;
            }
        }
        if (repl[i] == n)
            table[slot] = i;
    }
    free(table);
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node)
            f->results[r].node = repl[f->results[r].node->id];
}

/* Nodes are in topological order, so one backward sweep from the results
 * marks everything live; the survivors keep their relative order. */
static void remove_dead(IrFunc *f, IrNode **repl)
{
    /* mark: reuse repl as a live flag array (NULL dead, non-NULL live) */
    for (int i = 0; i < f->nnodes; i++)
        repl[i] = f->nodes[i]->op == OP_PARAM ? f->nodes[i] : NULL;
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node)
            repl[f->results[r].node->id] = f->results[r].node;
    for (int i = f->nnodes - 1; i >= 0; i--) {
        if (!repl[i])
            continue;
        IrNode *n = f->nodes[i];
        for (int k = 0; k < n->nin; k++)
            repl[n->in[k].node->id] = n->in[k].node;
    }
    int w = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (repl[i])
            f->nodes[w++] = f->nodes[i];
    f->nnodes = w;
}

/* Reduction n becomes the elementwise op reading operand, in place: its
 * users keep reading n. */
static void become_elementwise(IrNode *n, OpKind op, IrNode *operand)
{
    n->op = op;
    n->in[0].node = operand;
    n->in[0].bcast = 0;
    n->axes = 0;
    n->keepdims = 0;
}

/* A 2-byte var and std of one operand: both read w = var(x) in f32 (the
 * type their state is folded in), var as cast(w), std as cast(sqrt(w)),
 * so one Welford state serves both; each value is the rounding of the f32
 * result the kernel computed before.  w and sqrt(w) go in front of the
 * earlier of the two, which become the casts in place (their users keep
 * them). */
static void share_var_std_narrow(IrFunc *f, int i, int j)
{
    IrNode *s = f->nodes[i], *v = f->nodes[j], *x = s->in[0].node;
    IrNode *w = ir_node_new(f, OP_VAR, DT_F32, &v->shape, v->loc);
    ir_add_operand(w, x);
    w->in[0].bcast = v->in[0].bcast;
    w->axes = v->axes;
    w->keepdims = v->keepdims;
    IrNode *q = ir_node_new(f, OP_SQRT, DT_F32, &s->shape, s->loc);
    ir_add_operand(q, w);
    int at = i < j ? i : j;
    memmove(&f->nodes[at + 2], &f->nodes[at], sizeof(IrNode *) * (size_t)(f->nnodes - 2 - at));
    f->nodes[at] = w;
    f->nodes[at + 1] = q;
    become_elementwise(v, OP_CAST, w);
    become_elementwise(s, OP_CAST, q);
    ir_renumber(f);
}

/* std(x) beside var(x) over the same axes becomes sqrt(var(x)), so one
 * Welford state serves both; the value is the same bits (std's own final
 * step is that square root).  A 2-byte var is rounded before a square
 * root could read it: those two read an f32 var (share_var_std_narrow).
 * The var moves up to the std's place when it comes later: it reads only
 * x, which precedes both. */
static void share_var_std(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *s = f->nodes[i];
        if (s->op != OP_STD || !dtype_is_float(s->dtype))
            continue;
        for (int j = 0; j < f->nnodes; j++) {
            IrNode *v = f->nodes[j];
            if (v->op != OP_VAR || v->dtype != s->dtype || v->in[0].node != s->in[0].node ||
                v->axes != s->axes || v->keepdims != s->keepdims)
                continue;
            if (s->dtype != DT_F32 && s->dtype != DT_F64) {
                share_var_std_narrow(f, i, j);
                break;
            }
            if (j > i) {
                memmove(&f->nodes[i + 1], &f->nodes[i], sizeof(IrNode *) * (size_t)(j - i));
                f->nodes[i] = v;
                ir_renumber(f);
            }
            become_elementwise(s, OP_SQRT, v);
            break;
        }
    }
}

/* sum(exp(x - m)) with m = max(x) over the same axes becomes sumexp(x):
 * the max and the sum then share one online state (a running max and the
 * sum of exp against it, rescaled when the max grows) and one pass over x,
 * where the sum would wait for the max in a pass of its own (softmax over
 * a leading axis: two passes over x, not three).  Only where the innermost
 * axis is kept: a row kernel holds its row on chip and takes the max and
 * then the sum from there.  m broadcasts back to x's elements: keepdims,
 * or leading axes reduced.  The value is the same (sumexp's meaning is the
 * sum as written); m stays where anything else reads it.  Not where the
 * kept axes after the last reduced one are static and under 512 bytes:
 * there the three kernels took 4-24% less time (static builds on the H100,
 * 64 to 400 bytes a row), but for f32 rows of 256 bytes (a tie) and 400
 * (4% more); from 666 bytes on the online form gained (H200). */
enum { SUMEXP_MIN_INNER_BYTES = 512 };
static int inner_too_narrow(const IrNode *x, unsigned axes)
{
    int rank = x->shape.rank, last = -1;
    for (int a = 0; a < rank; a++)
        if ((axes >> a) & 1)
            last = a;
    int64_t bytes = dtype_size(x->dtype);
    for (int a = last + 1; a < rank; a++) {
        if (x->shape.dims[a].size < 0)
            return 0;
        bytes *= x->shape.dims[a].size;
        if (bytes >= SUMEXP_MIN_INNER_BYTES)
            return 0;
    }
    return 1;
}

static void online_sumexp(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        IrNode *s = f->nodes[i];
        if (s->op != OP_SUM || !dtype_is_float(s->dtype) || s->in[0].bcast)
            continue;
        IrNode *e = s->in[0].node;
        if (e->op != OP_EXP || e->in[0].bcast)
            continue;
        IrNode *d = e->in[0].node;
        if (d->op != OP_SUB || d->in[0].bcast)
            continue;
        IrNode *x = d->in[0].node, *m = d->in[1].node;
        int rank = x->shape.rank;
        if (m->op != OP_RMAX || m->in[0].node != x || m->in[0].bcast || m->axes != s->axes ||
            !dtype_is_float(x->dtype) || rank < 2 || (s->axes >> (rank - 1)) & 1)
            continue;
        if (!m->keepdims && (s->axes & (s->axes + 1)) != 0)
            continue; /* [kept] against [.., reduced, ..]: not leading */
        if (inner_too_narrow(x, s->axes))
            continue;
        s->op = OP_SUMEXP;
        s->in[0].node = x;
    }
}

void ir_optimize(IrFunc *f)
{
    ir_renumber(f);
    if (f->nnodes == 0)
        return;
    IrNode **repl = ARENA_ARRAY(f->arena, IrNode *, f->nnodes);
    fold_constants(f);
    strength_reduce(f);
    cse(f, repl);
    share_var_std(f);
    online_sumexp(f);
    repl = ARENA_ARRAY(f->arena, IrNode *, f->nnodes); /* share_var_std may add nodes */
    remove_dead(f, repl);
    ir_renumber(f);
    ir_count_uses(f);
}
