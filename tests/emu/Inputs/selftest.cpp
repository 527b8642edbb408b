// selftest.cpp -- the CPU emulator (fz_emu.h) on hand-written kernels: what
// it must compute (shuffles, block barriers, shared memory, f16 rounding)
// and what it must refuse (divergent barriers, shuffles that name exited
// lanes, bad launch shapes).  Built by emu-selftest.test with fz_emu.h
// force-included; prints one line per case for FileCheck.
#include <stdio.h>

extern "C" __global__ void warp_sum(int *out)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x, v = t;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    out[t] = v;
}
extern "C" __global__ void shfl_kinds(int *out)
{
    int t = threadIdx.x;
    int a = __shfl_sync(0xffffffffu, t * 10, 3, 8);   // lane 3 of each group of 8
    int b = __shfl_down_sync(0xffffffffu, t, 1, 16);  // own value past the group's end
    int c = __shfl_up_sync(0xffffffffu, t, 2);
    out[t] = a * 10000 + b * 100 + c;
}
extern "C" __global__ void block_sum(const float *x, float *out, int n)
{
    __shared__ float sh[256];
    int t = threadIdx.x;
    sh[t] = t < n ? x[blockIdx.x * n + t] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sh[0];
}
extern "C" __global__ void no_barrier(int *out)
{
    __shared__ int sh[64];
    int t = threadIdx.x;
    sh[t] = t + 1000 * (int)blockIdx.x;
    out[blockIdx.x * 64 + t] = sh[(t + 1) % 64]; // a race: no __syncthreads
}
extern "C" __global__ void divergent_sync(int *out)
{
    if (threadIdx.x < 16)
        __syncthreads();
    out[threadIdx.x] = 1;
}
extern "C" __global__ void divergent_shfl(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_xor_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}
extern "C" __global__ void mixed_barriers(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        __syncthreads();
    else
        v = __shfl_xor_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}
extern "C" __global__ void partial_warp(int *out)
{
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}
extern "C" __global__ void last_block(unsigned *counter, int *out)
{
    __shared__ int last;
    __threadfence();
    if (threadIdx.x == 0)
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0)
        out[0] = (int)blockIdx.x;
}
/* the overloads --atomic-reduce uses (fz_aadd, fz_aext) and a CAS */
extern "C" __global__ void atomics(float *f, double *d, unsigned long long *u, unsigned *m, long long *l, int *cas)
{
    atomicAdd(f, 0.5f);
    atomicAdd(d, 0.25);
    atomicAdd(u, (unsigned long long)threadIdx.x);
    atomicMax(m, blockIdx.x * 100 + threadIdx.x);
    atomicMin(l, -(long long)threadIdx.x * 1000000000000LL);
    atomicCAS(cas, 0, (int)(blockIdx.x * 64 + threadIdx.x) + 1);
}
// A thread block cluster of 4: each block pushes its block sum into slot
// [rank] of every block's shared memory, then every block adds them up.
extern "C" __global__ void cluster_sum(int *out)
{
    __shared__ int slot[4];
    __shared__ int bsum;
    if (threadIdx.x == 0)
        bsum = 0;
    __syncthreads();
    atomicAdd(&bsum, (int)(blockIdx.x * blockDim.x + threadIdx.x));
    __syncthreads();
    const int v = bsum;
    __cluster_barrier_arrive();
    __cluster_barrier_wait(); /* every block has started */
    if (threadIdx.x < 4)
        *(int *)__cluster_map_shared_rank((void *)&slot[blockIdx.x % 4], threadIdx.x) = v;
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    out[blockIdx.x * blockDim.x + threadIdx.x] = slot[0] + slot[1] + slot[2] + slot[3];
}
// The shared memory of another block before any cluster barrier.
extern "C" __global__ void cluster_early(int *out)
{
    __shared__ int slot[2];
    if (threadIdx.x < 2)
        *(int *)__cluster_map_shared_rank((void *)&slot[blockIdx.x % 2], threadIdx.x) = 1;
    out[threadIdx.x] = 0;
}
// Block 1 ends while block 0 waits at the cluster barrier.
extern "C" __global__ void cluster_exit(int *out)
{
    if (blockIdx.x % 2 == 1)
        return;
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    out[threadIdx.x] = 1;
}
extern "C" __global__ void __launch_bounds__(64) bounded(int *out)
{
    out[threadIdx.x] = 1;
}
FZ_EMU_KERNEL_LB(bounded, 64)
FZ_EMU_KERNEL(warp_sum)
FZ_EMU_KERNEL(shfl_kinds)
FZ_EMU_KERNEL(block_sum)
FZ_EMU_KERNEL(no_barrier)
FZ_EMU_KERNEL(divergent_sync)
FZ_EMU_KERNEL(divergent_shfl)
FZ_EMU_KERNEL(mixed_barriers)
FZ_EMU_KERNEL(partial_warp)
FZ_EMU_KERNEL(last_block)
FZ_EMU_KERNEL(atomics)
FZ_EMU_KERNEL_CL(cluster_sum, 64, 4)
FZ_EMU_KERNEL_CL(cluster_early, 64, 2)
FZ_EMU_KERNEL_CL(cluster_exit, 64, 2)

static void report(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, e == cudaSuccess ? "ok" : cudaGetErrorString(e));
    (void)cudaGetLastError();
}

