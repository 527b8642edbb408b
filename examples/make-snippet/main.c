/* main.c -- calls softmax() of ../softmax.fuse (built by the Makefile here):
 * the softmax of each row of a 2 x 3 matrix, on the GPU. */
#include "softmax.h"
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const float x[6] = {1, 2, 3, 0, 0, 0};
    float y[6];
    float *dx, *dy;
    if (cudaMalloc((void **)&dx, sizeof x) != cudaSuccess || cudaMalloc((void **)&dy, sizeof y) != cudaSuccess) {
        fprintf(stderr, "app: no GPU memory\n");
        return 1;
    }
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    if (softmax(dx, dy, 2, 3, NULL) != FUSERT_SUCCESS) {
        fprintf(stderr, "app: %s\n", fusert_last_error());
        return 1;
    }
    cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
    for (int r = 0; r < 2; r++)
        printf("%.4f %.4f %.4f\n", y[3 * r], y[3 * r + 1], y[3 * r + 2]);
    return 0;
}
