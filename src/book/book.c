/* Opening books: the file (book.h draws it), look-up and choice. */
#include "book.h"
#include "book/builtin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "container.h"
#include "fileio.h"
#include "util.h"

uint64_t book_key(const sow_position *p)
{
    sow_position q = *p;
    q.store[0] = q.store[1] = 0;
    return XXH3_64bits(&q, sizeof q);
}

void book_name(const struct ruleset *rs, char *buf, size_t len)
{
    snprintf(buf, len, "%s-2x%d-%d.sowbook", rs->name, rs->pits, rs->seeds);
}

void book_free(struct book *b)
{
    free(b->ent);
    free(b->mov);
    b->ent = NULL;
    b->mov = NULL;
    b->nent = b->nmov = 0;
}

/* ---- the header ---- */

static void header_put(uint8_t *h, const struct book *b, uint64_t payload_hash)
{
    memset(h, 0, BOOK_HEADER);
    memcpy(h, BOOK_MAGIC, 8);
    ct_put32(h + 8, BOOK_VERSION);
    ct_put32(h + 12, BOOK_HEADER);
    memcpy(h + 16, b->par.rules, strnlen(b->par.rules, 23));
    ct_put32(h + 40, (uint32_t)b->par.pits);
    ct_put32(h + 44, (uint32_t)b->par.seeds);
    ct_put32(h + 48, (uint32_t)b->par.plies);
    ct_put32(h + 52, (uint32_t)b->par.depth);
    ct_put32(h + 56, (uint32_t)b->par.margin);
    ct_put64(h + 64, b->nent);
    ct_put64(h + 72, b->nmov);
    ct_put64(h + 80, payload_hash);
    ct_seal(h, 88);
}

/* XXH3-64 of the move records, seeded with the XXH3-64 of the entries. */
static uint64_t payload_hash(const struct book *b)
{
    return XXH3_64bits_withSeed(b->mov, b->nmov * sizeof *b->mov,
                                XXH3_64bits(b->ent, b->nent * sizeof *b->ent));
}

static enum sow_status read_all(int fd, void *buf, size_t n, const char *path,
                                struct sow_error *e)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return sow_fail(e, SOW_E_IO, "%s: %s", path, strerror(errno));
        if (r == 0)
            return sow_fail(e, SOW_E_INPUT, "%s: damaged book: it shrank while read", path);
        p += r;
        n -= (size_t)r;
    }
    return SOW_OK;
}

/* The header's fields into b (sizes checked against the data's length). */
static enum sow_status header_get(const uint8_t *h, size_t size, const char *path, struct book *b,
                                  uint64_t *hash, struct sow_error *e)
{
    if (size < BOOK_HEADER || memcmp(h, BOOK_MAGIC, 8))
        return sow_fail(e, SOW_E_INPUT, "%s: not a sow opening book (bad magic)", path);
    if (!ct_sealed(h, 88))
        return sow_fail(e, SOW_E_INPUT, "%s: damaged book: header checksum mismatch", path);
    if (ct_get32(h + 8) != BOOK_VERSION || ct_get32(h + 12) != BOOK_HEADER)
        return sow_fail(e, SOW_E_INPUT, "%s: book format version %u not supported (this sow reads %d)",
                        path, ct_get32(h + 8), BOOK_VERSION);
    memset(&b->par, 0, sizeof b->par);
    memcpy(b->par.rules, h + 16, 23);
    b->par.pits = (int)ct_get32(h + 40);
    b->par.seeds = (int)ct_get32(h + 44);
    b->par.plies = (int)ct_get32(h + 48);
    b->par.depth = (int)ct_get32(h + 52);
    b->par.margin = (int)ct_get32(h + 56);
    b->nent = ct_get64(h + 64);
    b->nmov = ct_get64(h + 72);
    *hash = ct_get64(h + 80);
    /* The rule set: the name of a rule set and board sow knows, as sow
     * writes it (below), NUL-padded to the field's end, so that no message
     * or `book info` line prints what a damaged field holds. */
    for (size_t i = strlen(b->par.rules); i < 24; i++)
        if (h[16 + i])
            return sow_fail(e, SOW_E_INPUT, "%s: damaged book: the rule set field is not a name",
                            path);
    struct ruleset rs;
    struct sow_error re;
    if (rules_init(&rs, b->par.rules, b->par.pits, b->par.seeds, &re) != SOW_OK)
        return sow_fail(e, SOW_E_INPUT, "%s: a book of %s 2x%d with %d seeds: %s", path,
                        b->par.rules, b->par.pits, b->par.seeds, re.msg);
    if (strcmp(rs.name, b->par.rules) || rs.pits != b->par.pits || rs.seeds != b->par.seeds)
        return sow_fail(e, SOW_E_INPUT,
                        "%s: damaged book: %s 2x%d with %d seeds is not how sow names a game",
                        path, b->par.rules, b->par.pits, b->par.seeds);
    uint64_t want = BOOK_HEADER;
    if (b->nent > ((uint64_t)1 << 40) || b->nmov > ((uint64_t)1 << 40) ||
        (want += b->nent * 16 + b->nmov * 4, want != (uint64_t)size))
        return sow_fail(e, SOW_E_INPUT, "%s: damaged book: %zu bytes, its header says %llu", path,
                        size, (unsigned long long)want);
    return SOW_OK;
}

