/* host_driver_row_grid_static.c -- the static softmax of rows of 1024 bf16
 * (host-row-grid.test; nvrtc target, fake fusert with 132 multiprocessors):
 * its rows run in blocks of 32 threads, one row a block. */
#include "softmax.h"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const int64_t rows[] = {65536, 262144, 1000};
    uint16_t *x = aligned_alloc(256, 256), *y = aligned_alloc(256, 256);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        printf("-- N=%lld\n", (long long)rows[i]);
        fusert_status st = softmax(x, y, rows[i], NULL);
        if (st != FUSERT_SUCCESS)
            printf("%s: %s\n", fusert_status_name(st), fusert_last_error());
    }
    free(x);
    free(y);
    return 0;
}
