/* host_gpu_main.c -- runs the generated host_gpu.fuse fns on a GPU (either
 * target: the API is the same) against CPU references, through the typed,
 * _ws and _packed entries, with empty tensors and repeated calls (the
 * reduction scratch must be re-zeroed per call).  Prints PASS/FAIL lines. */
#include "host_gpu.h"
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(3); } } while (0)

static void status(const char *what, fusert_status st)
{
    if (st != FUSERT_SUCCESS) {
        printf("FAIL %s: %s: %s\n", what, fusert_status_name(st), fusert_last_error());
        fails++;
    }
}
static void report(const char *what, double err, double tol)
{
    printf("%s %s maxerr %.3g\n", err <= tol ? "PASS" : "FAIL", what, err);
    if (!(err <= tol))
        fails++;
}
static float *dev(const float *h, size_t n)
{
    float *d = NULL;
    CK(cudaMalloc((void **)&d, n * 4 + 4));
    if (h && n)
        CK(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
    return d;
}
static void host(float *h, const float *d, size_t n)
{
    CK(cudaDeviceSynchronize());
    if (n)
        CK(cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost));
}
static float frand(void) { return (float)rand() / RAND_MAX * 4.0f - 2.0f; }

static void check_softmax(long N, long M, int mode)
{
    size_t n = (size_t)(N * M);
    float *x = malloc(n * 4 + 4), *y = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) x[i] = frand() * 3;
    float *dx = dev(x, n), *dy = dev(NULL, n);
    if (mode == 0) {
        status("softmax", softmax(dx, dy, N, M, NULL));
    } else if (mode == 1) {
        size_t ws = softmax_workspace_size(N, M);
        void *w = NULL;
        CK(cudaMalloc(&w, ws ? ws : 1));
        status("softmax_ws", softmax_ws(dx, dy, N, M, w, ws, NULL));
        host(y, dy, 0);
        CK(cudaFree(w));
    } else {
        cudaStream_t s;
        CK(cudaStreamCreate(&s));
        void *bufs[] = {dx, dy};
        int64_t dims[] = {N, M};
        status("softmax_packed", softmax_packed(bufs, NULL, dims, (fusert_stream)s));
        CK(cudaStreamSynchronize(s));
        CK(cudaStreamDestroy(s));
    }
    host(y, dy, n);
    double err = 0;
    for (long r = 0; r < N; r++) {
        double mx = -INFINITY, sum = 0;
        for (long c = 0; c < M; c++) mx = fmax(mx, x[r * M + c]);
        for (long c = 0; c < M; c++) sum += exp(x[r * M + c] - mx);
        for (long c = 0; c < M; c++) err = fmax(err, fabs(exp(x[r * M + c] - mx) / sum - y[r * M + c]));
    }
    char what[96];
    snprintf(what, sizeof what, "softmax[%ld,%ld] mode %d", N, M, mode);
    report(what, err, 1e-5);
    cudaFree(dx); cudaFree(dy); free(x); free(y);
}

static void check_layernorm(long N, long D)
{
    size_t n = (size_t)(N * D);
    float *x = malloc(n * 4), *y = malloc(n * 4), *g = malloc(D * 4), *b = malloc(D * 4);
    for (size_t i = 0; i < n; i++) x[i] = frand() + 0.5f;
    for (long i = 0; i < D; i++) { g[i] = frand(); b[i] = frand(); }
    float *dx = dev(x, n), *dy = dev(NULL, n), *dg = dev(g, D), *db = dev(b, D);
    status("layernorm", layernorm(dx, dg, db, 1e-5f, dy, N, D, NULL));
    host(y, dy, n);
    double err = 0;
    for (long r = 0; r < N; r++) {
        double mu = 0, v = 0;
        for (long c = 0; c < D; c++) mu += x[r * D + c];
        mu /= D;
        for (long c = 0; c < D; c++) v += (x[r * D + c] - mu) * (x[r * D + c] - mu);
        v /= D;
        for (long c = 0; c < D; c++) {
            double ref = (x[r * D + c] - mu) / sqrt(v + 1e-5) * g[c] + b[c];
            err = fmax(err, fabs(ref - y[r * D + c]));
        }
    }
    report("layernorm", err, 1e-4);
    cudaFree(dx); cudaFree(dy); cudaFree(dg); cudaFree(db); free(x); free(y); free(g); free(b);
}

static void check_adam(long K)
{
    float *h[7], *d[7];
    for (int i = 0; i < 7; i++) {
        h[i] = malloc(K * 4 + 4);
        for (long k = 0; k < K; k++) h[i][k] = i == 3 ? fabsf(frand()) : frand();
        d[i] = dev(i < 4 ? h[i] : NULL, K);
    }
    status("adam_step", adam_step(d[0], d[1], d[2], d[3], 0.01f, 0.9f, 0.999f, d[4], d[5], d[6], K, NULL));
    for (int i = 4; i < 7; i++) host(h[i], d[i], K);
    double err = 0;
    for (long k = 0; k < K; k++) {
        double m2 = 0.9f * h[2][k] + (1 - 0.9f) * h[1][k];
        double v2 = 0.999f * h[3][k] + (1 - 0.999f) * (double)h[1][k] * h[1][k];
        double p2 = h[0][k] - 0.01f * m2 / (sqrt(v2) + 1e-8);
        err = fmax(err, fabs(m2 - h[5][k]));
        err = fmax(err, fabs(v2 - h[6][k]));
        err = fmax(err, fabs(p2 - h[4][k]) / (1 + fabs(p2)));
    }
    report("adam_step", err, 1e-4);
    for (int i = 0; i < 7; i++) { cudaFree(d[i]); free(h[i]); }
}

