/* sema.c -- names, dtypes, shapes and inlining: AST to IR (the files and
 * imports it reads: sema_import.c).
 *
 * Design note.  Sema walks each `fn` of the main file once and builds its
 * IrFunc directly; there is no typed AST in between.  A call of another
 * `fn` is inlined on the spot: the callee's body is walked again in a new
 * Frame whose symbolic dims are bound to the caller's actual dims, so the
 * IR never contains calls and fusion sees across fn boundaries.
 *
 * Values during the walk are `Val`s: an IR node, an error (already
 * reported; it silences follow-up errors), or a *weak literal* that has no
 * dtype yet.  Weak literals take the dtype of what they meet (docs/language.md:
 * "x * 2 stays f16"); two literals fold at compile time and stay weak.
 * Only when a literal meets a typed value (or must be stored) does it
 * become an OP_CONST node, and that is where its range is checked.
 *
 * Elementwise nodes get operands of their compute dtype: sema inserts
 * OP_CAST where promotion changes an operand, so later phases never apply
 * promotion rules themselves.  Comparisons compute in the promoted dtype
 * and give bool; reductions get their accumulate dtype the same way.
 *
 * Dtype rules chosen where docs/language.md leaves room (document, don't guess):
 *  - an int literal with a bool value gives i32 (i64 if it does not fit);
 *  - a float literal with an int or bool value gives f32 (torch's default
 *    dtype; NumPy 2 would give f64, which is slow on GPUs);
 *  - a literal alone (`c = 2` then `exp(c)`) defaults to i32 / f32 / bool;
 *  - a rank-0 value (scalar parameter) does not widen a tensor of the same
 *    kind: f16[N] * (eps: f32) stays f16, as in torch.  Different kinds
 *    promote normally (i32[N] * f32 scalar -> f32).  It keeps its value:
 *    in f16/bf16 arithmetic (computed in f32) it enters as f32, not
 *    rounded to the narrow dtype (coerce_operand);
 *  - arithmetic on bool values is an error (use cast or && ||);
 *  - sum/prod of bool, i32 give i64 (NumPy on Linux); mean/var/std/
 *    logsumexp of ints give f32; any/all give bool; argmax/argmin i64;
 *    a reduction of a scalar without axis= is the scalar (NumPy);
 *  - a scalar argument converts to its parameter's dtype like a C
 *    argument; a tensor argument must have the parameter's dtype exactly;
 *  - a nonzero literal that rounds to 0 in its dtype is a warning.
 *
 * Imports are loaded depth first before any fn is checked; each file once
 * (by realpath); a file met again while it is still being loaded is a
 * cycle.  Imported fns that no entry point calls are checked too, their IR
 * thrown away.  An error inside a fn is reported once (FnInfo.errored),
 * unused-name warnings once per fn (FnInfo.warned), however often it is
 * inlined.  Only main.c exits: every error here is a diag_error, and
 * sema_program returns NULL if any was reported. */
#include "sema_import.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- state ------------------------------------------------------------------ */

typedef enum { V_ERR, V_NODE, V_LIT } ValKind;
typedef enum { L_BOOL, L_INT, L_FLOAT } LitKind;

typedef struct Val {
    ValKind kind;
    IrNode *n;   /* V_NODE */
    LitKind lk;  /* V_LIT */
    int64_t i;   /* L_INT, L_BOOL */
    double f;    /* every literal, as a double */
    Loc loc;
} Val;

typedef struct DimBind {
    const char *name;
    IrDim dim;
} DimBind;

enum { ROLE_VALUE, ROLE_PARAM, ROLE_RESULT };

typedef struct Binding {
    const char *name;
    Val v;
    Loc loc;
    int role;
    int used;
    int next;    /* next binding in the same hash bucket, or -1 */
} Binding;

typedef struct ResType {
    const char *name; /* NULL for `-> TYPE` */
    DType dt;
    IrShape shape;
    Loc loc;
    int assigned;
    Val v;
} ResType;

/* One fn body being walked: the entry point or an inlined call. */
typedef struct Frame {
    FnInfo *fi;
    DimBind *dims;
    int ndims, capdims;
    Binding *vars;
    int nvars, capvars;
    int *buckets; /* name hash -> first binding index, or -1 */
    unsigned nbuckets;
    ResType *res;
    int nres;
    int stmt;     /* index of the statement being checked */
} Frame;

static Val val_err(void) { return (Val){.kind = V_ERR, .loc = LOC_NONE}; }
static Val val_node(IrNode *n, Loc loc) { return (Val){.kind = V_NODE, .n = n, .loc = loc}; }
static Val val_int(int64_t i, Loc loc) { return (Val){.kind = V_LIT, .lk = L_INT, .i = i, .f = (double)i, .loc = loc}; }
static Val val_float(double f, Loc loc) { return (Val){.kind = V_LIT, .lk = L_FLOAT, .f = f, .loc = loc}; }
static Val val_bool(int b, Loc loc) { return (Val){.kind = V_LIT, .lk = L_BOOL, .i = !!b, .f = !!b, .loc = loc}; }

static const IrShape scalar_shape = {0, {{0, 0}}};

/* ---- small helpers -------------------------------------------------------------- */

/* Types and dims as users wrote them ("f32[N, M]"), for messages; the
 * strings live in the arena like everything else of this compilation. */
static const char *type_str(Sema *S, DType dt, const IrShape *s)
{
    Buf b = {0};
    ir_type_str(S->f, dt, s, &b);
    char *r = arena_strdup(S->a, b.data ? b.data : "");
    buf_free(&b);
    return r;
}

static const char *dim_str(Sema *S, IrDim d)
{
    Buf b = {0};
    ir_dim_str(S->f, d, &b);
    char *r = arena_strdup(S->a, b.data ? b.data : "");
    buf_free(&b);
    return r;
}

static const char *val_type_str(Sema *S, Val v)
{
    if (v.kind == V_NODE)
        return type_str(S, v.n->dtype, &v.n->shape);
    return v.lk == L_BOOL ? "a bool literal" : v.lk == L_INT ? "an integer literal" : "a float literal";
}

static const char *lit_str(Sema *S, Val v)
{
    if (v.lk == L_BOOL)
        return v.i ? "true" : "false";
    if (v.lk == L_INT)
        return arena_printf(S->a, "%lld", (long long)v.i);
    return arena_printf(S->a, "%g", v.f);
}

/* Edit distance between two short names (insert, delete, substitute),
 * one row at a time; names longer than 64 bytes never match. */
static int levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

/* Keeps the closest candidate seen so far, for "did you mean" notes. */
typedef struct Suggest {
    const char *want, *best;
    int dist;
} Suggest;

static void suggest_try(Suggest *s, const char *cand)
{
    if (!cand || strcmp(cand, s->want) == 0)
        return;
    int d = levenshtein(s->want, cand);
    int limit = (int)strlen(s->want) / 3 + 1;
    if (d <= limit && (!s->best || d < s->dist)) {
        s->best = cand;
        s->dist = d;
    }
}

/* ---- literals and dtypes ---------------------------------------------------------
 * Promotion: bool < integers < floats, the wider wins, f16 + bf16 -> f32
 * (dtype_promote); weak literals and rank-0 values as in the note above. */

/* bool, integer or float: promotion between kinds always goes up. */
static int kind_of(DType t) { return t == DT_BOOL ? 0 : dtype_is_int(t) ? 1 : 2; }

typedef struct Promo {
    int any;     /* a typed operand was seen */
    DType dt;
    int tensor;  /* the dtype comes from an operand of rank > 0 */
} Promo;

static void promo_node(Promo *p, const IrNode *n)
{
    int t = n->shape.rank > 0;
    if (!p->any) {
        *p = (Promo){1, n->dtype, t};
        return;
    }
    if (kind_of(p->dt) == kind_of(n->dtype) && p->tensor != t) {
        if (t)
            p->dt = n->dtype; /* the tensor's dtype wins over a scalar of its kind */
        p->tensor = 1;
        return;
    }
    p->dt = dtype_promote(p->dt, n->dtype);
    p->tensor |= t;
}

/* The dtype of a typed value of dtype `strong` combined with a literal. */
static DType weak_dtype(Val lit, DType strong)
{
    switch (lit.lk) {
    case L_BOOL: return strong;
    case L_INT:
        if (strong == DT_BOOL)
            return lit.i >= INT32_MIN && lit.i <= INT32_MAX ? DT_I32 : DT_I64;
        return strong;
    case L_FLOAT: return dtype_is_float(strong) ? strong : DT_F32;
    }
    unreachable();
}

/* The dtype a literal gets alone. */
static DType default_dtype(Val lit)
{
    if (lit.lk == L_BOOL)
        return DT_BOOL;
    if (lit.lk == L_FLOAT)
        return DT_F32;
    return lit.i >= INT32_MIN && lit.i <= INT32_MAX ? DT_I32 : DT_I64;
}

