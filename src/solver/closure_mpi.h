/* sow solve across MPI ranks (docs/distributed.md "The exact solver across
 * ranks"): what the command line calls.  Only in the sow executable built
 * with MPI (SOW_MPI); closure_mpi.c.
 *
 * Every rank runs the same `sow solve`: the same options, the same levels
 * in memory, the same closure up to its build on disk (--work DIR --disk),
 * which the ranks share (clos_mpi_build, closure_internal.h).  Rank 0 alone
 * goes on from there (the answer, the move values, the PV, --save from the
 * merged level files) and prints; the other ranks' output goes to
 * /dev/null, and they wait in the build for rank 0's next build or its exit
 * status.  Rank r > 0 works in its own WORK/rank-r-of-N (clos_mpi_work),
 * locked as rank 0 locks WORK.
 *
 * Thread-safety: from the main thread, once per process. */
#ifndef SOW_SOLVER_CLOSURE_MPI_H
#define SOW_SOLVER_CLOSURE_MPI_H

#include <stddef.h>

/* MPI started (under mpirun): this process's rank; the other ranks' stdout
 * and stderr silenced. */
int clos_mpi_start(void);

/* This rank's share of --work DIR: DIR/rank-R-of-N in buf (the other
 * ranks' --work; rank 0 keeps DIR and its share there too). */
const char *clos_mpi_work(const char *work, char *buf, size_t len);

/* The job's end, with rank 0's exit status rc (collective: every rank that
 * is not waiting in a build calls it): MPI finalised; returns rank 0's rc. */
int clos_mpi_end(int rc);

#endif
