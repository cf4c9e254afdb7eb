/* Endgame tables, probe side: level files (write, load, check) and loaded
 * sets (probe).  Nothing here builds (sow/tables_probe.h).  The format is the
 * contract: docs/tables.md "File format". */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "compress.h"
#include "fileio.h"
#include "util.h"
#include "sow/tables_probe.h"
#include "tables_internal.h"

static const char MAGIC[8] = {'S', 'O', 'W', 'T', 'B', 'L', '\r', '\n'};
static const char BMAGIC[8] = {'S', 'O', 'W', 'T', 'B', 'B', '\r', '\n'}; /* bounds files */

const char *tb_default_dir(void)
{
    const char *e = getenv("SOW_TABLES");
    return e && *e ? e : "tables";
}

void tb_file_name(const char *dir, const char *rules, int pits, int level, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s-2x%d-%03d.sowtb", dir, rules, pits, level);
}

void tb_bounds_name(const char *dir, const char *rules, int pits, int level, char *buf,
                    size_t len)
{
    snprintf(buf, len, "%s/%s-2x%d-%03d.sowtbb", dir, rules, pits, level);
}

/* A sealed header h, then len bytes of payload, into path in dir.  The
 * builder holds the directory lock (fileio.h rule 3), so the fixed
 * temporary name path.tmp is ours: a leftover there is removed, never
 * opened. */
static enum sow_status write_file(const char *dir, const char *path, const uint8_t *h,
                                  const void *payload, size_t len, struct sow_error *e)
{
    enum sow_status st = fio_mkdir_p(dir, e);
    if (st != SOW_OK)
        return st;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    struct fio_out o;
    if ((st = fio_out_begin(&o, path, tmp, e)) || (st = fio_write_all(&o, h, TB_HEADER_SIZE, e)) ||
        (st = fio_write_all(&o, payload, len, e)) || (st = fio_out_commit(&o, e))) {
        fio_out_abort(&o);
        return st;
    }
    return SOW_OK;
}

/* The level file of values whose XXH3-64 is sum. */
static enum sow_status values_write(const char *dir, const struct ruleset *rs, int level,
                                    const int8_t *values, uint64_t entries, uint64_t sum,
                                    struct sow_error *e)
{
    char path[4096];
    tb_file_name(dir, rs->name, rs->pits, level, path, sizeof path);
    uint8_t h[TB_HEADER_SIZE];
    tb_header_encode(h, rs, level, TB_FORMAT_VERSION, entries, sum);
    tb_header_seal(h);
    return write_file(dir, path, h, values, (size_t)entries, e);
}

enum sow_status tb_file_write(const char *dir, const struct ruleset *rs, int level,
                              const int8_t *values, uint64_t entries, struct sow_error *e)
{
    return values_write(dir, rs, level, values, entries, XXH3_64bits(values, (size_t)entries), e);
}

enum sow_status tb_bounds_write(const char *dir, const struct ruleset *rs, int level,
                                const int8_t *lohi, uint64_t entries, uint64_t values_sum,
                                struct sow_error *e)
{
    char path[4096];
    tb_bounds_name(dir, rs->name, rs->pits, level, path, sizeof path);
    uint8_t h[TB_HEADER_SIZE];
    tb_header_encode(h, rs, level, TB_BOUNDS_VERSION, entries,
                     XXH3_64bits(lohi, (size_t)(2 * entries)));
    memcpy(h + TBH_MAGIC, BMAGIC, 8);
    ct_put32(h + TBH_ENCODING, TB_BOUNDS_INT8_PAIRS);
    ct_put64(h + TBH_VALUESUM, values_sum);
    tb_header_seal(h);
    return write_file(dir, path, h, lohi, (size_t)(2 * entries), e);
}

enum sow_status tb_level_output(const struct tb_set *s, int n, const int8_t *v,
                                const int8_t *lohi, uint64_t entries, struct sow_error *e)
{
    const struct tb_level *lv = &s->lv[n];
    uint64_t sum = XXH3_64bits(v, (size_t)entries);
    enum sow_status st = SOW_OK;
    if (!(lv->v || lv->z)) /* the sum hashed once, for both files */
        st = values_write(s->dir, &s->rs, n, v, entries, sum, e);
    else if (sum != lv->checksum) {
        char path[4096];
        tb_file_name(s->dir, s->rs.name, s->rs.pits, n, path, sizeof path);
        st = sow_fail(e, SOW_E_INPUT,
                      "%s: its values differ from the level solved again for its bounds "
                      "(delete it to rebuild)", path);
    }
    if (st == SOW_OK && lohi)
        st = tb_bounds_write(s->dir, &s->rs, n, lohi, entries, sum, e);
    return st;
}