/* The compute dtype of several operands (errors are skipped). */
static DType promote_vals(Val *v, int n)
{
    Promo p = {0, DT_BOOL, 0};
    for (int i = 0; i < n; i++)
        if (v[i].kind == V_NODE)
            promo_node(&p, v[i].n);
    DType t = p.dt;
    int have = p.any;
    for (int i = 0; i < n; i++) {
        if (v[i].kind != V_LIT)
            continue;
        if (!have) {
            t = default_dtype(v[i]);
            have = 1;
        } else if (p.any) {
            t = weak_dtype(v[i], t);
        } else {
            t = dtype_promote(t, default_dtype(v[i]));
        }
    }
    return t;
}

/* A literal as an OP_CONST of dtype t.  `explicit` (cast, defaults) lets a
 * float become an integer; implicit conversions may not.  The range check
 * is the rule "a literal out of range for the dtype it takes is an error". */
static IrNode *lit_const(Sema *S, Val v, DType t, int explicit)
{
    double x = v.f;
    int64_t iv = v.i;
    if (t == DT_BOOL && v.lk != L_BOOL && !explicit) {
        diag_error(v.loc, "%s cannot be used as bool", lit_str(S, v));
        diag_note(LOC_NONE, "use true or false, or compare: x != 0");
        return NULL;
    }
    if (dtype_is_int(t) && v.lk == L_FLOAT) {
        if (!explicit) {
            diag_error(v.loc, "float literal %s cannot become %s without a cast", lit_str(S, v), dtype_name(t));
            diag_note(LOC_NONE, "write an integer, or convert with cast(..., %s)", dtype_name(t));
            return NULL;
        }
        if (!(fabs(x) < 9.2e18)) {
            diag_error(v.loc, "%s is out of range for %s", lit_str(S, v), dtype_name(t));
            return NULL;
        }
        iv = (int64_t)x;
    }
    if (t == DT_I32 && (iv < INT32_MIN || iv > INT32_MAX)) {
        diag_error(v.loc, "%s is out of range for i32 (-2147483648 to 2147483647)",
                   v.lk == L_INT ? lit_str(S, v) : arena_printf(S->a, "%lld", (long long)iv));
        diag_note(LOC_NONE, "use an i64 value, or a smaller constant");
        return NULL;
    }
    IrNode *n = ir_node_new(S->f, OP_CONST, t, &scalar_shape, v.loc);
    if (dtype_is_float(t)) {
        double r = round_to_dtype(x, t);
        if (isinf(r) && !isinf(x)) {
            diag_error(v.loc, "%s is out of range for %s (largest finite value %g)", lit_str(S, v),
                       dtype_name(t), t == DT_F16 ? 65504.0 : t == DT_BF16 ? 3.3895313892515355e38 : 3.4028234663852886e38);
            return NULL;
        }
        if (r == 0 && x != 0) /* eps-like constants that vanish in f16 are a classic bug */
            diag_warning(v.loc, "%s rounds to 0 in %s (its smallest positive value is %g)", lit_str(S, v),
                         dtype_name(t), t == DT_F16 ? ldexp(1, -24) : t == DT_BF16 ? ldexp(1, -133) : ldexp(1, -149));
        n->cval = r;
        n->ival = 0;
    } else if (t == DT_BOOL) {
        n->ival = x != 0;
        n->cval = (double)n->ival;
    } else {
        n->ival = iv;
        n->cval = (double)iv;
    }
    return n;
}

/* v converted to dtype t: literals become constants, nodes get a cast. */
static IrNode *coerce(Sema *S, Val v, DType t)
{
    if (v.kind == V_LIT)
        return lit_const(S, v, t, 0);
    if (v.kind != V_NODE)
        return NULL;
    if (v.n->dtype == t)
        return v.n;
    IrNode *c = ir_node_new(S->f, OP_CAST, t, &v.n->shape, v.loc);
    ir_add_operand(c, v.n);
    return c;
}

/* An operand of an elementwise node whose compute dtype is t.  f16 and bf16
 * are computed in f32, so a rank-0 value of another dtype (a scalar param, a
 * full reduction) enters that arithmetic as f32 and is never rounded to the
 * narrow dtype: for x: bf16[N] and a: f32, x * a uses a as it is and only
 * the result is rounded (x = 1000, a = 1.003 gives 1004, not 1000).  Literals
 * keep taking t (weak: they are constants of the tensor's dtype). */
static IrNode *coerce_operand(Sema *S, Val v, DType t)
{
    if ((t == DT_F16 || t == DT_BF16) && v.kind == V_NODE && v.n->shape.rank == 0 && v.n->dtype != t)
        return coerce(S, v, DT_F32);
    return coerce(S, v, t);
}

/* ---- broadcasting ----------------------------------------------------------------
 * NumPy rules: shapes align from the right; a static 1 stretches; the same
 * symbol or the same static size match; anything else is an error that
 * names both types and the two dims. */

static const IrShape *val_shape(Val v) { return v.kind == V_NODE ? &v.n->shape : &scalar_shape; }
static DType val_dtype(Val v) { return v.kind == V_NODE ? v.n->dtype : default_dtype(v); }

static int is_reduction(Val v) { return v.kind == V_NODE && op_info[v.n->op].cls == OPC_REDUCE; }

static int broadcast2(const IrShape *a, const IrShape *b, IrShape *out, int *bad_a, int *bad_b)
{
    int R = a->rank > b->rank ? a->rank : b->rank;
    out->rank = R;
    for (int d = R - 1; d >= 0; d--) {
        int ia = d - (R - a->rank), ib = d - (R - b->rank);
        IrDim da = ia >= 0 ? a->dims[ia] : (IrDim){1, -1};
        IrDim db = ib >= 0 ? b->dims[ib] : (IrDim){1, -1};
        if (ia < 0)
            out->dims[d] = db;
        else if (ib < 0)
            out->dims[d] = da;
        else if (ir_dim_eq(da, db))
            out->dims[d] = da.sym >= 0 ? da : db;
        else if (ir_dim_is_one(da))
            out->dims[d] = db;
        else if (ir_dim_is_one(db))
            out->dims[d] = da;
        else {
            *bad_a = ia;
            *bad_b = ib;
            return 0;
        }
    }
    return 1;
}

/* The shape of an elementwise op over vals; reports and returns 0 on a
 * mismatch.  The caret goes under the operand that does not fit (the
 * reduction or the lower-rank one), else under the whole expression. */
static int broadcast_vals(Sema *S, Val *v, int n, Loc whole, IrShape *out)
{
    IrShape cur = *val_shape(v[0]);
    Val curv = v[0];
    for (int i = 1; i < n; i++) {
        int ba = 0, bb = 0;
        IrShape next;
        const IrShape *s = val_shape(v[i]);
        if (broadcast2(&cur, s, &next, &ba, &bb)) {
            cur = next;
            if (s->rank >= cur.rank)
                curv = v[i];
            continue;
        }
        int red_a = is_reduction(curv) && n == 2, red_b = is_reduction(v[i]);
        Loc at = whole;
        if (red_b || s->rank < cur.rank)
            at = v[i].loc;
        else if (red_a || cur.rank < s->rank)
            at = curv.loc;
        diag_error(at, "cannot broadcast %s with %s: dims %s and %s differ",
                   type_str(S, val_dtype(curv), &cur), type_str(S, val_dtype(v[i]), s),
                   dim_str(S, cur.dims[ba]), dim_str(S, s->dims[bb]));
        if (red_a || red_b || s->rank != cur.rank)
            diag_note(LOC_NONE, "keep the reduced axis with keepdims=true, or use unsqueeze(..., 1)");
        else
            diag_note(LOC_NONE, "dims of the same position must be equal, or one of them 1");
        IrDim da = cur.dims[ba], db = s->dims[bb];
        if ((da.size < 0) != (db.size < 0)) { /* a symbol against a static size */
            IrDim sym = da.size < 0 ? da : db, st = da.size < 0 ? db : da;
            diag_note(LOC_NONE, "%s is only known at run time; to specialise it, compile with -D %s=%lld",
                      dim_str(S, sym), dim_str(S, sym), (long long)st.size);
        }
        return 0;
    }
    *out = cur;
    return 1;
}

/* ---- frames and names -------------------------------------------------------------
 * Names are single-assignment; using one before its definition or
 * reassigning it is an error; value names and fn names live apart. */

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Names of one frame hash into buckets sized for the fn's body, so long
 * programs stay linear. */
static void frame_init(Sema *S, Frame *fr, FnInfo *fi)
{
    unsigned want = (unsigned)(fi->fn->nbody + fi->fn->nparams + fi->fn->nresults) * 2u, n = 16;
    while (n < want && n < (1u << 20))
        n <<= 1;
    fr->fi = fi;
    fr->nbuckets = n;
    fr->buckets = ARENA_ARRAY(S->a, int, n);
    for (unsigned i = 0; i < n; i++)
        fr->buckets[i] = -1;
}

static Binding *lookup(Frame *fr, const char *name)
{
    for (int i = fr->buckets[name_hash(name) & (fr->nbuckets - 1)]; i >= 0; i = fr->vars[i].next)
        if (strcmp(fr->vars[i].name, name) == 0)
            return &fr->vars[i];
    return NULL;
}

static void add_binding(Sema *S, Frame *fr, Binding b)
{
    unsigned h = name_hash(b.name) & (fr->nbuckets - 1);
    b.next = fr->buckets[h];
    fr->buckets[h] = fr->nvars;
    ARENA_PUSH(S->a, fr->vars, fr->nvars, fr->capvars, b);
}

