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
#include "interp.h"
#include <float.h>
#include <math.h>
#include <stdint.h>

/* Pack |v| into a binary format with ebits exponent bits and mbits mantissa
 * bits (at most 16 bits in all). */
static uint16_t pack_small(double v, int ebits, int mbits)
{
    const int bias = (1 << (ebits - 1)) - 1;
    const int emin = 1 - bias, emax = bias;
    const uint16_t sign = signbit(v) ? (uint16_t)(1u << (ebits + mbits)) : 0;
    const uint16_t expmask = (uint16_t)(((1u << ebits) - 1) << mbits);
    if (isnan(v))
        return (uint16_t)(sign | expmask | (1u << (mbits - 1)));
    double a = fabs(v);
    if (isinf(a))
        return (uint16_t)(sign | expmask);
    if (a < ldexp(1.0, emin)) {
        /* subnormal: a multiple of 2^(emin - mbits); rounding up to
         * 2^mbits lands exactly on the smallest normal's encoding */
        double m = rint(ldexp(a, mbits - emin));
        return (uint16_t)(sign | (uint16_t)m);
    }
    int ex;
    double fr = frexp(a, &ex); /* a = fr * 2^ex, fr in [0.5, 1) */
    int e = ex - 1;
    double m = rint(ldexp(fr, mbits + 1)); /* in [2^mbits, 2^(mbits+1)] */
    if (m >= ldexp(1.0, mbits + 1)) {
        m = ldexp(1.0, mbits);
        e++;
    }
    if (e > emax)
        return (uint16_t)(sign | expmask);
    uint32_t mant = (uint32_t)m - (1u << mbits);
    return (uint16_t)(sign | ((uint32_t)(e + bias) << mbits) | mant);
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
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m | (1u << mbits)), e - bias - mbits);
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

double round_to_dtype(double v, DType t)
{
    switch (t) {
    case DT_BOOL: return v != 0 ? 1.0 : 0.0;
    case DT_I32: return round_int(v, -2147483648.0, 2147483647.0);
    /* 2^63 is not an int64; the nearest double below it is 2^63 - 1024 */
    case DT_I64: return round_int(v, -9223372036854775808.0, 9223372036854774784.0);
    case DT_F16: return f16_bits_to_double(f16_bits_from_double(v));
    case DT_BF16: return bf16_bits_to_double(bf16_bits_from_double(v));
    case DT_F32: return round_f32(v);
    case DT_F64: return v;
    case DT_COUNT: break;
    }
    unreachable();
}
