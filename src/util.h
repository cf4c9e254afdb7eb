/* sow — small shared utilities: monotonic clock, progress lines.
 * Thread-safety: util_now() is safe from any thread. */
#ifndef SOW_UTIL_H
#define SOW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Seconds on the monotonic clock (for rates and timeouts, never wall time). */
double util_now(void);
/* Seconds of CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): a
 * time limit on this clock gives a one-thread search the same computation
 * on a busy machine as on an idle one (sow match --clock cpu). */
double util_cpu_now(void);

/* Parse a whole decimal integer in [lo, hi]; returns 0 or -1 (no message). */
int util_parse_long(const char *s, long lo, long hi, long *out);

/* The environment variable name as a whole decimal integer in [lo, hi], or
 * dflt when it is unset or anything else (the tuning and test knobs:
 * SOW_MPI_STEP_WAVES and the like; every rank reads the same value). */
long util_env_long(const char *name, long lo, long hi, long dflt);

/* splitmix64: the small, fixed PRNG of every reproducible random choice in
 * sow (benches, play statistics, tests).  Advances *state. */
static inline uint64_t util_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A refusal's need and budget (bytes) in GB, as its message prints them:
 * three significant digits, more (up to nine) where three would print a
 * need above the budget as equal to it ("needs 19.93 GB, the budget is
 * 19.87 GB", not 19.9 and 19.9). */
struct util_gb2 {
    char need[24], budget[24];
};
struct util_gb2 util_gb2(double need, double budget);

/* Physical memory of the machine in bytes (0 if unknown). */
double util_phys_memory(void);

/* Give back the resident pages of a read-only file mapping inside
 * [p, p + n) (whole 4 KiB pages only): the data stays in the file and a
 * later read faults it in again.  For files read once through a mapping,
 * so that the reads do not stay in the process's resident memory.  Not for
 * anonymous or written private mappings (their pages would read as zeros). */
void util_drop_pages(const void *p, size_t n);

/* Ask for 2 MiB pages (transparent huge pages) under the whole 2 MiB pages
 * inside [p, p + len): arrays probed at random (hash sets, key arrays,
 * per-position bytes) spend most of a look-up in page walks with 4 KiB
 * pages.  Call before the memory is first touched; a no-op where the
 * kernel says no or len is under 2 MiB. */
void util_huge(void *p, size_t len);

/* The next directory of a path of directories joined by ':' (as PATH,
 * sow's tables path): its name at *p into dir (cut to len - 1 bytes), *p
 * moved past it and its ':'.  Returns the name's length in the path: 0
 * for an empty name ("a::b"), which callers skip.  Call while **p. */
size_t util_path_next(const char **p, char *dir, size_t len);

/* The directory for temporary files: $TMPDIR, else /tmp. */
const char *util_tmpdir(void);

/* A new directory "prefix-XXXXXX" in util_tmpdir() (mkdtemp), its path in
 * buf[len]; false if it cannot be made (errno set). */
bool util_mkdtemp(char *buf, size_t len, const char *prefix);

/* Remove a flat directory: its files (not subdirectories), then itself.
 * For scratch directories of benches and tests; errors are ignored. */
void util_rmdir_flat(const char *dir);

#endif
