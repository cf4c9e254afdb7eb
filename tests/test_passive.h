/* Included by the test files whose builders run many short parallel rounds:
 * on a machine shared with other jobs, spinning OpenMP threads waste the
 * cores the other work needs.  The wait policy is read when libgomp starts,
 * so the test program restarts itself once with it set (meson's test setup
 * sets it too; this covers a test program run by hand). */
#ifndef SOW_TEST_PASSIVE_H
#define SOW_TEST_PASSIVE_H

#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void passive_wait(int argc, char **argv)
{
    (void)argc;
    if (getenv("OMP_WAIT_POLICY"))
        return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
}

#endif
