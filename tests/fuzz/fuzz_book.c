/* libFuzzer target: the opening-book reader (book_parse) on arbitrary bytes.
 *
 * The input is the file.  It is read twice, as fuzz_tables does:
 *  1. as is: damage must be rejected with a one-line message;
 *  2. with both XXH3 checksums recomputed (where the header's counts match
 *     the length), so the fuzzer reaches the checks after them (key order,
 *     records in range, best first, rule set and board).
 * Each is read for any rule set and for oware 2x6 with 4 seeds (the
 * engine's default: a book of another game must be refused in one line).
 * An accepted book: it names a game as sow does (rule set, board, seeds),
 * the header's counts give the file's length, every
 * entry's records lie in the file and are best first, book_choose picks one
 * of them, and written (book_write) and read back it is the same book. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "book/book.h"
#include "container.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

static void same_book(const struct book *a, const struct book *b)
{
    if (memcmp(&a->par, &b->par, sizeof a->par) != 0 || a->nent != b->nent || a->nmov != b->nmov ||
        memcmp(a->ent, b->ent, a->nent * sizeof *a->ent) != 0 ||
        memcmp(a->mov, b->mov, a->nmov * sizeof *a->mov) != 0)
        fuzz_fail("book written and read back differs");
}

static void check_accepted(const struct book *b, size_t size)
{
    if (BOOK_HEADER + b->nent * sizeof *b->ent + b->nmov * sizeof *b->mov != size)
        fuzz_fail("accepted %zu bytes for %llu entries and %llu records", size,
                  (unsigned long long)b->nent, (unsigned long long)b->nmov);
    struct ruleset rs;
    struct sow_error e;
    if (rules_init(&rs, b->par.rules, b->par.pits, b->par.seeds, &e) != SOW_OK ||
        strcmp(rs.name, b->par.rules) != 0 || rs.pits != b->par.pits || rs.seeds != b->par.seeds)
        fuzz_fail("accepted a book of '%s' 2x%d with %d seeds, not a game sow names so",
                  b->par.rules, b->par.pits, b->par.seeds);
    uint64_t rng = 1;
    for (uint64_t i = 0; i < b->nent; i++) {
        const struct book_entry *t = &b->ent[i];
        if (t->n < 1 || t->n > BOOK_MAX_MOVES || (uint64_t)t->first + t->n > b->nmov)
            fuzz_fail("entry %llu: records %u..+%u of %llu", (unsigned long long)i, t->first,
                      t->n, (unsigned long long)b->nmov);
        if (i && b->ent[i - 1].key >= t->key)
            fuzz_fail("entry %llu out of key order", (unsigned long long)i);
        for (int margin = 0; margin <= 1000; margin += 1000) {
            sow_move m = book_choose(b, t, margin, &rng);
            bool found = false;
            for (int k = 0; k < t->n; k++)
                found |= b->mov[t->first + k].move == m &&
                         b->mov[t->first + k].score >= b->mov[t->first].score - margin;
            if (!found)
                fuzz_fail("entry %llu: book_choose gave move %d, not one within %d of the best",
                          (unsigned long long)i, m, margin);
        }
    }
    if (book_write(path, b, &e) != SOW_OK)
        fuzz_fail("book_write: %s", e.msg);
    struct book c;
    if (book_open(path, NULL, &c, &e) != SOW_OK)
        fuzz_fail("a book sow wrote does not read back: %s", e.msg);
    same_book(b, &c);
    book_free(&c);
}

static void read_book(const uint8_t *data, size_t size, const char *what)
{
    struct ruleset oware;
    struct sow_error e;
    if (rules_init(&oware, "oware", 6, 4, &e) != SOW_OK)
        abort();
    const struct ruleset *as[2] = {NULL, &oware};
    for (int k = 0; k < 2; k++) {
        struct book b;
        fuzz_clear_error(&e);
        enum sow_status st = book_parse(data, size, "fuzz.sowbook", as[k], &b, &e);
        if (st != SOW_OK) {
            if (st != SOW_E_NOMEM)
                fuzz_check_input(what, st, &e);
            else
                fuzz_check_message(what, e.msg);
            continue;
        }
        check_accepted(&b, size);
        book_free(&b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/sow-fuzz-book-XXXXXX");
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof path, "%s/b.sowbook", dir);
        atexit(cleanup);
    }
    read_book(data, size, "as is");
    if (size < BOOK_HEADER)
        return 0;
    uint8_t *fixed = fuzz_copy(data, size);
    uint64_t nent = ct_get64(fixed + 64), nmov = ct_get64(fixed + 72);
    if (nent <= size / 16 && nmov <= size / 4 && BOOK_HEADER + nent * 16 + nmov * 4 == size) {
        /* the payload checksum: the records' XXH3 seeded with the entries' */
        uint64_t c = XXH3_64bits_withSeed(fixed + BOOK_HEADER + nent * 16, nmov * 4,
                                          XXH3_64bits(fixed + BOOK_HEADER, nent * 16));
        memcpy(fixed + 80, &c, 8);
    }
    ct_seal(fixed, 88); /* the header's checksum of bytes 0..87 */
    read_book(fixed, size, "checksums fixed");
    free(fixed);
    return 0;
}
