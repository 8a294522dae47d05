/* The node audit: each check as a pure function of a ledger, a topology,
 * a policy and a snapshot built in memory (the snapshot is data: what a
 * reader read, not a stand-in for the kernel, whose behaviour the e2e
 * scenario 30-audit tests on real kernels).  Also the parsers, the
 * textfile, and the reader and the CLI on a captured tree under --root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "vm.h"
#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "ledger_int.h" /* white-box: ledgers made in memory, carves the loader would refuse */
#include "sandbox.h"
#include "testlib.h"

/* ---- fixtures ------------------------------------------------------------ */

/* /proc/<pid>/stat after the name: fields 3 to 25, the start time (22) 777. */
#define STAT_TAIL " S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 777 2000000 100 18446744073709551615\n"

/* The e2e guest's shape: 2 packages x 4 cores x 2 threads, siblings
 * adjacent, node 0 = 0-7, node 1 = 8-15. */
static struct cc_topo *topo_guest(void)
{
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = "pack:2 numa:1 core:4 pu:2" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo *t = cc_topo_load(&src, &err);

	ck_assert_msg(t != NULL, "%s", err.msg);
	return t;
}

static struct cc_policy *policy_guest(void)
{
	static const char text[] = "reserved: \"0-1,8-9\"\n"
				   "classes:\n"
				   "  latency: {coreType: performance, smt: isolate, quota: drop}\n"
				   "  isolated: {coreType: performance, smt: isolate, partition: isolated}\n"
				   "  keeper: {coreType: performance, smt: isolate, quota: keep}\n";
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_parse(text, sizeof(text) - 1, "test", &err);

	ck_assert_msg(p != NULL, "%s", err.msg);
	return p;
}

static void set(hwloc_bitmap_t b, const char *list)
{
	struct cc_err err = CC_ERR_INIT;

	ck_assert_msg(cc_cpulist_parse(list, b, "test", &err) == 0, "%s", err.msg);
}

/* A ledger in memory (no state directory: the checks never write it). */
static struct cc_ledger *ledger_new(void)
{
	struct cc_ledger *l = calloc(1, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	l->lockfd = l->dirfd = -1;
	l->sections = json_object();
	return l;
}

static struct cc_carve *carve_add(struct cc_ledger *l, const char *id, const char *cgroup, const char *mode,
				  const char *cls, const char *cpus, const char *parked, const char *mems)
{
	struct cc_carve *c;

	l->carves = realloc(l->carves, (size_t)(l->ncarves + 1) * sizeof(*l->carves));
	ck_assert_ptr_nonnull(l->carves);
	c = l->carves[l->ncarves++] = ledger_carve_new();
	ck_assert_ptr_nonnull(c);
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->kind, sizeof(c->kind), "container");
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", cgroup);
	snprintf(c->mode, sizeof(c->mode), "%s", mode);
	snprintf(c->class_name, sizeof(c->class_name), "%s", cls);
	set(c->cpus, cpus);
	set(c->parked, parked);
	set(c->mems, mems);
	c->exclusive = true;
	c->steer_irqs = true;
	return c;
}

/* Add a cgroup whose parent is already there; effective "" inherits. */
static struct cc_audit_cgroup *cg(struct cc_audit_snap *s, const char *path, const char *effective)
{
	struct cc_err err = CC_ERR_INIT;
	char parent[PATH_MAX];
	int p = -1, i;

	if (strcmp(path, "/")) {
		cc_cg_parent(path, parent, sizeof(parent));
		p = cc_audit_snap_find(s, parent);
		ck_assert_msg(p >= 0, "parent of %s missing", path);
	}
	i = cc_audit_snap_add_cgroup(s, path, p, &err);
	ck_assert_msg(i >= 0, "%s", err.msg);
	if (*effective)
		set(s->cgroups[i].effective, effective);
	else if (p >= 0)
		hwloc_bitmap_copy(s->cgroups[i].effective, s->cgroups[p].effective);
	s->cgroups[i].has_cpuset = p >= 0;
	snprintf(s->cgroups[i].partition, sizeof(s->cgroups[i].partition), "%s", p >= 0 ? "member" : "");
	s->cgroups[i].populated = true;
	return &s->cgroups[i];
}

struct world {
	struct cc_topo *topo;
	struct cc_policy *policy;
	struct cc_ledger *ledger;
	struct cc_audit_snap snap;
	struct cc_audit_report rep;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->topo = topo_guest();
	w->policy = policy_guest();
	w->ledger = ledger_new();
}

static void world_fini(struct world *w)
{
	cc_audit_report_fini(&w->rep);
	cc_audit_snap_fini(&w->snap);
	cc_ledger_close(w->ledger);
	cc_policy_free(w->policy);
	cc_topo_free(w->topo);
}

/* A remote-partition carve c1 at /kubepods/pod1/c1 on 2,4 (parked 3,5), as
 * the hook leaves it on 6.12, with a peer p1 and the parked partition. */
static void world_remote(struct world *w)
{
	struct cc_audit_cgroup *g;

	world_init(w);
	carve_add(w->ledger, "c1", "/kubepods/pod1/c1", "remote-partition", "latency", "2,4", "3,5", "0");
	cg(&w->snap, "/", "0-1,6-15");
	g = cg(&w->snap, "/kubepods", "");
	g->exclusive = hwloc_bitmap_alloc();
	set(g->exclusive, "2,4");
	g = cg(&w->snap, "/kubepods/pod1", "");
	g->exclusive = hwloc_bitmap_alloc();
	set(g->exclusive, "2,4");
	g = cg(&w->snap, "/kubepods/pod1/c1", "2,4");
	set(g->cpus, "2,4");
	g->exclusive = hwloc_bitmap_alloc();
	set(g->exclusive, "2,4");
	snprintf(g->partition, sizeof(g->partition), "root");
	g->mems = hwloc_bitmap_alloc();
	set(g->mems, "0");
	cg(&w->snap, "/kubepods/pod1/p1", "");
	g = cg(&w->snap, "/corecarve.parked", "3,5");
	set(g->cpus, "3,5");
	snprintf(g->partition, sizeof(g->partition), "isolated");
	g->populated = false;
}

