/* main.c -- the fusec driver: the whole pipeline, top to bottom.
 *
 *   read -> parse -> sema (IR) -> fusion (plan) -> emit (.cu/.c + .h)
 *             |         |             |
 *          --emit=ast --emit=ir    --emit=plan|fusion|dot     --emit=eval (interpreter)
 *
 * Only this file and util.c (fatal errors, exit 70) exit.  Every output is written to a temporary file in the
 * destination folder and renamed into place once the whole compilation has
 * succeeded, so an error never leaves a partial or stale-but-modified file;
 * an output whose content would not change is not rewritten (no-op rebuilds
 * stay no-ops).  Exit codes: 0 success, 1 errors in the input, 2 usage,
 * 70 internal error. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "emit.h"
#include "frontend.h"
#include "fusion.h"
#include "interp.h"
#include "ir.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum {
    EMIT_DEFAULT, /* source + header: the main job */
    EMIT_AST, EMIT_IR, EMIT_EVAL, EMIT_PLAN, EMIT_FUSION, EMIT_DOT,
    EMIT_CU, EMIT_C, EMIT_H,
    EMIT_KERNELS, /* the CUDA device source alone (what NVRTC compiles) */
} EmitKind;

static const char *const emit_names[] = {
    [EMIT_AST] = "ast", [EMIT_IR] = "ir", [EMIT_EVAL] = "eval", [EMIT_PLAN] = "plan",
    [EMIT_FUSION] = "fusion", [EMIT_DOT] = "dot", [EMIT_CU] = "cu", [EMIT_C] = "c",
    [EMIT_H] = "h", [EMIT_KERNELS] = "kernels",
};

typedef struct Options {
    const char *input;
    const char *output; /* -o */
    EmitKind emit;
    Target target;
    int no_fusion, fast_math, atomic_reduce, max_registers, expect_kernels;
    const char **incs;
    int nincs, capincs;
    SemaDefine *defs;
    int ndefs, capdefs;
    int md, mp;
    int deps_only; /* -M / -MM: print the dependencies, write nothing else */
    int color;     /* --color: -1 auto, 0 never, 1 always */
    const char *mf, *mt;
    const char *prefix; /* --prefix: put in front of every exported symbol */
    EvalArgs eval;
    int capinputs;
    int seed_given;
} Options;

/* ---- output files ------------------------------------------------------- */

typedef struct Output {
    const char *path; /* "-" for stdout */
    Buf text;
} Output;

static Output outputs[4];
static _Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int noutputs;

static Buf *new_output(const char *path)
{
    Output *o = &outputs[noutputs++];
    o->path = path;
    return &o->text;
}

static int same_content(const char *path, const Buf *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int same = 1;
    size_t off = 0;
    char chunk[8192];
    size_t n;
    while (same && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (off + n > b->len || memcmp(chunk, b->data + off, n) != 0)
            same = 0;
        off += n;
    }
    fclose(f);
    return same && off == b->len;
}

/* Where an output goes.  A regular file (or a new one) is replaced by a
 * rename, through any symlinks to it (the link stays a link).  Anything
 * else that exists (a device such as /dev/null, a FIFO) is written in
 * place: a rename would replace it with a regular file. */
typedef struct Dest {
    char path[PATH_MAX]; /* the file a rename replaces */
    int in_place;        /* not a regular file: open and write */
} Dest;

static int resolve_dest(const char *path, Dest *d)
{
    struct stat st;
    d->in_place = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            diag_error(LOC_NONE, "cannot write '%s': it is a directory", path);
            return 0;
        }
        if (!S_ISREG(st.st_mode)) {
            d->in_place = 1;
            snprintf(d->path, sizeof d->path, "%s", path);
            return 1;
        }
        if (realpath(path, d->path)) /* the file a symlink names */
            return 1;
    }
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        d->in_place = 1; /* a symlink to nothing yet: create its target */
        snprintf(d->path, sizeof d->path, "%s", path);
        return 1;
    }
    if (snprintf(d->path, sizeof d->path, "%s", path) >= (int)sizeof d->path) {
        diag_error(LOC_NONE, "output path too long: %s", path);
        return 0;
    }
    return 1;
}

