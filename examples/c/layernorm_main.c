/* layernorm_main.c -- call the fused layernorm of examples/layernorm.fuse from C.
 *
 *   fn layernorm(x: f32[N, D], g: f32[D], b: f32[D], eps: f32 = 1e-5) -> (y: f32[N, D])
 *       mu = mean(x, axis=-1, keepdims=true);  xc = x - mu
 *       v = mean(xc * xc, axis=-1, keepdims=true)
 *       y = xc * rsqrt(v + eps) * g + b
 *
 * Layer normalisation of every row with a scale g and a shift b: one
 * row-persistent kernel.  eps has a default in the program, but the generated
 * C function still takes it (after the tensor params, in declared order).
 * Inputs in [-2, 2) from a fixed seed; the result is checked against float64
 * on the CPU with the f32 tolerance of docs/language.md (rsqrt: x4; reduction
 * over D).  Built by the make/, cmake/ and nvrtc/ folders beside this file.
 *
 *   layernorm_main [N [D]]        (default 1001 x 1023)
 * Exit status: 0 when the check passes, 1 otherwise (or on an error). */
#include "layernorm.h"
#include "driver_util.h"

/* The reference: each row in float64, with the same f32 eps the GPU gets. */
static void layernorm_cpu(const float *x, const float *g, const float *b, float eps, double *y,
                          int64_t n, int64_t d)
{
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * d;
        double mu = 0, v = 0;
        for (int64_t j = 0; j < d; j++)
            mu += (double)xr[j];
        mu /= (double)d;
        for (int64_t j = 0; j < d; j++)
            v += ((double)xr[j] - mu) * ((double)xr[j] - mu);
        v /= (double)d;
        double r = 1.0 / sqrt(v + (double)eps);
        for (int64_t j = 0; j < d; j++)
            y[i * d + j] = ((double)xr[j] - mu) * r * (double)g[j] + (double)b[j];
    }
}

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 1001), d = du_size_arg(argc, argv, 2, 1023);
    if (n < 0 || d < 0 || argc > 3) {
        fprintf(stderr, "usage: layernorm_main [N [D]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    const float eps = 1e-5f; /* the default in layernorm.fuse */
    size_t count = du_count(n, d), bytes = count * sizeof(float), vbytes = (size_t)d * sizeof(float);
    float *x = NULL, *g = NULL, *b = NULL, *y = NULL;
    float *dx = NULL, *dg = NULL, *db = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(5);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(g, d);
    HOST_ALLOC(b, d);
    HOST_ALLOC(y, count);
    HOST_ALLOC(ref, count);
    du_fill(x, count, &rng, -2, 2);
    du_fill(g, (size_t)d, &rng, -2, 2);
    du_fill(b, (size_t)d, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dg, vbytes));
    CUDA_OK(cudaMalloc((void **)&db, vbytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemcpyAsync(dg, g, vbytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemcpyAsync(db, b, vbytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, bytes, stream)); /* NaN: unwritten values show */

    /* params in declared order (x, g, b, then the scalar eps by value), the
     * result y, the dims (N, D), the stream */
    FUSERT_OK("layernorm", layernorm(dx, dg, db, eps, dy, n, d, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("layernorm %lld x %lld in %d kernel(s)\n", (long long)n, (long long)d,
           layernorm_kernel_count());
    layernorm_cpu(x, g, b, eps, ref, n, d);
    rc = du_check("y", y, ref, count, du_f32_tolerance(1, d)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dg);
    CUDA_FREE(db);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(g);
    free(b);
    free(y);
    free(ref);
    return du_verdict("layernorm", rc);
}
