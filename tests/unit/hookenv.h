/* The hook's create and release paths on the cgroup double (fakecg.h): a
 * temporary root with a policy, a state directory and a synthetic
 * topology, and a createRuntime as crun hands it over.  Shared by the
 * suites that drive cc_container_create (test_admit, test_grant). */
#ifndef CC_HOOKENV_H
#define CC_HOOKENV_H

#include <limits.h>

#include "ctx.h"
#include "fakecg.h"
#include "root.h"
#include "topo.h"

struct cc_err;

struct hookenv {
	char dir[PATH_MAX];
	char state[PATH_MAX + 16];
	char policy[PATH_MAX + 16];
	struct fakecg *f;
	struct cc_root *root;
	struct cc_topo_source src;
	struct cc_ctx ctx;
};

/* A fresh tree under /dev/shm (else /tmp): `policy` as its policy file,
 * fakecg of kernel `k` with CPUs 0-15, the topology `synth`
 * (CC_TOPO_SYNTHETIC). */
void hookenv_init(struct hookenv *e, enum fakecg_kernel k, const char *policy, const char *synth);
void hookenv_fini(struct hookenv *e);

/* createRuntime for container `id` in `cgroup`: its init's
 * /proc/<pid>/cgroup (under the root), the bundle's config.json with
 * `annotations` (a JSON object's members, e.g. "\"k\": \"v\"") and, for
 * quota > 0, linux.resources.cpu (period 100000, and the shares the kubelet
 * writes for a request equal to the limit).  cc_container_create's
 * answer. */
int hookenv_create(struct hookenv *e, const char *id, int pid, const char *cgroup, const char *annotations,
		   long long quota, struct cc_err *err);

/* The same with linux.resources.cpu.shares `shares` (< 0: none written). */
int hookenv_create_res(struct hookenv *e, const char *id, int pid, const char *cgroup, const char *annotations,
		       long long quota, long long shares, struct cc_err *err);

/* poststop for container `id`. */
int hookenv_release(struct hookenv *e, const char *id, struct cc_err *err);

/* How many carves the ledger holds (0 when there is none). */
int hookenv_ncarves(struct hookenv *e);

#endif
