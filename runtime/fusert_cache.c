/* fusert_cache.c -- NVRTC compile with an on-disk CUBIN cache.
 *
 * Key: SHA-256 over, each prefixed by its length, a format tag, the CUDA
 * source, the full NVRTC option list (which holds the arch), the NVRTC
 * version and the driver version (0 without a driver).  Anything that
 * could change the machine code changes the key; the module name does not
 * (it only makes file names readable).
 *
 * Entry file <dir>/<name>-<first 32 hex digits of the key>.cubin, or
 * <dir>/<name>.<kernel>-<...>.cubin for one kernel compiled alone:
 *     offset  0  char[8]   magic "FUSERTC\0"
 *             8  uint32    format version (1)
 *            12  uint32    image kind: 0 CUBIN, 1 PTX (for the driver to JIT)
 *            16  uint8[32] the full key
 *            48  uint64    payload size in bytes
 *            56  uint8[32] SHA-256 of the payload
 *            88  payload
 * (host byte order: the cache is per machine).  An entry is used only when
 * magic, version, key, size and checksum all agree, so a truncated, flipped
 * or foreign file is counted as corrupt and recompiled.
 *
 * Trust.  The checksum catches damage, not a planted file: anyone who can
 * write to the folder can give a CUBIN of their own a valid header, and a
 * loaded kernel runs with all of the process's GPU memory.  So the folder
 * is used only when it is the user's own: opened with O_NOFOLLOW, and its
 * fstat must say a directory owned by the effective uid and writable by no
 * group or other.  Every later step goes through that directory fd
 * (openat, renameat, unlinkat), so swapping the path afterwards changes
 * nothing.  Entries are opened with O_NOFOLLOW and must be regular files
 * owned by the user and writable by no one else.  A refused folder or entry
 * is counted (untrusted) and the kernel compiled; a refused folder is never
 * written to.  The folder is created 0700, entries are written 0600.
 *
 * Writers create a unique temporary file in the folder and rename it over
 * the entry: readers see the old file or the new one, never a mix, and
 * processes filling the same entry at once are harmless (last one wins,
 * all write identical bytes).  Failing to create the folder or write the
 * file is counted and reported under FUSERT_VERBOSE, never fatal.
 *
 * Size.  A hit sets its entry's modification time to now (futimens), so
 * modification times order entries by last use.  After each write the
 * writer takes an exclusive flock on <dir>/.lock, adds up the entries and
 * removes the oldest until they fit in FUSERT_CACHE_MAX_MB.  Hits take no
 * lock: an entry removed while another process reads it stays readable
 * through that process's fd, and one removed just before it is opened is a
 * miss.
 *
 * Environment: FUSERT_CACHE_DIR, else $XDG_CACHE_HOME/fusert, else
 * $HOME/.cache/fusert; FUSERT_CACHE_DISABLE=1 skips the cache;
 * FUSERT_CACHE_MAX_MB the size limit; FUSERT_VERBOSE=1 prints hits, misses,
 * refusals and compile times to stderr. */
#include "fusert_internal.h"
#include "fusert_cache.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <nvrtc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "FUSERTC"
#define ENTRY_VERSION 1u
#define HEADER_BYTES 88
#define ENTRY_SUFFIX ".cubin"
#define TEMP_MARK ".cubin.tmp."
#define LOCK_FILE ".lock"
#define DEFAULT_LIMIT_MB 1024

/* Process-wide counters: the only mutable globals here, all atomic. */
static _Atomic uint64_t st_hits, st_misses, st_compiles, st_corrupt, st_write_failures;
static _Atomic uint64_t st_untrusted, st_evictions;
static _Atomic uint64_t st_compile_ns;
static atomic_flag said_refused = ATOMIC_FLAG_INIT; /* the folder's refusal, said once */

