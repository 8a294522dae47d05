/* Bad input, end to end through the real ./corecarve binary ($CORECARVE_BIN):
 * the annotation, the policy, the vms section, the OCI state on stdin, the
 * bundle's config.json and captured --root trees.  Every row checks what
 * the hook promises a runtime: exit status 2, exactly one line on stderr
 * ("corecarve: ..." naming the field and the reason), nothing on stdout,
 * the ledger byte for byte as it was, and the --root tree (the "kernel"
 * the command looked at) unchanged, file by file.
 *
 * The hook runs with --root, so it writes no cgroup even when a row would
 * get that far; with a captured tree and a seeded ledger every stage up to
 * the first write is the production code path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "testlib.h"

extern char **environ;

#define PID "4242"
#define CGROUP "/kubepods/pod1/bad"

/* ---- the rows --------------------------------------------------------- */

enum kind {
	ANNOTATION, /* the corecarve.io/placement value, in the state's annotations */
	POLICY,     /* the policy file (--policy) */
	VMS,        /* a vms: section, in a policy that is fine otherwise */
	STATE,      /* the OCI state on stdin, as is */
	CONFIG,     /* the bundle's config.json (the state carries no annotations) */
	ROOT,       /* the --root tree (setup() breaks it) */
};

enum tree {
	T_EMPTY,  /* an empty directory: enough for what fails before the cgroup */
	T_CGROUP, /* /proc/<pid>/cgroup and a cgroup2 mount, no sysfs */
	T_FULL,   /* a real sysfs capture (F03) plus the above: every stage runs */
};

enum cmd { HOOK, TOPOLOGY };

struct env {
	char base[64];
	char tree[96];
	char state[96];
	char bundle[96];
	char policy[96];
	char in[96];
};

struct row {
	const char *name;
	enum kind kind;
	const char *text;                       /* NULL: gen() or setup() makes the input */
	const char *field;                      /* the one stderr line contains this */
	enum tree tree;
	void (*setup)(const struct env *e);     /* changes files after the defaults */
	char *(*gen)(size_t *len);              /* input too big or odd for a literal */
	enum cmd cmd;
	size_t len;                             /* 0: strlen(text) */
};

/* A policy the rows that do not test the policy use: the e2e harness's. */
static const char good_policy[] = "reserved: \"0-1,8-9\"\n"
				  "minShared: 1\n"
				  "classes:\n"
				  "  latency:\n"
				  "    coreType: performance\n"
				  "    smt: isolate\n"
				  "    irq: steer-away\n"
				  "  batch:\n"
				  "    coreType: efficient\n"
				  "    fallback: performance\n"
				  "    smt: full\n";

static const char good_annotation[] = "{class: latency, cpus: 1}";

/* A valid ledger with one carve, so "unchanged" means something. */
static const char seeded_ledger[] =
	"{\"version\": 2, \"index\": {\"carves\": 1, \"taken\": \"6-7\", \"steered\": \"\", "
	"\"digest\": \"fnv1a64:0000000000000000\"}, \"sections\": {}}\n"
	"[\"keep\", \"container\", \"/kubepods/keep\"]\n"
	"{\"id\": \"keep\", \"kind\": \"container\", \"cgroup\": \"/kubepods/keep\", \"class\": \"latency\", "
	"\"core_class\": \"performance\", \"mode\": \"remote-partition\", \"cpus\": \"6\", \"parked\": \"7\", "
	"\"mems\": \"0\", \"exclusive\": true, \"steer_irqs\": false, \"created\": 1700000000, \"changes\": []}\n";

/* ---- generated inputs ------------------------------------------------- */

static char *repeat(const char *head, const char *unit, int n, const char *mid, const char *unit2,
		    const char *tail, size_t *len)
{
	size_t hl = strlen(head), ul = strlen(unit), ml = strlen(mid), u2 = strlen(unit2), tl = strlen(tail);
	char *s = malloc(hl + (ul + u2) * (size_t)n + ml + tl + 1), *p = s;

	ck_assert_ptr_nonnull(s);
	p = mempcpy(p, head, hl);
	for (int i = 0; i < n; i++)
		p = mempcpy(p, unit, ul);
	p = mempcpy(p, mid, ml);
	for (int i = 0; i < n; i++)
		p = mempcpy(p, unit2, u2);
	p = mempcpy(p, tail, tl);
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

static char *gen_ann_deep(size_t *len)
{
	return repeat("{class: latency, cpus: 1, memory: ", "{a: ", 40, "1", "}", "}", len);
}

static char *gen_ann_huge(size_t *len)
{
	return repeat("{class: latency, cpus: 1} #", "x", 5000, "", "", "", len);
}

static char *gen_policy_deep(size_t *len)
{
	return repeat("classes: ", "{a: ", 40, "1", "}", "\n", len);
}

static char *gen_policy_huge(size_t *len)
{
	return repeat("# padding\n", "#123456789012345678901234567890123456789012345678901234567890\n", 20000,
		      "minShared: 1\n", "", "", len);
}

static char *gen_vms_many(size_t *len)
{
	char *s = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&s, &cap);

	ck_assert_ptr_nonnull(f);
	fputs(good_policy, f);
	fputs("vms:\n", f);
	for (int i = 0; i < 1100; i++)
		fprintf(f, "  vm%d: {class: latency}\n", i);
	fclose(f);
	*len = strlen(s);
	return s;
}