bool tb_level_wanted(const struct ruleset *rs, const char *dir, int n, bool bounds)
{
    char path[4200];
    tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
    if (!fio_exists(path))
        return true;
    tb_bounds_name(dir, rs->name, rs->pits, n, path, sizeof path);
    return bounds && !fio_exists(path);
}

void tb_header_encode(uint8_t *h, const struct ruleset *rs, int level, uint32_t version,
                      uint64_t entries, uint64_t payload_sum)
{
    memset(h, 0, TB_HEADER_SIZE);
    memcpy(h + TBH_MAGIC, MAGIC, 8);
    ct_put32(h + TBH_VERSION, version);
    ct_put32(h + TBH_HSIZE, TB_HEADER_SIZE);
    snprintf((char *)h + TBH_RULES, 24, "%s", rs->name);
    ct_put32(h + TBH_PITS, (uint32_t)rs->pits);
    ct_put32(h + TBH_LEVEL, (uint32_t)level);
    ct_put32(h + TBH_SCHEME, TB_INDEX_SCHEME);
    ct_put32(h + TBH_STATES, (uint32_t)rs->index_states);
    ct_put64(h + TBH_ENTRIES, entries);
    ct_put32(h + TBH_ENCODING, TB_VALUE_INT8);
    ct_put64(h + TBH_CHECKSUM, payload_sum);
    ct_put64(h + TBH_PAYLOAD, TB_HEADER_SIZE);
}

void tb_header_seal(uint8_t *h)
{
    ct_seal(h, TBH_HCHECK);
}

void tb_file_unmap(void *map, size_t maplen)
{
    if (map)
        munmap(map, maplen);
}

/* ---- compressed files hook (compress.h): file_load also reads
 * version 2; with zout it keeps the file mapped and compressed in *zout,
 * else a caller asking for values gets them decompressed (an anonymous
 * mapping, released by tb_file_unmap like a file's). ---- */
static enum sow_status file_load(const char *path, const struct ruleset *rs, int level,
                                 struct tb_header *out, const int8_t **values, void **mapout,
                                 size_t *maplen, struct tbz *zout, struct sow_error *e);

enum sow_status tb_file_load(const char *path, const struct ruleset *rs, int level,
                             struct tb_header *out, const int8_t **values, void **mapout,
                             size_t *maplen, struct sow_error *e)
{
    return file_load(path, rs, level, out, values, mapout, maplen, NULL, e);
}

/* The header of the level file `path` mapped at h (size bytes, at least
 * the header's): decoded into *hd and checked (magic, seal, version, sizes,
 * a known table, the one expected if rs is given, entries and states as the
 * index counts them); with values_sum, of a bounds file instead (its magic,
 * version and encoding; the values' checksum into *values_sum).
 * SOW_E_INPUT (bad content) or SOW_E_NOMEM. */
