/* The transposition table's struct and the engine's hot paths, inline
 * (private to libsow: tt.c and the engine, src/engine/engine_internal.h).
 * Layout, replacement and races: include/tt.h; the exported tt_key,
 * tte_probe, tte_store and tte_prefetch are these functions.  The engine
 * calls them once or more per node, where a call across files (no LTO) and
 * an unpacked struct tte_info cost more than the work. */
#ifndef SOW_TT_IMPL_H
#define SOW_TT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tt.h"

struct tt {
    struct tt_entry *e; /* nbuckets * TT_BUCKET entries, 64-byte aligned */
    size_t nbuckets;
    unsigned gen;
    void *map;          /* (tables of 2 MiB or more) e's anonymous mapping, else NULL */
    size_t maplen;
};

static inline uint64_t tt_ld_(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void tt_st_(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline struct tt_entry *tt_bucket_(const struct tt *t, uint64_t key)
{
    return t->e + (size_t)(((unsigned __int128)key * t->nbuckets) >> 64) * TT_BUCKET;
}

/* tt_key for a board of nw words (a constant where the caller knows it:
 * XXH3's path for that length alone). */
static inline __attribute__((always_inline)) uint64_t tt_key_nw_(const int nw,
                                                                 const sow_position *p)
{
    uint64_t buf[16]; /* roomy: keeps the inlined XXH3 paths in bounds for the compiler */
    /* All five words (unused ones are zero and overwritten or not hashed):
     * a fixed-size copy, no libc call. */
    for (int w = 0; w < SOW_BOARD_WORDS; w++)
        buf[w] = p->board.w[w];
    buf[nw] = (uint64_t)p->side | (uint64_t)p->state << 8;
    uint64_t k;
    /* Constant lengths let the compiler keep only XXH3's path for each. */
    switch (nw) {
    case 1: k = XXH3_64bits(buf, 16); break;
    case 2: k = XXH3_64bits(buf, 24); break;
    case 3: k = XXH3_64bits(buf, 32); break;
    case 4: k = XXH3_64bits(buf, 40); break;
    default: k = XXH3_64bits(buf, (size_t)(nw + 1) * 8); break;
    }
    return k ? k : 1;
}

static inline uint64_t tt_key_(const struct ruleset *rs, const sow_position *p)
{
    return tt_key_nw_(rs->nwords, p);
}

/* ---- engine entries (tt.h "engine entries") ---- */

#define E_SCORE 0
#define E_BOUND 16
#define E_PROVEN 18
#define E_MOVE 19
#define E_DEPTH 27
#define E_GEN 35

static inline uint64_t tte_pack_(const struct tte_info *in, unsigned gen)
{
    return (uint64_t)(in->score + 32768) << E_SCORE | (uint64_t)(in->bound & 3) << E_BOUND |
           (uint64_t)(in->proven ? 1 : 0) << E_PROVEN | (uint64_t)in->move << E_MOVE |
           (uint64_t)(in->depth & 255) << E_DEPTH | (uint64_t)(gen & 255) << E_GEN;
}

static inline void tte_unpack_(uint64_t d, struct tte_info *out)
{
    out->score = (int)(d >> E_SCORE & 0xFFFF) - 32768;
    out->bound = (int)(d >> E_BOUND & 3);
    out->proven = d >> E_PROVEN & 1;
    out->move = (sow_move)(d >> E_MOVE & 255);
    out->depth = (int)(d >> E_DEPTH & 255);
}

/* The data word of key's entry, or 0 (both kinds of entry: the lockless
 * check word of tt.h). */
static inline uint64_t tt_find_(const struct tt *t, uint64_t key)
{
    struct tt_entry *b = tt_bucket_(t, key);
    for (int i = 0; i < TT_BUCKET; i++) {
        uint64_t d = tt_ld_(&b[i].data);
        if ((tt_ld_(&b[i].check) ^ d) == key && d)
            return d;
    }
    return 0;
}

static inline bool tte_probe_(const struct tt *t, uint64_t key, struct tte_info *out)
{
    uint64_t d = tt_find_(t, key);
    if (d)
        tte_unpack_(d, out);
    return d != 0;
}

static inline void tte_prefetch_(const struct tt *t, uint64_t key)
{
    __builtin_prefetch(tt_bucket_(t, key));
}

static inline void tte_store_(struct tt *t, uint64_t key, int score, int bound, bool proven,
                              sow_move move, int depth)
{
    struct tt_entry *b = tt_bucket_(t, key);
    struct tte_info in = {.score = score, .bound = bound, .proven = proven, .move = move,
                          .depth = depth > 255 ? 255 : depth < 0 ? 0 : depth};
    int slot = -1;
    for (int i = 0; i < TT_BUCKET; i++) {
        uint64_t d = tt_ld_(&b[i].data);
        if (d && (tt_ld_(&b[i].check) ^ d) == key) {
            struct tte_info old;
            tte_unpack_(d, &old);
            unsigned og = (unsigned)(d >> E_GEN & 255);
            /* Keep a deeper current result (or a proven one) unless the new
             * one is exact; still learn the move. */
            if (bound != TTE_BOUND_EXACT && og == (t->gen & 255) &&
                ((old.proven && !proven) || old.depth > in.depth)) {
                if (move != SOW_MOVE_NONE && move != old.move && !old.proven) {
                    old.move = move;
                    d = tte_pack_(&old, og);
                    tt_st_(&b[i].data, d);
                    tt_st_(&b[i].check, key ^ d);
                }
                return;
            }
            if (move == SOW_MOVE_NONE)
                in.move = old.move;
            slot = i;
            break;
        }
    }
    if (slot < 0) {
        int vscore = 1 << 30, victim = 0;
        for (int i = 0; i < TT_BUCKET - 1; i++) {
            uint64_t d = tt_ld_(&b[i].data);
            if (!d) {
                vscore = -(1 << 20);
                victim = i;
                break;
            }
            int age = (int)((t->gen - (unsigned)(d >> E_GEN)) & 255);
            int sc = (int)(d >> E_DEPTH & 255) - 8 * age + ((d >> E_PROVEN & 1) ? 64 : 0);
            if (sc < vscore) {
                vscore = sc;
                victim = i;
            }
        }
        slot = in.depth + (proven ? 64 : 0) >= vscore ? victim : TT_BUCKET - 1;
    }
    uint64_t data = tte_pack_(&in, t->gen);
    /* An unchanged entry is not written again: a store takes the line
     * from the other threads' caches (Lazy SMP threads store the same
     * results often). */
    if (tt_ld_(&b[slot].data) == data && tt_ld_(&b[slot].check) == (key ^ data))
        return;
    tt_st_(&b[slot].data, data);
    tt_st_(&b[slot].check, key ^ data);
}

#endif
