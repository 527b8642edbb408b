/* test_fusert_cache_evict.c -- FUSERT_CACHE_MAX_MB bounds the cache folder,
 * least recently used entries going first.
 *
 *   fill     two processes compile 8 new kernels each into one folder with
 *            room for 6 entries, at once: afterwards exactly 6 entries and
 *            no temporary files are left, within the limit, and each
 *            process's survivors are the last ones it wrote (oldest first);
 *   lru      in one process, a hit makes its entry the most recently used:
 *            of entries A, B, C (oldest first) with A then hit, a new
 *            entry D evicts B, and the next new one C, never A;
 *   reap     a temporary file a killed writer left over an hour ago goes
 *            with the next trim, a fresh one (a writer at work) stays.
 * Entries of these sources all have one size (the kernels differ only in a
 * comment of equal length), which the test checks.  The parent forks its
 * writers before it touches NVRTC itself.
 *
 * RUN: %rtbin/test_fusert_cache_evict | FileCheck %s
 * CHECK: fill: 16 written, 6 left ({{[0-9]+}} of {{[0-9]+}} bytes)
 * CHECK: lru: B then C evicted, A kept
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_cache_evict: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define WRITERS 2
#define PER_WRITER 8
#define ROOM 6 /* entries that fit under the limit */

static char *source_for(const char *tag)
{
    return rt_kernel_source(tag); /* tags of one length: one entry size */
}

/* Compile name's kernel in a process of its own (so that the parent does
 * not touch NVRTC before it forks); 0 on success. */
static int compile_in_child(const char *name, const char *tag)
{
    pid_t pid = fork();
    if (pid == 0) {
        void *cubin = NULL;
        size_t n = 0;
        _exit(fusert_compile(name, source_for(tag), NULL, &cubin, &n) == FUSERT_SUCCESS ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The limit as FUSERT_CACHE_MAX_MB takes it, in MiB. */
static void set_limit(long long bytes)
{
    char mb[64];
    snprintf(mb, sizeof mb, "%.9f", (double)bytes / (1024.0 * 1024.0));
    setenv("FUSERT_CACHE_MAX_MB", mb, 1);
}

/* The entry of module `name` in dir, if there is one (its path into out). */
static int entry_of(const char *dir, const char *name, char *out, size_t n)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s-", name);
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, ".cubin") &&
            !strstr(e->d_name, ".tmp.")) {
            found = 1;
            if (out && snprintf(out, n, "%s/%s", dir, e->d_name) >= (int)n)
                out[0] = 0;
        }
    if (d)
        closedir(d);
    return found;
}

static long long dir_bytes(const char *dir)
{
    long long total = 0;
    char path[8192];
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
                                       (int)sizeof path)
            total += file_size(path);
    if (d)
        closedir(d);
    return total;
}

static void test_fill(const char *base, long long entry)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/fill", base);
    setenv("FUSERT_CACHE_DIR", dir, 1);
    long long limit = ROOM * entry + entry / 2;
    set_limit(limit);
    int go[2];
    CHECK(pipe(go) == 0, "pipe");
    pid_t kids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        kids[w] = fork();
        if (kids[w] == 0) {
            char c, name[32], tag[32];
            close(go[1]);
            if (read(go[0], &c, 1) < 0) /* wait for the start (EOF) */
                _exit(3);
            for (int i = 0; i < PER_WRITER; i++) {
                snprintf(name, sizeof name, "w%d_%02d", w, i);
                snprintf(tag, sizeof tag, "fill %d %02d", w, i);
                void *cubin = NULL;
                size_t n = 0;
                if (fusert_compile(name, source_for(tag), NULL, &cubin, &n) != FUSERT_SUCCESS)
                    _exit(1);
                free(cubin);
            }
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        waitpid(kids[w], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed (%d)", w, status);
    }
    int left = rt_count_files(dir, ".cubin", NULL, 0);
    long long bytes = dir_bytes(dir);
    CHECK(left == ROOM, "%d entries left, want %d", left, ROOM);
    CHECK(bytes <= limit, "%lld bytes left, over the limit %lld", bytes, limit);
    CHECK(rt_count_files(dir, "", NULL, 0) == left, "temporary files left behind");
    /* each writer's survivors are the last ones it wrote */
    for (int w = 0; w < WRITERS; w++) {
        int seen_kept = 0;
        for (int i = 0; i < PER_WRITER; i++) {
            char name[32];
            snprintf(name, sizeof name, "w%d_%02d", w, i);
            int kept = entry_of(dir, name, NULL, 0);
            CHECK(kept || !seen_kept, "writer %d: %s evicted while an older one stayed", w, name);
            seen_kept |= kept;
        }
    }
    printf("fill: %d written, %d left (%lld of %lld bytes)\n", WRITERS * PER_WRITER, left, bytes,
           limit);
}

