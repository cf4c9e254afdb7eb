/* sow — small shared utilities: monotonic clock, progress lines.
 * Thread-safety: util_now() is safe from any thread. */
#ifndef SOW_UTIL_H
#define SOW_UTIL_H

#include <stdint.h>

/* Seconds on the monotonic clock (for rates and timeouts, never wall time). */
double util_now(void);

/* Parse a whole decimal integer in [lo, hi]; returns 0 or -1 (no message). */
int util_parse_long(const char *s, long lo, long hi, long *out);

/* Physical memory of the machine in bytes (0 if unknown). */
double util_phys_memory(void);

#endif