static int write_all(int fd, const char *p, size_t left)
{
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return 0;
        }
        p += w;
        left -= (size_t)w;
    }
    return 1;
}

/* Write every output: first all temporaries, then all renames and the
 * writes in place.  Every destination is checked before the first is
 * touched, so a failure leaves the old files as they were. */
static int commit_outputs(void)
{
    static Dest dest[4];
    char tmp[4][PATH_MAX];
    int made[4] = {0};
    int ok = 1;
    for (int i = 0; i < noutputs && ok; i++)
        if (strcmp(outputs[i].path, "-") != 0)
            ok = resolve_dest(outputs[i].path, &dest[i]);
    for (int i = 0; i < noutputs && ok; i++) {
        Output *o = &outputs[i];
        const char *data = o->text.data ? o->text.data : "";
        if (strcmp(o->path, "-") == 0 || dest[i].in_place)
            continue;
        if (same_content(dest[i].path, &o->text))
            continue;
        if (snprintf(tmp[i], PATH_MAX, "%s.tmpXXXXXX", dest[i].path) >= PATH_MAX) {
            diag_error(LOC_NONE, "output path too long: %s", o->path);
            ok = 0;
            break;
        }
        int fd = mkstemp(tmp[i]);
        if (fd < 0) {
            diag_error(LOC_NONE, "cannot write '%s': %s", o->path, strerror(errno));
            ok = 0;
            break;
        }
        made[i] = 1;
        fchmod(fd, 0644);
        if (!write_all(fd, data, o->text.len)) {
            diag_error(LOC_NONE, "cannot write '%s': %s", o->path, strerror(errno));
            ok = 0;
        }
        if (close(fd) != 0 && ok) {
            diag_error(LOC_NONE, "cannot write '%s': %s", o->path, strerror(errno));
            ok = 0;
        }
    }
    for (int i = 0; i < noutputs; i++) {
        if (!made[i])
            continue;
        if (ok && rename(tmp[i], dest[i].path) != 0) {
            diag_error(LOC_NONE, "cannot write '%s': %s", outputs[i].path, strerror(errno));
            ok = 0;
        }
        if (!ok)
            unlink(tmp[i]);
    }
    for (int i = 0; i < noutputs && ok; i++) {
        if (strcmp(outputs[i].path, "-") == 0 || !dest[i].in_place)
            continue;
        int fd = open(dest[i].path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || !write_all(fd, outputs[i].text.data ? outputs[i].text.data : "",
                                 outputs[i].text.len)) {
            diag_error(LOC_NONE, "cannot write '%s': %s", outputs[i].path, strerror(errno));
            ok = 0;
        }
        if (fd >= 0 && close(fd) != 0 && ok) {
            diag_error(LOC_NONE, "cannot write '%s': %s", outputs[i].path, strerror(errno));
            ok = 0;
        }
    }
    if (ok) {
        for (int i = 0; i < noutputs; i++)
            if (strcmp(outputs[i].path, "-") == 0)
                fwrite(outputs[i].text.data ? outputs[i].text.data : "", 1, outputs[i].text.len,
                       stdout);
        /* a large fwrite goes straight to the descriptor: its error is
         * the stream's, not fflush's */
        if (fflush(stdout) != 0 || ferror(stdout)) {
            diag_error(LOC_NONE, "cannot write to standard output: %s", strerror(errno));
            ok = 0;
        }
    }
    return ok;
}

/* The regular file a path names, symlinks resolved, for a file that may
 * not exist yet (its folder resolved); "" for a device, FIFO or the like,
 * which several outputs may share. */
