/* A container carved from a grant (issue #27, "the hook carves a grant"):
 * on the cgroup double, a grant corecarve device-plugin's Allocate
 * recorded is carved on exactly its cores, in its class's mode; the cores
 * go back to the grant whichever way the carve goes (poststop, its cgroup
 * gone before the next hook, a refused start), in either order of two
 * containers, so a restarted container carves them again; and a grant the
 * ledger does not hold with that token (forged, freed) is refused with
 * nothing written. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "devplugin.h"
#include "hookenv.h"
#include "ledger.h"
#include "policy.h"
#include "testlib.h"

/* Two sockets of four 2-thread cores (CPUs 0-15, siblings adjacent). */
#define SYNTH "pack:2 numa:1 core:4 pu:2"

static const char policy_text[] = "reserved: \"0-1,8-9\"\n"
				  "minShared: 0\n"
				  "classes:\n"
				  "  latency:\n"
				  "    coreType: performance\n"
				  "    smt: isolate\n"
				  "    irq: leave\n"
				  "    quota: drop\n"
				  "  fast:\n"
				  "    coreType: performance\n"
				  "    smt: full\n"
				  "    irq: leave\n"
				  "    annotationMaySet: [cpus, memory]\n";

static const enum fakecg_kernel kernels[] = { FAKECG_6_1, FAKECG_6_12, FAKECG_7 };

/* The plugin over the same node: its topology, policy and state. */
struct plugin {
	struct cc_topo *t;
	struct cc_policy *p;
	struct cc_dp_resource *res;
	int nres;
	struct cc_devplugin dp;
};

/* The plugin with policy `text` (the hook's, as hookenv_init got it). */
static void plugin_open_with(struct plugin *pl, struct hookenv *e, const char *text)
{
	struct cc_err err = CC_ERR_INIT;

	pl->t = cc_topo_load(&e->src, &err);
	ck_assert_msg(pl->t != NULL, "%s", err.msg);
	pl->p = cc_policy_parse(text, strlen(text), "p.yaml", &err);
	ck_assert_msg(pl->p != NULL, "%s", err.msg);
	ck_assert_int_eq(cc_dp_resources(pl->t, pl->p, &pl->res, &pl->nres, &err), 0);
	pl->dp = (struct cc_devplugin){ .t = pl->t, .p = pl->p, .state = e->state, .res = pl->res, .nres = pl->nres };
}

static void plugin_open(struct plugin *pl, struct hookenv *e)
{
	plugin_open_with(pl, e, policy_text);
}

static void plugin_close(struct plugin *pl)
{
	free(pl->res);
	cc_policy_free(pl->p);
	cc_topo_free(pl->t);
}

static const struct cc_dp_resource *resource(const struct plugin *pl, const char *cls)
{
	for (int i = 0; i < pl->nres; i++)
		if (!strcmp(pl->res[i].class_name, cls))
			return &pl->res[i];
	ck_abort_msg("no resource for %s", cls);
	return NULL;
}

/* Allocate of devices `a` and `b` (b may be NULL) to one container: the
 * annotation it answers, into `ann` as hookenv_create's members. */
static void allocate(struct plugin *pl, const char *cls, const char *a, const char *b, char *ann, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	char *ids[] = { (char *)a, (char *)b };
	char *const *req[] = { ids };
	int nids[] = { b ? 2 : 1 };
	char grant[1][CC_DP_ID_MAX];

	ck_assert_msg(cc_dp_allocate(&pl->dp, resource(pl, cls), req, nids, 1, grant, &err) == 0, "%s", err.msg);
	snprintf(ann, len, "\"%s\": \"%s\"", CC_GRANT_KEY, grant[0]);
}

/* The carve or grant `id` in the ledger: its cpus, parked and grant ("-"
 * for each when it is not there). */
static void check_carve(struct hookenv *e, const char *id, const char *cpus, const char *parked, const char *grant)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(e->state, &err);
	const struct cc_carve *c = l ? cc_ledger_find(l, id) : NULL;
	_cleanup_free_ char *a = c ? cc_cpulist_format(c->cpus) : NULL;
	_cleanup_free_ char *b = c ? cc_cpulist_format(c->parked) : NULL;
	const char *g = c ? c->grant : "-";

	ck_assert_msg(!strcmp(a ? a : "-", cpus) && !strcmp(b ? b : "-", parked) && !strcmp(g, grant),
		      "%s: cpus %s parked %s grant %s, expected %s %s %s", id, a ? a : "-", b ? b : "-", g, cpus,
		      parked, grant);
}

