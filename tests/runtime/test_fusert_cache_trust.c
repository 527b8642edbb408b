/* test_fusert_cache_trust.c -- the cache uses only the user's own files.
 *
 * A planted entry is the attack: a CUBIN of someone else's with a header
 * that is valid for the key (the checksum is only a checksum).  The test
 * forges one (a module with an extra kernel, `planted`), shows that it IS
 * loaded from a folder and an entry that are the user's own, and then that
 * it is refused, with the call still succeeding on a fresh compile, from a
 * world-writable folder, a sticky world-writable one (as /tmp), a
 * group-writable one, a folder owned by another user, a folder that is a
 * symbolic link, an entry that is a symbolic link, an entry owned by another
 * user, a group-writable entry and a FIFO.  Every refusal is counted in
 * fusert_get_cache_stats().untrusted, and FUSERT_VERBOSE says the folder's
 * once.  A refused folder is never written to; a refused entry in the
 * user's own folder is replaced.  Also: the folder is created 0700 below
 * parents made with the umask, and entries are written 0600.
 *
 * fusert runs over the fake driver (Inputs/fake_libcuda.c), which reads
 * the kernels of each CUBIN it loads: a loaded planted module has two.
 * The other-user cases chown to `nobody` and need root; elsewhere they say
 * "skipped".
 *
 * RUN: %rtbin/test_fusert_cache_trust 2>%t.err | FileCheck %s
 * RUN: FileCheck %s --check-prefix=VERBOSE < %t.err
 * CHECK: control: the forged entry is loaded from the user's own folder
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_cache_trust: all {{[0-9]+}} checks passed
 * VERBOSE: fusert: not using the cache folder {{.*}}/world: writable by group or others (owner uid {{[0-9]+}}, mode 0777
 * VERBOSE-NOT: not using the cache folder
 * VERBOSE: fusert: not using cache entry {{.*}}/link-entry/trust-{{[0-9a-f]+}}.cubin: it is a symbolic link; recompiling
 * VERBOSE: fusert: not using cache entry {{.*}}/group-entry/trust-{{[0-9a-f]+}}.cubin: writable by group or others (owner uid {{[0-9]+}}, mode 0660)
 * VERBOSE: fusert: not using cache entry {{.*}}/fifo/trust-{{[0-9a-f]+}}.cubin: it is not a regular file
 * VERBOSE-NOT: not using the cache folder
 */
#include "rt_test.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>

#ifndef FAKE_LIBCUDA
#error "FAKE_LIBCUDA: the path of the fake driver (tests/CMakeLists.txt sets it)"
#endif

/* runtime/sha256.c (the static library has it) */
void fusert__sha256(const void *data, size_t n, unsigned char out[32]);

static int (*loads)(void), (*module_kernels)(void *f);

