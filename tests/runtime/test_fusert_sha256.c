/* test_fusert_sha256.c -- the cache's SHA-256 against the FIPS 180-4 test
 * vectors, fed whole and byte by byte (the block boundary paths).
 *
 * RUN: %rtbin/test_fusert_sha256 | FileCheck %s
 * CHECK-NOT: FAIL
 * CHECK: test_fusert_sha256: all {{[0-9]+}} checks passed
 */
#include "rt_test.h"
#include <stdint.h>

/* Internal to libfusert (fusert_internal.h); the static library has it. */
typedef struct {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t nbuf;
} sha256_ctx;
void fusert__sha256_init(sha256_ctx *c);
void fusert__sha256_update(sha256_ctx *c, const void *data, size_t n);
void fusert__sha256_final(sha256_ctx *c, unsigned char out[32]);
void fusert__sha256(const void *data, size_t n, unsigned char out[32]);

static void hex(const unsigned char d[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check_vector(const char *msg, size_t n, const char *want)
{
    unsigned char d[32];
    char h[65];
    fusert__sha256(msg, n, d);
    hex(d, h);
    CHECK(strcmp(h, want) == 0, "sha256 of %zu bytes: %s, want %s", n, h, want);
    sha256_ctx c;
    fusert__sha256_init(&c);
    for (size_t i = 0; i < n; i++)
        fusert__sha256_update(&c, msg + i, 1);
    fusert__sha256_final(&c, d);
    hex(d, h);
    CHECK(strcmp(h, want) == 0, "byte-wise sha256 of %zu bytes: %s", n, h);
}

int main(void)
{
    check_vector("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_vector("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_vector(m448, strlen(m448),
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check_vector(m896, strlen(m896),
                 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    size_t mil = 1000000;
    char *a = malloc(mil);
    memset(a, 'a', mil);
    check_vector(a, mil, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* 55, 56 and 64 bytes: where the padding spills into a second block */
    check_vector(a, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    check_vector(a, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    check_vector(a, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    free(a);
    return rt_done("test_fusert_sha256");
}
