/* npy.c -- reading and writing NumPy .npy files.
 *
 * Format: the magic "\x93NUMPY", a major and minor version byte, the header
 * length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), and a
 * header that is a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a final newline so that the data starts at a
 * multiple of 64 bytes.  The data follows in C order.
 *
 * The header parser accepts exactly that dict (keys in any order, either
 * quote, extra spaces) and nothing more general; values it does not know
 * are errors rather than guesses.  Byte order is handled explicitly, so the
 * code does not depend on the host's.  Writing goes to a temporary file in
 * the destination folder that is renamed into place, so a reader never sees
 * half a file. */
#define _POSIX_C_SOURCE 200809L
#include "interp.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- the header dict ---------------------------------------------------------- */

typedef struct Hdr {
    char descr[16];
    int fortran;
    int rank;
    int64_t dims[IR_MAX_RANK];
    int have_descr, have_fortran, have_shape;
} Hdr;

typedef struct Lex {
    const char *p, *end;
} Lex;

static void skip_ws(Lex *l)
{
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
        l->p++;
}

static int eat(Lex *l, char c)
{
    skip_ws(l);
    if (l->p < l->end && *l->p == c) {
        l->p++;
        return 1;
    }
    return 0;
}

/* A quoted string into buf (truncated names are rejected). */
static int read_str(Lex *l, char *buf, size_t len)
{
    skip_ws(l);
    if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
        return 0;
    char q = *l->p++;
    size_t n = 0;
    while (l->p < l->end && *l->p != q) {
        if (n + 1 >= len)
            return 0;
        buf[n++] = *l->p++;
    }
    if (l->p >= l->end)
        return 0;
    l->p++;
    buf[n] = 0;
    return 1;
}

static int read_word(Lex *l, const char *w)
{
    skip_ws(l);
    size_t n = strlen(w);
    if ((size_t)(l->end - l->p) >= n && memcmp(l->p, w, n) == 0) {
        l->p += n;
        return 1;
    }
    return 0;
}

static int read_shape(Lex *l, Hdr *h)
{
    if (!eat(l, '('))
        return 0;
    h->rank = 0;
    for (;;) {
        skip_ws(l);
        if (eat(l, ')'))
            return 1;
        if (h->rank == IR_MAX_RANK)
            return -1;
        if (l->p >= l->end || *l->p < '0' || *l->p > '9')
            return 0;
        int64_t v = 0;
        while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
            int dgt = *l->p++ - '0';
            if (v > (INT64_MAX - dgt) / 10)
                return 0;
            v = v * 10 + dgt;
        }
        if (l->p < l->end && *l->p == 'L') /* Python 2 longs */
            l->p++;
        h->dims[h->rank++] = v;
        if (!eat(l, ',')) {
            if (!eat(l, ')'))
                return 0;
            return 1;
        }
    }
}

static int parse_header(const char *text, size_t len, Hdr *h, char *why, size_t whylen)
{
    Lex l = {text, text + len};
    memset(h, 0, sizeof *h);
    if (!eat(&l, '{')) {
        snprintf(why, whylen, "the header is not a dict");
        return 0;
    }
    for (;;) {
        if (eat(&l, '}'))
            break;
        char key[32];
        if (!read_str(&l, key, sizeof key) || !eat(&l, ':')) {
            snprintf(why, whylen, "malformed header");
            return 0;
        }
        if (strcmp(key, "descr") == 0) {
            if (!read_str(&l, h->descr, sizeof h->descr)) {
                snprintf(why, whylen, "unsupported 'descr' (structured dtypes are not supported)");
                return 0;
            }
            h->have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (read_word(&l, "True"))
                h->fortran = 1;
            else if (read_word(&l, "False"))
                h->fortran = 0;
            else {
                snprintf(why, whylen, "malformed 'fortran_order'");
                return 0;
            }
            h->have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            int s = read_shape(&l, h);
            if (s <= 0) {
                snprintf(why, whylen, s < 0 ? "more than %d dims" : "malformed 'shape'", IR_MAX_RANK);
                return 0;
            }
            h->have_shape = 1;
        } else {
            snprintf(why, whylen, "unknown header key '%s'", key);
            return 0;
        }
        if (!eat(&l, ',')) {
            if (!eat(&l, '}')) {
                snprintf(why, whylen, "malformed header");
                return 0;
            }
            break;
        }
    }
    if (!h->have_descr || !h->have_fortran || !h->have_shape) {
        snprintf(why, whylen, "the header lacks '%s'",
                 !h->have_descr ? "descr" : !h->have_fortran ? "fortran_order" : "shape");
        return 0;
    }
    return 1;
}

/* ---- dtypes ---------------------------------------------------------------------- */

/* descr -> dtype; bf16 travels as raw '<u2' bits.  Returns 0 if unknown.
 * '=' (native order) is accepted because every host we build for is
 * little-endian; '|' is NumPy's "no byte order" for 1-byte types. */
