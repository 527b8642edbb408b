/* l2norm_main.c -- call the fused l2norm of examples/l2norm.fuse from C.
 *
 *   fn l2norm(x: f32[N, D]) -> f32[N, D]
 *       return x * rsqrt(sum(x * x, axis=-1, keepdims=true) + 1e-12)
 *
 * Every row scaled to unit Euclidean length: a row reduction broadcast back
 * over its row.  Inputs in [-2, 2) from a fixed seed; the result is checked
 * against float64 on the CPU with the f32 tolerance of docs/language.md
 * (rsqrt: x4; reduction over D).  Built by the make/, cmake/ and nvrtc/
 * folders beside this file.
 *
 *   l2norm_main [N [D]]        (default 2049 x 1001)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "l2norm.h"
#include "driver_util.h"

/* The reference: each row in float64.  The literal 1e-12 takes the dtype of
 * the other operand, f32, so it is the float nearest 1e-12. */
static void l2norm_cpu(const float *x, double *y, int64_t n, int64_t d)
{
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * d;
        double s = 0;
        for (int64_t j = 0; j < d; j++)
            s += (double)xr[j] * (double)xr[j];
        double r = 1.0 / sqrt(s + (double)1e-12f);
        for (int64_t j = 0; j < d; j++)
            y[i * d + j] = (double)xr[j] * r;
    }
}

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 2049), d = du_size_arg(argc, argv, 2, 1001);
    if (n < 0 || d < 0 || argc > 3) {
        fprintf(stderr, "usage: l2norm_main [N [D]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, d), bytes = count * sizeof(float);
    float *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(2);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(y, count);
    HOST_ALLOC(ref, count);
    du_fill(x, count, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, bytes, stream)); /* NaN: unwritten values show */

    FUSERT_OK("l2norm", l2norm(dx, dy, n, d, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("l2norm %lld x %lld in %d kernel(s)\n", (long long)n, (long long)d,
           l2norm_kernel_count());
    l2norm_cpu(x, ref, n, d);
    rc = du_check("y", y, ref, count, du_f32_tolerance(1, d)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(y);
    free(ref);
    return du_verdict("l2norm", rc);
}