static void file_identity(const char *path, char out[PATH_MAX])
{
    struct stat st;
    out[0] = 0;
    if (stat(path, &st) == 0) {
        if (S_ISREG(st.st_mode) && !realpath(path, out))
            snprintf(out, PATH_MAX, "%s", path);
        return;
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char rdir[PATH_MAX];
    size_t nd = 0, nb = strlen(base);
    const int found = realpath(dir, rdir) != NULL;
    if (found)
        nd = strcmp(rdir, "/") == 0 ? 0 : strlen(rdir);
    if (found && nd + nb + 2 <= PATH_MAX) {
        memcpy(out, rdir, nd);
        out[nd] = '/';
        memcpy(out + nd + 1, base, nb + 1);
    } else {
        snprintf(out, PATH_MAX, "%s", path);
    }
}

/* Two outputs that are one file would leave only the last, and an output
 * that is the input would replace the program: usage errors (exit 2),
 * found before anything is written. */
static void check_output_files(const Options *o)
{
    char in[PATH_MAX] = "", id[4][PATH_MAX];
    if (strcmp(o->input, "-") != 0)
        file_identity(o->input, in);
    for (int i = 0; i < noutputs; i++) {
        id[i][0] = 0;
        if (strcmp(outputs[i].path, "-") == 0)
            continue;
        file_identity(outputs[i].path, id[i]);
        if (!id[i][0])
            continue;
        const char *clash = NULL;
        if (in[0] && strcmp(id[i], in) == 0)
            clash = o->input;
        for (int j = 0; j < i && !clash; j++)
            if (strcmp(id[i], id[j]) == 0)
                clash = outputs[j].path;
        if (!clash)
            continue;
        diag_flush();
        if (clash == o->input)
            usage_error("output '%s' is the input file '%s': give another -o%s", outputs[i].path,
                        o->input, o->mf ? " or -MF" : "");
        if (strcmp(clash, outputs[i].path) == 0)
            usage_error("two outputs would both be written to '%s': give -o and -MF paths of "
                        "their own (the header goes beside -o FILE as FILE with .h)", clash);
        usage_error("two outputs would both be written to one file ('%s' and '%s'): give -o "
                    "and -MF paths of their own", clash, outputs[i].path);
    }
}

/* Capture what a FILE* printer writes into a Buf. */
typedef void (*Printer)(FILE *out, void *ctx);
static void capture(Buf *b, Printer fn, void *ctx)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f)
        fatal_oom();
    fn(f, ctx);
    fclose(f);
    buf_write(b, data, len);
    free(data);
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *out)
{
    fputs(
        "usage: fusec [options] FILE.fuse      (FILE may be - for standard input)\n"
        "\n"
        "Translates a .fuse program into fused CUDA kernels plus a C header.\n"
        "\n"
        "Output:\n"
        "  -o FILE                 main output (.cu for cuda, .c for nvrtc; header beside it);\n"
        "                          with --emit=X, where X goes ('-' is standard output)\n"
        "  --target=cuda|nvrtc     cuda: a .cu for nvcc (default); nvrtc: plain C that\n"
        "                          compiles its embedded CUDA source at run time via fusert\n"
        "  --emit=KIND             ast | ir | eval | plan | fusion | dot | cu | c | h | kernels\n"
        "  -MD                     also write a depfile (FILE.d beside the output)\n"
        "  -M, -MM                 print the dependencies (Make rule) instead; write nothing\n"
        "                          else (-MM is -M: fusec has no system imports to leave out)\n"
        "  -MF FILE                the depfile's name\n"
        "  -MT TARGET              the target named in the depfile\n"
        "  -MP                     add a phony target for every dependency\n"
        "\n"
        "Language:\n"
        "  -I DIR                  search DIR for imports (after the importing file's folder)\n"
        "  -D NAME=SIZE            make symbolic dim NAME static with SIZE\n"
        "\n"
        "Fusion and code generation:\n"
        "  --no-fusion             one kernel per op (the baseline)\n"
        "  --max-registers=N       per-thread register budget for fusion (default 128)\n"
        "  --expect-kernels=N      error unless every fn becomes at most N kernels\n"
        "  --fast-math             allow fast approximate math in kernels\n"
        "  --atomic-reduce         combine full and split-column sum/mean/max/min with\n"
        "                          atomics (faster, not bitwise reproducible)\n"
        "  --prefix=NAME           put NAME in front of every exported symbol (host\n"
        "                          functions, kernels), so modules with the same fn\n"
        "                          names link into one program\n"
        "\n"
        "Reference interpreter (--emit=eval):\n"
        "  --fn NAME               the fn to run\n"
        "  --input NAME=FILE.npy   a tensor input; --input NAME=NUMBER for a scalar\n"
        "  --seed S                seed for inputs not given (default 0)\n"
        "  --output-dir DIR        write each result to DIR/NAME.npy\n"
        "\n"
        "Diagnostics:\n"
        "  --diagnostics-format=text|json   (json: usage errors too)\n"
        "  --color=auto|always|never        colour in text diagnostics (default auto:\n"
        "                                   standard error is a terminal, NO_COLOR unset)\n"
        "  -w                      print no warnings\n"
        "  -Werror                 make every warning an error\n"
        "  --version, --help\n"
        "\n"
        "Exit status: 0 success, 1 errors in the input, 2 bad usage, 70 internal error.\n"
        "The architecture is chosen where the code is built: nvcc's -arch for the .cu,\n"
        "the GPU it runs on for --target=nvrtc; fusec takes no --arch.\n",
        out);
}

