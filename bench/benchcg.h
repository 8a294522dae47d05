/* A cgroup v2 tree for the decision benchmark: directories and control
 * files under <root>/sys/fs/cgroup that corecarve reads through its root,
 * and write operations (struct cc_cg_ops) that store what is written, as
 * the kernel shows it back.
 *
 * It is not a model of the kernel's cpuset rules — the unit tests' double
 * (tests/unit/fakecg.c) is, and it recomputes every cgroup's effective set
 * on every write, quadratic in the cgroups: a node of 683 carves has about
 * 1400 of them.  Here a write costs what it costs corecarve on a host: an
 * open, a write and a close of the file, plus the effective file that
 * follows from it (cpuset.cpus -> cpuset.cpus.effective, the exclusive set
 * -> cpuset.cpus.exclusive.effective).  That is all the plan, the apply and
 * its read-backs, and the undo need to run exactly the code they run on a
 * host, in the order they run it; what the kernel does inside a write
 * (rebuilding scheduling domains) is not corecarve's time and is not here. */
#ifndef CC_BENCHCG_H
#define CC_BENCHCG_H

#include <stdbool.h>

#include "cgroup.h"

struct benchcg;

extern const struct cc_cg_ops benchcg_ops;

/* The tree at <rootdir>/sys/fs/cgroup, the root cgroup holding `cpus` and
 * `mems`; dies on failure (benchmarks are entry points). */
struct benchcg *benchcg_new(const char *rootdir, const char *cpus, const char *mems);
void benchcg_free(struct benchcg *b);

/* What a runtime or the kubelet does: make a cgroup (its parent must
 * exist), write one of its files, remove it.  0 or an errno. */
int benchcg_mkdir(struct benchcg *b, const char *cgroup);
int benchcg_write(struct benchcg *b, const char *cgroup, const char *file, const char *value);
int benchcg_rmdir(struct benchcg *b, const char *cgroup);
/* The writes made through benchcg_ops so far. */
long benchcg_writes(const struct benchcg *b);

#endif
