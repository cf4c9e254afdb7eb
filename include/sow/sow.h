/* sow — the public C API of libsow, in one include.
 *
 *   #include <sow/sow.h>
 *   cc prog.c $(pkg-config --cflags --libs sow)
 *
 * What the shared library exports (declared SOW_API, sow/export.h; the rest
 * of libsow is hidden and may change):
 *
 *   sow/rules.h      rule sets: rules_init (by name or alias, board size),
 *                    rules_start, the position and move types, move
 *                    generation (rules_generate: every legal move with the
 *                    position it leads to and the seeds it captures; the
 *                    settlement when the game is over), rules_find_move
 *   sow/position.h   the notation: pos_parse / pos_format of positions,
 *                    move_parse / move_format of moves, pos_draw
 *   sow/search.h     the solver: search_new, search_solve (exact, or bounded
 *                    by depth or time: the engine), search_move_values
 *   sow/analyse.h    one position's move values within a time budget (exact,
 *                    else the engine), as JSON like sow serve's /api/RULES
 *   sow/tables_probe.h  endgame tables: tb_open a directory of them,
 *                    tb_probe a position, tb_close; the index and level files
 *   sow/status.h     errors are values: enum sow_status + a one-line message
 *   sow/version.h    sow_version, sow_commit
 *
 * Example (examples/solve.c does this with error handling and the PV):
 *
 *   struct ruleset rs;  sow_position p;  struct sow_error e;
 *   rules_init(&rs, "awari", 6, -1, &e);                       // SOW_OK
 *   pos_parse(&rs, "0,0,1,2,0,3/1,0,0,0,1,0/A", &p, &e);       // SOW_OK
 *   struct sow_movelist ml;  rules_generate(&rs, &p, &ml);    // 3 moves
 *   ... search_new(&rs, &opts, &s, &e), search_solve(s, &p, &r): r.value == -4
 *
 * Thread-safety: as each header states; in short, a struct ruleset is
 * immutable and shared freely, a search context belongs to one caller at a
 * time, a loaded table set is read-only.
 */
#ifndef SOW_SOW_H
#define SOW_SOW_H

#include "sow/analyse.h"
#include "sow/export.h"
#include "sow/position.h"
#include "sow/rules.h"
#include "sow/search.h"
#include "sow/status.h"
#include "sow/tables_probe.h"
#include "sow/version.h"

#endif
