/* report.c -- the plan for people and tools: --emit=plan (JSON),
 * --emit=fusion (text: each kernel, what it computes and why nodes were
 * not fused) and --emit=dot (Graphviz).  Reads plans only; decides nothing.
 * Every list follows plan order, so each report is byte-stable. */
#include "diag.h"
#include "fusion.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void json_str(FILE *out, const char *s)
{
    Buf b = {0};
    buf_put_json_string(&b, s);
    fwrite(b.data, 1, b.len, out);
    buf_free(&b);
}

/* The shortest text that reads back as the same double; JSON has no NaN
 * or infinity, so those are strings. */
static void json_number(FILE *out, const char *key, double v)
{
    fputs(key, out);
    if (v != v || v - v != 0) {
        fprintf(out, "\"%s\"", v != v ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, out);
}

/* A shape as a JSON list: static dims as numbers, symbols as strings. */
static void json_shape(FILE *out, const IrFunc *f, const IrShape *s)
{
    fputc('[', out);
    for (int i = 0; i < s->rank; i++) {
        if (i)
            fputs(", ", out);
        IrDim d = s->dims[i];
        if (d.size >= 0)
            fprintf(out, "%lld", (long long)d.size);
        else
            json_str(out, d.sym >= 0 && d.sym < f->nsyms ? f->syms[d.sym] : "?");
    }
    fputc(']', out);
}

/* A node's name for people: its source name, else the name of the fn
 * result it is, else NULL. */
static const char *node_name(const IrFunc *f, const IrNode *n)
{
    if (n->name)
        return n->name;
    for (int r = 0; r < f->nresults; r++)
        if (f->results[r].node == n)
            return f->results[r].name;
    return NULL;
}

/* "%3 e" or "%3" */
static void value_label(Buf *b, const IrFunc *f, const IrNode *n)
{
    buf_printf(b, "%%%d", n->id);
    if (node_name(f, n))
        buf_printf(b, " %s", node_name(f, n));
}

static void json_nodes(FILE *out, const IrFunc *f, IrNode **v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        Buf b = {0};
        value_label(&b, f, v[i]);
        if (i)
            fputs(", ", out);
        json_str(out, b.data);
        buf_free(&b);
    }
    fputc(']', out);
}

static const char *layout_word(ReduceLayout l)
{
    switch (l) {
    case RL_NONE: return "none";
    case RL_SCALAR: return "scalar";
    case RL_ROWS: return "rows";
    case RL_COLS: return "cols";
    case RL_MIDDLE: return "middle";
    }
    unreachable();
}

/* The 1-based source line of a location, 0 when it has none. */
static int loc_line(Loc l)
{
    int line = 0, col = 0;
    if (l.file >= 0)
        diag_line_col(l.file, l.begin, &line, &col);
    return line;
}

/* `{"name": N, "dtype": D, "shape": [...]` of a param or result (the caller
 * adds its own fields and the closing brace). */
static void json_typed_name(FILE *out, const IrFunc *f, const char *name, DType dt,
                            const IrShape *shape)
{
    fputs("{\"name\": ", out);
    json_str(out, name);
    fprintf(out, ", \"dtype\": \"%s\", \"shape\": ", dtype_name(dt));
    json_shape(out, f, shape);
}

/* An op's name in quotes as --emit=ir prints it: "exp", "rmax", "gelu_tanh". */
static void json_op(FILE *out, OpKind op)
{
    fputc('"', out);
    for (const char *c = op_info[op].name; *c; c++)
        fputc(tolower((unsigned char)*c), out);
    fputc('"', out);
}

