/* Opening books: the first moves of a game, searched once in advance
 * (docs/book.md).  A book maps a position to its moves' scores; a player
 * with a book plays from it while the position is in it, choosing among the
 * best-scored moves (within a margin) at random, and searches after.
 *
 *   book.c        the file: format, open and verify, look-up, choice, write
 *   book_build.c  the builder: positions from the start, every move searched
 *
 * File (little-endian, the checksummed container of container.h):
 *
 *   offset size
 *     0     8   magic "SOWBOOK1"
 *     8     4   format version (1)
 *    12     4   header size (96)
 *    16    24   rule set name, NUL-padded
 *    40     4   pits
 *    44     4   seeds per hole of the start
 *    48     4   plies complete: every position of plies 0..plies-1 from the
 *               start that the build reaches is in the book
 *    52     4   search depth of each move's score, plies
 *    56     4   expand margin: moves within this many centi-seeds of the
 *               best are followed to the next ply
 *    60     4   0 (reserved)
 *    64     8   entries E
 *    72     8   move records M
 *    80     8   XXH3-64 of the move records, seeded with the XXH3-64
 *               of the entries
 *    88     8   XXH3-64 of bytes 0..87
 *    96         E entries of 16 bytes, in increasing key order:
 *                 u64 key    book_key of the position
 *                 u32 first  its first move record
 *                 u8  n      its move records (1..SOW_MAX_PITS + 1)
 *                 u8  ply    plies from the start where the build met it first
 *                 u16 0
 *    96+16E     M move records of 4 bytes, each entry's best first:
 *                 u8  move   (sow_move)
 *                 u8  flags  1: the score is exact (the game ends, the
 *                            solution file's move value, or a proven
 *                            search of a capture's child)
 *                 i16 score  centi-seeds for the player to move
 *
 * Example: the oware start's entry: key K, first 0, n 6, ply 0, and six
 * records such as {move 2 (c), flags 0, score 37}, {move 3, 0, 21}, ...
 *
 * The key is XXH3-64 of the position with its stores zeroed (the engine's
 * scores are future captures: they do not depend on the stores).  Two
 * positions that share a key are told apart by nothing, so a look-up also
 * checks that every move of the entry is legal in the position asked
 * (a position of another game whose key collides is then taken as absent
 * unless its moves happen to match).
 *
 * Thread-safety: an open book is immutable; book_find and book_choose may
 * be called from any thread (book_choose's random state is the caller's).
 */
#ifndef SOW_BOOK_H
#define SOW_BOOK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"

#define BOOK_MAGIC "SOWBOOK1"
#define BOOK_VERSION 1
#define BOOK_HEADER 96
#define BOOK_MAX_MOVES (SOW_MAX_PITS + 1)
#define BOOK_EXACT 1

struct book_move {
    sow_move move;
    uint8_t flags;
    int16_t score;
};
_Static_assert(sizeof(struct book_move) == 4, "a move record is 4 bytes");

struct book_entry {
    uint64_t key;
    uint32_t first;
    uint8_t n, ply;
    uint16_t zero;
};
_Static_assert(sizeof(struct book_entry) == 16, "an entry is 16 bytes");

/* What a header says (and what a build asks for). */
struct book_params {
    char rules[24];
    int pits, seeds;
    int plies, depth, margin;
};

struct book {
    struct book_params par;
    uint64_t nent, nmov;
    struct book_entry *ent; /* sorted by key */
    struct book_move *mov;
};

/* The key of p (its stores ignored). */
uint64_t book_key(const sow_position *p);

/* Read and verify path for rs (magic, version, checksums, sizes, rule set
 * and board, order of the keys, records in range): SOW_OK, SOW_E_INPUT
 * (not a book, damaged, another rule set or board: one line naming the
 * file and what is wrong), SOW_E_IO or SOW_E_NOMEM.  rs NULL: any rule set. */
enum sow_status book_open(const char *path, const struct ruleset *rs, struct book *b,
                          struct sow_error *e);
/* The same from len bytes at data (a book compiled into sow); name for
 * the messages.  b's arrays are copies. */
enum sow_status book_parse(const uint8_t *data, size_t len, const char *name,
                           const struct ruleset *rs, struct book *b, struct sow_error *e);
void book_free(struct book *b);

/* p's entry, or NULL if p is not in the book (or an entry with p's key
 * holds a move that is not legal in p: a key shared by another position). */
const struct book_entry *book_find(const struct book *b, const struct ruleset *rs,
                                   const sow_position *p);

/* A move of e: uniformly among the records scored within `margin`
 * centi-seeds of the best (0: the best-scored ones), by the caller's
 * random state *rng (any value; advanced). */
sow_move book_choose(const struct book *b, const struct book_entry *e, int margin, uint64_t *rng);

/* Write b to path through fileio (temporary file, fsync, rename); entries
 * must be sorted by key.  SOW_OK, SOW_E_INPUT (target not writable as
 * asked) or SOW_E_IO. */
enum sow_status book_write(const char *path, const struct book *b, struct sow_error *e);

/* The file name of rs's book: "RULES-2xPITS-SEEDS.sowbook" into buf. */
void book_name(const struct ruleset *rs, char *buf, size_t len);

/* ---- building (book_build.c) ---- */

struct book_build_opts {
    int plies;           /* positions up to this many plies from the start */
    int depth;           /* each move's score: a search of this depth */
    int margin;          /* follow moves within this many centi-seeds of the best */
    int threads;
    unsigned hash_mb;
    const char *solution; /* a solution file: exact scores where it knows them, or NULL */
    volatile sig_atomic_t *stop;
    bool progress;       /* progress with ETA on stderr */
};

/* Build (or resume: path holding a book of the same rule set, board, depth
 * and margin with fewer plies) rs's book from its start position to
 * o->plies plies, writing path after each complete ply.  SOW_OK,
 * SOW_E_INTERRUPTED (path holds the plies complete before the stop),
 * SOW_E_INPUT, SOW_E_IO, SOW_E_NOMEM. */
enum sow_status book_build(const struct ruleset *rs, const char *path,
                           const struct book_build_opts *o, struct sow_error *e);

#endif
