/* host_driver_row_grid.c -- calls the generated softmax (nvrtc target,
 * linked with fake_fusert.c, 132 multiprocessors) at row counts and lengths
 * that reach each case of fzk_row_grid; the fake prints each launch's grid.
 * The buffers are never read: the fake runs no kernel. */
#include "softmax.h"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const int64_t shapes[][2] = {
        {262144, 1024}, /* 8 KiB a row: a block a row */
        {65536, 1024},
        {419430, 160},  /* _r512, 4 rows (5120 bytes) a group, 128 threads: 2 groups a block */
        {201523, 333},  /* _r512s, 2664 bytes a row, 64 threads: 2 rows a block */
        {8000, 333},    /* 4000 blocks of 2 rows would leave the machine part idle: 32 a multiprocessor */
        {4096, 333},    /* fewer rows than that: a block a row */
        {1048576, 64},  /* _r128, 16 rows (8 KiB) a group, 128 threads: a block a group */
        {1, 1024},
    };
    float *x = aligned_alloc(256, 256), *y = aligned_alloc(256, 256);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        printf("-- N=%lld M=%lld\n", (long long)shapes[i][0], (long long)shapes[i][1]);
        fusert_status st = softmax(x, y, shapes[i][0], shapes[i][1], NULL);
        if (st != FUSERT_SUCCESS)
            printf("%s: %s\n", fusert_status_name(st), fusert_last_error());
    }
    free(x);
    free(y);
    return 0;
}
