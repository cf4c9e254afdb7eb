/* sow — OGN game records (docs/ogn.md): a record's text parsed into its tags,
 * start position, moves and comments, every move replayed and checked with
 * the rules; and a game written back as OGN, as Aualé writes it.
 *
 * Layout
 * ------
 *   struct ogn_game
 *     rs, start      the rule set (tags Variant, Board, Seeds) and the start
 *                    position (tag FEN, else rules_start)
 *     tags[ntags]    every tag in the order read (or set): name, value (both
 *                    malloc'd, value unescaped)
 *     ply[nply]      move i (0-based) of the record:
 *                      move      the move (rules.h), played by side `mover`
 *                      pos       the position after it
 *                      captured  seeds A and B captured during the move
 *                      gain2     what the move added to the mover's store, the
 *                                settlement of a game it ends included, x2
 *                                (the "+N" of the text: awari may split halves)
 *                      mark      "", "!", "?", "!!", "??", "!?" or "?!"
 *     notes[nnotes]  comments in the order of the text: ply = k if it follows
 *                    move k-1 (1..nply), 0 before the first move; text with
 *                    its white space runs made one space
 *     end            how the last position stands: OGN_LIVE (game goes on),
 *                    OGN_OVER (no legal move: settle[] applies),
 *                    OGN_REPEATED (the position repeats: rules_repetition_settle2)
 *     result         the result as read or worked out: "*" or "A-B"
 *
 *   [Variant "Oware Abapa"]            rs = oware 2x6, start = rules_start
 *   [Result "*"]                       tags = {Variant, Result}
 *                                      notes = {ply 0 "opening"}, {ply 2 "capture"}
 *   { opening } 1. C c+2 { capture }   ply[0] = {2A.., side A, gain2 0}
 *                                      ply[1] = {..., side B, gain2 4}
 *
 * Errors: ogn_parse refuses a malformed record with SOW_E_INPUT and one line
 * "LINE:COL: what" (both from 1, the column in bytes), e.g.
 * "3:9: move 14 'e': not legal here (legal: A C D)".
 *
 * Thread-safety: a struct ogn_game belongs to one thread at a time; every
 * function is reentrant (no shared state).
 */
#ifndef SOW_OGN_H
#define SOW_OGN_H

#include <stdbool.h>
#include <stddef.h>

#include "sow/rules.h"
#include "sow/status.h"

/* Longest record read: 1 MiB. */
#define OGN_MAX_TEXT (1 << 20)

enum ogn_end { OGN_LIVE = 0, OGN_OVER, OGN_REPEATED };

struct ogn_tag {
    char *name, *value;
};

struct ogn_ply {
    sow_move move;
    uint8_t mover;       /* SOW_A or SOW_B */
    uint8_t captured[2]; /* during the move, by A and by B */
    int gain2;           /* the mover's store gain, settlement included, x2 */
    char mark[3];
    sow_position pos;    /* after the move */
};

struct ogn_note {
    int ply;    /* 0: before the first move; k: after move k (1-based) */
    char *text; /* one space between words, no leading or trailing space */
};

struct ogn_game {
    struct ruleset rs;
    sow_position start;
    struct ogn_tag *tags;
    int ntags, tags_cap;
    struct ogn_ply *ply;
    int nply, ply_cap;
    struct ogn_note *notes;
    int nnotes, notes_cap;
    enum ogn_end end;
    uint8_t settle[2];   /* OGN_OVER: what the board gives A and B */
    int repeated_at;     /* OGN_REPEATED: the earlier ply index of the position */
    char result[32];
};

/* Parse len bytes of text into *out (a new game, ogn_free it); SOW_OK, or
 * SOW_E_INPUT with "LINE:COL: what" (out untouched), SOW_E_NOMEM. */
enum sow_status ogn_parse(const char *text, size_t len, struct ogn_game **out,
                          struct sow_error *e);

/* A new record of rs from start (NULL: rules_start), with Aualé's tags
 * (Variant Event Site Date Round South North Result, "?" where nothing is
 * known) and Board, Seeds and FEN where they differ from the defaults.
 * NULL if out of memory. */
struct ogn_game *ogn_new(const struct ruleset *rs, const sow_position *start);

void ogn_free(struct ogn_game *g);

/* The position after the record's moves. */
const sow_position *ogn_last(const struct ogn_game *g);
/* The position before move i (0-based; i = nply: the last). */
const sow_position *ogn_before(const struct ogn_game *g, int i);

/* Play m after the last move: SOW_OK, or SOW_E_INPUT (not legal, the game is
 * over; the message names the move, "move N 'X': ..."), SOW_E_NOMEM.  Updates
 * end; the Result tag and result are left alone (ogn_update_result). */
enum sow_status ogn_play(struct ogn_game *g, sow_move m, struct sow_error *e);

/* The result the moves give (docs/ogn.md "The result"): "*" or "A-B". */
void ogn_result(const struct ogn_game *g, char *buf, size_t len);
/* Set result and the Result tag (added if missing) to ogn_result. */
enum sow_status ogn_update_result(struct ogn_game *g);

/* Tag value by name, or NULL. */
const char *ogn_tag(const struct ogn_game *g, const char *name);
/* Set a tag (replace its value, or append it).  SOW_OK or SOW_E_NOMEM. */
enum sow_status ogn_set_tag(struct ogn_game *g, const char *name, const char *value);

/* Append a comment after move ply (0: before the first); its white space is
 * normalised; an empty one is not kept.  SOW_OK or SOW_E_NOMEM. */
enum sow_status ogn_add_note(struct ogn_game *g, int ply, const char *text);
/* Remove the comments of ply that begin with prefix. */
void ogn_drop_notes(struct ogn_game *g, int ply, const char *prefix);

/* Name of move i as the record writes it: Aualé's letter for oware (C, f),
 * sow's name for the others (3A, pass, 2A+3A); without capture or mark. */
void ogn_move_name(const struct ogn_game *g, int i, char *buf, size_t len);
/* Name of move m of side in rs, as a record writes it (as ogn_move_name). */
void ogn_name(const struct ruleset *rs, int side, sow_move m, char *buf, size_t len);

/* The record as text (docs/ogn.md "Writing"), malloc'd and NUL-terminated,
 * length in *len (may be NULL); NULL if out of memory. */
char *ogn_format(const struct ogn_game *g, size_t *len);

#endif
