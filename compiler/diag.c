/* diag.c -- diagnostics in the clang style.
 *
 *   file.fuse:4:17: error: message
 *       source line
 *                   ^~~~~~
 *   note: how to fix it
 *
 * Text mode prints as it goes.  JSON mode collects every diagnostic and
 * prints one array on diag_flush, so tools get a single parseable value:
 *   [{"severity":"error","file":...,"line":4,"column":17,"end_line":..,
 *     "end_column":..,"message":...,"notes":[{...}]}] */
#include "diag.h"
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct SrcFile {
    const char *path, *text;
    size_t len;
    uint32_t *lines; /* byte offset of each line start, built on first use */
    int nlines;
    Loc from; /* the import that read it; file -1 for the main file */
} SrcFile;

static SrcFile *files;
static int nfiles, capfiles;
static int nerrors, nwarnings, max_errors;
static int color;
static DiagFormat format = DIAG_TEXT;
static Buf json;        /* JSON mode: the array being built */
static int json_items;  /* diagnostics in it */
static int json_notes;  /* notes of the current diagnostic */
static int suppressed;  /* past max_errors: drop this diagnostic's notes too */
static int quiet;       /* count only */
static DiagWarnMode warn_mode = DIAG_WARN_ON;

int diag_add_file(const char *path, const char *text, size_t len)
{
    if (nfiles == capfiles) {
        capfiles = capfiles ? capfiles * 2 : 8;
        files = realloc(files, sizeof(*files) * (size_t)capfiles);
        if (!files)
            fatal_oom();
    }
    files[nfiles] = (SrcFile){path, text, len, NULL, 0, LOC_NONE};
    return nfiles++;
}

void diag_set_import_site(int file, Loc from)
{
    if (file >= 0 && file < nfiles)
        files[file].from = from;
}

const char *diag_file_path(int file)
{
    return file >= 0 && file < nfiles ? files[file].path : "<unknown>";
}

const char *diag_file_text(int file, size_t *len)
{
    if (file < 0 || file >= nfiles) {
        *len = 0;
        return "";
    }
    *len = files[file].len;
    return files[file].text;
}

/* Line starts are found once per file, so many diagnostics (or --emit=ast
 * on a large file) cost a binary search each, not a scan from the start. */
static void index_lines(SrcFile *f)
{
    int n = 1;
    for (size_t i = 0; i < f->len; i++)
        n += f->text[i] == '\n';
    f->lines = malloc(sizeof(*f->lines) * (size_t)n);
    if (!f->lines)
        fatal_oom();
    f->nlines = 0;
    f->lines[f->nlines++] = 0;
    for (size_t i = 0; i < f->len; i++)
        if (f->text[i] == '\n')
            f->lines[f->nlines++] = (uint32_t)(i + 1);
}

