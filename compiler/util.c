/* util.c -- internal-error reporting, the byte buffer and its JSON strings. */
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void (*fusec_internal_error_report)(const char *what);

_Noreturn void fusec_internal_error(const char *file, int line, const char *msg)
{
    if (fusec_internal_error_report) {
        char what[512];
        snprintf(what, sizeof what, "internal compiler error: %s (%s:%d)", msg, file, line);
        void (*report)(const char *) = fusec_internal_error_report;
        fusec_internal_error_report = NULL; /* an error inside the report ends in text */
        report(what);
        exit(EXIT_INTERNAL);
    }
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

size_t utf8_seq_len(const char *s, size_t avail)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] < 0xE0 ? 2 : 0;
    if (n == 0 || n > avail)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((u[k] & 0xC0) != 0x80)
            return 0;
    if (n == 3 && ((u[0] == 0xE0 && u[1] < 0xA0) || (u[0] == 0xED && u[1] >= 0xA0)))
        return 0; /* overlong, or a surrogate */
    if (n == 4 && ((u[0] == 0xF0 && u[1] < 0x90) || (u[0] == 0xF4 && u[1] >= 0x90)))
        return 0; /* overlong, or beyond U+10FFFF */
    return n;
}

void buf_put_json_string(Buf *b, const char *s)
{
    buf_putc(b, '"');
    size_t len = s ? strlen(s) : 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c >= 0x80 ? utf8_seq_len(s + i, len - i) : 0;
        if (n) {
            buf_write(b, s + i, n);
            i += n;
            continue;
        }
        if (c == '"' || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c == '\n')
            buf_puts(b, "\\n");
        else if (c == '\t')
            buf_puts(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            buf_printf(b, "\\u%04x", c);
        else if (c >= 0x80)
            buf_puts(b, "\\ufffd");
        else
            buf_putc(b, (char)c);
        i++;
    }
    buf_putc(b, '"');
}