/* Set before any other option is read (prescan_diagnostics_format), so that
 * every usage error comes as JSON under --diagnostics-format=json. */
static int json_usage;

/* Exit after --help or --version: 0, or 1 when standard output failed. */
static _Noreturn void exit_after_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "fusec: error: cannot write to standard output: %s\n", strerror(errno));
        exit(EXIT_ERROR);
    }
    exit(EXIT_OK);
}

static _Noreturn void usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (json_usage) {
        diag_error(LOC_NONE, "%s", msg);
        diag_note(LOC_NONE, "run 'fusec --help' for the options");
        diag_flush();
    } else {
        fprintf(stderr, "fusec: error: %s\nfusec: run 'fusec --help' for the options\n", msg);
    }
    exit(EXIT_USAGE);
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

/* Option value: "--opt=value", or "--opt value" / "-Xvalue" / "-X value". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=')
        return a + n + 1;
    if (name[1] != '-' && a[n] != 0) /* -Ifoo */
        return a + n;
    if (*i + 1 >= argc)
        usage_error("option '%s' needs a value", name);
    return argv[++*i];
}

static int opt_is(const char *a, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == 0 || a[n] == '=')
        return 1;
    return name[1] != '-' && strlen(name) == 2; /* -Ifoo, -DN=1 */
}

/* The last --diagnostics-format=json (or "--diagnostics-format json") on the
 * command line, looked for before anything else is parsed. */
static void prescan_diagnostics_format(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *f = NULL;
        if (strncmp(argv[i], "--diagnostics-format=", 21) == 0)
            f = argv[i] + 21;
        else if (strcmp(argv[i], "--diagnostics-format") == 0 && i + 1 < argc)
            f = argv[++i];
        if (f)
            json_usage = strcmp(f, "json") == 0;
    }
    if (json_usage)
        diag_set_format(DIAG_JSON);
}