static void check_sum_abs(long K)
{
    float *x = malloc(K * 4 + 4), r = -1;
    double ref = 0;
    for (long k = 0; k < K; k++) { x[k] = frand(); ref += fabs(x[k]); }
    float *dx = K ? dev(x, K) : NULL, *dr = dev(NULL, 1);
    float bad = 12345;
    CK(cudaMemcpy(dr, &bad, 4, cudaMemcpyHostToDevice));
    status("sum_abs", sum_abs(dx, dr, K, NULL));
    host(&r, dr, 1);
    char what[64];
    snprintf(what, sizeof what, "sum_abs[%ld] (%g vs %g)", K, r, ref);
    report(what, fabs(r - ref) / (1 + fabs(ref)), 1e-5);
    /* twice: the scratch must be reset per call */
    status("sum_abs again", sum_abs(dx, dr, K, NULL));
    host(&r, dr, 1);
    snprintf(what, sizeof what, "sum_abs[%ld] again", K);
    report(what, fabs(r - ref) / (1 + fabs(ref)), 1e-5);
    cudaFree(dx); cudaFree(dr); free(x);
}

static void check_colsum(long N, long M)
{
    size_t n = (size_t)(N * M);
    float *x = malloc(n * 4 + 4), *y = malloc(M * 4 + 4);
    for (size_t i = 0; i < n; i++) x[i] = frand();
    float *dx = dev(x, n), *dy = dev(NULL, M);
    status("colsum", colsum(dx, dy, N, M, NULL));
    host(y, dy, M);
    double err = 0;
    for (long c = 0; c < M; c++) {
        double s = 0;
        for (long r = 0; r < N; r++) s += x[r * M + c];
        err = fmax(err, fabs(s - y[c]) / (1 + fabs(s)));
    }
    char what[64];
    snprintf(what, sizeof what, "colsum[%ld,%ld]", N, M);
    report(what, err, 1e-5);
    cudaFree(dx); cudaFree(dy); free(x); free(y);
}

static void check_half(void)
{
    uint16_t x[3] = {0x3E00, 0x3C00, 0xC000}, y[3] = {0}; /* 1.5, 1, -2 */
    uint16_t *dx, *dy;
    CK(cudaMalloc((void **)&dx, 8)); CK(cudaMalloc((void **)&dy, 8));
    CK(cudaMemcpy(dx, x, 6, cudaMemcpyHostToDevice));
    status("halfscale", halfscale(dx, 2.0f, dy, 3, NULL));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(y, dy, 6, cudaMemcpyDeviceToHost));
    int ok = y[0] == 0x4200 && y[1] == 0x4000 && y[2] == 0xC400;
    printf("%s halfscale %04x %04x %04x\n", ok ? "PASS" : "FAIL", y[0], y[1], y[2]);
    fails += !ok;
    cudaFree(dx); cudaFree(dy);
}

static void check_stats(long N, long M)
{
    size_t n = (size_t)(N * M);
    float *x = malloc(n * 4 + 4), *mx = malloc(N * 4 + 4), *sq = malloc(n * 4 + 4), mean = 0;
    for (size_t i = 0; i < n; i++) x[i] = frand();
    float *dx = dev(x, n), *dmx = dev(NULL, N), *dmean = dev(NULL, 1), *dsq = dev(NULL, n);
    status("stats", stats(dx, dmx, dmean, dsq, N, M, NULL));
    host(mx, dmx, N); host(&mean, dmean, 1); host(sq, dsq, n);
    double err = 0, tot = 0;
    for (long r = 0; r < N; r++) {
        double m = -INFINITY;
        for (long c = 0; c < M; c++) { m = fmax(m, x[r * M + c]); tot += x[r * M + c];
            err = fmax(err, fabs((double)x[r * M + c] * x[r * M + c] - sq[r * M + c])); }
        err = fmax(err, fabs(m - mx[r]));
    }
    err = fmax(err, fabs(tot / n - mean));
    report("stats", err, 1e-5);
    cudaFree(dx); cudaFree(dmx); cudaFree(dmean); cudaFree(dsq); free(x); free(mx); free(sq);
}

int main(void)
{
    srand(1);
    fusert_status st = softmax(NULL, NULL, 4, 4, NULL);
    printf("%s null check: %s\n", st == FUSERT_ERROR_NULL_POINTER ? "PASS" : "FAIL", fusert_last_error());
    fails += st != FUSERT_ERROR_NULL_POINTER;
    check_softmax(1000, 1000, 0);
    check_softmax(333, 4096, 1);
    check_softmax(64, 100000, 2);
    check_softmax(0, 10, 0);
    check_softmax(3, 7, 0);
    check_layernorm(512, 1024);
    check_layernorm(5, 3000);
    check_adam(100003);
    check_adam(0);
    check_sum_abs(1 << 22);
    check_sum_abs(1000);
    check_sum_abs(0);
    check_colsum(777, 513);
    check_colsum(0, 9);
    check_half();
    check_stats(300, 500);
    printf("kernels: softmax %d layernorm %d adam %d sum_abs %d colsum %d stats %d\n", softmax_kernel_count(),
           layernorm_kernel_count(), adam_step_kernel_count(), sum_abs_kernel_count(), colsum_kernel_count(),
           stats_kernel_count());
    printf("%s: %d failures\n", fails ? "FAILED" : "ALL PASSED", fails);
    return fails != 0;
}
