/* test_parse_fuzz.c -- the front end never crashes, hangs or loses an error
 * on any bytes.
 *
 * A deterministic mutation fuzzer: start from valid programs, delete, insert
 * (tokens, random bytes, NUL, bad UTF-8), truncate and splice, then parse.
 * Every outcome must be consistent: parse_source returns an AstFile and no
 * error was counted, or NULL and at least one error was.  A clean parse is
 * also printed (ast_print) so the printer sees every odd tree.  Run under
 * the ASan build (FUSEC_SANITIZE=ON) this also checks memory. */
#include "frontend.h"
#include "util.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const seeds[] = {
    "import \"common.fuse\"\n"
    "fn softmax(x: f32[N, M]) -> f32[N, M] {\n"
    "    m = max(x, axis=1, keepdims=true)\n"
    "    e = exp(x - m)\n"
    "    return e / sum(e, axis=1, keepdims=true)\n"
    "}\n",
    "@kernels(1)\n"
    "fn layernorm(x: f32[N, D], g: f32[D], b: f32[D], eps: f32 = 1e-5) -> (y: f32[N, D]) {\n"
    "    mu = mean(x, axis=-1, keepdims=true); xc = x - mu\n"
    "    v = mean(xc * xc, axis=(0, 1), keepdims=true)\n"
    "    y = xc * rsqrt(v + eps) * g + b\n"
    "}\n",
    "fn f(a: bf16[4, 1024], b: i64) -> f32 { p, q = g(a, -b ** 2, !true || false && .5 >= 5.)\n"
    "  return cast(p, f16) + q % 3 # done\n}\n",
};

static const char *const pieces[] = {
    "(", ")", "[", "]", "{", "}", ",", "=", "->", "**", "-", "!", "fn", "return", "import",
    "\"x\"", "@", ";", "\n", "1e999", "99999999999999999999", "f32", "x", ":", "\xff", "\xce\xbb",
    "\"", "#", ".5", "5.", "((((((((", "))))", "\x01", "&", "'", "\r\n", "\xef\xbb\xbf",
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static unsigned next(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* One mutated text of at most cap bytes; returns its length. */
static size_t mutate(char *buf, size_t cap, const char *seed)
{
    size_t len = strlen(seed);
    memcpy(buf, seed, len);
    int steps = 1 + (int)next(6);
    for (int s = 0; s < steps; s++) {
        size_t p = len ? next((unsigned)len + 1) : 0;
        unsigned op = next(10);
        if (op < 3 && len > 0) { /* delete a few bytes */
            size_t k = 1 + next(5);
            if (p + k > len)
                k = len - p;
            memmove(buf + p, buf + p + k, len - p - k);
            len -= k;
        } else if (op < 7) { /* insert a token or a byte */
            char one[2] = {(char)next(256), 0};
            const char *ins = next(4) ? pieces[next(sizeof pieces / sizeof *pieces)] : one;
            size_t k = next(4) ? strlen(ins) : 1;
            if (len + k >= cap)
                continue;
            memmove(buf + p + k, buf + p, len - p);
            memcpy(buf + p, ins, k);
            len += k;
        } else if (op < 8) { /* truncate */
            len = p;
        } else { /* splice a copy of another part */
            size_t q = len ? next((unsigned)len) : 0;
            size_t k = next(40);
            if (q + k > len)
                k = len - q;
            if (len + k >= cap)
                continue;
            char tmp[64];
            memcpy(tmp, buf + q, k);
            memmove(buf + p + k, buf + p, len - p);
            memcpy(buf + p, tmp, k);
            len += k;
        }
    }
    return len;
}

int main(void)
{
    /* the errors themselves are expected: keep the test log readable */
    if (!freopen("/dev/null", "w", stderr))
        return 1;
    FILE *sink = fopen("/dev/null", "w");
    if (!sink)
        return 1;
    int failures = 0, parsed = 0, rejected = 0;
    static char buf[8192];
    /* the seeds themselves parse */
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        Arena a = {0};
        int id = diag_add_file("seed.fuse", seeds[i], strlen(seeds[i]));
        if (!parse_source(&a, id) || diag_error_count()) {
            fprintf(stdout, "FAIL: seed %zu does not parse\n", i);
            failures++;
        }
        arena_free_all(&a);
        diag_reset();
    }
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = mutate(buf, sizeof buf, seeds[next(sizeof seeds / sizeof *seeds)]);
        Arena a = {0};
        char *text = arena_alloc(&a, len + 1);
        memcpy(text, buf, len);
        int id = diag_add_file("fuzz.fuse", text, len);
        AstFile *f = parse_source(&a, id);
        int errors = diag_error_count();
        if (f && errors == 0) {
            ast_print(sink, f);
            parsed++;
        } else if (!f && errors > 0) {
            rejected++;
        } else {
            fprintf(stdout, "FAIL: iteration %d: result %p with %d errors\n", iter, (void *)f,
                    errors);
            failures++;
        }
        arena_free_all(&a);
        diag_reset();
    }
    fclose(sink);
    fprintf(stdout, "%d parsed, %d rejected, %d inconsistent\n", parsed, rejected, failures);
    /* the fuzzer must exercise both outcomes, or it tests nothing */
    if (parsed < 100 || rejected < 100)
        failures++;
    return failures ? 1 : 0;
}