static void parse_args(Arena *a, int argc, char **argv, Options *o)
{
    o->max_registers = 128;
    o->expect_kernels = -1;
    o->color = -1;
    prescan_diagnostics_format(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit_after_stdout();
        } else if (strcmp(arg, "--version") == 0) {
            printf("fusec %s\n", FUSEC_VERSION);
            exit_after_stdout();
        } else if (strcmp(arg, "-MD") == 0) {
            o->md = 1;
        } else if (strcmp(arg, "-MP") == 0) {
            o->mp = 1;
        } else if (strcmp(arg, "-M") == 0 || strcmp(arg, "-MM") == 0) {
            o->deps_only = 1;
        } else if (strcmp(arg, "-w") == 0) {
            diag_set_warnings(DIAG_WARN_OFF);
        } else if (strcmp(arg, "-Werror") == 0) {
            diag_set_warnings(DIAG_WARN_ERROR);
        } else if (opt_is(arg, "--color")) {
            const char *c = opt_value(argc, argv, &i, "--color");
            if (strcmp(c, "auto") == 0)
                o->color = -1;
            else if (strcmp(c, "always") == 0)
                o->color = 1;
            else if (strcmp(c, "never") == 0)
                o->color = 0;
            else
                usage_error("unknown --color '%s' (expected auto, always or never)", c);
        } else if (strcmp(arg, "-MF") == 0) {
            o->mf = opt_value(argc, argv, &i, "-MF");
        } else if (strcmp(arg, "-MT") == 0) {
            o->mt = opt_value(argc, argv, &i, "-MT");
        } else if (opt_is(arg, "-o")) {
            o->output = opt_value(argc, argv, &i, "-o");
        } else if (opt_is(arg, "-I")) {
            const char *d = opt_value(argc, argv, &i, "-I");
            ARENA_PUSH(a, o->incs, o->nincs, o->capincs, d);
        } else if (opt_is(arg, "-D")) {
            const char *d = opt_value(argc, argv, &i, "-D");
            const char *eq = strchr(d, '=');
            long long v;
            if (!eq || !is_ident(d, (size_t)(eq - d)))
                usage_error("-D expects NAME=SIZE, got '%s'", d);
            if (!parse_int(eq + 1, 0, INT64_MAX, &v))
                usage_error("-D size must be a non-negative integer: '%s'", d);
            SemaDefine def = {arena_strndup(a, d, (size_t)(eq - d)), v};
            ARENA_PUSH(a, o->defs, o->ndefs, o->capdefs, def);
        } else if (opt_is(arg, "--target")) {
            const char *t = opt_value(argc, argv, &i, "--target");
            if (strcmp(t, "cuda") == 0)
                o->target = TARGET_CUDA;
            else if (strcmp(t, "nvrtc") == 0)
                o->target = TARGET_NVRTC;
            else
                usage_error("unknown target '%s' (expected cuda or nvrtc)", t);
        } else if (opt_is(arg, "--emit")) {
            const char *e = opt_value(argc, argv, &i, "--emit");
            int found = 0;
            for (int k = EMIT_AST; k <= EMIT_KERNELS; k++)
                if (strcmp(e, emit_names[k]) == 0) {
                    o->emit = (EmitKind)k;
                    found = 1;
                }
            if (!found)
                usage_error("unknown --emit kind '%s' (expected ast, ir, eval, plan, fusion, "
                            "dot, cu, c, h or kernels)", e);
        } else if (opt_is(arg, "--diagnostics-format")) {
            const char *f = opt_value(argc, argv, &i, "--diagnostics-format");
            if (strcmp(f, "text") == 0)
                diag_set_format(DIAG_TEXT);
            else if (strcmp(f, "json") == 0)
                diag_set_format(DIAG_JSON);
            else
                usage_error("unknown diagnostics format '%s' (expected text or json)", f);
        } else if (opt_is(arg, "--max-registers")) {
            long long v;
            const char *s = opt_value(argc, argv, &i, "--max-registers");
            if (!parse_int(s, 16, 255, &v))
                usage_error("--max-registers expects a number from 16 to 255, got '%s'", s);
            o->max_registers = (int)v;
        } else if (opt_is(arg, "--expect-kernels")) {
            long long v;
            const char *s = opt_value(argc, argv, &i, "--expect-kernels");
            if (!parse_int(s, 1, 1000000, &v))
                usage_error("--expect-kernels expects a positive number, got '%s'", s);
            o->expect_kernels = (int)v;
        } else if (opt_is(arg, "--arch")) {
            /* The generated code picks its per-architecture paths when it is
             * compiled (__CUDA_ARCH__ under nvcc's -arch; NVRTC compiles for
             * the GPU it runs on), so there is nothing for fusec to choose. */
            usage_error("fusec takes no --arch ('%s'): the architecture is nvcc's -arch when "
                        "the .cu is compiled, or the GPU the nvrtc target runs on", arg);
        } else if (opt_is(arg, "--prefix")) {
            const char *pre = opt_value(argc, argv, &i, "--prefix");
            if (!is_ident(pre, strlen(pre)))
                usage_error("--prefix expects the start of a C identifier (letters, digits, '_'; "
                            "not a digit first), got '%s'", pre);
            const char *why = c_prefix_clash(pre);
            if (why)
                usage_error("--prefix=%s is reserved: %s; choose another prefix", pre, why);
            o->prefix = pre;
        } else if (strcmp(arg, "--no-fusion") == 0) {
            o->no_fusion = 1;
        } else if (strcmp(arg, "--fast-math") == 0) {
            o->fast_math = 1;
        } else if (strcmp(arg, "--atomic-reduce") == 0) {
            o->atomic_reduce = 1;
        } else if (opt_is(arg, "--fn")) {
            o->eval.fn = opt_value(argc, argv, &i, "--fn");
        } else if (opt_is(arg, "--input")) {
            const char *v = opt_value(argc, argv, &i, "--input");
            const char *eq = strchr(v, '=');
            if (!eq || !is_ident(v, (size_t)(eq - v)) || !eq[1])
                usage_error("--input expects NAME=FILE.npy or NAME=NUMBER, got '%s'", v);
            EvalInput in = {arena_strndup(a, v, (size_t)(eq - v)), eq + 1};
            ARENA_PUSH(a, o->eval.inputs, o->eval.ninputs, o->capinputs, in);
        } else if (opt_is(arg, "--seed")) {
            long long v;
            const char *s = opt_value(argc, argv, &i, "--seed");
            if (!parse_int(s, 0, INT64_MAX, &v))
                usage_error("--seed expects a non-negative integer, got '%s'", s);
            o->eval.seed = (uint64_t)v;
            o->seed_given = 1;
        } else if (opt_is(arg, "--output-dir")) {
            o->eval.output_dir = opt_value(argc, argv, &i, "--output-dir");
        } else if (arg[0] == '-' && arg[1] != 0) {
            usage_error("unknown option '%s'", arg);
        } else {
            if (o->input)
                usage_error("more than one input file given ('%s')", arg);
            o->input = arg;
        }
    }
    if (!o->input)
        usage_error("%s", "no input file (use - for standard input)");
    if (o->emit != EMIT_EVAL && (o->eval.ninputs || o->eval.output_dir || o->seed_given || o->eval.fn))
        usage_error("%s", "--fn, --input, --seed and --output-dir go with --emit=eval");
    if (o->emit == EMIT_CU && o->target == TARGET_NVRTC)
        usage_error("%s", "--emit=cu is the cuda target's source; use --emit=c with --target=nvrtc");
    if (o->emit == EMIT_C && o->target == TARGET_CUDA)
        o->target = TARGET_NVRTC; /* --emit=c implies the plain-C target */
    if (o->deps_only && o->emit != EMIT_DEFAULT)
        usage_error("-M and -MM print the dependencies of the translation; they go without "
                    "--emit=%s", emit_names[o->emit]);
    if (o->deps_only && o->md)
        usage_error("%s", "-M prints the dependencies instead of translating; -MD writes them "
                          "beside the translation: give one of them");
    /* -MD puts the depfile beside the output: standard output has no beside */
    if (o->md && !o->mf && o->emit != EMIT_DEFAULT && (!o->output || strcmp(o->output, "-") == 0))
        usage_error("%s", "-MD needs -o FILE or -MF FILE when writing to standard output");
    /* The source includes its header by name, so a source on standard output
     * would include a header that nobody writes. */
    if (!o->deps_only && o->emit == EMIT_DEFAULT &&
        ((o->output && strcmp(o->output, "-") == 0) || (!o->output && strcmp(o->input, "-") == 0)))
        usage_error("the source would go to standard output without the header it includes: "
                    "give -o FILE%s (the header goes beside it), or --emit=%s for the source alone",
                    o->target == TARGET_CUDA ? ".cu" : ".c", o->target == TARGET_CUDA ? "cu" : "c");
}