/* The token a grant holds in the ledger ("" when it is not there). */
static void token_of(struct hookenv *e, const char *id, char out[CC_GRANT_TOKEN_MAX])
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(e->state, &err);
	const struct cc_carve *c = l ? cc_ledger_find(l, id) : NULL;

	snprintf(out, CC_GRANT_TOKEN_MAX, "%s", c && !strcmp(c->kind, "grant") ? c->token : "");
}

/* Container `ctr`'s cgroup in pod1, made as the runtime makes it. */
static void pod(struct hookenv *e, const char *ctr)
{
	char path[128];

	if (!fakecg_exists(e->f, "/kubepods"))
		ck_assert_int_eq(fakecg_mkdir(e->f, "/kubepods", false), 0);
	if (!fakecg_exists(e->f, "/kubepods/pod1"))
		ck_assert_int_eq(fakecg_mkdir(e->f, "/kubepods/pod1", false), 0);
	snprintf(path, sizeof(path), "/kubepods/pod1/%s", ctr);
	ck_assert_int_eq(fakecg_mkdir(e->f, path, true), 0);
}

/* The runtime removes container `ctr`'s cgroup. */
static void gone(struct hookenv *e, const char *ctr)
{
	char path[128];

	snprintf(path, sizeof(path), "/kubepods/pod1/%s", ctr);
	fakecg_exit(e->f, path);
	ck_assert_int_eq(fakecg_rmdir(e->f, path), 0);
}

/* Carved on exactly the granted cores, siblings parked as latency says;
 * the grant leaves the ledger while the carve holds its cores and comes
 * back with its token at poststop; the container's restart (a new id,
 * the kubelet's cached annotation) carves the same cores. */
