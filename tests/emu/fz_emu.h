/* fz_emu.h -- run fusec's generated CUDA (.cu, target cuda) on the CPU.
 *
 * Design: the .cu is compiled as ordinary C++17 by g++ with this header
 * force-included (-include) and -I tests/emu/include, whose cuda_runtime.h
 * is a stand-in that only includes this file.  The CUDA keywords vanish
 * (__global__, __device__, ...), `__shared__` becomes `static` (blocks run
 * one after another, so a function-scope static is per block), and the few
 * intrinsics the kernels use get CPU bodies.
 *
 * Launch: the generated host code is compiled unchanged, so kernels arrive
 * at cudaLaunchKernel as `const void *` with a `void *args[]`.  The types
 * come back through a registry: the build appends FZ_EMU_KERNEL(name) for
 * every __global__ function (tests/emu/emu-build.sh does it), which records
 * a typed launcher that copies args[] into the parameter types (a tuple, by
 * std::index_sequence) and runs every block in order.
 *
 * Threads are fibers (ucontext; stacks mmap'd with a guard page and reused
 * across blocks), scheduled round-robin, switching only at barriers:
 * __syncthreads waits for the block, a shuffle or __syncwarp for the lanes
 * of its mask.  A barrier some threads can never reach (divergent
 * __syncthreads, a shuffle whose mask names an exited lane, lanes at
 * different barriers) ends the launch with FUSERT_ERROR_LAUNCH and a
 * message (FZ_EMU_ABORT=1: abort() instead, for a debugger).  Even blocks
 * run their threads in order 0..n-1, odd blocks in reverse, so a missing
 * barrier between a shared write and read shows as a wrong result.
 *
 * Fidelity: blocks never overlap, so inter-block races are invisible;
 * last-block-done tickets (atomicAdd + __threadfence) work because the last
 * block in order takes the last ticket, and the atomic combine of
 * --atomic-reduce adds in that one order.  Allocations are exact-size and
 * filled with 0xff bytes (NaN, -1) so that reading an unwritten
 * intermediate shows.  Not thread-safe: one launch at a time per process.
 * Environment: FZ_EMU_SMS (multiprocessor count, default 2),
 * FZ_EMU_BLOCK_ORDER=reverse (run the blocks last to first), FZ_EMU_STACK_KB
 * (fiber stack, default 128), FZ_EMU_ABORT, FZ_EMU_ALLOW_EXITED (a barrier
 * that completes after some threads exited is an error unless set),
 * FZ_EMU_ZEROED=0 (no zeroed scratch: calls zero their own). */
#ifndef FZ_EMU_H
#define FZ_EMU_H

#include <atomic>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tuple>
#include <type_traits>
#include <ucontext.h>
#include <utility>

#include "fusert.h"

#define FUSEC_EMULATE 1

/* Row launches: at most 256 blocks a multiprocessor (the generated code
 * bounds its grid only at 2^30 blocks; fzk_row_grid), so that with the few
 * multiprocessors emulated (FZ_EMU_SMS) blocks take rows in turn and the
 * row loops of every row kernel, a cluster's included, run. */
#define FZK_ROW_GRID_MAX(sms) ((int64_t)(sms) * 256)

/* ---- keywords ---------------------------------------------------------- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __cluster_dims__(...) /* the width comes from FZ_EMU_KERNEL_CL */
#define __shared__ static
/* the generated code's dynamic shared memory: the running block's copy */
#define FZ_DYN_SMEM (fz_emu::S.dsm_cur)
#define __align__(n) __attribute__((aligned(n)))

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
/* set by the scheduler before it resumes a thread */
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static const int warpSize = 32;

/* ---- bit casts and integer intrinsics ----------------------------------- */
template <class To, class From> static inline To fz_emu_bits(From f)
{
    static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
    To t;
    memcpy(&t, &f, sizeof t);
    return t;
}
static inline float __int_as_float(int i) { return fz_emu_bits<float>(i); }
static inline float __uint_as_float(unsigned i) { return fz_emu_bits<float>(i); }
static inline int __float_as_int(float f) { return fz_emu_bits<int>(f); }
static inline unsigned __float_as_uint(float f) { return fz_emu_bits<unsigned>(f); }
static inline double __longlong_as_double(long long i) { return fz_emu_bits<double>(i); }
static inline long long __double_as_longlong(double d) { return fz_emu_bits<long long>(d); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
/* byte n of the result: byte (s >> 4n) & 7 of the eight bytes y:x */
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned long long b = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int n = 0; n < 4; n++)
        r |= (unsigned)((b >> (8 * ((s >> (4 * n)) & 7))) & 0xffu) << (8 * n);
    return r;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }

/* ---- math with CUDA's names (the rest is glibc's <math.h>: expf, tanhf,
 * exp10f, ...); the fast intrinsics are computed exactly ---- */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fdividef(float x, float y) { return x / y; }
/* glibc declares these names but does not export them: macros, then */
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf(x, y)
#define __exp10f(x) exp10f(x)
static inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }

static void fz_emu_unknown_asm(const char *text) __attribute__((noreturn));
static void fz_emu_unknown_asm(const char *text)
{
    fprintf(stderr, "fz_emu: inline asm the emulator does not know: %s\n", text);
    abort();
}

