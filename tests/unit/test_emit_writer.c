/* test_emit_writer.c -- the indented-line writer of generated code: four
 * spaces a level, none on an empty line, lines longer than its stack
 * buffer, and an internal error (exit 70) when a piece of code does not
 * come back to level zero or closes below it. */
#define _POSIX_C_SOURCE 200809L
#include "emit_writer.h"
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* the exit status of fn run in a child process (stderr silenced) */
static int exit_status_of(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        fn();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void unbalanced(void)
{
    Buf b = {0};
    Emitter e = {&b, 0};
    emit_open(&e, "{");
    emit_done(&e);
}

static void close_below_zero(void)
{
    Buf b = {0};
    Emitter e = {&b, 0};
    emit_close(&e, "}");
}

int main(void)
{
    Buf b = {0};
    Emitter e = {&b, 0};
    emit_open(&e, "void f(int %s)", "n");
    emit_line(&e, "int x = %d;", 3);
    emit_line(&e, "%s", "");
    emit_open(&e, "if (x) {");
    emit_line(&e, "x++;");
    emit_close(&e, "}");
    emit_close(&e, "}");
    emit_done(&e);
    CHECK(strcmp(b.data, "void f(int n)\n    int x = 3;\n\n    if (x) {\n        x++;\n    }\n}\n") == 0);

    /* a line past the writer's 1024-byte stack buffer, indented once */
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    Buf l = {0};
    Emitter el = {&l, 1};
    emit_line(&el, "%s;", big);
    CHECK(l.len == 4 + 2999 + 2 && memcmp(l.data, "    aaa", 7) == 0 && strcmp(l.data + l.len - 2, ";\n") == 0);

    CHECK(exit_status_of(unbalanced) == EXIT_INTERNAL);
    CHECK(exit_status_of(close_below_zero) == EXIT_INTERNAL);
    buf_free(&b);
    buf_free(&l);
    if (failures)
        fprintf(stderr, "%d of %d checks failed\n", failures, checks);
    return failures ? 1 : 0;
}
