/* driver.c -- calls the fn `scale` of two modules with the same file and fn
 * names, compiled with --prefix=a_ and --prefix=b_, in one program.  Without
 * a GPU it calls what needs none: the kernel counts, the workspace sizes and
 * the argument checks (each names its own function).  With RUN_ON_GPU it
 * also runs both on x = 1, 2, 3, 4 and checks 2x and x - 10. */
#include "one/k.h"
#include "two/k.h"
#include <stdio.h>
#ifdef RUN_ON_GPU
#include <cuda_runtime.h>
#endif

int main(void)
{
    printf("a_scale: %d kernel(s), workspace %zu\n", a_scale_kernel_count(), a_scale_workspace_size(1000));
    printf("b_scale: %d kernel(s), workspace %zu\n", b_scale_kernel_count(), b_scale_workspace_size(1000));
    if (a_scale(NULL, NULL, 4, NULL) != FUSERT_SUCCESS)
        printf("%s\n", fusert_last_error());
    if (b_scale(NULL, NULL, 4, NULL) != FUSERT_SUCCESS)
        printf("%s\n", fusert_last_error());
#ifdef RUN_ON_GPU
    const float x[4] = {1, 2, 3, 4};
    float ya[4], yb[4];
    float *dx, *da, *db;
    if (cudaMalloc((void **)&dx, sizeof x) || cudaMalloc((void **)&da, sizeof x) ||
        cudaMalloc((void **)&db, sizeof x))
        return 1;
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    if (a_scale(dx, da, 4, NULL) != FUSERT_SUCCESS || b_scale(dx, db, 4, NULL) != FUSERT_SUCCESS) {
        printf("error: %s\n", fusert_last_error());
        return 1;
    }
    cudaMemcpy(ya, da, sizeof x, cudaMemcpyDeviceToHost);
    cudaMemcpy(yb, db, sizeof x, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 4; i++)
        bad |= ya[i] != 2 * x[i] || yb[i] != x[i] - 10;
    printf("a_scale: %g %g %g %g\nb_scale: %g %g %g %g\n%s\n", ya[0], ya[1], ya[2], ya[3], yb[0], yb[1],
           yb[2], yb[3], bad ? "WRONG" : "both right");
    return bad;
#else
    return 0;
#endif
}
