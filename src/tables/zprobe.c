/* Endgame tables: block-compressed level files, the probe side: check a
 * file, decompress a block, the per-thread block cache (compress.h draws the
 * format).  No OpenMP here (the probe side pulls no builder code). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "compress.h"
#include "tables_internal.h" /* the header layout */
#include "tables/tables.h"

enum sow_status tbz_parse(const uint8_t *map, size_t size, uint64_t entries, int level,
                          const char *path, struct tbz *z, struct sow_error *e)
{
    return tbz_parse_ex(map, size, entries, level, path, true, z, e);
}

enum sow_status tbz_parse_ex(const uint8_t *map, size_t size, uint64_t entries, int level,
                             const char *path, bool payload_sum, struct tbz *z,
                             struct sow_error *e)
{
#define ZBAD(...) return sow_fail(e, SOW_E_INPUT, __VA_ARGS__)
    if (ct_get32(map + TBH_COMPRESSION) != TBZ_ZSTD)
        ZBAD("%s: unknown compression %u", path, ct_get32(map + TBH_COMPRESSION));
    unsigned b = ct_get32(map + TBH_BSHIFT);
    uint64_t K = ct_get64(map + TBH_NBLOCKS);
    if (b < TBZ_BSHIFT_MIN || b > TBZ_BSHIFT_MAX || K != (entries + ((uint64_t)1 << b) - 1) >> b)
        ZBAD("%s: bad block layout (shift %u, %llu blocks for %llu values)", path, b,
             (unsigned long long)K, (unsigned long long)entries);
    uint64_t ilen = (K + 1) * TBZ_INDEX_ENTRY;
    if (size < TB_HEADER_SIZE + ilen)
        ZBAD("%s: truncated (index needs %llu bytes)", path, (unsigned long long)ilen);
    if (payload_sum &&
        XXH3_64bits(map + TB_HEADER_SIZE, size - TB_HEADER_SIZE) != ct_get64(map + TBH_CHECKSUM))
        ZBAD("%s: payload damaged (checksum mismatch)", path);
    const uint8_t *ix = map + TB_HEADER_SIZE;
    uint64_t prev = TB_HEADER_SIZE + ilen;
    for (uint64_t k = 0; k <= K; k++) {
        uint64_t off = ct_get64(ix + k * TBZ_INDEX_ENTRY);
        if (off < prev || off > size)
            ZBAD("%s: block index damaged (block %llu)", path, (unsigned long long)k);
        prev = off;
    }
    if (ct_get64(ix + K * TBZ_INDEX_ENTRY) != size)
        ZBAD("%s: %s", path, "trailing bytes after the last block");
    z->base = map;
    z->size = size;
    z->entries = entries;
    z->nblocks = K;
    z->bshift = b;
    z->level = level;
    z->rawsum = ct_get64(map + TBH_RAWSUM);
    z->cache = NULL;
    z->gbase = 0;
    return SOW_OK;
#undef ZBAD
}

int64_t tbz_block_dctx(const struct tbz *z, uint64_t k, int8_t *out, ZSTD_DCtx *dc,
                       struct sow_error *e)
{
    if (k >= z->nblocks) {
        sow_fail(e, SOW_E_INPUT, "block %llu out of range", (unsigned long long)k);
        return -1;
    }
    const uint8_t *ix = z->base + TB_HEADER_SIZE + k * TBZ_INDEX_ENTRY;
    uint64_t a = ct_get64(ix), end = ct_get64(ix + TBZ_INDEX_ENTRY), sum = ct_get64(ix + 8);
    uint64_t bs = (uint64_t)1 << z->bshift, first = k << z->bshift;
    uint64_t want = first + bs < z->entries ? bs : z->entries - first;
    size_t r = dc ? ZSTD_decompressDCtx(dc, out, (size_t)bs, z->base + a, (size_t)(end - a))
                  : ZSTD_decompress(out, (size_t)bs, z->base + a, (size_t)(end - a));
    if (ZSTD_isError(r) || r != want || XXH3_64bits(out, (size_t)want) != sum) {
        sow_fail(e, SOW_E_INPUT, "level %d block %llu damaged (%s)", z->level,
                 (unsigned long long)k,
                 ZSTD_isError(r) ? ZSTD_getErrorName(r) : r != want ? "wrong size" : "checksum");
        return -1;
    }
    /* min and max in one branch-free pass (vectorised), then one test */
    int8_t lo = 0, hi = 0;
    for (uint64_t i = 0; i < want; i++) {
        lo = out[i] < lo ? out[i] : lo;
        hi = out[i] > hi ? out[i] : hi;
    }
    if (lo < -z->level || hi > z->level) {
        sow_fail(e, SOW_E_INPUT, "level %d block %llu: value out of range", z->level,
                 (unsigned long long)k);
        return -1;
    }
    return (int64_t)want;
}