/* The same carve in cpuset-only mode (6.1): the peer was narrowed. */
static void world_soft(struct world *w)
{
	struct cc_audit_cgroup *g;

	world_init(w);
	carve_add(w->ledger, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	cg(&w->snap, "/", "0-15");
	cg(&w->snap, "/kubepods", "");
	cg(&w->snap, "/kubepods/pod1", "");
	g = cg(&w->snap, "/kubepods/pod1/c1", "2,4");
	set(g->cpus, "2,4");
	g->mems = hwloc_bitmap_alloc();
	set(g->mems, "0");
	g = cg(&w->snap, "/kubepods/pod1/p1", "0-1,6-15");
	set(g->cpus, "0-1,6-15");
}

/* Index, run one check, return the findings as "CODE object" lines. */
static const char *run_check(struct world *w, cc_audit_check_fn fn)
{
	static char buf[4096];
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_in in = { w->ledger, w->topo, w->policy, &w->snap };
	size_t n = 0;

	ck_assert_int_eq(cc_audit_snap_index(&w->snap, w->ledger, &err), 0);
	cc_audit_report_fini(&w->rep);
	ck_assert_msg(fn(&in, &w->rep, &err) == 0, "%s", err.msg);
	buf[0] = '\0';
	for (int i = 0; i < w->rep.n && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s %s", i ? "\n" : "",
				      cc_audit_code_name(w->rep.f[i].code), w->rep.f[i].object);
	return buf;
}

static int run_all(struct world *w, const char **out)
{
	static char buf[4096];
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_in in = { w->ledger, w->topo, w->policy, &w->snap };
	size_t n = 0;

	ck_assert_int_eq(cc_audit_snap_index(&w->snap, w->ledger, &err), 0);
	cc_audit_report_fini(&w->rep);
	ck_assert_msg(cc_audit_run(&in, &w->rep, &err) == 0, "%s", err.msg);
	buf[0] = '\0';
	for (int i = 0; i < w->rep.n && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s %s", i ? "\n" : "",
				      cc_audit_code_name(w->rep.f[i].code), w->rep.f[i].object);
	*out = buf;
	return w->rep.n;
}

static struct cc_audit_cgroup *at(struct world *w, const char *path)
{
	int i = cc_audit_snap_find(&w->snap, path);

	ck_assert_msg(i >= 0, "no cgroup %s", path);
	return &w->snap.cgroups[i];
}

/* ---- codes and the report ------------------------------------------------ */

START_TEST(test_codes_stable)
{
	static const char *const names[] = {
		"CARVE_DRIFT", "PARTITION_INVALID", "PARTITION_MISSING", "OVERLAP", "RESERVED_CARVED",
		"SOFT_EXCLUSIVITY_LEAK", "SPLIT_CORE", "MEMS_MISALIGNED", "IRQ_ON_CARVE", "IRQ_COUNTS_ON_CARVE",
		"QUOTA_ON_CARVE", "QUOTA_WITH_PINNING", "TASK_ESCAPED", "STALE_RECORD", "UNKNOWN_CARVE",
		"KUBELET_STATIC_CPU_MANAGER", "VM_MIXED_CLASSES", "VM_SHARED_CPU", "VM_DRIFT", "VM_GONE",
		"POWER_DRIFT", "POWER_NOT_RESTORED", "RELEASE_PENDING", "RECORD_ORPHAN", "RECORD_DRIFT",
		"LEDGER_MISSING",
		"TASKS_HIDDEN", "CGROUP_UNREADABLE", "SHARED_NARROW", "TASKS_UNREAD",
	};

	ck_assert_int_eq(CC_AUDIT_NCODES, (int)(sizeof(names) / sizeof(names[0])));
	for (int i = 0; i < CC_AUDIT_NCODES; i++) {
		ck_assert_str_eq(cc_audit_code_name((enum cc_audit_code)i), names[i]);
		ck_assert_int_eq(cc_audit_code_parse(names[i]), i);
	}
	ck_assert_int_eq(cc_audit_code_parse("DRIFT"), -1);
	ck_assert_str_eq(cc_audit_code_name(CC_AUDIT_NCODES), "?");
}
END_TEST

/* A finding's text quotes what was read (a cgroup's name is anyone's in a
 * delegated subtree): cut between characters at the field's size, with
 * bidi controls escaped, so the table and the JSON (which takes only valid
 * UTF-8) show what is there (issue #26). */
START_TEST(test_text_cut)
{
	char field[16];

	CC_AUDIT_SET(field, "cgroup /%s", "\xc3\xa9\xc3\xa9\xc3\xa9");
	ck_assert_str_eq(field, "cgroup /\xc3\xa9\xc3\xa9\xc3\xa9");
	CC_AUDIT_SET(field, "cgroup /%s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	ck_assert_str_eq(field, "cgroup /\xc3\xa9\xc3\xa9\xc3\xa9");
	CC_AUDIT_SET(field, "cg /a\xe2\x80\xae" "b");
	ck_assert_str_eq(field, "cg /a\\u202eb");
	/* A repair's path is kept as read. */
	CC_AUDIT_TARGET(field, "/a\xe2\x80\xae" "b");
	ck_assert_str_eq(field, "/a\xe2\x80\xae" "b");
}
END_TEST

START_TEST(test_report_sorted)
{
	struct world w;
	const char *got;

	/* A warning (a stale record) and a critical finding (drift): the
	 * critical one comes first whatever order the checks ran in. */
	world_remote(&w);
	carve_add(w.ledger, "c0", "/kubepods/pod0/c0", "remote-partition", "latency", "10", "11", "1");
	hwloc_bitmap_set(at(&w, "/kubepods")->exclusive, 10);
	hwloc_bitmap_set(at(&w, "/corecarve.parked")->effective, 11);
	hwloc_bitmap_set(at(&w, "/kubepods/pod1/c1")->effective, 6);
	ck_assert_msg(run_all(&w, &got) == 2, "%s", got);
	ck_assert_str_eq(got, "CARVE_DRIFT cgroup /kubepods/pod1/c1\nSTALE_RECORD cgroup /kubepods/pod0/c0");
	ck_assert_int_eq(w.rep.f[0].severity, CC_AUDIT_CRITICAL);
	ck_assert_int_eq(w.rep.f[1].severity, CC_AUDIT_WARNING);
	world_fini(&w);
}
END_TEST

START_TEST(test_clean_worlds)
{
	struct world w;
	const char *got;

	world_remote(&w);
	ck_assert_msg(run_all(&w, &got) == 0, "remote: %s", got);
	world_fini(&w);
	world_soft(&w);
	ck_assert_msg(run_all(&w, &got) == 0, "cpuset-only: %s", got);
	world_fini(&w);
}
END_TEST

/* ---- records ------------------------------------------------------------- */

START_TEST(test_stale_record)
{
	struct world w;

	world_remote(&w);
	carve_add(w.ledger, "gone", "/kubepods/pod2/gone", "remote-partition", "latency", "6", "7", "0");
	/* Its parent chain still holds its CPU exclusively: explained by the
	 * stale record, not an unknown carve. */
	hwloc_bitmap_set(at(&w, "/kubepods")->exclusive, 6);
	ck_assert_str_eq(run_check(&w, cc_audit_check_records), "STALE_RECORD cgroup /kubepods/pod2/gone");
	ck_assert_str_eq(w.rep.f[0].carve, "gone");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_RELEASE);
	world_fini(&w);
}
END_TEST

START_TEST(test_unknown_carve)
{
	struct world w;
	struct cc_audit_cgroup *g;

	world_remote(&w);
	/* Someone else's partition; a partition parent (init-parent); a
	 * leftover exclusive CPU on an ancestor of c1. */
	g = cg(&w.snap, "/other", "6-7");
	snprintf(g->partition, sizeof(g->partition), "root invalid (Cpu list in cpuset.cpus not exclusive)");
	g = cg(&w.snap, "/corecarve.slice", "10-15");
	snprintf(g->partition, sizeof(g->partition), "root");
	g->delegates_cpuset = true;
	hwloc_bitmap_set(at(&w, "/kubepods/pod1")->exclusive, 12);
	ck_assert_str_eq(run_check(&w, cc_audit_check_records),
			 "UNKNOWN_CARVE cgroup /kubepods/pod1\nUNKNOWN_CARVE cgroup /other");
	ck_assert_ptr_nonnull(strstr(w.rep.f[0].actual, "(12 not held for a carve)"));
	ck_assert_int_eq(w.rep.f[1].repair, CC_REPAIR_NONE);
	world_fini(&w);
}
END_TEST

/* The ledger an audit reads holds nothing, yet cgroupfs has corecarve's
 * own cgroups: the wrong state directory, or a lost ledger.  Without the
 * finding a wrong --state audits clean. */
START_TEST(test_ledger_missing)
{
	struct world w;
	struct cc_audit_cgroup *g;

	world_remote(&w);
	/* Audit the same kernel through an empty ledger. */
	cc_ledger_close(w.ledger);
	w.ledger = ledger_new();
	cg(&w.snap, "/corecarve.exec", "");
	g = cg(&w.snap, "/corecarve.exec/exec-42", "6");
	g->populated = true;
	cg(&w.snap, "/corecarve.exec/exec-43", "")->populated = false; /* gone: nothing to say */
	ck_assert_str_eq(run_check(&w, cc_audit_check_records),
			 "UNKNOWN_CARVE cgroup /kubepods\nUNKNOWN_CARVE cgroup /kubepods/pod1\nUNKNOWN_CARVE cgroup /kubepods/pod1/c1\n"
			 "LEDGER_MISSING cgroup /corecarve.parked\nLEDGER_MISSING cgroup /corecarve.exec/exec-42");
	ck_assert_int_eq(w.rep.f[3].severity, CC_AUDIT_CRITICAL);
	ck_assert_ptr_nonnull(strstr(w.rep.f[3].fix, "audit the hook's state directory"));
	ck_assert_str_eq(w.rep.f[3].actual, "the ledger holds no carve; parked CPUs held");
	ck_assert_str_eq(w.rep.f[4].actual, "the ledger holds no carve; a carved command runs");
	world_fini(&w);

	/* With its carve in the ledger there is nothing to report. */
	world_remote(&w);
	ck_assert_str_eq(run_check(&w, cc_audit_check_records), "");
	world_fini(&w);
}
END_TEST

/* The command line: a textfile node_exporter would never read, a state
 * directory that is not there (the metrics then say the audit failed),
 * a damaged ledger set aside. */
START_TEST(test_cli_state_and_prometheus)
{
	const char *bin = cc_test_bin("audit CLI");
	char dir[] = "/tmp/cc-audit-cli-XXXXXX";
	_cleanup_free_ char *out = NULL, *prom = NULL, *path = NULL;

	if (!bin)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(&out, "'%s' audit --prometheus %s/metrics.txt", bin, dir), 2);
	ck_assert_msg(strstr(out, "/metrics.txt: node_exporter's textfile collector reads only files named *.prom"), "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "'%s' audit --state %s/nope --prometheus %s/corecarve.prom --sample-ms 0", bin,
				    dir, dir),
			 2);
	ck_assert_msg(strstr(out, "/nope: no such directory (the hook's state directory is /run/corecarve"), "%s", out);
	ck_assert_int_ge(asprintf(&path, "%s/corecarve.prom", dir), 0);
	prom = cc_test_slurp(path);
	ck_assert_msg(strstr(prom, "\ncorecarve_audit_success 0\n"), "%s", prom);
	free(out);
	out = NULL;
	/* --set-aside-ledger: a readable ledger is left alone... */
	ck_assert_int_eq(cc_test_sh(&out, "mkdir -m 0700 %s/state && '%s' audit --set-aside-ledger --state %s/state", dir,
				    bin, dir),
			 2);
	ck_assert_msg(strstr(out, "/state/ledger.json: the ledger reads fine (0 carves); nothing to set aside"), "%s", out);
	free(out);
	out = NULL;
	/* ... a damaged one is renamed under the lock, then the node audited. */
	cc_test_sh(NULL, "printf '{\"version\": 2, ' > %s/state/ledger.json && chmod 600 %s/state/ledger.json", dir, dir);
	cc_test_sh(&out, "'%s' audit --set-aside-ledger --state %s/state --sample-ms 0", bin, dir);
	ck_assert_msg(strstr(out, "ledger set aside as ") && strstr(out, "/state/ledger.json.damaged."), "%s", out);
	free(out);
	out = NULL;
	ck_assert_int_eq(cc_test_sh(&out, "ls %s/state", dir), 0);
	ck_assert_msg(strstr(out, "ledger.json.damaged.") && !strstr(out, "ledger.json\n"), "%s", out);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* ---- drift --------------------------------------------------------------- */

