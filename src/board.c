#include "sow/board.h"

#define Z 0
#define F BOARD_ONES
/* board_ones_tab[k + 40] = lanes [0, clamp(k, 0, 8)) set to 0x01 */
const uint64_t board_ones_tab[89] = {
    Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* -40..-21 */
    Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, /* -20..-1 */
    Z, 0x01, 0x0101, 0x010101, 0x01010101, 0x0101010101, 0x010101010101,
    0x01010101010101, F,                                       /* 0..8 */
    F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, /* 9..28 */
    F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, /* 29..48 */
};

_Static_assert(sizeof board_ones_tab / sizeof board_ones_tab[0] == 89, "table covers -40..48");