static int descr_dtype(const char *d, DType want, DType *out)
{
    if (d[0] != '<' && d[0] != '|' && d[0] != '=')
        return 0;
    const char *t = d + 1;
    if (strcmp(t, "f2") == 0)
        *out = DT_F16;
    else if (strcmp(t, "f4") == 0)
        *out = DT_F32;
    else if (strcmp(t, "f8") == 0)
        *out = DT_F64;
    else if (strcmp(t, "i4") == 0)
        *out = DT_I32;
    else if (strcmp(t, "i8") == 0)
        *out = DT_I64;
    else if (strcmp(t, "b1") == 0)
        *out = DT_BOOL;
    else if (strcmp(t, "u2") == 0 && want == DT_BF16)
        *out = DT_BF16;
    else
        return 0;
    return 1;
}

static const char *dtype_descr(DType t)
{
    switch (t) {
    case DT_BOOL: return "|b1";
    case DT_I32: return "<i4";
    case DT_I64: return "<i8";
    case DT_F16: return "<f2";
    case DT_BF16: return "<u2";
    case DT_F32: return "<f4";
    case DT_F64: return "<f8";
    case DT_COUNT: break;
    }
    unreachable();
}

/* n bytes little-endian, whatever the host's byte order */
static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

/* One element of dtype t from its file bytes, as the double the
 * interpreter holds (exact for every dtype but i64 beyond 2^53). */
static double decode(const unsigned char *p, DType t)
{
    uint64_t u = get_le(p, dtype_size(t));
    switch (t) {
    case DT_BOOL: return u != 0;
    case DT_I32: return (double)(int32_t)(uint32_t)u;
    case DT_I64: return (double)(int64_t)u;
    case DT_F16: return f16_bits_to_double((uint16_t)u);
    case DT_BF16: return bf16_bits_to_double((uint16_t)u);
    case DT_F32: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    case DT_F64: {
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    case DT_COUNT: break;
    }
    unreachable();
}

/* The inverse of decode; values are rounded to t first, so a tensor that
 * holds an unrounded double still writes the nearest representable value. */
static void encode(unsigned char *p, double v, DType t)
{
    uint64_t u = 0;
    switch (t) {
    case DT_BOOL: u = v != 0; break;
    case DT_I32: u = (uint32_t)(int32_t)round_to_dtype(v, DT_I32); break;
    case DT_I64: u = (uint64_t)double_to_i64(v); break;
    case DT_F16: u = f16_bits_from_double(v); break;
    case DT_BF16: u = bf16_bits_from_double(v); break;
    case DT_F32: {
        float f = (float)round_to_dtype(v, DT_F32);
        uint32_t w;
        memcpy(&w, &f, 4);
        u = w;
        break;
    }
    case DT_F64: memcpy(&u, &v, 8); break;
    case DT_COUNT: unreachable();
    }
    put_le(p, u, dtype_size(t));
}

/* ---- read ---------------------------------------------------------------------------- */

static int npy_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int npy_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 0;
}
#define NPY_ERR(...) npy_err(err, errlen, __VA_ARGS__)

static int read_exact(FILE *f, void *buf, size_t n) { return fread(buf, 1, n, f) == n; }

