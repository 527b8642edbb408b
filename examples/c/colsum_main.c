/* colsum_main.c -- call the fused colsum of examples/colsum.fuse from C.
 *
 *   fn colsum(x: f32[N, M]) -> f32[M]          sum(x, axis=0)
 *
 * A reduction over the outer axis: one sum per column of a row-major matrix.
 * Inputs in [-2, 2) from a fixed seed; the sums are checked against float64 on
 * the CPU with the f32 tolerance of docs/language.md for a reduction over N
 * (rtol 1e-5, afrac 1e-6 + 1e-6 * sqrt(N)).  Built by the make/, cmake/ and
 * nvrtc/ folders beside this file.
 *
 *   colsum_main [N [M]]        (default 4097 x 1003)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "colsum.h"
#include "driver_util.h"

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 4097), m = du_size_arg(argc, argv, 2, 1003);
    if (n < 0 || m < 0 || argc > 3) {
        fprintf(stderr, "usage: colsum_main [N [M]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, m), bytes = count * sizeof(float), ybytes = (size_t)m * sizeof(float);
    float *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(3);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(y, m);
    HOST_ALLOC(ref, m);
    du_fill(x, count, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dy, ybytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, ybytes, stream)); /* NaN: unwritten values show */

    FUSERT_OK("colsum", colsum(dx, dy, n, m, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, ybytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("colsum %lld x %lld in %d kernel(s)\n", (long long)n, (long long)m,
           colsum_kernel_count());
    for (int64_t j = 0; j < m; j++)
        ref[j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
            ref[j] += (double)x[i * m + j];
    rc = du_check("y", y, ref, (size_t)m, du_f32_tolerance(0, n)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(y);
    free(ref);
    return du_verdict("colsum", rc);
}
