/* test_fusert_cache.c -- the on-disk CUBIN cache: a miss then a hit with the
 * same bytes; flipped, truncated and foreign entries are detected by the
 * header and checksum, counted as corrupt and recompiled; a cache directory
 * that cannot be created is not fatal; FUSERT_CACHE_DISABLE=1 bypasses it;
 * a different option is a different key.
 *
 * RUN: %rtbin/test_fusert_cache | FileCheck %s
 * CHECK: cache hit ready in {{[0-9.]+}} ms
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_cache: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <fcntl.h>
#include <sys/stat.h>

static fusert_cache_stats stats(void)
{
    fusert_cache_stats s;
    fusert_get_cache_stats(&s);
    return s;
}

#define DELTA(field) ((unsigned long long)(now.field - before.field))

/* Compile src and compare against the reference image when one is given. */
static void compile_ok(const char *src, const char *opts, const void *ref, size_t refn)
{
    void *cubin = NULL;
    size_t n = 0;
    CHECK_STATUS(fusert_compile("cached", src, opts, &cubin, &n), FUSERT_SUCCESS);
    CHECK(cubin && rt_is_elf(cubin, n), "not a CUBIN");
    if (ref)
        CHECK(n == refn && memcmp(cubin, ref, n) == 0, "image differs (%zu vs %zu bytes)", n, refn);
    free(cubin);
}

static void patch_file(const char *path, long off, unsigned char xor_mask)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ xor_mask, f);
    fclose(f);
}