int npy_read(const char *path, DType want_dtype, Tensor *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NPY_ERR("cannot open '%s': %s", path, strerror(errno));
    unsigned char pre[12];
    int ok = 0;
    char *hdr = NULL;
    unsigned char *raw = NULL;
    if (!read_exact(f, pre, 10) || memcmp(pre, npy_magic, 6) != 0) {
        NPY_ERR("'%s' is not a .npy file (bad magic bytes)", path);
        goto done;
    }
    int major = pre[6];
    size_t hlen;
    if (major == 1) {
        hlen = (size_t)get_le(pre + 8, 2);
    } else if (major == 2 || major == 3) {
        if (!read_exact(f, pre + 10, 2)) {
            NPY_ERR("'%s' is truncated in its header", path);
            goto done;
        }
        hlen = (size_t)get_le(pre + 8, 4);
        if (hlen > (1u << 24)) {
            NPY_ERR("'%s' has an implausibly large header (%zu bytes)", path, hlen);
            goto done;
        }
    } else {
        NPY_ERR("'%s' is .npy format version %d.%d; versions 1.0, 2.0 and 3.0 are supported", path,
                major, pre[7]);
        goto done;
    }
    hdr = malloc(hlen + 1);
    if (!hdr) {
        NPY_ERR("out of memory reading '%s'", path);
        goto done;
    }
    if (!read_exact(f, hdr, hlen)) {
        NPY_ERR("'%s' is truncated in its header", path);
        goto done;
    }
    hdr[hlen] = 0;
    Hdr h;
    char why[128];
    if (!parse_header(hdr, hlen, &h, why, sizeof why)) {
        NPY_ERR("'%s' has a bad .npy header: %s", path, why);
        goto done;
    }
    if (h.descr[0] == '>') {
        NPY_ERR("'%s' holds big-endian data ('%s'); save it little-endian, e.g. "
                "arr.astype(arr.dtype.newbyteorder('<'))", path, h.descr);
        goto done;
    }
    DType dt;
    if (!descr_dtype(h.descr, want_dtype, &dt)) {
        NPY_ERR("'%s' has dtype '%s'; supported: <f2 <f4 <f8 <i4 <i8 |b1, and <u2 for bf16 bits", path,
                h.descr);
        goto done;
    }
    int64_t numel;
    /* Fortran order is the same layout as C order when at most one dim is
     * larger than 1, so only reject it where the layouts really differ */
    if (h.fortran && h.rank > 1) {
        int64_t nontrivial = 0;
        for (int d = 0; d < h.rank; d++)
            nontrivial += h.dims[d] > 1;
        if (nontrivial > 1) {
            NPY_ERR("'%s' is in Fortran order; save it in C order (np.ascontiguousarray)", path);
            goto done;
        }
    }
    if (!tensor_strides(h.rank, h.dims, NULL, &numel) ||
        (uint64_t)numel > SIZE_MAX / 8) {
        NPY_ERR("'%s' has a shape too large to hold", path);
        goto done;
    }
    int esz = dtype_size(dt);
    size_t nbytes = (size_t)numel * (size_t)esz;
    if (!tensor_alloc(out, dt, h.rank, h.dims)) {
        NPY_ERR("out of memory reading '%s'", path);
        goto done;
    }
    /* decode in chunks: the raw bytes never need to be held whole */
    size_t chunk = 1 << 16;
    raw = malloc(chunk * (size_t)esz);
    if (!raw) {
        NPY_ERR("out of memory reading '%s'", path);
        goto done;
    }
    size_t got_total = 0;
    for (int64_t i = 0; i < numel;) {
        size_t want = (size_t)(numel - i) < chunk ? (size_t)(numel - i) : chunk;
        size_t got = fread(raw, (size_t)esz, want, f);
        got_total += got * (size_t)esz;
        for (size_t k = 0; k < got; k++)
            out->data[i + (int64_t)k] = decode(raw + k * (size_t)esz, dt);
        if (got < want) {
            NPY_ERR("'%s' is truncated: %zu bytes of data, %zu expected", path, got_total, nbytes);
            goto done;
        }
        i += (int64_t)got;
    }
    /* bytes after the data are ignored, as np.load does */
    ok = 1;
done:
    if (!ok)
        tensor_free(out);
    free(hdr);
    free(raw);
    fclose(f);
    return ok;
}

/* ---- write ------------------------------------------------------------------------------ */

/* Version 1.0, the header exactly as NumPy writes it (so files diff clean
 * against np.save output); 2.0 only if the padded header outgrew 2 bytes. */
int npy_write_as(const char *path, const char *shown, const Tensor *t, char *err, size_t errlen)
{
    Buf h = {0};
    buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", dtype_descr(t->dtype));
    for (int d = 0; d < t->rank; d++)
        buf_printf(&h, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
    buf_puts(&h, t->rank == 1 ? ",), }" : "), }");
    /* pad with spaces so that preamble + header + '\n' is a multiple of 64 */
    int major = 1;
    size_t pre = 10;
    if (h.len + 64 > 65535) { /* the padded length must fit in 2 bytes */
        major = 2;
        pre = 12;
    }
    while ((pre + h.len + 1) % 64)
        buf_putc(&h, ' ');
    buf_putc(&h, '\n');

    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= (int)sizeof tmp) {
        buf_free(&h);
        return NPY_ERR("path too long: '%s'", shown);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        buf_free(&h);
        return NPY_ERR("cannot write '%s': %s", shown, strerror(errno));
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        buf_free(&h);
        return NPY_ERR("cannot write '%s': %s", shown, strerror(errno));
    }
    unsigned char p[12];
    memcpy(p, npy_magic, 6);
    p[6] = (unsigned char)major;
    p[7] = 0;
    put_le(p + 8, h.len, major == 1 ? 2 : 4);
    int ok = fwrite(p, 1, pre, f) == pre && fwrite(h.data, 1, h.len, f) == h.len;
    buf_free(&h);
    /* encode through a small buffer: no second copy of a large tensor */
    int esz = dtype_size(t->dtype);
    unsigned char buf[8 * 4096];
    size_t fill = 0;
    for (int64_t i = 0; ok && i < t->numel; i++) {
        encode(buf + fill, t->data[i], t->dtype);
        fill += (size_t)esz;
        if (fill + 8 > sizeof buf) {
            ok = fwrite(buf, 1, fill, f) == fill;
            fill = 0;
        }
    }
    if (ok && fill)
        ok = fwrite(buf, 1, fill, f) == fill;
    int eno = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        eno = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        eno = errno;
    }
    if (!ok) {
        unlink(tmp);
        return NPY_ERR("cannot write '%s': %s", shown, strerror(eno));
    }
    return 1;
}

int npy_write(const char *path, const Tensor *t, char *err, size_t errlen)
{
    return npy_write_as(path, path, t, err, errlen);
}
