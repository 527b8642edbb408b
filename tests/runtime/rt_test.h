/* rt_test.h -- the little harness of the runtime unit tests.
 *
 * CHECK(cond, fmt, ...) counts a check and prints "FAIL file:line: ..." when
 * it does not hold; rt_done() prints the summary lit's FileCheck matches and
 * gives the exit status ctest uses.  Every test sets up its own cache
 * directory and arch, so it runs the same under ctest, lit or by hand. */
#ifndef RT_TEST_H
#define RT_TEST_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fusert.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rt_checks, rt_failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        rt_checks++;                                                           \
        if (!(cond)) {                                                         \
            rt_failures++;                                                     \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
            fflush(stdout);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_STATUS(expr, want)                                               \
    do {                                                                       \
        fusert_status st_ = (expr);                                            \
        CHECK(st_ == (want), "%s returned %s, expected %s; last error: %s", #expr, \
              fusert_status_name(st_), fusert_status_name(want), fusert_last_error()); \
    } while (0)

static inline int rt_done(const char *name)
{
    if (rt_failures) {
        printf("%s: %d of %d checks FAILED\n", name, rt_failures, rt_checks);
        return 1;
    }
    printf("%s: all %d checks passed\n", name, rt_checks);
    return 0;
}

static inline double rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A fresh private cache directory (removed by rt_rmtree at the end). */
static inline char *rt_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    static char path[4096];
    snprintf(path, sizeof path, "%s/fusert-test-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(path);
}

static inline void rt_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        if (unlink(p) != 0)
            rt_rmtree(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Files in dir whose name ends with suffix; the last one's path into out. */
static inline int rt_count_files(const char *dir, const char *suffix, char *out, size_t outn)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0)
            continue;
        n++;
        if (out && snprintf(out, outn, "%s/%s", dir, e->d_name) >= (int)outn)
            out[0] = 0;
    }
    closedir(d);
    return n;
}

/* A kernel small enough to compile fast; `tag` makes distinct sources. */
static inline char *rt_kernel_source(const char *tag)
{
    static char src[1024];
    snprintf(src, sizeof src,
             "// %s\n"
             "extern \"C\" __global__ void scale_add(const float *x, float *y, float a, long n)\n"
             "{\n"
             "    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
             "    if (i < n)\n"
             "        y[i] = a * x[i] + 1.0f;\n"
             "}\n",
             tag);
    return src;
}

static inline int rt_is_elf(const void *p, size_t n)
{
    return n > 4 && memcmp(p, "\x7f" "ELF", 4) == 0;
}
#endif