int main(void)
{
    static int out[1024];
    static float x[3 * 200], fs[3];
    int *po = out;
    void *a1[] = {&po};
    report("warp_sum", cudaLaunchKernel((const void *)warp_sum, dim3(2), dim3(64), a1, 0, NULL));
    printf("warp sums: %d %d %d %d\n", out[0], out[31], out[32], out[127]); // 496 496 1520 3568

    report("shfl_kinds", cudaLaunchKernel((const void *)shfl_kinds, dim3(1), dim3(32), a1, 0, NULL));
    printf("shfl lane 0: %d, lane 9: %d, lane 15: %d\n", out[0], out[9], out[15]);

    for (int i = 0; i < 600; i++)
        x[i] = (float)(i % 200);
    const float *px = x;
    float *pf = fs;
    int n = 200;
    void *a3[] = {&px, &pf, &n};
    report("block_sum", cudaLaunchKernel((const void *)block_sum, dim3(3), dim3(256), a3, 0, NULL));
    printf("block sums: %g %g %g\n", fs[0], fs[1], fs[2]); // 19900 each

    report("no_barrier", cudaLaunchKernel((const void *)no_barrier, dim3(2), dim3(64), a1, 0, NULL));
    printf("race seen: block 0 thread 0 read %d (1 if ordered), block 1 thread 62 read %d (1063 if ordered)\n",
           out[0], out[64 + 62]);

    report("divergent_sync", cudaLaunchKernel((const void *)divergent_sync, dim3(1), dim3(32), a1, 0, NULL));
    report("divergent_shfl", cudaLaunchKernel((const void *)divergent_shfl, dim3(1), dim3(32), a1, 0, NULL));
    report("mixed_barriers", cudaLaunchKernel((const void *)mixed_barriers, dim3(1), dim3(32), a1, 0, NULL));
    report("partial_warp", cudaLaunchKernel((const void *)partial_warp, dim3(1), dim3(48), a1, 0, NULL));
    report("too_big", cudaLaunchKernel((const void *)warp_sum, dim3(1), dim3(2048), a1, 0, NULL));
    report("empty_grid", cudaLaunchKernel((const void *)warp_sum, dim3(0), dim3(32), a1, 0, NULL));
    report("bounded_ok", cudaLaunchKernel((const void *)bounded, dim3(1), dim3(64), a1, 0, NULL));
    report("bounded_over", cudaLaunchKernel((const void *)bounded, dim3(1), dim3(65), a1, 0, NULL));
    report("unregistered", cudaLaunchKernel((const void *)main, dim3(1), dim3(32), a1, 0, NULL));

    unsigned cnt = 0, *pc = &cnt;
    void *a2[] = {&pc, &po};
    out[0] = -1;
    report("last_block", cudaLaunchKernel((const void *)last_block, dim3(5), dim3(64), a2, 0, NULL));
    printf("last block: %d, tickets %u\n", out[0], cnt);
    /* FZ_EMU_BLOCK_ORDER=reverse: block 0 runs last and takes the last ticket */
    setenv("FZ_EMU_BLOCK_ORDER", "reverse", 1);
    cnt = 0;
    out[0] = -1;
    report("last_block reverse", cudaLaunchKernel((const void *)last_block, dim3(5), dim3(64), a2, 0, NULL));
    unsetenv("FZ_EMU_BLOCK_ORDER");
    printf("last block: %d, tickets %u\n", out[0], cnt);

    float af = 0;
    double ad = 0;
    unsigned long long au = 0;
    unsigned am = 0;
    long long al = 0;
    int acas = 0;
    float *paf = &af;
    double *pad = &ad;
    unsigned long long *pau = &au;
    unsigned *pam = &am;
    long long *pal = &al;
    int *pcas = &acas;
    void *a6[] = {&paf, &pad, &pau, &pam, &pal, &pcas};
    report("atomics", cudaLaunchKernel((const void *)atomics, dim3(5), dim3(64), a6, 0, NULL));
    printf("atomics: add %g %g %llu, max %u, min %lld, cas %d\n", af, ad, au, am, al, acas);

    /* clusters: 8 blocks of 32 in clusters of 4 (sums 0..127 and 128..255);
     * the width as cudaFuncGetAttributes reports it; misuse refused */
    report("cluster_sum", cudaLaunchKernel((const void *)cluster_sum, dim3(8), dim3(32), a1, 0, NULL));
    printf("cluster sums: %d %d %d\n", out[0], out[127], out[128]); // 8128 8128 24512
    cudaFuncAttributes fa;
    cudaFuncGetAttributes(&fa, (const void *)cluster_sum);
    int w4 = fa.requiredClusterWidth;
    cudaFuncGetAttributes(&fa, (const void *)warp_sum);
    printf("cluster widths: %d %d\n", w4, fa.requiredClusterWidth);
    report("cluster_grid", cudaLaunchKernel((const void *)cluster_sum, dim3(6), dim3(32), a1, 0, NULL));
    report("cluster_early", cudaLaunchKernel((const void *)cluster_early, dim3(2), dim3(32), a1, 0, NULL));
    report("cluster_exit", cudaLaunchKernel((const void *)cluster_exit, dim3(2), dim3(32), a1, 0, NULL));

    static const float hv[] = {1.0f, 0.1f, 65504.0f, 65519.0f, 65520.0f, 5.9604645e-08f, 2.9802322e-08f,
                               2.9802326e-08f, -0.0f, 1e30f};
    for (unsigned i = 0; i < sizeof hv / sizeof hv[0]; i++)
        printf("f16(%g) = 0x%04x -> %g\n", hv[i], fz_emu_f2h(hv[i]), fz_emu_h2f(fz_emu_f2h(hv[i])));
    printf("f16 nan = 0x%04x, f16 0x0001 = %g, 0x7c00 = %g\n", fz_emu_f2h(__int_as_float(0x7fc00000)),
           fz_emu_h2f(1), fz_emu_h2f(0x7c00));
    return 0;
}
