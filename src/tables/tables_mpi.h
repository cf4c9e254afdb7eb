/* sow — endgame tables built across MPI ranks (only with -Dmpi=enabled or
 * auto with MPI found: then SOW_MPI is defined).  docs/distributed.md.
 *
 * Every rank runs the same tb_build_mpi; each owns a contiguous slice of
 * each level's index range:
 *
 *   level n, E entries, R ranks:     slice(r) = [ floor(E*r/R), floor(E*(r+1)/R) )
 *
 *     0          E/R        2E/R                    E
 *     |  rank 0   |  rank 1   |   ...   |  rank R-1 |
 *
 *   e.g. E = 10, R = 3: [0,3) [3,6) [6,10).
 *
 * Indices are 64-bit (levels past 2^31 and 2^32 entries); what travels
 * between ranks is an entry's index local to its owner's slice, 4 bytes,
 * so every slice must have fewer than 2^31 entries: a level needs at least
 * ceil(E / (2^31 - 1)) ranks, and is refused up front with fewer
 * (mpi_slice.h).
 *
 * A rank generates the moves of its slice with its OpenMP threads, probes
 * the lower levels (mapped from the shared directory, or, "owned", each
 * rank keeping its slice of every lower level and the probes sent to the
 * owners in one batch per level), and solves its slice's nodes with its
 * threads; finalisations that concern another rank's nodes travel as 4-byte
 * updates in bulk-synchronous supersteps (MPI_Alltoallv).  A final node's
 * predecessors come from reverse lists built from the in-level edges sent to
 * their targets' owners ("fast", build.c's scheme) or from un-sowing the
 * node on its owner ("lean", lean.c's scheme: nothing stored, half the
 * traffic; for the relay rule sets, which have no unmoves, the edges sent
 * to their targets' owners in batches and kept in temporary files on each
 * rank's disk, lean_relay.h).  Each rank writes its slice of the values into the level's
 * temporary file at its offset (MPI-IO); the payload checksum is chained
 * through the ranks and rank 0 writes the header and renames: the file is
 * exactly tb_file_write's (same header, checksum, temp file and rename),
 * and no rank ever holds the whole level.
 *
 * Thread-safety: collective; call from one thread of every rank (MPI is
 * initialised by the first call; several builds may follow in one job, e.g.
 * `tables build --rules A,B`), then tb_mpi_finish once.
 */
#ifndef SOW_TABLES_MPI_H
#define SOW_TABLES_MPI_H

#include <stdbool.h>

#include "tables/tables.h"

/* True if this process was started by an MPI launcher (mpirun/srun with
 * OpenMPI or PMIx in the environment). */
bool tb_mpi_launched(void);

/* tb_build across the ranks of MPI_COMM_WORLD, same contract; every rank
 * returns the same status.  Progress and level_done are called on rank 0
 * only.  *rank receives this process's rank (print results on rank 0).
 * Initialises MPI if needed; call it again for another build in the same
 * job (another rule set, board or directory), then tb_mpi_finish. */
enum sow_status tb_build_mpi(const struct ruleset *rs, const char *dir, int max_level,
                             const struct tb_build_opts *opt, int *rank, struct sow_error *e);

/* MPI_Finalize, if MPI was initialised and not finalised yet (collective:
 * every rank, after its last tb_build_mpi). */
void tb_mpi_finish(void);

#endif
