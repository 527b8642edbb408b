/* ---- --atomic-reduce: a reduction's blocks combine their partials into
 * one accumulator word W in the scratch with an atomic (put); the block
 * that takes the last ticket reads it (get) and stores 0 back.  The host
 * zero-fills the scratch before the first launch of every call, and every
 * encoding below reads 0 as the reduction's identity (sum 0; max -inf or
 * the lowest integer; min +inf or the highest), so the first call and each
 * call after a reset start right.  The order of the atomics varies from
 * run to run: the result is within tolerance, not bitwise reproducible. ---- */
template <class T> struct fz_aadd {
    typedef T W;
    static __device__ __forceinline__ void put(W *p, T v) { atomicAdd(p, v); }
    static __device__ __forceinline__ T get(const W *p) { return *(const volatile W *)p; }
};
/* integer sums: two's complement, so an unsigned 64-bit add */
template <> struct fz_aadd<long long> {
    typedef unsigned long long W;
    static __device__ __forceinline__ void put(W *p, long long v) { atomicAdd(p, (W)v); }
    static __device__ __forceinline__ long long get(const W *p) { return (long long)*(const volatile W *)p; }
};
/* max (MAX 1) and min (MAX 0): atomicMax of an unsigned key that orders
 * like the value (min: reversed), is 0 for the identity and all ones for
 * NaN, so a NaN wins as in fz_max/fz_min (any NaN gives FZ_NAN).  A float's
 * bits become monotone by flipping all bits of a negative and the sign bit
 * of a positive; -inf is then 0x007fffff and +inf 0xff800000. */
template <class T, int MAX> struct fz_aext;
template <int MAX> struct fz_aext<float, MAX> {
    typedef unsigned W;
    static __device__ __forceinline__ unsigned ord(float v)
    {
        unsigned u = __float_as_uint(v);
        return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
    static __device__ __forceinline__ void put(W *p, float v)
    {
        atomicMax(p, v != v ? 0xffffffffu : MAX ? ord(v) - 0x007fffffu : 0xff800000u - ord(v));
    }
    static __device__ __forceinline__ float get(const W *p)
    {
        const W k = *(const volatile W *)p;
        if (k == 0xffffffffu)
            return FZ_NAN;
        const unsigned o = MAX ? k + 0x007fffffu : 0xff800000u - k;
        return __uint_as_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
    }
};
template <int MAX> struct fz_aext<double, MAX> {
    typedef unsigned long long W;
    static __device__ __forceinline__ unsigned long long ord(double v)
    {
        unsigned long long u = (unsigned long long)__double_as_longlong(v);
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    static __device__ __forceinline__ void put(W *p, double v)
    {
        atomicMax(p, v != v ? 0xffffffffffffffffull
                            : MAX ? ord(v) - 0x000fffffffffffffull : 0xfff0000000000000ull - ord(v));
    }
    static __device__ __forceinline__ double get(const W *p)
    {
        const W k = *(const volatile W *)p;
        if (k == 0xffffffffffffffffull)
            return FZ_DNAN;
        const unsigned long long o = MAX ? k + 0x000fffffffffffffull : 0xfff0000000000000ull - k;
        return __longlong_as_double((long long)((o & 0x8000000000000000ull) ? (o & 0x7fffffffffffffffull) : ~o));
    }
};
/* integers: the sign bit flipped orders them as unsigned (lowest: 0) */
template <int MAX> struct fz_aext<long long, MAX> {
    typedef unsigned long long W;
    static __device__ __forceinline__ void put(W *p, long long v)
    {
        const W o = (W)v ^ 0x8000000000000000ull;
        atomicMax(p, MAX ? o : ~o);
    }
    static __device__ __forceinline__ long long get(const W *p)
    {
        const W k = *(const volatile W *)p;
        return (long long)((MAX ? k : ~k) ^ 0x8000000000000000ull);
    }
};
/* ---- end of the atomic combine ---- */
