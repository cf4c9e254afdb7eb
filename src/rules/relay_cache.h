/* Memo of long relay sowings.
 *
 * Most relays end after a handful of pick-ups and are cheaper to redo than to
 * look up.  A relay still going after RELAY_CACHE_AFTER pick-ups is looked up
 * by its starting state (board + origin); on a miss it is finished and its
 * outcome stored: the final board (before the last-seed rule is applied), the
 * hole of the last seed, the seeds captured on the way, or "never ends".
 * Never-ending sowings can take hundreds of thousands of pick-ups to prove, and
 * search meets the same ones again and again: those are what is remembered.
 *
 * Direct-mapped, one table per thread (not thread-safe), keyed by XXH3-64.
 */
#ifndef SOW_RELAY_CACHE_H
#define SOW_RELAY_CACHE_H

#include "sow/rules.h"

#define RELAY_CACHE_AFTER 48

/* A relay polls its cache's stop flag every RELAY_POLL_EVERY pick-ups (a
 * power of two); a stopped relay returns "never ends" and is not stored.
 * Proving a relay endless can take minutes (docs/testing.md "Trust"), so Ctrl-C must
 * reach inside it. */
#define RELAY_POLL_EVERY (1u << 16)

bool relay_cache_stopped(const struct sow_relay_cache *c);

/* Returns true on a hit: *out, *last (-1 = never ends) and cap[] filled. */
bool relay_cache_get(struct sow_relay_cache *c, const struct ruleset *rs, const board_t *start,
                     int origin, board_t *out, int *last, int cap[2]);
void relay_cache_put(struct sow_relay_cache *c, const struct ruleset *rs, const board_t *start,
                     int origin, const board_t *out, int last, const int cap[2]);

#endif