static char *gen_state_deep(size_t *len)
{
	return repeat("{\"id\":\"bad\",\"x\":", "[", 3000, "", "]", "}", len);
}

static char *gen_state_huge(size_t *len)
{
	return repeat("{\"id\":\"bad\",\"pad\":\"", "x", (1 << 20) + 16, "", "", "\"}", len);
}

static char *gen_state_long_bundle(size_t *len)
{
	return repeat("{\"id\":\"bad\",\"pid\":" PID ",\"bundle\":\"/", "b", PATH_MAX + 10, "", "", "\"}", len);
}

/* ---- files ------------------------------------------------------------- */

static void write_file(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* mkdir -p of dir/rel, in process: rows run by the hundred. */
static void mkdirs(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "%s: %s", path, strerror(errno));
		*p = c;
		if (!c)
			break;
	}
}

static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX], parent[PATH_MAX];
	const char *slash = strrchr(rel, '/');

	if (slash) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - rel), rel);
		mkdirs(dir, parent);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	/* A new file, never a write through a hard link into the fixture. */
	unlink(path);
	write_file(path, text, strlen(text), 0644);
}

static void link_in(const char *dir, const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	unlink(path);
	ck_assert_msg(symlink(target, path) == 0, "%s: %s", path, strerror(errno));
}

static void cgroup_tree(const char *tree)
{
	put(tree, "proc/" PID "/cgroup", "0::" CGROUP "\n");
	put(tree, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	mkdirs(tree, "sys/fs/cgroup" CGROUP);
	mkdirs(tree, "sys/fs/cgroup/kubepods/keep");
}

/* The F03 capture (a 4P+8E laptop's sysfs), as hard links (3600 entries:
 * a copy per row is too slow on a busy 2-core machine); put() and link_in()
 * replace a file rather than write through its link, so the shared
 * extraction is never changed.  false when the fixture is absent. */
static bool full_tree(const char *tree)
{
	const char *src = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	char cmd[3 * PATH_MAX];

	if (!src)
		return false;
	/* The tarball holds one top-level directory, sample1/. */
	snprintf(cmd, sizeof(cmd), "cp -al '%s/sample1/.' '%s/'", src, tree);
	ck_assert_int_eq(system(cmd), 0);
	cgroup_tree(tree);
	return true;
}

/* ---- what each row breaks ------------------------------------------------ */

static void cpu_online(const struct env *e, const char *v)
{
	put(e->tree, "sys/devices/system/cpu/online", v);
}

static void s_online_open(const struct env *e) { cpu_online(e, "0-\n"); }
static void s_online_reversed(const struct env *e) { cpu_online(e, "5-2\n"); }
static void s_online_huge(const struct env *e) { cpu_online(e, "0-99999\n"); }

/* A link out of the tree resolves inside it (RESOLVE_IN_ROOT): the host's
 * /etc/passwd must never be read as a cpu-list. */
static void s_online_abs_link(const struct env *e)
{
	link_in(e->tree, "sys/devices/system/cpu/online", "/etc/passwd");
}

static void s_online_rel_link(const struct env *e)
{
	link_in(e->tree, "sys/devices/system/cpu/online", "../../../../../../../../../../etc/passwd");
}

static void s_root_missing(const struct env *e)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->tree);
	ck_assert_int_eq(system(cmd), 0);
}

static void s_root_file(const struct env *e)
{
	s_root_missing(e);
	write_file(e->tree, "x", 1, 0644);
}

static void s_cg_dotdot(const struct env *e) { put(e->tree, "proc/" PID "/cgroup", "0::/../../etc\n"); }
static void s_cg_v1_only(const struct env *e) { put(e->tree, "proc/" PID "/cgroup", "4:cpuset:/x\n1:name=systemd:/x\n"); }
static void s_cg_root(const struct env *e) { put(e->tree, "proc/" PID "/cgroup", "0::/\n"); }
static void s_cg_deleted(const struct env *e) { put(e->tree, "proc/" PID "/cgroup", "0::" CGROUP " (deleted)\n"); }
static void s_cg_control(const struct env *e) { put(e->tree, "proc/" PID "/cgroup", "0::/kube\033[2Jpods\n"); }

