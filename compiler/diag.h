/* diag.h -- locations and clang-style diagnostics.
 *
 * A location is a file id plus a byte range [begin, end); line and column
 * are computed only when a diagnostic is printed.  Every source file the
 * compiler reads is registered here first (diag_add_file), so that any
 * phase can show the source line under a message. */
#ifndef FUSEC_DIAG_H
#define FUSEC_DIAG_H
#include <stddef.h>
#include <stdint.h>

typedef struct Loc {
    int file;           /* id from diag_add_file; -1: no location */
    uint32_t begin, end; /* byte offsets, end exclusive */
} Loc;

#define LOC_NONE ((Loc){-1, 0, 0})

typedef enum { DIAG_TEXT, DIAG_JSON } DiagFormat;

/* Register a source text (not copied: must outlive the diagnostics). */
int diag_add_file(const char *path, const char *text, size_t len);
/* The import that read file (LOC_NONE: the main file): diagnostics in it
 * end with "imported from" notes back to the main file. */
void diag_set_import_site(int file, Loc from);
const char *diag_file_path(int file);
const char *diag_file_text(int file, size_t *len);
/* 1-based line and column (columns count bytes) of a byte offset. */
void diag_line_col(int file, uint32_t off, int *line, int *col);
Loc loc_span(Loc a, Loc b); /* from a.begin to b.end */

void diag_set_format(DiagFormat f);
void diag_set_color(int on);          /* main decides: tty and NO_COLOR */
void diag_set_max_errors(int n);      /* stop printing after n (0: no limit) */
void diag_set_quiet(int on);          /* count but print nothing (fuzzers) */
/* What a warning becomes: printed (default), dropped (-w), an error (-Werror). */
typedef enum { DIAG_WARN_ON, DIAG_WARN_OFF, DIAG_WARN_ERROR } DiagWarnMode;
void diag_set_warnings(DiagWarnMode m);

void diag_error(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note attached to the last error or warning; loc may be LOC_NONE. */
void diag_note(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int diag_error_count(void);
int diag_warning_count(void);
/* Print what is pending (JSON mode prints one array at the end). */
void diag_flush(void);
/* Forget files and counts (tests, fuzzers). */
void diag_reset(void);

#endif
