/* adam_step_main.c -- call the fused adam_step of examples/adam_step.fuse from C.
 *
 *   fn adam_step(p: f32[K], g: f32[K], m: f32[K], v: f32[K], lr: f32, b1: f32, b2: f32)
 *           -> (p2: f32[K], m2: f32[K], v2: f32[K])
 *       m2 = b1 * m + (1 - b1) * g
 *       v2 = b2 * v + (1 - b2) * g * g
 *       p2 = p - lr * m2 / (sqrt(v2) + 1e-8)
 *
 * One Adam update: three results of one loop kernel.  p, g and m in [-2, 2),
 * v in [0, 2) (a second moment is never negative) from a fixed seed; lr = 1e-3,
 * b1 = 0.9, b2 = 0.999.  The three results are checked against float64 on the
 * CPU with the f32 tolerance of docs/language.md (sqrt: x4).  Built by the
 * make/, cmake/ and nvrtc/ folders beside this file.
 *
 *   adam_step_main [K]        (default 1000003)
 * Exit status: 0 when every check passes, 1 otherwise (or on an error). */
#include "adam_step.h"
#include "driver_util.h"

int main(int argc, char **argv)
{
    int64_t k = du_size_arg(argc, argv, 1, 1000003);
    if (k < 0 || argc > 2) {
        fprintf(stderr, "usage: adam_step_main [K] (a positive size)\n");
        return 1;
    }
    int rc = 1;
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f;
    size_t count = du_count(k, 1), bytes = count * sizeof(float);
    /* host and device copies of p, g, m, v (inputs) and p2, m2, v2 (results) */
    float *h[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    float *d[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *ref[3] = {NULL, NULL, NULL};
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(8);
    if (count == 0)
        goto fail;
    for (int i = 0; i < 7; i++)
        HOST_ALLOC(h[i], count);
    for (int i = 0; i < 3; i++)
        HOST_ALLOC(ref[i], count);
    du_fill(h[0], count, &rng, -2, 2); /* p */
    du_fill(h[1], count, &rng, -2, 2); /* g */
    du_fill(h[2], count, &rng, -2, 2); /* m */
    du_fill(h[3], count, &rng, 0, 2);  /* v */

    CUDA_OK(cudaStreamCreate(&stream));
    for (int i = 0; i < 7; i++)
        CUDA_OK(cudaMalloc((void **)&d[i], bytes));
    for (int i = 0; i < 4; i++)
        CUDA_OK(cudaMemcpyAsync(d[i], h[i], bytes, cudaMemcpyHostToDevice, stream));
    for (int i = 4; i < 7; i++)
        CUDA_OK(cudaMemsetAsync(d[i], 0xff, bytes, stream)); /* NaN: unwritten values show */

    /* tensor params and scalars in declared order, the results p2, m2, v2,
     * the dim K, the stream */
    FUSERT_OK("adam_step", adam_step(d[0], d[1], d[2], d[3], lr, b1, b2, d[4], d[5], d[6], k,
                                     (fusert_stream)stream));
    for (int i = 4; i < 7; i++)
        CUDA_OK(cudaMemcpyAsync(h[i], d[i], bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("adam_step %lld in %d kernel(s)\n", (long long)k, adam_step_kernel_count());
    /* The reference, op by op in float64 from the same f32 scalars; the
     * literal 1e-8 is an f32 (it takes the dtype of the other operand). */
    for (size_t i = 0; i < count; i++) {
        double p = h[0][i], g = h[1][i], m = h[2][i], v = h[3][i];
        double m2 = (double)b1 * m + (1 - (double)b1) * g;
        double v2 = (double)b2 * v + (1 - (double)b2) * g * g;
        ref[0][i] = p - (double)lr * m2 / (sqrt(v2) + (double)1e-8f);
        ref[1][i] = m2;
        ref[2][i] = v2;
    }
    du_tol tol = du_f32_tolerance(1, -1);
    int ok = du_check("p2", h[4], ref[0], count, tol);
    ok &= du_check("m2", h[5], ref[1], count, tol);
    ok &= du_check("v2", h[6], ref[2], count, tol);
    rc = ok ? 0 : 1;

fail:
    for (int i = 0; i < 7; i++)
        CUDA_FREE(d[i]);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    for (int i = 0; i < 7; i++)
        free(h[i]);
    for (int i = 0; i < 3; i++)
        free(ref[i]);
    return du_verdict("adam_step", rc);
}
