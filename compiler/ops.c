/* ops.c -- the operator table (op_info, from ops.def) and what every
 * elementwise op computes on one element.
 *
 * Constant folding (ir.c) and the reference interpreter (interp.c) both call
 * op_eval_scalar, so a folded constant is the value the interpreter computes
 * for the same node (then rounded to the node's dtype, as a constant is).
 * The rules that are decisions rather than libm calls:
 *  - an integer node computes in int64 and wraps like two's complement
 *    to its dtype; / truncates toward zero, % is C's remainder, a zero
 *    divisor is reported (OPEVAL_DIVZERO), INT_MIN / -1 wraps to INT_MIN;
 *    pow with a negative exponent gives the truncated 1 / a^|b|;
 *  - a cast between integer dtypes (or from bool) wraps; any other cast
 *    keeps the value, and round_to_dtype (half.c) makes it a value of the
 *    dtype: float to integer truncates, NaN gives 0, out of range saturates;
 *  - min, max and clamp propagate NaN; relu(NaN) and sign(NaN) are NaN
 *    (like torch and the generated kernels);
 *  - a float node computes in float64 and is not rounded here.
 */
#include "ops.h"
#include <math.h>
#include <string.h>

const OpInfo op_info[OP_COUNT] = {
#define OP(name, src, arity, cls, flags, cuda) {#name, src, arity, cls, flags, cuda},
#include "ops.def"
};

int op_is_named(int op)
{
    const char *s = op_info[op].src;
    return (s[0] >= 'a' && s[0] <= 'z') && op_info[op].cls != OPC_LEAF && !(op_info[op].flags & OPF_INTERNAL);
}

int op_builtin_name(const char *name)
{
    if (strcmp(name, "cast") == 0)
        return 1;
    for (int op = 0; op < OP_COUNT; op++)
        if (op_is_named(op) && strcmp(op_info[op].src, name) == 0)
            return 1;
    return 0;
}

/* Two's-complement wrap of an exact integer result to dtype t. */
static int64_t wrap_to(uint64_t u, DType t)
{
    return t == DT_I32 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
}

static uint64_t ipow(int64_t a, int64_t b)
{
    if (b < 0) /* the truncated value of 1 / a^|b| */
        return a == 1 ? 1 : a == -1 ? (b % 2 ? (uint64_t)-1 : 1) : 0;
    uint64_t base = (uint64_t)a, acc = 1;
    while (b) {
        if (b & 1)
            acc *= base;
        base *= base;
        b >>= 1;
    }
    return acc;
}

OpEvalStatus op_eval_int(OpKind op, DType dt, const int64_t *args, int64_t *out)
{
    int64_t x = args[0];
    int64_t y = op_info[op].arity >= 2 ? args[1] : 0;
    int64_t z = op_info[op].arity >= 3 ? args[2] : 0;
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case OP_CAST: *out = wrap_to(ux, dt); return OPEVAL_OK;
    case OP_ADD: *out = wrap_to(ux + uy, dt); return OPEVAL_OK;
    case OP_SUB: *out = wrap_to(ux - uy, dt); return OPEVAL_OK;
    case OP_MUL: *out = wrap_to(ux * uy, dt); return OPEVAL_OK;
    case OP_NEG: *out = wrap_to(0 - ux, dt); return OPEVAL_OK;
    case OP_ABS: *out = wrap_to(x < 0 ? 0 - ux : ux, dt); return OPEVAL_OK;
    case OP_SQUARE: *out = wrap_to(ux * ux, dt); return OPEVAL_OK;
    case OP_FMA: *out = wrap_to(ux * uy + (uint64_t)z, dt); return OPEVAL_OK;
    case OP_POW: *out = wrap_to(ipow(x, y), dt); return OPEVAL_OK;
    case OP_DIV:
    case OP_MOD:
        if (y == 0) {
            *out = 0;
            return OPEVAL_DIVZERO;
        }
        if (y == -1) /* INT64_MIN / -1 overflows in C: wrap by hand */
            *out = op == OP_DIV ? wrap_to(0 - ux, dt) : 0;
        else
            *out = wrap_to((uint64_t)(op == OP_DIV ? x / y : x % y), dt);
        return OPEVAL_OK;
    default: return OPEVAL_NONE;
    }
}