static void get_stats(fusert_cache_stats *out)
{
    out->hits = atomic_load(&st_hits);
    out->misses = atomic_load(&st_misses);
    out->compiles = atomic_load(&st_compiles);
    out->corrupt = atomic_load(&st_corrupt);
    out->write_failures = atomic_load(&st_write_failures);
    out->compile_ms_total = (double)atomic_load(&st_compile_ns) / 1e6;
    out->untrusted = atomic_load(&st_untrusted);
    out->evictions = atomic_load(&st_evictions);
}

#ifdef FUSERT_SYMVER
/* libfusert.so: fusert_get_cache_stats@@FUSERT_0.2.1 fills the whole
 * struct; a program linked before the struct grew refers to the symbol
 * without a version, which the dynamic linker binds to the oldest one,
 * @FUSERT_0.2, and that fills only the six fields such a program has room
 * for.  The static library has the one plain function. */
typedef struct cache_stats_0_2 {
    uint64_t hits, misses, compiles, corrupt, write_failures;
    double compile_ms_total;
} cache_stats_0_2;
void fusert__get_cache_stats_0_2(cache_stats_0_2 *out);
void fusert__get_cache_stats_0_2_1(fusert_cache_stats *out);
__asm__(".symver fusert__get_cache_stats_0_2, fusert_get_cache_stats@FUSERT_0.2");
__asm__(".symver fusert__get_cache_stats_0_2_1, fusert_get_cache_stats@@FUSERT_0.2.1");

void fusert__get_cache_stats_0_2(cache_stats_0_2 *out)
{
    if (!out)
        return;
    fusert_cache_stats all;
    get_stats(&all);
    memcpy(out, &all, sizeof *out); /* the same leading fields */
}

void fusert__get_cache_stats_0_2_1(fusert_cache_stats *out)
#else
void fusert_get_cache_stats(fusert_cache_stats *out)
#endif
{
    if (out)
        get_stats(out);
}

int fusert__env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

int fusert__verbose(void) { return fusert__env_flag("FUSERT_VERBOSE"); }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the folder ------------------------------------------------------------ */

int fusert__cache_dir(char *buf, size_t n)
{
    const char *d = getenv("FUSERT_CACHE_DIR");
    int len;
    if (d && *d)
        len = snprintf(buf, n, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d)
        len = snprintf(buf, n, "%s/fusert", d);
    else if ((d = getenv("HOME")) && *d)
        len = snprintf(buf, n, "%s/.cache/fusert", d);
    else
        return 0;
    return len > 0 && (size_t)len < n;
}

uint64_t fusert__cache_limit(void)
{
    const char *v = getenv("FUSERT_CACHE_MAX_MB");
    double mb = DEFAULT_LIMIT_MB;
    if (v && *v) {
        char *end;
        double x = strtod(v, &end);
        if (*end == 0 && x >= 0 && isfinite(x))
            mb = x;
    }
    if (mb == 0 || mb >= 1e12)
        return UINT64_MAX;
    return (uint64_t)(mb * 1024 * 1024);
}

/* mkdir -p: the parents under the user's umask, the folder itself 0700.
 * 0 on failure with errno set. */
static int make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return 0;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/' || p[1] == 0)
            continue;
        *p = 0;
        int ok = mkdir(path, 0777) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok)
            return 0;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

int fusert__cache_open(const char *dir, int create, char *why, size_t whyn)
{
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = open(dir, flags);
    if (fd < 0 && errno == ENOENT && create && make_dirs(dir))
        fd = open(dir, flags);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        /* O_NOFOLLOW on a symbolic link gives ELOOP (or ENOTDIR with
         * O_DIRECTORY on some systems): say which it was */
        if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
            snprintf(why, whyn, "it is a symbolic link (name the folder it points to)");
            return FUSERT_CACHE_REFUSED;
        }
        errno = e;
        return FUSERT_CACHE_MISSING;
    }
    struct stat st;
    uid_t me = geteuid();
    const char *problem = NULL;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return FUSERT_CACHE_MISSING;
    }
    if (st.st_uid != me)
        problem = "owned by another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        problem = "writable by group or others";
    if (problem) {
        snprintf(why, whyn, "%s (owner uid %u, mode %04o; this process runs as uid %u)",
                 problem, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)me);
        close(fd);
        return FUSERT_CACHE_REFUSED;
    }
    return fd;
}

