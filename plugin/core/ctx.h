/* corecarve: what an entry point resolved from argv and the environment,
 * handed to the flows (a carve's create and release, exec, vm, audit
 * --fix).  Only entry points fill it; the library reads it. */
#ifndef CC_CTX_H
#define CC_CTX_H

#include <stdbool.h>
#include <stdio.h>

#include "root.h"

struct cc_cg_ops;
struct cc_ledger_lock;
struct cc_topo_source;

/* What a release found under its id, for the hook's journal line. */
struct cc_release_note {
	bool found;           /* a carve was recorded under the id */
	char class_name[64];
	char mode[32];
	char cpus[256];       /* its CPUs as a list (cut when longer) */
};

struct cc_ctx {
	const struct cc_root *root;
	const char *policy_path; /* NULL: /etc/corecarve/policy.yaml or embedded */
	const char *state_dir;   /* NULL: /run/corecarve */
	const struct cc_ledger_lock *lock; /* the ledger lock's wait and holder; NULL: ledger.h's defaults */
	const char *fault;       /* fault-injection step name, NULL normally */
	FILE *log;               /* informational lines (stderr in the hook) */
	bool verbose;            /* also trace every cgroup write to log */
	/* Read and decide, write nothing: the ledger read without its
	 * write lock, no gc (what it would take up goes to log), no topology
	 * cache, stop before the journal.  The hook under --root. */
	bool dry_run;
	/* The kernel's side, for the unit tests of the whole flow: cgroup
	 * writes through a test double over a temp tree (NULL: the host's,
	 * when root is the host) and a topology other than root's sysfs
	 * (NULL: root's). */
	const struct cc_cg_ops *cg_ops;
	void *cg_ops_arg;
	const struct cc_topo_source *topo_src;
	/* When set, cc_container_release fills it (the hook logs it). */
	struct cc_release_note *released;
};

#endif