int main(void)
{
    setenv("FUSERT_ARCH", "sm_90", 1);
    unsetenv("FUSERT_CACHE_DISABLE");
    char *dir = rt_tempdir();
    CHECK(dir != NULL, "mkdtemp failed");
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/nested/cache", dir); /* created on demand */
    setenv("FUSERT_CACHE_DIR", sub, 1);
    const char *src = rt_kernel_source("cache test");

    /* miss, compile, write */
    fusert_cache_stats before = stats(), now;
    void *ref = NULL;
    size_t refn = 0;
    CHECK_STATUS(fusert_compile("cached", src, NULL, &ref, &refn), FUSERT_SUCCESS);
    now = stats();
    CHECK(DELTA(misses) == 1 && DELTA(compiles) == 1 && DELTA(hits) == 0, "first: misses %llu "
          "compiles %llu hits %llu", DELTA(misses), DELTA(compiles), DELTA(hits));
    char entry[4096] = "";
    CHECK(rt_count_files(sub, ".cubin", entry, sizeof entry) == 1, "no entry in %s", sub);
    CHECK(strstr(entry, "/cached-") != NULL, "entry name should start with the module: %s", entry);
    CHECK(rt_count_files(sub, "", NULL, 0) == 1, "temporary files left in %s", sub);

    /* hit: same bytes, no compile, fast */
    before = stats();
    double t0 = rt_now_ms();
    compile_ok(src, NULL, ref, refn);
    double ms = rt_now_ms() - t0;
    now = stats();
    printf("cache hit ready in %.3f ms\n", ms);
    CHECK(DELTA(hits) == 1 && DELTA(compiles) == 0 && DELTA(misses) == 0,
          "second: hits %llu compiles %llu", DELTA(hits), DELTA(compiles));

    /* another option string is another key */
    before = stats();
    compile_ok(src, "-DUNUSED_FLAG=1", NULL, 0);
    now = stats();
    CHECK(DELTA(misses) == 1 && DELTA(compiles) == 1, "new options must miss");
    CHECK(rt_count_files(sub, ".cubin", NULL, 0) == 2, "expected two entries");
    /* from here on only the first entry matters */
    char entry2[4096] = "";
    DIR *dd = opendir(sub);
    for (struct dirent *e; dd && (e = readdir(dd)) != NULL;)
        if (e->d_name[0] != '.' && !strstr(entry, e->d_name))
            snprintf(entry2, sizeof entry2, "%.2000s/%.1000s", sub, e->d_name);
    if (dd)
        closedir(dd);
    CHECK(entry2[0] != 0, "the second entry is missing");
    struct stat st;
    CHECK(stat(entry, &st) == 0, "entry vanished");
    off_t size = st.st_size;
    CHECK(size == (off_t)(refn + 88), "entry is %lld bytes, expected %zu", (long long)size,
          refn + 88);

    /* corruption: a flipped payload byte, a flipped key byte, truncation,
     * trailing junk, an empty file: each detected, recompiled, rewritten */
    struct {
        const char *what;
        long off;       /* byte to flip (negative: from the end), or -1000 none */
        off_t truncate; /* new size, or -1 */
        int append;
    } cases[] = {
        {"flipped payload byte", -10, -1, 0},
        {"flipped key byte", 20, -1, 0},
        {"flipped magic", 0, -1, 0},
        {"truncated payload", -1000, size - 7, 0},
        {"truncated header", -1000, 40, 0},
        {"empty file", -1000, 0, 0},
        {"trailing junk", -1000, -1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].off != -1000)
            patch_file(entry, cases[i].off, 0x5a);
        if (cases[i].truncate >= 0)
            CHECK(truncate(entry, cases[i].truncate) == 0, "truncate failed");
        if (cases[i].append) {
            FILE *f = fopen(entry, "ab");
            fputs("junk", f);
            fclose(f);
        }
        before = stats();
        compile_ok(src, NULL, ref, refn);
        now = stats();
        CHECK(DELTA(corrupt) == 1 && DELTA(compiles) == 1 && DELTA(hits) == 0,
              "%s: corrupt %llu compiles %llu hits %llu", cases[i].what, DELTA(corrupt),
              DELTA(compiles), DELTA(hits));
        CHECK(stat(entry, &st) == 0 && st.st_size == size, "%s: entry not rewritten",
              cases[i].what);
        before = stats();
        compile_ok(src, NULL, ref, refn);
        now = stats();
        CHECK(DELTA(hits) == 1, "%s: the rewritten entry does not hit", cases[i].what);
    }

    /* An entry for another key copied into place (a hash-prefix clash) is
     * not trusted either: the full key is in the header. */
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", entry2, entry);
    CHECK(system(cmd) == 0, "cp failed");
    before = stats();
    compile_ok(src, NULL, ref, refn);
    now = stats();
    CHECK(DELTA(corrupt) == 1, "a foreign entry was trusted");

    /* FUSERT_CACHE_DISABLE=1: no lookups, no writes */
    rt_rmtree(sub);
    setenv("FUSERT_CACHE_DISABLE", "1", 1);
    before = stats();
    compile_ok(src, NULL, ref, refn);
    now = stats();
    CHECK(DELTA(compiles) == 1 && DELTA(hits) == 0 && DELTA(misses) == 0, "disabled cache used");
    CHECK(rt_count_files(sub, "", NULL, 0) == 0, "disabled cache wrote files");
    setenv("FUSERT_CACHE_DISABLE", "0", 1); /* "0" means enabled */
    compile_ok(src, NULL, ref, refn);
    CHECK(rt_count_files(sub, ".cubin", NULL, 0) == 1, "FUSERT_CACHE_DISABLE=0 should cache");

    /* An unusable cache directory (below a regular file, so mkdir fails even
     * for root) is counted, not fatal. */
    char file[4096], bad[4200];
    snprintf(file, sizeof file, "%s/plain-file", dir);
    FILE *f = fopen(file, "w");
    fputs("not a directory\n", f);
    fclose(f);
    snprintf(bad, sizeof bad, "%s/sub/cache", file);
    setenv("FUSERT_CACHE_DIR", bad, 1);
    before = stats();
    compile_ok(src, NULL, ref, refn);
    now = stats();
    CHECK(DELTA(write_failures) == 1 && DELTA(compiles) == 1, "write_failures %llu",
          DELTA(write_failures));

    /* XDG_CACHE_HOME is used when FUSERT_CACHE_DIR is not set. */
    unsetenv("FUSERT_CACHE_DIR");
    char xdg[4096], xdgsub[4200];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", xdg, 1);
    compile_ok(src, NULL, ref, refn);
    snprintf(xdgsub, sizeof xdgsub, "%s/fusert", xdg);
    CHECK(rt_count_files(xdgsub, ".cubin", NULL, 0) == 1, "nothing cached under %s", xdgsub);

    free(ref);
    rt_rmtree(dir);
    return rt_done("test_fusert_cache");
}
