/* cuda_runtime_api.h -- stand-in for the host side of a C driver (the
 * programs of examples/c) run on the CPU emulator.  The generated function
 * comes from the emulator's build of the module (emu-build.sh: there "device"
 * memory is host memory), so the driver's own CUDA runtime calls can be plain
 * malloc/memcpy: cudart_emu.c.  Only what the drivers use is declared. */
#ifndef FZ_EMU_DRIVER_CUDA_RUNTIME_API_H
#define FZ_EMU_DRIVER_CUDA_RUNTIME_API_H
#include <stddef.h>

typedef enum cudaError_enum_emu {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
} cudaError_t;
typedef struct CUstream_st *cudaStream_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
};

cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
const char *cudaGetErrorString(cudaError_t e);
#endif