static ResType *find_result(Frame *fr, const char *name)
{
    for (int i = 0; i < fr->nres; i++)
        if (fr->res[i].name && strcmp(fr->res[i].name, name) == 0)
            return &fr->res[i];
    return NULL;
}

/* The value stored for result r: its dtype and shape must be the declared
 * ones (a weak literal takes the declared dtype when it is a scalar). */
static IrNode *check_result(Sema *S, ResType *r, Val v)
{
    const char *what = r->name ? arena_printf(S->a, "result '%s'", r->name) : "the result";
    const char *decl = type_str(S, r->dt, &r->shape);
    if (v.kind == V_ERR)
        return NULL;
    if (v.kind == V_LIT) {
        if (r->shape.rank != 0) {
            diag_error(v.loc, "%s is declared %s, but this value is a scalar literal", what, decl);
            diag_note(r->loc, "declared here");
            return NULL;
        }
        return lit_const(S, v, r->dt, 0);
    }
    if (v.n->dtype != r->dt) {
        diag_error(v.loc, "%s is declared %s, but this value is %s", what, decl, val_type_str(S, v));
        diag_note(LOC_NONE, "convert it with cast(..., %s)", dtype_name(r->dt));
        return NULL;
    }
    if (!ir_shape_eq(&v.n->shape, &r->shape)) {
        diag_error(v.loc, "%s is declared %s, but this value has shape %s", what, decl, val_type_str(S, v));
        diag_note(r->loc, "declared here");
        return NULL;
    }
    return v.n;
}

/* name = value.  docs/language.md: "Names are single-assignment; reassigning
 * ... is an error"; a parameter cannot be assigned either.  A named
 * result is type-checked here, where its value is known. */
static void bind(Sema *S, Frame *fr, const char *name, Loc loc, Val v)
{
    Binding *old = lookup(fr, name);
    if (old) {
        diag_error(loc, "'%s' is already defined; names can be assigned only once", name);
        diag_note(old->loc, old->role == ROLE_PARAM ? "'%s' is a parameter of this fn" : "first assigned here", name);
        return;
    }
    ResType *r = find_result(fr, name);
    int role = ROLE_VALUE;
    if (r) {
        role = ROLE_RESULT;
        IrNode *n = check_result(S, r, v);
        r->assigned = 1;
        r->v = n ? val_node(n, v.loc) : val_err();
        if (n)
            v = val_node(n, v.loc);
    }
    if (v.kind == V_NODE && !v.n->name)
        v.n->name = name;
    Binding b = {name, v, loc, role, 0, -1};
    add_binding(S, fr, b);
}

/* A name is used: report unknown names with a "did you mean" and names
 * that are assigned only later in the body. */
static Val use_name(Sema *S, Frame *fr, const char *name, Loc loc)
{
    Binding *b = lookup(fr, name);
    if (b) {
        b->used = 1;
        Val v = b->v;
        if (v.kind != V_ERR)
            v.loc = loc;
        return v;
    }
    AstFn *fn = fr->fi->fn;
    for (int s = fr->stmt; s < fn->nbody; s++)
        for (int k = 0; k < fn->body[s].nnames; k++)
            if (strcmp(fn->body[s].names[k], name) == 0) {
                diag_error(loc, "'%s' is used before it is defined", name);
                diag_note(fn->body[s].name_locs[k], "'%s' is defined here", name);
                return val_err();
            }
    diag_error(loc, "unknown name '%s'", name);
    Suggest sg = {name, NULL, 0};
    for (int i = 0; i < fr->nvars; i++)
        suggest_try(&sg, fr->vars[i].name);
    DType dt;
    if (dtype_from_name(name, &dt))
        diag_note(LOC_NONE, "a dtype is only a value as the second argument of cast(x, %s)", name);
    else if (sema_find_fn(S, name) || op_builtin_name(name))
        diag_note(LOC_NONE, "'%s' is a function; call it as %s(...)", name, name);
    else if (sg.best)
        diag_note(LOC_NONE, "did you mean '%s'?", sg.best);
    return val_err();
}

/* ---- types of parameters and results ---------------------------------------------------
 * TYPE is a scalar dtype or dtype[d0, ...] with rank 1 to 8; a dim is a
 * symbol (bound at call time, or static with -D NAME=SIZE) or a literal. */

static IrDim *find_dim(Frame *fr, const char *name)
{
    for (int i = 0; i < fr->ndims; i++)
        if (strcmp(fr->dims[i].name, name) == 0)
            return &fr->dims[i].dim;
    return NULL;
}

static int check_rank(const AstType *t)
{
    if (!t->is_tensor)
        return 1;
    if (t->rank > IR_MAX_RANK) {
        diag_error(t->loc, "a tensor has at most %d dims, this type has %d", IR_MAX_RANK, t->rank);
        return 0;
    }
    if (t->rank < 1) {
        diag_error(t->loc, "a tensor type needs at least one dim");
        diag_note(LOC_NONE, "write the dtype alone for a scalar");
        return 0;
    }
    return 1;
}

/* Entry points: each new symbol becomes an IrFunc sym (static with -D). */
static IrDim entry_dim(Sema *S, Frame *fr, const AstDim *d)
{
    if (!d->name)
        return (IrDim){d->size, -1};
    IrDim *have = find_dim(fr, d->name);
    if (have)
        return *have;
    int k = ir_sym_intern(S->f, d->name);
    IrDim nd = {-1, k};
    for (int i = 0; i < S->opt->ndefines; i++)
        if (strcmp(S->opt->defines[i].name, d->name) == 0) {
            S->define_used[i] = 1;
            nd.size = S->opt->defines[i].size;
            S->f->sym_static[k] = nd.size;
        }
    DimBind db = {d->name, nd};
    ARENA_PUSH(S->a, fr->dims, fr->ndims, fr->capdims, db);
    return nd;
}

static int entry_shape(Sema *S, Frame *fr, const AstType *t, IrShape *out)
{
    *out = scalar_shape;
    if (!check_rank(t))
        return 0;
    if (!t->is_tensor)
        return 1;
    out->rank = t->rank;
    for (int i = 0; i < t->rank; i++)
        out->dims[i] = entry_dim(S, fr, &t->dims[i]);
    return 1;
}

/* The value of a default or attribute argument: a literal, maybe negated. */
static int const_literal(const AstExpr *e, Val *out)
{
    if (e->kind == AST_NUM && !e->overflow) {
        *out = e->is_int ? val_int(e->ival, e->loc) : val_float(e->fval, e->loc);
        return 1;
    }
    if (e->kind == AST_BOOL) {
        *out = val_bool(e->bval, e->loc);
        return 1;
    }
    if (e->kind == AST_UNARY && e->op == OP_NEG && e->lhs->kind == AST_NUM && !e->lhs->overflow) {
        *out = e->lhs->is_int ? val_int(-e->lhs->ival, e->loc) : val_float(-e->lhs->fval, e->loc);
        return 1;
    }
    return 0;
}

/* ---- expressions --------------------------------------------------------------------- */

static Val eval(Sema *S, Frame *fr, const AstExpr *e);
static int call_fn(Sema *S, Frame *fr, const AstExpr *e, FnInfo *fi, Val *out, int nwant);

static int is_bool_val(Val v) { return (v.kind == V_LIT && v.lk == L_BOOL) || (v.kind == V_NODE && v.n->dtype == DT_BOOL); }

static int check_logical(Sema *S, Val v, const char *op)
{
    if (v.kind == V_ERR || is_bool_val(v))
        return 1;
    diag_error(v.loc, "operand of '%s' must be bool, got %s", op, val_type_str(S, v));
    diag_note(LOC_NONE, "compare with 0 to get a bool: (x != 0)");
    return 0;
}

static int is_arith(int op)
{
    return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV || op == OP_MOD || op == OP_POW ||
           op == OP_NEG || op == OP_ABS || op == OP_RELU || op == OP_FLOOR || op == OP_CEIL ||
           op == OP_ROUND || op == OP_TRUNC || op == OP_SIGN || op == OP_SQUARE || op == OP_FMA;
}

/* Two weak literals: folded now, the result stays weak.  Integers follow
 * C (division truncates, by 0 is an error); overflow is an error. */
/* docs/language.md: "int / int is an integer division (C semantics) and an
 * error when the divisor is the literal 0". */
