/* corecarve: transient cgroups (`corecarve exec --carve`): emptying and
 * removing one.  Creation is cc_cg_mkdir + a write to cgroup.procs. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"

/* Long enough for SIGKILLed tasks to exit (they only have to run their
 * exit path), short enough not to hang a shell forever. */
#define EMPTY_WAIT_MS 5000
#define EMPTY_STEP_MS 20

int cc_cg_populated(const struct cc_cg *cg, const char *cgroup, bool *populated, struct cc_err *err)
{
	_cleanup_free_ char *ev = cc_cg_read(cg, cgroup, "cgroup.events", err);
	const char *p;

	if (!ev)
		return -1;
	for (p = ev; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, "populated ", 10)) {
			*populated = p[10] == '1';
			return 0;
		}
	}
	return cc_err_set(err, EINVAL, "%s/cgroup.events: no \"populated\" line", cgroup);
}

int cc_cg_gc_probe(const char *cgroup, void *arg, struct cc_err *err)
{
	const struct cc_cg *cg = arg;
	struct cc_err e = CC_ERR_INIT;
	char path[PATH_MAX];
	bool populated;
	int r;

	/* The ledger keeps a carve's cgroup as the runtime named it, with or
	 * without its leading "/". */
	if (cc_path(path, sizeof(path), err, "/%s", cgroup + strspn(cgroup, "/")) < 0)
		return -1;
	r = cc_cg_is_dir(cg, path, err);
	if (r <= 0)
		return r < 0 ? -1 : CC_LEDGER_CGROUP_GONE;
	if (cc_cg_populated(cg, path, &populated, &e) < 0)
		return CC_LEDGER_CGROUP_USED;
	return populated ? CC_LEDGER_CGROUP_USED : CC_LEDGER_CGROUP_EMPTY;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* SIGKILL every process listed in cgroup.procs. */
static int kill_listed(const struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	_cleanup_free_ char *procs = cc_cg_read(cg, cgroup, "cgroup.procs", err);
	char *save = NULL;

	if (!procs)
		return -1;
	for (char *tok = strtok_r(procs, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		char *end;
		long pid = strtol(tok, &end, 10);

		if (*end || pid <= 0)
			return cc_err_set(err, EINVAL, "%s/cgroup.procs: unexpected line \"%.16s\"", cgroup, tok);
		if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
			return cc_err_sys(err, errno, "kill %ld in %s", pid, cgroup);
	}
	return 0;
}

int cc_cg_empty(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	bool populated = true, has_kill;

	if (!cg->ops)
		return cc_err_set(err, EPERM, "empty %s: cgroups are only changed on the real host", cgroup);
	if (!cc_cg_exists(cg, cgroup, NULL))
		return 0;
	/* cgroup.kill (5.14) kills the whole subtree atomically, forks in
	 * flight included; older kernels get a kill loop over cgroup.procs. */
	has_kill = cc_cg_exists(cg, cgroup, "cgroup.kill");
	for (int waited = 0; waited <= EMPTY_WAIT_MS; waited += EMPTY_STEP_MS) {
		if (cc_cg_populated(cg, cgroup, &populated, err) < 0)
			return -1;
		if (!populated)
			return 0;
		if (waited == 0 && has_kill) {
			if (cc_cg_write(cg, cgroup, "cgroup.kill", "1", NULL, err) < 0)
				return -1;
		} else if (!has_kill && kill_listed(cg, cgroup, err) < 0) {
			return -1;
		}
		sleep_ms(EMPTY_STEP_MS);
	}
	return cc_err_set(err, EBUSY, "%s still has processes %d ms after SIGKILL", cgroup, EMPTY_WAIT_MS);
}