/* f16 <-> f32, round to nearest even (what cvt.rn.f16.f32 does) */
static inline float fz_emu_h2f(unsigned short h)
{
    unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
    if (e == 0x1f)
        u = s | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    else if (e)
        u = s | ((e + 112u) << 23) | (m << 13);
    else if (m == 0)
        u = s;
    else { /* subnormal: m * 2^-24 is exact in float */
        float f = (float)m * 5.9604644775390625e-8f;
        return s ? -f : f;
    }
    return fz_emu_bits<float>(u);
}
static inline unsigned short fz_emu_f2h(float f)
{
    unsigned u = fz_emu_bits<unsigned>(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (unsigned short)(s | 0x7e00u);
    if (a >= 0x477ff000u) /* 65520 and up round to inf */
        return (unsigned short)(s | 0x7c00u);
    if (a < 0x38800000u) { /* below 2^-14: subnormal or zero, by one exact rounding */
        float x = fz_emu_bits<float>(a) * 16777216.0f; /* units of 2^-24, exact */
        return (unsigned short)(s | (unsigned)nearbyintf(x));
    }
    unsigned r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u; /* rebias 127 -> 15 */
    return (unsigned short)(s | (r >> 13));
}
/* Inline PTX: emu-build.sh rewrites each one-line
 *     asm("TEXT" : "=c"(out) : "c"(in), ...);
 * of the preamble as fz_emu_asm_op("TEXT", out, in, ...); these are the
 * instructions the preamble uses (any other is a compile error here). */
static inline void fz_emu_asm_op(const char *text, float &f, unsigned short h)
{
    if (strcmp(text, "cvt.f32.f16 %0, %1;") != 0)
        fz_emu_unknown_asm(text);
    f = fz_emu_h2f(h);
}
static inline void fz_emu_asm_op(const char *text, unsigned short &h, float f)
{
    if (strcmp(text, "cvt.rn.f16.f32 %0, %1;") != 0)
        fz_emu_unknown_asm(text);
    h = fz_emu_f2h(f);
}
static inline void fz_emu_asm_op(const char *text, float &r, float x)
{
    if (strcmp(text, "ex2.approx.ftz.f32 %0, %1;") != 0)
        fz_emu_unknown_asm(text);
    r = x < -126.0f ? 0.0f : exp2f(x); /* .ftz: results below 2^-126 are 0 */
}
static inline void fz_emu_asm_op(const char *text, float &r, float a, float b)
{
    if (strcmp(text, "div.full.f32 %0, %1, %2;") != 0)
        fz_emu_unknown_asm(text);
    r = a / b; /* div.full.f32: full range, 2 ulp; the CPU is exact */
}

/* ---- atomics: threads are cooperative fibers, so plain code is atomic.
 * Exactly CUDA's overloads (sm_60 and up), no catch-all template, so a
 * generated call that nvcc would reject (atomicMax on a float, atomicAdd
 * on a long long) fails to build here too. --- */
#define FZ_EMU_ATOMIC(name, T, expr) \
    static inline T name(T *p, T v) { T o = *p; *p = (expr); return o; }
#define FZ_EMU_ATOMIC_ALL(name, expr) \
    FZ_EMU_ATOMIC(name, int, expr) FZ_EMU_ATOMIC(name, unsigned, expr) \
    FZ_EMU_ATOMIC(name, unsigned long long, expr)
FZ_EMU_ATOMIC_ALL(atomicAdd, o + v)
FZ_EMU_ATOMIC(atomicAdd, float, o + v)
FZ_EMU_ATOMIC(atomicAdd, double, o + v)
FZ_EMU_ATOMIC(atomicSub, int, o - v)
FZ_EMU_ATOMIC(atomicSub, unsigned, o - v)
FZ_EMU_ATOMIC_ALL(atomicExch, v)
FZ_EMU_ATOMIC(atomicExch, float, v)
FZ_EMU_ATOMIC_ALL(atomicMax, o > v ? o : v)
FZ_EMU_ATOMIC(atomicMax, long long, o > v ? o : v)
FZ_EMU_ATOMIC_ALL(atomicMin, o < v ? o : v)
FZ_EMU_ATOMIC(atomicMin, long long, o < v ? o : v)
FZ_EMU_ATOMIC_ALL(atomicAnd, o & v)
FZ_EMU_ATOMIC_ALL(atomicOr, o | v)
FZ_EMU_ATOMIC_ALL(atomicXor, o ^ v)
FZ_EMU_ATOMIC(atomicInc, unsigned, o >= v ? 0 : o + 1)
FZ_EMU_ATOMIC(atomicDec, unsigned, (o == 0 || o > v) ? v : o - 1)
#undef FZ_EMU_ATOMIC_ALL
#undef FZ_EMU_ATOMIC
#define FZ_EMU_CAS(T) \
    static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
FZ_EMU_CAS(int)
FZ_EMU_CAS(unsigned)
FZ_EMU_CAS(unsigned long long)
FZ_EMU_CAS(unsigned short)
#undef FZ_EMU_CAS
static inline void __threadfence(void) {}
static inline void __threadfence_block(void) {}

/* ---- the scheduler ------------------------------------------------------ */
namespace fz_emu {

enum { ST_READY, ST_BLOCK, ST_WARP, ST_DONE, ST_CLUSTER };
enum { W_SYNC, W_XOR, W_IDX, W_DOWN, W_UP };
static const char *const wkind_name[] = {"__syncwarp", "__shfl_xor_sync", "__shfl_sync",
                                         "__shfl_down_sync", "__shfl_up_sync"};

struct Fiber {
    ucontext_t ctx;
    char *stack;
    int state;
    int parity; /* which slot row the lane wrote at its current warp barrier */
    int carrived; /* arrived at the cluster barrier, not yet waited */
    int cwaits;   /* cluster barriers passed */
    uint3 idx;
};
struct Warp {
    unsigned present;  /* lanes that exist */
    unsigned live;     /* lanes not exited */
    unsigned arrived;  /* lanes waiting at the current warp barrier */
    unsigned mask;     /* that barrier's mask (the first arrival's) */
    int kind, width, gen;
    unsigned long long slot[2][32];
};
struct State {
    Fiber *f;  /* the running block's threads (fa + rank * n) */
    Fiber *fa; /* every thread of the cluster */
    int nalloc, n, cur;
    int cl;    /* blocks per cluster */
    size_t stack_bytes;
    ucontext_t sched;
    int live, block_arrived, exited_barrier_ok;
    Warp *w, *wa; /* the running block's warps, every warp of the cluster */
    int nw_alloc;
    void (*body)(void *);
    void *arg;
    const char *kernel;
    int failed;
    char msg[1024];
    /* dynamic shared memory: the launch's shared bytes for each block of
     * the cluster (exact size, for ASan), the running block's */
    unsigned char *dsm[8];
    size_t dsm_bytes;
    unsigned char *dsm_cur;
};
static State S;

/* Record the first failure of the launch; switch back to the scheduler
 * when called from a thread (it never resumes that thread). */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    if (!S.failed) {
        int k = snprintf(S.msg, sizeof S.msg, "%s block (%u,%u,%u): ", S.kernel, blockIdx.x, blockIdx.y,
                         blockIdx.z);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(S.msg + k, sizeof S.msg - (size_t)k, fmt, ap);
        va_end(ap);
        S.failed = 1;
        if (getenv("FZ_EMU_ABORT")) {
            fprintf(stderr, "fz_emu: %s\n", S.msg);
            abort();
        }
    }
    if (S.cur >= 0) {
        Fiber *me = &S.f[S.cur];
        swapcontext(&me->ctx, &S.sched);
        fprintf(stderr, "fz_emu: a failed thread was resumed\n");
        abort();
    }
}

static inline int tid_of(const uint3 &i) { return (int)(i.x + blockDim.x * (i.y + blockDim.y * i.z)); }
static inline int my_tid(void) { return S.cur; }

static void yield(void)
{
    Fiber *me = &S.f[S.cur];
    swapcontext(&me->ctx, &S.sched);
}

static void release_block(void)
{
    if (S.live < S.n && !S.exited_barrier_ok)
        fail("__syncthreads completed with %d of %d threads exited (a barrier in divergent code)",
             S.n - S.live, S.n);
    for (int t = 0; t < S.n; t++)
        if (S.f[t].state == ST_BLOCK)
            S.f[t].state = ST_READY;
    S.block_arrived = 0;
}

static void release_warp(int wi)
{
    Warp *w = &S.w[wi];
    for (int l = 0; l < 32; l++)
        if (w->arrived >> l & 1u)
            S.f[wi * 32 + l].state = ST_READY;
    w->arrived = 0;
    w->gen++;
}

/* the warp barrier is complete when every live lane of the mask is there */
static void check_warp(int wi)
{
    Warp *w = &S.w[wi];
    if (w->arrived && (w->arrived & w->live & w->mask) == (w->live & w->mask))
        release_warp(wi);
}

static void syncthreads(void)
{
    S.f[S.cur].state = ST_BLOCK;
    if (++S.block_arrived == S.live)
        release_block();
    yield();
}

/* One lane's arrival at a warp barrier: the value (8 bytes at most) goes
 * into its slot; returns the slot row to read after the release. */
static int warp_arrive(int kind, unsigned mask, int width, unsigned long long v)
{
    int t = S.cur, wi = t >> 5, lane = t & 31;
    Warp *w = &S.w[wi];
    if (!(mask >> lane & 1u))
        fail("thread %d calls %s with mask 0x%08x, which does not name its own lane %d", t,
             wkind_name[kind], mask, lane);
    if (mask & ~w->present)
        fail("thread %d calls %s with mask 0x%08x, naming lanes that do not exist (warp %d has lanes "
             "0x%08x)", t, wkind_name[kind], mask, wi, w->present);
    if (mask & ~w->live)
        fail("thread %d calls %s with mask 0x%08x but lanes 0x%08x of warp %d have exited", t,
             wkind_name[kind], mask, mask & ~w->live, wi);
    if (width < 1 || width > 32 || (width & (width - 1)))
        fail("thread %d calls %s with width %d (not a power of two <= 32)", t, wkind_name[kind], width);
    if (w->arrived) {
        if (w->mask != mask || w->kind != kind || w->width != width)
            fail("warp %d: thread %d calls %s (mask 0x%08x, width %d) while lanes 0x%08x wait at %s "
                 "(mask 0x%08x, width %d)", wi, t, wkind_name[kind], mask, width, w->arrived,
                 wkind_name[w->kind], w->mask, w->width);
    } else {
        w->mask = mask;
        w->kind = kind;
        w->width = width;
    }
    int p = w->gen & 1;
    w->slot[p][lane] = v;
    w->arrived |= 1u << lane;
    S.f[t].state = ST_WARP;
    S.f[t].parity = p;
    check_warp(wi);
    yield();
    return p;
}

template <class T> static inline unsigned long long to_slot(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle of a big type");
    unsigned long long u = 0;
    memcpy(&u, &v, sizeof v);
    return u;
}
template <class T> static inline T from_slot(unsigned long long u)
{
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}

template <class T> static T shuffle(int kind, unsigned mask, T v, int arg, int width)
{
    int t = S.cur, wi = t >> 5, lane = t & 31;
    int p = warp_arrive(kind, mask, width, to_slot(v));
    int base = lane & ~(width - 1), src;
    switch (kind) {
    case W_XOR:
        src = lane ^ arg;
        if (src >= base + width) /* a later group: own value */
            return v;
        break;
    case W_IDX: src = base + (arg & (width - 1)); break;
    case W_DOWN:
        src = lane + arg;
        if (src >= base + width)
            return v;
        break;
    default:
        src = lane - arg;
        if (src < base)
            return v;
        break;
    }
    if (src < 0 || src > 31 || !(mask >> src & 1u))
        fail("thread %d: %s (mask 0x%08x) reads lane %d, which is not in the mask", t, wkind_name[kind],
             mask, src);
    return from_slot<T>(S.w[wi].slot[p][src]);
}

static void fiber_main(void)
{
    S.body(S.arg);
    Fiber *me = &S.f[S.cur];
    int t = S.cur, wi = t >> 5;
    if (me->carrived)
        fail("thread %d exited after __cluster_barrier_arrive without __cluster_barrier_wait", t);
    me->state = ST_DONE;
    S.live--;
    S.w[wi].live &= ~(1u << (t & 31));
    /* waiters that can now never be joined by this thread */
    if (S.w[wi].arrived && (S.w[wi].mask >> (t & 31) & 1u))
        fail("thread %d exited while lanes 0x%08x of warp %d wait at %s with mask 0x%08x", t,
             S.w[wi].arrived, wi, wkind_name[S.w[wi].kind], S.w[wi].mask);
    if (S.block_arrived && S.block_arrived == S.live)
        release_block();
    swapcontext(&me->ctx, &S.sched);
}

/* room for n threads (a cluster's blocks together) */
static int grow(int n)
{
    if (!S.stack_bytes) {
        const char *e = getenv("FZ_EMU_STACK_KB");
        S.stack_bytes = (size_t)(e ? atoi(e) : 128) * 1024;
        if (S.stack_bytes < 16384)
            S.stack_bytes = 16384;
        S.exited_barrier_ok = getenv("FZ_EMU_ALLOW_EXITED") != NULL;
    }
    if (n > S.nalloc) {
        Fiber *nf = (Fiber *)realloc(S.fa, sizeof(Fiber) * (size_t)n);
        if (!nf)
            return 0;
        S.fa = nf;
        for (int t = S.nalloc; t < n; t++) {
            size_t guard = 4096;
            char *m = (char *)mmap(NULL, S.stack_bytes + guard, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                return 0;
            mprotect(m, guard, PROT_NONE); /* an overflow faults instead of corrupting */
            S.fa[t].stack = m + guard;
            S.nalloc = t + 1;
        }
    }
    int nw = (n + 31) / 32;
    if (nw > S.nw_alloc) {
        Warp *w = (Warp *)realloc(S.wa, sizeof(Warp) * (size_t)nw);
        if (!w)
            return 0;
        S.wa = w;
        S.nw_alloc = nw;
    }
    return 1;
}

/* Set up the threads and warps of the block at S.f / S.w. */
static void init_block(void)
{
    int n = S.n;
    for (int t = 0; t < n; t++) {
        Fiber *f = &S.f[t];
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = f->stack;
        f->ctx.uc_stack.ss_size = S.stack_bytes;
        f->ctx.uc_link = NULL;
        makecontext(&f->ctx, fiber_main, 0);
        f->state = ST_READY;
        f->carrived = 0;
        f->cwaits = 0;
        f->idx.x = (unsigned)t % blockDim.x;
        f->idx.y = (unsigned)t / blockDim.x % blockDim.y;
        f->idx.z = (unsigned)t / (blockDim.x * blockDim.y);
    }
    for (int wi = 0; wi < (n + 31) / 32; wi++) {
        Warp *w = &S.w[wi];
        int lanes = n - wi * 32 < 32 ? n - wi * 32 : 32;
        w->present = w->live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
        w->arrived = 0;
        w->gen = 0;
    }
    S.live = n;
    S.block_arrived = 0;
}

/* Run the block at S.f until it ends (1), until every live thread waits at
 * the cluster barrier (2), or a failure (0, message in S.msg). */
static int step_block(int reverse)
{
    int n = S.n;
    for (;;) {
        int ran = 0;
        for (int k = 0; k < n; k++) {
            int t = reverse ? n - 1 - k : k;
            if (S.f[t].state != ST_READY)
                continue;
            S.cur = t;
            threadIdx = S.f[t].idx;
            swapcontext(&S.sched, &S.f[t].ctx);
            S.cur = -1;
            ran = 1;
            if (S.failed)
                return 0;
        }
        if (S.live == 0)
            return 1;
        if (!ran) { /* nobody can move: the cluster barrier, or say who waits where */
            int nb = 0, nwt = 0, ncl = 0, wfirst = -1;
            for (int t = 0; t < n; t++) {
                nb += S.f[t].state == ST_BLOCK;
                ncl += S.f[t].state == ST_CLUSTER;
                if (S.f[t].state == ST_WARP) {
                    nwt++;
                    if (wfirst < 0)
                        wfirst = t >> 5;
                }
            }
            if (ncl == S.live)
                return 2;
            char cls[48] = "";
            if (ncl)
                snprintf(cls, sizeof cls, ", %d at the cluster barrier", ncl);
            if (wfirst >= 0)
                fail("deadlock: %d threads wait at __syncthreads, %d at warp barriers (warp %d: lanes "
                     "0x%08x at %s with mask 0x%08x, live lanes 0x%08x)%s, %d exited",
                     nb, nwt, wfirst, S.w[wfirst].arrived, wkind_name[S.w[wfirst].kind], S.w[wfirst].mask,
                     S.w[wfirst].live, cls, n - S.live);
            else
                fail("deadlock: %d threads wait at __syncthreads%s, %d exited", nb, cls, n - S.live);
            return 0;
        }
    }
}

/* The blocks of one cluster (S.cl of them, ranks 0..S.cl-1 from linear
 * block li0), run one at a time: each runs until it ends or all its threads
 * wait at the cluster barrier, then the next; when every block waits, the
 * barrier opens.  A block's `__shared__` statics are the cluster's, so only
 * cluster-wide exchanges (fz_cluster_reduce, whose slots differ by rank)
 * may stay live across a cluster barrier. */
struct Blk {
    uint3 idx;
    int live, block_arrived, state, reverse;
};
static void use_block(const Blk *b, int r)
{
    S.f = S.fa + (size_t)r * S.n;
    S.w = S.wa + (size_t)r * ((S.n + 31) / 32);
    blockIdx = b->idx;
    S.dsm_cur = S.dsm[r];
    S.live = b->live;
    S.block_arrived = b->block_arrived;
}
static int run_cluster(unsigned long long li0, int reverse)
{
    Blk b[8]; /* run_grid allows clusters of up to 8, the portable size */
    for (int r = 0; r < S.cl; r++) {
        const unsigned long long li = li0 + (unsigned long long)r;
        b[r].idx.x = (unsigned)(li % gridDim.x);
        b[r].idx.y = (unsigned)(li / gridDim.x % gridDim.y);
        b[r].idx.z = (unsigned)(li / gridDim.x / gridDim.y);
        b[r].state = 2;
        b[r].reverse = reverse ^ (r & 1);
        b[r].live = S.n;
        b[r].block_arrived = 0;
        if (S.dsm[r])
            memset(S.dsm[r], 0xff, S.dsm_bytes); /* what a block finds: not zeros */
        use_block(&b[r], r);
        init_block();
    }
    for (;;) {
        int waiting = 0;
        for (int k = 0; k < S.cl; k++) {
            const int r = reverse ? S.cl - 1 - k : k;
            if (b[r].state != 2)
                continue;
            use_block(&b[r], r);
            b[r].state = step_block(b[r].reverse);
            b[r].live = S.live;
            b[r].block_arrived = S.block_arrived;
            if (b[r].state == 0)
                return 0;
            waiting += b[r].state == 2;
        }
        if (!waiting)
            return 1;
        /* every block left waits at the cluster barrier: open it, unless a
         * thread of the cluster exited first (it can never arrive) */
        int exited = 0;
        for (int r = 0; r < S.cl; r++)
            exited += S.n - b[r].live;
        if (exited && !S.exited_barrier_ok) {
            use_block(&b[0], 0);
            fail("the cluster barrier completed with %d of %d threads exited (a barrier in divergent code)",
                 exited, S.n * S.cl);
            return 0;
        }
        for (size_t t = 0; t < (size_t)S.n * (size_t)S.cl; t++)
            if (S.fa[t].state == ST_CLUSTER)
                S.fa[t].state = ST_READY;
    }
}

/* barrier.cluster: arrive, then wait (the kernels call both in a row) */
static void cluster_arrive(void)
{
    Fiber *me = &S.f[S.cur];
    if (me->carrived)
        fail("thread %d: a second __cluster_barrier_arrive before __cluster_barrier_wait", S.cur);
    me->carrived = 1;
}
static void cluster_wait(void)
{
    Fiber *me = &S.f[S.cur];
    if (!me->carrived)
        fail("thread %d: __cluster_barrier_wait without __cluster_barrier_arrive", S.cur);
    me->carrived = 0;
    me->state = ST_CLUSTER;
    yield();
    me = &S.f[S.cur];
    me->cwaits++;
}

} /* namespace fz_emu */

/* ---- the CUDA runtime subset of the generated host code ----------------- */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchFailure = 719,
} cudaError_t;
typedef void *cudaStream_t;
enum cudaDeviceAttr {
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

namespace fz_emu {
/* Run the grid; body(arg) is one thread's kernel call. */
static cudaError_t run_grid(const char *name, dim3 grid, dim3 block, size_t shared_bytes, int cl,
                            void (*body)(void *), void *arg);

static cudaError_t last_error = cudaSuccess;
static inline cudaError_t set(cudaError_t e)
{
    if (e != cudaSuccess)
        last_error = e;
    return e;
}
/* the registry of typed launchers, filled by FZ_EMU_KERNEL */
typedef cudaError_t (*Launcher)(const char *, dim3, dim3, size_t, int, void **);
struct Entry {
    const void *fn;
    const char *name;
    Launcher launch;
    unsigned max_threads; /* __launch_bounds__, 0 if none */
    int cl;               /* __cluster_dims__ width, 0 if none */
    int max_dynamic;      /* cudaFuncSetAttribute's MaxDynamicSharedMemorySize, 0 if unset */
};
enum { FZ_EMU_MAX_KERNELS = 8192 };
static Entry registry[FZ_EMU_MAX_KERNELS];
static int nregistry;
struct Reg {
    Reg(const void *fn, const char *name, Launcher l, unsigned max_threads, int cl)
    {
        if (nregistry == FZ_EMU_MAX_KERNELS) { /* a module past it would fail its launches */
            fprintf(stderr, "fz_emu: more than %d kernels in one module\n", (int)FZ_EMU_MAX_KERNELS);
            abort();
        }
        registry[nregistry++] = Entry{fn, name, l, max_threads, cl, 0};
    }
};

template <class... A> struct Call {
    void (*k)(A...);
    std::tuple<typename std::decay<A>::type...> args;
    static void body(void *p)
    {
        Call *c = (Call *)p;
        std::apply(c->k, c->args);
    }
};
template <class... A, size_t... I>
static void unpack(std::tuple<typename std::decay<A>::type...> &t, void **args, std::index_sequence<I...>)
{
    /* byte copies, like cudaLaunchKernel: the host variable may be a
     * const void * for a const float * parameter */
    (memcpy((void *)&std::get<I>(t), args[I], sizeof(std::get<I>(t))), ...);
}
template <class... A>
static cudaError_t launch_typed(void (*k)(A...), const char *name, dim3 g, dim3 b, size_t sh, int cl, void **args)
{
    Call<A...> c;
    c.k = k;
    unpack<A...>(c.args, args, std::index_sequence_for<A...>{});
    return run_grid(name, g, b, sh, cl, &Call<A...>::body, &c);
}
} /* namespace fz_emu */

/* After the .cu: FZ_EMU_KERNEL(name) for each __global__ function, or
 * FZ_EMU_KERNEL_LB(name, N) for one declared __launch_bounds__(N): a
 * launch with more threads per block fails, as on the GPU;
 * FZ_EMU_KERNEL_CL(name, N, W) for one also declared FZ_CLUSTER(W): its
 * blocks run in clusters of W (cudaFuncGetAttributes reports W). */
#define FZ_EMU_KERNEL_CL(K, LB, CL)                                                                      \
    static cudaError_t fz_emu_launch_##K(const char *n, dim3 g, dim3 b, size_t sh, int cl, void **args) \
    {                                                                                                    \
        return fz_emu::launch_typed(K, n, g, b, sh, cl, args);                                           \
    }                                                                                                    \
    static fz_emu::Reg fz_emu_reg_##K((const void *)(K), #K, fz_emu_launch_##K, (LB), (CL));
#define FZ_EMU_KERNEL_LB(K, LB) FZ_EMU_KERNEL_CL(K, LB, 0)
#define FZ_EMU_KERNEL(K) FZ_EMU_KERNEL_LB(K, 0)

static inline cudaError_t cudaGetLastError(void)
{
    cudaError_t e = fz_emu::last_error;
    fz_emu::last_error = cudaSuccess;
    return e;
}
static inline cudaError_t cudaPeekAtLastError(void) { return fz_emu::last_error; }
static inline const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDeviceFunction: return "invalid device function (not registered with FZ_EMU_KERNEL)";
    case cudaErrorLaunchFailure: return fz_emu::S.msg[0] ? fz_emu::S.msg : "unspecified launch failure";
    case cudaErrorLaunchOutOfResources: return fz_emu::S.msg[0] ? fz_emu::S.msg : "too many resources requested for launch";
    default: return "emulated CUDA error";
    }
}
static inline cudaError_t cudaGetDevice(int *dev)
{
    *dev = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int dev)
{
    (void)dev;
    if (a == cudaDevAttrMaxSharedMemoryPerBlockOptin) {
        /* an H200's, or FZ_EMU_SMEM_OPTIN bytes */
        const char *e = getenv("FZ_EMU_SMEM_OPTIN");
        *v = e && atoi(e) > 0 ? atoi(e) : 232448;
        return cudaSuccess;
    }
    if (a == cudaDevAttrL2CacheSize) {
        /* an H200's (60 MiB, as it reports it), or FZ_EMU_L2_BYTES */
        const char *e = getenv("FZ_EMU_L2_BYTES");
        *v = e && atoi(e) > 0 ? atoi(e) : 62914560;
        return cudaSuccess;
    }
    if (a != cudaDevAttrMultiProcessorCount)
        return fz_emu::set(cudaErrorInvalidValue);
    const char *e = getenv("FZ_EMU_SMS");
    *v = e && atoi(e) > 0 ? atoi(e) : 2;
    return cudaSuccess;
}
static inline cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s)
{
    (void)s;
    void *m = NULL;
    if (posix_memalign(&m, 256, bytes ? bytes : 1) != 0)
        return fz_emu::set(cudaErrorMemoryAllocation);
    memset(m, 0xff, bytes); /* device memory is not zeroed: make stale reads show */
    *p = m;
    return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t bytes) { return cudaMallocAsync(p, bytes, NULL); }
