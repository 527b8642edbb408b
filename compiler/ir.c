/* ir.c -- building the IR, shapes, and (below) printing and optimising it. */
#include "ir.h"
#include <string.h>

const OpInfo op_info[OP_COUNT] = {
#define OP(name, src, arity, cls, flags, cuda) {#name, src, arity, cls, flags, cuda},
#include "ops.def"
};

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

/* ---- TODO(sema helper): ir_print_func, ir_print_module, ir_optimize ---- */
void ir_print_func(FILE *out, const IrFunc *f) { (void)out; (void)f; }
void ir_print_module(FILE *out, const IrModule *m) { (void)out; (void)m; }
void ir_optimize(IrFunc *f) { ir_renumber(f); }