static Val fold_literals(Sema *S, int op, Val a, Val b, Loc loc)
{
    if (op == OP_AND || op == OP_OR) {
        int ok_a = check_logical(S, a, op_info[op].src), ok_b = check_logical(S, b, op_info[op].src);
        if (!ok_a || !ok_b) /* both checked: each operand gets its own error */
            return val_err();
        return val_bool(op == OP_AND ? a.i && b.i : a.i || b.i, loc);
    }
    if (op_info[op].flags & OPF_BOOL_RESULT) {
        int r;
        int ints = a.lk != L_FLOAT && b.lk != L_FLOAT;
        switch (op) {
        case OP_EQ: r = ints ? a.i == b.i : a.f == b.f; break;
        case OP_NE: r = ints ? a.i != b.i : a.f != b.f; break;
        case OP_LT: r = ints ? a.i < b.i : a.f < b.f; break;
        case OP_LE: r = ints ? a.i <= b.i : a.f <= b.f; break;
        case OP_GT: r = ints ? a.i > b.i : a.f > b.f; break;
        case OP_GE: r = ints ? a.i >= b.i : a.f >= b.f; break;
        default: unreachable();
        }
        return val_bool(r, loc);
    }
    if (a.lk == L_BOOL || b.lk == L_BOOL) {
        diag_error(loc, "arithmetic on bool values");
        diag_note(LOC_NONE, "use && and || on bools, or convert with cast(x, i32)");
        return val_err();
    }
    if (a.lk == L_INT && b.lk == L_INT) {
        int64_t r = 0;
        int ovf = 0;
        switch (op) {
        case OP_ADD: ovf = __builtin_add_overflow(a.i, b.i, &r); break;
        case OP_SUB: ovf = __builtin_sub_overflow(a.i, b.i, &r); break;
        case OP_MUL: ovf = __builtin_mul_overflow(a.i, b.i, &r); break;
        case OP_DIV:
        case OP_MOD:
            if (b.i == 0) {
                diag_error(b.loc, "integer %s by zero", op == OP_DIV ? "division" : "remainder");
                return val_err();
            }
            if (a.i == INT64_MIN && b.i == -1)
                ovf = 1;
            else
                r = op == OP_DIV ? a.i / b.i : a.i % b.i;
            break;
        case OP_POW:
            if (b.i < 0) {
                diag_error(b.loc, "an integer to a negative integer power is not an integer");
                diag_note(LOC_NONE, "write the base as a float: %lld.0", (long long)a.i);
                return val_err();
            }
            r = 1;
            for (int64_t k = 0; k < b.i && !ovf; k++) {
                ovf = __builtin_mul_overflow(r, a.i, &r);
                if (r == 0 || r == 1)
                    break;
            }
            if (!ovf && a.i == -1)
                r = (b.i & 1) ? -1 : 1;
            break;
        default: unreachable();
        }
        if (ovf) {
            diag_error(loc, "integer overflow in a constant expression");
            return val_err();
        }
        return val_int(r, loc);
    }
    /* floats: what the interpreter and constant folding compute (ops.c) */
    const double args[2] = {a.f, b.f};
    double r;
    if (op_eval_scalar(op, DT_F64, DT_F64, args, &r) != OPEVAL_OK)
        unreachable();
    return val_float(r, loc);
}

/* expr OP expr: promotion, broadcasting, and the node. */
static Val binary(Sema *S, int op, Val a, Val b, Loc loc)
{
    if (a.kind == V_ERR || b.kind == V_ERR)
        return val_err();
    if (a.kind == V_LIT && b.kind == V_LIT)
        return fold_literals(S, op, a, b, loc);
    if (op == OP_AND || op == OP_OR) {
        int ok_a = check_logical(S, a, op_info[op].src), ok_b = check_logical(S, b, op_info[op].src);
        if (!ok_a || !ok_b) /* both checked: each operand gets its own error */
            return val_err();
    }
    Val vs[2] = {a, b};
    DType t = promote_vals(vs, 2);
    if (is_arith(op) && t == DT_BOOL) {
        diag_error(loc, "arithmetic on bool values");
        diag_note(LOC_NONE, "use && and || on bools, or convert with cast(x, i32)");
        return val_err();
    }
    /* int / int is C division; a literal 0 divisor is certainly a bug */
    if ((op == OP_DIV || op == OP_MOD) && !dtype_is_float(t) && b.kind == V_LIT && b.f == 0) {
        diag_error(b.loc, "integer %s by zero", op == OP_DIV ? "division" : "remainder");
        diag_note(LOC_NONE, "integer / integer truncates like C; write 0.0 or cast to a float for IEEE division");
        return val_err();
    }
    if ((op_info[op].flags & OPF_FLOAT_ONLY) && !dtype_is_float(t))
        t = DT_F32;
    IrShape shape;
    if (!broadcast_vals(S, vs, 2, loc, &shape))
        return val_err();
    IrNode *na = coerce_operand(S, a, t), *nb = coerce_operand(S, b, t);
    if (!na || !nb)
        return val_err();
    DType rt = (op_info[op].flags & OPF_BOOL_RESULT) ? DT_BOOL : t;
    IrNode *n = ir_node_new(S->f, (OpKind)op, rt, &shape, loc);
    ir_add_operand(n, na);
    ir_add_operand(n, nb);
    return val_node(n, loc);
}

/* Unary -x, !x and the one-operand builtins. */
static Val unary(Sema *S, int op, Val v, Loc loc)
{
    if (v.kind == V_ERR)
        return val_err();
    if (op == OP_NOT && !check_logical(S, v, "!"))
        return val_err();
    if (v.kind == V_LIT && op == OP_NOT)
        return val_bool(!v.i, loc);
    if (v.kind == V_LIT && op == OP_NEG) {
        if (v.lk == L_BOOL) {
            diag_error(loc, "arithmetic on bool values");
            diag_note(LOC_NONE, "use !x to negate a bool");
            return val_err();
        }
        if (v.lk == L_INT) {
            if (v.i == INT64_MIN) {
                diag_error(loc, "integer overflow in a constant expression");
                return val_err();
            }
            return val_int(-v.i, loc);
        }
        return val_float(-v.f, loc);
    }
    DType t = v.kind == V_NODE ? v.n->dtype : default_dtype(v);
    if (is_arith(op) && t == DT_BOOL) {
        diag_error(loc, "%s of a bool value", op == OP_NEG ? "negation" : op_info[op].src);
        diag_note(LOC_NONE, "convert it first with cast(x, i32), or use !x for a bool");
        return val_err();
    }
    if ((op_info[op].flags & OPF_FLOAT_ONLY) && !dtype_is_float(t))
        t = DT_F32;
    IrNode *x = coerce(S, v, t);
    if (!x)
        return val_err();
    DType rt = (op_info[op].flags & OPF_BOOL_RESULT) ? DT_BOOL : t;
    IrNode *n = ir_node_new(S->f, (OpKind)op, rt, &x->shape, loc);
    ir_add_operand(n, x);
    return val_node(n, loc);
}

/* ---- builtins ---------------------------------------------------------------------------
 * Every builtin of docs/language.md: elementwise ops from ops.def (looked up by
 * their source name), cast, unsqueeze, and the reductions. */

static const char *const reduce_names[] = {"sum", "prod", "max", "min", "mean", "any", "all",
                                           "argmax", "argmin", "var", "std", "logsumexp"};

static int find_op(const char *name, OpClass want_reduce)
{
    for (int op = 0; op < OP_COUNT; op++)
        if (op_is_named(op) && strcmp(op_info[op].src, name) == 0 &&
            ((op_info[op].cls == OPC_REDUCE) == (want_reduce == OPC_REDUCE)))
            return op;
    return -1;
}

static void arity_error(const AstExpr *e, const char *want, int plural)
{
    diag_error(e->loc, "%s takes %s argument%s, got %d", e->name, want, plural ? "s" : "", e->nargs);
}

static int no_kwargs(const AstExpr *e)
{
    if (e->nkwargs == 0)
        return 1;
    diag_error(e->kwargs[0].name_loc, "%s takes no keyword arguments", e->name);
    return 0;
}

/* A dtype argument: cast(x, f16).  The parser may give AST_DTYPE or a name. */
static int dtype_arg(const AstExpr *e, DType *out)
{
    if (e->kind == AST_DTYPE) {
        *out = e->dtype;
        return 1;
    }
    return e->kind == AST_NAME && dtype_from_name(e->name, out);
}

/* cast(x, DTYPE) */
/* Casts are explicit conversions: a float literal may become an int
 * (truncating, like C) and a same-dtype cast is no node at all. */
static Val builtin_cast(Sema *S, Frame *fr, const AstExpr *e)
{
    if (!no_kwargs(e))
        return val_err();
    if (e->nargs != 2) {
        arity_error(e, "2", 1);
        return val_err();
    }
    DType t;
    if (!dtype_arg(e->args[1], &t)) {
        diag_error(e->args[1]->loc, "the second argument of cast must be a dtype, as in cast(x, f16)");
        return val_err();
    }
    Val v = eval(S, fr, e->args[0]);
    if (v.kind == V_ERR)
        return v;
    IrNode *n;
    if (v.kind == V_LIT) {
        n = lit_const(S, v, t, 1);
    } else if (v.n->dtype == t) {
        return val_node(v.n, e->loc);
    } else {
        n = ir_node_new(S->f, OP_CAST, t, &v.n->shape, e->loc);
        ir_add_operand(n, v.n);
    }
    return n ? val_node(n, e->loc) : val_err();
}

/* An axis: an integer literal, maybe negative.  *ax gets it normalised to
 * 0..rank-1 (rank+1 for unsqueeze's insertion point). */
