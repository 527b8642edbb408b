/* bias_relu_main.c -- call the fused bias_relu of examples/bias_relu.fuse from C.
 *
 *   fn bias_relu(x: f32[N, M], b: f32[M]) -> f32[N, M]     relu(x + b)
 *
 * b broadcasts over the rows of x.  One loop kernel: the benchmark case bias_relu,
 * bandwidth-bound at large sizes.
 * Inputs in [-2, 2) from a fixed seed; the result is checked against float64
 * on the CPU with the f32 tolerance of docs/language.md (no transcendental,
 * no reduction: rtol 1e-5, afrac 1e-6).  Built by the make/, cmake/ and nvrtc/
 * folders beside this file (see README.md).
 *
 *   bias_relu_main [N [M]]        (default 2047 x 1001)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error).
 *
 * small_bias_relu_main.c is this driver for the same program under another
 * name and default size: it defines the BR_* macros and includes this file. */
#ifndef BR_FN
#define BR_FN bias_relu
#define BR_HEADER "bias_relu.h"
#define BR_DEFAULT_N 2047
#define BR_DEFAULT_M 1001
#endif
#define BR_STR2(x) #x
#define BR_STR(x) BR_STR2(x)
#define BR_CAT2(a, b) a##b
#define BR_CAT(a, b) BR_CAT2(a, b)
#include BR_HEADER
#include "driver_util.h"

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, BR_DEFAULT_N), m = du_size_arg(argc, argv, 2, BR_DEFAULT_M);
    if (n < 0 || m < 0 || argc > 3) {
        fprintf(stderr, "usage: %s_main [N [M]] (positive sizes)\n", BR_STR(BR_FN));
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, m), bytes = count * sizeof(float), bbytes = (size_t)m * sizeof(float);
    float *x = NULL, *b = NULL, *y = NULL, *dx = NULL, *db = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(1);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(b, m);
    HOST_ALLOC(y, count);
    HOST_ALLOC(ref, count);
    du_fill(x, count, &rng, -2, 2);
    du_fill(b, (size_t)m, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&db, bbytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemcpyAsync(db, b, bbytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, bytes, stream)); /* NaN: unwritten values show */

    /* tensor params in declared order, the result, the dims (N, M), the stream */
    FUSERT_OK(BR_STR(BR_FN), BR_FN(dx, db, dy, n, m, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("%s %lld x %lld in %d kernel(s)\n", BR_STR(BR_FN), (long long)n, (long long)m,
           BR_CAT(BR_FN, _kernel_count)());
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            double v = (double)x[i * m + j] + (double)b[j];
            ref[i * m + j] = v > 0 ? v : 0;
        }
    rc = du_check("y", y, ref, count, du_f32_tolerance(0, -1)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(db);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(b);
    free(y);
    free(ref);
    return du_verdict(BR_STR(BR_FN), rc);
}
