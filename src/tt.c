/* Transposition table: see include/tt.h for layout, replacement and races. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tt.h"
#include "tt_impl.h"

#define F_LOL 0
#define F_LOU 9
#define F_HIL 18
#define F_HIU 27
#define F_MOVE 36
#define F_WORK 44
#define F_GEN 50

uint64_t tt_pack(const struct tt_info *in, unsigned gen)
{
    return (uint64_t)(in->loL + TT_VALUE_BIAS) << F_LOL |
           (uint64_t)(in->loU + TT_VALUE_BIAS) << F_LOU |
           (uint64_t)(in->hiL + TT_VALUE_BIAS) << F_HIL |
           (uint64_t)(in->hiU + TT_VALUE_BIAS) << F_HIU | (uint64_t)in->move << F_MOVE |
           (uint64_t)(in->work & 63) << F_WORK | (uint64_t)(gen & 255) << F_GEN;
}

void tt_unpack(uint64_t d, struct tt_info *out)
{
    out->loL = (int16_t)((int)(d >> F_LOL & 511) - TT_VALUE_BIAS);
    out->loU = (int16_t)((int)(d >> F_LOU & 511) - TT_VALUE_BIAS);
    out->hiL = (int16_t)((int)(d >> F_HIL & 511) - TT_VALUE_BIAS);
    out->hiU = (int16_t)((int)(d >> F_HIU & 511) - TT_VALUE_BIAS);
    out->move = (sow_move)(d >> F_MOVE & 255);
    out->work = (int)(d >> F_WORK & 63);
}

struct tt *tt_new(size_t mb)
{
    struct tt *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    size_t bytes = mb << 20;
    t->nbuckets = bytes / 64 ? bytes / 64 : 1;
    /* Big tables on 2 MiB pages where the kernel allows: a probe is a
     * random access, and a TLB miss per probe costs as much as the miss.
     * They are anonymous mappings, 2 MiB aligned, advised before any page
     * is touched and zero already: a search starts without clearing (or
     * faulting in 4 KiB pages of) its table, as malloc's block would. */
    size_t sz = t->nbuckets * 64, huge = (size_t)2 << 20;
    if (sz >= huge) {
        size_t len = (sz + huge - 1) / huge * huge + huge;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            t->map = m;
            t->maplen = len;
            t->e = (void *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
            madvise(t->e, len - huge, MADV_HUGEPAGE);
        }
    } else {
        t->e = aligned_alloc(64, sz);
        if (t->e)
            tt_clear(t);
    }
    if (!t->e) {
        free(t);
        return NULL;
    }
    return t;
}

void tt_free(struct tt *t)
{
    if (!t)
        return;
    if (t->map)
        munmap(t->map, t->maplen);
    else
        free(t->e);
    free(t);
}

void tt_clear(struct tt *t)
{
    memset(t->e, 0, t->nbuckets * 64);
    t->gen = 0;
}

void tt_new_generation(struct tt *t)
{
    t->gen = (t->gen + 1) & 255;
}

size_t tt_entries(const struct tt *t)
{
    return t->nbuckets * TT_BUCKET;
}

uint64_t tt_key(const struct ruleset *rs, const sow_position *p)
{
    return tt_key_(rs, p);
}

bool tt_probe(const struct tt *t, uint64_t key, struct tt_info *out)
{
    uint64_t d = tt_find_(t, key);
    if (d)
        tt_unpack(d, out);
    return d != 0;
}

static inline int imax(int a, int b)
{
    return a > b ? a : b;
}

static inline int imin(int a, int b)
{
    return a < b ? a : b;
}

void tt_store(struct tt *t, uint64_t key, int loL, int loU, int hiL, int hiU, sow_move move,
              int work)
{
    struct tt_entry *b = tt_bucket_(t, key);
    struct tt_info in = {.loL = -SOW_MAX_SEEDS, .loU = SOW_MAX_SEEDS, .hiL = -SOW_MAX_SEEDS,
                         .hiU = SOW_MAX_SEEDS, .move = SOW_MOVE_NONE, .work = 0};
    int slot = -1, victim = 0, vscore = 1 << 30;
    for (int i = 0; i < TT_BUCKET; i++) {
        uint64_t d = tt_ld_(&b[i].data);
        if (!d) { /* empty: best victim */
            if (vscore > -1000) {
                vscore = -1000;
                victim = i;
            }
            continue;
        }
        if ((tt_ld_(&b[i].check) ^ d) == key) {
            tt_unpack(d, &in);
            slot = i;
            break;
        }
        int age = (int)((t->gen - (unsigned)(d >> F_GEN)) & 255);
        int score = (int)(d >> F_WORK & 63) - 2 * age;
        if (score < vscore) {
            vscore = score;
            victim = i;
        }
    }
    if (slot < 0)
        slot = victim;
    /* Intersect with what was known, then add lo <= hi. */
    int a = imax(in.loL, loL), bb = imin(in.loU, loU);
    int c = imax(in.hiL, hiL), d = imin(in.hiU, hiU);
    c = imax(c, a);  /* hi >= lo >= a */
    bb = imin(bb, d); /* lo <= hi <= d */
    in.loL = (int16_t)a;
    in.loU = (int16_t)bb;
    in.hiL = (int16_t)c;
    in.hiU = (int16_t)d;
    if (move != SOW_MOVE_NONE)
        in.move = move;
    in.work = imax(in.work, imin(work, 63));
    uint64_t data = tt_pack(&in, t->gen);
    tt_st_(&b[slot].data, data);
    tt_st_(&b[slot].check, key ^ data);
}

/* ---- engine entries (tt.h "engine entries"; the hot paths in tt_impl.h) ---- */

uint64_t tte_pack(const struct tte_info *in, unsigned gen)
{
    return tte_pack_(in, gen);
}

void tte_unpack(uint64_t d, struct tte_info *out)
{
    tte_unpack_(d, out);
}

bool tte_probe(const struct tt *t, uint64_t key, struct tte_info *out)
{
    return tte_probe_(t, key, out);
}

void tte_prefetch(const struct tt *t, uint64_t key)
{
    tte_prefetch_(t, key);
}

void tte_store(struct tt *t, uint64_t key, int score, int bound, bool proven, sow_move move,
               int depth)
{
    tte_store_(t, key, score, bound, proven, move, depth);
}

int tte_hashfull(const struct tt *t)
{
    size_t n = t->nbuckets * TT_BUCKET < 1000 ? t->nbuckets * TT_BUCKET : 1000;
    int c = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = tt_ld_(&t->e[i].data);
        if (d && (unsigned)(d >> E_GEN & 255) == (t->gen & 255))
            c++;
    }
    return n ? (int)(c * 1000 / n) : 0;
}
