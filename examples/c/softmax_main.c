/* softmax_main.c -- call the fused softmax of examples/softmax.fuse from C.
 *
 * The same driver serves the three builds in this folder (make/: a Makefile
 * pattern rule and nvcc; cmake/: find_package(fusec) and fusec_add_library;
 * nvrtc/: --target=nvrtc, gcc and libfusert, no nvcc).  It allocates the
 * input and the output on the device with the CUDA runtime API, calls the
 * generated host function softmax() (declared in softmax.h), copies the result
 * back, and checks it against a float64 computation on the CPU with the f32
 * tolerance of docs/language.md (relative L2 error <= 2e-5; every row sums to 1).
 *
 *   softmax_main [ROWS [COLS]]        (default 4096 x 1000)
 * Exit status: 0 when the check passes, 1 otherwise (or on a CUDA error). */
#include "softmax.h"
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_OK(call)                                                            \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                    cudaGetErrorString(err_));                                   \
            return 1;                                                            \
        }                                                                        \
    } while (0)

/* Deterministic inputs in [-4, 4): a 64-bit LCG, no dependence on rand(). */
static float next_input(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*state >> 11) / 9007199254740992.0 * 8.0 - 4.0);
}

/* The reference: softmax of each row in float64, subtracting the row max. */
static void softmax_cpu(const float *x, double *y, long long rows, long long cols)
{
    for (long long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double *yr = y + r * cols, m = -INFINITY, s = 0;
        for (long long c = 0; c < cols; c++)
            m = xr[c] > m ? xr[c] : m;
        for (long long c = 0; c < cols; c++)
            s += yr[c] = exp((double)xr[c] - m);
        for (long long c = 0; c < cols; c++)
            yr[c] /= s;
    }
}

int main(int argc, char **argv)
{
    long long rows = argc > 1 ? atoll(argv[1]) : 4096;
    long long cols = argc > 2 ? atoll(argv[2]) : 1000;
    if (rows <= 0 || cols <= 0) {
        fprintf(stderr, "usage: softmax_main [ROWS [COLS]] (positive sizes)\n");
        return 1;
    }
    size_t count = (size_t)rows * (size_t)cols, bytes = count * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    double *ref = malloc(count * sizeof(double));
    if (!x || !y || !ref) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    unsigned long long state = 42;
    for (size_t i = 0; i < count; i++)
        x[i] = next_input(&state);

    /* Device buffers and a stream, with the CUDA runtime. */
    float *dx = NULL, *dy = NULL;
    cudaStream_t stream;
    CUDA_OK(cudaMalloc((void **)&dx, bytes));
    CUDA_OK(cudaMalloc((void **)&dy, bytes));
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, stream));

    /* The generated function: inputs, results, symbolic dims, stream. */
    fusert_status s = softmax(dx, dy, (int64_t)rows, (int64_t)cols, (fusert_stream)stream);
    if (s != FUSERT_SUCCESS) {
        fprintf(stderr, "softmax: %s: %s\n", fusert_status_name(s), fusert_last_error());
        return 1;
    }
    CUDA_OK(cudaMemcpyAsync(y, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    /* Check against float64 on the CPU. */
    softmax_cpu(x, ref, rows, cols);
    double num = 0, den = 0, worst_row = 0;
    for (long long r = 0; r < rows; r++) {
        double sum = 0;
        for (long long c = 0; c < cols; c++) {
            double d = (double)y[r * cols + c] - ref[r * cols + c];
            num += d * d;
            den += ref[r * cols + c] * ref[r * cols + c];
            sum += y[r * cols + c];
        }
        worst_row = fabs(sum - 1) > worst_row ? fabs(sum - 1) : worst_row;
    }
    double rel = sqrt(num / den);
    int ok = rel <= 2e-5 && worst_row <= 1e-4;
    printf("softmax %lld x %lld in %d kernel(s): y[0][0..3] = %.6f %.6f %.6f %.6f\n", rows, cols,
           softmax_kernel_count(), y[0], y[1 % cols], y[2 % cols], y[3 % cols]);
    printf("relative L2 error vs float64: %.3g (tolerance 2e-05); worst |row sum - 1|: %.3g: %s\n",
           rel, worst_row, ok ? "OK" : "FAILED");

    cudaFree(dx);
    cudaFree(dy);
    cudaStreamDestroy(stream);
    free(x);
    free(y);
    free(ref);
    return ok ? 0 : 1;
}