START_TEST(test_grant_carved)
{
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char ann[512], tok[CC_GRANT_TOKEN_MAX], tok2[CC_GRANT_TOKEN_MAX];

	hookenv_init(&e, kernels[_i], policy_text, SYNTH);
	plugin_open(&pl, &e);
	allocate(&pl, "latency", "cpu4", "cpu10", ann, sizeof(ann));
	token_of(&e, "grant:latency:4-5,10-11", tok);
	ck_assert_int_eq(strlen(tok), CC_GRANT_TOKEN_LEN);
	pod(&e, "a");
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", ann, 200000, &err) == 0, "%s", err.msg);
	check_carve(&e, "a", "4,10", "5,11", "grant:latency:4-5,10-11");
	check_carve(&e, "grant:latency:4-5,10-11", "-", "-", "-");
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod1/a", "cpuset.cpus"), "4,10");
	/* createRuntime then prestart: the second finds the first's carve. */
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", ann, 200000, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	/* The device stays Healthy for its own resource, not for the other
	 * class on the same cores. */
	{
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(e.state, &err);

		for (int k = 0; k < 2; k++) {
			_cleanup_free_ struct cc_dp_device *d = NULL;
			int n;

			ck_assert_int_eq(cc_dp_devices(pl.t, pl.p, resource(&pl, k ? "fast" : "latency"), l, &d, &n, &err), 0);
			for (int j = 0; j < n; j++)
				if (d[j].cpu == 4)
					ck_assert_msg(d[j].healthy == !k, "cpu4 of %s: %s", k ? "fast" : "latency", d[j].holder);
		}
	}
	ck_assert_msg(hookenv_release(&e, "a", &err) == 0, "%s", err.msg);
	check_carve(&e, "a", "-", "-", "-");
	check_carve(&e, "grant:latency:4-5,10-11", "4-5,10-11", "", "");
	token_of(&e, "grant:latency:4-5,10-11", tok2);
	ck_assert_str_eq(tok, tok2);
	/* The restart, in the new cgroup the runtime makes. */
	gone(&e, "a");
	pod(&e, "a2");
	ck_assert_msg(hookenv_create(&e, "a2", 4243, "/kubepods/pod1/a2", ann, 200000, &err) == 0, "%s", err.msg);
	check_carve(&e, "a2", "4,10", "5,11", "grant:latency:4-5,10-11");
	ck_assert_msg(hookenv_release(&e, "a2", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

/* A class that uses siblings carves every thread of the granted cores. */
START_TEST(test_grant_smt_full)
{
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char ann[512];

	hookenv_init(&e, kernels[_i], policy_text, SYNTH);
	plugin_open(&pl, &e);
	allocate(&pl, "fast", "cpu6", NULL, ann, sizeof(ann));
	pod(&e, "a");
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", ann, 200000, &err) == 0, "%s", err.msg);
	check_carve(&e, "a", "6-7", "", "grant:fast:6-7");
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

/* What a pod cannot do with the annotation: name a grant the ledger
 * lacks, or one it holds with another token (the same refusal), or a
 * value that is no grant at all; carve a grant another container carves;
 * carve more than its limit pays for.  Nothing is written. */
START_TEST(test_grant_refused)
{
	static const struct {
		const char *value;
		int code;
		const char *msg;
	} bad[] = {
		{ "grant:latency:4-5:0123456789abcdef0123456789abcdef", EPERM,
		  "grant grant:latency:4-5: no such grant in the ledger; a grant is made by corecarve device-plugin's "
		  "Allocate and is freed with its pod: remove the annotation from the pod" },
		{ "grant:latency:2-3:0123456789abcdef0123456789abcdef", EPERM, "grant grant:latency:2-3: no such grant" },
		{ "grant:latency:2-3", EINVAL, "not a grant (expected \"grant:<class>:<cpus>:<token>\")" },
		{ "grant:latency:2-3:XYZ", EINVAL, "its token is not 32 lowercase hex digits" },
		{ "grant:Latency:2-3:0123456789abcdef0123456789abcdef", EINVAL, "its class is not a class name" },
		{ "grant:latency:3-2:0123456789abcdef0123456789abcdef", EINVAL, "its CPUs are not a cpu-list" },
		{ "grant:latency:2,3:0123456789abcdef0123456789abcdef", EINVAL, "not written as the ledger writes them" },
		{ "grant:latency:2:0123456789abcdef0123456789abcdef", EINVAL, "not whole online cores of this node" },
		{ "grant:nosuch:2-3:0123456789abcdef0123456789abcdef", EINVAL, "class \"nosuch\" is unknown" },
	};
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char ann[512], other[512], two[512];
	int writes;

	hookenv_init(&e, kernels[_i], policy_text, SYNTH);
	plugin_open(&pl, &e);
	allocate(&pl, "latency", "cpu2", NULL, ann, sizeof(ann));
	pod(&e, "x");
	writes = fakecg_writes(e.f);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		snprintf(other, sizeof(other), "\"%s\": \"%s\"", CC_GRANT_KEY, bad[k].value);
		ck_assert_int_eq(hookenv_create(&e, "x", 4242, "/kubepods/pod1/x", other, 200000, &err), -1);
		ck_assert_msg(err.code == bad[k].code && strstr(err.msg, bad[k].msg) &&
				      !strncmp(err.msg, "container x: annotation corecarve.io/grant: ", 44),
			      "%zu: %d %s", k, err.code, err.msg);
	}
	/* The real grant's id with another token. */
	snprintf(other, sizeof(other), "%.*s0123456789abcdef0123456789abcdef\"", (int)(strlen(ann) - 33), ann);
	ck_assert_int_eq(hookenv_create(&e, "x", 4242, "/kubepods/pod1/x", other, 200000, &err), -1);
	ck_assert_msg(err.code == EPERM && strstr(err.msg, "grant grant:latency:2-3: no such grant in the ledger"), "%s",
		      err.msg);
	/* Two cores of latency run on two CPUs (the siblings parked are the
	 * class's price, not the pod's): a limit of one does not pay. */
	allocate(&pl, "latency", "cpu6", "cpu12", two, sizeof(two));
	ck_assert_int_eq(hookenv_create(&e, "x", 4242, "/kubepods/pod1/x", two, 100000, &err), -1);
	ck_assert_msg(err.code == EPERM && strstr(err.msg, "container x: annotation corecarve.io/grant: cpus: 2 "
							   "exclusive CPUs exceed the container's CPU limit of 1"),
		      "%s", err.msg);
	check_carve(&e, "grant:latency:6-7,12-13", "6-7,12-13", "", "");
	ck_assert_int_eq(fakecg_writes(e.f), writes);
	ck_assert_int_eq(hookenv_ncarves(&e), 2);
	/* Carved, then named again by another container. */
	pod(&e, "a");
	ck_assert_msg(hookenv_create(&e, "a", 4243, "/kubepods/pod1/a", ann, 200000, &err) == 0, "%s", err.msg);
	writes = fakecg_writes(e.f);
	ck_assert_int_eq(hookenv_create(&e, "x", 4242, "/kubepods/pod1/x", ann, 200000, &err), -1);
	ck_assert_msg(err.code == EBUSY && strstr(err.msg, "grant grant:latency:2-3: carved already, for container a"),
		      "%s", err.msg);
	ck_assert_int_eq(fakecg_writes(e.f), writes);
	check_carve(&e, "a", "2", "3", "grant:latency:2-3");
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

/* maxCpus counts a grant not yet carved as its carve will count: one CPU
 * a core under smt: isolate, not every thread it books.  Two grants of
 * one core each fit a cap of 2; a third core does not. */
static const char policy_caps[] = "reserved: \"0-1,8-9\"\n"
				  "minShared: 0\n"
				  "classes:\n"
				  "  latency: {coreType: performance, smt: isolate, irq: leave, maxCpus: 2}\n";

START_TEST(test_grant_caps_count)
{
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char a[512], b[512], c[512];

	hookenv_init(&e, kernels[_i], policy_caps, SYNTH);
	plugin_open_with(&pl, &e, policy_caps);
	allocate(&pl, "latency", "cpu2", NULL, a, sizeof(a));
	allocate(&pl, "latency", "cpu4", NULL, b, sizeof(b));
	pod(&e, "a");
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", a, 100000, &err) == 0, "%s", err.msg);
	check_carve(&e, "a", "2", "3", "grant:latency:2-3");
	allocate(&pl, "latency", "cpu6", NULL, c, sizeof(c));
	pod(&e, "c");
	ck_assert_int_eq(hookenv_create(&e, "c", 4243, "/kubepods/pod1/c", c, 100000, &err), -1);
	ck_assert_msg(err.code == EPERM && strstr(err.msg, "container c: annotation corecarve.io/grant: cpus: 1 more CPUs "
							   "of class \"latency\" would make 3 on this node, "
							   "more than its 2 (policy classes.latency.maxCpus)"),
		      "%s", err.msg);
	check_carve(&e, "grant:latency:6-7", "6-7", "", "");
	/* b's own grant counts once, as its carve: 1 (a) + 1 (c's grant) + 1. */
	pod(&e, "b");
	ck_assert_int_eq(hookenv_create(&e, "b", 4244, "/kubepods/pod1/b", b, 100000, &err), -1);
	ck_assert_msg(strstr(err.msg, "would make 3 on this node"), "%s", err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 3);
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

/* A placement annotation beside a grant may refine what its class lets
 * it, never change the class or the count. */
START_TEST(test_grant_with_placement)
{
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char ann[512], both[1024];

	hookenv_init(&e, kernels[_i], policy_text, SYNTH);
	plugin_open(&pl, &e);
	allocate(&pl, "fast", "cpu2", NULL, ann, sizeof(ann));
	pod(&e, "a");
	snprintf(both, sizeof(both), "%s, \"%s\": \"{class: latency, cpus: 1}\"", ann, CC_ANNOTATION_KEY);
	ck_assert_int_eq(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", both, 200000, &err), -1);
	ck_assert_msg(strstr(err.msg, "container a: annotation corecarve.io/placement: class: \"latency\", but the "
				      "container's grant (corecarve.io/grant) is of class \"fast\""),
		      "%s", err.msg);
	snprintf(both, sizeof(both), "%s, \"%s\": \"{class: fast, cpus: 4}\"", ann, CC_ANNOTATION_KEY);
	ck_assert_int_eq(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", both, 400000, &err), -1);
	ck_assert_msg(strstr(err.msg, "annotation corecarve.io/placement: cpus: 4, but the container's grant "
				      "(grant:fast:2-3) carves 2; set cpus: 2 or remove it"),
		      "%s", err.msg);
	ck_assert_int_eq(hookenv_ncarves(&e), 1);
	snprintf(both, sizeof(both), "%s, \"%s\": \"{class: fast, cpus: 2, memory: any}\"", ann, CC_ANNOTATION_KEY);
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", both, 200000, &err) == 0, "%s", err.msg);
	check_carve(&e, "a", "2-3", "", "grant:fast:2-3");
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

/* Two containers' grants, taken back by poststop or by the next hook's
 * gc (the cgroup gone first), in every combination and both orders; each
 * time the grants are back whole.  Then a restart refused at each of its
 * writes in turn (before the journal and after): the grant back whole
 * after each, and the next try carves. */
enum how { BY_POSTSTOP, BY_GC, NHOW };

START_TEST(test_grant_release_orders)
{
	int k = _i % 3, how_a = (_i / 3) % NHOW, how_b = (_i / 6) % NHOW, first_b = _i / 12, nth;
	const char *ids[2] = { first_b ? "b" : "a", first_b ? "a" : "b" };
	struct hookenv e;
	struct plugin pl;
	struct cc_err err = CC_ERR_INIT;
	char a[512], b[512];

	hookenv_init(&e, kernels[k], policy_text, SYNTH);
	plugin_open(&pl, &e);
	allocate(&pl, "latency", "cpu2", "cpu4", a, sizeof(a));
	allocate(&pl, "fast", "cpu6", NULL, b, sizeof(b));
	pod(&e, "a");
	pod(&e, "b");
	ck_assert_msg(hookenv_create(&e, "a", 4242, "/kubepods/pod1/a", a, 200000, &err) == 0, "%s", err.msg);
	ck_assert_msg(hookenv_create(&e, "b", 4243, "/kubepods/pod1/b", b, 200000, &err) == 0, "%s", err.msg);
	for (int n = 0; n < 2; n++) {
		if ((!strcmp(ids[n], "a") ? how_a : how_b) == BY_POSTSTOP) {
			ck_assert_msg(hookenv_release(&e, ids[n], &err) == 0, "%s", err.msg);
			gone(&e, ids[n]);
			continue;
		}
		gone(&e, ids[n]);
		/* The next hook (another container's) gc's it. */
		pod(&e, "z");
		ck_assert_msg(hookenv_create(&e, "z", 4300 + n, "/kubepods/pod1/z",
					     "\"corecarve.io/placement\": \"{class: latency, cpus: 1}\"", 100000, &err) == 0,
			      "%s", err.msg);
		ck_assert_msg(hookenv_release(&e, "z", &err) == 0, "%s", err.msg);
		gone(&e, "z");
	}
	check_carve(&e, "grant:latency:2-5", "2-5", "", "");
	check_carve(&e, "grant:fast:6-7", "6-7", "", "");
	ck_assert_int_eq(hookenv_ncarves(&e), 2);
	pod(&e, "a3");
	for (nth = 1;; nth++) {
		int rc;

		fakecg_fail_write(e.f, nth, EIO);
		rc = hookenv_create(&e, "a3", 4244, "/kubepods/pod1/a3", a, 200000, &err);
		fakecg_fail_write(e.f, 0, 0);
		if (rc == 0)
			break;
		check_carve(&e, "grant:latency:2-5", "2-5", "", "");
		check_carve(&e, "a3", "-", "-", "-");
		ck_assert_msg(nth < 64, "%s", err.msg);
	}
	ck_assert_int_gt(nth, 1);
	check_carve(&e, "a3", "2,4", "3,5", "grant:latency:2-5");
	ck_assert_str_eq(fakecg_get(e.f, "/kubepods/pod1/a3", "cpuset.cpus"), "2,4");
	plugin_close(&pl);
	hookenv_fini(&e);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("grant");
	TCase *t = tcase_create("hook");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_grant_carved, 0, 3);
	tcase_add_loop_test(t, test_grant_smt_full, 0, 3);
	tcase_add_loop_test(t, test_grant_refused, 0, 3);
	tcase_add_loop_test(t, test_grant_with_placement, 0, 3);
	tcase_add_loop_test(t, test_grant_caps_count, 0, 3);
	tcase_add_loop_test(t, test_grant_release_orders, 0, 3 * NHOW * NHOW * 2);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(suite)
