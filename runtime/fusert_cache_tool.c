/* fusert_cache_tool.c -- fusert-cache: look at or clear fusert's kernel
 * cache folder, found and checked exactly as the library does
 * (fusert_cache.h): the same environment variables, the same refusal of a
 * folder that is not the user's own, the same lock while entries go.
 *
 *   fusert-cache [stats]   the folder, its entry count and size, the limit
 *   fusert-cache clear     remove every entry
 *
 * Exit status: 0 done, 1 the folder is refused or cannot be read or
 * cleared, 2 bad usage. */
#include "fusert_cache.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: fusert-cache [stats|clear]\n"
    "  stats   print the kernel cache folder, its entry count and size, and the limit\n"
    "  clear   remove every entry from the folder\n"
    "The folder is $FUSERT_CACHE_DIR, else $XDG_CACHE_HOME/fusert, else\n"
    "$HOME/.cache/fusert; the limit is $FUSERT_CACHE_MAX_MB (default 1024).\n";

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "stats";
    if (argc > 2 || (strcmp(cmd, "stats") != 0 && strcmp(cmd, "clear") != 0 &&
                     strcmp(cmd, "--help") != 0 && strcmp(cmd, "-h") != 0)) {
        fprintf(stderr, "fusert-cache: error: %s '%s'\n%s",
                argc > 2 ? "unexpected argument" : "unknown command", argv[argc > 2 ? 2 : 1],
                usage);
        return 2;
    }
    if (cmd[0] == '-') {
        fputs(usage, stdout);
        return 0;
    }
    char dir[PATH_MAX], why[256];
    if (!fusert__cache_dir(dir, sizeof dir)) {
        fprintf(stderr, "fusert-cache: error: no cache folder: set FUSERT_CACHE_DIR or HOME\n");
        return 1;
    }
    int dfd = fusert__cache_open(dir, 0, why, sizeof why);
    if (dfd == FUSERT_CACHE_REFUSED) {
        fprintf(stderr, "fusert-cache: error: %s is not used as a cache folder: %s\n", dir, why);
        return 1;
    }
    if (dfd < 0 && errno != ENOENT) {
        fprintf(stderr, "fusert-cache: error: cannot open %s: %s\n", dir, strerror(errno));
        return 1;
    }

    if (strcmp(cmd, "clear") == 0) {
        uint64_t n = 0, bytes = 0;
        if (dfd >= 0 && !fusert__cache_trim(dfd, 0, &n, &bytes)) {
            fprintf(stderr, "fusert-cache: error: cannot lock %s/.lock: %s\n", dir,
                    strerror(errno));
            close(dfd);
            return 1;
        }
        printf("removed %llu entries (%llu bytes) from %s\n", (unsigned long long)n,
               (unsigned long long)bytes, dir);
        if (dfd >= 0)
            close(dfd);
        return 0;
    }

    uint64_t n = 0, bytes = 0, limit = fusert__cache_limit();
    if (dfd >= 0) {
        fusert__cache_usage(dfd, &n, &bytes);
        close(dfd);
    }
    printf("folder: %s%s\n", dir, dfd >= 0 ? "" : " (does not exist yet)");
    printf("entries: %llu\n", (unsigned long long)n);
    printf("size: %llu bytes (%.1f MiB)\n", (unsigned long long)bytes, mib(bytes));
    if (limit == UINT64_MAX)
        printf("limit: none (FUSERT_CACHE_MAX_MB=0)\n");
    else
        printf("limit: %llu bytes (%.1f MiB)\n", (unsigned long long)limit, mib(limit));
    const char *off = getenv("FUSERT_CACHE_DISABLE");
    if (off && *off && strcmp(off, "0") != 0)
        printf("disabled: FUSERT_CACHE_DISABLE is set, programs neither read nor write it\n");
    return 0;
}