static enum sow_status header_decode(const uint8_t *h, size_t size, const char *path,
                                     const struct ruleset *rs, int level,
                                     uint64_t *values_sum, struct tb_header *hd,
                                     struct sow_error *e)
{
    bool bounds = values_sum != NULL; /* a bounds file: its values' checksum there */
#define BAD(...) return sow_fail(e, SOW_E_INPUT, __VA_ARGS__)
    if (memcmp(h + TBH_MAGIC, bounds ? BMAGIC : MAGIC, 8) != 0)
        BAD("%s: not a sow %s file (bad magic)", path, bounds ? "bounds" : "table");
    if (!ct_sealed(h, TBH_HCHECK))
        BAD("%s: header damaged (header checksum mismatch)", path);
    memset(hd, 0, sizeof *hd);
    hd->version = ct_get32(h + TBH_VERSION);
    if (bounds && hd->version != TB_BOUNDS_VERSION)
        BAD("%s: bounds format version %u, this sow reads version %d", path, hd->version,
            TB_BOUNDS_VERSION);
    if (!bounds && hd->version != TB_FORMAT_VERSION && hd->version != TBZ_VERSION)
        BAD("%s: format version %u, this sow reads versions %d and %d", path, hd->version,
            TB_FORMAT_VERSION, TBZ_VERSION);
    if (ct_get32(h + TBH_HSIZE) != TB_HEADER_SIZE || ct_get64(h + TBH_PAYLOAD) != TB_HEADER_SIZE)
        BAD("%s: unexpected header size", path);
    memcpy(hd->rules, h + TBH_RULES, 24);
    hd->rules[23] = 0;
    hd->pits = ct_get32(h + TBH_PITS);
    hd->level = ct_get32(h + TBH_LEVEL);
    hd->index_scheme = ct_get32(h + TBH_SCHEME);
    hd->states = ct_get32(h + TBH_STATES);
    hd->entries = ct_get64(h + TBH_ENTRIES);
    hd->value_encoding = ct_get32(h + TBH_ENCODING);
    hd->checksum = ct_get64(h + TBH_CHECKSUM);
    if (hd->index_scheme != TB_INDEX_SCHEME)
        BAD("%s: unknown index scheme %u", path, hd->index_scheme);
    if (hd->value_encoding != (bounds ? TB_BOUNDS_INT8_PAIRS : TB_VALUE_INT8))
        BAD("%s: unknown value encoding %u", path, hd->value_encoding);
    if (bounds)
        *values_sum = ct_get64(h + TBH_VALUESUM);
    struct ruleset frs;
    if (hd->pits < 1 || hd->pits > SOW_MAX_PITS || hd->level > TB_MAX_LEVEL ||
        rules_init(&frs, hd->rules, (int)hd->pits, 0, NULL) != SOW_OK ||
        strcmp(frs.name, hd->rules) != 0)
        BAD("%s: header names an unknown table (rules '%s', 2x%u, level %u)", path, hd->rules,
            hd->pits, hd->level);
    if (rs && (strcmp(rs->name, hd->rules) != 0 || (int)hd->pits != rs->pits ||
               (int)hd->level != level))
        BAD("%s: foreign table: holds %s 2x%u level %u, expected %s 2x%d level %d", path,
            hd->rules, hd->pits, hd->level, rs->name, rs->pits, level);
    struct tb_index *ix = malloc(sizeof *ix);
    if (!ix)
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    tb_index_init(ix, &frs);
    uint64_t want = tb_level_entries(ix, (int)hd->level);
    uint32_t wstates = (uint32_t)ix->states;
    free(ix);
    if (hd->states != wstates || hd->entries != want)
        BAD("%s: header says %llu entries x %u states, %s 2x%u level %u has %llu x %u", path,
            (unsigned long long)hd->entries, hd->states, hd->rules, hd->pits, hd->level,
            (unsigned long long)want, wstates);
    hd->stored = size;
    return SOW_OK;
#undef BAD
}

/* A compressed level (version 2) mapped at map: its index parsed (each
 * block's own checksum and range are checked when it is decompressed);
 * handed over as such (zout), or decompressed whole into *values, or only
 * checked.  The mapping is the callee's from here (kept or unmapped). */
static enum sow_status zload(void *map, size_t size, const char *path, struct tb_header *hd,
                             const int8_t **values, void **mapout, size_t *maplen,
                             struct tbz *zout, struct sow_error *e)
{
    struct tbz z;
    enum sow_status zs = tbz_parse(map, size, hd->entries, (int)hd->level, path, &z, e);
    if (zs != SOW_OK) {
        munmap(map, size);
        return zs;
    }
    hd->checksum = z.rawsum; /* the values' checksum, as version 1's */
    if (zout) {
        *zout = z;
        *mapout = map;
        *maplen = size;
        return SOW_OK;
    }
    if (!values) {
        munmap(map, size);
        return SOW_OK;
    }
    /* whole blocks: zstd may write up to the capacity it is given (its
     * wild copies run past a block's end), and a block is decompressed in
     * place here, so the last one must not run into a neighbouring mapping */
    size_t len = z.nblocks ? (size_t)z.nblocks << z.bshift : 1;
    void *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        munmap(map, size);
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    }
    for (uint64_t k = 0; k < z.nblocks; k++)
        if (tbz_block(&z, k, (int8_t *)raw + (k << z.bshift), e) < 0) {
            munmap(raw, len);
            munmap(map, size);
            return SOW_E_INPUT;
        }
    munmap(map, size);
    if (XXH3_64bits(raw, (size_t)hd->entries) != z.rawsum) {
        munmap(raw, len);
        return sow_fail(e, SOW_E_INPUT, "%s: values damaged (checksum mismatch)", path);
    }
    *values = raw;
    *mapout = raw;
    *maplen = len;
    return SOW_OK;
}

/* A raw level's payload: its size, its checksum, and every value of level
 * n within [-n, n] (a file that passes its checksums but breaks this was
 * written wrongly, and the solver must not trust it). */