static void s_cg_procdir(const struct env *e)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/proc/" PID "/cgroup", e->tree);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void s_no_controllers(const struct env *e)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", e->tree);
	ck_assert_int_eq(unlink(path), 0);
}

static void s_no_cpuset(const struct env *e)
{
	put(e->tree, "sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
}

static void s_cgroup_is_file(const struct env *e)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rmdir '%s/sys/fs/cgroup" CGROUP "'", e->tree);
	ck_assert_int_eq(system(cmd), 0);
	put(e->tree, "sys/fs/cgroup" CGROUP, "not a cgroup\n");
}

/* A link where the container's cgroup should be, pointing at a real
 * directory elsewhere in the tree: it must not be followed. */
static void s_cgroup_link_out(const struct env *e)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rmdir '%s/sys/fs/cgroup" CGROUP "'", e->tree);
	ck_assert_int_eq(system(cmd), 0);
	link_in(e->tree, "sys/fs/cgroup" CGROUP, "/etc");
	mkdirs(e->tree, "etc");
}

static void s_cgroup_parent_link(const struct env *e)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mv '%s/sys/fs/cgroup/kubepods/pod1' '%s/elsewhere'", e->tree, e->tree);
	ck_assert_int_eq(system(cmd), 0);
	link_in(e->tree, "sys/fs/cgroup/kubepods/pod1", "../../../../elsewhere");
}

static void s_state_link(const struct env *e)
{
	char real[128];

	snprintf(real, sizeof(real), "%s/real-state", e->base);
	ck_assert_int_eq(rename(e->state, real), 0);
	ck_assert_int_eq(symlink(real, e->state), 0);
}

static void s_state_group_writable(const struct env *e)
{
	ck_assert_int_eq(chmod(e->state, 0770), 0);
}

static void s_ledger_corrupt(const struct env *e)
{
	char path[128];
	static const char bad[] =
		"{\"version\": 2, \"index\": {\"carves\": 1, \"taken\": \"\", \"steered\": \"\", "
		"\"digest\": \"fnv1a64:0000000000000000\"}, \"sections\": {}}\n"
		"[\"x\", \"container\", \"/kubepods/x\"]\n{\"id\": 7}\n";

	snprintf(path, sizeof(path), "%s/ledger.json", e->state);
	write_file(path, bad, strlen(bad), 0600);
}

static void s_config_link(const struct env *e)
{
	char path[128], target[128];

	snprintf(path, sizeof(path), "%s/config.json", e->bundle);
	snprintf(target, sizeof(target), "%s/real.json", e->bundle);
	unlink(path);
	write_file(target, "{}", 2, 0644);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void s_config_dir(const struct env *e)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/config.json", e->bundle);
	unlink(path);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

/* A FIFO nobody writes to: opening it must not hang the hook. */
static void s_config_fifo(const struct env *e)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/config.json", e->bundle);
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
}

static void s_config_huge(const struct env *e)
{
	char path[128];
	size_t len;
	_cleanup_free_ char *big = repeat("{\"pad\":\"", "x", (4 << 20) + 16, "", "", "\"}", &len);

	snprintf(path, sizeof(path), "%s/config.json", e->bundle);
	write_file(path, big, len, 0644);
}

static void s_bundle_missing(const struct env *e)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->bundle);
	ck_assert_int_eq(system(cmd), 0);
}

static void s_policy_dir(const struct env *e)
{
	unlink(e->policy);
	ck_assert_int_eq(mkdir(e->policy, 0755), 0);
}

static void s_policy_fifo(const struct env *e)
{
	unlink(e->policy);
	ck_assert_int_eq(mkfifo(e->policy, 0644), 0);
}

static void s_policy_missing(const struct env *e)
{
	ck_assert_int_eq(unlink(e->policy), 0);
}

/* ---- the table ----------------------------------------------------------- */

#define ANN(n, t, f) { n, ANNOTATION, t, f, T_EMPTY, NULL, NULL, HOOK, 0 }
#define POL(n, t, f) { n, POLICY, t, f, T_CGROUP, NULL, NULL, HOOK, 0 }
#define VM(n, t, f) { n, VMS, t, f, T_CGROUP, NULL, NULL, HOOK, 0 }
#define STA(n, t, f) { n, STATE, t, f, T_EMPTY, NULL, NULL, HOOK, 0 }
#define CFG(n, t, f) { n, CONFIG, t, f, T_EMPTY, NULL, NULL, HOOK, 0 }

