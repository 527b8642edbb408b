/* util.h -- the few helpers every phase uses; the one way to die on a bug. */
#ifndef FUSEC_UTIL_H
#define FUSEC_UTIL_H
#include <stddef.h>

/* An internal compiler bug: prints file:line and a request for a report,
 * exits 70 (EX_SOFTWARE).  Phases never exit otherwise. */
#define unreachable() fusec_internal_error(__FILE__, __LINE__, "unreachable")
#define ICE(msg) fusec_internal_error(__FILE__, __LINE__, (msg))
_Noreturn void fusec_internal_error(const char *file, int line, const char *msg);
/* Where an internal error is reported instead of plain standard error
 * (the JSON diagnostics set it), before the exit; NULL: plain text. */
extern void (*fusec_internal_error_report)(const char *what);
_Noreturn void fatal_oom(void);

/* Growable byte buffer (malloc-owned; used for generated text). */
typedef struct Buf {
    char *data;
    size_t len, cap;
} Buf;
void buf_putc(Buf *b, char c);
void buf_puts(Buf *b, const char *s);
void buf_write(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(Buf *b);

/* s as a JSON string, quotes included: the one JSON string writer (the
 * plan reports and JSON diagnostics).  '"', '\\', \n and \t are escaped,
 * other control bytes become \u00XX, whole valid UTF-8 characters are kept
 * and any other byte becomes U+FFFD, so the output is always valid JSON. */
void buf_put_json_string(Buf *b, const char *s);
/* Length of the valid UTF-8 sequence of 2 to 4 bytes at s, or 0. */
size_t utf8_seq_len(const char *s, size_t avail);

/* Exit codes (documented in docs/cli.md). */
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 70 };

#endif