/* ---- names of outputs ---------------------------------------------------- */

/* "dir/softmax.fuse" -> "softmax" (a C identifier: other bytes become '_').
 * A program read from standard input takes its name from -o FILE. */
static char *module_name(Arena *a, const char *input, const char *output)
{
    if (strcmp(input, "-") == 0 && output && strcmp(output, "-") != 0)
        input = output;
    if (strcmp(input, "-") == 0)
        return arena_strdup(a, "stdin");
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *m = arena_strndup(a, base, n);
    for (char *p = m; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    if (m[0] >= '0' && m[0] <= '9')
        m = arena_printf(a, "m_%s", m);
    return m;
}

/* Replace the extension of path (or add one). */
static char *with_ext(Arena *a, const char *path, const char *ext)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    return arena_printf(a, "%.*s%s", (int)n, path, ext);
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- depfile ------------------------------------------------------------- */

static void dep_escape(Buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == ' ' || *s == '#')
            buf_putc(b, '\\');
        if (*s == '$')
            buf_putc(b, '$');
        buf_putc(b, *s);
    }
}

/* The depfile of main_out: to -MF FILE, else beside main_out; with -M to
 * standard output unless -MF names a file. */
static void write_depfile(Arena *a, const Options *o, const IrModule *m, const char *main_out)
{
    const char *path = o->mf ? o->mf : o->deps_only ? "-" : with_ext(a, main_out, ".d");
    Buf *b = new_output(path);
    if (o->mt)
        buf_puts(b, o->mt); /* as given, as gcc's -MT (quoting is the user's) */
    else
        dep_escape(b, main_out);
    buf_puts(b, ":");
    /* a program read from standard input is no file make could check */
    for (int i = strcmp(o->input, "-") == 0 ? 1 : 0; i < m->ndeps; i++) {
        buf_puts(b, " \\\n  ");
        dep_escape(b, m->deps[i]);
    }
    buf_putc(b, '\n');
    if (o->mp)
        for (int i = 1; i < m->ndeps; i++) {
            buf_putc(b, '\n');
            dep_escape(b, m->deps[i]);
            buf_puts(b, ":\n");
        }
}