static void test_lru(const char *base, long long entry)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/lru", base);
    setenv("FUSERT_CACHE_DIR", dir, 1);
    unsetenv("FUSERT_CACHE_MAX_MB"); /* the default, 1 GiB, while A, B, C go in */
    const char *names[] = {"A", "B", "C", "D"};
    char paths[4][8400];
    void *cubin;
    size_t n;
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(fusert_compile(names[i], source_for(names[i]), NULL, &cubin, &n),
                     FUSERT_SUCCESS);
        free(cubin);
        CHECK(entry_of(dir, names[i], paths[i], sizeof paths[i]), "no entry for %s", names[i]);
        /* A, B, C last used 300, 200, 100 s ago */
        struct timespec t[2];
        clock_gettime(CLOCK_REALTIME, &t[0]);
        t[0].tv_sec -= 300 - 100 * i;
        t[1] = t[0];
        CHECK(utimensat(AT_FDCWD, paths[i], t, 0) == 0, "utimensat: %s", strerror(errno));
    }
    fusert_cache_stats before, now;
    fusert_get_cache_stats(&before);
    CHECK_STATUS(fusert_compile("A", source_for("A"), NULL, &cubin, &n), FUSERT_SUCCESS);
    free(cubin);
    fusert_get_cache_stats(&now);
    CHECK(now.hits == before.hits + 1, "A should hit");

    set_limit(3 * entry + entry / 2);
    CHECK_STATUS(fusert_compile("D", source_for("D"), NULL, &cubin, &n), FUSERT_SUCCESS);
    free(cubin);
    fusert_get_cache_stats(&now);
    int a = entry_of(dir, "A", NULL, 0), b = entry_of(dir, "B", NULL, 0);
    int c = entry_of(dir, "C", NULL, 0), d = entry_of(dir, "D", NULL, 0);
    CHECK(a && !b && c && d, "after D: A %d B %d C %d D %d (want B gone)", a, b, c, d);
    CHECK(now.evictions == before.evictions + 1, "evictions +%llu",
          (unsigned long long)(now.evictions - before.evictions));

    /* B is a miss now; writing it again evicts C, the least recently used */
    CHECK_STATUS(fusert_compile("B", source_for("B"), NULL, &cubin, &n), FUSERT_SUCCESS);
    free(cubin);
    a = entry_of(dir, "A", NULL, 0), b = entry_of(dir, "B", NULL, 0);
    c = entry_of(dir, "C", NULL, 0), d = entry_of(dir, "D", NULL, 0);
    CHECK(a && b && !c && d, "after B again: A %d B %d C %d D %d (want C gone)", a, b, c, d);
    if (a && !c)
        printf("lru: B then C evicted, A kept\n");
}

static void test_reap(const char *base)
{
    char dir[4200], stale[4400], fresh[4400];
    snprintf(dir, sizeof dir, "%s/lru", base);
    snprintf(stale, sizeof stale, "%s/X-00.cubin.tmp.1.deadbeef", dir);
    snprintf(fresh, sizeof fresh, "%s/Y-00.cubin.tmp.2.cafebabe", dir);
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(i ? fresh : stale, "w");
        CHECK(f != NULL, "cannot create a temporary file");
        if (f) {
            fputs("half an entry", f);
            fclose(f);
        }
    }
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= 7200;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, stale, t, 0) == 0, "utimensat");
    void *cubin;
    size_t n;
    CHECK_STATUS(fusert_compile("E", source_for("E"), NULL, &cubin, &n), FUSERT_SUCCESS);
    free(cubin);
    CHECK(file_size(stale) < 0, "a two-hour-old temporary file was left");
    CHECK(file_size(fresh) > 0, "a fresh temporary file was removed");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    setenv("FUSERT_ARCH", "sm_90", 1);
    unsetenv("FUSERT_CACHE_DISABLE");
    unsetenv("FUSERT_LIBCUDA");
    char *base = rt_tempdir();
    if (!base) {
        printf("FAIL no temporary directory\n");
        return 1;
    }

    /* the size of one entry, from a probe compile in a child */
    char probe[4200], path[8400];
    snprintf(probe, sizeof probe, "%s/probe", base);
    setenv("FUSERT_CACHE_DIR", probe, 1);
    CHECK(compile_in_child("probe", "probe") == 0 && compile_in_child("PROBE", "PROBE") == 0,
          "probe compile failed");
    long long entry = entry_of(probe, "probe", path, sizeof path) ? file_size(path) : -1;
    long long other = entry_of(probe, "PROBE", path, sizeof path) ? file_size(path) : -2;
    CHECK(entry > 88 && entry == other, "entries of %lld and %lld bytes: not one size", entry,
          other);
    if (entry <= 88)
        return rt_done("test_fusert_cache_evict");

    test_fill(base, entry);
    test_lru(base, entry);
    test_reap(base);
    rt_rmtree(base);
    return rt_done("test_fusert_cache_evict");
}