/* The file name says what the entry holds: "<name>" or "<name>.<kernel>",
 * cut to 47 characters and made safe (the key's digits keep it unique). */
static void entry_name(char *buf, size_t n, const char *name, const char *kernel,
                       const unsigned char key[32])
{
    char stem[160], safe[48];
    snprintf(stem, sizeof stem, "%s%s%s", name, kernel ? "." : "", kernel ? kernel : "");
    size_t k = 0;
    for (const char *s = stem; *s && k < sizeof safe - 1; s++)
        safe[k++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                     (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.')
                        ? *s
                        : '_';
    safe[k] = 0;
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    snprintf(buf, n, "%s-%s" ENTRY_SUFFIX, safe, hex);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* An entry the cache may count, use or remove: a regular file of ours. */
static int own_file(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

/* ---- the size limit ---------------------------------------------------------- */

typedef struct file_info {
    char name[NAME_MAX + 1];
    uint64_t bytes;
    struct timespec mtime;
} file_info;

static int older_first(const void *a, const void *b)
{
    const file_info *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The folder's entries (all of them, with their sizes and times) into a
 * malloc'd array; the count into *n.  Files that vanish while we look are
 * skipped.  Stale temporary files are removed on the way when reap is set.
 * NULL with *n == 0 for an empty folder, or when it cannot be read. */
static file_info *list_entries(int dfd, size_t *n, int reap)
{
    *n = 0;
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    file_info *v = NULL;
    size_t cap = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        int entry = has_suffix(e->d_name, ENTRY_SUFFIX), temp = strstr(e->d_name, TEMP_MARK) != NULL;
        struct stat st;
        if ((!entry && !temp) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !own_file(&st))
            continue;
        if (temp) {
            if (reap && st.st_mtime < now - 3600)
                unlinkat(dfd, e->d_name, 0); /* a writer killed mid-write */
            continue;
        }
        if (*n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            file_info *nv = realloc(v, ncap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
            cap = ncap;
        }
        file_info *f = &v[(*n)++];
        snprintf(f->name, sizeof f->name, "%s", e->d_name);
        f->bytes = (uint64_t)st.st_size;
        f->mtime = st.st_mtim;
    }
    closedir(d);
    return v;
}

void fusert__cache_usage(int dfd, uint64_t *entries, uint64_t *bytes)
{
    size_t n;
    file_info *v = list_entries(dfd, &n, 0);
    *entries = n;
    *bytes = 0;
    for (size_t i = 0; i < n; i++)
        *bytes += v[i].bytes;
    free(v);
}

int fusert__cache_trim(int dfd, uint64_t limit, uint64_t *entries, uint64_t *bytes)
{
    if (entries)
        *entries = 0;
    if (bytes)
        *bytes = 0;
    int lk = openat(dfd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lk < 0)
        return 0;
    int r;
    while ((r = flock(lk, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (r != 0) {
        int e = errno;
        close(lk);
        errno = e;
        return 0;
    }
    size_t n;
    file_info *v = list_entries(dfd, &n, 1);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].bytes;
    if (total > limit) {
        qsort(v, n, sizeof *v, older_first);
        for (size_t i = 0; i < n && total > limit; i++) {
            /* ENOENT: another process removed it first; it is gone either way */
            if (unlinkat(dfd, v[i].name, 0) != 0 && errno != ENOENT)
                continue;
            total -= v[i].bytes;
            if (entries)
                ++*entries;
            if (bytes)
                *bytes += v[i].bytes;
        }
    }
    free(v);
    close(lk); /* releases the lock */
    return 1;
}

/* ---- reading and writing entries ----------------------------------------- */

typedef enum { READ_MISS, READ_HIT, READ_CORRUPT, READ_UNTRUSTED } ReadResult;

/* why: for READ_UNTRUSTED, what is wrong with the entry. */
static ReadResult read_entry(int dfd, const char *name, const unsigned char key[32],
                             void **image, size_t *size, int *kind, char *why, size_t whyn)
{
    /* O_NONBLOCK: a FIFO in its place must not hang the open */
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP) {
            snprintf(why, whyn, "it is a symbolic link");
            return READ_UNTRUSTED;
        }
        return READ_MISS;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return READ_MISS;
    }
    if (!own_file(&st) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, whyn, "%s (owner uid %u, mode %04o)",
                 !S_ISREG(st.st_mode) ? "it is not a regular file"
                 : st.st_uid != geteuid() ? "owned by another user"
                                          : "writable by group or others",
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        close(fd);
        return READ_UNTRUSTED;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return READ_MISS;
    }
    unsigned char h[HEADER_BYTES];
    ReadResult res = READ_CORRUPT;
    unsigned char *data = NULL;
    if (fread(h, 1, sizeof h, f) != sizeof h)
        goto done;
    uint32_t version, k;
    uint64_t n;
    memcpy(&version, h + 8, 4);
    memcpy(&k, h + 12, 4);
    memcpy(&n, h + 48, 8);
    if (memcmp(h, ENTRY_MAGIC, 8) != 0 || version != ENTRY_VERSION || k > 1 ||
        memcmp(h + 16, key, 32) != 0 || n == 0 || n > ((uint64_t)1 << 31))
        goto done;
    data = malloc((size_t)n + 1);
    if (!data)
        goto done;
    if (fread(data, 1, (size_t)n, f) != (size_t)n || fgetc(f) != EOF)
        goto done; /* truncated, or trailing bytes */
    unsigned char sum[32];
    fusert__sha256(data, (size_t)n, sum);
    if (memcmp(sum, h + 56, 32) != 0)
        goto done;
    data[n] = 0; /* PTX images must be NUL-terminated for cuModuleLoadData */
    *image = data;
    *size = (size_t)n;
    *kind = (int)k;
    data = NULL;
    res = READ_HIT;
    futimens(fileno(f), NULL); /* now its last use: the last to be evicted */
done:
    free(data);
    fclose(f);
    return res;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return 0;
        }
        c += w;
        n -= (size_t)w;
    }
    return 1;
}

/* A temporary file beside the entry, created 0600 and never through a
 * link (O_EXCL); its name into tmp.  -1 with errno set on failure. */
static int create_temp(int dfd, const char *name, char *tmp, size_t tmpn)
{
    static _Atomic unsigned serial;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned x = atomic_fetch_add(&serial, 1) * 2654435761u ^ (unsigned)ts.tv_nsec;
        if (snprintf(tmp, tmpn, "%s.tmp.%ld.%08x", name, (long)getpid(), x) >= (int)tmpn) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* Temp file + rename, in the folder dfd.  Returns 0 (errno set) on failure. */
static int write_entry(int dfd, const char *name, const unsigned char key[32],
                       const void *image, size_t size, int kind)
{
    char tmp[NAME_MAX + 64];
    int fd = create_temp(dfd, name, tmp, sizeof tmp);
    if (fd < 0)
        return 0;
    unsigned char h[HEADER_BYTES];
    uint32_t version = ENTRY_VERSION, k = (uint32_t)kind;
    uint64_t n = size;
    memcpy(h, ENTRY_MAGIC, 8);
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &k, 4);
    memcpy(h + 16, key, 32);
    memcpy(h + 48, &n, 8);
    fusert__sha256(image, size, h + 56);
    int ok = fchmod(fd, 0600) == 0 && write_all(fd, h, sizeof h) && write_all(fd, image, size);
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && renameat(dfd, tmp, dfd, name) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        unlinkat(dfd, tmp, 0);
        errno = saved;
    }
    return ok;
}

/* ---- NVRTC --------------------------------------------------------------- */

/* Does NVRTC <nv_major>.<nv_minor> take option opt?  Every option does,
 * but -minimal before NVRTC 12.4, which does not know it.  It only speeds
 * up the compile of a source that uses none of what it leaves out (texture
 * and surface functions, the device runtime, the CUDA runtime's types):
 * fusec's programs ask for it, and an older NVRTC compiles them without. */
int fusert__nvrtc_takes(const char *opt, int nv_major, int nv_minor)
{
    if (strcmp(opt, "-minimal") == 0 || strcmp(opt, "--minimal") == 0)
        return nv_major > 12 || (nv_major == 12 && nv_minor >= 4);
    return 1;
}

/* Options: the arch, our defaults, then the program's own (space separated)
 * that this NVRTC takes.  Writes pointers into store (a copy of opts we
 * own) and returns the count. */
#define MAX_OPTS 64
static int build_options(const char **argv, char *arch_opt, size_t arch_n, char *store,
                         const char *user, int major, int minor, int use_ptx)
{
    int n = 0, nv_major = 0, nv_minor = 0;
    snprintf(arch_opt, arch_n, "--gpu-architecture=%s_%d%d", use_ptx ? "compute" : "sm",
             major, minor);
    argv[n++] = arch_opt;
    argv[n++] = "-default-device";
    argv[n++] = "--std=c++17";
    if (user) {
        if (nvrtcVersion(&nv_major, &nv_minor) != NVRTC_SUCCESS)
            nv_major = nv_minor = 0;
        strcpy(store, user);
        char *save = NULL;
        for (char *t = strtok_r(store, " \t\n", &save); t;
             t = strtok_r(NULL, " \t\n", &save)) {
            if (!fusert__nvrtc_takes(t, nv_major, nv_minor))
                continue;
            if (n == MAX_OPTS)
                return -1;
            argv[n++] = t;
        }
    }
    return n;
}

/* Is sm_<major><minor> one NVRTC can emit SASS for?  If not, *ptx_arch gets
 * the newest supported arch below it and we hand the driver PTX to JIT. */
static int nvrtc_supports(int major, int minor, int *ptx_arch)
{
    int want = major * 10 + minor, n = 0;
    *ptx_arch = want;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256)
        return 1; /* cannot tell: try it */
    int archs[256];
    if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return 1;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (archs[i] == want)
            return 1;
        if (archs[i] < want && archs[i] > best)
            best = archs[i];
    }
    if (best > 0)
        *ptx_arch = best;
    return 0;
}

