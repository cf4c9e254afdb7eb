/* Endgame tables: block-compressed level files, the build side: write a
 * level compressed, decompress a whole level (both parallel over blocks). */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "fileio.h"
#include "compress.h"
#include "tables/tables.h"
#include "tables/tb_lean.h"
#include "tables_internal.h"

static int write_all(int fd, const void *buf, size_t len, off_t at)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len > (1u << 30) ? (1u << 30) : len, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        at += w;
        len -= (size_t)w;
    }
    return 0;
}

enum sow_status tbz_write(const char *dir, const struct ruleset *rs, int level,
                          const int8_t *values, uint64_t entries, int zlevel,
                          const struct tbz_write_opts *wo, struct sow_error *e)
{
    return tbz_write_b(dir, rs, level, values, entries, zlevel, TBZ_BSHIFT, wo, e);
}

/* The blocks of values compressed in batches (in parallel, T contexts cc)
 * and written in order from offset *at of fd; each block's raw checksum
 * and stored offset into the index; wo's stop looked at and its progress
 * told between batches.  -1 with e set on failure. */
static int put_blocks(int fd, const char *tmp, int level, const int8_t *values,
                      uint64_t entries, unsigned b, int zlevel, int T, ZSTD_CCtx **cc,
                      uint8_t *index, uint64_t *at, uint8_t *out, size_t *clen, uint64_t batch,
                      const struct tbz_write_opts *wo, struct sow_error *e)
{
    uint64_t bs = (uint64_t)1 << b, K = (entries + bs - 1) >> b;
    size_t cap = ZSTD_compressBound((size_t)bs);
    for (uint64_t k0 = 0; k0 < K; k0 += batch) {
        if (wo && wo->stop && *wo->stop) {
            sow_fail(e, SOW_E_INTERRUPTED, "compressing level %d: interrupted", level);
            return -1;
        }
        if (wo && wo->progress)
            wo->progress(wo->ctx, (double)k0 / (double)K);
        uint64_t k1 = k0 + batch < K ? k0 + batch : K;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
        for (uint64_t k = k0; k < k1; k++) {
            uint64_t a = k << b, len = a + bs < entries ? bs : entries - a;
            size_t z = ZSTD_compressCCtx(cc[omp_get_thread_num()], out + (k - k0) * cap, cap,
                                         values + a, (size_t)len, zlevel);
            clen[k - k0] = z;
            ct_put64(index + k * TBZ_INDEX_ENTRY + 8, XXH3_64bits(values + a, (size_t)len));
        }
        for (uint64_t k = k0; k < k1; k++) {
            if (ZSTD_isError(clen[k - k0])) {
                sow_fail(e, SOW_E_IO, "compressing level %d: %s", level,
                         ZSTD_getErrorName(clen[k - k0]));
                return -1;
            }
            ct_put64(index + k * TBZ_INDEX_ENTRY, *at);
            if (write_all(fd, out + (k - k0) * cap, clen[k - k0], (off_t)*at) < 0) {
                sow_fail(e, SOW_E_IO, "writing %s: %s", tmp, strerror(errno));
                return -1;
            }
            *at += clen[k - k0];
        }
    }
    ct_put64(index + K * TBZ_INDEX_ENTRY, *at);
    return 0;
}

/* The stored payload's checksum: the index, then the blocks as written
 * (read back from fd through buf, bufsize bytes).  -1 with e set. */
static int stored_sum(int fd, const char *tmp, int level, const uint8_t *index, size_t ilen,
                      uint64_t at, uint8_t *buf, size_t bufsize, uint64_t *sum,
                      struct sow_error *e)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st) {
        sow_fail(e, SOW_E_NOMEM, "compressing level %d: out of memory", level);
        return -1;
    }
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, index, ilen);
    int rc = 0;
    if (write_all(fd, index, ilen, TB_HEADER_SIZE) < 0) {
        sow_fail(e, SOW_E_IO, "writing %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    for (uint64_t off = TB_HEADER_SIZE + ilen; rc == 0 && off < at;) {
        size_t want = at - off < bufsize ? (size_t)(at - off) : bufsize;
        ssize_t r = pread(fd, buf, want, (off_t)off);
        if (r <= 0) {
            sow_fail(e, SOW_E_IO, "reading back %s: %s", tmp,
                     r < 0 ? strerror(errno) : "short read");
            rc = -1;
            break;
        }
        XXH3_64bits_update(st, buf, (size_t)r);
        off += (uint64_t)r;
    }
    *sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return rc;
}

