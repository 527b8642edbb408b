/* sema_import.c -- the files of a program: the main file and its
 * imports, loaded depth first, each once; the fns they define, whose
 * names are global; the C names the main file's fns become. */
#define _XOPEN_SOURCE 700
#include "sema_import.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- imports --------------------------------------------------------------------
 * import "x.fuse": resolved relative to the importing file's folder, then
 * each -I folder in order; each file is loaded once (by realpath); a file
 * met again while it is still on the import stack is a cycle. */

/* The folder of a path as written ("." for a bare file name), used as
 * the first place to look for the file's own imports. */
static const char *dir_of(Arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    if (slash == path)
        return "/";
    return arena_strndup(a, path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *sema_canonical(Arena *a, const char *path)
{
    char *r = realpath(path, NULL);
    if (!r)
        return arena_strdup(a, path);
    char *c = arena_strdup(a, r);
    free(r);
    return c;
}

/* The C functions of fn A besides A itself: A_ws, A_workspace_size,
 * A_packed and A_kernel_count in the header, A_run, A_check, A_layout and
 * the kernels A_k<i>_... inside the module (emit_host.c, fusion.c).  The
 * part of B after A when B is one of them, else NULL. */
static const char *derived_from(const char *b, const char *a)
{
    static const char *const sfx[] = {"ws", "workspace_size", "packed", "kernel_count", "run", "check", "layout"};
    size_t n = strlen(a);
    if (strncmp(b, a, n) != 0 || b[n] != '_')
        return NULL;
    const char *s = b + n + 1;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
        if (strcmp(s, sfx[i]) == 0)
            return b + n;
    if (s[0] == 'k' && s[1] >= '0' && s[1] <= '9') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++;
        if (*s == '_')
            return b + n;
    }
    return NULL;
}

/* The main file's fns become C functions of the generated header under
 * --prefix + their names: each such name must be free in the generated
 * code, the headers it includes (cnames.c) and the other fns' C names. */
static int c_name_ok(Sema *S, AstFile *file, const AstFn *fn)
{
    const char *pre = S->opt->prefix;
    const char *cname = pre ? arena_printf(S->a, "%s%s", pre, fn->name) : fn->name;
    const char *clash = c_name_clash(cname);
    const char *stem = clash ? NULL : c_name_stem_clash(cname);
    if (clash && !pre)
        diag_error(fn->name_loc, "fn '%s' cannot become a C function: '%s' is %s", fn->name, cname, clash);
    else if (clash)
        diag_error(fn->name_loc, "fn '%s' cannot become a C function: --prefix=%s makes it '%s', which is %s",
                   fn->name, pre, cname, clash);
    else if (stem)
        diag_error(fn->name_loc,
                   "fn '%s' cannot become a C function: %sits C functions ('%s_ws', '%s_packed', ...) "
                   "would be %s",
                   fn->name, pre ? arena_printf(S->a, "with --prefix=%s, ", pre) : "", cname, cname, stem);
    if (clash || stem) {
        if (pre)
            diag_note(LOC_NONE, "rename it or choose another --prefix; each fn of the main file is exported "
                                "to C as the prefix and its name");
        else
            diag_note(LOC_NONE, "rename it; each fn of the main file is exported to C under its own name");
        return 0;
    }
    for (int i = 0; i < file->nfns; i++) {
        const AstFn *a = &file->fns[i];
        const char *sfx = a != fn ? derived_from(fn->name, a->name) : NULL;
        if (!sfx)
            continue;
        const char *ac = pre ? arena_printf(S->a, "%s%s", pre, a->name) : a->name;
        if (sfx[1] == 'k' && sfx[2] >= '0' && sfx[2] <= '9')
            diag_error(fn->name_loc, "fn '%s' cannot become a C function: '%s' has the form of the kernels of fn "
                       "'%s' (%s_k<i>_...)", fn->name, cname, a->name, ac);
        else
            diag_error(fn->name_loc, "fn '%s' cannot become a C function: fn '%s' already has a C function '%s'",
                       fn->name, a->name, cname);
        diag_note(a->name_loc, "fn '%s' is defined here; its C functions are %s, %s_ws, %s_workspace_size, "
                  "%s_packed, %s_kernel_count, and inside the module %s_run, %s_check, %s_layout and its "
                  "kernels %s_k<i>_...", a->name, ac, ac, ac, ac, ac, ac, ac, ac, ac);
        return 0;
    }
    return 1;
}

/* fn names are global across the main file and its imports. */
static void register_fns(Sema *S, AstFile *file, int is_main)
{
    for (int i = 0; i < file->nfns; i++) {
        AstFn *fn = &file->fns[i];
        if (op_builtin_name(fn->name)) {
            diag_error(fn->name_loc, "fn '%s' has the name of a builtin function", fn->name);
            diag_note(LOC_NONE, "choose another name; builtins cannot be redefined");
            continue;
        }
        int dup = 0;
        for (int k = 0; k < S->nfns && !dup; k++)
            if (strcmp(S->fns[k].fn->name, fn->name) == 0) {
                diag_error(fn->name_loc, "fn '%s' is already defined", fn->name);
                diag_note(S->fns[k].fn->name_loc, "first defined here");
                dup = 1;
            }
        if (dup)
            continue;
        if (is_main && !c_name_ok(S, file, fn))
            continue;
        FnInfo fi = {fn, is_main, 0, 0, 0};
        ARENA_PUSH(S->a, S->fns, S->nfns, S->capfns, fi);
    }
}

/* The span of the quoted path inside `import "x.fuse"` (the parser gives
 * the whole statement), so the caret sits under the string. */
static Loc import_string_loc(const AstImport *imp)
{
    size_t len;
    const char *text = diag_file_text(imp->loc.file, &len);
    Loc l = imp->loc;
    for (uint32_t i = l.begin; i < l.end && i < len; i++)
        if (text[i] == '"') {
            l.begin = i;
            return l;
        }
    return imp->loc;
}

static void load_import(Sema *S, const char *from_path, const AstImport *imp)
{
    const char *cands[64];
    int nc = 0;
    if (imp->path[0] == '/') {
        cands[nc++] = imp->path;
    } else {
        const char *dir = dir_of(S->a, from_path);
        cands[nc++] = strcmp(dir, ".") == 0 ? imp->path : arena_printf(S->a, "%s/%s", dir, imp->path);
        for (int i = 0; i < S->opt->ninclude && nc < 64; i++)
            cands[nc++] = arena_printf(S->a, "%s/%s", S->opt->include_dirs[i], imp->path);
    }
    const char *found = NULL;
    for (int i = 0; i < nc && !found; i++)
        if (is_file(cands[i]))
            found = cands[i];
    if (!found) {
        diag_error(import_string_loc(imp), "cannot find imported file \"%s\"", imp->path);
        Buf b = {0};
        for (int i = 0; i < nc; i++)
            buf_printf(&b, "%s%s", i ? ", " : "", cands[i]);
        diag_note(LOC_NONE, "looked for: %s%s", b.data ? b.data : "",
                  S->opt->ninclude ? "" : " (add folders to search with -I DIR)");
        buf_free(&b);
        return;
    }
    const char *canon = sema_canonical(S->a, found);
    for (int u = 0; u < S->nunits; u++) {
        if (strcmp(S->units[u].canon, canon) != 0)
            continue;
        if (S->units[u].loading) {
            /* the cycle runs from unit u (on the stack) to the importer */
            Buf b = {0};
            int start = 0;
            while (start < S->nload && S->loadstack[start] != u)
                start++;
            for (int k = start; k < S->nload; k++)
                buf_printf(&b, "%s -> ", base_of(S->units[S->loadstack[k]].path));
            buf_puts(&b, base_of(S->units[u].path));
            diag_error(import_string_loc(imp), "import cycle: %s", b.data);
            diag_note(LOC_NONE, "move what both files need into a third file that imports neither");
            buf_free(&b);
        }
        return; /* loaded already: once per program */
    }
    AstFile *file = parse_path(S->a, found, imp->loc);
    if (!file) { /* reported; remember it so a second import stays quiet */
        Unit bad = {found, canon, 0};
        ARENA_PUSH(S->a, S->units, S->nunits, S->capunits, bad);
        return;
    }
    sema_load_file(S, file, found, canon, 0);
}

/* Register a file's fns, then load its imports depth first; while its
 * imports load, the file is on the stack (cycle detection).  deps gets
 * every file in the order it was read, the main file first (-MD). */
void sema_load_file(Sema *S, AstFile *file, const char *path, const char *canon, int is_main)
{
    Unit u = {path, canon, 1};
    int id = S->nunits;
    ARENA_PUSH(S->a, S->units, S->nunits, S->capunits, u);
    ARENA_PUSH(S->a, S->loadstack, S->nload, S->capload, id);
    ARENA_PUSH(S->a, S->mod->deps, S->mod->ndeps, S->capdeps, path);
    register_fns(S, file, is_main);
    for (int i = 0; i < file->nimports; i++)
        load_import(S, path, &file->imports[i]);
    S->units[id].loading = 0;
    S->nload--;
}

FnInfo *sema_find_fn(Sema *S, const char *name)
{
    for (int i = 0; i < S->nfns; i++)
        if (strcmp(S->fns[i].fn->name, name) == 0)
            return &S->fns[i];
    return NULL;
}