START_TEST(test_drift_effective)
{
	struct world w;

	world_soft(&w);
	set(at(&w, "/kubepods/pod1/c1")->cpus, "2-7");
	set(at(&w, "/kubepods/pod1/c1")->effective, "2-7");
	ck_assert_str_eq(run_check(&w, cc_audit_check_drift), "CARVE_DRIFT cgroup /kubepods/pod1/c1");
	ck_assert_int_eq(w.rep.f[0].severity, CC_AUDIT_CRITICAL);
	ck_assert_str_eq(w.rep.f[0].expected, "cpuset.cpus and .effective 2,4");
	ck_assert_str_eq(w.rep.f[0].actual, "cpuset.cpus 2-7, effective 2-7");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REAPPLY);
	world_fini(&w);
}
END_TEST

START_TEST(test_drift_latent_and_exclusive)
{
	struct world w;

	/* Under a valid partition a wider cpuset.cpus changes nothing yet
	 * (seen on 6.12): a warning.  Exclusive CPUs narrowed: critical. */
	world_remote(&w);
	set(at(&w, "/kubepods/pod1/c1")->cpus, "2-7");
	set(at(&w, "/kubepods/pod1/c1")->exclusive, "2");
	ck_assert_str_eq(run_check(&w, cc_audit_check_drift),
			 "CARVE_DRIFT cgroup /kubepods/pod1/c1\nCARVE_DRIFT cgroup /kubepods/pod1/c1");
	ck_assert_int_eq(w.rep.f[0].severity, CC_AUDIT_WARNING);
	ck_assert_str_eq(w.rep.f[1].actual, "cpuset.cpus.exclusive 2");
	ck_assert_int_eq(w.rep.f[1].severity, CC_AUDIT_CRITICAL);
	world_fini(&w);
}
END_TEST

START_TEST(test_mems)
{
	struct world w;

	/* Local: the ledger's mems are the CPUs' node. */
	world_soft(&w);
	set(at(&w, "/kubepods/pod1/c1")->mems, "0-1");
	ck_assert_str_eq(run_check(&w, cc_audit_check_drift), "MEMS_MISALIGNED cgroup /kubepods/pod1/c1");
	ck_assert_str_eq(w.rep.f[0].expected, "cpuset.mems.effective 0 (the NUMA nodes of its CPUs)");
	world_fini(&w);
	/* spread/any (mems wider than the CPUs' nodes): plain drift. */
	world_soft(&w);
	set(w.ledger->carves[0]->mems, "0-1");
	set(at(&w, "/kubepods/pod1/c1")->mems, "1");
	ck_assert_str_eq(run_check(&w, cc_audit_check_drift), "CARVE_DRIFT cgroup /kubepods/pod1/c1");
	world_fini(&w);
}
END_TEST

/* ---- partitions ---------------------------------------------------------- */

START_TEST(test_partition_invalid_names_claimant)
{
	struct world w;

	world_remote(&w);
	snprintf(at(&w, "/kubepods/pod1/c1")->partition, 128, "root invalid");
	set(at(&w, "/kubepods/pod1/p1")->cpus, "2-3");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_INVALID cgroup /kubepods/pod1/c1");
	/* As 6.12 leaves it (issue #45): the root's effective set still
	 * lacks 2,4. */
	ck_assert_str_eq(w.rep.f[0].actual, "cpuset.cpus.partition root invalid; the kernel still keeps CPUs 2,4 for it "
					    "alone (it left the invalid remote partition on its list)");
	/* Not tried while the claim lasts: the write through member warns
	 * there and the re-arm fails anyway. */
	ck_assert_str_eq(w.rep.f[0].fix,
			 "cgroup /kubepods/pod1/p1 claims 2 in its cpuset.cpus: its owner must drop them, then --fix re-arms it "
			 "through member, which on this kernel makes it warn once (partition_xcpus_del, docs/audit.md)");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_NONE);
	/* Where the kernel gave the CPUs back (7.x), the re-arm is tried. */
	set(at(&w, "/")->effective, "0-1,2,4,6-15");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_INVALID cgroup /kubepods/pod1/c1");
	ck_assert_str_eq(w.rep.f[0].fix,
			 "cgroup /kubepods/pod1/p1 claims 2 in its cpuset.cpus: its owner must drop them, then --fix re-arms it");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REAPPLY);
	world_fini(&w);
}
END_TEST

/* The claim dropped, the 6.12 partition the kernel kept: the re-arm
 * (through member) makes that kernel warn once, which the fix says, and
 * on a node with panic_on_warn it is not made.  Where the kernel gave
 * the CPUs back (7.x) it is an ordinary invalid partition. */
START_TEST(test_partition_kernel_kept)
{
	struct world w;

	world_remote(&w);
	snprintf(at(&w, "/kubepods/pod1/c1")->partition, 128, "root invalid");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_INVALID cgroup /kubepods/pod1/c1");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REAPPLY);
	ck_assert_str_eq(w.rep.f[0].fix, "--fix re-arms it through member, which on this kernel makes it warn once "
					 "(partition_xcpus_del, docs/audit.md); no other write takes the partition back");
	w.snap.panic_on_warn = true;
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_INVALID cgroup /kubepods/pod1/c1");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_NONE);
	ck_assert_msg(strstr(w.rep.f[0].fix, "not re-armed: kernel.panic_on_warn is 1, and on this kernel taking an "
					     "invalid remote partition back makes the kernel warn") &&
			      strstr(w.rep.f[0].fix, "CPUs 2,4 stay the container's meanwhile"),
		      "%s", w.rep.f[0].fix);
	w.snap.panic_on_warn = false;
	set(at(&w, "/")->effective, "0-1,2,4,6-15");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_INVALID cgroup /kubepods/pod1/c1");
	ck_assert_str_eq(w.rep.f[0].actual, "cpuset.cpus.partition root invalid");
	ck_assert_str_eq(w.rep.f[0].fix, "--fix writes the partition again");
	world_fini(&w);
}
END_TEST

START_TEST(test_partition_missing)
{
	struct world w;

	world_remote(&w);
	snprintf(at(&w, "/kubepods/pod1/c1")->partition, 128, "member");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_MISSING cgroup /kubepods/pod1/c1");
	world_fini(&w);
	/* An isolated class left as a root partition is missing its kind. */
	world_remote(&w);
	snprintf(w.ledger->carves[0]->class_name, sizeof(w.ledger->carves[0]->class_name), "isolated");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "PARTITION_MISSING cgroup /kubepods/pod1/c1");
	ck_assert_str_eq(w.rep.f[0].expected, "cpuset.cpus.partition isolated");
	world_fini(&w);
}
END_TEST

START_TEST(test_parked_partition)
{
	struct world w;

	world_remote(&w);
	snprintf(at(&w, "/corecarve.parked")->partition, 128, "isolated invalid (Cpu list in cpuset.cpus not exclusive)");
	set(at(&w, "/corecarve.parked")->effective, "3");
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions),
			 "PARTITION_INVALID cgroup /corecarve.parked\nCARVE_DRIFT cgroup /corecarve.parked");
	world_fini(&w);
}
END_TEST

START_TEST(test_partition_not_for_cpuset_only)
{
	struct world w;

	world_soft(&w);
	ck_assert_str_eq(run_check(&w, cc_audit_check_partitions), "");
	world_fini(&w);
}
END_TEST

/* ---- exclusivity --------------------------------------------------------- */

START_TEST(test_soft_leak_and_split_core)
{
	struct world w;
	struct cc_audit_cgroup *g;

	world_soft(&w);
	set(at(&w, "/kubepods/pod1/p1")->effective, "0-15");
	/* Below a leaking boundary: covered by it.  Empty: runs nothing. */
	g = cg(&w.snap, "/kubepods/pod1/p1/leaf", "");
	g = cg(&w.snap, "/empty", "0-15");
	g->populated = false;
	ck_assert_str_eq(run_check(&w, cc_audit_check_exclusivity),
			 "SOFT_EXCLUSIVITY_LEAK cgroup /kubepods/pod1/p1\nSPLIT_CORE cgroup /kubepods/pod1/p1");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_TAKE_BACK);
	ck_assert_str_eq(w.rep.f[0].target, "/kubepods/pod1/p1");
	ck_assert_str_eq(w.rep.f[0].carve, "c1");
	ck_assert_str_eq(w.rep.f[1].actual, "runs tasks on parked 3,5 (effective 0-15)");
	world_fini(&w);
}
END_TEST

START_TEST(test_split_core_partition_mode)
{
	struct world w;

	/* The parked partition broke: its CPUs are back in the root's set,
	 * where every host task runs. */
	world_remote(&w);
	set(at(&w, "/")->effective, "0-1,3,5-15");
	ck_assert_str_eq(run_check(&w, cc_audit_check_exclusivity), "SPLIT_CORE cgroup /");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REAPPLY);
	ck_assert_str_eq(w.rep.f[0].target, "/kubepods/pod1/c1");
	world_fini(&w);
}
END_TEST

START_TEST(test_overlap_and_reserved)
{
	struct world w;
	struct cc_audit_cgroup *g;

	world_soft(&w);
	carve_add(w.ledger, "c2", "/kubepods/pod2/c2", "cpuset-only", "latency", "10", "11", "1");
	cg(&w.snap, "/kubepods/pod2", "");
	g = cg(&w.snap, "/kubepods/pod2/c2", "10");
	set(g->cpus, "10");
	set(at(&w, "/kubepods/pod1/c1")->effective, "2,4,10");
	set(at(&w, "/kubepods/pod1/p1")->effective, "0-1,6-9,12-15");
	/* The policy's reserved set grew under a carve. */
	set(w.policy->reserved, "0-2,8-9");
	ck_assert_str_eq(run_check(&w, cc_audit_check_exclusivity),
			 "RESERVED_CARVED carve c1\nOVERLAP cgroup /kubepods/pod1/c1");
	ck_assert_str_eq(w.rep.f[1].actual, "also runs on 10 of carve c2");
	world_fini(&w);
}
END_TEST

