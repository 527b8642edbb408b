/* host_driver_row_short.c -- calls the generated softmax_bf16 (nvrtc
 * target, linked with fake_fusert.c) at odd rows around the length where
 * the windowed looped kernel's blocks of 1024 give each thread four
 * 8-element vectors (32768 elements); host-row-wloop-short.test says
 * which block each takes.  The buffers are never read: the fake runs no
 * kernel. */
#include "rows_bf16.h"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const struct {
        int64_t n, m;
    } cases[] = {
        {4089, 16411}, /* two vectors a thread of 1024 */
        {2684, 25001}, /* three */
        {8, 32767},    /* one element short of four */
        {8, 32769},    /* four and a bit */
        {1335, 50257}, /* six */
    };
    uint16_t *x = aligned_alloc(256, 512), *y = aligned_alloc(256, 512);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("-- N=%lld M=%lld\n", (long long)cases[i].n, (long long)cases[i].m);
        fusert_status st = softmax_bf16(x, y, cases[i].n, cases[i].m, NULL);
        if (st != FUSERT_SUCCESS)
            printf("%s: %s\n", fusert_status_name(st), fusert_last_error());
    }
    free(x);
    free(y);
    return 0;
}
