/* ---- fusec device preamble: the few helpers the kernels use.  No
 * #include: NVRTC has no libc headers, and compile time stays small. ---- */
typedef unsigned short fz_u16;
typedef unsigned char fz_u8;
#define FZ_FULL 0xffffffffu
#define FZ_INF __int_as_float(0x7f800000)
#define FZ_NAN __int_as_float(0x7fc00000)
#define FZ_DINF __longlong_as_double(0x7ff0000000000000LL)
#define FZ_DNAN __longlong_as_double(0x7ff8000000000000LL)
#define FZ_LLMAX 9223372036854775807LL
/* f16 and bf16 are stored as 16 bits and computed in f32 */
static __device__ __forceinline__ float fz_f16_to_f32(fz_u16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static __device__ __forceinline__ fz_u16 fz_f32_to_f16(float f)
{
    fz_u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
static __device__ __forceinline__ float fz_bf16_to_f32(fz_u16 h)
{
    return __uint_as_float(((unsigned)h) << 16);
}
static __device__ __forceinline__ fz_u16 fz_f32_to_bf16(float f)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    fz_u16 h; /* one instruction from sm_80 on, instead of six */
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (fz_u16)0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (fz_u16)(u >> 16);
#endif
}
/* A register row cache of 2-byte floats holds two to a 32-bit word, element
 * k in half k & 1 of word k / 2: ptxas gives each 16-bit value a register
 * of its own, so unpacked the cache takes twice the registers. */
static __device__ __forceinline__ fz_u16 fz_xc2_get(const unsigned *xc, int k)
{
    return (fz_u16)(k & 1 ? xc[k >> 1] >> 16 : xc[k >> 1] & 0xffffu);
}
/* elements are put in ascending order: an even k starts its word, an odd
 * one fills the high half (one byte permute; with a mask and a shift ptxas
 * spilled a bf16 Welford row of 32 elements a lane) */
static __device__ __forceinline__ void fz_xc2_put(unsigned *xc, int k, fz_u16 h)
{
    xc[k >> 1] = k & 1 ? __byte_perm(xc[k >> 1], h, 0x5410) : (unsigned)h;
}
/* f32 division: the full-range approximation (2 ulp), no IEEE slow-path
 * call (which costs registers and a stack frame in every unrolled copy) */
static __device__ __forceinline__ float fz_fdiv(float a, float b)
{
    float r;
    asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
/* sigmoid and silu from e = exp(-|x|), which lies in [0, 1]: 1 + e cannot
 * overflow, and a kernel that also computes exp(-abs(x)) shares the one
 * expf (nvcc merges the equal calls).  NaN stays NaN (x >= 0 is false).
 * The divisor 1 + e lies in [1, 2], where the fast division (div.approx)
 * is within the same 2 ulp as the full-range one and takes fewer
 * instructions. */
static __device__ __forceinline__ float fz_sigmoid_e(float x, float e)
{
    return __fdividef(x >= 0.0f ? 1.0f : e, 1.0f + e);
}
static __device__ __forceinline__ float fz_silu_e(float x, float e)
{
    return __fdividef(x >= 0.0f ? x : x * e, 1.0f + e);
}
static __device__ __forceinline__ float fz_sigmoid(float x) { return fz_sigmoid_e(x, expf(-fabsf(x))); }
static __device__ __forceinline__ float fz_silu(float x) { return fz_silu_e(x, expf(-fabsf(x))); }
/* the same from the hardware's exp (__expf), for values computed from
 * bf16 params, whose tolerance is far above its error (op_expr) */
static __device__ __forceinline__ float fz_sigmoid_approx(float x) { return fz_sigmoid_e(x, __expf(-fabsf(x))); }
static __device__ __forceinline__ float fz_silu_approx(float x) { return fz_silu_e(x, __expf(-fabsf(x))); }
/* max/min that propagate NaN like NumPy (a NaN operand wins).  PTX's
 * max.NaN is one instruction where these are three, but as inline asm it
 * made ptxas spill 4 to 40 bytes in six kernels (sm_90). */
static __device__ __forceinline__ float fz_max(float a, float b) { return (a > b || a != a) ? a : b; }
static __device__ __forceinline__ float fz_min(float a, float b) { return (a < b || a != a) ? a : b; }
static __device__ __forceinline__ double fz_max(double a, double b) { return (a > b || a != a) ? a : b; }
static __device__ __forceinline__ double fz_min(double a, double b) { return (a < b || a != a) ? a : b; }
static __device__ __forceinline__ int fz_max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ int fz_min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ long long fz_max(long long a, long long b) { return a > b ? a : b; }
static __device__ __forceinline__ long long fz_min(long long a, long long b) { return a < b ? a : b; }
static __device__ __forceinline__ long long fz_ipow(long long b, long long e)
{
    long long r = 1;
    if (e < 0)
        return (b == 1) ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
    while (e) {
        if (e & 1)
            r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}
/* n / d for n < 2^31 with a host-computed magic number (no division) */
static __device__ __forceinline__ unsigned fz_udiv(unsigned n, unsigned m, unsigned s)
{
    return (__umulhi(n, m) + n) >> s;
}
/* t / d: a magic-number division for int32 indices, plain for int64 */
template <class I> static __device__ __forceinline__ I fz_div(I t, I d, unsigned m, unsigned s);
template <> __device__ __forceinline__ int fz_div<int>(int t, int, unsigned m, unsigned s) { return (int)fz_udiv((unsigned)t, m, s); }
template <> __device__ __forceinline__ long long fz_div<long long>(long long t, long long d, unsigned, unsigned) { return t / d; }
/* V elements aligned to their whole size, for vector loads and stores (one
 * wider than 16 bytes loads as 16-byte pieces) */
template <class T, int V> struct __align__(sizeof(T) * V) fz_vec {
    T v[V];
};
/* The V elements at p, aligned to 16 bytes but perhaps not to their whole
 * size (more than 16 bytes): as 16-byte pieces. */
template <class T, int V> static __device__ __forceinline__ fz_vec<T, V> fz_vec_load16(const T *p)
{
    enum { P = 16 / sizeof(T) };
    static_assert(V % P == 0, "whole 16-byte pieces");
    fz_vec<T, V> r;
#pragma unroll
    for (int i = 0; i < V / P; i++) {
        const fz_vec<T, P> w = ((const fz_vec<T, P> *)p)[i];
#pragma unroll
        for (int k = 0; k < P; k++)
            r.v[i * P + k] = w.v[k];
    }
    return r;
}
/* The V elements at p, anywhere in its 16-byte block: the aligned 16-byte
 * pieces that hold them, then a select of p's place in the first, instead
 * of V loads an element wide (each of which a warp spreads over 32 lanes'
 * vectors).  Reads up to a piece past p + V: the caller keeps that inside
 * the array. */
template <class T, int V> static __device__ __forceinline__ fz_vec<T, V> fz_vec_pieces(const T *p)
{
    enum { P = 16 / sizeof(T) };
    const int m = (int)((unsigned long long)p / sizeof(T) % P);
    const fz_vec<T, P> *q = (const fz_vec<T, P> *)(p - m);
    T f[V + P];
#pragma unroll
    for (int i = 0; i <= V / P; i++) {
        fz_vec<T, P> w = {};
        if (i < V / P || m)
            w = q[i];
#pragma unroll
        for (int k = 0; k < P; k++)
            f[i * P + k] = w.v[k];
    }
    fz_vec<T, V> r;
#pragma unroll
    for (int j = 0; j < V; j++) {
        T x = f[j];
#pragma unroll
        for (int k = 1; k < P; k++)
            if (m == k)
                x = f[j + k];
        r.v[j] = x;
    }
    return r;
}
template <class T> static __device__ __forceinline__ T fz_lowest();
template <> __device__ __forceinline__ float fz_lowest<float>() { return -FZ_INF; }
template <> __device__ __forceinline__ double fz_lowest<double>() { return -FZ_DINF; }
template <> __device__ __forceinline__ long long fz_lowest<long long>() { return -FZ_LLMAX - 1; }
template <class T> static __device__ __forceinline__ T fz_highest();
template <> __device__ __forceinline__ float fz_highest<float>() { return FZ_INF; }
template <> __device__ __forceinline__ double fz_highest<double>() { return FZ_DINF; }
template <> __device__ __forceinline__ long long fz_highest<long long>() { return FZ_LLMAX; }
template <class T> static __device__ __forceinline__ T fz_qnan() { return (T)0; }
template <> __device__ __forceinline__ float fz_qnan<float>() { return FZ_NAN; }
template <> __device__ __forceinline__ double fz_qnan<double>() { return FZ_DNAN; }
/* Reductions: S is the per-thread state; upd folds one element (with its
 * index inside the reduced range), comb merges two states, fin gives the
 * value for a count of n elements.  comb is applied in a fixed order so
 * that results are bitwise the same run to run. */
template <class T> struct fz_sum {
    typedef T S;
    enum { TREE = 0 }; /* fz_block_reduce: a chain over the warps */
    static __device__ __forceinline__ S init() { return (T)0; }
    static __device__ __forceinline__ S upd(S a, T v, long long) { return a + v; }
    static __device__ __forceinline__ S comb(S a, S b) { return a + b; }
    static __device__ __forceinline__ S shfl(S a, int o) { return __shfl_xor_sync(FZ_FULL, a, o); }
    static __device__ __forceinline__ S bcast(S a, int l, int w) { return __shfl_sync(FZ_FULL, a, l, w); }
    static __device__ __forceinline__ S ldcg(const S *p) { return *(const volatile S *)p; }
    static __device__ __forceinline__ T fin(S a, long long) { return a; }
};
template <class T> struct fz_mean : fz_sum<T> {
    static __device__ __forceinline__ T fin(T a, long long n) { return a / (T)n; }
};
template <class T> struct fz_prod : fz_sum<T> {
    static __device__ __forceinline__ T init() { return (T)1; }
    static __device__ __forceinline__ T upd(T a, T v, long long) { return a * v; }
    static __device__ __forceinline__ T comb(T a, T b) { return a * b; }
};
static __device__ __forceinline__ long long fz_sat_i32(long long v) { return v < -2147483647LL - 1 ? -2147483647LL - 1 : v > 2147483647LL ? 2147483647LL : v; }
template <class T> struct fz_rmax : fz_sum<T> {
    static __device__ __forceinline__ T init() { return fz_lowest<T>(); }
    static __device__ __forceinline__ T upd(T a, T v, long long) { return fz_max(a, v); }
    static __device__ __forceinline__ T comb(T a, T b) { return fz_max(a, b); }
};
template <class T> struct fz_rmin : fz_sum<T> {
    static __device__ __forceinline__ T init() { return fz_highest<T>(); }
    static __device__ __forceinline__ T upd(T a, T v, long long) { return fz_min(a, v); }
    static __device__ __forceinline__ T comb(T a, T b) { return fz_min(a, b); }
};
struct fz_any : fz_sum<int> {
    static __device__ __forceinline__ int init() { return 0; }
    static __device__ __forceinline__ int upd(int a, int v, long long) { return a | (v != 0); }
    static __device__ __forceinline__ int comb(int a, int b) { return a | b; }
    static __device__ __forceinline__ bool fin(int a, long long) { return a != 0; }
};
struct fz_all : fz_sum<int> {
    static __device__ __forceinline__ int init() { return 1; }
    static __device__ __forceinline__ int upd(int a, int v, long long) { return a & (v != 0); }
    static __device__ __forceinline__ int comb(int a, int b) { return a & b; }
    static __device__ __forceinline__ bool fin(int a, long long) { return a != 0; }
};
/* argmax/argmin: NaN wins, then the extreme value, then the first index */
template <class T> struct fz_argst {
    T v;
    long long i;
};
template <class T, int MAX> struct fz_argred {
    typedef fz_argst<T> S;
    enum { TREE = 0 };
    static __device__ __forceinline__ S init() { S s; s.v = MAX ? fz_lowest<T>() : fz_highest<T>(); s.i = FZ_LLMAX; return s; }
    static __device__ __forceinline__ bool better(S b, S a)
    {
        bool bn = b.v != b.v, an = a.v != a.v;
        if (bn || an)
            return bn && (!an || b.i < a.i);
        if (b.v == a.v)
            return b.i < a.i;
        return MAX ? b.v > a.v : b.v < a.v;
    }
    static __device__ __forceinline__ S upd(S a, T v, long long i) { S b; b.v = v; b.i = i; return better(b, a) ? b : a; }
    static __device__ __forceinline__ S comb(S a, S b) { return better(b, a) ? b : a; }
    static __device__ __forceinline__ S shfl(S a, int o) { a.v = __shfl_xor_sync(FZ_FULL, a.v, o); a.i = __shfl_xor_sync(FZ_FULL, a.i, o); return a; }
    static __device__ __forceinline__ S bcast(S a, int l, int w) { a.v = __shfl_sync(FZ_FULL, a.v, l, w); a.i = __shfl_sync(FZ_FULL, a.i, l, w); return a; }
    static __device__ __forceinline__ S ldcg(const S *p) { S s; s.v = *(const volatile T *)&p->v; s.i = *(const volatile long long *)&p->i; return s; }
    static __device__ __forceinline__ long long fin(S a, long long) { return a.i == FZ_LLMAX ? 0 : a.i; }
};
/* The mean's step of a Welford update divides as fz_fdiv does in float
 * (2 ulp, a fraction of a rounded division's cost per element) and
 * exactly in double. */
static __device__ __forceinline__ double fz_fdiv(double a, double b) { return a / b; }
/* var/std: Welford per thread, Chan's formula to combine (population) */
template <class T> struct fz_mstate {
    T n, m, q;
};
template <class T, int STD> struct fz_var {
    typedef fz_mstate<T> S;
    enum { TREE = 1 }; /* fz_block_reduce: a tree (comb divides) */
    static __device__ __forceinline__ S init() { S s; s.n = 0; s.m = 0; s.q = 0; return s; }
    static __device__ __forceinline__ S upd(S a, T v, long long)
    {
        a.n += (T)1;
        T d = v - a.m;
        a.m += fz_fdiv(d, a.n);
        a.q += d * (v - a.m);
        return a;
    }
    static __device__ __forceinline__ S comb(S a, S b)
    {
        if (b.n == (T)0)
            return a;
        if (a.n == (T)0)
            return b;
        S r;
        r.n = a.n + b.n;
        T d = b.m - a.m;
        r.m = a.m + d * (b.n / r.n);
        r.q = a.q + b.q + d * d * (a.n * (b.n / r.n));
        return r;
    }
    /* V elements at once (a vector of the looped row bodies, V a power of
     * two): their mean and squared deviations from it, then comb.  One
     * division a vector where upd takes one an element, and no element
     * waits on the one before: a chain of dependent divisions, one an
     * element, leaves the loads waiting. */
    template <int V> static __device__ __forceinline__ S updv(S a, const T (&v)[V])
    {
        T s = v[0];
#pragma unroll
        for (int j = 1; j < V; j++)
            s += v[j];
        S b;
        b.n = (T)V;
        b.m = s * ((T)1 / (T)V);
        b.q = 0;
#pragma unroll
        for (int j = 0; j < V; j++) {
            const T d = v[j] - b.m;
            b.q += d * d;
        }
        return comb(a, b);
    }
    static __device__ __forceinline__ S shfl(S a, int o) { a.n = __shfl_xor_sync(FZ_FULL, a.n, o); a.m = __shfl_xor_sync(FZ_FULL, a.m, o); a.q = __shfl_xor_sync(FZ_FULL, a.q, o); return a; }
    static __device__ __forceinline__ S bcast(S a, int l, int w) { a.n = __shfl_sync(FZ_FULL, a.n, l, w); a.m = __shfl_sync(FZ_FULL, a.m, l, w); a.q = __shfl_sync(FZ_FULL, a.q, l, w); return a; }
    static __device__ __forceinline__ S ldcg(const S *p) { S s; s.n = *(const volatile T *)&p->n; s.m = *(const volatile T *)&p->m; s.q = *(const volatile T *)&p->q; return s; }
    static __device__ __forceinline__ T fin(S a, long long)
    {
        if (a.n == (T)0)
            return fz_qnan<T>();
        T v = a.q / a.n;
        return STD ? sqrt(v) : v;
    }
};
/* logsumexp: running max m and sum s of exp(x - m) */
template <class T> struct fz_lsest {
    T m, s;
};
/* The exp of a logsumexp's state: with HW (an f32 state of values
 * computed from bf16 params, in reduction kernels) the hardware's 2^x of
 * d log2(e), as __expf, but flushing results below 2^-126 to 0 (.ftz:
 * __expf's scaling around them is three more instructions an element);
 * the state's sum is at least 1, so such terms are below its rounding.
 * Its relative error is far inside bf16's tolerance.  Else exp. */
template <class T, bool HW> static __device__ __forceinline__ T fz_lse_exp(T d) { return exp(d); }
template <> __device__ __forceinline__ float fz_lse_exp<float, true>(float d)
{
    float r;
    const float x = d * 1.4426950408889634f;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
template <class T, bool HW = false> struct fz_lse {
    typedef fz_lsest<T> S;
    enum { TREE = 1 }; /* fz_block_reduce: a tree (comb takes two exps) */
    /* the two sweeps' reductions over a row's threads: of m, then of s */
    typedef fz_rmax<T> MaxR;
    typedef fz_sum<T> SumR;
    static __device__ __forceinline__ S init() { S a; a.m = fz_lowest<T>(); a.s = 0; return a; }
    /* one exp an element: e = exp(lo - hi) of the element and the running
     * max; a new max rescales the sum by e.  Equal values give 1, two
     * infinities too (their NaN difference is taken as 0: a select, not a
     * branch around the exp); a NaN element makes m NaN, which comb keeps. */
    static __device__ __forceinline__ S upd(S a, T v, long long)
    {
        const bool up = v > a.m;
        const T lo = up ? a.m : v, hi = up ? v : a.m;
        const T d = lo - hi;
        const T e = fz_lse_exp<T, HW>(d == d ? d : (T)0);
        a.s = up ? a.s * e + (T)1 : a.s + e;
        a.m = (up || v != v) ? v : a.m;
        return a;
    }
    /* Two sweeps over a row held in registers: the max first (upd_max, then
     * reduced over the row's threads with MaxR), then the sum of exp
     * against the row's max (upd_sum, then SumR): the threads combine
     * plain maxima and sums, where comb takes two exps a step.  The sum is
     * of exp(v - m) against a finite max, else against 0: a max of +inf
     * makes it +inf, of -inf 0 (fin then gives m), a NaN max makes it
     * NaN; no element needs a branch around its exp. */
    static __device__ __forceinline__ S upd_max(S a, T v, long long)
    {
        a.m = (v > a.m || v != v) ? v : a.m;
        return a;
    }
    static __device__ __forceinline__ S upd_sum(S a, T v, long long)
    {
        a.s += fz_lse_exp<T, HW>(v - (isfinite(a.m) ? a.m : (T)0));
        return a;
    }
    /* A vector of V elements at once (the looped row kernels): their max,
     * then the sum rescaled to it once, V + 1 exps for V elements, none
     * waiting on another's result (upd's chain through the running max
     * does).  The sum is against a finite max, else against 0, as in
     * upd_sum; a NaN element makes m NaN. */
    template <int V> static __device__ __forceinline__ S updv(S a, const T (&v)[V])
    {
        T mx = v[0];
#pragma unroll
        for (int j = 1; j < V; j++)
            mx = (v[j] > mx || v[j] != v[j]) ? v[j] : mx;
        const T m = (mx > a.m || mx != mx) ? mx : a.m;
        const T ref = isfinite(m) ? m : (T)0;
        T s = a.s * fz_lse_exp<T, HW>(a.m - ref);
#pragma unroll
        for (int j = 0; j < V; j++)
            s += fz_lse_exp<T, HW>(v[j] - ref);
        a.m = m;
        a.s = s;
        return a;
    }
    static __device__ __forceinline__ S comb(S a, S b)
    {
        if (a.m != a.m || b.m != b.m) {
            S r;
            r.m = fz_qnan<T>();
            r.s = 1;
            return r;
        }
        if (b.m == fz_lowest<T>())
            return a;
        if (a.m == fz_lowest<T>())
            return b;
        S r;
        r.m = a.m > b.m ? a.m : b.m;
        if (r.m == -fz_lowest<T>()) {
            r.s = 1;
            return r;
        }
        r.s = a.s * fz_lse_exp<T, HW>(a.m - r.m) + b.s * fz_lse_exp<T, HW>(b.m - r.m);
        return r;
    }
    static __device__ __forceinline__ S shfl(S a, int o) { a.m = __shfl_xor_sync(FZ_FULL, a.m, o); a.s = __shfl_xor_sync(FZ_FULL, a.s, o); return a; }
    static __device__ __forceinline__ S bcast(S a, int l, int w) { a.m = __shfl_sync(FZ_FULL, a.m, l, w); a.s = __shfl_sync(FZ_FULL, a.s, l, w); return a; }
    static __device__ __forceinline__ S ldcg(const S *p) { S s; s.m = *(const volatile T *)&p->m; s.s = *(const volatile T *)&p->s; return s; }
    static __device__ __forceinline__ T fin(S a, long long) { return a.s == (T)0 ? a.m : a.m + log(a.s); }
};
/* sum(exp(x - max(x))) from the same state: s against a finite max; else
 * what exp(x - m) gives element by element: 0 for no element, NaN where
 * the max is an infinity or NaN (inf - inf, NaN - NaN) */
template <class T, bool HW = false> struct fz_sumexp : fz_lse<T, HW> {
    typedef fz_lsest<T> S;
    static __device__ __forceinline__ T fin(S a, long long)
    {
        return isfinite(a.m) ? a.s : a.s == (T)0 ? (T)0 : fz_qnan<T>();
    }
};
/* Reduce within groups of W lanes (W a power of two <= 32, all lanes
 * active); every lane of the group gets the group's result. */
template <class R, int W> static __device__ __forceinline__ typename R::S fz_warp_reduce(typename R::S a)
{
#pragma unroll
    for (int o = W / 2; o > 0; o >>= 1)
        a = R::comb(a, R::shfl(a, o));
    return R::bcast(a, 0, W);
}
/* Reduce U states a lane (U = 2, 4 or 8) over the warp and scatter them:
 * the result for p[u] is returned to the lanes l with l / (32 / U) == u.
 * Each step trades half the states with the lane 32 h / U apart (h the
 * half's size), then the remaining lanes of a u fold theirs: U - 1 +
 * log2(32 / U) shuffles for U results, where U warp reductions take 5 U.
 * p is overwritten.  All lanes take part. */
template <class R, int U> static __device__ __forceinline__ typename R::S fz_warp_scatter(typename R::S *p)
{
    const int lane = (int)(threadIdx.x & 31);
#pragma unroll
    for (int h = U / 2; h >= 1; h /= 2) {
        const bool up = (lane & (32 * h / U)) != 0;
#pragma unroll
        for (int i = 0; i < h; i++) {
            const typename R::S mine = up ? p[i + h] : p[i];
            const typename R::S other = up ? p[i] : p[i + h];
            p[i] = R::comb(mine, R::shfl(other, 32 * h / U));
        }
    }
    typename R::S a = p[0];
#pragma unroll
    for (int o = 16 / U; o > 0; o >>= 1)
        a = R::comb(a, R::shfl(a, o));
    return a;
}
/* Reduce over the whole block (NW warps); every thread gets the result.
 * Called by all threads of the block (it synchronises).  Where the
 * combine is dear (R::TREE: logsumexp's two exps, variance's division)
 * each warp folds the NW warp results as a tree over NW lanes, log2(NW)
 * combines a thread: the chain of NW - 1 in every thread of a block of
 * 1024 costs more than a short row's reads.  Every warp takes the same
 * steps on the same values, so all get the same result.  A cheap combine
 * keeps the chain, which holds fewer registers in the kernels that keep
 * their row in registers across it. */
template <class R, int NW> static __device__ __forceinline__ typename R::S fz_block_reduce(typename R::S a)
{
    static_assert(!R::TREE || (NW >= 1 && NW <= 32 && (NW & (NW - 1)) == 0),
                  "a tree over NW lanes: NW a power of two up to 32");
    __shared__ typename R::S sh[NW];
    a = fz_warp_reduce<R, 32>(a);
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = a;
    __syncthreads();
    typename R::S r;
    if (R::TREE) {
        r = fz_warp_reduce<R, NW>(sh[threadIdx.x & (NW - 1)]);
    } else {
        r = sh[0];
#pragma unroll
        for (int k = 1; k < NW; k++)
            r = R::comb(r, sh[k]);
    }
    __syncthreads();
    return r;
}
/* fz_block_reduce over nw warps known only at run time, at most NW (a
 * power of two up to 32; a row a block, the block as wide as the launch
 * makes it): the same chain, or the same tree with the lanes past nw left
 * out, so nw = NW gives fz_block_reduce<R, NW>'s result bit for bit.  The
 * chain's unrolling is left to the compiler: unrolled over NW, each step
 * predicated, or kept a loop (unroll 1), ptxas spilled 12 bytes of bf16
 * layernorm's windowed body (sm_90). */
template <class R, int NW> static __device__ __forceinline__ typename R::S fz_block_reduce_n(typename R::S a, int nw)
{
    static_assert(NW >= 1 && NW <= 32 && (NW & (NW - 1)) == 0, "NW a power of two up to 32");
    __shared__ typename R::S sh[NW];
    a = fz_warp_reduce<R, 32>(a);
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = a;
    __syncthreads();
    typename R::S r = sh[0];
    if (R::TREE) {
        /* lane 0 only ever takes in lanes under nw */
        const int l = (int)(threadIdx.x & 31);
        r = sh[l < nw ? l : 0];
#pragma unroll
        for (int o = NW / 2; o > 0; o >>= 1) {
            const typename R::S t = R::shfl(r, o);
            if ((l ^ o) < nw)
                r = R::comb(r, t);
        }
        r = R::bcast(r, 0, 32);
    } else {
        for (int k = 1; k < nw; k++)
            r = R::comb(r, sh[k]);
    }
    __syncthreads();
    return r;
}
/* Thread block clusters (sm_90 on): a row split over CL blocks of one
 * cluster.  FZ_CLUSTER(n) fixes a kernel's cluster width; compiled for an
 * older architecture the kernel has none, which the launcher reads back
 * (requiredClusterWidth 0) and then does not pick it. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define FZ_CLUSTER(n) __cluster_dims__(n, 1, 1)
#else
#define FZ_CLUSTER(n)
#endif
/* Every block of a cluster must have started before another writes into
 * its shared memory (compute-sanitizer's racecheck: "a block that might
 * not have entered yet"): each thread arrives at the cluster barrier when
 * the kernel starts (fz_cluster_start) and waits before its first write
 * (fz_cluster_reduce), or at the end if none came (fz_cluster_end); the
 * wait is behind the loads of the row.  Bit 1 of the state p says it is
 * pending, bit 0 is the slot parity. */
template <int CL> static __device__ __forceinline__ void fz_cluster_start(void)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if (CL > 1)
        __cluster_barrier_arrive_relaxed();
#endif
}
template <int CL> static __device__ __forceinline__ void fz_cluster_end(int p)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    if (CL > 1 && (p & 2))
        __cluster_barrier_wait();
#endif
}
/* Combine a block-reduced value over the CL blocks of the cluster; every
 * thread of every block gets the result, combined in rank order (the same
 * bits in each block).  Threads 0..CL-1 push the block's value into slot
 * [parity][rank] of each block's shared memory, then the cluster barrier.
 * The parity alternates: a block writes the same slot again only after
 * the next barrier, which the reader reaches after reading. */
template <class R, int CL>
static __device__ __forceinline__ typename R::S fz_cluster_reduce(typename R::S a, int &p)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    __shared__ typename R::S slot[2][CL];
    if (p & 2)
        __cluster_barrier_wait(); /* every block has started */
    p &= 1;
    if (threadIdx.x < CL)
        *(typename R::S *)__cluster_map_shared_rank((void *)&slot[p][blockIdx.x % CL], threadIdx.x) = a;
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    typename R::S r = slot[p][0];
#pragma unroll
    for (int k = 1; k < CL; k++)
        r = R::comb(r, slot[p][k]);
    p ^= 1;
    return r;
#else
    __trap();
    return a;
#endif
}
/* ---- end of preamble ---- */