/* Keys strictly increasing, each entry's records in range and best first. */
static enum sow_status check_payload(const struct book *b, const char *path, struct sow_error *e)
{
    for (uint64_t i = 0; i < b->nent; i++) {
        const struct book_entry *t = &b->ent[i];
        if (i && t->key <= b->ent[i - 1].key)
            return sow_fail(e, SOW_E_INPUT, "%s: damaged book: entry %llu out of key order", path,
                            (unsigned long long)i);
        if (!t->n || t->n > BOOK_MAX_MOVES || t->first > b->nmov || b->nmov - t->first < t->n)
            return sow_fail(e, SOW_E_INPUT, "%s: damaged book: entry %llu's moves out of range",
                            path, (unsigned long long)i);
        for (int k = 1; k < t->n; k++)
            if (b->mov[t->first + k].score > b->mov[t->first + k - 1].score)
                return sow_fail(e, SOW_E_INPUT, "%s: damaged book: entry %llu's moves not best first",
                                path, (unsigned long long)i);
    }
    return SOW_OK;
}

/* After the header (header_get into b): a book of rs (NULL: any), its
 * arrays allocated for the payload. */
static enum sow_status payload_alloc(struct book *b, const struct ruleset *rs, const char *name,
                                     struct sow_error *e)
{
    if (rs && (strcmp(b->par.rules, rs->name) || b->par.pits != rs->pits ||
               b->par.seeds != rs->seeds))
        return sow_fail(e, SOW_E_INPUT, "%s: a book of %s 2x%d with %d seeds, not %s 2x%d with %d",
                        name, b->par.rules, b->par.pits, b->par.seeds, rs->name, rs->pits,
                        rs->seeds);
    b->ent = malloc(b->nent ? b->nent * sizeof *b->ent : 1);
    b->mov = malloc(b->nmov ? b->nmov * sizeof *b->mov : 1);
    if (!b->ent || !b->mov) {
        book_free(b);
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory for %llu entries", name,
                        (unsigned long long)b->nent);
    }
    return SOW_OK;
}

/* The payload in b's arrays against the header's checksum hash, then its
 * order and ranges (check_payload); b freed if it fails. */
static enum sow_status payload_verify(struct book *b, uint64_t hash, const char *name,
                                      struct sow_error *e)
{
    enum sow_status st =
        payload_hash(b) != hash
            ? sow_fail(e, SOW_E_INPUT, "%s: damaged book: payload checksum mismatch", name)
            : check_payload(b, name, e);
    if (st != SOW_OK)
        book_free(b);
    return st;
}