/* ---- quota ----------------------------------------------------------------- */

START_TEST(test_quota_on_carve)
{
	struct world w;
	struct cc_audit_cgroup *g;

	world_soft(&w);
	at(&w, "/kubepods/pod1/c1")->quota = 50000;
	at(&w, "/kubepods/pod1/c1")->period = 100000;
	/* A quota on a pod holding a carve is a finding (the kubelet since
	 * 1.33 removes it); above the pod one larger than the carves is
	 * not; a quota in a nested leaf is. */
	at(&w, "/kubepods/pod1")->quota = 100000;
	at(&w, "/kubepods/pod1")->period = 100000;
	at(&w, "/kubepods")->quota = 400000;
	at(&w, "/kubepods")->period = 100000;
	g = cg(&w.snap, "/kubepods/pod1/c1/container", "");
	g->quota = 10000;
	g->period = 100000;
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota),
			 "QUOTA_ON_CARVE cgroup /kubepods/pod1/c1\nQUOTA_ON_CARVE cgroup /kubepods/pod1 (parent)\n"
			 "QUOTA_ON_CARVE cgroup /kubepods/pod1/c1/container (inside the carve)");
	ck_assert_str_eq(w.rep.f[0].actual, "cpu.max 50000 100000");
	ck_assert_int_eq(w.rep.f[1].repair, CC_REPAIR_REAPPLY);
	ck_assert_int_eq(w.rep.f[2].repair, CC_REPAIR_DROP_QUOTA);
	world_fini(&w);
	/* Issue #38 item 2: a pod quota that covers the carve (3 CPUs for 2)
	 * is one too; above the pod only one below the carves is, and it is
	 * the admin's to raise. */
	world_soft(&w);
	at(&w, "/kubepods/pod1")->quota = 300000;
	at(&w, "/kubepods/pod1")->period = 100000;
	at(&w, "/kubepods")->quota = 100000;
	at(&w, "/kubepods")->period = 100000;
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota),
			 "QUOTA_ON_CARVE cgroup /kubepods/pod1 (parent)\nQUOTA_ON_CARVE cgroup /kubepods (above the pod)");
	ck_assert_str_eq(w.rep.f[0].expected, "cpu.max max");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REAPPLY);
	ck_assert_int_eq(w.rep.f[1].repair, CC_REPAIR_NONE);
	world_fini(&w);
	/* quota: keep classes keep it. */
	world_soft(&w);
	snprintf(w.ledger->carves[0]->class_name, 64, "keeper");
	at(&w, "/kubepods/pod1/c1")->quota = 50000;
	at(&w, "/kubepods/pod1/c1")->period = 100000;
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota), "");
	world_fini(&w);
}
END_TEST

/* The demand a quota above the pods must meet is every quota-dropping
 * carve below it (the cgroup effect's rule, cc_effect_drops_quota): pod1's
 * 2 CPUs, pod2's 2 whose cgroup is gone from the snapshot (still carved),
 * not pod3's `quota: keep` carve.  One table for all ancestors. */
START_TEST(test_quota_demand_summed)
{
	struct world w;

	world_soft(&w);
	carve_add(w.ledger, "c2", "/kubepods/pod2/c2", "cpuset-only", "latency", "6,8", "7,9", "0");
	carve_add(w.ledger, "c3", "/kubepods/pod3/c3", "cpuset-only", "keeper", "10,12", "11,13", "0");
	cg(&w.snap, "/kubepods/pod2", "");
	at(&w, "/kubepods")->quota = 350000;
	at(&w, "/kubepods")->period = 100000;
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota), "QUOTA_ON_CARVE cgroup /kubepods (above the pod)");
	ck_assert_str_eq(w.rep.f[0].expected, "no quota below the 4 CPUs carved under it");
	at(&w, "/kubepods")->quota = 400000;
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota), "");
	world_fini(&w);
}
END_TEST

START_TEST(test_quota_with_pinning)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t aff = hwloc_bitmap_alloc();
	int p1;

	world_soft(&w);
	p1 = cc_audit_snap_find(&w.snap, "/kubepods/pod1/p1");
	w.snap.cgroups[p1].quota = 50000;
	w.snap.cgroups[p1].period = 100000;
	set(aff, "0-1,6-15"); /* follows its cgroup: fine */
	ck_assert_int_eq(cc_audit_snap_add_task(&w.snap, 100, p1, aff, &err), 0);
	set(aff, "7,8"); /* hand-pinned, across both nodes */
	ck_assert_int_eq(cc_audit_snap_add_task(&w.snap, 101, p1, aff, &err), 0);
	ck_assert_str_eq(run_check(&w, cc_audit_check_quota), "QUOTA_WITH_PINNING task 101 (cgroup /kubepods/pod1/p1)");
	ck_assert_str_eq(w.rep.f[0].actual,
			 "pinned to 7-8 of 0-1,6-15 across NUMA nodes, cpu.max 50000 100000 at /kubepods/pod1/p1");
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_NONE);
	world_fini(&w);
}
END_TEST

/* ---- tasks ----------------------------------------------------------------- */

START_TEST(test_task_escaped)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t aff = hwloc_bitmap_alloc();
	int c1;

	world_soft(&w);
	c1 = cc_audit_snap_find(&w.snap, "/kubepods/pod1/c1");
	set(aff, "2,4");
	ck_assert_int_eq(cc_audit_snap_add_task(&w.snap, 200, c1, aff, &err), 0);
	set(aff, "2");
	ck_assert_int_eq(cc_audit_snap_add_task(&w.snap, 201, c1, aff, &err), 0);
	ck_assert_str_eq(run_check(&w, cc_audit_check_tasks), "TASK_ESCAPED task 201 (cgroup /kubepods/pod1/c1)");
	ck_assert_int_eq(w.rep.f[0].num, 201);
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_REPIN);
	world_fini(&w);
	/* Tasks that follow a drifted cgroup are CARVE_DRIFT's, not escapes. */
	world_soft(&w);
	c1 = cc_audit_snap_find(&w.snap, "/kubepods/pod1/c1");
	set(w.snap.cgroups[c1].effective, "2-7");
	set(aff, "2-7");
	ck_assert_int_eq(cc_audit_snap_add_task(&w.snap, 300, c1, aff, &err), 0);
	ck_assert_str_eq(run_check(&w, cc_audit_check_tasks), "");
	world_fini(&w);
}
END_TEST

/* Threads listed as PID 0 (an audit in another PID namespace) cannot be
 * checked: the audit says so instead of reading clean. */
START_TEST(test_tasks_hidden)
{
	struct world w;

	world_soft(&w);
	ck_assert_str_eq(run_check(&w, cc_audit_check_tasks), "");
	w.snap.hidden_tasks = 3;
	w.snap.listed_tasks = 3;
	w.snap.hidden_cgroups = 2;
	w.snap.hidden_at = cc_audit_snap_find(&w.snap, "/kubepods/pod1/c1");
	ck_assert_str_eq(run_check(&w, cc_audit_check_tasks), "TASKS_HIDDEN tasks of 2 cgroups (first: /kubepods/pod1/c1)");
	ck_assert_str_eq(w.rep.f[0].carve, "c1");
	ck_assert_int_eq(w.rep.f[0].severity, CC_AUDIT_WARNING);
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_NONE);
	ck_assert_str_eq(w.rep.f[0].actual, "3 of 3 threads read as PID 0: outside this PID namespace, not checked");
	ck_assert_str_eq(w.rep.f[0].fix, "run the audit in the host's PID namespace (Kubernetes: hostPID: true)");
	/* Under a quota, outside any carve: no carve to name. */
	w.snap.hidden_cgroups = 1;
	w.snap.hidden_at = cc_audit_snap_find(&w.snap, "/kubepods/pod1/p1");
	ck_assert_str_eq(run_check(&w, cc_audit_check_tasks), "TASKS_HIDDEN tasks of 1 cgroup (first: /kubepods/pod1/p1)");
	ck_assert_str_eq(w.rep.f[0].carve, "");
	world_fini(&w);
}
END_TEST

/* ---- IRQs ------------------------------------------------------------------ */

static void irq_table(struct world *w)
{
	struct cc_irq_table *t = &w->snap.irqs;
	static const struct {
		int irq;
		const char *name, *aff;
	} rows[] = {
		{ 25, "virtio0-input.0", "0-1,6-15" }, /* steered */
		{ 26, "virtio0-output.0", "2" },       /* pointed at the carve */
		{ 30, "virtio1-req.2", "0-3" },        /* kernel-managed, recorded */
	};

	t->n = 3;
	t->irqs = calloc(3, sizeof(*t->irqs));
	t->default_affinity = hwloc_bitmap_alloc();
	t->online = hwloc_bitmap_alloc();
	set(t->default_affinity, "0-1,6-15");
	set(t->online, "0-15");
	for (int i = 0; i < 3; i++) {
		t->irqs[i].irq = rows[i].irq;
		snprintf(t->irqs[i].name, sizeof(t->irqs[i].name), "%s", rows[i].name);
		t->irqs[i].affinity = hwloc_bitmap_alloc();
		t->irqs[i].effective = hwloc_bitmap_alloc();
		set(t->irqs[i].affinity, rows[i].aff);
		t->irqs[i].node = -1;
	}
	w->snap.has_irqs = true;
	json_object_set_new(w->ledger->sections, CC_IRQ_SECTION,
			    json_pack("{s:{s:{s:s, s:s, s:s}}}", "irqs", "30", "name", "virtio1-req.2", "unmovable",
				      "EIO", "affinity", "0-3"));
}