static int axis_value(const AstExpr *e, int rank, int *ax)
{
    Val v;
    if (!const_literal(e, &v) || v.lk != L_INT) {
        diag_error(e->loc, "an axis must be an integer literal");
        return 0;
    }
    if (v.i < -rank || v.i >= rank) {
        diag_error(e->loc, "axis %lld is out of range for a tensor of rank %d", (long long)v.i, rank);
        if (rank > 0)
            diag_note(LOC_NONE, "valid axes are %d to %d", -rank, rank - 1);
        return 0;
    }
    *ax = (int)(v.i < 0 ? v.i + rank : v.i);
    return 1;
}

/* unsqueeze(x, axis): a size-1 axis inserted at `axis` of the result. */
static Val builtin_unsqueeze(Sema *S, Frame *fr, const AstExpr *e)
{
    const AstExpr *axis = e->nargs == 2 ? e->args[1] : NULL;
    for (int k = 0; k < e->nkwargs; k++) {
        if (strcmp(e->kwargs[k].name, "axis") != 0 || axis) {
            diag_error(e->kwargs[k].name_loc, "unexpected keyword argument '%s' for unsqueeze", e->kwargs[k].name);
            return val_err();
        }
        axis = e->kwargs[k].value;
    }
    if (e->nargs < 1 || e->nargs > 2 || !axis) {
        diag_error(e->loc, "unsqueeze takes 2 arguments, got %d", e->nargs + e->nkwargs);
        diag_note(LOC_NONE, "write unsqueeze(x, axis)");
        return val_err();
    }
    Val v = eval(S, fr, e->args[0]);
    if (v.kind == V_ERR)
        return v;
    IrNode *x = v.kind == V_LIT ? coerce(S, v, default_dtype(v)) : v.n;
    if (!x)
        return val_err();
    int r = x->shape.rank, ax;
    if (!axis_value(axis, r + 1, &ax))
        return val_err();
    if (r + 1 > IR_MAX_RANK) {
        diag_error(e->loc, "unsqueeze would give rank %d; a tensor has at most %d dims", r + 1, IR_MAX_RANK);
        return val_err();
    }
    IrShape s;
    s.rank = r + 1;
    for (int d = 0, k = 0; d < r + 1; d++)
        s.dims[d] = d == ax ? (IrDim){1, -1} : x->shape.dims[k++];
    IrNode *n = ir_node_new(S->f, OP_UNSQUEEZE, x->dtype, &s, e->loc);
    n->axis = ax;
    ir_add_operand(n, x);
    return val_node(n, e->loc);
}

/* A reduction of a scalar over all of its (zero) axes, as NumPy does it:
 * sum/prod/max/min/mean/logsumexp give the value in the accumulate dtype,
 * any/all compare it with 0, argmax/argmin give 0, and var/std give x - x
 * (0, or NaN for an infinite or NaN value). */
static Val reduce_scalar(Sema *S, int op, Val v, Loc loc)
{
    DType in = v.kind == V_NODE ? v.n->dtype : default_dtype(v), t = in;
    v.loc = loc;
    switch (op) {
    case OP_ARGMAX:
    case OP_ARGMIN: {
        IrNode *z = lit_const(S, val_int(0, loc), DT_I64, 0);
        return z ? val_node(z, loc) : val_err();
    }
    case OP_ANY:
    case OP_ALL:
        return in == DT_BOOL ? v : binary(S, OP_NE, v, val_int(0, loc), loc);
    case OP_SUM:
    case OP_PROD: t = dtype_is_float(in) ? in : DT_I64; break;
    case OP_RMAX:
    case OP_RMIN: break;
    default: t = dtype_is_float(in) ? in : DT_F32; break;
    }
    IrNode *x = coerce(S, v, t);
    if (!x)
        return val_err();
    if (op == OP_VAR || op == OP_STD)
        return binary(S, OP_SUB, val_node(x, loc), val_node(x, loc), loc);
    return val_node(x, loc);
}

/* sum(x, axis=1 | -1 | (0, 2), keepdims=false) and the other reductions. */
static Val builtin_reduce(Sema *S, Frame *fr, const AstExpr *e, int op)
{
    const AstExpr *axis = NULL, *keep = NULL;
    for (int k = 0; k < e->nkwargs; k++) {
        const AstKwarg *kw = &e->kwargs[k];
        const AstExpr **slot = strcmp(kw->name, "axis") == 0 ? &axis : strcmp(kw->name, "keepdims") == 0 ? &keep : NULL;
        if (!slot) {
            diag_error(kw->name_loc, "unknown keyword argument '%s' for %s", kw->name, e->name);
            Suggest sg = {kw->name, NULL, 0};
            suggest_try(&sg, "axis");
            suggest_try(&sg, "keepdims");
            diag_note(LOC_NONE, sg.best ? "did you mean '%s'?" : "%s takes axis= and keepdims=", sg.best ? sg.best : e->name);
            return val_err();
        }
        if (*slot) {
            diag_error(kw->name_loc, "keyword argument '%s' given twice", kw->name);
            return val_err();
        }
        *slot = kw->value;
    }
    if (e->nargs != 1) {
        arity_error(e, "1", 0);
        if (e->nargs == 2)
            diag_note(LOC_NONE, "pass the axis by name: %s(x, axis=...)", e->name);
        return val_err();
    }
    int keepdims = 0;
    if (keep) {
        if (keep->kind != AST_BOOL) {
            diag_error(keep->loc, "keepdims must be true or false");
            return val_err();
        }
        keepdims = keep->bval;
    }
    Val v = eval(S, fr, e->args[0]);
    if (v.kind == V_ERR)
        return v;
    if (v.kind == V_LIT || v.n->shape.rank == 0) {
        if (axis) {
            diag_error(axis->loc, "a scalar has no axes to reduce");
            diag_note(LOC_NONE, "leave out axis= (%s of a scalar is the scalar itself)", e->name);
            return val_err();
        }
        return reduce_scalar(S, op, v, e->loc);
    }
    IrNode *x = v.n;
    int rank = x->shape.rank;
    int is_arg = op == OP_ARGMAX || op == OP_ARGMIN;
    unsigned mask = 0;
    if (!axis) {
        if (is_arg && rank > 1) {
            diag_error(e->loc, "%s needs axis= for a tensor of rank %d", e->name, rank);
            diag_note(LOC_NONE, "%s takes one axis, as in %s(x, axis=-1)", e->name, e->name);
            return val_err();
        }
        mask = (1u << rank) - 1;
    } else if (axis->kind == AST_TUPLE) {
        if (is_arg) {
            diag_error(axis->loc, "%s takes one axis, not a tuple", e->name);
            return val_err();
        }
        if (axis->nargs == 0) {
            diag_error(axis->loc, "the axis tuple is empty");
            diag_note(LOC_NONE, "leave out axis= to reduce over all axes");
            return val_err();
        }
        for (int i = 0; i < axis->nargs; i++) {
            int ax;
            if (!axis_value(axis->args[i], rank, &ax))
                return val_err();
            if (mask & (1u << ax)) {
                diag_error(axis->args[i]->loc, "axis %d appears twice in the axis tuple", ax);
                return val_err();
            }
            mask |= 1u << ax;
        }
    } else {
        int ax;
        if (!axis_value(axis, rank, &ax))
            return val_err();
        mask = 1u << ax;
    }
    /* accumulate and result dtypes (see the note at the top) */
    DType in = x->dtype, rt = in;
    switch (op) {
    case OP_SUM:
    case OP_PROD:
        if (!dtype_is_float(in))
            in = rt = DT_I64;
        break;
    case OP_ANY:
    case OP_ALL: rt = DT_BOOL; break;
    case OP_ARGMAX:
    case OP_ARGMIN: rt = DT_I64; break;
    case OP_RMAX:
    case OP_RMIN: break;
    default:
        if (!dtype_is_float(in))
            in = rt = DT_F32;
        break;
    }
    x = coerce(S, val_node(x, v.loc), in);
    IrShape s = {0, {{0, 0}}};
    for (int d = 0; d < rank; d++) {
        if (!(mask & (1u << d)))
            s.dims[s.rank++] = x->shape.dims[d];
        else if (keepdims)
            s.dims[s.rank++] = (IrDim){1, -1};
    }
    IrNode *n = ir_node_new(S->f, (OpKind)op, rt, &s, e->loc);
    n->axes = (uint8_t)mask;
    n->keepdims = keepdims;
    ir_add_operand(n, x);
    return val_node(n, e->loc);
}