static enum sow_status raw_check(const uint8_t *h, size_t size, const char *path,
                                 const struct tb_header *hd, struct sow_error *e)
{
    if (size != TB_HEADER_SIZE + hd->entries)
        return sow_fail(e, SOW_E_INPUT, "%s: %s (%zu bytes, expected %llu)", path,
                        size < TB_HEADER_SIZE + hd->entries ? "truncated" : "trailing bytes",
                        size, (unsigned long long)(TB_HEADER_SIZE + hd->entries));
    if (XXH3_64bits(h + TB_HEADER_SIZE, (size_t)hd->entries) != hd->checksum)
        return sow_fail(e, SOW_E_INPUT, "%s: payload damaged (checksum mismatch)", path);
    const int8_t *val = (const int8_t *)(h + TB_HEADER_SIZE);
    int lo = 0, hi = 0;
    for (uint64_t i = 0; i < hd->entries; i++) {
        lo = val[i] < lo ? val[i] : lo;
        hi = val[i] > hi ? val[i] : hi;
    }
    if (lo < -(int)hd->level || hi > (int)hd->level)
        return sow_fail(e, SOW_E_INPUT, "%s: values out of range (%d..%d, level %u allows -%u..%u)",
                        path, lo, hi, hd->level, hd->level, hd->level);
    return SOW_OK;
}

/* The level file `path` opened and mapped read-only (*map, *size, at least
 * a header's bytes; *fd open).  Not a plain open: a FIFO named like a level
 * must not hang the reader; missing, unreadable or not a regular file is
 * bad input (fileio.h). */
