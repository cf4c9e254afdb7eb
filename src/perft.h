/* sow — perft: count move sequences of a given length (rules self-check).
 * A position with no legal move contributes 0 beyond it; `pass` is a move;
 * repetition (history-dependent) is ignored, as chess perft ignores it.
 * Thread-safety: reentrant; the cache (may be NULL) belongs to the caller. */
#ifndef SOW_PERFT_H
#define SOW_PERFT_H

#include <stdint.h>

#include "sow/rules.h"

uint64_t perft(const struct ruleset *rs, const sow_position *p, int depth,
               struct sow_relay_cache *cache);

#endif