/* Elementwise builtins of 1 to 3 operands, where(c, a, b) included. */
static Val builtin_elementwise(Sema *S, Frame *fr, const AstExpr *e, int op)
{
    int arity = op_info[op].arity;
    if (!no_kwargs(e))
        return val_err();
    if (e->nargs != arity) {
        if (op == OP_MAX2 || op == OP_MIN2)
            arity_error(e, "1 or 2", 1);
        else
            arity_error(e, arity == 1 ? "1" : arity == 2 ? "2" : "3", arity > 1);
        return val_err();
    }
    Val v[3];
    int bad = 0;
    for (int i = 0; i < arity; i++) {
        v[i] = eval(S, fr, e->args[i]);
        bad |= v[i].kind == V_ERR;
    }
    if (bad)
        return val_err();
    if (arity == 1)
        return unary(S, op, v[0], e->loc);
    int first = 0; /* operands that take the compute dtype */
    if (op == OP_WHERE) {
        if (!is_bool_val(v[0])) {
            diag_error(v[0].loc, "the condition of where must be bool, got %s", val_type_str(S, v[0]));
            diag_note(LOC_NONE, "compare to get a bool, as in where(x > 0, x, 0)");
            return val_err();
        }
        first = 1;
    }
    DType t = promote_vals(v + first, arity - first);
    if (is_arith(op) && t == DT_BOOL) {
        diag_error(e->loc, "%s of bool values", e->name);
        diag_note(LOC_NONE, "convert them first with cast(x, i32)");
        return val_err();
    }
    if ((op_info[op].flags & OPF_FLOAT_ONLY) && !dtype_is_float(t))
        t = DT_F32;
    if (op == OP_WHERE && v[1].kind == V_LIT && v[2].kind == V_LIT && v[0].kind == V_LIT)
        return v[0].i ? v[1] : v[2];
    IrShape shape;
    if (!broadcast_vals(S, v, arity, e->loc, &shape))
        return val_err();
    IrNode *in[3];
    for (int i = 0; i < arity; i++) {
        in[i] = i < first ? coerce(S, v[i], DT_BOOL) : coerce_operand(S, v[i], t);
        if (!in[i])
            return val_err();
    }
    DType rt = (op_info[op].flags & OPF_BOOL_RESULT) ? DT_BOOL : t;
    IrNode *n = ir_node_new(S->f, (OpKind)op, rt, &shape, e->loc);
    for (int i = 0; i < arity; i++)
        ir_add_operand(n, in[i]);
    return val_node(n, e->loc);
}

/* name(args...): a fn of this program, else a builtin. */
/* docs/language.md: "a name followed by ( is a builtin or a fn of this file or
 * its imports".  A fn of the program is looked up first (fn names that
 * clash with builtins were rejected when they were registered). */
static Val call(Sema *S, Frame *fr, const AstExpr *e)
{
    FnInfo *fi = sema_find_fn(S, e->name);
    if (fi) {
        Val out[1];
        if (fi->fn->nresults != 1) {
            diag_error(e->loc, "'%s' returns %d results, so it cannot be used inside an expression", e->name,
                       fi->fn->nresults);
            diag_note(LOC_NONE, "assign them to names first: a, b = %s(...)", e->name);
            return val_err();
        }
        if (!call_fn(S, fr, e, fi, out, 1))
            return val_err();
        out[0].loc = e->loc;
        return out[0];
    }
    if (strcmp(e->name, "cast") == 0)
        return builtin_cast(S, fr, e);
    if (strcmp(e->name, "unsqueeze") == 0)
        return builtin_unsqueeze(S, fr, e);
    int red = -1;
    for (size_t i = 0; i < sizeof reduce_names / sizeof *reduce_names; i++)
        if (strcmp(e->name, reduce_names[i]) == 0)
            red = find_op(e->name, OPC_REDUCE);
    /* max/min: one tensor reduces, two operands are elementwise */
    if (red >= 0 && (red == OP_RMAX || red == OP_RMIN) && e->nargs == 2) {
        if (e->nkwargs) {
            diag_error(e->kwargs[0].name_loc, "%s of two operands is elementwise and takes no keyword arguments",
                       e->name);
            return val_err();
        }
        return builtin_elementwise(S, fr, e, red == OP_RMAX ? OP_MAX2 : OP_MIN2);
    }
    if (red >= 0 && (red == OP_RMAX || red == OP_RMIN) && e->nargs > 2) {
        arity_error(e, "1 or 2", 1);
        return val_err();
    }
    if (red >= 0)
        return builtin_reduce(S, fr, e, red);
    int op = find_op(e->name, OPC_UNARY);
    if (op >= 0)
        return builtin_elementwise(S, fr, e, op);
    diag_error(e->name_loc, "unknown function '%s'", e->name);
    Suggest sg = {e->name, NULL, 0};
    for (int i = 0; i < OP_COUNT; i++)
        if (op_is_named(i))
            suggest_try(&sg, op_info[i].src);
    suggest_try(&sg, "cast");
    for (int i = 0; i < S->nfns; i++)
        suggest_try(&sg, S->fns[i].fn->name);
    if (sg.best)
        diag_note(LOC_NONE, "did you mean '%s'?", sg.best);
    return val_err();
}

/* expr: literal | name | unary | binary | call | (tuple, only as axis=).
 * Every case returns a Val; an error Val makes its users silent. */
static Val eval(Sema *S, Frame *fr, const AstExpr *e)
{
    switch (e->kind) {
    case AST_NUM:
        if (e->overflow) {
            diag_error(e->loc, "%s literal %s is too large", e->is_int ? "integer" : "float", e->text ? e->text : "");
            if (e->is_int)
                diag_note(LOC_NONE, "integers are at most 64-bit; write it as a float literal (%s.0)",
                          e->text ? e->text : "");
            return val_err();
        }
        return e->is_int ? val_int(e->ival, e->loc) : val_float(e->fval, e->loc);
    case AST_BOOL: return val_bool(e->bval, e->loc);
    case AST_NAME: return use_name(S, fr, e->name, e->loc);
    case AST_DTYPE:
        diag_error(e->loc, "a dtype is not a value here");
        diag_note(LOC_NONE, "dtypes are written as the second argument of cast(x, %s)", dtype_name(e->dtype));
        return val_err();
    case AST_UNARY: return unary(S, e->op, eval(S, fr, e->lhs), e->loc);
    case AST_BINARY: {
        Val a = eval(S, fr, e->lhs);
        Val b = eval(S, fr, e->rhs);
        return binary(S, e->op, a, b, e->loc);
    }
    case AST_CALL: return call(S, fr, e);
    case AST_TUPLE:
        diag_error(e->loc, "a tuple is only allowed as the axis of a reduction, as in axis=(0, 2)");
        return val_err();
    }
    unreachable();
}

/* A parameter's default: a constant expression of literals (`1e-5`,
 * `-1`, `1.0 / 1024`), folded like any literal expression; it takes the
 * parameter's dtype with the usual range check.  Reports and returns 0
 * when it is anything else. */
static int default_value(Sema *S, FnInfo *fi, const AstParam *p, Val *out)
{
    if (p->type.is_tensor) {
        diag_error(p->deflt->loc, "only scalar parameters can have a default");
        return 0;
    }
    Frame empty = {0};
    frame_init(S, &empty, fi);
    empty.stmt = fi->fn->nbody; /* no "used before defined" scan */
    int before = S->f->nnodes;
    Val v = eval(S, &empty, p->deflt);
    if (v.kind == V_LIT) {
        *out = v;
        return 1;
    }
    if (v.kind == V_NODE) {
        S->f->nnodes = before; /* drop what the expression built */
        diag_error(p->deflt->loc, "a default must be a constant, as in eps: f32 = 1e-5");
    }
    return 0;
}

/* ---- fn bodies ----------------------------------------------------------------------------
 * Statements: `name = expr`, `a, b = f(...)`, `return expr` (only with
 * `-> TYPE`, and then required, last).  Named results are assigned exactly
 * once.  Unused inputs and values are warnings. */

/* Walks the statements of fr's fn in order.  Named results are checked
 * where they are assigned (bind), an unnamed one at its return. */
static void run_body(Sema *S, Frame *fr)
{
    AstFn *fn = fr->fi->fn;
    int returned = 0, errors_before = diag_error_count();
    for (int s = 0; s < fn->nbody; s++) {
        AstStmt *st = &fn->body[s];
        fr->stmt = s;
        if (returned) {
            diag_error(st->loc, "statement after return");
            diag_note(LOC_NONE, "return must be the last statement of a fn");
            break;
        }
        if (st->kind == AST_RETURN) {
            if (fn->named_results) {
                diag_error(st->loc, "return in a fn with named results");
                diag_note(LOC_NONE, "assign each named result instead, as in %s = ...", fr->res[0].name);
                continue;
            }
            returned = 1;
            Val v = eval(S, fr, st->value);
            if (fr->nres == 1) {
                IrNode *n = check_result(S, &fr->res[0], v);
                fr->res[0].v = n ? val_node(n, v.loc) : val_err();
                fr->res[0].assigned = 1;
            }
            continue;
        }
        if (st->nnames == 1) {
            bind(S, fr, st->names[0], st->name_locs[0], eval(S, fr, st->value));
            continue;
        }
        /* a, b = f(...) */
        const AstExpr *e = st->value;
        FnInfo *fi = e->kind == AST_CALL ? sema_find_fn(S, e->name) : NULL;
        Val outs[64];
        int ok = 0;
        if (!fi) {
            diag_error(e->loc, "%d names are assigned, but only a call of a fn with %d results can give them",
                       st->nnames, st->nnames);
        } else if (fi->fn->nresults != st->nnames) {
            diag_error(e->loc, "'%s' returns %d result%s, but %d names are assigned", e->name, fi->fn->nresults,
                       fi->fn->nresults == 1 ? "" : "s", st->nnames);
            diag_note(fi->fn->name_loc, "'%s' is defined here", e->name);
        } else if (st->nnames > 64) {
            diag_error(e->loc, "too many results");
        } else {
            ok = call_fn(S, fr, e, fi, outs, st->nnames);
        }
        for (int k = 0; k < st->nnames; k++)
            bind(S, fr, st->names[k], st->name_locs[k], ok ? outs[k] : val_err());
    }
    fr->stmt = fn->nbody;
    if (!fn->named_results && !returned && fr->nres == 1) {
        diag_error(fn->name_loc, "fn '%s' declares a result but has no return", fn->name);
        diag_note(LOC_NONE, "end the body with: return EXPR");
    }
    for (int r = 0; r < fr->nres; r++)
        if (fn->named_results && !fr->res[r].assigned) {
            diag_error(fr->res[r].loc, "result '%s' is never assigned", fr->res[r].name);
            diag_note(LOC_NONE, "assign it in the body: %s = ...", fr->res[r].name);
        }
    /* after an error, "never used" is mostly noise from the broken line;
     * a name starting with '_' says "unused on purpose" (as in Rust) */
    if (S->opt->warn_unused && !fr->fi->warned && diag_error_count() == errors_before) {
        for (int i = 0; i < fr->nvars; i++) {
            Binding *b = &fr->vars[i];
            if (b->used || b->role == ROLE_RESULT || b->name[0] == '_')
                continue;
            diag_warning(b->loc, "%s '%s' is never used", b->role == ROLE_PARAM ? "input" : "value", b->name);
            diag_note(LOC_NONE, "remove it, or start its name with '_' to keep it quietly");
        }
    }
    fr->fi->warned = 1;
}

