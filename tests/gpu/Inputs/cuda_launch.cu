// cuda_launch.cu -- the cuda target's host code on a GPU where the calling
// program is not simple, through examples/small_bias_relu.fuse, every result
// checked against the CPU:
//   threads   8 threads whose first CUDA call is the generated function,
//             at once (they race to fill the cached device attributes),
//             then 20 calls more each, each thread on its own stream;
//   main      the main thread, on a stream and on stream 0;
//   capture   with nvcc --default-stream per-thread: stream 0 is the
//             thread's own default stream, so a call on stream 0 inside a
//             global-mode capture of cudaStreamPerThread lands in the graph
//             (a launch to the legacy stream there would be an error).
#include "small_bias_relu.h"
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

enum { N = 64, M = 1024 };
static float hx[N * M], hb[M];

static int check(const float *d, const char *what)
{
    static float hy[N * M];
    if (cudaMemcpy(hy, d, sizeof hy, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("FAIL %s: cudaMemcpy\n", what);
        return 1;
    }
    for (int i = 0; i < N * M; i++) {
        float want = hx[i] + hb[i % M];
        want = want > 0 ? want : 0;
        if (hy[i] != want) {
            printf("FAIL %s: y[%d] = %g, want %g\n", what, i, hy[i], want);
            return 1;
        }
    }
    return 0;
}

int main()
{
    for (int i = 0; i < N * M; i++)
        hx[i] = (float)((i * 37 % 101) - 50) / 25.0f;
    for (int j = 0; j < M; j++)
        hb[j] = (float)((j * 13 % 17) - 8) / 8.0f;
    float *x, *b, *ys[9];
    if (cudaMalloc(&x, sizeof hx) != cudaSuccess || cudaMalloc(&b, sizeof hb) != cudaSuccess) {
        printf("FAIL: cudaMalloc\n");
        return 1;
    }
    for (float *&y : ys)
        if (cudaMalloc(&y, sizeof hx) != cudaSuccess || cudaMemset(y, 0xff, sizeof hx) != cudaSuccess) {
            printf("FAIL: cudaMalloc\n");
            return 1;
        }
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice);
    int failed = 0;

    std::vector<std::thread> th;
    int st[8] = {0};
    for (int t = 0; t < 8; t++)
        th.emplace_back([&, t]() {
            // the first CUDA call of this thread
            fusert_status s = small_bias_relu(x, b, ys[t], N, M, NULL);
            if (s == FUSERT_SUCCESS)
                s = cudaDeviceSynchronize() == cudaSuccess ? FUSERT_SUCCESS : FUSERT_ERROR_CUDA;
            cudaStream_t str;
            if (s == FUSERT_SUCCESS && cudaStreamCreateWithFlags(&str, cudaStreamNonBlocking) == cudaSuccess) {
                cudaMemset(ys[t], 0xff, sizeof hx);
                for (int i = 0; i < 20 && s == FUSERT_SUCCESS; i++)
                    s = small_bias_relu(x, b, ys[t], N, M, str);
                if (cudaStreamSynchronize(str) != cudaSuccess)
                    s = FUSERT_ERROR_CUDA;
                cudaStreamDestroy(str);
            }
            st[t] = s;
        });
    for (auto &t : th)
        t.join();
    for (int t = 0; t < 8; t++) {
        char what[32];
        snprintf(what, sizeof what, "thread %d", t);
        if (st[t] != FUSERT_SUCCESS) {
            printf("FAIL %s: status %d: %s\n", what, st[t], fusert_last_error());
            failed = 1;
        } else
            failed |= check(ys[t], what);
    }
    printf("threads: %s\n", failed ? "FAIL" : "ok");

    cudaStream_t s1;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    int f = small_bias_relu(x, b, ys[8], N, M, s1) != FUSERT_SUCCESS || cudaStreamSynchronize(s1) != cudaSuccess;
    f = f || check(ys[8], "main, stream");
    cudaMemset(ys[8], 0xff, sizeof hx);
    f = f || small_bias_relu(x, b, ys[8], N, M, NULL) != FUSERT_SUCCESS || cudaDeviceSynchronize() != cudaSuccess;
    f = f || check(ys[8], "main, stream 0");
    printf("main: %s\n", f ? "FAIL" : "ok");
    failed |= f;

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    cudaMemset(ys[8], 0xff, sizeof hx);
    cudaDeviceSynchronize();
    cudaGraph_t g;
    cudaGraphExec_t ge;
    size_t nodes = 0;
    f = cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal) != cudaSuccess;
    fusert_status s = f ? FUSERT_SUCCESS : small_bias_relu(x, b, ys[8], N, M, NULL);
    if (!f && s != FUSERT_SUCCESS)
        printf("FAIL capture: %s\n", fusert_last_error());
    f = f || cudaStreamEndCapture(cudaStreamPerThread, &g) != cudaSuccess || s != FUSERT_SUCCESS;
    f = f || cudaGraphGetNodes(g, NULL, &nodes) != cudaSuccess || nodes != 1;
    f = f || cudaGraphInstantiate(&ge, g, 0) != cudaSuccess || cudaGraphLaunch(ge, cudaStreamPerThread) != cudaSuccess ||
        cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess;
    f = f || check(ys[8], "capture");
    printf("capture of stream 0 (per-thread): %zu node(s): %s\n", nodes, f ? "FAIL" : "ok");
    failed |= f;
#endif
    printf("%s cuda launch test\n", failed ? "FAIL" : "PASS");
    return failed;
}
