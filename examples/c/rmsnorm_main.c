/* rmsnorm_main.c -- call the fused rmsnorm of examples/rmsnorm.fuse from C.
 *
 *   fn rmsnorm(x: f32[N, D], w: f32[D]) -> f32[N, D]
 *       return x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6) * w
 *
 * Root-mean-square normalisation of every row, then a weight per column: one
 * row-persistent kernel.  Inputs in [-2, 2) from a fixed seed; the result is
 * checked against float64 on the CPU with the f32 tolerance of
 * docs/language.md (rsqrt: x4; reduction over D).  Built by the make/, cmake/
 * and nvrtc/ folders beside this file.
 *
 *   rmsnorm_main [N [D]]        (default 1001 x 1023)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "rmsnorm.h"
#include "driver_util.h"

/* The reference: each row in float64 (1e-6 is an f32 literal here, as in the
 * program). */
static void rmsnorm_cpu(const float *x, const float *w, double *y, int64_t n, int64_t d)
{
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * d;
        double s = 0;
        for (int64_t j = 0; j < d; j++)
            s += (double)xr[j] * (double)xr[j];
        double r = 1.0 / sqrt(s / (double)d + (double)1e-6f);
        for (int64_t j = 0; j < d; j++)
            y[i * d + j] = (double)xr[j] * r * (double)w[j];
    }
}

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 1001), d = du_size_arg(argc, argv, 2, 1023);
    if (n < 0 || d < 0 || argc > 3) {
        fprintf(stderr, "usage: rmsnorm_main [N [D]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, d), bytes = count * sizeof(float), wbytes = (size_t)d * sizeof(float);
    float *x = NULL, *w = NULL, *y = NULL, *dx = NULL, *dw = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(6);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(w, d);
    HOST_ALLOC(y, count);
    HOST_ALLOC(ref, count);
    du_fill(x, count, &rng, -2, 2);
    du_fill(w, (size_t)d, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dw, wbytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemcpyAsync(dw, w, wbytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, bytes, stream)); /* NaN: unwritten values show */

    FUSERT_OK("rmsnorm", rmsnorm(dx, dw, dy, n, d, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("rmsnorm %lld x %lld in %d kernel(s)\n", (long long)n, (long long)d,
           rmsnorm_kernel_count());
    rmsnorm_cpu(x, w, ref, n, d);
    rc = du_check("y", y, ref, count, du_f32_tolerance(1, d)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dw);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(w);
    free(y);
    free(ref);
    return du_verdict("rmsnorm", rc);
}