static inline cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p) { return cudaFreeAsync(p, NULL); }
static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
    (void)s;
    if (bytes)
        memset(p, v, bytes);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaFuncSetAttribute(const void *fn, cudaFuncAttribute a, int v)
{
    (void)a;
    if (v > 227 * 1024)
        return fz_emu::set(cudaErrorInvalidValue);
    for (int i = 0; i < fz_emu::nregistry; i++)
        if (fz_emu::registry[i].fn == fn)
            fz_emu::registry[i].max_dynamic = v;
    return cudaSuccess;
}
/* requiredClusterWidth: the kernel's FZ_CLUSTER width; 0 with
 * FZ_EMU_NO_CLUSTERS=1, as for a binary built before sm_90 */
struct cudaFuncAttributes {
    int requiredClusterWidth;
};
static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *fn)
{
    for (int i = 0; i < fz_emu::nregistry; i++)
        if (fz_emu::registry[i].fn == fn) {
            const char *e = getenv("FZ_EMU_NO_CLUSTERS");
            a->requiredClusterWidth = e && atoi(e) ? 0 : fz_emu::registry[i].cl;
            return cudaSuccess;
        }
    return fz_emu::set(cudaErrorInvalidDeviceFunction);
}
/* Blocks a multiprocessor holds: FZ_EMU_BLOCKS_PER_SM (default 2) for
 * any registered kernel whose __launch_bounds__ allow the block, else 0 */
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *fn, int block, size_t sh)
{
    (void)sh;
    for (int i = 0; i < fz_emu::nregistry; i++)
        if (fz_emu::registry[i].fn == fn) {
            const char *e = getenv("FZ_EMU_BLOCKS_PER_SM");
            unsigned lb = fz_emu::registry[i].max_threads;
            *n = lb && (unsigned)block > lb ? 0 : e && *e ? atoi(e) : 2;
            return cudaSuccess;
        }
    return fz_emu::set(cudaErrorInvalidDeviceFunction);
}
static inline cudaError_t cudaLaunchKernel(const void *fn, dim3 g, dim3 b, void **args, size_t sh, cudaStream_t s)
{
    (void)s;
    for (int i = 0; i < fz_emu::nregistry; i++) {
        const fz_emu::Entry *k = &fz_emu::registry[i];
        if (k->fn != fn)
            continue;
        unsigned long long nt = (unsigned long long)b.x * b.y * b.z;
        if (k->max_threads && nt > k->max_threads) {
            snprintf(fz_emu::S.msg, sizeof fz_emu::S.msg, "%s: block of %llu threads, but __launch_bounds__(%u)",
                     k->name, nt, k->max_threads);
            return fz_emu::set(cudaErrorLaunchOutOfResources);
        }
        /* as the driver: dynamic shared memory up to what the kernel opted
         * in to, by default 48 KiB less its static shared memory (taken as
         * 1 KiB: the emulator does not know it) */
        const int lim = k->max_dynamic > 0 ? k->max_dynamic : 47 * 1024;
        if (sh > (size_t)lim) {
            snprintf(fz_emu::S.msg, sizeof fz_emu::S.msg, "%s: %zu bytes of dynamic shared memory, but %d allowed",
                     k->name, sh, lim);
            return fz_emu::set(cudaErrorInvalidValue);
        }
        return fz_emu::set(k->launch(k->name, g, b, sh, k->cl, args));
    }
    return fz_emu::set(cudaErrorInvalidDeviceFunction);
}

