#include "cli.h"
int bench_movegen(const char *r, int argc, char **argv){(void)r;(void)argc;(void)argv;return 0;}