/* Results `-> TYPE` or `-> (a: T, ...)` with dims resolved in fr. */
/* A result's dims must be dims of the parameters (a symbol the caller
 * cannot bind would leave the output's size unknown). */
static int resolve_results(Sema *S, Frame *fr)
{
    AstFn *fn = fr->fi->fn;
    fr->nres = fn->nresults;
    fr->res = ARENA_ARRAY(S->a, ResType, fn->nresults ? fn->nresults : 1);
    int ok = 1;
    for (int r = 0; r < fn->nresults; r++) {
        AstParam *p = &fn->results[r];
        ResType *rt = &fr->res[r];
        rt->name = fn->named_results ? p->name : NULL;
        rt->dt = p->type.dtype;
        rt->loc = p->type.loc;
        if (fn->named_results)
            rt->loc = p->loc;
        rt->v = val_err();
        if (!check_rank(&p->type)) {
            ok = 0;
            continue;
        }
        {
            rt->shape.rank = p->type.is_tensor ? p->type.rank : 0;
            for (int d = 0; d < rt->shape.rank; d++) {
                const AstDim *ad = &p->type.dims[d];
                IrDim *have = ad->name ? find_dim(fr, ad->name) : NULL;
                if (ad->name && !have) {
                    diag_error(ad->loc, "dim %s of the result of '%s' is not the dim of any parameter", ad->name,
                               fn->name);
                    diag_note(LOC_NONE, "result dims must come from the parameters' types");
                    ok = 0;
                    break;
                }
                rt->shape.dims[d] = have ? *have : (IrDim){ad->size, -1};
            }
        }
        for (int k = 0; k < r; k++)
            if (rt->name && fr->res[k].name && strcmp(rt->name, fr->res[k].name) == 0) {
                diag_error(p->loc, "result '%s' is declared twice", rt->name);
                ok = 0;
            }
        for (int k = 0; k < fn->nparams && rt->name; k++)
            if (strcmp(rt->name, fn->params[k].name) == 0) {
                diag_error(p->loc, "result '%s' has the name of a parameter", rt->name);
                diag_note(fn->params[k].loc, "the parameter is declared here");
                ok = 0;
            }
    }
    return ok;
}

/* Bind a callee dim symbol (or check a literal dim) to the caller's dim. */
static int unify_dim(Sema *S, Frame *callee, const AstDim *ad, IrDim actual, const char *pname, const AstExpr *arg)
{
    if (!ad->name) {
        if (actual.size == ad->size)
            return 1;
        diag_error(arg->loc, "argument '%s' of '%s' needs dim %lld here, got %s", pname, callee->fi->fn->name,
                   (long long)ad->size, dim_str(S, actual));
        return 0;
    }
    IrDim *have = find_dim(callee, ad->name);
    if (!have) {
        DimBind db = {ad->name, actual};
        ARENA_PUSH(S->a, callee->dims, callee->ndims, callee->capdims, db);
        return 1;
    }
    if (ir_dim_eq(*have, actual))
        return 1;
    diag_error(arg->loc, "dim %s of '%s' is %s from an earlier argument, but argument '%s' gives %s", ad->name,
               callee->fi->fn->name, dim_str(S, *have), pname, dim_str(S, actual));
    diag_note(ad->loc, "%s is used here in the parameter's type", ad->name);
    return 0;
}

/* Inline a call of fn fi: arguments are matched to parameters (positional,
 * then by keyword, then defaults), dims are unified, and the body is walked
 * in a new frame.  Returns 1 and fills out[0..nwant) on success. */
static int call_fn(Sema *S, Frame *fr, const AstExpr *e, FnInfo *fi, Val *out, int nwant)
{
    AstFn *fn = fi->fn;
    if (fi->active) {
        Buf b = {0};
        int start = 0;
        while (start < S->ncalls && S->calls[start] != fi)
            start++;
        for (int k = start; k < S->ncalls; k++)
            buf_printf(&b, "%s -> ", S->calls[k]->fn->name);
        buf_puts(&b, fn->name);
        diag_error(e->name_loc, "recursive call: %s", b.data);
        diag_note(LOC_NONE, "calls are inlined, so a fn cannot call itself, directly or through others");
        buf_free(&b);
        fi->errored = 1;
        return 0;
    }
    if (fi->errored) { /* reported already; still check the arguments */
        for (int i = 0; i < e->nargs; i++)
            eval(S, fr, e->args[i]);
        for (int k = 0; k < e->nkwargs; k++)
            eval(S, fr, e->kwargs[k].value);
        return 0;
    }
    /* match arguments to parameters */
    const AstExpr **args = ARENA_ARRAY(S->a, const AstExpr *, fn->nparams ? fn->nparams : 1);
    if (e->nargs > fn->nparams) {
        diag_error(e->loc, "'%s' takes %d argument%s, got %d", fn->name, fn->nparams, fn->nparams == 1 ? "" : "s",
                   e->nargs);
        diag_note(fn->name_loc, "'%s' is defined here", fn->name);
        return 0;
    }
    for (int i = 0; i < e->nargs; i++)
        args[i] = e->args[i];
    for (int k = 0; k < e->nkwargs; k++) {
        const AstKwarg *kw = &e->kwargs[k];
        int p = -1;
        for (int i = 0; i < fn->nparams; i++)
            if (strcmp(fn->params[i].name, kw->name) == 0)
                p = i;
        if (p < 0) {
            diag_error(kw->name_loc, "'%s' has no parameter '%s'", fn->name, kw->name);
            Suggest sg = {kw->name, NULL, 0};
            for (int i = 0; i < fn->nparams; i++)
                suggest_try(&sg, fn->params[i].name);
            if (sg.best)
                diag_note(LOC_NONE, "did you mean '%s'?", sg.best);
            return 0;
        }
        if (args[p]) {
            diag_error(kw->name_loc, "argument '%s' of '%s' is given twice", kw->name, fn->name);
            return 0;
        }
        args[p] = kw->value;
    }
    for (int i = 0; i < fn->nparams; i++)
        if (!args[i] && !fn->params[i].deflt) {
            diag_error(e->loc, "missing argument '%s' in the call of '%s'", fn->params[i].name, fn->name);
            diag_note(fn->params[i].loc, "'%s' is declared here", fn->params[i].name);
            return 0;
        }
    Frame cf = {0};
    frame_init(S, &cf, fi);
    int ok = 1;
    Val *pv = ARENA_ARRAY(S->a, Val, fn->nparams ? fn->nparams : 1);
    for (int i = 0; i < fn->nparams && ok; i++) {
        AstParam *p = &fn->params[i];
        const AstType *t = &p->type;
        if (!check_rank(t)) {
            ok = 0;
            break;
        }
        if (!args[i]) { /* the default: a constant of the parameter's dtype */
            Val d;
            if (!default_value(S, fi, p, &d)) {
                ok = 0;
                break;
            }
            IrNode *n = lit_const(S, d, t->dtype, 0);
            pv[i] = n ? val_node(n, e->loc) : val_err();
            ok = n != NULL;
            continue;
        }
        Val v = eval(S, fr, args[i]);
        if (v.kind == V_ERR) {
            ok = 0;
            break;
        }
        const IrShape *vs = val_shape(v);
        if (!t->is_tensor) {
            if (vs->rank != 0) {
                diag_error(args[i]->loc, "argument '%s' of '%s' is a scalar %s, got %s", p->name, fn->name,
                           dtype_name(t->dtype), val_type_str(S, v));
                ok = 0;
                break;
            }
            IrNode *n = coerce(S, v, t->dtype); /* scalars convert like C arguments */
            pv[i] = n ? val_node(n, args[i]->loc) : val_err();
            ok = n != NULL;
            continue;
        }
        if (vs->rank != t->rank || v.kind != V_NODE) {
            diag_error(args[i]->loc, "argument '%s' of '%s' must have rank %d, got %s", p->name, fn->name, t->rank,
                       val_type_str(S, v));
            diag_note(p->loc, "'%s' is declared here", p->name);
            ok = 0;
            break;
        }
        if (v.n->dtype != t->dtype) {
            diag_error(args[i]->loc, "argument '%s' of '%s' must be %s, got %s", p->name, fn->name,
                       dtype_name(t->dtype), val_type_str(S, v));
            diag_note(LOC_NONE, "convert it with cast(..., %s)", dtype_name(t->dtype));
            ok = 0;
            break;
        }
        for (int d = 0; d < t->rank && ok; d++)
            ok = unify_dim(S, &cf, &t->dims[d], vs->dims[d], p->name, args[i]);
        pv[i] = v;
    }
    if (!ok)
        return 0;
    if (!resolve_results(S, &cf)) {
        fi->errored = 1;
        return 0;
    }
    for (int i = 0; i < fn->nparams; i++) {
        Binding b = {fn->params[i].name, pv[i], fn->params[i].loc, ROLE_PARAM, 0, -1};
        add_binding(S, &cf, b);
    }
    int before = diag_error_count();
    fi->active = 1;
    ARENA_PUSH(S->a, S->calls, S->ncalls, S->capcalls, fi);
    run_body(S, &cf);
    S->ncalls--;
    fi->active = 0;
    if (diag_error_count() != before) {
        fi->errored = 1;
        return 0;
    }
    for (int r = 0; r < nwant && r < cf.nres; r++)
        out[r] = cf.res[r].v;
    return 1;
}

