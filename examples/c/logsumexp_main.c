/* logsumexp_main.c -- call both fns of examples/logsumexp.fuse from C.
 *
 *   fn logsumexp_rows(x: f32[N, M]) -> f32[N]      logsumexp(x, axis=1)
 *   fn log_softmax(x: f32[N, M]) -> f32[N, M]      x - logsumexp(x, axis=1, keepdims=true)
 *
 * One module, two host functions (both declared in logsumexp.h): a row
 * reduction and a row-persistent kernel that broadcasts it back.  Inputs in
 * [-2, 2) from a fixed seed; both results are checked against float64 on the
 * CPU with the f32 tolerance of docs/language.md (exp and log: x4; reduction
 * over M).  Built by the make/, cmake/ and nvrtc/ folders beside this file.
 *
 *   logsumexp_main [N [M]]        (default 2049 x 1001)
 * Exit status: 0 when both checks pass, 1 otherwise (or on an error). */
#include "logsumexp.h"
#include "driver_util.h"

/* The reference: the stable log-sum-exp of each row in float64. */
static void logsumexp_cpu(const float *x, double *lse, int64_t n, int64_t m)
{
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * m;
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < m; j++)
            mx = xr[j] > mx ? xr[j] : mx;
        for (int64_t j = 0; j < m; j++)
            s += exp((double)xr[j] - mx);
        lse[i] = mx + log(s);
    }
}

int main(int argc, char **argv)
{
    int64_t n = du_size_arg(argc, argv, 1, 2049), m = du_size_arg(argc, argv, 2, 1001);
    if (n < 0 || m < 0 || argc > 3) {
        fprintf(stderr, "usage: logsumexp_main [N [M]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(n, m), bytes = count * sizeof(float), lbytes = (size_t)n * sizeof(float);
    float *x = NULL, *lse = NULL, *ls = NULL, *dx = NULL, *dlse = NULL, *dls = NULL;
    double *ref_lse = NULL, *ref_ls = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(4);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(lse, n);
    HOST_ALLOC(ls, count);
    HOST_ALLOC(ref_lse, n);
    HOST_ALLOC(ref_ls, count);
    du_fill(x, count, &rng, -2, 2);

    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dlse, lbytes));
    CUDA_OK(cudaMalloc((void **)&dls, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dlse, 0xff, lbytes, stream)); /* NaN: unwritten values show */
    CUDA_OK(cudaMemsetAsync(dls, 0xff, bytes, stream));

    /* Two calls on one stream: they run in order, and one sync covers both. */
    FUSERT_OK("logsumexp_rows", logsumexp_rows(dx, dlse, n, m, (fusert_stream)stream));
    FUSERT_OK("log_softmax", log_softmax(dx, dls, n, m, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(lse, dlse, lbytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaMemcpyAsync(ls, dls, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    printf("logsumexp_rows and log_softmax %lld x %lld in %d and %d kernel(s)\n", (long long)n,
           (long long)m, logsumexp_rows_kernel_count(), log_softmax_kernel_count());
    logsumexp_cpu(x, ref_lse, n, m);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
            ref_ls[i * m + j] = (double)x[i * m + j] - ref_lse[i];
    du_tol tol = du_f32_tolerance(1, m);
    int ok = du_check("logsumexp_rows", lse, ref_lse, (size_t)n, tol);
    ok &= du_check("log_softmax", ls, ref_ls, count, tol);
    rc = ok ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dlse);
    CUDA_FREE(dls);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(lse);
    free(ls);
    free(ref_lse);
    free(ref_ls);
    return du_verdict("logsumexp", rc);
}
