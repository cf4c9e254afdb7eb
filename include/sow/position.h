/* sow — position notation: parse and format positions and moves (one place).
 *
 *   A1,...,AN/B1,...,BN/SIDE[/SA-SB[/STATE]]
 *
 * Holes of A then of B, each in its owner's sowing order (hole 1 first); SIDE
 * is A or B (to move); SA-SB the seeds already captured (default 0-0); STATE
 * is '-' (default), darra's last capturer 'A'/'B', or jerin's 'open'.
 * Example (start of oware): 4,4,4,4,4,4/4,4,4,4,4,4/A/0-0/-
 *
 * Moves: "3A" (hole 3 of player A), "pass", jerin's opening "2A+3A".
 *
 * Errors: the parsers return SOW_OK, or SOW_E_INPUT with a one-line reason
 * naming the field in *e (e may be NULL), e.g. for "4,4,x/..." the message
 * "A row, hole 3: expected a seed count, found 'x'".
 *
 * Thread-safety: all functions are reentrant (no shared state).
 */
#ifndef SOW_POSITION_H
#define SOW_POSITION_H

#include <stddef.h>
#include <stdio.h>

#include "sow/rules.h"
#include "sow/export.h"
#include "sow/status.h"

/* Longest formatted position: 36 holes * 4 chars + fields. */
#define SOW_POS_MAXLEN 192
#define SOW_MOVE_MAXLEN 16

/* Holes per side that a token describes (counts the first row) into *pits;
 * SOW_E_INPUT if that row is malformed (*pits untouched then). */
SOW_API enum sow_status pos_token_pits(const char *s, int *pits, struct sow_error *e);

/* Parse a token for rule set rs into *out (untouched on error); the position
 * must pass rules_validate. */
SOW_API enum sow_status pos_parse(const struct ruleset *rs, const char *s, sow_position *out,
                                  struct sow_error *e);

/* Write all five fields; returns the length. */
SOW_API int pos_format(const struct ruleset *rs, const sow_position *p, char *buf, size_t len);

/* Parse a move name relative to position p (its side to move) into *out.
 * Does not check legality. */
SOW_API enum sow_status move_parse(const struct ruleset *rs, const sow_position *p, const char *s,
                                   sow_move *out, struct sow_error *e);

/* Name of move m played by `side`. */
SOW_API void move_format(const struct ruleset *rs, int side, sow_move m, char *buf, size_t len);

/* Draw the board as in the texts: A's row on top (holes N..1 left to right),
 * B's row below (1..N), then stores, side to move and state. */
SOW_API void pos_draw(FILE *f, const struct ruleset *rs, const sow_position *p);

#endif
