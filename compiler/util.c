/* util.c -- internal-error reporting and the byte buffer. */
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void fusec_internal_error(const char *file, int line, const char *msg)
{
    fprintf(stderr,
            "fusec: internal compiler error: %s (%s:%d)\n"
            "note: this is a bug in fusec; please report it with the input file\n",
            msg, file, line);
    exit(EXIT_INTERNAL);
}

_Noreturn void fatal_oom(void)
{
    fputs("fusec: out of memory\n", stderr);
    exit(EXIT_INTERNAL);
}

static void buf_reserve(Buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t ncap = b->cap ? b->cap * 2 : 256;
    while (ncap < b->len + extra + 1)
        ncap *= 2;
    char *p = realloc(b->data, ncap);
    if (!p)
        fatal_oom();
    b->data = p;
    b->cap = ncap;
}

void buf_write(Buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void buf_putc(Buf *b, char c) { buf_write(b, &c, 1); }
void buf_puts(Buf *b, const char *s) { buf_write(b, s, strlen(s)); }

void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void buf_free(Buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