void fuse_print_json(FILE *out, Plan **plans, int nplans)
{
    fputs("{\"functions\": [", out);
    for (int pi = 0; pi < nplans; pi++) {
        const Plan *p = plans[pi];
        const IrFunc *f = p->fn;
        fputs(pi ? ",\n" : "\n", out);
        fputs("  {\"name\": ", out);
        json_str(out, f->name);
        fputs(",\n   \"params\": [", out);
        for (int i = 0; i < f->nparams; i++) {
            fputs(i ? ", " : "", out);
            json_typed_name(out, f, f->params[i].name, f->params[i].dtype, &f->params[i].shape);
            fprintf(out, ", \"scalar\": %s", f->params[i].is_tensor ? "false" : "true");
            if (f->params[i].has_default)
                json_number(out, ", \"default\": ", f->params[i].deflt);
            fputc('}', out);
        }
        fputs("],\n   \"results\": [", out);
        for (int i = 0; i < f->nresults; i++) {
            fputs(i ? ", " : "", out);
            json_typed_name(out, f, f->results[i].name, f->results[i].dtype, &f->results[i].shape);
            fputc('}', out);
        }
        fputs("],\n   \"syms\": [", out);
        for (int i = 0; i < f->nsyms; i++) {
            fputs(i ? ", " : "", out);
            json_str(out, f->syms[i]);
        }
        /* what tools judge results by (fuse-run's tolerances): the ops the
         * fn computes, and the extents each reduction reduces */
        fputs("],\n   \"ops\": [", out);
        int used[OP_COUNT] = {0}, nused = 0;
        for (int i = 0; i < f->nnodes; i++)
            used[f->nodes[i]->op] = 1;
        for (int op = 0; op < OP_COUNT; op++)
            if (used[op]) {
                fputs(nused++ ? ", " : "", out);
                json_op(out, (OpKind)op);
            }
        fputs("],\n   \"reductions\": [", out);
        int nred = 0;
        for (int i = 0; i < f->nnodes; i++) {
            const IrNode *n = f->nodes[i];
            if (op_info[n->op].cls != OPC_REDUCE || n->nin < 1)
                continue;
            const IrShape *in = &n->in[0].node->shape;
            IrShape red = {0};
            for (int d = 0; d < in->rank; d++)
                if (n->axes >> d & 1)
                    red.dims[red.rank++] = in->dims[d];
            fputs(nred++ ? ", " : "", out);
            fputs("{\"op\": ", out);
            json_op(out, n->op);
            fprintf(out, ", \"node\": \"%%%d\", \"operand\": ", n->id);
            json_shape(out, f, in);
            fputs(", \"reduced\": ", out);
            json_shape(out, f, &red);
            fputc('}', out);
        }
        fputs("],\n   \"intermediates\": ", out);
        json_nodes(out, f, p->intermediates, p->nintermediates);
        fputs(",\n   \"kernels\": [", out);
        for (int i = 0; i < p->nkernels; i++) {
            const Kernel *k = &p->kernels[i];
            fputs(i ? ",\n    " : "\n    ", out);
            fputs("{\"name\": ", out);
            json_str(out, k->name);
            fprintf(out, ", \"kind\": \"%s\"", fuse_kind_name(k->kind));
            if (k->kind != KK_LOOP)
                fprintf(out, ", \"layout\": \"%s\"", layout_word(k->layout));
            if (k->kind == KK_ROW)
                fprintf(out, ", \"looped\": %d", k->looped);
            if (k->side_axes)
                fputs(", \"side_layout\": \"rows\"", out);
            if (fuse_colp_partner(p, i) >= 0) {
                fputs(", \"column_partials_of\": ", out);
                json_str(out, p->kernels[fuse_colp_partner(p, i)].name);
            }
            fputs(", \"space\": ", out);
            json_shape(out, f, &k->space);
            fputs(", \"values\": ", out);
            json_nodes(out, f, k->values, k->nvalues);
            fputs(", \"inputs\": ", out);
            json_nodes(out, f, k->inputs, k->ninputs);
            fputs(", \"outputs\": ", out);
            json_nodes(out, f, k->outputs, k->noutputs);
            fprintf(out, ", \"est_registers\": %d, \"line\": %d", k->est_registers, loc_line(k->loc));
            if (k->combine) {
                fputs(", \"combine\": ", out);
                json_str(out, k->combine);
            }
            if (k->combine_why) {
                fputs(", \"combine_reason\": ", out);
                json_str(out, k->combine_why);
            }
            fputc('}', out);
        }
        fputs(p->nkernels ? "\n   ],\n   \"rejected\": [" : "],\n   \"rejected\": [", out);
        for (int i = 0; i < p->nrejected; i++) {
            const Rejection *r = &p->rejected[i];
            fputs(i ? ",\n    " : "\n    ", out);
            fputs("{\"reason\": ", out);
            json_str(out, r->reason);
            fputs(", \"code\": ", out);
            json_str(out, r->code);
            fprintf(out, ", \"producer\": \"%%%d\", \"consumer\": \"%%%d\"}", r->producer->id,
                    r->consumer->id);
        }
        fputs(p->nrejected ? "\n   ]}" : "]}", out);
    }
    fputs("\n]}\n", out);
}

static void text_name(FILE *out, const IrFunc *f, const IrNode *n)
{
    if (node_name(f, n))
        fputs(node_name(f, n), out);
    else
        fprintf(out, "%%%d", n->id);
}

