/* driver_util.h -- what the C drivers of examples/c share.
 *
 * Every driver fills its inputs with fixed-seed numbers, copies them to the
 * device with the CUDA runtime, calls one function that fusec generated,
 * copies the results back and compares them with a float64 computation on the
 * CPU.  This header holds the parts that are the same in every driver:
 *
 *   CUDA_OK(call)          check a CUDA runtime call: on failure print the call,
 *                          where it is and CUDA's message, then `goto fail`;
 *   FUSERT_OK(name, call)  the same for a generated function's fusert_status,
 *                          with fusert_status_name() and fusert_last_error();
 *   CUDA_CLEANUP(call)     check a call on the cleanup path after `fail:`:
 *                          print the failure and set `rc = 1`, go on freeing;
 *   CUDA_FREE(p)           CUDA_CLEANUP(cudaFree(p)) for a pointer that was
 *                          allocated (NULL: nothing to free);
 *   HOST_ALLOC(p, count)   p = malloc(count elements), or a message and `goto fail`;
 *   du_size_arg            an optional positive size from the command line;
 *   du_count               a product of sizes, refused when it overflows;
 *   du_rng, du_uniform, du_fill   deterministic inputs: a 64-bit LCG with a
 *                          fixed seed gives the same numbers on every machine;
 *   du_f32_tolerance       the f32 tolerance of docs/language.md ("Tolerances");
 *   du_check               compare a result with its float64 reference element
 *                          by element, print a few values and a summary line.
 *
 * A driver declares `int rc = 1;`, every pointer as NULL and its stream as NULL
 * before the first check, ends with a `fail:` label that frees everything,
 * and prints its verdict with du_verdict().  Header-only (static inline
 * functions), so each driver is one C file.  C11. */
#ifndef FUSEC_EXAMPLES_DRIVER_UTIL_H
#define FUSEC_EXAMPLES_DRIVER_UTIL_H
#include "fusert.h"
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline void du_cuda_error(const char *call, cudaError_t err, const char *file, int line)
{
    fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudaGetErrorString(err));
}

