#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "relay_cache.h"

struct relay_entry {
    uint64_t key;
    board_t start;
    board_t out;
    int16_t last;
    uint8_t origin, family, pits;
    uint8_t cap[2];
    uint8_t used;
};

struct sow_relay_cache {
    size_t mask;
    struct relay_entry *e;
    volatile sig_atomic_t *stop; /* rules_cache_set_stop; NULL: never cut */
};

struct sow_relay_cache *rules_cache_new(unsigned log2_entries)
{
    if (log2_entries > 24)
        log2_entries = 24;
    struct sow_relay_cache *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->mask = ((size_t)1 << log2_entries) - 1;
    c->stop = NULL;
    c->e = calloc(c->mask + 1, sizeof *c->e);
    if (!c->e) {
        free(c);
        return NULL;
    }
    return c;
}

void rules_cache_free(struct sow_relay_cache *c)
{
    if (c) {
        free(c->e);
        free(c);
    }
}

static uint64_t key_of(const struct ruleset *rs, const board_t *start, int origin)
{
    return XXH3_64bits_withSeed(start, sizeof *start,
                                (uint64_t)origin << 8 | (uint64_t)rs->family << 16 |
                                    (uint64_t)rs->pits << 24);
}

bool relay_cache_get(struct sow_relay_cache *c, const struct ruleset *rs, const board_t *start,
                     int origin, board_t *out, int *last, int cap[2])
{
    uint64_t k = key_of(rs, start, origin);
    struct relay_entry *e = &c->e[k & c->mask];
    if (!e->used || e->key != k || e->origin != origin || e->family != rs->family || e->pits != rs->pits ||
        memcmp(&e->start, start, sizeof *start) != 0)
        return false;
    *out = e->out;
    *last = e->last;
    cap[0] = e->cap[0];
    cap[1] = e->cap[1];
    return true;
}

void relay_cache_put(struct sow_relay_cache *c, const struct ruleset *rs, const board_t *start,
                     int origin, const board_t *out, int last, const int cap[2])
{
    uint64_t k = key_of(rs, start, origin);
    struct relay_entry *e = &c->e[k & c->mask];
    e->key = k;
    e->start = *start;
    e->out = *out;
    e->last = (int16_t)last;
    e->origin = (uint8_t)origin;
    e->family = (uint8_t)rs->family;
    e->pits = (uint8_t)rs->pits;
    e->cap[0] = (uint8_t)cap[0];
    e->cap[1] = (uint8_t)cap[1];
    e->used = 1;
}

void rules_cache_set_stop(struct sow_relay_cache *c, volatile sig_atomic_t *stop)
{
    if (c)
        c->stop = stop;
}

bool relay_cache_stopped(const struct sow_relay_cache *c)
{
    /* (atomic: a watch thread may set it, watch.h; a signal handler too) */
    return c && c->stop && __atomic_load_n(c->stop, __ATOMIC_RELAXED);
}
