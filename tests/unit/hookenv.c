/* The hook on the cgroup double (hookenv.h). */
#define _GNU_SOURCE
#include "hookenv.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "container.h"
#include "ledger.h"
#include "oci.h"
#include "testlib.h"

void hookenv_init(struct hookenv *e, enum fakecg_kernel k, const char *policy, const char *synth)
{
	struct cc_err err = CC_ERR_INIT;

	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "%s/cc-hook-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->state, sizeof(e->state), "%s/state", e->dir);
	snprintf(e->policy, sizeof(e->policy), "%s/policy.yaml", e->dir);
	ck_assert_int_eq(mkdir(e->state, 0700), 0);
	cc_test_write_file(e->dir, "policy.yaml", policy);
	e->f = fakecg_new(e->dir, k, "0-15", "0-1");
	ck_assert_ptr_nonnull(e->f);
	e->root = cc_root_open(e->dir, &err);
	ck_assert_msg(e->root != NULL, "%s", err.msg);
	e->src = (struct cc_topo_source){ .kind = CC_TOPO_SYNTHETIC, .arg = synth };
	e->ctx = (struct cc_ctx){ .root = e->root,
				  .policy_path = e->policy,
				  .state_dir = e->state,
				  .cg_ops = &fakecg_ops,
				  .cg_ops_arg = e->f,
				  .topo_src = &e->src };
}

void hookenv_fini(struct hookenv *e)
{
	char *out = NULL;

	cc_root_free(e->root);
	fakecg_free(e->f);
	cc_test_sh(&out, "rm -rf '%s'", e->dir);
	free(out);
}

int hookenv_create(struct hookenv *e, const char *id, int pid, const char *cgroup, const char *annotations,
		   long long quota, struct cc_err *err)
{
	/* The kubelet: request = limit, shares = milliCPU * 1024 / 1000. */
	return hookenv_create_res(e, id, pid, cgroup, annotations, quota, quota > 0 ? quota / 100 * 1024 / 1000 : -1,
				  err);
}

int hookenv_create_res(struct hookenv *e, const char *id, int pid, const char *cgroup, const char *annotations,
		       long long quota, long long shares, struct cc_err *err)
{
	char proc[64], text[PATH_MAX + 8], bundle[2 * PATH_MAX], state[3 * PATH_MAX], res_cpu[128] = "",
									   shares_s[40] = "";
	_cleanup_free_ char *config = NULL;
	struct cc_oci_state st;
	struct cc_create_result res;
	int rc;

	snprintf(proc, sizeof(proc), "proc/%d", pid);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/%s' '%s/bundle-%s'", e->dir, proc, e->dir, id), 0);
	snprintf(text, sizeof(text), "0::%s\n", cgroup);
	snprintf(bundle, sizeof(bundle), "%s/%s", e->dir, proc);
	cc_test_write_file(bundle, "cgroup", text);
	snprintf(bundle, sizeof(bundle), "%s/bundle-%s", e->dir, id);
	if (shares >= 0)
		snprintf(shares_s, sizeof(shares_s), ", \"shares\": %lld", shares);
	if (quota > 0)
		snprintf(res_cpu, sizeof(res_cpu), ", \"resources\": {\"cpu\": {\"quota\": %lld, \"period\": 100000%s}}",
			 quota, shares_s);
	ck_assert_int_gt(asprintf(&config,
				  "{\"ociVersion\": \"1.0.2\", \"annotations\": {%s}, "
				  "\"linux\": {\"cgroupsPath\": \"%s\"%s}}",
				  annotations, cgroup, res_cpu),
			 0);
	cc_test_write_file(bundle, "config.json", config);
	snprintf(state, sizeof(state), "{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"creating\", \"pid\": %d, "
		 "\"bundle\": \"%s\"}", id, pid, bundle);
	cc_err_clear(err);
	ck_assert_msg(cc_oci_state_parse(state, strlen(state), &st, err) == 0, "%s", err->msg);
	rc = cc_container_create(&e->ctx, &st, &res, err);
	cc_decision_fini(&res.decision);
	cc_oci_state_fini(&st);
	return rc;
}

int hookenv_release(struct hookenv *e, const char *id, struct cc_err *err)
{
	cc_err_clear(err);
	return cc_container_release(&e->ctx, id, "container", err);
}

int hookenv_ncarves(struct hookenv *e)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(e->state, &err);

	return l ? cc_ledger_ncarves(l) : 0;
}
