/* test_npy.c -- .npy files: every dtype round-trips, the bytes written are
 * what NumPy writes, versions 2.0/3.0 read, and bad files give clear errors
 * (never a crash). */
#define _POSIX_C_SOURCE 200809L
#include "interp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char dir[256];
static char err[512];

static const char *path(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path(name), "wb");
    if (!f || fwrite(data, 1, n, f) != n)
        abort();
    fclose(f);
}

static size_t read_bytes(const char *name, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path(name), "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* A v1 file with the given header dict and data bytes. */
static void write_npy(const char *name, int major, const char *dict, const void *data, size_t n)
{
    unsigned char buf[4096];
    size_t pre = major == 1 ? 10 : 12;
    size_t hl = strlen(dict);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    if (major != 1)
        buf[10] = buf[11] = 0;
    memcpy(buf + pre, dict, hl);
    memcpy(buf + pre + hl, data, n);
    write_bytes(name, buf, pre + hl + n);
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void test_roundtrip(void)
{
    const double vals[] = {0, -0.0, 1, -2.5, 0.1, 65504, 1e-7, NAN, INFINITY, -INFINITY, 3, -8};
    const int nv = 12;
    for (int dt = 0; dt < DT_COUNT; dt++) {
        Tensor t, back;
        int64_t dims[3] = {2, 3, 2};
        CHECK(tensor_alloc(&t, (DType)dt, 3, dims));
        for (int i = 0; i < nv; i++)
            t.data[i] = round_to_dtype(vals[i], (DType)dt);
        CHECK(npy_write(path("rt.npy"), &t, err, sizeof err));
        int ok = npy_read(path("rt.npy"), (DType)dt, &back, err, sizeof err);
        CHECK(ok);
        if (ok) {
            CHECK(back.dtype == (DType)dt && back.rank == 3 && back.dims[0] == 2 && back.dims[1] == 3 &&
                  back.dims[2] == 2 && back.numel == 12);
            int eq = 1;
            for (int i = 0; i < nv; i++)
                eq &= same(back.data[i], t.data[i]) && signbit(back.data[i]) == signbit(t.data[i]);
            if (!eq)
                fprintf(stderr, "dtype %s does not round-trip\n", dtype_name((DType)dt));
            CHECK(eq);
            tensor_free(&back);
        }
        /* the header keeps the data 64-byte aligned */
        unsigned char buf[512];
        size_t n = read_bytes("rt.npy", buf, sizeof buf);
        size_t hl = buf[8] | (size_t)buf[9] << 8;
        CHECK((10 + hl) % 64 == 0 && buf[10 + hl - 1] == '\n');
        CHECK(n == 10 + hl + 12 * (size_t)dtype_size((DType)dt));
        tensor_free(&t);
    }
}

/* The exact bytes of a small f32 file, as NumPy 1.x writes them. */
static void test_bytes(void)
{
    Tensor t;
    int64_t n = 2;
    tensor_alloc(&t, DT_F32, 1, &n);
    t.data[0] = 1;
    t.data[1] = -2;
    CHECK(npy_write(path("b.npy"), &t, err, sizeof err));
    tensor_free(&t);
    unsigned char buf[256];
    size_t len = read_bytes("b.npy", buf, sizeof buf);
    CHECK(len == 136);
    CHECK(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    CHECK(memcmp(buf + 10, dict, strlen(dict)) == 0);
    CHECK(memcmp(buf + 128, "\x00\x00\x80\x3f\x00\x00\x00\xc0", 8) == 0);

    /* a scalar is a 0-d array: shape () */
    Tensor s, back;
    tensor_alloc(&s, DT_I64, 0, NULL);
    s.data[0] = -42;
    CHECK(npy_write(path("s.npy"), &s, err, sizeof err));
    len = read_bytes("s.npy", buf, sizeof buf);
    CHECK(strstr((char *)buf + 10, "'shape': ()") != NULL);
    CHECK(npy_read(path("s.npy"), DT_I64, &back, err, sizeof err));
    CHECK(back.rank == 0 && back.numel == 1 && back.data[0] == -42);
    tensor_free(&back);
    tensor_free(&s);

    /* bf16 travels as raw <u2 bits */
    Tensor h;
    n = 1;
    tensor_alloc(&h, DT_BF16, 1, &n);
    h.data[0] = 1.0;
    CHECK(npy_write(path("h.npy"), &h, err, sizeof err));
    tensor_free(&h);
    len = read_bytes("h.npy", buf, sizeof buf);
    CHECK(strstr((char *)buf + 10, "'<u2'") != NULL && buf[len - 2] == 0x80 && buf[len - 1] == 0x3f);
    /* and <u2 is refused for anything but a bf16 param */
    CHECK(!npy_read(path("h.npy"), DT_F16, &back, err, sizeof err));
    CHECK(strstr(err, "<u2") != NULL);
}

static void test_versions(void)
{
    Tensor t;
    const unsigned char two_f16[] = {0x00, 0x3c, 0x00, 0xc0}; /* 1, -2 */
    write_npy("v2.npy", 2, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }\n", two_f16, 4);
    CHECK(npy_read(path("v2.npy"), DT_F16, &t, err, sizeof err));
    CHECK(t.dtype == DT_F16 && t.numel == 2 && t.data[0] == 1 && t.data[1] == -2);
    tensor_free(&t);
    write_npy("v3.npy", 3, "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f2\"}", two_f16, 4);
    CHECK(npy_read(path("v3.npy"), DT_F16, &t, err, sizeof err));
    CHECK(t.rank == 2 && t.dims[0] == 1 && t.dims[1] == 2 && t.data[1] == -2);
    tensor_free(&t);
    const unsigned char b[] = {1, 0, 1};
    write_npy("b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3);
    CHECK(npy_read(path("b1.npy"), DT_BOOL, &t, err, sizeof err));
    CHECK(t.dtype == DT_BOOL && t.data[0] == 1 && t.data[1] == 0 && t.data[2] == 1);
    tensor_free(&t);
    /* Fortran order is fine for a 1-d array (same layout) */
    write_npy("f1.npy", 1, "{'descr': '|b1', 'fortran_order': True, 'shape': (3,), }", b, 3);
    CHECK(npy_read(path("f1.npy"), DT_BOOL, &t, err, sizeof err));
    tensor_free(&t);
    /* an empty array */
    write_npy("e.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", "", 0);
    CHECK(npy_read(path("e.npy"), DT_F32, &t, err, sizeof err));
    CHECK(t.numel == 0 && t.rank == 2 && t.dims[1] == 5);
    tensor_free(&t);
}

static void expect_error(const char *name, const char *needle)
{
    Tensor t;
    int ok = npy_read(path(name), DT_F32, &t, err, sizeof err);
    CHECK(!ok);
    if (ok)
        tensor_free(&t);
    else if (!strstr(err, needle)) {
        fprintf(stderr, "%s: error '%s' lacks '%s'\n", name, err, needle);
        CHECK(0);
    }
    CHECK(t.data == NULL);
}

static void test_errors(void)
{
    const unsigned char four[16] = {0};
    write_npy("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", four, 8);
    expect_error("be.npy", "big-endian");
    write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four, 16);
    expect_error("fo.npy", "Fortran order");
    write_npy("tr.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four, 10);
    expect_error("tr.npy", "truncated");
    write_npy("dt.npy", 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", four, 8);
    expect_error("dt.npy", "'<u4'");
    write_npy("st.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", four, 8);
    expect_error("st.npy", "structured");
    write_npy("sh.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", four, 8);
    expect_error("sh.npy", "shape");
    write_npy("nk.npy", 1, "{'descr': '<f4', 'fortran_order': False}", four, 8);
    expect_error("nk.npy", "lacks 'shape'");
    write_npy("r9.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", four, 4);
    expect_error("r9.npy", "more than 8 dims");
    write_npy("hu.npy", 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", four, 4);
    expect_error("hu.npy", "too large");
    write_npy("v9.npy", 9, "{}", four, 0);
    expect_error("v9.npy", "version 9.0");
    write_bytes("mg.npy", "PK\x03\x04 not numpy", 15);
    expect_error("mg.npy", "not a .npy file");
    write_bytes("hd.npy", "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    expect_error("hd.npy", "truncated in its header");
    expect_error("missing.npy", "cannot open");

    /* a write into a folder that does not exist fails cleanly and leaves nothing */
    Tensor t;
    int64_t n = 1;
    tensor_alloc(&t, DT_F32, 1, &n);
    t.data[0] = 1;
    CHECK(!npy_write(path("no/such/dir/x.npy"), &t, err, sizeof err));
    CHECK(strstr(err, "cannot write") != NULL);
    tensor_free(&t);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_npy.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_roundtrip();
    test_bytes();
    test_versions();
    test_errors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    printf("test_npy: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