double op_max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }
double op_min_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a < b ? a : b); }

/* The float64 meaning of an op (also used by integer nodes for the ops
 * whose integer result is the same: min, max, relu, comparisons, ...). */
static OpEvalStatus eval_float(OpKind op, const double *a, double *out)
{
    double x = a[0], y = op_info[op].arity >= 2 ? a[1] : 0, z = op_info[op].arity >= 3 ? a[2] : 0;
    double r;
    switch (op) {
    case OP_CAST: r = x; break;
    case OP_ABS: r = fabs(x); break;
    case OP_NEG: r = -x; break;
    case OP_NOT: r = x == 0; break;
    case OP_EXP: r = exp(x); break;
    case OP_EXP2: r = exp2(x); break;
    case OP_LOG: r = log(x); break;
    case OP_LOG2: r = log2(x); break;
    case OP_LOG1P: r = log1p(x); break;
    case OP_EXPM1: r = expm1(x); break;
    case OP_SQRT: r = sqrt(x); break;
    case OP_RSQRT: r = 1.0 / sqrt(x); break;
    case OP_CBRT: r = cbrt(x); break;
    case OP_SIN: r = sin(x); break;
    case OP_COS: r = cos(x); break;
    case OP_TAN: r = tan(x); break;
    case OP_TANH: r = tanh(x); break;
    case OP_SIGMOID: r = 1.0 / (1.0 + exp(-x)); break;
    case OP_RELU: r = isnan(x) ? x : (x > 0 ? x : 0.0); break;
    case OP_GELU: r = 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); break;
    case OP_GELU_TANH: r = 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x))); break;
    case OP_SILU: r = x / (1.0 + exp(-x)); break;
    case OP_ERF: r = erf(x); break;
    case OP_FLOOR: r = floor(x); break;
    case OP_CEIL: r = ceil(x); break;
    case OP_ROUND: r = rint(x); break; /* half to even in the default rounding mode */
    case OP_TRUNC: r = trunc(x); break;
    case OP_SIGN: r = isnan(x) ? x : (double)((x > 0) - (x < 0)); break;
    case OP_RECIP: r = 1.0 / x; break;
    case OP_SQUARE: r = x * x; break;
    case OP_ISNAN: r = isnan(x) != 0; break;
    case OP_ISINF: r = isinf(x) != 0; break;
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV: r = x / y; break;
    case OP_MOD: r = fmod(x, y); break;
    case OP_POW: r = pow(x, y); break;
    case OP_MIN2: r = op_min_nan(x, y); break;
    case OP_MAX2: r = op_max_nan(x, y); break;
    case OP_ATAN2: r = atan2(x, y); break;
    case OP_EQ: r = x == y; break;
    case OP_NE: r = x != y; break;
    case OP_LT: r = x < y; break;
    case OP_LE: r = x <= y; break;
    case OP_GT: r = x > y; break;
    case OP_GE: r = x >= y; break;
    case OP_AND: r = x != 0 && y != 0; break;
    case OP_OR: r = x != 0 || y != 0; break;
    case OP_FMA: r = fma(x, y, z); break;
    case OP_CLAMP: r = op_min_nan(op_max_nan(x, y), z); break;
    case OP_WHERE: r = x != 0 ? y : z; break;
    default: return OPEVAL_NONE;
    }
    *out = r;
    return OPEVAL_OK;
}

OpEvalStatus op_eval_scalar(OpKind op, DType dt, DType in_dt, const double *args, double *out)
{
    int cls = op_info[op].cls;
    if (cls != OPC_UNARY && cls != OPC_BINARY && cls != OPC_TERNARY)
        return OPEVAL_NONE;
    /* integer arithmetic, and casts between integers, in exact int64 */
    if (dtype_is_int(dt) && (op != OP_CAST || !dtype_is_float(in_dt))) {
        int64_t ia[3] = {0, 0, 0}, r;
        for (int k = 0; k < op_info[op].arity; k++)
            ia[k] = double_to_i64(args[k]);
        OpEvalStatus st = op_eval_int(op, dt, ia, &r);
        if (st != OPEVAL_NONE) {
            *out = st == OPEVAL_OK ? (double)r : 0;
            return st;
        }
    }
    return eval_float(op, args, out);
}
