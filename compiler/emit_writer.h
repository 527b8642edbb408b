/* emit_writer.h -- the indented-line writer of generated code.
 *
 * Every emitter writes its output one line at a time through an Emitter:
 * emit_line puts the line at the current indentation (four spaces a
 * level; an empty line gets none), emit_open writes a line and goes one
 * level deeper, emit_close comes back one level and writes a line, and
 * emit_done checks that a finished piece of code is back at level zero.
 * The format strings are checked like printf's. */
#ifndef FUSEC_EMIT_WRITER_H
#define FUSEC_EMIT_WRITER_H
#include "util.h"
#include <stdarg.h>

typedef struct Emitter {
    Buf *out;   /* where the lines go */
    int indent; /* levels of four spaces */
} Emitter;

void emit_line(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void emit_vline(Emitter *e, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* the line, then one level deeper ("for (...) {") */
void emit_open(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* one level back, then the line ("}"); an internal error below level zero */
void emit_close(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* an internal error unless the indentation is back at level zero */
void emit_done(const Emitter *e);

#endif