namespace fz_emu {
static cudaError_t run_grid(const char *name, dim3 grid, dim3 block, size_t shared_bytes, int cl,
                            void (*body)(void *), void *arg)
{
    S.msg[0] = 0;
    S.failed = 0;
    S.cur = -1;
    /* FZ_EMU_TRACE=FILE: append the name of every launched kernel, so a
     * test can check which variant the launcher picked; with
     * FZ_EMU_TRACE_BLOCK=1 its block width too ("name/bx"), with
     * FZ_EMU_TRACE_GRID=1 its grid ("name gx gy gz") */
    if (const char *trace = getenv("FZ_EMU_TRACE")) {
        if (FILE *tf = fopen(trace, "a")) {
            const char *tg = getenv("FZ_EMU_TRACE_GRID");
            const char *tb = getenv("FZ_EMU_TRACE_BLOCK");
            fprintf(tf, "%s", name);
            if (tb && *tb == '1')
                fprintf(tf, "/%u", block.x);
            if (tg && *tg == '1')
                fprintf(tf, " %u %u %u", grid.x, grid.y, grid.z);
            fprintf(tf, "\n");
            fclose(tf);
        }
    }
    unsigned long long nt = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 ||
        grid.z > 65535 || nt == 0 || nt > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64) {
        snprintf(S.msg, sizeof S.msg, "%s: invalid launch: grid %u x %u x %u, block %u x %u x %u", name,
                 grid.x, grid.y, grid.z, block.x, block.y, block.z);
        return cudaErrorInvalidConfiguration;
    }
    if (shared_bytes > 227 * 1024) {
        snprintf(S.msg, sizeof S.msg, "%s: %zu bytes of dynamic shared memory", name, shared_bytes);
        return cudaErrorInvalidValue;
    }
    if (cl < 1)
        cl = 1;
    if (cl > 8 || grid.x % (unsigned)cl != 0) {
        snprintf(S.msg, sizeof S.msg, "%s: invalid launch: grid %u x %u x %u in clusters of %d", name, grid.x, grid.y,
                 grid.z, cl);
        return cudaErrorInvalidConfiguration;
    }
    if (!grow((int)nt * cl)) {
        snprintf(S.msg, sizeof S.msg, "%s: cannot allocate %llu fiber stacks", name, nt);
        return cudaErrorMemoryAllocation;
    }
    for (int r = 0; r < 8; r++) {
        free(S.dsm[r]);
        S.dsm[r] = NULL;
    }
    S.dsm_bytes = shared_bytes;
    for (int r = 0; r < cl && shared_bytes; r++)
        if (!(S.dsm[r] = (unsigned char *)malloc(shared_bytes))) {
            snprintf(S.msg, sizeof S.msg, "%s: cannot allocate %zu bytes of shared memory", name, shared_bytes);
            return cudaErrorMemoryAllocation;
        }
    S.n = (int)nt;
    S.cl = cl;
    S.body = body;
    S.arg = arg;
    S.kernel = name;
    gridDim = grid;
    blockDim = block;
    /* blocks one after another: x fastest, or the reverse of that order
     * (FZ_EMU_BLOCK_ORDER=reverse), which makes block 0 the last one to
     * finish -- the GPU promises no order at all */
    const char *order = getenv("FZ_EMU_BLOCK_ORDER");
    const int rev = order && strcmp(order, "reverse") == 0;
    const unsigned long long total = (unsigned long long)grid.x * grid.y * grid.z / (unsigned)cl;
    for (unsigned long long nb = 0; nb < total; nb++) {
        const unsigned long long ci = rev ? total - 1 - nb : nb;
        if (!run_cluster(ci * (unsigned)cl, (int)(nb & 1)))
            return cudaErrorLaunchFailure;
    }
    return cudaSuccess;
}
} /* namespace fz_emu */

