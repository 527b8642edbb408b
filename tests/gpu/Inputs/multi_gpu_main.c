/* multi_gpu_main.c -- the generated functions of multi_gpu.fuse, both
 * targets (the cuda .cu and the nvrtc .c, linked side by side), on every GPU
 * of the machine from one process:
 *
 *   in turn    device 0, 1, ...: each target's four fns on that device;
 *   at once    one thread per device, all started together, each running
 *              both targets on its device twice;
 *
 * with sizes that differ by device (and between the two phases), so that
 * devices pick different kernel variants and the runtime keeps each
 * device's modules, workspaces and zeroed scratch apart.  Every output is
 * copied back and checked on the CPU (softmax and the sums against float64
 * with a relative tolerance, bias_relu exactly).  Prints one line per run,
 * the cache counters, and "PASS multi-gpu test" when every check held; it
 * fails when fewer than two devices are visible (lit gates the test on the
 * multi-gpu feature).
 *
 *   multi_gpu_main [DEVICES]   (default: all visible devices) */
#include "multi_gpu_fns.h"
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sizes {
    int64_t sm_n, sm_m;   /* softmax */
    int64_t sa_n;         /* sum_abs */
    int64_t cs_n, cs_m;   /* colsum */
    int64_t br_n, br_m;   /* bias_relu */
} sizes;

/* Different on every device and in every phase; softmax's row length
 * crosses the row-length buckets from one device to the next. */
static sizes sizes_for(int dev, int phase)
{
    sizes s;
    s.sm_n = 257 + 64 * dev + 31 * phase;
    s.sm_m = 100 + 700 * dev + 57 * phase;
    s.sa_n = 100003 + 77777 * dev + 1001 * phase;
    s.cs_n = 513 + 40 * dev + 9 * phase;
    s.cs_m = 300 + 211 * dev + 13 * phase;
    s.br_n = 129 + 10 * dev + 3 * phase;
    s.br_m = 700 + 333 * dev + 5 * phase;
    return s;
}

static float value(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*state >> 11) / 9007199254740992.0 * 8.0 - 4.0); /* [-4, 4) */
}

static float *host_random(size_t n, uint64_t seed)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = value(&seed);
    return p;
}

#define CU(call)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("FAIL %s device %d: %s: %s\n", t->target, dev, #call,                 \
                   cudaGetErrorString(e_));                                              \
            fails++;                                                                     \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
