/* small_bias_relu: host wall time per call of a latency-bound fused kernel,
 * called from C through the generated host function, back to back, and
 * replayed through the runtime's graph-capture helper (BENCHMARKS.md).
 * Built by tools/bench/run_small.sh against `fusec -D N=64 -D M=1024`
 * output of examples/bias_relu.fuse. */
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

#define CHECK(x) do { fusert_status s_ = (x); if (s_ != FUSERT_SUCCESS) { \
    fprintf(stderr, "%s failed: %s\n", #x, fusert_last_error()); return 1; } } while (0)

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
    cudaMalloc((void **)&x, sizeof(float) * N * M);
    cudaMalloc((void **)&b, sizeof(float) * M);
    cudaMalloc((void **)&y, sizeof(float) * N * M);
    cudaMemcpy(x, hx, sizeof(float) * N * M, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, sizeof(float) * M, cudaMemcpyHostToDevice);
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

    /* correctness first */
    CHECK(bias_relu(x, b, y, stream));
    cudaStreamSynchronize(stream);
    cudaMemcpy(hy, y, sizeof(float) * N * M, cudaMemcpyDeviceToHost);
    for (int i = 0; i < N * M; i++) {
        float want = hx[i] + hb[i % M];
        want = want > 0 ? want : 0;
        if (hy[i] != want) {
            fprintf(stderr, "mismatch at %d: %g != %g\n", i, hy[i], want);
            return 1;
        }
    }

    double best_direct = 1e30, best_graph = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < 50; i++)
            CHECK(bias_relu(x, b, y, stream));
        cudaStreamSynchronize(stream);
        double t0 = now_us();
        for (int i = 0; i < CALLS; i++)
            CHECK(bias_relu(x, b, y, stream));
        cudaStreamSynchronize(stream);
        double per = (now_us() - t0) / CALLS;
        if (per < best_direct)
            best_direct = per;
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
        double per = (now_us() - t0) / CALLS;
        if (per < best_graph)
            best_graph = per;
    }
    fusert_graph_destroy(g);
    printf("small_bias_relu [64, 1024]: %.2f us per call (direct, best of 5 x %d), "
           "%.2f us per call (graph replay)\n", best_direct, CALLS, best_graph);
    return 0;
}