int64_t tbz_block(const struct tbz *z, uint64_t k, int8_t *out, struct sow_error *e)
{
    return tbz_block_dctx(z, k, out, NULL, e);
}

/* ---- the shared block cache (compress.h draws it) ---------------------------- */

#define TBZ_WAYS 8
#define TBZ_NDCTX 8 /* zstd contexts: misses of different sets decompress in parallel */

struct tbz_cset {
    pthread_mutex_t lock;
    uint64_t clock;              /* stamps of this set's ways (LRU) */
    uint64_t key[TBZ_WAYS];      /* the block's number g + 1; 0: empty */
    uint64_t stamp[TBZ_WAYS];
    uint64_t hits, misses;
};

struct tbz_dctx {
    pthread_mutex_t lock;
    ZSTD_DCtx *dc;
};

struct tbz_cache {
    uint64_t nsets;
    unsigned bmax;
    struct tbz_cset *sets;
    int8_t *data;                /* nsets * TBZ_WAYS blocks of 2^bmax */
    struct tbz_dctx dctx[TBZ_NDCTX];
    pthread_mutex_t dlock;       /* the first damage seen */
    bool damaged;
    struct sow_error damage;
};

struct tbz_cache *tbz_cache_new(uint64_t bytes, unsigned bmax)
{
    if (bmax < TBZ_BSHIFT_MIN || bmax > TBZ_BSHIFT_MAX)
        return NULL;
    uint64_t nsets = (bytes >> bmax) / TBZ_WAYS;
    if (nsets < 1)
        nsets = 1;
    struct tbz_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nsets = nsets;
    c->bmax = bmax;
    c->sets = calloc((size_t)nsets, sizeof *c->sets);
    /* untouched pages cost nothing: the blocks are faulted in as they fill */
    c->data = malloc((size_t)(nsets * TBZ_WAYS) << bmax);
    if (!c->sets || !c->data) {
        free(c->sets);
        free(c->data);
        free(c);
        return NULL;
    }
    for (uint64_t i = 0; i < nsets; i++)
        pthread_mutex_init(&c->sets[i].lock, NULL);
    pthread_mutex_init(&c->dlock, NULL);
    for (int i = 0; i < TBZ_NDCTX; i++)
        pthread_mutex_init(&c->dctx[i].lock, NULL); /* contexts made on first miss */
    return c;
}

void tbz_cache_free(struct tbz_cache *c)
{
    if (!c)
        return;
    for (uint64_t i = 0; i < c->nsets; i++)
        pthread_mutex_destroy(&c->sets[i].lock);
    for (int i = 0; i < TBZ_NDCTX; i++) {
        ZSTD_freeDCtx(c->dctx[i].dc);
        pthread_mutex_destroy(&c->dctx[i].lock);
    }
    pthread_mutex_destroy(&c->dlock);
    free(c->sets);
    free(c->data);
    free(c);
}

uint64_t tbz_cache_bytes(const struct tbz_cache *c)
{
    return (c->nsets * TBZ_WAYS) << c->bmax;
}

