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

#include "compress.h"
#include "sow/tables.h"

/* Header offsets: as file.c (version 1), plus the version-2 fields. */
enum {
    Z_MAGIC = 0, Z_VERSION = 8, Z_HSIZE = 12, Z_RULES = 16, Z_PITS = 40, Z_LEVEL = 44,
    Z_SCHEME = 48, Z_STATES = 52, Z_ENTRIES = 56, Z_ENCODING = 64, Z_COMPRESSION = 68,
    Z_CHECKSUM = 72, Z_PAYLOAD = 80, Z_BSHIFT = 88, Z_NBLOCKS = 96, Z_RAWSUM = 104,
    Z_HCHECK = 120,
};
_Static_assert(Z_HCHECK + 8 == TB_HEADER_SIZE, "version 2 keeps the 128-byte header");

static uint32_t get32(const uint8_t *b) { uint32_t v; memcpy(&v, b, 4); return v; }
static uint64_t get64(const uint8_t *b) { uint64_t v; memcpy(&v, b, 8); return v; }

enum sow_status tbz_parse(const uint8_t *map, size_t size, uint64_t entries, int level,
                          const char *path, struct tbz *z, struct sow_error *e)
{
#define ZBAD(...) return sow_fail(e, SOW_E_INPUT, __VA_ARGS__)
    if (get32(map + Z_COMPRESSION) != TBZ_ZSTD)
        ZBAD("%s: unknown compression %u", path, get32(map + Z_COMPRESSION));
    unsigned b = get32(map + Z_BSHIFT);
    uint64_t K = get64(map + Z_NBLOCKS);
    if (b < 8 || b > 24 || K != (entries + ((uint64_t)1 << b) - 1) >> b)
        ZBAD("%s: bad block layout (shift %u, %llu blocks for %llu values)", path, b,
             (unsigned long long)K, (unsigned long long)entries);
    uint64_t ilen = (K + 1) * TBZ_INDEX_ENTRY;
    if (size < TB_HEADER_SIZE + ilen)
        ZBAD("%s: truncated (index needs %llu bytes)", path, (unsigned long long)ilen);
    if (XXH3_64bits(map + TB_HEADER_SIZE, size - TB_HEADER_SIZE) != get64(map + Z_CHECKSUM))
        ZBAD("%s: payload damaged (checksum mismatch)", path);
    const uint8_t *ix = map + TB_HEADER_SIZE;
    uint64_t prev = TB_HEADER_SIZE + ilen;
    for (uint64_t k = 0; k <= K; k++) {
        uint64_t off = get64(ix + k * TBZ_INDEX_ENTRY);
        if (off < prev || off > size)
            ZBAD("%s: block index damaged (block %llu)", path, (unsigned long long)k);
        prev = off;
    }
    if (get64(ix + K * TBZ_INDEX_ENTRY) != size)
        ZBAD("%s: %s", path, "trailing bytes after the last block");
    z->base = map;
    z->size = size;
    z->entries = entries;
    z->nblocks = K;
    z->bshift = b;
    z->level = level;
    z->rawsum = get64(map + Z_RAWSUM);
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
    uint64_t a = get64(ix), end = get64(ix + TBZ_INDEX_ENTRY), sum = get64(ix + 8);
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
    for (uint64_t i = 0; i < want; i++)
        if (out[i] < -z->level || out[i] > z->level) {
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

/* ---- the per-thread cache of recent blocks ----------------------------------- */

#define TBZ_SLOTS 16 /* 16 blocks of 16 KiB: 256 KiB a thread */

struct tbz_slot {
    const uint8_t *base; /* which file (mapping) ... */
    uint64_t rawsum;     /* ... and which contents: a file mapped again at the
                          * same address has another checksum */
    uint64_t block;
    uint64_t stamp;      /* last use, for least-recently-used replacement */
    int8_t *data;
    size_t cap;
};

struct tbz_cache {
    ZSTD_DCtx *dc;
    uint64_t clock;
    struct tbz_slot slot[TBZ_SLOTS];
};

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(void *p)
{
    struct tbz_cache *c = p;
    if (!c)
        return;
    for (int i = 0; i < TBZ_SLOTS; i++)
        free(c->slot[i].data);
    ZSTD_freeDCtx(c->dc);
    free(c);
}

static void cache_key_init(void)
{
    pthread_key_create(&cache_key, cache_free);
}

static struct tbz_cache *thread_cache(void)
{
    pthread_once(&cache_once, cache_key_init);
    struct tbz_cache *c = pthread_getspecific(cache_key);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->dc = ZSTD_createDCtx();
    if (!c->dc || pthread_setspecific(cache_key, c) != 0) {
        cache_free(c);
        return NULL;
    }
    return c;
}

bool tbz_probe(const struct tbz *z, uint64_t idx, int *value)
{
    if (idx >= z->entries)
        return false;
    struct tbz_cache *c = thread_cache();
    if (!c)
        return false;
    uint64_t k = idx >> z->bshift;
    struct tbz_slot *lru = &c->slot[0];
    for (int i = 0; i < TBZ_SLOTS; i++) {
        struct tbz_slot *s = &c->slot[i];
        if (s->data && s->block == k && s->base == z->base && s->rawsum == z->rawsum) {
            s->stamp = ++c->clock;
            *value = s->data[idx & (((uint64_t)1 << z->bshift) - 1)];
            return true;
        }
        if (s->stamp < lru->stamp)
            lru = s;
    }
    size_t need = (size_t)1 << z->bshift;
    if (lru->cap < need) {
        int8_t *d = realloc(lru->data, need);
        if (!d)
            return false;
        lru->data = d;
        lru->cap = need;
    }
    lru->base = NULL;
    if (tbz_block_dctx(z, k, lru->data, c->dc, NULL) < 0)
        return false;
    lru->base = z->base;
    lru->rawsum = z->rawsum;
    lru->block = k;
    lru->stamp = ++c->clock;
    *value = lru->data[idx & (((uint64_t)1 << z->bshift) - 1)];
    return true;
}
