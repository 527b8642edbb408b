/* small_bias_relu: host wall time per call of a latency-bound fused kernel,
 * called from C through the generated host function, back to back, and
 * replayed through the runtime's graph-capture helper (docs/benchmarks.md).
 * Built by the `bench` step of tools/gpu/checks.sh against
 * `fusec -D N=64 -D M=1024` output of examples/bias_relu.fuse, for both
 * targets.  Prints the median and the best of 5 rounds of 1000 calls. */
#include "bias_relu.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
#define CHECK(x) do { fusert_status s_ = (x); if (s_ != FUSERT_SUCCESS) { \
    fprintf(stderr, "%s failed: %s\n", #x, fusert_last_error()); return 1; } } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    enum { N = 64, M = 1024, CALLS = 1000 };
    float *hx = malloc(sizeof(float) * N * M), *hb = malloc(sizeof(float) * M);
    float *hy = malloc(sizeof(float) * N * M);
    for (int i = 0; i < N * M; i++)
        hx[i] = (float)((i * 37 % 101) - 50) / 25.0f;
    for (int j = 0; j < M; j++)
        hb[j] = (float)((j * 13 % 17) - 8) / 8.0f;
    float *x, *b, *y;
    CUDA_CHECK(cudaMalloc((void **)&x, sizeof(float) * N * M));
    CUDA_CHECK(cudaMalloc((void **)&b, sizeof(float) * M));
    CUDA_CHECK(cudaMalloc((void **)&y, sizeof(float) * N * M));
    CUDA_CHECK(cudaMemcpy(x, hx, sizeof(float) * N * M, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b, hb, sizeof(float) * M, cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    /* correctness first */
    CHECK(bias_relu(x, b, y, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(hy, y, sizeof(float) * N * M, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N * M; i++) {
        float want = hx[i] + hb[i % M];
        want = want > 0 ? want : 0;
        if (hy[i] != want) {
            fprintf(stderr, "mismatch at %d: %g != %g\n", i, hy[i], want);
            return 1;
        }
    }

    double direct[5], graph[5];
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < 50; i++)
            CHECK(bias_relu(x, b, y, stream));
        cudaStreamSynchronize(stream);
        double t0 = now_us();
        for (int i = 0; i < CALLS; i++)
            CHECK(bias_relu(x, b, y, stream));
        cudaStreamSynchronize(stream);
        direct[rep] = (now_us() - t0) / CALLS;
    }

    fusert_graph *g;
    CHECK(fusert_graph_begin(stream));
    CHECK(bias_relu(x, b, y, stream));
    CHECK(fusert_graph_end(stream, &g));
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < 50; i++)
            CHECK(fusert_graph_launch(g, stream));
        cudaStreamSynchronize(stream);
        double t0 = now_us();
        for (int i = 0; i < CALLS; i++)
            CHECK(fusert_graph_launch(g, stream));
        cudaStreamSynchronize(stream);
        graph[rep] = (now_us() - t0) / CALLS;
    }
    fusert_graph_destroy(g);
    CUDA_CHECK(cudaGetLastError());
    qsort(direct, 5, sizeof(double), cmp_double);
    qsort(graph, 5, sizeof(double), cmp_double);
    printf("small_bias_relu [64, 1024]: host wall per call, 5 rounds of %d calls: "
           "direct median %.2f us (best %.2f), graph replay median %.2f us (best %.2f)\n",
           CALLS, direct[2], direct[0], graph[2], graph[0]);
    return 0;
}
