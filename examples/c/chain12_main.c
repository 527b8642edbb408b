/* chain12_main.c -- call the fused chain12 of examples/chain12.fuse from C.
 *
 *   fn chain12(x: f32[N]) -> f32[N]
 *       t = x * 1.5 + 0.5;  u = tanh(t);  v = u * sigmoid(x);  w = v + x * x
 *       return sqrt(abs(w) + 1) * exp(-abs(x))
 *
 * Twelve elementwise ops in one loop kernel.  Inputs in [-2, 2) from a fixed
 * seed; the result is checked against float64 on the CPU with the f32
 * tolerance of docs/language.md (transcendentals: rtol 4e-5, afrac 4e-6).
 * Built by the make/, cmake/ and nvrtc/ folders beside this file.
 *
 *   chain12_main [N]        (default 1000003)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "chain12.h"
#include "driver_util.h"

/* The reference, op by op in float64 (sigmoid(x) = 1 / (1 + exp(-x))). */
static double chain12_cpu(double x)
{
    double t = x * 1.5 + 0.5;
    double u = tanh(t);
    double v = u * (1.0 / (1.0 + exp(-x)));
    double w = v + x * x;
    return sqrt(fabs(w) + 1) * exp(-fabs(x));
}

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 1000003);
    if (n < 0 || argc > 2) {
        fprintf(stderr, "usage: chain12_main [N] (a positive size)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, 1), bytes = count * sizeof(float);
    float *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(12);
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

    FUSERT_OK("chain12", chain12(dx, dy, n, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("chain12 %lld in %d kernel(s)\n", (long long)n, chain12_kernel_count());
    for (size_t i = 0; i < count; i++)
        ref[i] = chain12_cpu((double)x[i]);
    rc = du_check("y", y, ref, count, du_f32_tolerance(1, -1)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(y);
    free(ref);
    return du_verdict("chain12", rc);
}