static const struct row rows[] = {
	/* The annotation: user input, the hook's first parse. */
	ANN("ann-truncated", "{class: latency, cpus:", "annotation corecarve.io/placement"),
	ANN("ann-cpus-word", "{class: latency, cpus: zero}", "cpus: expected an integer"),
	ANN("ann-cpus-negative", "{class: latency, cpus: -1}", "cpus"),
	ANN("ann-cpus-zero", "{class: latency, cpus: 0}", "cpus"),
	ANN("ann-cpus-overflow", "{class: latency, cpus: 99999999999999999999999}", "cpus"),
	ANN("ann-cpus-over-limit", "{class: latency, cpus: 8193}", "cpus"),
	ANN("ann-cpus-list", "{class: latency, cpus: [1, 2]}", "cpus"),
	ANN("ann-cpus-real", "{class: latency, cpus: 1.5}", "cpus"),
	ANN("ann-class-path", "{class: ../../etc/passwd, cpus: 1}", "class"),
	ANN("ann-class-missing", "{cpus: 1}", "class: required key is missing"),
	ANN("ann-unknown-key", "{class: latency, cpus: 1, command: rm}", "command: unknown key"),
	ANN("ann-alias", "{class: &a latency, cpus: 1, smt: *a}", "alias"),
	ANN("ann-duplicate", "{class: latency, class: batch, cpus: 1}", "class"),
	ANN("ann-two-docs", "--- {class: latency, cpus: 1}\n--- {class: batch, cpus: 1}\n", "document"),
	ANN("ann-tag", "{class: !!python/object latency, cpus: 1}", "tag"),
	ANN("ann-memory", "{class: latency, cpus: 1, memory: everywhere}", "memory"),
	ANN("ann-not-mapping", "latency", "expected a mapping"),
	ANN("ann-newline-escape", "{class: latency, cpus: \"1\\n\\u001b[2J\"}", "cpus"),
	{ "ann-deep", ANNOTATION, NULL, "memory", T_EMPTY, NULL, gen_ann_deep, HOOK, 0 },
	{ "ann-huge", ANNOTATION, NULL, "bytes, more than the 4096 allowed", T_EMPTY, NULL, gen_ann_huge, HOOK, 0 },
	/* The hook's refusal lists the classes the policy has, as plan's does. */
	{ "ann-unknown-class", ANNOTATION, "{class: warp, cpus: 1}",
	  "class: unknown placement class \"warp\" (known: latency, batch",
	  T_CGROUP, NULL, NULL, HOOK, 0 },
	/* Overrides the class does not grant an annotation (annotationMaySet):
	 * refused after discovery, before the first write, on a real capture. */
	{ "ann-irq-not-granted", ANNOTATION, "{class: latency, cpus: 1, irq: leave}",
	  "corecarve: createRuntime bad: container bad: annotation corecarve.io/placement: irq: class \"latency\" does not let an annotation "
	  "set irq (policy classes.latency.annotationMaySet); remove irq from the annotation or add it there\n",
	  T_FULL, NULL, NULL, HOOK, 0 },
	{ "ann-smt-not-granted", ANNOTATION, "{class: batch, cpus: 1, smt: isolate, memory: spread}",
	  "annotation corecarve.io/placement: smt: class \"batch\" does not let an annotation set smt", T_FULL, NULL, NULL,
	  HOOK, 0 },
	{ "ann-per-container-not-granted", STATE,
	  "{\"id\":\"bad\",\"pid\":" PID ",\"annotations\":{\"io.kubernetes.container.name\":\"web\","
	  "\"corecarve.io/placement\":\"{class: latency, cpus: 1}\","
	  "\"corecarve.io/placement.web\":\"{class: latency, cpus: 1, smt: full, irq: steer-away}\"}}",
	  "annotation corecarve.io/placement.web: irq, smt: class \"latency\" does not let an annotation set irq or smt",
	  T_FULL, NULL, NULL, HOOK, 0 },
	{ "ann-json-number", STATE, "{\"id\":\"bad\",\"pid\":" PID ",\"annotations\":{\"corecarve.io/placement\":1}}",
	  "annotations.corecarve.io/placement: expected a string", T_EMPTY, NULL, NULL, HOOK, 0 },

	/* The policy: operator input, read by the hook on every start. */
	POL("pol-truncated", "classes:\n  latency:\n    coreType: [perf", "policy"),
	POL("pol-minshared-list", "minShared: [1]\n", "minShared"),
	POL("pol-minshared-negative", "minShared: -1\n", "minShared"),
	POL("pol-minshared-overflow", "minShared: 99999999999999999999999\n", "minShared"),
	POL("pol-reserved-open", "reserved: \"0-\"\n", "reserved: invalid cpu list"),
	POL("pol-reserved-reversed", "reserved: \"5-2\"\n", "reserved: invalid cpu list"),
	POL("pol-reserved-huge", "reserved: \"99999\"\n", "reserved: invalid cpu list"),
	POL("pol-alias", "x: &n 1\nminShared: *n\n", "alias"),
	POL("pol-not-utf8", "reserved: \"\xff\xfe\"\n", "UTF-8"),
	POL("pol-class-unknown-key", "classes:\n  latency:\n    coreTyp: performance\n", "classes.latency.coreTyp"),
	POL("pol-smt-half", "classes:\n  latency:\n    coreType: performance\n    smt: half\n", "classes.latency.smt"),
	POL("pol-duplicate", "minShared: 1\nminShared: 2\n", "minShared"),
	POL("pol-coreclass-range", "coreClasses:\n  big: \"0-99999\"\n", "coreClasses.big"),
	POL("pol-nul", "minShared: 1\n\0classes: {}\n", "policy"),
	{ "pol-deep", POLICY, NULL, "classes", T_CGROUP, NULL, gen_policy_deep, HOOK, 0 },
	{ "pol-huge", POLICY, NULL, "bytes, larger than the 1048576-byte limit", T_CGROUP, NULL, gen_policy_huge, HOOK, 0 },
	{ "pol-directory", POLICY, "", "not a regular file", T_CGROUP, s_policy_dir, NULL, HOOK, 0 },
	{ "pol-fifo", POLICY, "", "not a regular file", T_CGROUP, s_policy_fifo, NULL, HOOK, 0 },
	{ "pol-missing", POLICY, "", "No such file", T_CGROUP, s_policy_missing, NULL, HOOK, 0 },

	/* The VMs (vms.yaml's parser, reached through the policy's vms: section). */
	VM("vms-not-mapping", "vms: [web, db]\n", "vms"),
	VM("vms-class-missing", "vms:\n  web: {libvirt: web}\n", "vms.web.class"),
	VM("vms-class-unknown", "vms:\n  web: {class: warp}\n", "vms.web.class"),
	VM("vms-threads", "vms:\n  web: {class: latency, threads: 3}\n", "vms.web.threads"),
	VM("vms-name", "vms:\n  \"../web\": {class: latency}\n", "vms"),
	VM("vms-two-finders", "vms:\n  web: {class: latency, libvirt: web, pidfile: /run/web.pid}\n", "vms.web"),
	VM("vms-pidfile-relative", "vms:\n  web: {class: latency, pidfile: ../web.pid}\n", "vms.web.pidfile"),
	VM("vms-emulator", "vms:\n  web: {class: latency, emulator: everywhere}\n", "vms.web.emulator"),
	{ "vms-too-many", VMS, NULL, "vms", T_CGROUP, NULL, gen_vms_many, HOOK, 0 },

	/* The OCI state on stdin: the runtime's, but checked as strictly. */
	STA("state-empty", "", "OCI state: invalid JSON"),
	STA("state-truncated", "{\"id\":\"bad\"", "OCI state: invalid JSON"),
	STA("state-array", "[1,2]", "OCI state: expected a JSON object"),
	STA("state-id-missing", "{\"pid\":1}", "OCI state: id: missing"),
	STA("state-id-number", "{\"id\":5}", "OCI state: id: expected a string"),
	STA("state-id-path", "{\"id\":\"../../etc\"}", "OCI state: id"),
	STA("state-id-newline", "{\"id\":\"a\\nb\"}", "OCI state: id"),
	/* Another kind's ledger id, and a bidi override (log spoofing). */
	STA("state-id-exec-alias", "{\"id\":\"exec:1\"}", "OCI state: id: a 6-byte id is not a valid container id"),
	STA("state-id-vm-alias", "{\"id\":\"vm:keep\"}", "OCI state: id: a 7-byte id is not a valid container id"),
	STA("state-id-bidi", "{\"id\":\"ab\\u202ecd\"}", "OCI state: id: a 7-byte id is not a valid container id"),
	STA("state-pid-negative", "{\"id\":\"bad\",\"pid\":-1}", "OCI state: pid"),
	STA("state-pid-huge", "{\"id\":\"bad\",\"pid\":99999999999}", "OCI state: pid"),
	STA("state-pid-overflow", "{\"id\":\"bad\",\"pid\":999999999999999999999999999}", "OCI state"),
	STA("state-pid-string", "{\"id\":\"bad\",\"pid\":\"12\"}", "OCI state: pid"),
	STA("state-annotations-array", "{\"id\":\"bad\",\"annotations\":[]}", "OCI state: annotations"),
	STA("state-annotation-object", "{\"id\":\"bad\",\"annotations\":{\"k\":{}}}", "OCI state: annotations.k"),
	STA("state-duplicate", "{\"id\":\"a\",\"id\":\"b\"}", "OCI state"),
	STA("state-not-utf8", "{\"id\":\"\xc3\x28\"}", "OCI state: invalid JSON"),
	STA("state-nul", "{\"id\":\"a\\u0000b\"}", "OCI state: id: holds a NUL byte"),
	STA("state-bundle-number", "{\"id\":\"bad\",\"bundle\":7}", "OCI state: bundle"),
	{ "state-deep", STATE, NULL, "OCI state: invalid JSON", T_EMPTY, NULL, gen_state_deep, HOOK, 0 },
	{ "state-huge", STATE, NULL, "larger than", T_EMPTY, NULL, gen_state_huge, HOOK, 0 },
	{ "state-bundle-long", STATE, NULL, "OCI state: bundle", T_EMPTY, NULL, gen_state_long_bundle, HOOK, 0 },

	/* config.json in the bundle (crun hands createRuntime no annotations). */
	CFG("cfg-invalid", "{\"annotations\":", "config.json: invalid JSON"),
	CFG("cfg-annotations-array", "{\"annotations\":[]}", "config.json: annotations"),
	CFG("cfg-annotation-number", "{\"annotations\":{\"corecarve.io/placement\":2}}", "config.json: annotations"),
	CFG("cfg-cgroupspath-number", "{\"annotations\":{},\"linux\":{\"cgroupsPath\":3}}", "linux.cgroupsPath"),
	CFG("cfg-quota-string", "{\"annotations\":{},\"linux\":{\"resources\":{\"cpu\":{\"quota\":\"x\"}}}}",
	    "linux.resources.cpu.quota"),
	CFG("cfg-period-negative", "{\"annotations\":{},\"linux\":{\"resources\":{\"cpu\":{\"period\":-1}}}}",
	    "linux.resources.cpu.period"),
	CFG("cfg-linux-array", "{\"annotations\":{},\"linux\":[]}", "config.json: linux"),
	{ "cfg-symlink", CONFIG, "{}", "config.json", T_EMPTY, s_config_link, NULL, HOOK, 0 },
	{ "cfg-directory", CONFIG, "{}", "config.json: not a regular file", T_EMPTY, s_config_dir, NULL, HOOK, 0 },
	{ "cfg-fifo", CONFIG, "{}", "config.json: not a regular file", T_EMPTY, s_config_fifo, NULL, HOOK, 0 },
	{ "cfg-huge", CONFIG, "{}", "config.json: 4194330 bytes, larger than the 4194304-byte limit", T_EMPTY, s_config_huge, NULL, HOOK, 0 },
	{ "cfg-bundle-missing", CONFIG, "{}", "bundle", T_EMPTY, s_bundle_missing, NULL, HOOK, 0 },

	/* Captured --root trees: what the kernel interfaces say. */
	{ "root-missing", ROOT, NULL, "--root", T_EMPTY, s_root_missing, NULL, TOPOLOGY, 0 },
	{ "root-is-file", ROOT, NULL, "--root", T_EMPTY, s_root_file, NULL, TOPOLOGY, 0 },
	{ "root-online-open", ROOT, NULL, "/sys/devices/system/cpu/online", T_FULL, s_online_open, NULL, TOPOLOGY, 0 },
	{ "root-online-reversed", ROOT, NULL, "/sys/devices/system/cpu/online", T_FULL, s_online_reversed, NULL,
	  TOPOLOGY, 0 },
	{ "root-online-huge", ROOT, NULL, "/sys/devices/system/cpu/online", T_FULL, s_online_huge, NULL, TOPOLOGY, 0 },
	{ "root-online-abs-link", ROOT, NULL, "/sys/devices/system/cpu/online", T_FULL, s_online_abs_link, NULL,
	  TOPOLOGY, 0 },
	{ "root-online-rel-link", ROOT, NULL, "/sys/devices/system/cpu/online", T_FULL, s_online_rel_link, NULL,
	  TOPOLOGY, 0 },
	{ "root-cgroup-dotdot", ROOT, NULL, "unsafe cgroup path", T_CGROUP, s_cg_dotdot, NULL, HOOK, 0 },
	{ "root-cgroup-v1-only", ROOT, NULL, "no cgroup v2 (0::) entry", T_CGROUP, s_cg_v1_only, NULL, HOOK, 0 },
	{ "root-cgroup-root", ROOT, NULL, "root cgroup", T_CGROUP, s_cg_root, NULL, HOOK, 0 },
	{ "root-cgroup-deleted", ROOT, NULL, "was deleted", T_CGROUP, s_cg_deleted, NULL, HOOK, 0 },
	{ "root-cgroup-control-chars", ROOT, NULL, "unsafe cgroup path", T_CGROUP, s_cg_control, NULL, HOOK, 0 },
	{ "root-proc-cgroup-dir", ROOT, NULL, "/proc/" PID "/cgroup", T_CGROUP, s_cg_procdir, NULL, HOOK, 0 },
	{ "root-no-cgroup2", ROOT, NULL, "not a cgroup v2 mount", T_CGROUP, s_no_controllers, NULL, HOOK, 0 },
	{ "root-no-cpuset", ROOT, NULL, "cpuset controller is not available", T_CGROUP, s_no_cpuset, NULL, HOOK, 0 },
	{ "root-cgroup-is-file", ROOT, NULL, "cgroup " CGROUP ": " CGROUP " is not a directory", T_FULL,
	  s_cgroup_is_file, NULL, HOOK, 0 },
	{ "root-cgroup-link", ROOT, NULL, "cgroup " CGROUP ": " CGROUP " is a symbolic link", T_FULL,
	  s_cgroup_link_out, NULL, HOOK, 0 },
	{ "root-cgroup-parent-link", ROOT, NULL, "/kubepods/pod1 is a symbolic link", T_FULL, s_cgroup_parent_link,
	  NULL, HOOK, 0 },
	{ "root-state-symlink", ROOT, NULL, "is a symbolic link; refusing it", T_FULL, s_state_link, NULL, HOOK, 0 },
	{ "root-state-group-writable", ROOT, NULL, "group- or world-writable", T_FULL, s_state_group_writable, NULL,
	  HOOK, 0 },
	{ "root-ledger-corrupt", ROOT, NULL, "carves[0].id: expected a string", T_FULL, s_ledger_corrupt, NULL, HOOK, 0 },
};