/* ---- device intrinsics that synchronise --------------------------------- */
static inline void __syncthreads(void) { fz_emu::syncthreads(); }
static inline void __cluster_barrier_arrive(void) { fz_emu::cluster_arrive(); }
static inline void __cluster_barrier_arrive_relaxed(void) { fz_emu::cluster_arrive(); }
static inline void __cluster_barrier_wait(void) { fz_emu::cluster_wait(); }
/* One copy of each __shared__ for the whole cluster: the address itself.
 * Another block's shared memory exists once that block has started, which
 * only a cluster barrier passed since the kernel began guarantees. */
static inline void *__cluster_map_shared_rank(void *p, unsigned rank)
{
    if (rank >= (unsigned)fz_emu::S.cl)
        fz_emu::fail("__cluster_map_shared_rank: rank %u in a cluster of %d", rank, fz_emu::S.cl);
    if (!fz_emu::S.f[fz_emu::S.cur].cwaits)
        fz_emu::fail("thread %d: shared memory of block %u of the cluster before any cluster barrier (that "
                     "block might not have started)", fz_emu::S.cur, rank);
    return p;
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)fz_emu::warp_arrive(fz_emu::W_SYNC, mask, 32, 0); }
template <class T> static inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32)
{
    return fz_emu::shuffle<T>(fz_emu::W_XOR, mask, v, m, width);
}
template <class T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    return fz_emu::shuffle<T>(fz_emu::W_IDX, mask, v, src, width);
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32)
{
    return fz_emu::shuffle<T>(fz_emu::W_DOWN, mask, v, (int)d, width);
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32)
{
    return fz_emu::shuffle<T>(fz_emu::W_UP, mask, v, (int)d, width);
}

