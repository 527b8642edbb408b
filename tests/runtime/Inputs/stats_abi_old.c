/* stats_abi_old.c -- a program built against the first layout of
 * fusert_cache_stats (six fields), linked against a libfusert.so.0.2 whose
 * symbols carry no version (stats_abi_stub.c), as programs linked before
 * the struct grew are.  Run against the real library, it must get the
 * entry point that fills six fields: the words after its struct stay
 * untouched. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct old_stats {
    uint64_t hits, misses, compiles, corrupt, write_failures;
    double compile_ms_total;
} old_stats;
void fusert_get_cache_stats(old_stats *out);

int main(void)
{
    struct {
        old_stats s;
        uint64_t guard[4];
    } x;
    memset(&x, 0xab, sizeof x);
    fusert_get_cache_stats(&x.s);
    for (int i = 0; i < 4; i++)
        if (x.guard[i] != 0xababababababababull) {
            printf("FAIL: fusert_get_cache_stats wrote past the first layout (word %d)\n", i);
            return 1;
        }
    if (x.s.hits != 0 || x.s.compiles != 0) {
        printf("FAIL: the six fields were not filled\n");
        return 1;
    }
    printf("first layout: six fields filled, nothing past them\n");
    return 0;
}