#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

/* ---- running the binary -------------------------------------------------- */


/* A digest of a whole tree, links and file contents included, never
 * following a link: what "the kernel state is unchanged" means here. */
static unsigned long long digest;

static void mix(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		digest = (digest ^ b[i]) * 1099511628211ULL;
}

static int digest_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char buf[4096];

	(void)ftw;
	mix(path, strlen(path) + 1);
	mix(&st->st_mode, sizeof(st->st_mode));
	if (flag == FTW_SL) {
		ssize_t n = readlink(path, buf, sizeof(buf));

		if (n > 0)
			mix(buf, (size_t)n);
	} else if (S_ISREG(st->st_mode)) {
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		ssize_t n;

		if (fd >= 0) {
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				mix(buf, (size_t)n);
			close(fd);
		}
	}
	return 0;
}

static unsigned long long tree_digest(const char *dir)
{
	digest = 1469598103934665603ULL;
	if (nftw(dir, digest_entry, 32, FTW_PHYS) < 0)
		mix("missing", 7);
	return digest;
}

/* Run the binary with argv, stdin from `in`, a clean environment (no
 * CORECARVE_* variables; sanitizer options kept). */
static int run(const char *const argv[], const struct env *e, char **out, size_t *outlen, char **errout,
	       size_t *errlen)
{
	char o[128], er[128];
	char *envp[16];
	int n = 0, st;
	posix_spawn_file_actions_t fa;
	pid_t pid;

	envp[n++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	for (char **v = environ; *v && n < 15; v++)
		if (!strncmp(*v, "ASAN_OPTIONS=", 13) || !strncmp(*v, "UBSAN_OPTIONS=", 14) ||
		    !strncmp(*v, "LSAN_OPTIONS=", 13))
			envp[n++] = *v;
	envp[n] = NULL;
	snprintf(o, sizeof(o), "%s/stdout", e->base);
	snprintf(er, sizeof(er), "%s/stderr", e->base);
	ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, e->in, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, o, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, er, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	*out = cc_test_slurp_len(o, outlen);
	*errout = cc_test_slurp_len(er, errlen);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *state_json(const char *annotation, const char *bundle)
{
	_cleanup_json_ json_t *j = json_pack("{s:s, s:s, s:i, s:s, s:s}", "ociVersion", "1.0.2", "id", "bad",
					     "pid", atoi(PID), "status", "created", "bundle", bundle);
	char *s;

	ck_assert_ptr_nonnull(j);
	if (annotation) {
		json_t *v = json_string(annotation);

		ck_assert_msg(v != NULL, "annotation must be UTF-8 (JSON carries it)");
		json_object_set_new(j, "annotations", json_pack("{s:o}", "corecarve.io/placement", v));
	}
	s = json_dumps(j, JSON_COMPACT);
	ck_assert_ptr_nonnull(s);
	return s;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

START_TEST(test_bad_input)
{
	const struct row *r = &rows[_i];
	const char *bin = cc_test_bin("bad input through the binary");
	_cleanup_free_ char *gen = NULL, *policy_text = NULL, *stdin_text = NULL;
	_cleanup_free_ char *out = NULL, *errout = NULL, *ledger_before = NULL, *ledger_after = NULL;
	const char *input = r->text;
	size_t len = r->len, outlen, errlen, lb, la;
	struct env e;
	char lpath[128];
	unsigned long long before, after;
	int status;

	if (!bin)
		return;
	snprintf(e.base, sizeof(e.base), "/tmp/cc-bad-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(e.base));
	snprintf(e.tree, sizeof(e.tree), "%s/tree", e.base);
	snprintf(e.state, sizeof(e.state), "%s/state", e.base);
	snprintf(e.bundle, sizeof(e.bundle), "%s/bundle", e.base);
	snprintf(e.policy, sizeof(e.policy), "%s/policy.yaml", e.base);
	snprintf(e.in, sizeof(e.in), "%s/stdin", e.base);
	ck_assert_int_eq(mkdir(e.tree, 0755), 0);
	ck_assert_int_eq(mkdir(e.state, 0700), 0);
	ck_assert_int_eq(mkdir(e.bundle, 0755), 0);
	if (r->tree == T_CGROUP)
		cgroup_tree(e.tree);
	if (r->tree == T_FULL && !full_tree(e.tree)) {
		cc_test_skip("%s: needs the F03 fixture", r->name);
		nftw(e.base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		return;
	}
	snprintf(lpath, sizeof(lpath), "%s/ledger.json", e.state);
	write_file(lpath, seeded_ledger, strlen(seeded_ledger), 0600);
	if (r->gen)
		input = gen = r->gen(&len);
	else if (input && !len)
		len = strlen(input);

	/* Defaults: a good policy, a good annotation, an empty config.json. */
	if (r->kind == POLICY) {
		write_file(e.policy, input, len, 0644);
	} else if (r->kind == VMS) {
		if (r->gen) {
			write_file(e.policy, input, len, 0644);
		} else {
			ck_assert_int_ge(asprintf(&policy_text, "%s%s", good_policy, input), 0);
			write_file(e.policy, policy_text, strlen(policy_text), 0644);
		}
	} else {
		write_file(e.policy, good_policy, strlen(good_policy), 0644);
	}
	{
		char cfg[128];

		snprintf(cfg, sizeof(cfg), "%s/config.json", e.bundle);
		if (r->kind == CONFIG)
			write_file(cfg, input, len, 0644);
		else
			write_file(cfg, "{}", 2, 0644);
	}
	if (r->kind == STATE)
		write_file(e.in, input, len, 0600);
	else {
		stdin_text = state_json(r->kind == ANNOTATION ? input : r->kind == CONFIG ? NULL : good_annotation,
					e.bundle);
		write_file(e.in, stdin_text, strlen(stdin_text), 0600);
	}
	if (r->setup)
		r->setup(&e);

	ledger_before = cc_test_slurp_len(lpath, &lb);
	before = tree_digest(e.tree);
	if (r->cmd == TOPOLOGY) {
		const char *argv[] = { bin, "topology", "--root", e.tree, "--policy", e.policy, NULL };

		status = run(argv, &e, &out, &outlen, &errout, &errlen);
	} else {
		const char *argv[] = { bin, "hook", "createRuntime", "--root", e.tree, "--policy", e.policy,
				       "--state", e.state, NULL };

		status = run(argv, &e, &out, &outlen, &errout, &errlen);
	}
	after = tree_digest(e.tree);
	ledger_after = cc_test_slurp_len(lpath, &la);

	ck_assert_msg(status == 2, "%s: exit status %d, stderr: %s", r->name, status, errout);
	ck_assert_msg(outlen == 0, "%s: stdout not empty: %s", r->name, out);
	ck_assert_msg(errlen > 0 && errout[errlen - 1] == '\n' && memchr(errout, '\n', errlen) == errout + errlen - 1,
		      "%s: stderr is not exactly one line: \"%s\"", r->name, errout);
	ck_assert_msg(!strncmp(errout, "corecarve: ", 11), "%s: %s", r->name, errout);
	ck_assert_msg(memchr(errout, '\033', errlen) == NULL, "%s: raw escape on the terminal: %s", r->name, errout);
	if (r->field)
		ck_assert_msg(strstr(errout, r->field), "%s: stderr does not name \"%s\": %s", r->name, r->field, errout);
	/* Nothing of the host leaked in through a link. */
	ck_assert_msg(!strstr(errout, "root:x:0:0"), "%s: read the host's /etc/passwd: %s", r->name, errout);
	ck_assert_msg(lb == la && !memcmp(ledger_before, ledger_after, lb), "%s: the ledger changed", r->name);
	ck_assert_msg(before == after, "%s: the --root tree changed", r->name);
	nftw(e.base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* The table is what the issue asks for: at least 40 rows, every reader. */
START_TEST(test_table_covers_readers)
{
	int per[ROOT + 1] = { 0 };

	for (int i = 0; i < NROWS; i++)
		per[rows[i].kind]++;
	ck_assert_int_ge(NROWS, 40);
	for (int k = ANNOTATION; k <= ROOT; k++)
		ck_assert_msg(per[k] >= 5, "reader %d has only %d rows", k, per[k]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("badinput");
	TCase *tc = tcase_create("cli");

	/* Each row starts the binary, some load a captured topology. */
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_bad_input, 0, NROWS);
	tcase_add_test(tc, test_table_covers_readers);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
