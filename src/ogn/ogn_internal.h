/* OGN game records, inside: what the module's files share (not part of the
 * API, which is ogn.h).
 *
 *   ogn.c        the game: tags, comments, moves replayed, the result
 *   ogn_read.c   a record's text read: the tokenizer and the parser (tags,
 *                move text, comments, result), every move played by ogn.c
 *   ogn_write.c  a game written back as text, as Aualé writes it
 *
 * Thread-safety: as ogn.h (a game belongs to one thread at a time; every
 * function is reentrant). */
#ifndef SOW_OGN_INTERNAL_H
#define SOW_OGN_INTERNAL_H

#include "ogn/ogn.h"

/* White space of the record's text. */
static inline bool ogn_is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Oware's records name moves by hole letters (Aualé's), and write a FEN of
 * Aualé's form; the other rule sets' use sow's notation. */
static inline bool ogn_letters(const struct ruleset *rs)
{
    return rs->family == SOW_OWARE;
}

/* A doubled score or capture v2 as the text writes it: "12" or "12.5". */
void ogn_fmt_half(char *buf, size_t len, int v2);

/* Final (or current) score, doubled: false if the game is not decided. */
bool ogn_result2(const struct ogn_game *g, int sc2[2]);

/* Is the game over before move num?  Then the message, and true; else the
 * legal moves of the last position in *ml. */
bool ogn_over_reason(const struct ogn_game *g, struct sow_movelist *ml, char *msg, size_t msglen,
                     int num, const char *written);

/* Play m after the last move; `written` names it in the message of a
 * refusal (SOW_E_INPUT, SOW_E_NOMEM; message in msg). */
enum sow_status ogn_play_as(struct ogn_game *g, sow_move m, const char *written, char *msg,
                            size_t msglen);

/* ogn_add_note of text[0..n) (not NUL-terminated). */
enum sow_status ogn_add_note_n(struct ogn_game *g, int ply, const char *text, size_t n);

#endif
