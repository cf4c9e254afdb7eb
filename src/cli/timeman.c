/* The time of one move under a game clock (timeman.h). */
#include "timeman.h"

double timeman_move_seconds(double left_ms, double inc_ms, double movestogo)
{
    if (left_ms < 0)
        left_ms = 0;
    /* a 30th: mancala games of 2x6 last 40-60 moves a side from the start,
     * fewer from an opening, and the last ones are often in the tables */
    double per = left_ms / (movestogo > 0 ? movestogo : 30) + 0.8 * inc_ms;
    if (per > left_ms / 2)
        per = left_ms / 2;
    double s = per / 1000;
    return s < 0.005 ? 0.005 : s;
}

struct timeman timeman_move(double left_ms, double inc_ms, double movestogo)
{
    struct timeman t;
    t.soft = timeman_move_seconds(left_ms, inc_ms, movestogo);
    /* room for an open move: the soft stop scales the share by up to 2.8 */
    double quarter = (left_ms > 0 ? left_ms : 0) / 4000;
    t.hard = 3 * t.soft;
    if (t.hard > quarter)
        t.hard = quarter > t.soft ? quarter : t.soft;
    return t;
}
