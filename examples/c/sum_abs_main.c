/* sum_abs_main.c -- call the fused sum_abs of examples/sum_abs.fuse from C.
 *
 *   fn sum_abs(x: f32[N]) -> f32          sum(abs(x)) over every element
 *
 * A full reduction to a scalar: the result is a device buffer of one float.
 * Inputs in [-2, 2) from a fixed seed; the sum is checked against float64 on
 * the CPU with the f32 tolerance of docs/language.md for a reduction over N
 * (rtol 1e-5, afrac 1e-6 + 1e-6 * sqrt(N) of the result).  Built by the make/,
 * cmake/ and nvrtc/ folders beside this file.
 *
 *   sum_abs_main [N]        (default 1000003)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "sum_abs.h"
#include "driver_util.h"

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 1000003);
    if (n < 0 || argc > 2) {
        fprintf(stderr, "usage: sum_abs_main [N] (a positive size)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, 1), bytes = count * sizeof(float);
    float *x = NULL, *dx = NULL, *dsum = NULL, sum = 0;
    double ref = 0;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(7);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    du_fill(x, count, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dsum, sizeof(float))); /* a scalar result: one element */
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dsum, 0xff, sizeof(float), stream)); /* NaN until written */

    FUSERT_OK("sum_abs", sum_abs(dx, dsum, n, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(&sum, dsum, sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("sum_abs %lld in %d kernel(s)\n", (long long)n, sum_abs_kernel_count());
    for (size_t i = 0; i < count; i++)
        ref += fabs((double)x[i]);
    rc = du_check("sum", &sum, &ref, 1, du_f32_tolerance(0, n)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dsum);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    return du_verdict("sum_abs", rc);
}
