/* half.c -- rounding a float64 value to the set of values of a dtype.
 *
 * f16 (1-5-10) and bf16 (1-8-7) are produced straight from the double with
 * one round-to-nearest-even step, so there is no double rounding through
 * f32.  One generic packer handles both formats: normals, subnormals (a
 * fixed-point step below the smallest normal), overflow to inf once a value
 * reaches the halfway point above the largest finite, and NaN (kept quiet,
 * sign kept).
 *
 * Conversion to an integer dtype truncates toward zero, maps NaN to 0 and
 * saturates at the ends of the range: the behaviour of CUDA's cvt.rzi.sat
 * and of a saturating cast, so the reference and the kernels agree where C
 * leaves float-to-int conversion undefined.  Integer arithmetic itself
 * wraps (see interp.c); that is not done here.  bool is v != 0 (NaN is
 * true, as in NumPy). */
#include "dtype.h"
#include "util.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Pack v into a binary format with ebits exponent bits and mbits mantissa
 * bits (at most 16 in all), working on the double's bits: the 53-bit
 * significand is shifted right to the target's precision (further for a
 * subnormal result) and rounded to nearest even on the bits shifted out.
 * A carry out of the mantissa moves into the exponent by itself. */
static uint16_t pack_small(double v, int ebits, int mbits)
{
    const int bias = (1 << (ebits - 1)) - 1;
    const int emin = 1 - bias, emax = bias;
    const uint32_t sign = (uint32_t)(signbit(v) ? 1u : 0u) << (ebits + mbits);
    const uint32_t expmask = ((1u << ebits) - 1) << mbits;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int e = (int)(u >> 52 & 0x7ff);
    uint64_t m = u & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ff) /* inf, or NaN kept quiet */
        return (uint16_t)(sign | expmask | (m ? 1u << (mbits - 1) : 0));
    if (e == 0) /* zero or a double subnormal: far below any target value */
        return (uint16_t)sign;
    int E = e - 1023;
    if (E > emax)
        return (uint16_t)(sign | expmask);
    uint64_t sig = m | UINT64_C(1) << 52;
    int shift = 52 - mbits + (E < emin ? emin - E : 0);
    if (shift > 53) /* below half the smallest subnormal */
        return (uint16_t)sign;
    uint64_t q = sig >> shift, rest = sig & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    uint64_t bits = E < emin ? q : ((uint64_t)(E + bias - 1) << mbits) + q;
    if (bits >= expmask)
        return (uint16_t)(sign | expmask);
    return (uint16_t)(sign | bits);
}

/* 2^k for k in the range of double normals, built from its bits */
static double pow2(int k)
{
    uint64_t u = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static double unpack_small(uint16_t h, int ebits, int mbits)
{
    const int bias = (1 << (ebits - 1)) - 1;
    int s = (h >> (ebits + mbits)) & 1;
    int e = (h >> mbits) & ((1 << ebits) - 1);
    uint32_t m = h & ((1u << mbits) - 1);
    double v;
    if (e == (1 << ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = (double)m * pow2(1 - bias - mbits);
    else
        v = (double)(m | (1u << mbits)) * pow2(e - bias - mbits);
    return s ? -v : v;
}

uint16_t f16_bits_from_double(double v) { return pack_small(v, 5, 10); }
double f16_bits_to_double(uint16_t h) { return unpack_small(h, 5, 10); }
uint16_t bf16_bits_from_double(double v) { return pack_small(v, 8, 7); }
double bf16_bits_to_double(uint16_t h) { return unpack_small(h, 8, 7); }

/* f32 by hand at the top of the range: a double past FLT_MAX converts to
 * inf under IEEE rules, but C calls it undefined, and sanitizers agree. */
static double round_f32(double v)
{
    double a = fabs(v);
    if (!(a > FLT_MAX)) /* the common case, NaN included */
        return (double)(float)v;
    if (a >= 0x1.ffffffp127) /* halfway from FLT_MAX to 2^128, and inf */
        return copysign(INFINITY, v);
    return copysign(FLT_MAX, v);
}

static double round_int(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (v < lo)
        return lo;
    if (v > hi)
        return hi;
    return v == 0 ? 0.0 : v; /* integers have no -0 */
}

int64_t double_to_i64(double v)
{
    v = round_to_dtype(v, DT_I64);
    return v >= 9223372036854775808.0 ? INT64_MAX : (int64_t)v;
}

double round_to_dtype(double v, DType t)
{
    switch (t) {
    case DT_BOOL: return v != 0 ? 1.0 : 0.0;
    case DT_I32: return round_int(v, -2147483648.0, 2147483647.0);
    /* 2^63 is not an int64: it stands for INT64_MAX (the top of the
     * range, the identity of min), which double_to_i64 gives back */
    case DT_I64: return round_int(v, -9223372036854775808.0, 9223372036854775808.0);
    case DT_F16: return f16_bits_to_double(f16_bits_from_double(v));
    case DT_BF16: return bf16_bits_to_double(bf16_bits_from_double(v));
    case DT_F32: return round_f32(v);
    case DT_F64: return v;
    case DT_COUNT: break;
    }
    unreachable();
}