unsigned tbz_cache_bmax(const struct tbz_cache *c)
{
    return c->bmax;
}

void tbz_cache_stats(struct tbz_cache *c, struct tbz_cache_stats *st)
{
    st->hits = st->misses = 0;
    for (uint64_t i = 0; i < c->nsets; i++) {
        pthread_mutex_lock(&c->sets[i].lock);
        st->hits += c->sets[i].hits;
        st->misses += c->sets[i].misses;
        pthread_mutex_unlock(&c->sets[i].lock);
    }
}

bool tbz_cache_damage(struct tbz_cache *c, struct sow_error *e)
{
    pthread_mutex_lock(&c->dlock);
    bool d = c->damaged;
    if (d && e)
        *e = c->damage;
    pthread_mutex_unlock(&c->dlock);
    return d;
}

void tbz_cache_note_damage(struct tbz_cache *c, const struct sow_error *e)
{
    pthread_mutex_lock(&c->dlock);
    if (!c->damaged) {
        c->damaged = true;
        c->damage = *e;
    }
    pthread_mutex_unlock(&c->dlock);
}

/* A probe without a cache (a tbz from tbz_parse alone): its block into a
 * buffer of its own. */
static bool probe_uncached(const struct tbz *z, uint64_t idx, int *value)
{
    int8_t *buf = malloc((size_t)1 << z->bshift);
    if (!buf)
        return false;
    bool ok = tbz_block(z, idx >> z->bshift, buf, NULL) >= 0;
    if (ok)
        *value = buf[idx & (((uint64_t)1 << z->bshift) - 1)];
    free(buf);
    return ok;
}

bool tbz_probe(const struct tbz *z, uint64_t idx, int *value)
{
    if (idx >= z->entries)
        return false;
    struct tbz_cache *c = z->cache;
    if (!c || z->bshift > c->bmax) /* (a cache is made for its set's largest blocks) */
        return probe_uncached(z, idx, value);
    uint64_t k = idx >> z->bshift, off = idx & (((uint64_t)1 << z->bshift) - 1);
    uint64_t g = z->gbase + k, key = g + 1;
    uint64_t si = (g / TBZ_WAYS) % c->nsets;
    struct tbz_cset *s = &c->sets[si];
    int8_t *base = c->data + ((si * TBZ_WAYS) << c->bmax);
    pthread_mutex_lock(&s->lock);
    int lru = 0;
    for (int w = 0; w < TBZ_WAYS; w++) {
        if (s->key[w] == key) {
            s->stamp[w] = ++s->clock;
            s->hits++;
            *value = base[((uint64_t)w << c->bmax) + off];
            pthread_mutex_unlock(&s->lock);
            return true;
        }
        if (s->stamp[w] < s->stamp[lru])
            lru = w;
    }
    /* A miss: decompress the block into the least recently used way, still
     * under the set's lock (a second prober of the block waits for it rather
     * than decompressing it again). */
    int8_t *slot = base + ((uint64_t)lru << c->bmax);
    s->key[lru] = 0;
    s->stamp[lru] = 0;
    s->misses++;
    struct tbz_dctx *d = &c->dctx[si % TBZ_NDCTX];
    struct sow_error e;
    pthread_mutex_lock(&d->lock);
    if (!d->dc)
        d->dc = ZSTD_createDCtx();
    bool have = d->dc != NULL; /* else out of memory: no damage to note */
    int64_t n = have ? tbz_block_dctx(z, k, slot, d->dc, &e) : -1;
    pthread_mutex_unlock(&d->lock);
    if (n < 0) {
        pthread_mutex_unlock(&s->lock);
        if (have)
            tbz_cache_note_damage(c, &e);
        return false;
    }
    s->key[lru] = key;
    s->stamp[lru] = ++s->clock;
    *value = slot[off];
    pthread_mutex_unlock(&s->lock);
    return true;
}
