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
 * or foreign file is counted as corrupt and recompiled, never trusted.
 * Writers create a unique temporary file in the same directory and rename()
 * it over the entry: readers see the old file or the new one, never a mix,
 * and processes filling the same entry at once are harmless (last one wins,
 * all write identical bytes).  Failing to create the directory or write the
 * file is counted and reported under FUSERT_VERBOSE, never fatal.
 *
 * Environment: FUSERT_CACHE_DIR, else $XDG_CACHE_HOME/fusert, else
 * $HOME/.cache/fusert; FUSERT_CACHE_DISABLE=1 skips the cache;
 * FUSERT_VERBOSE=1 prints hits, misses and compile times to stderr. */
#include "fusert_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nvrtc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "FUSERTC"
#define ENTRY_VERSION 1u
#define HEADER_BYTES 88

/* Process-wide counters: the only mutable globals here, all atomic. */
static _Atomic uint64_t st_hits, st_misses, st_compiles, st_corrupt, st_write_failures;
static _Atomic uint64_t st_compile_ns;

void fusert_get_cache_stats(fusert_cache_stats *out)
{
    if (!out)
        return;
    out->hits = atomic_load(&st_hits);
    out->misses = atomic_load(&st_misses);
    out->compiles = atomic_load(&st_compiles);
    out->corrupt = atomic_load(&st_corrupt);
    out->write_failures = atomic_load(&st_write_failures);
    out->compile_ms_total = (double)atomic_load(&st_compile_ns) / 1e6;
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

/* ---- where entries live ------------------------------------------------ */

/* The cache directory into buf; 0 when there is none to use. */
static int cache_dir(char *buf, size_t n)
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

/* mkdir -p; 0 on failure with errno set. */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int ok = mkdir(path, 0755) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok)
            return 0;
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return 0;
    }
    return 1;
}

/* The file name says what the entry holds: "<name>" or "<name>.<kernel>",
 * cut to 47 characters and made safe (the key's digits keep it unique). */
static int entry_path(char *buf, size_t n, const char *dir, const char *name,
                      const char *kernel, const unsigned char key[32])
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
    int len = snprintf(buf, n, "%s/%s-%s.cubin", dir, safe, hex);
    return len > 0 && (size_t)len < n;
}

/* ---- reading and writing entries ----------------------------------------- */

typedef enum { READ_MISS, READ_HIT, READ_CORRUPT } ReadResult;

static ReadResult read_entry(const char *path, const unsigned char key[32], void **image,
                             size_t *size, int *kind)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return READ_MISS;
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

/* Temp file + rename.  Returns 0 (errno set) on failure. */
static int write_entry(char *dir, const char *path, const unsigned char key[32],
                       const void *image, size_t size, int kind)
{
    if (!make_dirs(dir))
        return 0;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return 0;
    }
    int fd = mkstemp(tmp);
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
    int ok = write_all(fd, h, sizeof h) && write_all(fd, image, size);
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok) {
        chmod(tmp, 0644); /* mkstemp makes 0600; entries are plain data */
        if (rename(tmp, path) != 0) {
            ok = 0;
            saved = errno;
        }
    }
    if (!ok) {
        unlink(tmp);
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
    char dir[PATH_MAX], path[PATH_MAX];
    if (use_cache && !cache_dir(dir, sizeof dir)) {
        use_cache = 0;
        if (verbose)
            fprintf(stderr, "fusert: no cache directory (set FUSERT_CACHE_DIR or HOME)\n");
    }
    if (use_cache && !entry_path(path, sizeof path, dir, name, kernel, key))
        use_cache = 0; /* a path too long for the system: skip the cache */
    if (use_cache) {
        double t0 = now_ms();
        int kind = 0;
        ReadResult rr = read_entry(path, key, cubin, cubin_size, &kind);
        if (rr == READ_HIT) {
            atomic_fetch_add(&st_hits, 1);
            if (verbose)
                fprintf(stderr, "fusert: cache hit for %s (%s, %zu bytes, %.3f ms): %s\n",
                        what, arch, *cubin_size, now_ms() - t0, path);
            free(store);
            return FUSERT_SUCCESS;
        }
        atomic_fetch_add(&st_misses, 1);
        if (rr == READ_CORRUPT) {
            atomic_fetch_add(&st_corrupt, 1);
            if (verbose)
                fprintf(stderr, "fusert: cache entry for %s is corrupt, recompiling: %s\n",
                        what, path);
        } else if (verbose) {
            fprintf(stderr, "fusert: cache miss for %s (%s): %s\n", what, arch, path);
        }
    }

    double t0 = now_ms();
    fusert_status s =
        nvrtc_compile(name, what, source, argv, argc, arch, use_ptx, cubin, cubin_size);
    double ms = now_ms() - t0;
    free(store);
    if (s != FUSERT_SUCCESS)
        return s;
    atomic_fetch_add(&st_compiles, 1);
    atomic_fetch_add(&st_compile_ns, (uint64_t)(ms * 1e6));
    if (verbose)
        fprintf(stderr, "fusert: compiled %s for %s with NVRTC %d.%d in %.1f ms (%zu bytes)\n",
                what, arch, nv_major, nv_minor, ms, *cubin_size);
    if (use_cache && !write_entry(dir, path, key, *cubin, *cubin_size, use_ptx)) {
        atomic_fetch_add(&st_write_failures, 1);
        if (verbose)
            fprintf(stderr, "fusert: cannot write cache entry %s: %s (continuing)\n", path,
                    strerror(errno));
    }
    return FUSERT_SUCCESS;
}
