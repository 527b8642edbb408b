/* emit_writer.c -- the indented-line writer of generated code (emit_writer.h). */
#include "emit_writer.h"
#include <stdio.h>
#include <stdlib.h>

void emit_vline(Emitter *e, const char *fmt, va_list ap)
{
    char small[1024];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        ICE("vsnprintf failed");
    if (n > 0)
        for (int i = 0; i < e->indent; i++)
            buf_puts(e->out, "    ");
    if ((size_t)n < sizeof small) {
        buf_write(e->out, small, (size_t)n);
    } else {
        /* a long line: format it again into a heap buffer */
        char *big = malloc((size_t)n + 1);
        if (!big)
            fatal_oom();
        vsnprintf(big, (size_t)n + 1, fmt, again);
        buf_write(e->out, big, (size_t)n);
        free(big);
    }
    va_end(again);
    buf_putc(e->out, '\n');
}

void emit_line(Emitter *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_vline(e, fmt, ap);
    va_end(ap);
}

void emit_open(Emitter *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_vline(e, fmt, ap);
    va_end(ap);
    e->indent++;
}

void emit_close(Emitter *e, const char *fmt, ...)
{
    if (e->indent <= 0)
        ICE("emit_close without emit_open");
    e->indent--;
    va_list ap;
    va_start(ap, fmt);
    emit_vline(e, fmt, ap);
    va_end(ap);
}

void emit_done(const Emitter *e)
{
    if (e->indent != 0)
        ICE("unbalanced indentation in generated code");
}
