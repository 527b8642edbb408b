/* test_internal_error.c -- an internal compiler error exits 70 with a
 * request for a report: as text, and under --diagnostics-format=json as
 * one more error in the JSON array (after the diagnostics before it), so
 * that a tool reading the array gets valid JSON. */
#define _POSIX_C_SOURCE 200809L
#include "diag.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Run fn in a child with stderr to a file; its exit status and stderr. */
static int run_child(void (*fn)(void), char *err, size_t errlen)
{
    char path[] = "/tmp/fusec-ice-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        fn();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(err, 1, errlen - 1, f) : 0;
    err[n] = 0;
    if (f)
        fclose(f);
    close(fd);
    unlink(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void text_ice(void)
{
    ICE("the text case");
}

static void json_ice(void)
{
    diag_set_format(DIAG_JSON);
    diag_warning(LOC_NONE, "a warning before it");
    ICE("the json case");
}

int main(void)
{
    char err[4096];
    CHECK(run_child(text_ice, err, sizeof err) == 70);
    CHECK(strstr(err, "fusec: internal compiler error: the text case (") != NULL);
    CHECK(strstr(err, "note: this is a bug in fusec") != NULL);

    CHECK(run_child(json_ice, err, sizeof err) == 70);
    CHECK(strncmp(err, "[{\"severity\":\"warning\"", 22) == 0);
    CHECK(strstr(err, "{\"severity\":\"error\",\"file\":null,") != NULL);
    CHECK(strstr(err, "\"message\":\"internal compiler error: the json case (") != NULL);
    CHECK(strstr(err, "this is a bug in fusec; please report it") != NULL);
    size_t n = strlen(err);
    CHECK(n >= 2 && strcmp(err + n - 2, "]\n") == 0);
    CHECK(strstr(err, "fusec: internal compiler error") == NULL); /* no text beside the JSON */
    if (failures)
        fprintf(stderr, "%d of %d checks failed\n", failures, checks);
    return failures ? 1 : 0;
}