static enum sow_status map_level_file(const char *path, int *fd, void **map, size_t *size,
                                      struct sow_error *e)
{
    struct stat sb;
    enum sow_status st = fio_open_input(path, fd, e);
    if (st != SOW_OK)
        return st;
    if (fstat(*fd, &sb) < 0)
        st = sow_fail(e, SOW_E_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if ((*size = (size_t)sb.st_size) < TB_HEADER_SIZE)
        st = sow_fail(e, SOW_E_INPUT,
                      "%s: truncated or not a table file (%zu bytes, header needs %d)", path,
                      *size, TB_HEADER_SIZE);
    else if ((*map = mmap(NULL, *size, PROT_READ, MAP_SHARED, *fd, 0)) == MAP_FAILED)
        st = sow_fail(e, SOW_E_IO, "%s: cannot map: %s", path, strerror(errno));
    if (st != SOW_OK)
        close(*fd);
    return st;
}

static enum sow_status file_load(const char *path, const struct ruleset *rs, int level,
                                 struct tb_header *out, const int8_t **values, void **mapout,
                                 size_t *maplen, struct tbz *zout, struct sow_error *e)
{
    int fd;
    void *map;
    size_t size;
    enum sow_status st = map_level_file(path, &fd, &map, &size, e);
    if (st != SOW_OK)
        return st;
    close(fd); /* the mapping stays */
    /* (sow_fail keeps the messages one printable line: they may quote the
     * file's rule-set name.) */
    struct tb_header hd;
    st = header_decode(map, size, path, rs, level, NULL, &hd, e);
    if (st == SOW_OK && hd.version == TBZ_VERSION) {
        st = zload(map, size, path, &hd, values, mapout, maplen, zout, e);
        if (st == SOW_OK)
            *out = hd;
        return st;
    }
    if (st == SOW_OK)
        st = raw_check(map, size, path, &hd, e);
    if (st != SOW_OK) {
        munmap(map, size);
        return st;
    }
    *out = hd;
    if (values) {
        *values = (const int8_t *)((const uint8_t *)map + TB_HEADER_SIZE);
        *mapout = map;
        *maplen = size;
    } else {
        munmap(map, size);
    }
    return SOW_OK;
}

enum sow_status tb_bounds_load(const char *path, const struct ruleset *rs, int level,
                               struct tb_header *out, uint64_t *values_sum, const int8_t **lohi,
                               void **mapout, size_t *maplen, struct sow_error *e)
{
    int fd;
    void *map;
    size_t size;
    enum sow_status st = map_level_file(path, &fd, &map, &size, e);
    if (st != SOW_OK)
        return st;
    close(fd);
    struct tb_header hd = {0};
    uint64_t vsum = 0;
    st = header_decode(map, size, path, rs, level, &vsum, &hd, e);
    uint64_t want = TB_HEADER_SIZE + 2 * hd.entries;
    const int8_t *b = (const int8_t *)((const uint8_t *)map + TB_HEADER_SIZE);
    if (st == SOW_OK && size != want)
        st = sow_fail(e, SOW_E_INPUT, "%s: %s (%zu bytes, expected %llu)", path,
                      size < want ? "truncated" : "trailing bytes", size,
                      (unsigned long long)want);
    if (st == SOW_OK && XXH3_64bits(b, (size_t)(2 * hd.entries)) != hd.checksum)
        st = sow_fail(e, SOW_E_INPUT, "%s: payload damaged (checksum mismatch)", path);
    if (st == SOW_OK) {
        /* forced bounds of level n: -n <= lo <= hi <= n (a file that passes its
         * checksums but breaks this was written wrongly) */
        int n = (int)hd.level;
        uint64_t bad = 0;
        for (uint64_t i = 0; i < hd.entries; i++)
            bad += b[2 * i] < -n || b[2 * i] > b[2 * i + 1] || b[2 * i + 1] > n;
        if (bad)
            st = sow_fail(e, SOW_E_INPUT,
                          "%s: bounds out of order or range in %llu entries (level %d allows "
                          "-%d <= lo <= hi <= %d)",
                          path, (unsigned long long)bad, n, n, n);
    }
    if (st != SOW_OK) {
        munmap(map, size);
        return st;
    }
    hd.stored = size;
    *out = hd;
    *values_sum = vsum;
    if (lohi) {
        *lohi = b;
        *mapout = map;
        *maplen = size;
    } else {
        munmap(map, size);
    }
    return SOW_OK;
}

enum sow_status tb_set_load_bounds(struct tb_set *s, int n, struct sow_error *e)
{
    struct tb_level *lv = &s->lv[n];
    if (lv->bd || !(lv->v || lv->z))
        return SOW_OK;
    char path[4096];
    tb_bounds_name(s->dir, s->rs.name, s->rs.pits, n, path, sizeof path);
    if (!fio_exists(path))
        return SOW_OK;
    struct tb_header h;
    const int8_t *b;
    uint64_t vsum;
    enum sow_status st =
        tb_bounds_load(path, &s->rs, n, &h, &vsum, &b, &lv->bmap, &lv->bmaplen, e);
    if (st != SOW_OK)
        return st;
    if (vsum != lv->checksum) {
        tb_file_unmap(lv->bmap, lv->bmaplen);
        lv->bmap = NULL;
        return sow_fail(e, SOW_E_INPUT,
                        "%s: the bounds of other values (values checksum %016llx, the level "
                        "file's is %016llx): rebuild them with sow tables build --bounds",
                        path, (unsigned long long)vsum,
                        (unsigned long long)lv->checksum);
    }
    lv->bd = b;
    return SOW_OK;
}

/* The XXH3-64 of bytes [TB_HEADER_SIZE, size) of fd, streamed through a
 * 1 MiB buffer (a reader that holds a slice checks the whole payload without
 * holding it), against the header's sum. */
static enum sow_status stream_sum(int fd, size_t size, uint64_t want, const char *path,
                                  struct sow_error *e)
{
    size_t cap = (size_t)1 << 20;
    uint8_t *buf = malloc(cap);
    XXH3_state_t *xs = XXH3_createState();
    enum sow_status st = SOW_OK;
    if (!buf || !xs)
        st = sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    if (st == SOW_OK)
        XXH3_64bits_reset(xs);
    for (size_t off = TB_HEADER_SIZE; st == SOW_OK && off < size;) {
        size_t want_n = size - off < cap ? size - off : cap;
        ssize_t r = pread(fd, buf, want_n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            st = sow_fail(e, SOW_E_IO, "%s: cannot read: %s", path,
                          r < 0 ? strerror(errno) : "short read");
        else {
            XXH3_64bits_update(xs, buf, (size_t)r);
            off += (size_t)r;
        }
    }
    if (st == SOW_OK && XXH3_64bits_digest(xs) != want)
        st = sow_fail(e, SOW_E_INPUT, "%s: payload damaged (checksum mismatch)", path);
    if (xs)
        XXH3_freeState(xs);
    free(buf);
    return st;
}

/* Entries [a, b) of a compressed level mapped at map: the blocks that hold
 * them decompressed (each block's checksum and values checked), the slice
 * copied out. */
static enum sow_status zslice(const uint8_t *map, size_t size, const struct tb_header *hd,
                              const char *path, uint64_t a, uint64_t b, int8_t *out,
                              struct sow_error *e)
{
    struct tbz z;
    enum sow_status st = tbz_parse_ex(map, size, hd->entries, (int)hd->level, path, false, &z, e);
    if (st != SOW_OK || a == b)
        return st;
    uint64_t bs = (uint64_t)1 << z.bshift;
    int8_t *blk = malloc((size_t)bs);
    if (!blk)
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    for (uint64_t k = a >> z.bshift; k <= (b - 1) >> z.bshift; k++) {
        if (tbz_block(&z, k, blk, e) < 0) {
            free(blk);
            return SOW_E_INPUT;
        }
        uint64_t first = k << z.bshift, lo = first > a ? first : a,
                 hi = first + bs < b ? first + bs : b;
        memcpy(out + (lo - a), blk + (lo - first), (size_t)(hi - lo));
    }
    free(blk);
    return SOW_OK;
}

enum sow_status tb_file_read_slice(const char *path, const struct ruleset *rs, int level,
                                   uint64_t a, uint64_t b, int8_t *out, bool whole_sum,
                                   struct sow_error *e)
{
    /* Mapped, not read: only the pages of the header, the index and the
     * slice are touched (resident), the rest stays on disk. */
    int fd;
    void *map;
    size_t size;
    enum sow_status st = map_level_file(path, &fd, &map, &size, e);
    if (st != SOW_OK)
        return st;
    struct tb_header hd;
    st = header_decode(map, size, path, rs, level, NULL, &hd, e);
    if (st == SOW_OK && (a > b || b > hd.entries))
        st = sow_fail(e, SOW_E_INPUT, "%s: entries %llu..%llu are not in the level (%llu)", path,
                      (unsigned long long)a, (unsigned long long)b,
                      (unsigned long long)hd.entries);
    if (st == SOW_OK && hd.version != TBZ_VERSION && size != TB_HEADER_SIZE + hd.entries)
        st = sow_fail(e, SOW_E_INPUT, "%s: %s (%zu bytes, expected %llu)", path,
                      size < TB_HEADER_SIZE + hd.entries ? "truncated" : "trailing bytes", size,
                      (unsigned long long)(TB_HEADER_SIZE + hd.entries));
    if (st == SOW_OK && whole_sum) /* the header's sum: values (v1) or stored payload (v2) */
        st = stream_sum(fd, size, ct_get64((const uint8_t *)map + TBH_CHECKSUM), path, e);
    if (st == SOW_OK && hd.version == TBZ_VERSION)
        st = zslice(map, size, &hd, path, a, b, out, e);
    else if (st == SOW_OK) {
        memcpy(out, (const uint8_t *)map + TB_HEADER_SIZE + a, (size_t)(b - a));
        int lo = 0, hi = 0;
        for (uint64_t i = 0; i < b - a; i++) {
            lo = out[i] < lo ? out[i] : lo;
            hi = out[i] > hi ? out[i] : hi;
        }
        if (lo < -(int)hd.level || hi > (int)hd.level)
            st = sow_fail(e, SOW_E_INPUT,
                          "%s: values out of range (%d..%d, level %u allows -%u..%u)", path, lo,
                          hi, hd.level, hd.level, hd.level);
    }
    munmap(map, size);
    close(fd);
    return st;
}

/* ---- sets ---------------------------------------------------------------- */

enum sow_status tb_rebuild_hint(enum sow_status st, struct sow_error *e)
{
    if (st != SOW_OK && e) {
        size_t l = strlen(e->msg);
        snprintf(e->msg + l, sizeof e->msg - l, " (delete it to rebuild)");
    }
    return st;
}

enum sow_status tb_level_solvable(const struct tb_set *lower, int n, uint64_t E, uint64_t max,
                                  bool compressed_ok, struct sow_error *e)
{
    if (n > TB_MAX_LEVEL || E > max)
        return sow_fail(e, SOW_E_TOO_BIG,
                        "level %d: %llu entries, more than this builder indexes in one process "
                        "(%llu)", n, (unsigned long long)E, (unsigned long long)max);
    for (int m = 0; m < n; m++)
        if (!lower->lv[m].v && !(compressed_ok && lower->lv[m].z))
            return sow_fail(e, SOW_E_INPUT, "level %d needs level %d, which is not loaded", n, m);
    return SOW_OK;
}

struct tb_set *tb_set_new(const struct ruleset *rs, const char *dir)
{
    struct tb_set *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rs = *rs;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    tb_index_init(&s->ix, rs);
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        s->boards[n] = tb_level_boards(&s->ix, n);
    return s;
}

enum sow_status tb_set_load_level(struct tb_set *s, int n, struct sow_error *e)
{
    char path[4096];
    tb_file_name(s->dir, s->rs.name, s->rs.pits, n, path, sizeof path);
    struct tb_header h;
    struct tb_level *lv = &s->lv[n];
    if (lv->v || lv->z)
        return SOW_OK;
    /* compressed levels stay compressed in sets opened for probing */
    struct tbz z;
    enum sow_status st = file_load(path, &s->rs, n, &h, &lv->v, &lv->map, &lv->maplen,
                                   s->keep_compressed ? &z : NULL, e);
    if (st != SOW_OK)
        return st;
    if (s->keep_compressed && !lv->v) {
        lv->z = malloc(sizeof *lv->z);
        if (!lv->z) {
            tb_file_unmap(lv->map, lv->maplen);
            lv->map = NULL;
            return sow_fail(e, SOW_E_NOMEM, "out of memory");
        }
        *lv->z = z;
        lv->z->gbase = s->next_block;
        s->next_block += lv->z->nblocks;
        if (s->cache && lv->z->bshift <= tbz_cache_bmax(s->cache))
            lv->z->cache = s->cache;
    }
    lv->entries = h.entries;
    lv->checksum = h.checksum;
    return SOW_OK;
}

void tb_set_put_level(struct tb_set *s, int n, const int8_t *v, uint64_t entries)
{
    s->lv[n].v = v;
    s->lv[n].entries = entries;
}

void tb_set_own_level(struct tb_set *s, int n, int8_t *v, int8_t *lohi, uint64_t entries)
{
    struct tb_level *lv = &s->lv[n];
    tb_file_unmap(lv->map, lv->maplen);
    free(lv->own);
    if (!lv->z_borrowed)
        free(lv->z);
    const int8_t *bd = lv->bd;
    void *bmap = lv->bmap;
    size_t bmaplen = lv->bmaplen;
    uint64_t sum = lv->checksum;
    if (lohi) { /* new bounds replace the old ones */
        free(lv->lohi);
        tb_file_unmap(bmap, bmaplen);
        *lv = (struct tb_level){.v = v, .entries = entries, .own = v, .lohi = lohi, .bd = lohi};
        return;
    }
    /* the same level's values in memory: its bounds (and checksum) stay */
    *lv = (struct tb_level){.v = v, .entries = entries, .own = v, .lohi = lv->lohi, .bd = bd,
                            .bmap = bmap, .bmaplen = bmaplen, .checksum = sum};
}

enum sow_status tb_open(const struct ruleset *rs, const char *dir, struct tb_set **out,
                        struct sow_error *e)
{
    *out = NULL;
    struct tb_set *s = tb_set_new(rs, dir);
    if (!s)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    s->keep_compressed = true; /* probes decompress one block at a time */
    /* dir may list several directories separated by ':' (as PATH): each
     * level comes from the first one that holds its file, with that
     * directory's bounds file (s->dir names it while the level loads) */
    for (int n = 0; n <= TB_MAX_LEVEL; n++) {
        for (const char *d = dir; *d;) {
            char path[4096];
            if (!util_path_next(&d, s->dir, sizeof s->dir))
                continue;
            tb_file_name(s->dir, rs->name, rs->pits, n, path, sizeof path);
            if (!fio_exists(path))
                continue;
            enum sow_status st = tb_set_load_level(s, n, e);
            if (st == SOW_OK)
                st = tb_set_load_bounds(s, n, e);
            if (st != SOW_OK) {
                tb_close(s);
                return st;
            }
            break;
        }
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    enum sow_status st = tb_set_cache(s, 0, e); /* the default size (tables_probe.h) */
    if (st != SOW_OK) {
        tb_close(s);
        return st;
    }
    *out = s;
    return SOW_OK;
}

void tb_set_unload_level(struct tb_set *s, int n)
{
    struct tb_level *lv = &s->lv[n];
    tb_file_unmap(lv->map, lv->maplen);
    tb_file_unmap(lv->bmap, lv->bmaplen);
    free(lv->own);
    free(lv->lohi);
    if (!lv->z_borrowed)
        free(lv->z);
    *lv = (struct tb_level){0};
}

void tb_close(struct tb_set *s)
{
    if (!s)
        return;
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        tb_set_unload_level(s, n);
    tbz_cache_free(s->cache);
    free(s);
}

int tb_max_level(const struct tb_set *s)
{
    int n = 0;
    while (n <= TB_MAX_LEVEL && (s->lv[n].v || s->lv[n].z))
        n++;
    return n - 1;
}

/* Level and index of p in s, if p is indexed and its level is loaded
 * (with bounds if need_bounds). */
static bool probe_index(const struct tb_set *s, const sow_position *p, bool need_bounds, int *n,
                        uint64_t *idx)
{
    int st = tb_rel_state(&s->ix, p);
    if (st < 0)
        return false;
    *n = board_sum_range(&p->board, 0, s->ix.holes);
    if (*n > TB_MAX_LEVEL || !(s->lv[*n].v || s->lv[*n].z) || (need_bounds && !s->lv[*n].bd))
        return false;
    *idx = (uint64_t)st * s->boards[*n] + tb_rank_side(&s->ix, p->board.h, p->side);
    return true;
}

bool tb_probe(const struct tb_set *s, const sow_position *p, int *value)
{
    int n;
    uint64_t idx;
    if (!probe_index(s, p, false, &n, &idx))
        return false;
    if (!s->lv[n].v) /* compressed: through this thread's cache of blocks */
        return tbz_probe(s->lv[n].z, idx, value);
    *value = s->lv[n].v[idx];
    return true;
}

bool tb_probe_bounds(const struct tb_set *s, const sow_position *p, int *lo, int *hi, int *value)
{
    int n;
    uint64_t idx;
    if (!probe_index(s, p, true, &n, &idx))
        return false;
    if (s->lv[n].v)
        *value = s->lv[n].v[idx];
    else if (!tbz_probe(s->lv[n].z, idx, value)) /* compressed: a damaged block */
        return false;
    *lo = s->lv[n].bd[2 * idx];
    *hi = s->lv[n].bd[2 * idx + 1];
    return true;
}

bool tb_level_has_bounds(const struct tb_set *s, int n)
{
    return n >= 0 && n <= TB_MAX_LEVEL && (s->lv[n].v || s->lv[n].z) && s->lv[n].bd;
}

void tb_set_borrow(struct tb_set *dst, const struct tb_set *src)
{
    /* Compressed levels are borrowed compressed: probes of dst go through
     * src's cache.  (tb_mem decompresses them into dst before it builds a
     * level above them: the builder reads lower levels as arrays.) */
    for (int n = 0; n <= tb_max_level(src); n++) {
        if (src->lv[n].v) {
            tb_set_put_level(dst, n, src->lv[n].v, src->lv[n].entries);
        } else {
            dst->lv[n].z = src->lv[n].z;
            dst->lv[n].z_borrowed = true;
            dst->lv[n].entries = src->lv[n].entries;
        }
        dst->lv[n].bd = src->lv[n].bd; /* its bounds, if it has them */
        dst->lv[n].checksum = src->lv[n].checksum;
    }
}

/* ---- the block cache of compressed levels (compress.h) ---- */

uint64_t tb_set_compressed_bytes(const struct tb_set *s)
{
    uint64_t raw = 0;
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        if (s->lv[n].z && !s->lv[n].v)
            raw += s->lv[n].entries;
    return raw;
}

uint64_t tb_cache_default(const struct tb_set *s, double memory)
{
    if (memory <= 0) {
        double ram = util_phys_memory();
        memory = ram > 0 ? 0.75 * ram : 8e9;
    }
    /* every block of the set's own compressed levels (compress.h), each in a
     * slot of the largest block size */
    uint64_t blocks = 0;
    unsigned bmax = 0;
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        if (s->lv[n].z && !s->lv[n].z_borrowed) {
            blocks += s->lv[n].z->nblocks;
            bmax = s->lv[n].z->bshift > bmax ? s->lv[n].z->bshift : bmax;
        }
    uint64_t want = (blocks + 8) << bmax, cap = (uint64_t)(memory / TB_CACHE_SHARE);
    return want < cap ? want : cap;
}

enum sow_status tb_set_cache(struct tb_set *s, uint64_t bytes, struct sow_error *e)
{
    unsigned bmax = 0;
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        if (s->lv[n].z && !s->lv[n].z_borrowed && s->lv[n].z->bshift > bmax)
            bmax = s->lv[n].z->bshift;
    if (!bmax) /* no compressed level of its own: no cache */
        return SOW_OK;
    if (!bytes)
        bytes = tb_cache_default(s, 0);
    struct tbz_cache *c = tbz_cache_new(bytes, bmax);
    if (!c)
        return sow_fail(e, SOW_E_NOMEM, "out of memory for a block cache of %.0f MB",
                        (double)bytes / 1e6);
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        if (s->lv[n].z && !s->lv[n].z_borrowed)
            s->lv[n].z->cache = c;
    tbz_cache_free(s->cache);
    s->cache = c;
    return SOW_OK;
}

bool tb_set_cache_stats(const struct tb_set *s, struct tb_cache_stats *st)
{
    memset(st, 0, sizeof *st);
    /* the caches its levels probe through: its own and those it borrows */
    struct tbz_cache *seen[8];
    int ns = 0;
    for (int n = 0; n <= TB_MAX_LEVEL; n++) {
        struct tbz_cache *c = s->lv[n].z && !s->lv[n].v ? s->lv[n].z->cache : NULL;
        bool dup = false;
        for (int i = 0; i < ns; i++)
            dup |= seen[i] == c;
        if (!c || dup || ns == 8)
            continue;
        seen[ns++] = c;
        struct tbz_cache_stats cs;
        tbz_cache_stats(c, &cs);
        st->hits += cs.hits;
        st->misses += cs.misses;
        st->bytes += tbz_cache_bytes(c);
    }
    return ns > 0;
}

bool tb_set_damaged(const struct tb_set *s, struct sow_error *e)
{
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        if (s->lv[n].z && s->lv[n].z->cache && tbz_cache_damage(s->lv[n].z->cache, e))
            return true;
    return false;
}

const int8_t *tb_level_values(const struct tb_set *s, int n, uint64_t *entries)
{
    if (n < 0 || n > TB_MAX_LEVEL || !s->lv[n].v)
        return NULL;
    if (entries)
        *entries = s->lv[n].entries;
    return s->lv[n].v;
}

const struct tb_index *tb_set_index(const struct tb_set *s)
{
    return &s->ix;
}