static void key_part(fusert_sha256 *c, const void *p, size_t n)
{
    uint64_t len = n;
    fusert__sha256_update(c, &len, sizeof len);
    fusert__sha256_update(c, p, n);
}

/* what: "module 'm'" or "kernel 'k' of module 'm'", for messages; NVRTC's
 * program (and so its log's file name) is the module name either way. */
static fusert_status nvrtc_compile(const char *name, const char *what, const char *source,
                                   const char **argv, int argc, const char *arch, int ptx,
                                   void **image, size_t *size)
{
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return fusert_set_error(FUSERT_ERROR_COMPILE, "NVRTC could not create a program for %s: %s",
                                what, nvrtcGetErrorString(r));
    r = nvrtcCompileProgram(prog, argc, argv);
    if (r != NVRTC_SUCCESS) {
        size_t loglen = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 0 &&
            (log = malloc(loglen + 1)) != NULL) {
            if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
                log[0] = 0;
            log[loglen] = 0;
        }
        fusert_status s = fusert_set_error(
            FUSERT_ERROR_COMPILE, "NVRTC failed to compile %s for %s (%s):\n%s", what, arch,
            nvrtcGetErrorString(r), log && *log ? log : "(no log)");
        free(log);
        nvrtcDestroyProgram(&prog);
        return s;
    }
    size_t n = 0;
    r = ptx ? nvrtcGetPTXSize(prog, &n) : nvrtcGetCUBINSize(prog, &n);
    char *out = r == NVRTC_SUCCESS && n > 0 ? malloc(n + 1) : NULL;
    if (!out) {
        nvrtcDestroyProgram(&prog);
        return r != NVRTC_SUCCESS
                   ? fusert_set_error(FUSERT_ERROR_COMPILE, "NVRTC gave no code for %s: %s",
                                      what, nvrtcGetErrorString(r))
                   : fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY,
                                      "out of host memory for a %zu-byte CUBIN", n);
    }
    r = ptx ? nvrtcGetPTX(prog, out) : nvrtcGetCUBIN(prog, out);
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(out);
        return fusert_set_error(FUSERT_ERROR_COMPILE, "NVRTC gave no code for %s: %s", what,
                                nvrtcGetErrorString(r));
    }
    out[n] = 0;
    *image = out;
    *size = n;
    return FUSERT_SUCCESS;
}

