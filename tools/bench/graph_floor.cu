// tools/bench/graph_floor.cu -- the floor under fusert_graph_launch: a bare
// CUDA program runs relu(x + b) over [64, 1024] (small_bias_relu's case)
// back to back, 1000 calls a round, 5 rounds, host wall time per call, as
// direct launches and as replays of a one-kernel graph, for three grids: one
// element a thread (256 x 256), one float4 (64 x 256), two float4 (32 x 256).
//   nvcc -O2 -arch=sm_90 tools/bench/graph_floor.cu -o graph_floor && ./graph_floor
#include <cstdio>
#include <chrono>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void k1(const float *x, const float *b, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i] + b[i & 1023];
    y[i] = v > 0 ? v : 0;
}
__global__ void k4(const float4 *x, const float4 *b, float4 *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 a = x[i], c = b[i & 255], r;
    r.x = fmaxf(a.x + c.x, 0); r.y = fmaxf(a.y + c.y, 0); r.z = fmaxf(a.z + c.z, 0); r.w = fmaxf(a.w + c.w, 0);
    y[i] = r;
}
__global__ void k8(const float4 *x, const float4 *b, float4 *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = i + 8192;
    float4 a = x[i], a2 = x[j], c = b[i & 255], c2 = b[j & 255], r, r2;
    r.x = fmaxf(a.x + c.x, 0); r.y = fmaxf(a.y + c.y, 0); r.z = fmaxf(a.z + c.z, 0); r.w = fmaxf(a.w + c.w, 0);
    r2.x = fmaxf(a2.x + c2.x, 0); r2.y = fmaxf(a2.y + c2.y, 0); r2.z = fmaxf(a2.z + c2.z, 0); r2.w = fmaxf(a2.w + c2.w, 0);
    y[i] = r; y[j] = r2;
}
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main()
{
    float *x, *b, *y;
    cudaMalloc(&x, 65536 * 4); cudaMalloc(&b, 4096); cudaMalloc(&y, 65536 * 4);
    cudaMemset(x, 0, 65536 * 4); cudaMemset(b, 0, 4096);
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int shape = 0; shape < 3; shape++) {
        for (int mode = 0; mode < 2; mode++) {
            cudaGraph_t g; cudaGraphExec_t ge;
            auto launch = [&]() {
                if (shape == 0) k1<<<256, 256, 0, s>>>(x, b, y);
                else if (shape == 1) k4<<<64, 256, 0, s>>>((float4 *)x, (float4 *)b, (float4 *)y);
                else k8<<<32, 256, 0, s>>>((float4 *)x, (float4 *)b, (float4 *)y);
            };
            if (mode == 1) {
                cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
                launch();
                cudaStreamEndCapture(s, &g);
                cudaGraphInstantiate(&ge, g, 0);
            }
            double t[5];
            for (int rep = 0; rep < 5; rep++) {
                for (int i = 0; i < 50; i++) { if (mode) cudaGraphLaunch(ge, s); else launch(); }
                cudaStreamSynchronize(s);
                double t0 = now_us();
                for (int i = 0; i < 1000; i++) { if (mode) cudaGraphLaunch(ge, s); else launch(); }
                cudaStreamSynchronize(s);
                t[rep] = (now_us() - t0) / 1000;
            }
            std::sort(t, t + 5);
            printf("bare %s %s: median %.2f us best %.2f\n", shape == 0 ? "1/thread 256x256" : shape == 1 ? "float4 64x256" : "2xfloat4 32x256",
                   mode ? "graph" : "direct", t[2], t[0]);
        }
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
