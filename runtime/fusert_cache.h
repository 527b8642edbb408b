/* fusert_cache.h -- the on-disk cache's folder, shared by the library
 * (fusert_cache.c) and the fusert-cache tool (fusert_cache_tool.c).
 * Internal: not installed, and libfusert.so does not export it (fusert.map).
 * No CUDA types, so the tool builds without the toolkit's headers. */
#ifndef FUSERT_CACHE_H
#define FUSERT_CACHE_H
#include <stddef.h>
#include <stdint.h>

/* The cache folder's path into buf: $FUSERT_CACHE_DIR, else
 * $XDG_CACHE_HOME/fusert, else $HOME/.cache/fusert.  0 when there is none
 * (no variable set, or a path too long). */
int fusert__cache_dir(char *buf, size_t n);

/* The size limit in bytes: $FUSERT_CACHE_MAX_MB MiB (a decimal number; 0
 * means no limit, UINT64_MAX here), 1024 MiB when unset or not a number. */
uint64_t fusert__cache_limit(void);

/* Open the folder for use: a directory fd (O_DIRECTORY | O_NOFOLLOW), or
 * FUSERT_CACHE_MISSING (errno set: it does not exist, or cannot be opened
 * or created), or FUSERT_CACHE_REFUSED when it exists but is not the
 * user's own (a symbolic link, not a directory, owned by another user, or
 * writable by group or others), with the reason written into why.  create:
 * make it first when it is missing, 0700, with its missing parents under
 * the user's umask. */
#define FUSERT_CACHE_MISSING (-1)
#define FUSERT_CACHE_REFUSED (-2)
int fusert__cache_open(const char *dir, int create, char *why, size_t whyn);

/* The entries (regular files named *.cubin owned by the user) of the open
 * folder: their count and bytes. */
void fusert__cache_usage(int dfd, uint64_t *entries, uint64_t *bytes);

/* Remove entries, least recently used first (oldest modification time:
 * a hit touches its entry), until they take at most `limit` bytes; 0 clears
 * the folder.  Holds an exclusive flock on the folder's .lock file while it
 * scans and removes, so that processes trimming at once do not both count
 * an entry; an entry another process removed first is simply gone.  Also
 * removes temporary files a killed writer left over an hour ago.  Counts
 * what it removed into *entries and *bytes (either may be NULL); 0 when
 * the lock or the folder cannot be had (errno set). */
int fusert__cache_trim(int dfd, uint64_t limit, uint64_t *entries, uint64_t *bytes);

#endif