/* A folder that is not the user's own is neither read nor written: the
 * kernel is compiled, the refusal counted, and said once per process. */
static void refuse_folder(const char *dir, const char *why, int verbose)
{
    atomic_fetch_add(&st_untrusted, 1);
    if (verbose && !atomic_flag_test_and_set(&said_refused))
        fprintf(stderr, "fusert: not using the cache folder %s: %s; compiling without the "
                "cache\n", dir, why);
}

fusert_status fusert_compile(const char *name, const char *source, const char *options,
                             void **cubin, size_t *cubin_size)
{
    return fusert__compile(name, NULL, source, options, cubin, cubin_size);
}

fusert_status fusert__compile(const char *name, const char *kernel, const char *source,
                              const char *options, void **cubin, size_t *cubin_size)
{
    if (!source || !cubin || !cubin_size)
        return fusert_set_error(FUSERT_ERROR_NULL_POINTER,
                                "fusert_compile: source, cubin and cubin_size must not be NULL");
    if (!name)
        name = "module";
    *cubin = NULL;
    *cubin_size = 0;
    char what[320];
    if (kernel)
        snprintf(what, sizeof what, "kernel '%s' of module '%s'", kernel, name);
    else
        snprintf(what, sizeof what, "module '%s'", name);

    int major, minor, ptx_arch;
    fusert__target_arch(&major, &minor);
    int use_ptx = !nvrtc_supports(major, minor, &ptx_arch);
    if (use_ptx) {
        major = ptx_arch / 10;
        minor = ptx_arch % 10;
    }
    const char *argv[MAX_OPTS];
    char arch_opt[64];
    char *store = malloc(options ? strlen(options) + 1 : 1);
    if (!store)
        return fusert_set_error(FUSERT_ERROR_OUT_OF_MEMORY, "out of host memory");
    int argc = build_options(argv, arch_opt, sizeof arch_opt, store, options, major, minor,
                             use_ptx);
    if (argc < 0) {
        free(store);
        return fusert_set_error(FUSERT_ERROR_INVALID_VALUE,
                                "%s has more than %d NVRTC options", what, MAX_OPTS - 3);
    }
    char arch[32];
    snprintf(arch, sizeof arch, "%s_%d%d", use_ptx ? "compute" : "sm", major, minor);

    /* the key */
    int nv_major = 0, nv_minor = 0, driver = 0;
    nvrtcVersion(&nv_major, &nv_minor);
    const fusert_driver *d = fusert__driver_quiet();
    if (d)
        d->DriverGetVersion(&driver);
    int versions[3] = {nv_major, nv_minor, driver};
    fusert_sha256 hc;
    fusert__sha256_init(&hc);
    key_part(&hc, "fusert-cubin-1", 14);
    key_part(&hc, source, strlen(source));
    for (int i = 0; i < argc; i++)
        key_part(&hc, argv[i], strlen(argv[i]));
    key_part(&hc, versions, sizeof versions);
    key_part(&hc, arch, strlen(arch));
    unsigned char key[32];
    fusert__sha256_final(&hc, key);

    int verbose = fusert__verbose();
    int use_cache = !fusert__env_flag("FUSERT_CACHE_DISABLE");
    char dir[PATH_MAX], entry[NAME_MAX + 1], why[256];
    int dfd = FUSERT_CACHE_MISSING;
    if (use_cache && !fusert__cache_dir(dir, sizeof dir)) {
        use_cache = 0;
        if (verbose)
            fprintf(stderr, "fusert: no cache directory (set FUSERT_CACHE_DIR or HOME)\n");
    }
    if (use_cache) {
        entry_name(entry, sizeof entry, name, kernel, key);
        dfd = fusert__cache_open(dir, 0, why, sizeof why);
        if (dfd == FUSERT_CACHE_REFUSED) {
            use_cache = 0;
            refuse_folder(dir, why, verbose);
        }
    }
    if (use_cache && dfd >= 0) {
        double t0 = now_ms();
        int kind = 0;
        ReadResult rr = read_entry(dfd, entry, key, cubin, cubin_size, &kind, why, sizeof why);
        if (rr == READ_HIT) {
            atomic_fetch_add(&st_hits, 1);
            if (verbose)
                fprintf(stderr, "fusert: cache hit for %s (%s, %zu bytes, %.3f ms): %s/%s\n",
                        what, arch, *cubin_size, now_ms() - t0, dir, entry);
            free(store);
            close(dfd);
            return FUSERT_SUCCESS;
        }
        atomic_fetch_add(&st_misses, 1);
        if (rr == READ_CORRUPT) {
            atomic_fetch_add(&st_corrupt, 1);
            if (verbose)
                fprintf(stderr, "fusert: cache entry for %s is corrupt, recompiling: %s/%s\n",
                        what, dir, entry);
        } else if (rr == READ_UNTRUSTED) {
            atomic_fetch_add(&st_untrusted, 1);
            if (verbose)
                fprintf(stderr, "fusert: not using cache entry %s/%s: %s; recompiling\n", dir,
                        entry, why);
        } else if (verbose) {
            fprintf(stderr, "fusert: cache miss for %s (%s): %s/%s\n", what, arch, dir, entry);
        }
    } else if (use_cache) {
        atomic_fetch_add(&st_misses, 1); /* no folder yet: created when written */
        if (verbose)
            fprintf(stderr, "fusert: cache miss for %s (%s): %s/%s\n", what, arch, dir, entry);
    }

    double t0 = now_ms();
    fusert_status s =
        nvrtc_compile(name, what, source, argv, argc, arch, use_ptx, cubin, cubin_size);
    double ms = now_ms() - t0;
    free(store);
    if (s != FUSERT_SUCCESS) {
        if (dfd >= 0)
            close(dfd);
        return s;
    }
    atomic_fetch_add(&st_compiles, 1);
    atomic_fetch_add(&st_compile_ns, (uint64_t)(ms * 1e6));
    if (verbose)
        fprintf(stderr, "fusert: compiled %s for %s with NVRTC %d.%d in %.1f ms (%zu bytes)\n",
                what, arch, nv_major, nv_minor, ms, *cubin_size);
    if (!use_cache)
        return FUSERT_SUCCESS;
    if (dfd < 0) {
        /* The folder did not exist (or could not be opened): create it now.
         * It may have appeared meanwhile, so it is checked again. */
        dfd = fusert__cache_open(dir, 1, why, sizeof why);
        if (dfd == FUSERT_CACHE_REFUSED) {
            refuse_folder(dir, why, verbose);
            return FUSERT_SUCCESS;
        }
    }
    if (dfd < 0 || !write_entry(dfd, entry, key, *cubin, *cubin_size, use_ptx)) {
        atomic_fetch_add(&st_write_failures, 1);
        if (verbose)
            fprintf(stderr, "fusert: cannot write cache entry %s/%s: %s (continuing)\n", dir,
                    entry, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return FUSERT_SUCCESS;
    }
    uint64_t gone = 0, gone_bytes = 0, limit = fusert__cache_limit();
    if (limit != UINT64_MAX && fusert__cache_trim(dfd, limit, &gone, &gone_bytes) && gone) {
        atomic_fetch_add(&st_evictions, gone);
        if (verbose)
            fprintf(stderr, "fusert: removed %llu least recently used cache entries (%llu "
                    "bytes) to stay under %llu bytes: %s\n", (unsigned long long)gone,
                    (unsigned long long)gone_bytes, (unsigned long long)limit, dir);
    }
    close(dfd);
    return FUSERT_SUCCESS;
}