/* "a, b, %3" (constants skipped when skip_const), "-" when empty. */
static void text_list(FILE *out, const IrFunc *f, IrNode **v, int n, int skip_const)
{
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (skip_const && v[i]->op == OP_CONST)
            continue;
        fputs(first ? "" : ", ", out);
        text_name(out, f, v[i]);
        first = 0;
    }
    if (first)
        fputs("-", out);
}

/* What a kernel writes, by the names a user knows: a fn result by its
 * result name (`y = x` writes y, not x; a value returned twice is written
 * once per result), an intermediate by its value name. */
static void text_outputs(FILE *out, const IrFunc *f, const Kernel *k)
{
    for (int i = 0; i < k->noutputs; i++) {
        if (i)
            fputs(", ", out);
        int r = k->out_result ? k->out_result[i] : -1;
        if (r >= 0 && r < f->nresults)
            fputs(f->results[r].name, out);
        else
            text_list(out, f, &k->outputs[i], 1, 0);
    }
    if (k->noutputs == 0)
        fputs("-", out);
}

/* The column partials of row kernel i (fuse_colp_partner): which column
 * kernel's reductions it folds, and what that kernel then does not read. */
static void text_colp(FILE *out, const Plan *p, int i)
{
    int j = fuse_colp_partner(p, i);
    if (j < 0)
        return;
    const Kernel *k = &p->kernels[i], *q = &p->kernels[j];
    fprintf(out, "  column partials: %s folds %s's column reductions (", k->name, q->name);
    text_outputs(out, p->fn, q);
    fprintf(out, ") into a partial row a block where it holds its rows in registers; %s "
                 "then adds them instead of reading ", q->name);
    int n = 0;
    for (int x = 0; x < q->ninputs; x++)
        if (ir_shape_eq(&q->inputs[x]->shape, &q->space)) {
            fputs(n++ ? ", " : "", out);
            text_name(out, p->fn, q->inputs[x]);
        }
    fputs(n ? " again\n" : "its inputs\n", out);
}

/* The words in parentheses after a kernel's name in --emit=fusion. */
static void describe_kind(FILE *out, const IrFunc *f, const Kernel *k)
{
    Buf b = {0};
    IrShape red = {0};
    for (int i = 0; i < k->space.rank; i++)
        if ((k->reduce_axes >> i) & 1)
            red.dims[red.rank++] = k->space.dims[i];
    if (red.rank == 1)
        ir_dim_str(f, red.dims[0], &b);
    else
        ir_shape_str(f, &red, &b);
    switch (k->kind) {
    case KK_LOOP: {
        Buf s = {0};
        ir_shape_str(f, &k->space, &s);
        fprintf(out, "loop over %s", s.data ? s.data : "[]");
        buf_free(&s);
        break;
    }
    case KK_REDUCE:
        switch (k->layout) {
        case RL_SCALAR: fprintf(out, "reduce to a scalar"); break;
        case RL_ROWS: fprintf(out, "reduce rows of %s", b.data); break;
        case RL_COLS: fprintf(out, "reduce columns of %s", b.data); break;
        default: fprintf(out, "reduce middle axes %s", b.data); break;
        }
        break;
    case KK_ROW:
        fprintf(out, "row-persistent, rows of %s%s", b.data, k->looped ? ", looped" : "");
        break;
    }
    if (k->side_axes) {
        /* the side reductions: rows of the kept dims, in the same pass */
        IrShape sr = {0};
        for (int i = 0; i < k->space.rank; i++)
            if ((k->side_axes >> i) & 1)
                sr.dims[sr.rank++] = k->space.dims[i];
        b.len = 0;
        if (sr.rank == 1)
            ir_dim_str(f, sr.dims[0], &b);
        else
            ir_shape_str(f, &sr, &b);
        fprintf(out, " and rows of %s in the same pass", b.data);
    }
    buf_free(&b);
}

void fuse_print_text(FILE *out, Plan **plans, int nplans)
{
    for (int pi = 0; pi < nplans; pi++) {
        const Plan *p = plans[pi];
        fprintf(out, "fn %s: %d kernel%s\n", p->fn->name, p->nkernels, p->nkernels == 1 ? "" : "s");
        for (int i = 0; i < p->nkernels; i++) {
            const Kernel *k = &p->kernels[i];
            fprintf(out, "  kernel %s (", k->name);
            describe_kind(out, p->fn, k);
            fprintf(out, ") line %d", loc_line(k->loc));
            if (k->loc.file >= 0 && k->loc.file != p->fn->loc.file) /* inlined from an import */
                fprintf(out, " of %s", diag_file_path(k->loc.file));
            fputs(": ", out);
            text_list(out, p->fn, k->values, k->nvalues, 1);
            fputs("  reads ", out);
            text_list(out, p->fn, k->inputs, k->ninputs, 0);
            fputs("  writes ", out);
            text_outputs(out, p->fn, k);
            fprintf(out, "  ~%d regs", k->est_registers);
            if (k->combine)
                fprintf(out, "  combine: %s", k->combine);
            if (k->combine_why)
                fprintf(out, " (%s)", k->combine_why);
            fputc('\n', out);
        }
        for (int i = 0; i < p->nkernels; i++)
            text_colp(out, p, i);
        for (int i = 0; i < p->nrejected; i++) {
            const Rejection *r = &p->rejected[i];
            fprintf(out, "  not fused: %%%d into %%%d: %s [%s]\n", r->producer->id,
                    r->consumer->id, r->reason, r->code);
        }
    }
}

