/* cols_scratch_driver.c -- included after a generated nvrtc .c of colsum
 * (cols_scratch.test): the scratch a column reduction reserves holds the
 * partials of every launch it can make, whatever the multiprocessor count,
 * the variant and its wave, and nothing for a reduced range that one block reads. */
#include <stdio.h>

static int failures;

static void check(int64_t N, int64_t M)
{
    const int64_t dims[2] = {N, M};
    const size_t total = colsum_k0_reduce_scratch_bytes(dims);
    const size_t cnt = (size_t)fzk_cols_cnt_bytes(1, M);
    for (int64_t sms = 1; sms <= 2 * FZK_MAX_SMS; sms += sms < 16 ? 1 : 37) {
        for (int vec = 0; vec < 4; vec++) {
            /* either tiles, with a wave of 4 or of FZK_COLS_BPS_MAX blocks */
            const int64_t tiles = vec & 1 ? (M + 127) / 128 : (M + 31) / 32;
            const int64_t ns = fzk_cols_nsplit(1, N, M, tiles, sms, vec & 2 ? FZK_COLS_BPS_MAX : 4);
            const size_t need = cnt + (ns > 1 ? (size_t)(8 * ns * M) : 0);
            if (ns < 1 || need > total) {
                printf("FAIL N=%lld M=%lld sms=%lld vec=%d: %lld splits need %zu bytes, scratch has %zu\n",
                       (long long)N, (long long)M, (long long)sms, vec, (long long)ns, need, total);
                failures++;
                return;
            }
        }
    }
    printf("N=%lld M=%lld: scratch %zu bytes (%s)\n", (long long)N, (long long)M, total,
           total == cnt ? "counters only" : "counters and partials");
}

int main(void)
{
    check(9, 2051 * 1531);
    check(63, 1000);
    check(127, 5);
    check(128, 5);
    check(16384, 8192);
    check(100000, 96);
    check(1 << 20, 1);
    check(4097, 3);
    printf("%d failures\n", failures);
    return failures != 0;
}