START_TEST(test_irq_on_carve)
{
	struct world w;

	world_remote(&w);
	irq_table(&w);
	ck_assert_str_eq(run_check(&w, cc_audit_check_irqs), "IRQ_ON_CARVE irq 26 (virtio0-output.0)");
	ck_assert_str_eq(w.rep.f[0].expected, "affinity outside steer-away carves 2-5");
	ck_assert_int_eq(w.rep.f[0].num, 26);
	ck_assert_int_eq(w.rep.f[0].repair, CC_REPAIR_STEER_IRQS);
	world_fini(&w);
	/* No steer-away carve: nothing to keep off. */
	world_remote(&w);
	irq_table(&w);
	w.ledger->carves[0]->steer_irqs = false;
	ck_assert_str_eq(run_check(&w, cc_audit_check_irqs), "");
	world_fini(&w);
}
END_TEST

START_TEST(test_irq_counts)
{
	static const char before[] = "           CPU0       CPU1       CPU2       CPU3\n"
				     " 26:          5          0          0          0  PCI-MSIX 2-edge  virtio0-output.0\n"
				     " 30:          0          0          7          1  PCI-MSIX 3-edge  virtio1-req.2\n"
				     "LOC:        100        100        100        100   Local timer interrupts\n";
	static const char after[] = "           CPU0       CPU1       CPU2       CPU3\n"
				    " 26:          5          0          9          0  PCI-MSIX 2-edge  virtio0-output.0\n"
				    " 30:          0          0          8          1  PCI-MSIX 3-edge  virtio1-req.2\n"
				    " 31:          0          0          4          0  PCI-MSIX 4-edge  virtio1-req.3\n"
				    "LOC:        200        200        200        200   Local timer interrupts\n";
	struct cc_irq_counts a, b;
	struct cc_err err = CC_ERR_INIT;
	struct world w;

	world_remote(&w);
	irq_table(&w);
	ck_assert_int_eq(cc_irq_counts_parse(before, &a, &err), 0);
	ck_assert_int_eq(cc_irq_counts_parse(after, &b, &err), 0);
	/* 26 and 30 grew on CPU 2; 31 appeared meanwhile (no baseline);
	 * LOC cannot be steered. */
	ck_assert_int_eq(cc_audit_irq_growth(&a, &b, &w.snap, &err), 0);
	ck_assert_int_eq(w.snap.ngrowth, 2);
	w.snap.sample_ms = 500;
	/* 26 is IRQ_ON_CARVE already; 30 is kernel-managed. */
	ck_assert_str_eq(run_check(&w, cc_audit_check_irqs),
			 "IRQ_ON_CARVE irq 26 (virtio0-output.0)\nIRQ_COUNTS_ON_CARVE irq 30 (virtio1-req.2)");
	ck_assert_str_eq(w.rep.f[1].actual, "fired on 2");
	ck_assert_str_eq(w.rep.f[1].expected, "no interrupt on 2-5 in 500 ms");
	ck_assert_ptr_nonnull(strstr(w.rep.f[1].fix, "kernel-managed (writes refused with EIO)"));
	cc_irq_counts_fini(&a);
	cc_irq_counts_fini(&b);
	world_fini(&w);
}
END_TEST

/* ---- kubelet and parsers ------------------------------------------------- */

START_TEST(test_kubelet)
{
	struct world w;

	world_soft(&w);
	snprintf(w.snap.kubelet_policy, sizeof(w.snap.kubelet_policy), "none");
	ck_assert_str_eq(run_check(&w, cc_audit_check_kubelet), "");
	snprintf(w.snap.kubelet_policy, sizeof(w.snap.kubelet_policy), "static");
	ck_assert_str_eq(run_check(&w, cc_audit_check_kubelet),
			 "KUBELET_STATIC_CPU_MANAGER " CC_KUBELET_CPU_STATE);
	ck_assert_int_eq(w.rep.f[0].severity, CC_AUDIT_CRITICAL);
	world_fini(&w);
}
END_TEST

static const struct {
	const char *text, *policy, *error;
} kubelet_cases[] = {
	{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1\",\"checksum\":1}", "static", NULL },
	{ "{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":2}", "none", NULL },
	{ "{\"defaultCpuSet\":\"\"}", "", NULL },
	{ "{\"policyName\":7}", NULL, "policyName: expected a string" },
	{ "[]", NULL, "expected a JSON object" },
	{ "{\"policyName\":", NULL, "line 1: " },
};

START_TEST(test_parse_kubelet)
{
	char out[64] = "untouched";
	struct cc_err err = CC_ERR_INIT;
	int rc = cc_audit_parse_kubelet_state(kubelet_cases[_i].text, out, sizeof(out), &err);

	if (kubelet_cases[_i].policy) {
		ck_assert_msg(rc == 0, "%s", err.msg);
		ck_assert_str_eq(out, kubelet_cases[_i].policy);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(!strncmp(err.msg, kubelet_cases[_i].error, strlen(kubelet_cases[_i].error)), "%s",
			      err.msg);
	}
}
END_TEST

static const struct {
	const char *text, *cpus, *error;
} status_cases[] = {
	{ "Name:\tsleep\nCpus_allowed:\t0014\nCpus_allowed_list:\t2,4\nMems_allowed_list:\t0\n", "2,4", NULL },
	{ "Cpus_allowed_list:   0-15\n", "0-15", NULL },
	{ "Name:\tx\n", NULL, "no Cpus_allowed_list line" },
	{ "Cpus_allowed_list:\t5-2\n", NULL, "Cpus_allowed_list: " },
};

START_TEST(test_parse_status)
{
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();
	struct cc_err err = CC_ERR_INIT;
	int rc = cc_audit_parse_status_affinity(status_cases[_i].text, b, &err);

	if (status_cases[_i].cpus) {
		_cleanup_free_ char *s = cc_cpulist_format(b);

		ck_assert_msg(rc == 0, "%s", err.msg);
		ck_assert_str_eq(s, status_cases[_i].cpus);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(!strncmp(err.msg, status_cases[_i].error, strlen(status_cases[_i].error)), "%s", err.msg);
	}
}
END_TEST

static const struct {
	const char *text;
	unsigned long long start; /* 0: error */
} stat_cases[] = {
	{ "4242 (sleep)" STAT_TAIL, 777 },
	{ "4242 (a) (b c) d)" STAT_TAIL, 777 },
	{ "4242 (sleep) S 1 2 3", 0 },
	{ "4242 sleep S", 0 },
	{ "4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 7x7 1", 0 },
};

START_TEST(test_parse_stat)
{
	struct cc_err err = CC_ERR_INIT;
	unsigned long long start = 0;
	int rc = cc_audit_parse_stat_start(stat_cases[_i].text, &start, &err);

	if (stat_cases[_i].start) {
		ck_assert_msg(rc == 0, "%s", err.msg);
		ck_assert_uint_eq(start, stat_cases[_i].start);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(!strncmp(err.msg, "stat: ", 6), "%s", err.msg);
	}
}
END_TEST