#define CUDA_OK(call)                                                                    \
    do {                                                                                 \
        cudaError_t du_err_ = (call);                                                    \
        if (du_err_ != cudaSuccess) {                                                    \
            du_cuda_error(#call, du_err_, __FILE__, __LINE__);                           \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#define CUDA_CLEANUP(call)                                                               \
    do {                                                                                 \
        cudaError_t du_err_ = (call);                                                    \
        if (du_err_ != cudaSuccess) {                                                    \
            du_cuda_error(#call, du_err_, __FILE__, __LINE__);                           \
            rc = 1;                                                                      \
        }                                                                                \
    } while (0)

#define CUDA_FREE(p)                                                                     \
    do {                                                                                 \
        if (p)                                                                           \
            CUDA_CLEANUP(cudaFree(p));                                                   \
    } while (0)

#define FUSERT_OK(name, call)                                                            \
    do {                                                                                 \
        fusert_status du_st_ = (call);                                                   \
        if (du_st_ != FUSERT_SUCCESS) {                                                  \
            fprintf(stderr, "%s: %s: %s\n", (name), fusert_status_name(du_st_),          \
                    fusert_last_error());                                                \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#define HOST_ALLOC(p, count)                                                             \
    do {                                                                                 \
        (p) = malloc((size_t)(count) * sizeof *(p));                                     \
        if (!(p)) {                                                                      \
            fprintf(stderr, "out of host memory (%zu elements for %s)\n", (size_t)(count), #p); \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

/* argv[i] as a positive size; def when the argument is absent; -1 (after a
 * message) when it is not a positive integer. */
static inline int64_t du_size_arg(int argc, char **argv, int i, int64_t def)
{
    if (i >= argc)
        return def;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || errno != 0 || v <= 0) {
        fprintf(stderr, "%s: '%s' is not a positive size\n", argv[0], argv[i]);
        return -1;
    }
    return (int64_t)v;
}

/* a * b elements (pass b = 1 for one size); 0 (after a message) when either is
 * not positive or the product of floats would not fit in memory's size_t. */
static inline size_t du_count(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0 || (uint64_t)a > (uint64_t)(SIZE_MAX / 8) / (uint64_t)b) {
        fprintf(stderr, "bad sizes %lld x %lld\n", (long long)a, (long long)b);
        return 0;
    }
    return (size_t)a * (size_t)b;
}

/* Deterministic inputs: a 64-bit LCG (Knuth's MMIX constants) whose top 53 bits
 * make a double in [0, 1); no dependence on rand() or the C library. */
typedef struct du_rng {
    uint64_t state;
} du_rng;

static inline du_rng du_seed(uint64_t seed)
{
    du_rng r;
    r.state = seed;
    return r;
}

/* A float in [lo, hi). */
static inline float du_uniform(du_rng *r, double lo, double hi)
{
    r->state = r->state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = (double)(r->state >> 11) / 9007199254740992.0;
    float v = (float)(lo + u * (hi - lo));
    return v < (float)hi ? v : (float)lo; /* rounding to float may reach hi */
}

static inline void du_fill(float *a, size_t n, du_rng *r, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        a[i] = du_uniform(r, lo, hi);
}

/* The f32 tolerance of docs/language.md: a value passes when
 *   |got - want| <= rtol * |want| + afrac * scale,
 * scale being the largest finite |want| of that result.  f32: rtol 1e-5,
 * afrac 1e-6; both x4 when the fn uses a transcendental builtin (exp, log,
 * sqrt, rsqrt, tanh, sigmoid, ...); a fn that reduces adds 1e-6 * sqrt(K) to
 * afrac (x4 with transcendentals), K the longest reduced extent.
 * reduced_extent < 0: the fn does not reduce. */
typedef struct du_tol {
    double rtol, afrac;
} du_tol;

static inline du_tol du_f32_tolerance(int transcendental, int64_t reduced_extent)
{
    double f = transcendental ? 4.0 : 1.0;
    du_tol t;
    t.rtol = 1e-5 * f;
    t.afrac = 1e-6 * f;
    if (reduced_extent >= 0)
        t.afrac += 1e-6 * f * sqrt((double)(reduced_extent > 1 ? reduced_extent : 1));
    return t;
}

/* Compare n results with their float64 reference (rounded to f32 first: the
 * language's result is the float64 graph rounded to the result dtype).  NaN
 * must meet NaN and an infinity the same infinity.  Prints the first values of
 * both, the first mismatches, and one summary line; returns 1 when every
 * element passes. */
static inline int du_check(const char *name, const float *got, const double *want, size_t n, du_tol tol)
{
    double scale = 0, max_abs = 0, max_rel = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double w = (double)(float)want[i];
        if (isfinite(w) && fabs(w) > scale)
            scale = fabs(w);
    }
    double atol = tol.afrac * scale;
    for (size_t i = 0; i < n; i++) {
        double g = (double)got[i], w = (double)(float)want[i];
        int ok;
        if (isnan(g) || isnan(w)) {
            ok = isnan(g) && isnan(w);
        } else if (isinf(g) || isinf(w)) {
            ok = g == w;
        } else {
            double err = fabs(g - w);
            ok = err <= atol + tol.rtol * fabs(w);
            max_abs = err > max_abs ? err : max_abs;
            if (w != 0 && err / fabs(w) > max_rel)
                max_rel = err / fabs(w);
        }
        if (!ok && bad++ < 5)
            printf("  mismatch: %s[%zu] = %.9g, float64 reference %.9g\n", name, i, g, want[i]);
    }
    size_t show = n < 4 ? n : 4;
    printf("%s[0..%zu] =", name, show - 1);
    for (size_t i = 0; i < show; i++)
        printf(" %.6g", (double)got[i]);
    printf("  (float64:");
    for (size_t i = 0; i < show; i++)
        printf(" %.6g", want[i]);
    printf(")\n");
    printf("%s: %zu values, max abs err %.3g, max rel err %.3g (rtol %.3g, atol %.3g): %s\n", name,
           n, max_abs, max_rel, tol.rtol, atol, bad ? "FAILED" : "OK");
    if (bad)
        printf("%s: %zu of %zu values outside the tolerance\n", name, bad, n);
    return bad == 0;
}

/* The last line of every driver: what ran, then OK or FAILED. */
static inline int du_verdict(const char *what, int rc)
{
    printf("%s: %s\n", what, rc == 0 ? "OK" : "FAILED");
    return rc;
}

#endif