enum sow_status tbz_write_b(const char *dir, const struct ruleset *rs, int level,
                            const int8_t *values, uint64_t entries, int zlevel, unsigned b,
                            const struct tbz_write_opts *wo, struct sow_error *e)
{
    int threads = wo ? wo->threads : 0;
    if (b < TBZ_BSHIFT_MIN || b > TBZ_BSHIFT_MAX)
        return sow_fail(e, SOW_E_INPUT, "block shift %u: expected %d..%d", b, TBZ_BSHIFT_MIN,
                        TBZ_BSHIFT_MAX);
    uint64_t bs = (uint64_t)1 << b, K = (entries + bs - 1) >> b;
    char path[4200], tmp[4300];
    tb_file_name(dir, rs->name, rs->pits, level, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    size_t ilen = (size_t)(K + 1) * TBZ_INDEX_ENTRY;
    uint8_t *index = calloc(1, ilen);
    int T = threads > 0 ? threads : omp_get_max_threads();
    /* Blocks go out in batches compressed in parallel, written in order. */
    uint64_t batch = 32 * (uint64_t)T;
    size_t cap = ZSTD_compressBound((size_t)bs);
    uint8_t *out = malloc((size_t)batch * cap);
    size_t *clen = malloc((size_t)batch * sizeof *clen);
    ZSTD_CCtx **cc = calloc((size_t)T, sizeof *cc);
    enum sow_status rc = SOW_E_IO;
    bool ok = index && out && clen && cc;
    for (int t = 0; ok && t < T; t++)
        ok = (cc[t] = ZSTD_createCCtx()) != NULL;
    if (!ok) {
        rc = sow_fail(e, SOW_E_NOMEM, "compressing level %d: out of memory", level);
        goto done;
    }
    /* fileio.h rule 2: the level's temporary name is the builder's (a
     * leftover is removed, never followed), the target checked */
    struct fio_out o;
    if ((rc = fio_out_begin(&o, path, tmp, e)) != SOW_OK)
        goto done;
    uint64_t at = TB_HEADER_SIZE + ilen, sum;
    if (put_blocks(o.fd, tmp, level, values, entries, b, zlevel, T, cc, index, &at, out, clen,
                   batch, wo, e) < 0 ||
        stored_sum(o.fd, tmp, level, index, ilen, at, out, (size_t)(batch * cap), &sum, e) < 0) {
        rc = e ? e->status : SOW_E_IO;
        fio_out_abort(&o);
        goto done;
    }
    uint8_t h[TB_HEADER_SIZE];
    tb_header_encode(h, rs, level, TBZ_VERSION, entries, sum);
    ct_put32(h + TBH_COMPRESSION, TBZ_ZSTD);
    ct_put32(h + TBH_BSHIFT, b);
    ct_put64(h + TBH_NBLOCKS, K);
    ct_put64(h + TBH_RAWSUM, XXH3_64bits(values, (size_t)entries));
    tb_header_seal(h);
    if (write_all(o.fd, h, sizeof h, 0) < 0) {
        rc = sow_fail(e, SOW_E_IO, "writing %s: %s", tmp, strerror(errno));
        fio_out_abort(&o);
        goto done;
    }
    rc = fio_out_commit(&o, e); /* fsync, rename, fsync of the directory */
done:
    if (cc)
        for (int t = 0; t < T; t++)
            ZSTD_freeCCtx(cc[t]);
    free(cc);
    free(index);
    free(out);
    free(clen);
    return rc;
}

enum sow_status tbz_all(const struct tbz *z, int8_t *out, int threads, struct sow_error *e)
{
    int T = threads > 0 ? threads : omp_get_max_threads();
    uint64_t bs = (uint64_t)1 << z->bshift;
    int bad = 0;
    char why[SOW_ERROR_MSG] = "";
#pragma omp parallel num_threads(T)
    {
        ZSTD_DCtx *dc = ZSTD_createDCtx();
        int8_t *buf = malloc((size_t)bs);
        struct sow_error be;
#pragma omp for schedule(dynamic, 16)
        for (uint64_t k = 0; k < z->nblocks; k++) {
            if (__atomic_load_n(&bad, __ATOMIC_RELAXED))
                continue;
            int64_t n = buf ? tbz_block_dctx(z, k, buf, dc, &be) : -1;
            if (n < 0) {
#pragma omp critical(tbz_all)
                if (!bad) {
                    bad = 1;
                    snprintf(why, sizeof why, "%s", buf ? be.msg : "out of memory");
                }
                continue;
            }
            memcpy(out + (k << z->bshift), buf, (size_t)n);
        }
        free(buf);
        ZSTD_freeDCtx(dc);
    }
    if (bad)
        return sow_fail(e, SOW_E_INPUT, "%s", why);
    if (XXH3_64bits(out, (size_t)z->entries) != z->rawsum)
        return sow_fail(e, SOW_E_INPUT, "level %d: values damaged (checksum mismatch)", z->level);
    return SOW_OK;
}

enum sow_status tb_compress_level(const struct ruleset *rs, const char *dir, int level,
                                  const struct tbz_write_opts *wo, uint64_t *raw,
                                  uint64_t *stored, bool *already, struct sow_error *e)
{
    char path[4200];
    tb_file_name(dir, rs->name, rs->pits, level, path, sizeof path);
    struct tb_header h;
    const int8_t *v;
    void *map;
    size_t maplen;
    enum sow_status st = tb_file_load(path, rs, level, &h, &v, &map, &maplen, e);
    if (st != SOW_OK)
        return st;
    *raw = h.entries + TB_HEADER_SIZE;
    if (already)
        *already = h.version == TBZ_VERSION;
    if (h.version == TBZ_VERSION) { /* already compressed: decompressed copy, nothing to do */
        tb_file_unmap(map, maplen);
        *stored = h.stored;
        return SOW_OK;
    }
    st = tbz_write(dir, rs, level, v, h.entries, TBZ_LEVEL, wo, e);
    tb_file_unmap(map, maplen);
    if (st != SOW_OK)
        return st;
    /* The new file, checked as any other (and its size). */
    st = tb_file_load(path, rs, level, &h, NULL, NULL, NULL, e);
    *stored = h.stored;
    return st;
}

enum sow_status tb_set_inflate_level(struct tb_set *s, int n, int threads, struct sow_error *e)
{
    struct tb_level *lv = &s->lv[n];
    if (lv->v || !lv->z)
        return SOW_OK;
    int8_t *v = malloc(lv->entries ? (size_t)lv->entries : 1);
    if (!v)
        return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory to decompress it", n);
    enum sow_status st = tbz_all(lv->z, v, threads, e);
    if (st != SOW_OK) {
        if (st == SOW_E_INPUT && lv->z->cache) /* damaged: as a probe would have found */
            tbz_cache_note_damage(lv->z->cache, e);
        free(v);
        return st;
    }
    /* the set now owns the values (its own file unmapped, its tbz freed; a
     * borrowed level's stay its owner's) */
    tb_set_own_level(s, n, v, NULL, lv->entries);
    return SOW_OK;
}

enum sow_status tb_open_values(const struct ruleset *rs, const char *dir, struct tb_set **out,
                               struct sow_error *e)
{
    *out = NULL;
    struct tb_set *s = tb_set_new(rs, dir); /* not for probing: levels load decompressed */
    if (!s)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    for (int n = 0; n <= TB_MAX_LEVEL; n++) {
        char path[4200];
        tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
        if (access(path, F_OK) != 0)
            continue;
        enum sow_status st = tb_set_load_level(s, n, e);
        if (st == SOW_OK)
            st = tb_set_load_bounds(s, n, e);
        if (st != SOW_OK) {
            tb_close(s);
            return st;
        }
    }
    *out = s;
    return SOW_OK;
}
