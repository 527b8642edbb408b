/* arena.h -- one bump allocator per compilation; nothing is freed one by one. */
#ifndef FUSEC_ARENA_H
#define FUSEC_ARENA_H
#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;
} Arena;

void *arena_alloc(Arena *a, size_t size);          /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void arena_free_all(Arena *a);

/* Grow an arena-owned array of elements of size elem to hold at least need
 * elements; *cap is updated.  Old contents are copied. */
void *arena_grow(Arena *a, void *ptr, int *cap, int need, size_t elem);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))
/* Append v to (arr, n, cap), all arena-owned. */
#define ARENA_PUSH(a, arr, n, cap, v) do { \
        if ((n) >= (cap)) (arr) = arena_grow((a), (arr), &(cap), (n) + 1, sizeof(*(arr))); \
        (arr)[(n)++] = (v); } while (0)

#endif