/* ---- fusert's error record (the generated .cu needs only these two) ----- */
static char fz_emu_error_text[2048];
extern "C" __attribute__((visibility("default"))) fusert_status fusert_set_error(fusert_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fz_emu_error_text, sizeof fz_emu_error_text, fmt, ap);
    va_end(ap);
    return s;
}
extern "C" __attribute__((visibility("default"))) const char *fusert_last_error(void) { return fz_emu_error_text; }
extern "C" __attribute__((visibility("default"))) void fusert_clear_error(void) { fz_emu_error_text[0] = 0; }

/* ---- fusert's zeroed scratch: one region for the process, which every
 * reduction kernel must leave all zero.  Each request first checks that the
 * calls before it did (a kernel that forgets to put a counter or an
 * accumulator back to 0 fails the next call that asks).  FZ_EMU_ZEROED=0
 * hands out none, so calls take their memset path instead. ---- */
extern "C" __attribute__((visibility("default"))) fusert_status fusert_zeroed_scratch(fusert_stream stream,
                                                                                        size_t bytes, void **ptr)
{
    static unsigned char *region;
    static size_t have;
    (void)stream;
    *ptr = NULL;
    const char *off = getenv("FZ_EMU_ZEROED");
    if (bytes == 0 || (off && strcmp(off, "0") == 0))
        return FUSERT_SUCCESS;
    for (size_t i = 0; i < have; i++)
        if (region[i])
            return fusert_set_error(FUSERT_ERROR_CUDA, "emulator: a kernel left the zeroed scratch dirty: "
                                    "byte %zu of %zu is 0x%02x", i, have, region[i]);
    if (have < bytes) {
        free(region);
        region = NULL;
        have = 0;
        void *m = NULL;
        if (posix_memalign(&m, 256, bytes) != 0)
            return FUSERT_SUCCESS; /* none: the memset path */
        memset(m, 0, bytes);
        region = (unsigned char *)m;
        have = bytes;
    }
    *ptr = region;
    return FUSERT_SUCCESS;
}

/* ---- fusert's stream region: one for the process, reused by every call
 * and filled with 0xff before each, since device memory a call reuses holds
 * whatever the last call left (a kernel that reads what it did not write
 * first shows).  FZ_EMU_STREAM_SCRATCH=0 hands out none, so calls allocate
 * their own. ---- */
extern "C" __attribute__((visibility("default"))) fusert_status fusert_stream_scratch(fusert_stream stream,
                                                                                        size_t bytes, void **ptr)
{
    static unsigned char *region;
    static size_t have;
    (void)stream;
    *ptr = NULL;
    const char *off = getenv("FZ_EMU_STREAM_SCRATCH");
    if (bytes == 0 || (off && strcmp(off, "0") == 0))
        return FUSERT_SUCCESS;
    if (have < bytes) {
        free(region);
        region = NULL;
        have = 0;
        void *m = NULL;
        if (posix_memalign(&m, 256, bytes) != 0)
            return FUSERT_SUCCESS; /* none: the caller allocates */
        region = (unsigned char *)m;
        have = bytes;
    }
    memset(region, 0xff, have);
    *ptr = region;
    return FUSERT_SUCCESS;
}

#endif
