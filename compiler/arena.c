/* arena.c -- bump allocation in growing blocks; freed all at once. */
#include "arena.h"
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void *arena_alloc(Arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (!a->head || a->head->size - a->head->used < size) {
        size_t bsize = size > 60000 ? size : 60000;
        ArenaBlock *b = malloc(sizeof(ArenaBlock) + bsize);
        if (!b)
            fatal_oom();
        b->next = a->head;
        b->used = 0;
        b->size = bsize;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *arena_grow(Arena *a, void *ptr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return ptr;
    int ncap = *cap ? *cap * 2 : 8;
    while (ncap < need)
        ncap *= 2;
    void *p = arena_alloc(a, elem * (size_t)ncap);
    if (ptr && *cap)
        memcpy(p, ptr, elem * (size_t)*cap);
    *cap = ncap;
    return p;
}

void arena_free_all(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}