#define FU(name, call)                                                                   \
    do {                                                                                 \
        fusert_status s_ = (call);                                                       \
        if (s_ != FUSERT_SUCCESS) {                                                      \
            printf("FAIL %s device %d: %s: %s: %s\n", t->target, dev, name,              \
                   fusert_status_name(s_), fusert_last_error());                         \
            fails++;                                                                     \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

/* Copy n floats from the device and compare them with ref: |got - want| <=
 * rel * scale[i] (scale NULL: |want|) + 1e-6.  Returns the failures (at
 * most one line printed). */
static int compare(const char *what, const mg_fns *t, int dev, const float *d, const double *ref,
                   const double *scale, size_t n, double rel)
{
    float *got = malloc((n ? n : 1) * sizeof *got);
    if (!got || cudaMemcpy(got, d, n * sizeof *got, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("FAIL %s device %d: %s: cannot copy the result back\n", t->target, dev, what);
        free(got);
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double want = ref[i], tol = rel * (scale ? scale[i] : fabs(want)) + 1e-6;
        if (!(fabs((double)got[i] - want) <= tol)) {
            if (!bad)
                printf("FAIL %s device %d: %s[%zu] = %.9g, want %.9g (tolerance %.3g)\n",
                       t->target, dev, what, i, (double)got[i], want, tol);
            bad++;
        }
    }
    free(got);
    return bad;
}

/* Runs the four fns of target t on device dev (current on this thread)
 * with sizes z; 0 when every output is right. */
static int run_target(const mg_fns *t, int dev, sizes z, uint64_t seed)
{
    int fails = 0;
    cudaStream_t st = NULL;
    float *x = NULL, *b = NULL, *dx = NULL, *db = NULL, *dy = NULL;
    double *ref = NULL, *scale = NULL;
    size_t most = (size_t)(z.sm_n * z.sm_m);
    if ((size_t)z.sa_n > most)
        most = (size_t)z.sa_n;
    if ((size_t)(z.cs_n * z.cs_m) > most)
        most = (size_t)(z.cs_n * z.cs_m);
    if ((size_t)(z.br_n * z.br_m) > most)
        most = (size_t)(z.br_n * z.br_m);
    x = host_random(most, seed);
    b = host_random((size_t)z.br_m, seed + 1);
    ref = malloc(most * sizeof *ref);
    scale = malloc(most * sizeof *scale);
    if (!x || !b || !ref || !scale) {
        printf("FAIL out of host memory\n");
        fails = 1;
        goto done;
    }
    CU(cudaStreamCreate(&st));
    CU(cudaMalloc((void **)&dx, most * sizeof *dx));
    CU(cudaMalloc((void **)&dy, most * sizeof *dy));
    CU(cudaMalloc((void **)&db, (size_t)z.br_m * sizeof *db));
    CU(cudaMemcpyAsync(dx, x, most * sizeof *dx, cudaMemcpyHostToDevice, st));
    CU(cudaMemcpyAsync(db, b, (size_t)z.br_m * sizeof *db, cudaMemcpyHostToDevice, st));

    /* softmax of each row */
    CU(cudaMemsetAsync(dy, 0xff, most * sizeof *dy, st)); /* NaN: unwritten fails */
    FU("softmax", t->softmax(dx, dy, z.sm_n, z.sm_m, st));
    CU(cudaStreamSynchronize(st));
    for (int64_t r = 0; r < z.sm_n; r++) {
        const float *xr = x + r * z.sm_m;
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < z.sm_m; c++)
            m = xr[c] > m ? xr[c] : m;
        for (int64_t c = 0; c < z.sm_m; c++)
            s += ref[r * z.sm_m + c] = exp((double)xr[c] - m);
        for (int64_t c = 0; c < z.sm_m; c++)
            ref[r * z.sm_m + c] /= s;
    }
    fails += compare("softmax", t, dev, dy, ref, NULL, (size_t)(z.sm_n * z.sm_m), 1e-5);

    /* sum of |x| over a vector */
    CU(cudaMemsetAsync(dy, 0xff, sizeof *dy, st));
    FU("sum_abs", t->sum_abs(dx, dy, z.sa_n, st));
    CU(cudaStreamSynchronize(st));
    ref[0] = 0;
    for (int64_t i = 0; i < z.sa_n; i++)
        ref[0] += fabs((double)x[i]);
    fails += compare("sum_abs", t, dev, dy, ref, NULL, 1, 1e-5);

    /* sum over the rows: a column's error grows with its sum of |x| */
    CU(cudaMemsetAsync(dy, 0xff, (size_t)z.cs_m * sizeof *dy, st));
    FU("colsum", t->colsum(dx, dy, z.cs_n, z.cs_m, st));
    CU(cudaStreamSynchronize(st));
    for (int64_t c = 0; c < z.cs_m; c++) {
        ref[c] = scale[c] = 0;
        for (int64_t r = 0; r < z.cs_n; r++) {
            ref[c] += x[r * z.cs_m + c];
            scale[c] += fabs((double)x[r * z.cs_m + c]);
        }
    }
    fails += compare("colsum", t, dev, dy, ref, scale, (size_t)z.cs_m, 1e-5);

    /* relu(x + b): one rounding, the same as the CPU's */
    CU(cudaMemsetAsync(dy, 0xff, most * sizeof *dy, st));
    FU("bias_relu", t->bias_relu(dx, db, dy, z.br_n, z.br_m, st));
    CU(cudaStreamSynchronize(st));
    for (int64_t i = 0; i < z.br_n * z.br_m; i++) {
        float v = x[i] + b[i % z.br_m];
        ref[i] = v > 0 ? v : 0;
    }
    fails += compare("bias_relu", t, dev, dy, ref, NULL, (size_t)(z.br_n * z.br_m), 0);
    CU(cudaGetLastError());
done:
    if (dx)
        cudaFree(dx);
    if (dy)
        cudaFree(dy);
    if (db)
        cudaFree(db);
    if (st)
        cudaStreamDestroy(st);
    free(x);
    free(b);
    free(ref);
    free(scale);
    return fails;
}

static const mg_fns *const targets[] = {&mg_cuda, &mg_nvrtc};

/* ---- at once: one thread per device -------------------------------------- */

typedef struct worker {
    pthread_t thread;
    int dev, fails;
} worker;

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;

static void *work(void *arg)
{
    worker *w = arg;
    pthread_mutex_lock(&gate_mu);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    if (cudaSetDevice(w->dev) != cudaSuccess) {
        printf("FAIL thread for device %d: cudaSetDevice\n", w->dev);
        w->fails = 1;
        return NULL;
    }
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < 2; i++)
            w->fails += run_target(targets[i], w->dev, sizes_for(w->dev, 1),
                                   (uint64_t)(1000 + 10 * w->dev + rep));
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        printf("FAIL %d CUDA device(s) visible: this test needs two or more\n", n);
        return 1;
    }
    if (argc > 1 && atoi(argv[1]) >= 2 && atoi(argv[1]) < n)
        n = atoi(argv[1]);
    int fails = 0;
    printf("devices: %d\n", n);

    for (int dev = 0; dev < n; dev++) {
        if (cudaSetDevice(dev) != cudaSuccess) {
            printf("FAIL cudaSetDevice(%d)\n", dev);
            return 1;
        }
        for (int i = 0; i < 2; i++) {
            sizes z = sizes_for(dev, 0);
            int f = run_target(targets[i], dev, z, (uint64_t)(10 * dev + i));
            printf("in turn: device %d %s: softmax %lldx%lld, sum_abs %lld, colsum %lldx%lld, "
                   "bias_relu %lldx%lld: %s\n", dev, targets[i]->target, (long long)z.sm_n,
                   (long long)z.sm_m, (long long)z.sa_n, (long long)z.cs_n, (long long)z.cs_m,
                   (long long)z.br_n, (long long)z.br_m, f ? "FAIL" : "ok");
            fails += f;
        }
    }

    worker *w = calloc((size_t)n, sizeof *w);
    for (int dev = 0; dev < n; dev++) {
        w[dev].dev = dev;
        pthread_create(&w[dev].thread, NULL, work, &w[dev]);
    }
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    for (int dev = 0; dev < n; dev++) {
        pthread_join(w[dev].thread, NULL);
        printf("at once: device %d (both targets, twice): %s\n", dev, w[dev].fails ? "FAIL" : "ok");
        fails += w[dev].fails;
    }
    free(w);

    fusert_cache_stats cs;
    fusert_get_cache_stats(&cs);
    printf("nvrtc cache: %llu hits, %llu compiles, %llu untrusted\n", (unsigned long long)cs.hits,
           (unsigned long long)cs.compiles, (unsigned long long)cs.untrusted);
    if (fails) {
        printf("FAIL multi-gpu test: %d failure(s)\n", fails);
        return 1;
    }
    printf("PASS multi-gpu test\n");
    return 0;
}