static void bind_fake(void)
{
    void *h = dlopen(FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    void *a = h ? dlsym(h, "fake_module_loads") : NULL;
    void *b = h ? dlsym(h, "fake_function_module_kernels") : NULL;
    if (!a || !b) {
        printf("FAIL cannot use the fake driver %s\n", FAKE_LIBCUDA);
        exit(1);
    }
    memcpy(&loads, &a, sizeof a);
    memcpy(&module_kernels, &b, sizeof b);
}

static const char genuine[] =
    "extern \"C\" __global__ void scale_add(const float *x, float *y, float a, long n)\n"
    "{ long i = (long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + 1.0f; }\n";
static const char planted[] =
    "extern \"C\" __global__ void scale_add(const float *x, float *y, float a, long n)\n"
    "{ long i = (long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + 1.0f; }\n"
    "extern \"C\" __global__ void planted(float *y) { y[0] = 42.0f; }\n";
static const char *const kernel_names[] = {"scale_add"};

static fusert_cache_stats stats(void)
{
    fusert_cache_stats s;
    fusert_get_cache_stats(&s);
    return s;
}

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    *n = p && fread(p, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
    fclose(f);
    return p;
}

static int write_file(const char *path, const void *p, size_t n, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (fd < 0)
        return 0;
    int ok = write(fd, p, n) == (ssize_t)n;
    return close(fd) == 0 && ok && chmod(path, mode) == 0;
}

static int same_file(const char *path, const void *p, size_t n)
{
    size_t m = 0;
    char *q = read_file(path, &m);
    int same = q && m == n && memcmp(p, q, n) == 0;
    free(q);
    return same;
}

/* The forged entry: the genuine entry's header (magic, version, key) with
 * the planted CUBIN as payload, its size and checksum made to match. */
static char forged[1 << 20];
static size_t forged_n;
static char entry_name[256];

/* A fresh copy of the program (its module slots empty), loaded from cache
 * folder dir: the loaded module's kernel count (1 compiled, 2 planted). */
static fusert_program programs[32]; /* each loaded once, kept as generated code keeps them */
static int nprograms;

static int load_from(const char *dir, fusert_status *st)
{
    setenv("FUSERT_CACHE_DIR", dir, 1);
    if (nprograms == 32) {
        printf("FAIL out of programs\n");
        exit(1);
    }
    fusert_program *p = &programs[nprograms++];
    p->name = "trust";
    p->source = genuine;
    p->kernels = kernel_names;
    p->nkernels = 1;
    void *fn = NULL;
    *st = fusert_program_kernel(p, 0, &fn);
    return fn ? module_kernels(fn) : -1;
}

static char base[4096];

static void path_in(char *out, size_t n, const char *dir, const char *file)
{
    if (snprintf(out, n, "%s/%s%s%s", base, dir, file ? "/" : "", file ? file : "") >= (int)n)
        out[0] = 0; /* too long: fails the check that uses it */
}

/* A folder (made with `mode`) holding the forged entry, the entry's path
 * into entry. */
static void plant(const char *name, mode_t mode, char *dir, char *entry, size_t n)
{
    path_in(dir, n, name, NULL);
    CHECK(mkdir(dir, 0700) == 0 && chmod(dir, mode) == 0, "mkdir %s: %s", dir, strerror(errno));
    path_in(entry, n, name, entry_name);
    CHECK(write_file(entry, forged, forged_n, 0600), "cannot plant %s", entry);
}

/* The call succeeds, the compiled kernel is loaded, not the planted one,
 * and the refusal is counted. */
static void expect_refused(const char *what, const char *dir)
{
    fusert_cache_stats before = stats();
    fusert_status st;
    int kernels = load_from(dir, &st);
    fusert_cache_stats now = stats();
    CHECK(st == FUSERT_SUCCESS, "%s: %s: %s", what, fusert_status_name(st), fusert_last_error());
    CHECK(kernels == 1, "%s: the planted module was loaded (%d kernels)", what, kernels);
    CHECK(now.untrusted == before.untrusted + 1 && now.hits == before.hits &&
              now.compiles == before.compiles + 1,
          "%s: untrusted +%llu hits +%llu compiles +%llu", what,
          (unsigned long long)(now.untrusted - before.untrusted),
          (unsigned long long)(now.hits - before.hits),
          (unsigned long long)(now.compiles - before.compiles));
}

/* A refused folder is left exactly as it was: the planted file, nothing new. */
static void expect_untouched(const char *what, const char *dir, const char *entry)
{
    CHECK(same_file(entry, forged, forged_n), "%s: the planted entry was changed", what);
    CHECK(rt_count_files(dir, "", NULL, 0) == 1, "%s: files were written to a refused folder",
          what);
}

/* A refused entry in the user's own folder is replaced by the compiled one,
 * a regular 0600 file of the user's, which the next call hits. */
static void expect_replaced(const char *what, const char *dir, const char *entry)
{
    struct stat st;
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
              (st.st_mode & 0777) == 0600,
          "%s: the entry was not replaced by one of ours (mode %o uid %u)", what,
          (unsigned)st.st_mode, (unsigned)st.st_uid);
    fusert_cache_stats before = stats();
    fusert_status s;
    int kernels = load_from(dir, &s);
    CHECK(s == FUSERT_SUCCESS && kernels == 1 && stats().hits == before.hits + 1,
          "%s: the replaced entry does not hit", what);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    setenv("FUSERT_LIBCUDA", FAKE_LIBCUDA, 1);
    setenv("FUSERT_VERBOSE", "1", 1);
    unsetenv("FUSERT_CACHE_DISABLE");
    unsetenv("FUSERT_CACHE_MAX_MB");
    unsetenv("FUSERT_WHOLE_MODULE");
    umask(022);
    char *tmp = rt_tempdir();
    if (!tmp) {
        printf("FAIL no temporary directory\n");
        return 1;
    }
    snprintf(base, sizeof base, "%s", tmp);
    bind_fake();
    int is_root = geteuid() == 0;
    struct passwd *nobody = getpwnam("nobody");
    uid_t other = nobody ? nobody->pw_uid : 65534;
    gid_t other_gid = nobody ? nobody->pw_gid : 65534;

    /* The folder is created 0700, its missing parents with the umask, and
     * the entry 0600. */
    char own[4096], parent[4096], entry[4096], dir[4096];
    path_in(own, sizeof own, "parent/own", NULL);
    path_in(parent, sizeof parent, "parent", NULL);
    fusert_status st;
    CHECK(load_from(own, &st) == 1 && st == FUSERT_SUCCESS, "first compile: %s",
          fusert_last_error());
    struct stat sb;
    CHECK(stat(parent, &sb) == 0 && (sb.st_mode & 0777) == 0755, "parent mode %o",
          (unsigned)(sb.st_mode & 0777));
    CHECK(stat(own, &sb) == 0 && (sb.st_mode & 0777) == 0700, "folder mode %o",
          (unsigned)(sb.st_mode & 0777));
    CHECK(rt_count_files(own, ".cubin", entry, sizeof entry) == 1, "no entry in %s", own);
    CHECK(stat(entry, &sb) == 0 && (sb.st_mode & 0777) == 0600, "entry mode %o",
          (unsigned)(sb.st_mode & 0777));
    snprintf(entry_name, sizeof entry_name, "%s", strrchr(entry, '/') + 1);

    /* Forge: the genuine header, the planted payload. */
    size_t n = 0;
    char *real = read_file(entry, &n);
    setenv("FUSERT_CACHE_DISABLE", "1", 1);
    void *cubin = NULL;
    size_t cubin_n = 0;
    CHECK_STATUS(fusert_compile("planted", planted, NULL, &cubin, &cubin_n), FUSERT_SUCCESS);
    unsetenv("FUSERT_CACHE_DISABLE");
    CHECK(real && n > 88 && cubin && 88 + cubin_n <= sizeof forged, "cannot forge");
    if (!real || n <= 88 || !cubin || 88 + cubin_n > sizeof forged)
        return rt_done("test_fusert_cache_trust");
    memcpy(forged, real, 88);
    uint64_t size = cubin_n;
    memcpy(forged + 48, &size, 8);
    fusert__sha256(cubin, cubin_n, (unsigned char *)forged + 56);
    memcpy(forged + 88, cubin, cubin_n);
    forged_n = 88 + cubin_n;
    free(real);
    free(cubin);

    /* Control: where folder and entry are the user's own, the forgery is
     * loaded, so what stops it below is the refusal, nothing else. */
    CHECK(write_file(entry, forged, forged_n, 0600), "cannot write %s", entry);
    fusert_cache_stats before = stats();
    int kernels = load_from(own, &st);
    CHECK(kernels == 2 && stats().hits == before.hits + 1, "control: %d kernels", kernels);
    if (kernels == 2)
        printf("control: the forged entry is loaded from the user's own folder\n");

    /* Folders anyone else can write to. */
    static const struct {
        const char *name;
        mode_t mode;
    } open_dirs[] = {{"world", 0777}, {"sticky", 01777}, {"group", 0770}};
    for (size_t i = 0; i < sizeof open_dirs / sizeof open_dirs[0]; i++) {
        plant(open_dirs[i].name, open_dirs[i].mode, dir, entry, sizeof dir);
        expect_refused(open_dirs[i].name, dir);
        expect_untouched(open_dirs[i].name, dir, entry);
    }

    /* A folder that is a symbolic link (to the user's own folder, even). */
    char link_dir[4096];
    path_in(link_dir, sizeof link_dir, "link-dir", NULL);
    path_in(entry, sizeof entry, "parent/own", entry_name);
    CHECK(write_file(entry, forged, forged_n, 0600) && symlink(own, link_dir) == 0,
          "symlink %s", link_dir);
    expect_refused("folder link", link_dir);
    CHECK(same_file(entry, forged, forged_n), "folder link: the entry behind it was changed");

    /* An entry that is a symbolic link to the forgery (a file of ours). */
    char target[4096], link_entry[4096];
    path_in(dir, sizeof dir, "link-entry", NULL);
    path_in(target, sizeof target, "forged.bin", NULL);
    path_in(link_entry, sizeof link_entry, "link-entry", entry_name);
    CHECK(mkdir(dir, 0700) == 0 && write_file(target, forged, forged_n, 0600) &&
              symlink(target, link_entry) == 0,
          "cannot make %s", link_entry);
    expect_refused("entry link", dir);
    CHECK(same_file(target, forged, forged_n), "entry link: the link's target was written");
    expect_replaced("entry link", dir, link_entry);

    /* A group-writable entry, and a FIFO (which must not hang the open). */
    plant("group-entry", 0700, dir, entry, sizeof dir);
    CHECK(chmod(entry, 0660) == 0, "chmod");
    expect_refused("group-writable entry", dir);
    expect_replaced("group-writable entry", dir, entry);
    path_in(dir, sizeof dir, "fifo", NULL);
    path_in(entry, sizeof entry, "fifo", entry_name);
    CHECK(mkdir(dir, 0700) == 0 && mkfifo(entry, 0600) == 0, "mkfifo");
    expect_refused("fifo entry", dir);
    expect_replaced("fifo entry", dir, entry);

    /* Another user's folder and another user's entry (chown needs root). */
    if (is_root) {
        plant("other-dir", 0700, dir, entry, sizeof dir);
        CHECK(chown(dir, other, other_gid) == 0, "chown %s", dir);
        expect_refused("other user's folder", dir);
        expect_untouched("other user's folder", dir, entry);

        plant("other-entry", 0700, dir, entry, sizeof dir);
        CHECK(chown(entry, other, other_gid) == 0, "chown %s", entry);
        expect_refused("other user's entry", dir);
        expect_replaced("other user's entry", dir, entry);
    } else {
        printf("skipped: another user's folder and entry (chown to nobody needs root)\n");
    }

    rt_rmtree(base);
    return rt_done("test_fusert_cache_trust");
}
