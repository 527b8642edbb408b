/* softmax_main.c -- call the fused softmax of examples/softmax.fuse from C.
 *
 *   fn softmax(x: f32[N, M]) -> f32[N, M]      (softmax of each row)
 *
 * Every driver in this folder serves the three builds beside it (make/: a
 * Makefile pattern rule and nvcc; cmake/: find_package(fusec) and
 * fusec_add_library; nvrtc/: --target=nvrtc, gcc and libfusert, no nvcc).  It
 * allocates the input and the output on the device with the CUDA runtime API,
 * calls the generated host function softmax() (declared in softmax.h), copies
 * the result back, and checks it against a float64 computation on the CPU with
 * the f32 tolerance of docs/language.md (exp: x4; reduction over M).
 *
 *   softmax_main [ROWS [COLS]]        (default 4095 x 1001)
 * Exit status: 0 when the check passes, 1 otherwise (or on a CUDA error). */
#include "softmax.h"
#include "driver_util.h"

/* The reference: softmax of each row in float64, subtracting the row max. */
static void softmax_cpu(const float *x, double *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double *yr = y + r * cols, m = -INFINITY, s = 0;
        for (int64_t c = 0; c < cols; c++)
            m = xr[c] > m ? xr[c] : m;
        for (int64_t c = 0; c < cols; c++)
            s += yr[c] = exp((double)xr[c] - m);
        for (int64_t c = 0; c < cols; c++)
            yr[c] /= s;
    }
}

int main(int argc, char **argv)
{
    int64_t rows = du_size_arg(argc, argv, 1, 4095), cols = du_size_arg(argc, argv, 2, 1001);
    if (rows < 0 || cols < 0 || argc > 3) {
        fprintf(stderr, "usage: softmax_main [ROWS [COLS]] (positive sizes)\n");
        return 1;
    }
    int rc = 1;
    size_t count = du_count(rows, cols), bytes = count * sizeof(float);
    float *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    double *ref = NULL;
    cudaStream_t stream = NULL;
    du_rng rng = du_seed(42);
    if (count == 0)
        goto fail;
    HOST_ALLOC(x, count);
    HOST_ALLOC(y, count);
    HOST_ALLOC(ref, count);
    du_fill(x, count, &rng, -4, 4);

    /* Device buffers and a stream, with the CUDA runtime.  The output starts
     * as NaN bytes, so an element the kernel never wrote fails the check. */
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_OK(cudaMemsetAsync(dy, 0xff, bytes, stream));

    /* The generated function: inputs, results, symbolic dims, stream. */
    FUSERT_OK("softmax", softmax(dx, dy, rows, cols, (fusert_stream)stream));
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    /* Check against float64 on the CPU. */
    printf("softmax %lld x %lld in %d kernel(s)\n", (long long)rows, (long long)cols,
           softmax_kernel_count());
    softmax_cpu(x, ref, rows, cols);
    rc = du_check("y", y, ref, count, du_f32_tolerance(1, cols)) ? 0 : 1;

fail:
    CUDA_FREE(dx);
    CUDA_FREE(dy);
    if (stream)
        CUDA_CLEANUP(cudaStreamDestroy(stream));
    free(x);
    free(y);
    free(ref);
    return du_verdict("softmax", rc);
}
