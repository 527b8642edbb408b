/* test_fusert_cache_race.c -- processes filling one cache entry at once.
 *
 * Several forked children compile the same never-seen source into the same
 * empty cache directory simultaneously (they start together on a pipe).
 * Each must succeed, and afterwards the directory holds exactly one valid
 * entry and no temporary files: the temp-file + rename protocol never
 * exposes a half-written entry.  The parent forks before touching NVRTC.
 *
 * RUN: %rtbin/test_fusert_cache_race | FileCheck %s
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_cache_race: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <sys/wait.h>

#define CHILDREN 4

int main(void)
{
    setenv("FUSERT_ARCH", "sm_90", 1);
    unsetenv("FUSERT_CACHE_DISABLE");
    char *dir = rt_tempdir();
    CHECK(dir != NULL, "mkdtemp failed");
    setenv("FUSERT_CACHE_DIR", dir, 1);
    char tag[64];
    snprintf(tag, sizeof tag, "race %ld", (long)getpid());
    const char *src = rt_kernel_source(tag);

    int go[2];
    CHECK(pipe(go) == 0, "pipe");
    pid_t kids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) < 0) /* wait for the start signal (EOF) */
                _exit(3);
            void *cubin = NULL;
            size_t n = 0;
            fusert_status s = fusert_compile("race", src, NULL, &cubin, &n);
            if (s != FUSERT_SUCCESS) {
                fprintf(stderr, "child %d: %s\n", i, fusert_last_error());
                _exit(1);
            }
            _exit(rt_is_elf(cubin, n) ? 0 : 2);
        }
    }
    close(go[0]);
    close(go[1]); /* everyone starts now */
    for (int i = 0; i < CHILDREN; i++) {
        int status = 0;
        waitpid(kids[i], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed (status %d)", i,
              status);
    }
    CHECK(rt_count_files(dir, ".cubin", NULL, 0) == 1, "expected one entry");
    CHECK(rt_count_files(dir, "", NULL, 0) == 1, "temporary files were left behind");

    /* The entry the race left is valid: this process hits it. */
    fusert_cache_stats before, now;
    fusert_get_cache_stats(&before);
    void *cubin = NULL;
    size_t n = 0;
    CHECK_STATUS(fusert_compile("race", src, NULL, &cubin, &n), FUSERT_SUCCESS);
    fusert_get_cache_stats(&now);
    CHECK(now.hits - before.hits == 1 && now.corrupt == before.corrupt &&
              now.compiles == before.compiles,
          "hits %llu corrupt %llu compiles %llu", (unsigned long long)(now.hits - before.hits),
          (unsigned long long)now.corrupt, (unsigned long long)now.compiles);
    free(cubin);
    rt_rmtree(dir);
    return rt_done("test_fusert_cache_race");
}