enum sow_status book_parse(const uint8_t *data, size_t len, const char *name,
                           const struct ruleset *rs, struct book *b, struct sow_error *e)
{
    memset(b, 0, sizeof *b);
    uint64_t hash = 0;
    enum sow_status st = header_get(data, len, name, b, &hash, e);
    if (st == SOW_OK)
        st = payload_alloc(b, rs, name, e);
    if (st != SOW_OK)
        return st;
    memcpy(b->ent, data + BOOK_HEADER, b->nent * sizeof *b->ent);
    memcpy(b->mov, data + BOOK_HEADER + b->nent * sizeof *b->ent, b->nmov * sizeof *b->mov);
    return payload_verify(b, hash, name, e);
}

enum sow_status book_open(const char *path, const struct ruleset *rs, struct book *b,
                          struct sow_error *e)
{
    memset(b, 0, sizeof *b);
    int fd;
    enum sow_status st = fio_open_input(path, &fd, e);
    if (st != SOW_OK)
        return st;
    struct stat sb;
    uint8_t h[BOOK_HEADER];
    uint64_t hash;
    /* The header first: a file that is not a book of its size (a table of
     * gigabytes given by mistake) is refused before it is read; then the
     * payload straight into the book's arrays. */
    if (fstat(fd, &sb)) {
        st = sow_fail(e, SOW_E_IO, "%s: %s", path, strerror(errno));
    } else if (sb.st_size < BOOK_HEADER || sb.st_size > ((off_t)1 << 36)) {
        st = sow_fail(e, SOW_E_INPUT, "%s: not a sow opening book (%lld bytes)", path,
                      (long long)sb.st_size);
    } else if ((st = read_all(fd, h, sizeof h, path, e)) == SOW_OK &&
               (st = header_get(h, (size_t)sb.st_size, path, b, &hash, e)) == SOW_OK &&
               (st = payload_alloc(b, rs, path, e)) == SOW_OK) {
        if ((st = read_all(fd, b->ent, b->nent * sizeof *b->ent, path, e)) != SOW_OK ||
            (st = read_all(fd, b->mov, b->nmov * sizeof *b->mov, path, e)) != SOW_OK)
            book_free(b);
        else
            st = payload_verify(b, hash, path, e);
    }
    close(fd);
    return st;
}

const struct book_entry *book_find(const struct book *b, const struct ruleset *rs,
                                   const sow_position *p)
{
    uint64_t k = book_key(p), lo = 0, hi = b->nent;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (b->ent[mid].key < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == b->nent || b->ent[lo].key != k)
        return NULL;
    const struct book_entry *t = &b->ent[lo];
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, NULL, NULL);
    for (int i = 0; i < t->n; i++)
        if (rules_find_move(&ml, b->mov[t->first + i].move) < 0)
            return NULL;
    return t;
}

sow_move book_choose(const struct book *b, const struct book_entry *t, int margin, uint64_t *rng)
{
    const struct book_move *m = &b->mov[t->first];
    int k = 1; /* best first: the records within margin are a prefix */
    while (k < t->n && m[k].score >= m[0].score - margin)
        k++;
    return m[util_splitmix64(rng) % (uint64_t)k].move;
}

enum sow_status book_write(const char *path, const struct book *b, struct sow_error *e)
{
    uint8_t h[BOOK_HEADER];
    header_put(h, b, payload_hash(b));
    struct fio_out o;
    enum sow_status st = fio_out_begin(&o, path, NULL, e);
    if (st != SOW_OK)
        return st;
    if ((st = fio_write_all(&o, h, sizeof h, e)) != SOW_OK ||
        (st = fio_write_all(&o, b->ent, b->nent * sizeof *b->ent, e)) != SOW_OK ||
        (st = fio_write_all(&o, b->mov, b->nmov * sizeof *b->mov, e)) != SOW_OK) {
        fio_out_abort(&o);
        return st;
    }
    return fio_out_commit(&o, e);
}

enum sow_status book_load_builtin(const struct ruleset *rs, struct book *b, struct sow_error *e)
{
    char name[96];
    book_name(rs, name, sizeof name);
    memset(b, 0, sizeof *b);
    const struct embedded_file *f = embedded_find(book_builtin, name);
    if (f)
        return book_parse(f->data, f->len, f->name, rs, b, e);
    return sow_fail(e, SOW_E_INPUT, "no opening book of %s 2x%d with %d seeds in sow", rs->name,
                    rs->pits, rs->seeds);
}