START_TEST(test_parse_cpu_max)
{
	static const struct {
		const char *s;
		int rc;
		long long quota, period;
	} cases[] = {
		{ "max 100000", 0, -1, 100000 }, { "50000 100000", 0, 50000, 100000 },
		{ "max", -1, 0, 0 },             { "0 100000", -1, 0, 0 },
		{ "50000 0", -1, 0, 0 },         { "x 100000", -1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long q = 0, p = 0;

		ck_assert_int_eq(cc_cg_parse_cpu_max(cases[i].s, &q, &p), cases[i].rc);
		if (cases[i].rc == 0) {
			ck_assert_int_eq(q, cases[i].quota);
			ck_assert_int_eq(p, cases[i].period);
		}
	}
}
END_TEST

/* ---- index ----------------------------------------------------------------- */

START_TEST(test_index)
{
	struct world w;
	struct cc_err err = CC_ERR_INIT;

	world_soft(&w);
	cg(&w.snap, "/kubepods/pod1/c1/container", "");
	at(&w, "/kubepods/pod1")->quota = 100000;
	at(&w, "/kubepods/pod1")->period = 100000;
	ck_assert_int_eq(cc_audit_snap_index(&w.snap, w.ledger, &err), 0);
	ck_assert_int_eq(at(&w, "/kubepods/pod1/c1")->carve, 0);
	ck_assert_int_eq(at(&w, "/kubepods/pod1/c1/container")->within, 0);
	ck_assert_int_eq(at(&w, "/kubepods/pod1/p1")->within, -1);
	ck_assert(at(&w, "/kubepods")->above_carve);
	ck_assert(at(&w, "/")->above_carve);
	ck_assert(!at(&w, "/kubepods/pod1/p1")->above_carve);
	ck_assert_int_eq(at(&w, "/kubepods/pod1/p1")->quota_at, cc_audit_snap_find(&w.snap, "/kubepods/pod1"));
	ck_assert_int_eq(at(&w, "/kubepods")->quota_at, -1);
	world_fini(&w);
}
END_TEST

/* ---- the textfile ------------------------------------------------------------ */

START_TEST(test_prom)
{
	struct world w;
	struct cc_audit_stats st = { .carves = 1, .carved_cpus = 4, .cgroups = 6, .finished = 1700000000,
				     .read_ms = 10, .check_ms = 2.5 };
	struct cc_err err = CC_ERR_INIT;
	char dir[] = "/tmp/cc-prom-XXXXXX", path[64];
	_cleanup_free_ char *text = NULL;
	FILE *f;
	char line[256];
	int n = 0;

	world_soft(&w);
	set(at(&w, "/kubepods/pod1/c1")->effective, "2-7");
	run_check(&w, cc_audit_check_drift);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/corecarve.prom", dir);
	ck_assert_msg(cc_prom_write(path, &w.rep, &st, true, &err) == 0, "%s", err.msg);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "corecarve_audit_findings{code=", 30);
	fclose(f);
	ck_assert_int_eq(n, CC_AUDIT_NCODES);
	text = cc_prom_render(&w.rep, &st, true);
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_findings{code=\"CARVE_DRIFT\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_findings{code=\"VM_SHARED_CPU\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_carved_cpus 4\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_critical_findings 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_duration_seconds 0.012500\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_last_run_timestamp_seconds 1700000000\n"));
	free(text);
	/* Could not audit: success 0, no per-code series. */
	text = cc_prom_render(&w.rep, &st, false);
	ck_assert_ptr_nonnull(strstr(text, "\ncorecarve_audit_success 0\n"));
	ck_assert_ptr_null(strstr(text, "findings"));
	/* Only the target is left in the directory: the rename replaced it. */
	ck_assert_msg(cc_prom_write(path, &w.rep, &st, false, &err) == 0, "%s", err.msg);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s)\" = corecarve.prom", dir);
		ck_assert_int_eq(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	/* A directory that does not exist: an error naming the file. */
	ck_assert_int_eq(cc_prom_write("/nonexistent-dir/x.prom", &w.rep, &st, true, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/.x.prom.tmp."));
	world_fini(&w);
}
END_TEST

/* ---- the reader and the CLI on a captured tree ------------------------------ */

static void put_file(const char *root, const char *path, const char *text)
{
	char full[PATH_MAX], cmd[PATH_MAX + 32];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", full);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(full, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* What a capture of the e2e guest's cgroupfs with a drifted carve looks
 * like (files as the kernel prints them, with their newline). */
static void capture(const char *root, int tid)
{
	char p[128];

	put_file(root, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put_file(root, "/sys/fs/cgroup/cpuset.cpus.effective", "0-15\n");
	put_file(root, "/sys/fs/cgroup/kubepods/cpuset.cpus", "\n");
	put_file(root, "/sys/fs/cgroup/kubepods/cpuset.cpus.effective", "0-15\n");
	put_file(root, "/sys/fs/cgroup/kubepods/cpuset.cpus.partition", "member\n");
	put_file(root, "/sys/fs/cgroup/kubepods/cgroup.events", "populated 1\nfrozen 0\n");
	/* pod1 has no cpuset files (controller not enabled): inherits. */
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/cpu.max", "max 100000\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/cgroup.events", "populated 1\nfrozen 0\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cpuset.cpus", "2-7\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cpuset.cpus.effective", "2-7\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cpuset.cpus.partition", "member\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cpuset.mems.effective", "0\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "50000 100000\n");
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cgroup.events", "populated 1\nfrozen 0\n");
	/* 0: a thread outside the reader's PID namespace (an audit in a pod). */
	snprintf(p, sizeof(p), "0\n%d\n", tid);
	put_file(root, "/sys/fs/cgroup/kubepods/pod1/c1/cgroup.threads", p);
	snprintf(p, sizeof(p), "/proc/%d/status", tid);
	put_file(root, p, "Name:\tsleep\nCpus_allowed_list:\t2\n");
	/* Started 777 ticks after boot (field 22); the name may hold ") ". */
	snprintf(p, sizeof(p), "/proc/%d/stat", tid);
	put_file(root, p, "4242 (sl) (eep)" STAT_TAIL);
	snprintf(p, sizeof(p), "/proc/%d/cgroup", tid);
	put_file(root, p, "0::/kubepods/pod1/c1\n");
	put_file(root, "/var/lib/kubelet/cpu_manager_state", "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-15\"}\n");
}

START_TEST(test_read_captured_tree)
{
	char dir[] = "/tmp/cc-audit-tree-XXXXXX";
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_read_opts o = { .sample_ms = 1000, .skip_irqs = true };
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_ledger *l = ledger_new();
	struct cc_audit_snap s;
	const struct cc_audit_cgroup *g;
	char cmd[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture(dir, 4242);
	carve_add(l, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_audit_snap_read(root, l, &o, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(s.ncgroups, 4);
	ck_assert_int_eq(s.sample_ms, 0); /* a tree does not change: no sample */
	g = &s.cgroups[cc_audit_snap_find(&s, "/kubepods/pod1")];
	ck_assert(!g->has_cpuset);
	ck_assert_int_eq(hwloc_bitmap_weight(g->effective), 16); /* inherited */
	ck_assert_int_eq(g->quota, -1);
	g = &s.cgroups[cc_audit_snap_find(&s, "/kubepods/pod1/c1")];
	ck_assert_int_eq(g->carve, 0);
	ck_assert_int_eq(g->quota, 50000);
	ck_assert_str_eq(g->partition, "member");
	ck_assert_ptr_nonnull(g->mems);
	ck_assert(g->populated);
	ck_assert_int_eq(s.ntasks, 1);
	ck_assert_int_eq(s.tasks[0].tid, 4242);
	/* The 0 is counted, not read. */
	ck_assert_int_eq(s.listed_tasks, 2);
	ck_assert_int_eq(s.hidden_tasks, 1);
	ck_assert_int_eq(s.hidden_cgroups, 1);
	ck_assert_int_eq(s.hidden_at, cc_audit_snap_find(&s, "/kubepods/pod1/c1"));
	ck_assert_int_eq(hwloc_bitmap_first(s.tasks[0].affinity), 2);
	ck_assert_uint_eq(s.tasks[0].start, 777);
	ck_assert_str_eq(s.kubelet_policy, "static");
	cc_audit_snap_fini(&s);
	/* A malformed file is an error naming it. */
	put_file(dir, "/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "lots\n");
	ck_assert_int_eq(cc_audit_snap_read(root, l, &o, &s, &err), -1);
	ck_assert_str_eq(err.msg, "/kubepods/pod1/c1/cpu.max: unexpected value \"lots\"");
	cc_ledger_close(l);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Issue #31: the threads read per cgroup are bounded (a pod without a
 * PID limit), the rest counted and reported as not looked at; the bound
 * is the reader's option. */
START_TEST(test_read_tasks_bounded)
{
	char dir[] = "/tmp/cc-audit-bound-XXXXXX";
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_read_opts o = { .skip_irqs = true, .max_tasks = 2 };
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_ledger *l = ledger_new();
	struct cc_audit_report rep = { 0 };
	struct cc_audit_snap s;
	struct cc_audit_in in = { l, NULL, NULL, &s };
	char p[128], cmd[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture(dir, 4242);
	put_file(dir, "/sys/fs/cgroup/kubepods/pod1/c1/cgroup.threads", "4242\n4243\n4244\n4245\n");
	for (int tid = 4243; tid <= 4245; tid++) {
		snprintf(p, sizeof(p), "/proc/%d/status", tid);
		put_file(dir, p, "Name:\tsleep\nCpus_allowed_list:\t2,4\n");
	}
	carve_add(l, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_msg(cc_audit_snap_read(root, l, &o, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(s.ntasks, 2);
	ck_assert_int_eq(s.listed_tasks, 4);
	ck_assert_int_eq(s.unread_tasks, 2);
	ck_assert_int_eq(s.unread_cgroups, 1);
	ck_assert_int_eq(s.unread_at, cc_audit_snap_find(&s, "/kubepods/pod1/c1"));
	ck_assert_int_eq(cc_audit_check_tasks(&in, &rep, &err), 0);
	ck_assert_int_eq(cc_audit_count(&rep, CC_AUDIT_TASKS_UNREAD), 1);
	for (int i = 0; i < rep.n; i++)
		if (rep.f[i].code == CC_AUDIT_TASKS_UNREAD)
			ck_assert_str_eq(rep.f[i].actual, "2 of 4 threads past the first 2 of their cgroup: not looked at");
	cc_audit_report_fini(&rep);
	cc_audit_snap_fini(&s);
	/* The default bound reads them all, and says nothing. */
	o.max_tasks = 0;
	ck_assert_msg(cc_audit_snap_read(root, l, &o, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(s.ntasks, 4);
	ck_assert_int_eq(s.unread_tasks, 0);
	memset(&rep, 0, sizeof(rep));
	ck_assert_int_eq(cc_audit_check_tasks(&in, &rep, &err), 0);
	ck_assert_int_eq(cc_audit_count(&rep, CC_AUDIT_TASKS_UNREAD), 0);
	cc_audit_report_fini(&rep);
	cc_audit_snap_fini(&s);
	cc_ledger_close(l);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The reader's snapshot of `dir` and the findings of the checks that say
 * what it could not look at, as "rc|ncgroups|ntasks|carve-found|CODE object|actual"
 * (or "rc|error"). */
static void read_report(const char *dir, struct cc_ledger *l, char *out, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_read_opts o = { .skip_irqs = true };
	_cleanup_root_ struct cc_root *root = cc_root_open(dir, &err);
	struct cc_audit_report rep = { 0 };
	struct cc_audit_snap s;
	struct cc_audit_in in = { l, NULL, NULL, &s };
	int n;

	if (!root || cc_audit_snap_read(root, l, &o, &s, &err) < 0) {
		snprintf(out, len, "-1|%s", err.msg);
		return;
	}
	n = snprintf(out, len, "0|%d|%d|%d", s.ncgroups, s.ntasks,
		     cc_audit_snap_find(&s, "/kubepods/pod1/c1") >= 0 &&
			     s.cgroups[cc_audit_snap_find(&s, "/kubepods/pod1/c1")].carve == 0);
	if (cc_audit_check_tasks(&in, &rep, &err) < 0)
		snprintf(out + n, len - (size_t)n, "|check: %s", err.msg);
	for (int i = 0; i < rep.n && (size_t)n < len; i++)
		n += snprintf(out + n, len - (size_t)n, "|%s %s|%s", cc_audit_code_name(rep.f[i].code), rep.f[i].object,
			      rep.f[i].actual);
	cc_audit_report_fini(&rep);
	cc_audit_snap_fini(&s);
}

/* Issue #26: one cgroup the audit cannot read (another owner's 0700
 * directory; the DaemonSet's audit has no capabilities) failed the whole
 * node's audit (exit 2).  Now it is skipped with its subtree and named in
 * CGROUP_UNREADABLE, and the rest is audited.  The reader runs as an
 * unprivileged uid in a child. */
START_TEST(test_read_unreadable)
{
	char dir[] = "/tmp/cc-audit-unread-XXXXXX", path[PATH_MAX], got[2048] = "";
	struct cc_ledger *l = ledger_new();
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	capture(dir, 4242);
	put_file(dir, "/sys/fs/cgroup/kubepods/evil/cgroup.events", "populated 1\n");
	put_file(dir, "/sys/fs/cgroup/kubepods/evil/inner/cgroup.events", "populated 1\n");
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/kubepods/evil", dir);
	ck_assert_int_eq(chown(path, 12345, 12345), 0);
	ck_assert_int_eq(chmod(path, 0700), 0);
	carve_add(l, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	ck_assert_int_eq(pipe(fds), 0);
	pid = cc_test_fork();
	if (pid == 0) {
		close(fds[0]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			snprintf(got, sizeof(got), "setresuid: %s", strerror(errno));
		else
			read_report(dir, l, got, sizeof(got));
		_exit(write(fds[1], got, strlen(got)) < 0);
	}
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	/* 4 cgroups read (evil dropped), c1's task and carve checked (the
	 * capture's task runs off its carve). */
	ck_assert_str_eq(got, "0|4|1|1|TASK_ESCAPED task 4242 (cgroup /kubepods/pod1/c1)|affinity 2|TASKS_HIDDEN tasks of 1 cgroup (first: /kubepods/pod1/c1)|"
			      "1 of 2 threads read as PID 0: outside this PID namespace, not checked|"
			      "CGROUP_UNREADABLE cgroup /kubepods/evil|Permission denied; 1 cgroup skipped with their subtrees");
	cc_ledger_close(l);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* A subtree nested past CC_AUDIT_DEPTH_MAX (anyone who holds a delegated
 * one can make it) is skipped below that depth, not a failed audit. */
START_TEST(test_read_too_deep)
{
	char dir[] = "/tmp/cc-audit-deep-XXXXXX", deep[PATH_MAX] = "/kubepods/deep", path[PATH_MAX + 64];
	char got[2048], want[PATH_MAX + 512];
	struct cc_ledger *l = ledger_new();

	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture(dir, 4242);
	carve_add(l, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	/* /kubepods is depth 1, deep 2: 68 levels in all, 65 and below go. */
	for (int d = 3; d <= 68; d++)
		strcat(deep, "/d");
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cgroup.events", deep);
	put_file(dir, path, "populated 0\n");
	read_report(dir, l, got, sizeof(got));
	deep[strlen("/kubepods/deep") + 2 * (65 - 2)] = '\0';
	snprintf(want, sizeof(want),
		 "0|%d|1|1|TASK_ESCAPED task 4242 (cgroup /kubepods/pod1/c1)|affinity 2|TASKS_HIDDEN tasks of 1 cgroup (first: /kubepods/pod1/c1)|"
		 "1 of 2 threads read as PID 0: outside this PID namespace, not checked|"
		 "CGROUP_UNREADABLE cgroup %s|nested deeper than 64 levels; 1 cgroup skipped with their subtrees",
		 4 + 64 - 1, deep);
	ck_assert_str_eq(got, want);
	cc_ledger_close(l);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* `audit --fix` re-pins thread 4242 (TASK_ESCAPED, read at snapshot time
 * in /kubepods/pod1/c1, started at tick 777) only when the id still names
 * that thread: same start time and same cgroup, read right before
 * sched_setaffinity.  Otherwise a reused id would pin an unrelated
 * process onto the carve (issue #26).  On a tree, a thread that is still
 * the same is refused as "not the real host": that is how far the repair
 * goes here. */
START_TEST(test_fix_repin_revalidates)
{
	static const struct {
		unsigned long long start;
		const char *cgroup;
		bool same;
	} cases[] = {
		{ 778, "/kubepods/pod1/c1", false }, /* another thread under the id */
		{ 777, "/kubepods/pod1/c2", false }, /* moved to another cgroup */
		{ 0, "/kubepods/pod1/c1", false },   /* nothing read to compare with */
		{ 777, "/kubepods/pod1/c1", true },
	};
	char dir[] = "/tmp/cc-audit-repin-XXXXXX";
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct world w;

	world_init(&w);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture(dir, 4242);
	root = cc_root_open(dir, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	carve_add(w.ledger, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_audit_report rep = { 0 };
		struct cc_audit_fix_result res;
		char *out = NULL;
		size_t outlen = 0;
		FILE *fp = open_memstream(&out, &outlen);
		struct cc_audit_fix_ctx fx = { root, w.ledger, w.topo, w.policy, fp, NULL, NULL };
		struct cc_finding *f = cc_audit_add(&rep, CC_AUDIT_TASK_ESCAPED, "c1", &err);
		int rc;

		ck_assert_ptr_nonnull(f);
		f->repair = CC_REPAIR_REPIN;
		f->num = 4242;
		f->start = cases[i].start;
		snprintf(f->object, sizeof(f->object), "task 4242 (cgroup %s)", cases[i].cgroup);
		snprintf(f->target, sizeof(f->target), "%s", cases[i].cgroup);
		cc_err_clear(&err);
		rc = cc_audit_fix(&fx, &rep, &res, &err);
		fclose(fp);
		ck_assert_int_eq(res.repaired, 0);
		if (cases[i].same) {
			ck_assert_int_eq(rc, -1);
			ck_assert_int_eq(res.failed, 1);
			ck_assert_msg(strstr(err.msg, "only changed on the real host"), "%s", err.msg);
		} else {
			ck_assert_msg(rc == 0, "case %zu: %s\n%s", i, err.msg, out);
			ck_assert_int_eq(res.failed, 0);
			ck_assert_msg(strstr(out, "left alone: TASK_ESCAPED task 4242"), "case %zu: %s", i, out);
		}
		free(out);
		cc_audit_report_fini(&rep);
	}
	world_fini(&w);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* What `audit --fix` does on the tree of `arg`, in a child confined by
 * the audit's filter (sandbox.h): read the snapshot, then repair a
 * TASK_ESCAPED whose thread is no longer the one read (the re-check
 * reads /proc again and leaves it alone).  0, or the step that failed. */
static int audit_fix_confined(void *arg)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_audit_read_opts o = { .skip_irqs = true };
	_cleanup_root_ struct cc_root *root = cc_root_open(arg, &err);
	struct cc_audit_report rep = { 0 };
	struct cc_audit_fix_result res;
	struct cc_audit_snap s;
	struct cc_finding *f;
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp;
	struct world w;
	int rc = 0;

	world_init(&w);
	carve_add(w.ledger, "c1", "/kubepods/pod1/c1", "cpuset-only", "latency", "2,4", "3,5", "0");
	if (!root || cc_audit_snap_read(root, w.ledger, &o, &s, &err) < 0)
		return 1;
	if (s.ncgroups != 4 || s.ntasks != 1 || s.tasks[0].tid != 4242)
		rc = 2;
	cc_audit_snap_fini(&s);
	fp = open_memstream(&out, &outlen);
	f = cc_audit_add(&rep, CC_AUDIT_TASK_ESCAPED, "c1", &err);
	if (!rc && (!fp || !f))
		rc = 3;
	if (!rc) {
		struct cc_audit_fix_ctx fx = { root, w.ledger, w.topo, w.policy, fp, NULL, NULL };

		f->repair = CC_REPAIR_REPIN;
		f->num = 4242;
		f->start = 778; /* read 777: another thread under the id */
		snprintf(f->object, sizeof(f->object), "task 4242 (cgroup /kubepods/pod1/c1)");
		snprintf(f->target, sizeof(f->target), "/kubepods/pod1/c1");
		if (cc_audit_fix(&fx, &rep, &res, &err) < 0 || res.failed)
			rc = 4;
		fflush(fp);
		if (!rc && !strstr(out, "left alone: TASK_ESCAPED task 4242"))
			rc = 5;
	}
	if (rc)
		fprintf(stderr, "audit_fix_confined step %d: %s\n", rc, err.msg);
	if (fp)
		fclose(fp);
	free(out);
	cc_audit_report_fini(&rep);
	world_fini(&w);
	return rc;
}

/* The audit's work (the tree's snapshot, a --fix repair's re-check) runs
 * under the filter `corecarve audit` loads (#26). */
START_TEST(test_read_and_fix_under_filter)
{
	char dir[] = "/tmp/cc-audit-filter-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	capture(dir, 4242);
	ck_assert_int_eq(cc_test_filtered(cc_sandbox_audit, audit_fix_confined, dir), 0);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

/* `corecarve audit --root` on a captured tree: a real machine's sysfs
 * (fixture F03, CPUs 0-15) with the cgroupfs capture above, and a
 * ledger written by the ledger module. */
START_TEST(test_cli_captured_tree)
{
	const char *bin = cc_test_bin("audit CLI tests");
	const char *sys = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	char dir[] = "/tmp/cc-audit-cli-XXXXXX", cmd[2048], state[64], out[64];
	struct cc_err err = CC_ERR_INIT;
	struct cc_ledger *l;
	struct cc_carve c;
	json_error_t je;
	json_t *doc, *f;
	int st;

	if (!bin || !sys)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -a '%s/sample1/.' '%s/'", sys, dir);
	ck_assert_int_eq(system(cmd), 0);
	capture(dir, 4242);
	snprintf(state, sizeof(state), "%s/state", dir);
	l = cc_ledger_open(state, &err);
	ck_assert_msg(l != NULL, "%s", err.msg);
	cc_carve_init(&c);
	snprintf(c.id, sizeof(c.id), "c1");
	snprintf(c.kind, sizeof(c.kind), "container");
	snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/pod1/c1");
	snprintf(c.class_name, sizeof(c.class_name), "latency");
	snprintf(c.mode, sizeof(c.mode), "cpuset-only");
	set(c.cpus, "2,4");
	set(c.parked, "3,5");
	set(c.mems, "0");
	c.exclusive = true;
	ck_assert_msg(cc_ledger_add(l, &c, &err) == 0, "%s", err.msg);
	ck_assert_msg(cc_ledger_commit(l, &err) == 0, "%s", err.msg);
	cc_ledger_close(l);
	cc_carve_fini(&c);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(cmd, sizeof(cmd),
		 "CORECARVE_POLICY= '%s' audit --root '%s' --state '%s' --json --prometheus '%s/m.prom' >'%s'", bin,
		 dir, state, dir, out);
	st = system(cmd);
	ck_assert(WIFEXITED(st));
	doc = json_load_file(out, 0, &je);
	ck_assert_msg(doc != NULL, "%s", je.text);
	ck_assert_int_eq(WEXITSTATUS(st), 1);
	f = json_object_get(doc, "findings");
	/* Drift, the quota, the escaped task, the kubelet, the thread this
	 * reader cannot see; the default policy's reserved 0-1 is not carved. */
	ck_assert_int_eq(json_array_size(f), 5);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 0), "code")), "CARVE_DRIFT");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 1), "code")), "QUOTA_ON_CARVE");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 2), "code")),
			 "KUBELET_STATIC_CPU_MANAGER");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 3), "code")), "TASK_ESCAPED");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 4), "code")), "TASKS_HIDDEN");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 4), "actual")),
			 "1 of 2 threads read as PID 0: outside this PID namespace, not checked");
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "cgroups")), 4);
	json_decref(doc);
	/* --fix refuses a captured tree: nothing there to repair. */
	snprintf(cmd, sizeof(cmd), "'%s' audit --root '%s' --state '%s' --fix >'%s' 2>&1", bin, dir, state, out);
	st = system(cmd);
	ck_assert_int_eq(WEXITSTATUS(st), 2);
	snprintf(cmd, sizeof(cmd), "grep -q 'cannot act on --root' '%s' && grep -q '^corecarve_audit_success 1' '%s/m.prom'",
		 out, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static const struct {
	const char *args, *error;
} bad_args[] = {
	{ "--sample-ms", "corecarve: --sample-ms: missing argument" },
	{ "--sample-ms 1e3", "corecarve: --sample-ms: expected an integer from 0 to 60000, got \"1e3\"" },
	{ "--sample-ms -1", "corecarve: --sample-ms: expected an integer from 0 to 60000, got \"-1\"" },
	{ "--sample-ms 60001", "corecarve: --sample-ms: expected an integer from 0 to 60000, got \"60001\"" },
	{ "--prometheus ''", "corecarve: --prometheus: empty file name" },
	{ "--synthetic 'pack:1 core:2 pu:1'", "corecarve: audit: --hwloc-xml and --synthetic describe no kernel to audit; use --root" },
	{ "--root /tmp --fix", "corecarve: audit: --fix changes the running kernel; it cannot act on --root /tmp" },
	{ "--bogus", "corecarve: audit: unexpected argument \"--bogus\" (see corecarve audit --help)" },
	{ "--fix=QUOTA", "corecarve: --fix: unknown finding code \"QUOTA\" (the codes are in docs/audit.md, e.g. QUOTA_ON_CARVE)" },
	{ "--fix=", "corecarve: --fix=: expected finding codes, e.g. --fix=QUOTA_ON_CARVE" },
	{ "--fix=,", "corecarve: --fix=: expected finding codes, e.g. --fix=QUOTA_ON_CARVE" },
	{ "--root /tmp --fix=QUOTA_ON_CARVE", "corecarve: audit: --fix changes the running kernel; it cannot act on --root /tmp" },
};

START_TEST(test_cli_bad_args)
{
	const char *bin = cc_test_bin("audit CLI tests");
	char cmd[512], line[512] = "";
	FILE *p;
	int st;

	if (!bin)
		return;
	snprintf(cmd, sizeof(cmd), "'%s' audit %s 2>&1 >/dev/null", bin, bad_args[_i].args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	st = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	ck_assert_str_eq(line, bad_args[_i].error);
	ck_assert_int_eq(WEXITSTATUS(st), 2);
}
END_TEST

/* The VM module's findings keep their kind as a stable audit code. */
START_TEST(test_vm_findings)
{
	struct cc_vm_finding vf[4] = {
		{ CC_VM_MIXED_CLASSES, "a", "vCPUs may run on performance, efficient" },
		{ CC_VM_SHARED_CPU, "b", "vCPU 0 shares CPU 3 with vm:c" },
		{ CC_VM_DRIFT, "c", "vCPU 1 (tid 7) may run on 0-15; the ledger pins it to 3" },
		{ CC_VM_GONE, "d", "process 9 is gone" },
	};
	static const char *const want[4] = { "VM_MIXED_CLASSES", "VM_SHARED_CPU", "VM_DRIFT", "VM_GONE" };
	struct cc_audit_report r = { 0 };
	struct cc_err err = CC_ERR_INIT;

	ck_assert_int_eq(cc_audit_add_vm(&r, vf, 4, &err), 0);
	ck_assert_int_eq(r.n, 4);
	for (int i = 0; i < 4; i++) {
		char carve[16];

		snprintf(carve, sizeof(carve), "vm:%s", vf[i].vm);
		ck_assert_str_eq(cc_audit_code_name(r.f[i].code), want[i]);
		ck_assert_int_eq(cc_audit_code_parse(want[i]), (int)r.f[i].code);
		ck_assert_str_eq(r.f[i].carve, carve);
		ck_assert_str_eq(r.f[i].actual, vf[i].msg);
		ck_assert_str_eq(cc_audit_repair_name(r.f[i].repair), "vm-reconcile");
	}
	ck_assert_int_eq(r.f[2].severity, CC_AUDIT_CRITICAL);
	ck_assert_int_eq(r.f[3].severity, CC_AUDIT_WARNING);
	cc_audit_report_fini(&r);
}
END_TEST

static Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_codes_stable);
	tcase_add_test(tc, test_report_sorted);
	tcase_add_test(tc, test_clean_worlds);
	tcase_add_test(tc, test_stale_record);
	tcase_add_test(tc, test_unknown_carve);
	tcase_add_test(tc, test_ledger_missing);
	tcase_add_test(tc, test_cli_state_and_prometheus);
	tcase_add_test(tc, test_drift_effective);
	tcase_add_test(tc, test_drift_latent_and_exclusive);
	tcase_add_test(tc, test_mems);
	tcase_add_test(tc, test_partition_invalid_names_claimant);
	tcase_add_test(tc, test_partition_kernel_kept);
	tcase_add_test(tc, test_partition_missing);
	tcase_add_test(tc, test_parked_partition);
	tcase_add_test(tc, test_partition_not_for_cpuset_only);
	tcase_add_test(tc, test_soft_leak_and_split_core);
	tcase_add_test(tc, test_split_core_partition_mode);
	tcase_add_test(tc, test_overlap_and_reserved);
	tcase_add_test(tc, test_quota_on_carve);
	tcase_add_test(tc, test_quota_demand_summed);
	tcase_add_test(tc, test_quota_with_pinning);
	tcase_add_test(tc, test_task_escaped);
	tcase_add_test(tc, test_tasks_hidden);
	tcase_add_test(tc, test_irq_on_carve);
	tcase_add_test(tc, test_irq_counts);
	tcase_add_test(tc, test_kubelet);
	tcase_add_loop_test(tc, test_parse_kubelet, 0, (int)(sizeof(kubelet_cases) / sizeof(kubelet_cases[0])));
	tcase_add_loop_test(tc, test_parse_status, 0, (int)(sizeof(status_cases) / sizeof(status_cases[0])));
	tcase_add_loop_test(tc, test_parse_stat, 0, (int)(sizeof(stat_cases) / sizeof(stat_cases[0])));
	tcase_add_test(tc, test_parse_cpu_max);
	tcase_add_test(tc, test_index);
	tcase_add_test(tc, test_prom);
	tcase_add_test(tc, test_vm_findings);
	tcase_add_test(tc, test_read_captured_tree);
	tcase_add_test(tc, test_read_tasks_bounded);
	tcase_add_test(tc, test_read_unreadable);
	tcase_add_test(tc, test_text_cut);
	tcase_add_test(tc, test_read_too_deep);
	tcase_add_test(tc, test_fix_repin_revalidates);
	tcase_add_test(tc, test_read_and_fix_under_filter);
	tcase_add_test(tc, test_cli_captured_tree);
	tcase_add_loop_test(tc, test_cli_bad_args, 0, (int)(sizeof(bad_args) / sizeof(bad_args[0])));
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(audit_suite)