/* ---- entry points -----------------------------------------------------------------------
 * Every fn of the main file becomes an IrFunc: its parameters are OP_PARAM
 * nodes (kept even when unused), its symbols IrFunc.syms in order of first
 * appearance in the parameters then the results. */

/* @kernels(N): the fn must become at most N kernels (fusion checks it). */
static void apply_attrs(AstFn *fn, IrFunc *f)
{
    for (int i = 0; i < fn->nattrs; i++) {
        AstAttr *at = &fn->attrs[i];
        if (strcmp(at->name, "kernels") != 0) {
            diag_error(at->loc, "unknown attribute '@%s'", at->name);
            diag_note(LOC_NONE, "the known attribute is @kernels(N)");
            continue;
        }
        Val v;
        if (at->nargs != 1 || at->nkwargs || !const_literal(at->args[0], &v) || v.lk != L_INT || v.i < 1 ||
            v.i > 1000000) {
            diag_error(at->loc, "@kernels expects one positive integer, as in @kernels(1)");
            continue;
        }
        if (f->expect_kernels >= 0) {
            diag_error(at->loc, "@kernels is given twice");
            diag_note(f->expect_loc, "first given here");
            continue;
        }
        f->expect_kernels = (int)v.i;
        f->expect_loc = at->loc;
    }
}

/* A tensor whose static dims hold more bytes than an int64 counts cannot
 * be addressed by the generated code (offsets and sizes are int64): an
 * error at the first such param or value of the fn.  Symbolic dims are
 * checked when the fn is called. */
static void check_sizes(IrFunc *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        const IrNode *n = f->nodes[i];
        int64_t bytes = dtype_size(n->dtype);
        int over = 0;
        for (int d = 0; d < n->shape.rank && !over; d++)
            if (n->shape.dims[d].size > 0)
                over = __builtin_mul_overflow(bytes, n->shape.dims[d].size, &bytes);
        if (!over)
            continue;
        Buf ty = {0};
        ir_type_str(f, n->dtype, &n->shape, &ty);
        if (n->op == OP_PARAM)
            diag_error(n->loc, "param '%s' (%s) would take more than 2^63 bytes", n->name, ty.data);
        else
            diag_error(n->loc, "this value (%s) would take more than 2^63 bytes", ty.data);
        diag_note(LOC_NONE, "the generated code addresses tensors with int64 offsets; make the "
                            "dims (or the -D sizes) smaller");
        buf_free(&ty);
        return;
    }
}

/* One entry point: params become OP_PARAM nodes in order (symbols are
 * interned as they first appear), then the body is walked, then the
 * results are recorded and the function optimised.  NULL on errors. */
static IrFunc *build_entry(Sema *S, FnInfo *fi)
{
    AstFn *fn = fi->fn;
    IrFunc *f = ir_func_new(S->a, fn->name, fn->loc);
    S->f = f;
    int before = diag_error_count();
    apply_attrs(fn, f);
    Frame fr = {0};
    frame_init(S, &fr, fi);
    f->nparams = fn->nparams;
    f->params = ARENA_ARRAY(S->a, IrParam, fn->nparams ? fn->nparams : 1);
    for (int i = 0; i < fn->nparams; i++) {
        AstParam *p = &fn->params[i];
        IrParam *ip = &f->params[i];
        ip->name = p->name;
        ip->dtype = p->type.dtype;
        ip->is_tensor = p->type.is_tensor;
        ip->loc = p->loc;
        entry_shape(S, &fr, &p->type, &ip->shape);
        for (int k = 0; k < i; k++)
            if (strcmp(fn->params[k].name, p->name) == 0) {
                diag_error(p->loc, "parameter '%s' is declared twice", p->name);
                diag_note(fn->params[k].loc, "first declared here");
            }
        if (p->deflt) {
            Val d;
            if (default_value(S, fi, p, &d)) {
                IrNode *c = lit_const(S, d, ip->dtype, 0);
                if (c) {
                    ip->has_default = 1;
                    ip->deflt = c->cval;
                    f->nnodes--; /* the constant was only for checking */
                }
            }
        }
        IrNode *n = ir_node_new(f, OP_PARAM, ip->dtype, &ip->shape, p->loc);
        n->param = i;
        n->name = p->name;
        ip->node = n;
        Binding b = {p->name, val_node(n, p->loc), p->loc, ROLE_PARAM, 0, -1};
        add_binding(S, &fr, b);
    }
    resolve_results(S, &fr);
    fi->active = 1;
    ARENA_PUSH(S->a, S->calls, S->ncalls, S->capcalls, fi);
    run_body(S, &fr);
    S->ncalls--;
    fi->active = 0;
    if (diag_error_count() != before) {
        fi->errored = 1;
        return NULL;
    }
    f->nresults = fr.nres;
    f->results = ARENA_ARRAY(S->a, IrResult, fr.nres ? fr.nres : 1);
    for (int r = 0; r < fr.nres; r++) {
        IrResult *ir = &f->results[r];
        ir->name = fr.res[r].name ? fr.res[r].name : "result";
        ir->dtype = fr.res[r].dt;
        ir->shape = fr.res[r].shape;
        ir->node = fr.res[r].v.n;
        ir->loc = fr.res[r].loc;
        if (!ir->node) /* a callee failed earlier and was reported then */
            return NULL;
    }
    check_sizes(f);
    if (diag_error_count() != before)
        return NULL;
    ir_optimize(f);
    return f;
}

/* The whole program: load the main file and its imports, then build each
 * fn of the main file as an entry point (frontend.h). */
IrModule *sema_program(Arena *a, AstFile *main_file, const SemaOptions *opt)
{
    static const SemaOptions defaults = {NULL, 0, NULL, 0, 1, NULL};
    Sema S = {0};
    S.a = a;
    S.opt = opt ? opt : &defaults;
    S.mod = ARENA_NEW(a, IrModule);
    S.define_used = ARENA_ARRAY(a, int, S.opt->ndefines ? S.opt->ndefines : 1);
    int before = diag_error_count();
    const char *path = main_file->path ? main_file->path : "-";
    const char *canon = strcmp(path, "-") == 0 ? "<stdin>" : sema_canonical(a, path);
    sema_load_file(&S, main_file, strcmp(path, "-") == 0 ? "./-" : path, canon, 1);
    if (strcmp(path, "-") == 0)
        S.mod->deps[0] = path;
    if (diag_error_count() != before)
        return NULL; /* a missing import would only cause "unknown function" noise */
    for (int i = 0; i < S.nfns; i++) {
        if (!S.fns[i].is_main || S.fns[i].errored)
            continue;
        IrFunc *f = build_entry(&S, &S.fns[i]);
        if (f)
            ARENA_PUSH(a, S.mod->fns, S.mod->nfns, S.capmodfns, f);
    }
    /* imported fns that no entry point called are still checked (like a
     * header a C compiler reads), so a library's errors show up at once;
     * their IR is discarded */
    for (int i = 0; i < S.nfns; i++)
        if (!S.fns[i].is_main && !S.fns[i].errored && !S.fns[i].warned)
            build_entry(&S, &S.fns[i]);
    for (int d = 0; d < S.opt->ndefines; d++)
        if (!S.define_used || !S.define_used[d])
            diag_warning(LOC_NONE, "-D %s=%lld names no dim of any fn", S.opt->defines[d].name,
                         (long long)S.opt->defines[d].size);
    if (diag_error_count() != before)
        return NULL;
    return S.mod;
}