/* A dot node label: "%3 e = exp\nf32[N, M]". */
static void dot_label(FILE *out, const IrFunc *f, const IrNode *n)
{
    fprintf(out, "%%%d", n->id);
    if (node_name(f, n))
        fprintf(out, " %s", node_name(f, n));
    fprintf(out, " = ");
    if (n->op == OP_CONST)
        fprintf(out, "%g", n->cval);
    else
        for (const char *s = op_info[n->op].name; *s; s++)
            fputc(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s, out);
    Buf b = {0};
    ir_type_str(f, n->dtype, &n->shape, &b);
    fprintf(out, "\\n%s", b.data ? b.data : "");
    buf_free(&b);
}

void fuse_print_dot(FILE *out, Plan **plans, int nplans)
{
    fputs("digraph fusion {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n", out);
    for (int pi = 0; pi < nplans; pi++) {
        const Plan *p = plans[pi];
        const IrFunc *f = p->fn;
        /* the kernel that writes each node, for edges into later kernels */
        int *writer = calloc((size_t)f->nnodes + 1, sizeof(int));
        if (!writer)
            fatal_oom();
        for (int i = 0; i < f->nnodes; i++)
            writer[i] = -1;
        for (int i = 0; i < p->nkernels; i++)
            for (int o = 0; o < p->kernels[i].noutputs; o++)
                if (writer[p->kernels[i].outputs[o]->id] < 0)
                    writer[p->kernels[i].outputs[o]->id] = i;
        for (int i = 0; i < f->nparams; i++)
            fprintf(out, "  f%d_p%d [shape=ellipse, label=\"%s\"];\n", pi, i, f->params[i].name);
        for (int i = 0; i < p->nkernels; i++) {
            const Kernel *k = &p->kernels[i];
            fprintf(out, "  subgraph cluster_f%d_k%d {\n    label=\"%s (line %d)\";\n", pi, i,
                    k->name, loc_line(k->loc));
            for (int v = 0; v < k->nvalues; v++) {
                fprintf(out, "    f%d_k%d_n%d [label=\"", pi, i, k->values[v]->id);
                dot_label(out, f, k->values[v]);
                fputs("\"];\n", out);
            }
            fputs("  }\n", out);
        }
        for (int i = 0; i < p->nkernels; i++) {
            const Kernel *k = &p->kernels[i];
            for (int v = 0; v < k->nvalues; v++) {
                const IrNode *n = k->values[v];
                for (int j = 0; j < n->nin; j++) {
                    const IrNode *o = n->in[j].node;
                    int here = 0;
                    for (int w = 0; w < k->nvalues; w++)
                        here |= k->values[w] == o;
                    if (here)
                        fprintf(out, "  f%d_k%d_n%d -> f%d_k%d_n%d;\n", pi, i, o->id, pi, i, n->id);
                    else if (o->op == OP_PARAM)
                        fprintf(out, "  f%d_p%d -> f%d_k%d_n%d;\n", pi, o->param, pi, i, n->id);
                    else if (writer[o->id] >= 0)
                        fprintf(out, "  f%d_k%d_n%d -> f%d_k%d_n%d [style=bold];\n", pi,
                                writer[o->id], o->id, pi, i, n->id);
                }
            }
        }
        for (int r = 0; r < f->nresults; r++) {
            const IrNode *n = f->results[r].node;
            fprintf(out, "  f%d_r%d [shape=ellipse, label=\"%s\"];\n", pi, r, f->results[r].name);
            if (n->op == OP_PARAM)
                fprintf(out, "  f%d_p%d -> f%d_r%d;\n", pi, n->param, pi, r);
            else if (writer[n->id] >= 0)
                fprintf(out, "  f%d_k%d_n%d -> f%d_r%d;\n", pi, writer[n->id], n->id, pi, r);
        }
        free(writer);
    }
    fputs("}\n", out);
}