void diag_line_col(int file, uint32_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    if (file < 0 || file >= nfiles)
        return;
    SrcFile *f = &files[file];
    if (off > f->len)
        off = (uint32_t)f->len;
    if (!f->lines)
        index_lines(f);
    int lo = 0, hi = f->nlines - 1; /* the last line start <= off */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (f->lines[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    *line = lo + 1;
    *col = (int)(off - f->lines[lo]) + 1;
}

Loc loc_span(Loc a, Loc b)
{
    if (a.file < 0)
        return b;
    if (b.file != a.file)
        return a;
    Loc r = a;
    if (b.end > r.end)
        r.end = b.end;
    if (b.begin < r.begin)
        r.begin = b.begin;
    return r;
}

/* An internal error in JSON mode: one more error, with the request for
 * a report as its note, and the array closed. */
static void json_internal_error(const char *what)
{
    diag_error(LOC_NONE, "%s", what);
    diag_note(LOC_NONE, "this is a bug in fusec; please report it with the input file");
    diag_flush();
}

void diag_set_format(DiagFormat f)
{
    format = f;
    fusec_internal_error_report = f == DIAG_JSON ? json_internal_error : NULL;
}
void diag_set_color(int on) { color = on; }
void diag_set_max_errors(int n) { max_errors = n; }
void diag_set_quiet(int on) { quiet = on; }
void diag_set_warnings(DiagWarnMode m) { warn_mode = m; }
int diag_error_count(void) { return nerrors; }
int diag_warning_count(void) { return nwarnings; }

static const char *col_on(const char *c) { return color ? c : ""; }
static const char *col_off(void) { return color ? "\033[0m" : ""; }

/* The source line of loc, with a caret under its first byte and tildes
 * under the rest of the span on that line. Non-printable bytes are shown
 * as '?' so a garbage file cannot corrupt the terminal. */
static void print_snippet(Loc loc)
{
    if (loc.file < 0 || loc.file >= nfiles)
        return;
    const char *t = files[loc.file].text;
    size_t n = files[loc.file].len;
    size_t b = loc.begin > n ? n : loc.begin;
    size_t ls = b;
    while (ls > 0 && t[ls - 1] != '\n')
        ls--;
    size_t le = b;
    while (le < n && t[le] != '\n')
        le++;
    if (le - ls > 400) /* a minified or binary file: do not flood */
        return;
    fputs("    ", stderr);
    for (size_t i = ls; i < le;) {
        unsigned char c = (unsigned char)t[i];
        size_t clen = utf8_seq_len(t + i, le - i);
        if (c >= 0x80 && clen > 0) { /* a whole, valid UTF-8 character */
            fwrite(t + i, 1, clen, stderr);
            i += clen;
            continue;
        }
        /* control bytes and invalid UTF-8 must not reach the terminal raw */
        fputc(c == '\t' ? ' ' : (c < 0x20 || c >= 0x7f) ? '?' : c, stderr);
        i++;
    }
    fputc('\n', stderr);
    fputs("    ", stderr);
    for (size_t i = ls; i < b; i++) {
        unsigned char c = (unsigned char)t[i];
        if ((c & 0xC0) != 0x80) /* one column per UTF-8 character */
            fputc(' ', stderr);
    }
    fputs(col_on("\033[1;32m"), stderr);
    fputc('^', stderr);
    size_t e = loc.end > le ? le : loc.end;
    for (size_t i = b + 1; i < e; i++) {
        unsigned char c = (unsigned char)t[i];
        if ((c & 0xC0) != 0x80)
            fputc('~', stderr);
    }
    fputs(col_off(), stderr);
    fputc('\n', stderr);
}

static void json_loc(Loc loc)
{
    if (loc.file < 0) {
        buf_puts(&json, "\"file\":null");
        return;
    }
    int l, c, el, ec;
    diag_line_col(loc.file, loc.begin, &l, &c);
    diag_line_col(loc.file, loc.end, &el, &ec);
    buf_puts(&json, "\"file\":");
    buf_put_json_string(&json, files[loc.file].path);
    buf_printf(&json, ",\"line\":%d,\"column\":%d,\"end_line\":%d,\"end_column\":%d", l, c, el,
               ec);
}

static void close_json_item(void)
{
    if (json_items > 0)
        buf_puts(&json, "]}");
}

/* Where a diagnostic's file was imported from, back to the main file
 * (nearest first, at most 64): in text before the diagnostic, as a C
 * compiler says "In file included from"; in JSON as its first notes. */
static void import_chain(Loc loc)
{
    int f = loc.file;
    for (int depth = 0; f >= 0 && f < nfiles && files[f].from.file >= 0 && depth < 64; depth++) {
        const Loc at = files[f].from;
        int l, c;
        diag_line_col(at.file, at.begin, &l, &c);
        if (format == DIAG_JSON) {
            buf_puts(&json, json_notes++ ? ",{" : "{");
            json_loc(at);
            buf_puts(&json, ",\"message\":");
            buf_put_json_string(&json, "imported from here");
            buf_putc(&json, '}');
        } else {
            fprintf(stderr, "%s %s:%d:%d", depth ? ",\n                     from" : "In a file imported from",
                    files[at.file].path, l, c);
        }
        f = at.file;
    }
    if (format != DIAG_JSON && f != loc.file)
        fputs(":\n", stderr);
}

/* suffix follows the message: " [-Werror]" for a warning made an error. */
static void emit(const char *sev, const char *sevcol, Loc loc, const char *suffix,
                 const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t mlen = strlen(msg);
    snprintf(msg + mlen, sizeof msg - mlen, "%s", suffix);
    if (format == DIAG_JSON) {
        close_json_item();
        buf_puts(&json, json_items ? ",{" : "[{");
        json_items++;
        json_notes = 0;
        buf_puts(&json, "\"severity\":");
        buf_put_json_string(&json, sev);
        buf_putc(&json, ',');
        json_loc(loc);
        buf_puts(&json, ",\"message\":");
        buf_put_json_string(&json, msg);
        buf_puts(&json, ",\"notes\":[");
        import_chain(loc);
        return;
    }
    import_chain(loc);
    fputs(col_on("\033[1m"), stderr);
    if (loc.file >= 0) {
        int l, c;
        diag_line_col(loc.file, loc.begin, &l, &c);
        fprintf(stderr, "%s:%d:%d: ", files[loc.file].path, l, c);
    } else {
        fputs("fusec: ", stderr);
    }
    fprintf(stderr, "%s%s:%s%s %s%s\n", col_on(sevcol), sev, col_off(), col_on("\033[1m"), msg,
            col_off());
    print_snippet(loc);
}

void diag_error(Loc loc, const char *fmt, ...)
{
    nerrors++;
    suppressed = quiet || (max_errors > 0 && nerrors > max_errors);
    if (suppressed)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("error", "\033[1;31m", loc, "", fmt, ap);
    va_end(ap);
}

/* -w drops a warning and its notes; -Werror counts and prints it as an error
 * (so the compilation fails and writes nothing). */
void diag_warning(Loc loc, const char *fmt, ...)
{
    if (warn_mode == DIAG_WARN_OFF) {
        suppressed = 1;
        return;
    }
    int as_error = warn_mode == DIAG_WARN_ERROR;
    if (as_error)
        nerrors++;
    else
        nwarnings++;
    suppressed = quiet || (as_error && max_errors > 0 && nerrors > max_errors);
    if (suppressed)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (as_error)
        emit("error", "\033[1;31m", loc, " [-Werror]", fmt, ap);
    else
        emit("warning", "\033[1;35m", loc, "", fmt, ap);
    va_end(ap);
}

void diag_note(Loc loc, const char *fmt, ...)
{
    if (suppressed)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (format == DIAG_JSON) {
        if (!json_items)
            return;
        buf_puts(&json, json_notes++ ? ",{" : "{");
        json_loc(loc);
        buf_puts(&json, ",\"message\":");
        buf_put_json_string(&json, msg);
        buf_putc(&json, '}');
        return;
    }
    if (loc.file >= 0) {
        int l, c;
        diag_line_col(loc.file, loc.begin, &l, &c);
        fprintf(stderr, "%s%s:%d:%d: %s", col_on("\033[1m"), files[loc.file].path, l, c,
                col_off());
    }
    fprintf(stderr, "%snote:%s %s\n", col_on("\033[1;36m"), col_off(), msg);
    if (loc.file >= 0)
        print_snippet(loc);
}

void diag_flush(void)
{
    if (format == DIAG_JSON) {
        close_json_item();
        if (!json_items)
            buf_puts(&json, "[");
        buf_puts(&json, "]\n");
        fputs(json.data, stderr);
        buf_free(&json);
        json_items = 0;
    }
    if (max_errors > 0 && nerrors > max_errors && format == DIAG_TEXT)
        fprintf(stderr, "fusec: %d more errors not shown\n", nerrors - max_errors);
    fflush(stderr);
}

void diag_reset(void)
{
    for (int i = 0; i < nfiles; i++)
        free(files[i].lines);
    free(files);
    files = NULL;
    nfiles = capfiles = 0;
    nerrors = nwarnings = 0;
    buf_free(&json);
    json_items = json_notes = 0;
    suppressed = 0;
    warn_mode = DIAG_WARN_ON;
}