/* ---- the pipeline ---------------------------------------------------------- */

static void print_ast(FILE *f, void *ctx) { ast_print(f, ctx); }
static void print_ir(FILE *f, void *ctx) { ir_print_module(f, ctx); }

typedef struct PlanSet {
    Plan **plans;
    int n;
} PlanSet;
static void print_plan(FILE *f, void *ctx) { fuse_print_json(f, ((PlanSet *)ctx)->plans, ((PlanSet *)ctx)->n); }
static void print_fusion(FILE *f, void *ctx) { fuse_print_text(f, ((PlanSet *)ctx)->plans, ((PlanSet *)ctx)->n); }
static void print_dot(FILE *f, void *ctx) { fuse_print_dot(f, ((PlanSet *)ctx)->plans, ((PlanSet *)ctx)->n); }

static int run(Arena *a, Options *o)
{
    AstFile *ast = parse_path(a, o->input, LOC_NONE);
    if (!ast || diag_error_count())
        return EXIT_ERROR;
    const char *out = o->output ? o->output : "-";
    if (o->emit == EMIT_AST) {
        capture(new_output(out), print_ast, ast);
        return EXIT_OK;
    }

    SemaOptions so = {o->incs, o->nincs, o->defs, o->ndefs, 1, o->prefix};
    IrModule *m = sema_program(a, ast, &so);
    if (!m || diag_error_count())
        return EXIT_ERROR;
    if (o->emit == EMIT_IR) {
        capture(new_output(out), print_ir, m);
        return EXIT_OK;
    }
    if (o->emit == EMIT_EVAL)
        return eval_command(m, &o->eval);
    char *mod = module_name(a, o->input, o->output);
    const char *ext = o->target == TARGET_CUDA ? ".cu" : ".c";
    if (o->deps_only) { /* the rule -MD would write, for the same main output */
        int named = o->output && strcmp(o->output, "-") != 0;
        write_depfile(a, o, m, named ? o->output : arena_printf(a, "%s%s", mod, ext));
        return EXIT_OK;
    }

    /* --prefix renames each entry point before planning, so that every name
     * derived from it (host functions, _ws, _packed, kernels) carries it. */
    if (o->prefix)
        for (int i = 0; i < m->nfns; i++)
            m->fns[i]->name = arena_printf(a, "%s%s", o->prefix, m->fns[i]->name);
    FusionOptions fo = {o->no_fusion, o->max_registers, o->expect_kernels};
    PlanSet ps = {ARENA_ARRAY(a, Plan *, m->nfns ? m->nfns : 1), m->nfns};
    for (int i = 0; i < m->nfns; i++) {
        ps.plans[i] = fuse_plan(a, m->fns[i], &fo);
        if (!ps.plans[i])
            return EXIT_ERROR;
    }
    if (diag_error_count())
        return EXIT_ERROR;
    /* the kernels' lowering, once: the reports and every emitter read it */
    CudaModule *cuda = emit_cuda_lower(ps.plans, ps.n, o->atomic_reduce);
    if (o->atomic_reduce) /* the reports say which kernels combine with atomics */
        for (int i = 0; i < ps.n; i++)
            for (int k = 0; k < ps.plans[i]->nkernels; k++) {
                Kernel *kn = &ps.plans[i]->kernels[k];
                const char *why;
                Combine cb = emit_cuda_combine(cuda, i, k, &why);
                if (cb == COMBINE_NONE)
                    continue;
                kn->combine = cb == COMBINE_ATOMIC ? "atomic" : "ordered";
                kn->combine_why = cb == COMBINE_ORDERED && why[0] ? arena_strdup(a, why) : NULL;
            }
    switch (o->emit) {
    case EMIT_PLAN: capture(new_output(out), print_plan, &ps); break;
    case EMIT_FUSION: capture(new_output(out), print_fusion, &ps); break;
    case EMIT_DOT: capture(new_output(out), print_dot, &ps); break;
    default: break;
    }
    if (o->emit == EMIT_PLAN || o->emit == EMIT_FUSION || o->emit == EMIT_DOT) {
        emit_cuda_module_free(cuda);
        return EXIT_OK;
    }

    const char *main_out, *hdr_out;
    if (o->emit == EMIT_CU || o->emit == EMIT_C || o->emit == EMIT_H || o->emit == EMIT_KERNELS) {
        main_out = out;
        hdr_out = NULL;
    } else if (o->output && strcmp(o->output, "-") != 0) {
        main_out = o->output;
        hdr_out = with_ext(a, o->output, ".h");
    } else {
        main_out = arena_printf(a, "%s%s", mod, ext);
        hdr_out = arena_printf(a, "%s.h", mod);
    }
    EmitOptions eo = {
        .target = o->target,
        .module = o->prefix ? arena_printf(a, "%s%s", o->prefix, mod) : mod,
        .header_name = hdr_out ? basename_of(hdr_out) : arena_printf(a, "%s.h", mod),
        .source_name = o->input,
        .fast_math = o->fast_math,
        .atomic_reduce = o->atomic_reduce,
        .cuda = cuda,
    };
    if (o->emit == EMIT_H) {
        emit_header(new_output(main_out), ps.plans, ps.n, &eo);
    } else if (o->emit == EMIT_KERNELS) {
        emit_cuda_kernels(new_output(main_out), ps.plans, ps.n, &eo);
    } else {
        emit_host_source(new_output(main_out), ps.plans, ps.n, &eo);
        if (hdr_out)
            emit_header(new_output(hdr_out), ps.plans, ps.n, &eo);
    }
    emit_cuda_module_free(cuda);
    if (diag_error_count())
        return EXIT_ERROR;
    if (o->md || o->mf) {
        if (strcmp(main_out, "-") == 0 && !o->mf) {
            diag_error(LOC_NONE, "-MD needs -o FILE or -MF FILE when writing to standard output");
            return EXIT_ERROR;
        }
        write_depfile(a, o, m, main_out);
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    Arena arena = {0};
    Options o = {0};
    parse_args(&arena, argc, argv, &o);
    diag_set_color(o.color >= 0 ? o.color : isatty(STDERR_FILENO) && !getenv("NO_COLOR"));
    diag_set_max_errors(50);

    int rc = run(&arena, &o);
    check_output_files(&o);
    if (rc == EXIT_OK && diag_error_count() == 0 && !commit_outputs())
        rc = EXIT_ERROR;
    if (rc == EXIT_OK && diag_error_count())
        rc = EXIT_ERROR;
    diag_flush();
    for (int i = 0; i < noutputs; i++)
        buf_free(&outputs[i].text);
    arena_free_all(&arena);
    diag_reset();
    return rc;
}
