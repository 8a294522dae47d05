/* corecarve doctor: daemons and configuration around the kernel (irqbalance,
 * kubelet's CPU manager, the hooks.d files, the ledger).  Configuration
 * files are read through the root too, so a captured tree is examined as a
 * whole; the ledger lives in the state directory. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capacity.h"
#include "cleanup.h"
#include "cpulist.h"
#include "doctor.h"
#include "irqbalance.h"
#include "ledger.h"

/* The pid of a running irqbalance, 0 when none, -1 when the root has no
 * process list at all (a captured tree of sysfs). */
static long irqbalance_pid(const struct cc_root *root)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, "/proc", &err);
	struct dirent *de;
	bool procs = false;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		_cleanup_free_ char *comm = NULL;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		comm = cc_root_read(root, path, 64, &err);
		procs |= comm != NULL;
		if (comm && !strcmp(comm, "irqbalance"))
			return strtol(de->d_name, NULL, 10);
	}
	return procs || root->is_host ? 0 : -1;
}

/* The installed version of a Debian package, from dpkg's status file. */
static char *dpkg_version(const struct cc_root *root, const char *pkg)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *status = cc_root_read(root, "/var/lib/dpkg/status", 64u << 20, &err);
	char needle[128];
	const char *p, *end, *v;

	if (!status)
		return NULL;
	snprintf(needle, sizeof(needle), "Package: %s\n", pkg);
	for (p = status; (p = strstr(p, needle)); p++)
		if (p == status || p[-1] == '\n')
			break;
	if (!p)
		return NULL;
	end = strstr(p, "\n\n");
	v = strstr(p, "\nVersion: ");
	if (!v || (end && v > end))
		return NULL;
	v += strlen("\nVersion: ");
	return strndup(v, strcspn(v, "\n"));
}

void cc_doctor_check_irqbalance(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	long pid = irqbalance_pid(ctx->root);
	_cleanup_free_ char *version = dpkg_version(ctx->root, "irqbalance");
	_cleanup_free_ char *text = NULL, *list = NULL, *mask = NULL;
	const char *file = NULL, *understands;
	int v = cc_doctor_version(version);
	const char *why = "irqbalance moves IRQs every 10 s and would put them back on carved CPUs; corecarve "
			  "keeps its banned CPUs in the environment file and tells a running daemon over its socket";

	for (int i = 0; cc_irqbalance_files[i] && !text; i++)
		if ((text = cc_root_read(ctx->root, cc_irqbalance_files[i], CC_IRQBALANCE_FILE_MAX, &err)))
			file = cc_irqbalance_files[i];
	if (text && (cc_env_get(text, CC_IRQBALANCE_LIST, &list, NULL, &err) < 0 ||
		     cc_env_get(text, CC_IRQBALANCE_MASK, &mask, NULL, &err) < 0)) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "fix the file's syntax", "%s: %s", file, err.msg);
		return;
	}
	/* IRQBALANCE_BANNED_CPULIST arrived in 1.8; the mask works everywhere
	 * and wins when both are set (corecarve writes both). */
	understands = v < 0 ? "version unknown: corecarve writes both " CC_IRQBALANCE_LIST " and " CC_IRQBALANCE_MASK
		      : v >= 1008 ? CC_IRQBALANCE_LIST " and " CC_IRQBALANCE_MASK
				  : "only " CC_IRQBALANCE_MASK;
	if (pid < 0) {
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "the captured tree has no process list%s%s%s",
			      version ? " (installed: " : "", version ? version : "", version ? ")" : "");
		return;
	}
	if (!pid) {
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "not running%s%s%s; IRQs stay where corecarve steers them",
			      version ? " (installed: " : "", version ? version : "", version ? ")" : "");
		return;
	}
	if (!file) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "create /etc/default/irqbalance (Debian) or /etc/sysconfig/irqbalance so the bans survive "
			      "a restart",
			      "running (pid %ld, version %s: %s), no environment file: a restart forgets the bans", pid,
			      version ? version : "?", understands);
		return;
	}
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "running (pid %ld, version %s: %s); %s sets %s%s%s", pid,
		      version ? version : "?", understands, file, list ? CC_IRQBALANCE_LIST : "",
		      list && mask ? " and " : "", mask ? CC_IRQBALANCE_MASK : list ? "" : "no ban");
}

#define KUBELET_STATE "/var/lib/kubelet/cpu_manager_state"

void cc_doctor_check_kubelet(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ json_t *doc = NULL;
	json_error_t je;
	const char *policy = NULL, *defset = NULL;
	const char *why = "kubelet's static CPU manager also hands out exclusive CPUs and rewrites the cpusets "
			  "of Guaranteed pods: two allocators on one node fight over the same CPUs";

	if (!cc_root_exists(ctx->root, KUBELET_STATE)) {
		cc_doctor_set(it, cc_doctor_captured(ctx) && !cc_root_exists(ctx->root, "/var/lib") ? CC_DOCTOR_UNKNOWN
												     : CC_DOCTOR_OK,
			      why, NULL, "no kubelet CPU manager state (%s)", KUBELET_STATE);
		return;
	}
	text = cc_root_read(ctx->root, KUBELET_STATE, 0, &err);
	if (!text) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "run doctor as root, or check the file's permissions", "%s",
			      err.msg);
		return;
	}
	doc = json_loads(text, 0, &je);
	if (!doc || !json_is_object(doc)) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "remove the file with kubelet stopped; kubelet rewrites it",
			      "%s:%d: %s", KUBELET_STATE, je.line, doc ? "expected an object" : je.text);
		return;
	}
	policy = json_string_value(json_object_get(doc, "policyName"));
	defset = json_string_value(json_object_get(doc, "defaultCpuSet"));
	if (!policy) {
		cc_doctor_set(it, CC_DOCTOR_WARN, why, "remove the file with kubelet stopped; kubelet rewrites it",
			      "%s: policyName: expected a string", KUBELET_STATE);
		return;
	}
	if (!strcmp(policy, "static"))
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "run kubelet with --cpu-manager-policy=none and let corecarve carve (delete the state "
			      "file when switching), or keep Guaranteed pods away from corecarve's classes",
			      "kubelet CPU manager policy static (defaultCpuSet \"%s\")", defset ? defset : "");
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "kubelet CPU manager policy %s", policy);
}

/* ---- hooks.d -------------------------------------------------------------- */

static const char *const hook_dirs[] = { "/etc/containers/oci/hooks.d", "/usr/share/containers/oci/hooks.d", NULL };
static const char *const hook_stages[] = { "createRuntime", "poststop", NULL };

/* Validate one hooks.d file (podman's and CRI-O's schema 1.0.0) for `stage`;
 * 0 valid, -1 with err naming the field. */
static int hook_file_valid(const struct cc_root *root, const char *path, const char *stage, struct cc_err *err)
{
	_cleanup_free_ char *text = cc_root_read(root, path, 65536, err);
	_cleanup_json_ json_t *doc = NULL;
	json_error_t je;
	json_t *hook, *stages, *v;
	const char *bin;
	size_t i;
	bool has_stage = false;

	if (!text)
		return -1;
	if (!(doc = json_loads(text, JSON_REJECT_DUPLICATES, &je)))
		return cc_err_set(err, EINVAL, "%s:%d: %s", path, je.line, je.text);
	if (!json_is_string(json_object_get(doc, "version")) ||
	    strcmp(json_string_value(json_object_get(doc, "version")), "1.0.0"))
		return cc_err_set(err, EINVAL, "%s: version: expected \"1.0.0\"", path);
	hook = json_object_get(doc, "hook");
	if (!(bin = json_string_value(json_object_get(hook, "path"))) || bin[0] != '/')
		return cc_err_set(err, EINVAL, "%s: hook.path: expected an absolute path", path);
	if (!cc_root_exists(root, bin))
		return cc_err_set(err, ENOENT, "%s: hook.path: %s does not exist", path, bin);
	stages = json_object_get(doc, "stages");
	if (!json_is_array(stages))
		return cc_err_set(err, EINVAL, "%s: stages: expected an array", path);
	json_array_foreach(stages, i, v) has_stage |= json_is_string(v) && !strcmp(json_string_value(v), stage);
	if (!has_stage)
		return cc_err_set(err, EINVAL, "%s: stages: %s missing", path, stage);
	return 0;
}

void cc_doctor_check_hooks(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	const char *why = "podman and CRI-O call corecarve only through hooks.d files (crun bundles and "
			  "containerd's base spec name the hook themselves)";
	char found[CC_DOCTOR_TEXT_MAX] = "";
	size_t used = 0;
	int missing = 0;

	for (int s = 0; hook_stages[s]; s++) {
		const char *where = NULL;

		for (int d = 0; hook_dirs[d] && !where; d++) {
			struct cc_err err = CC_ERR_INIT;
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/corecarve-%s.json", hook_dirs[d], hook_stages[s]);
			if (!cc_root_exists(ctx->root, path))
				continue;
			if (hook_file_valid(ctx->root, path, hook_stages[s], &err) < 0) {
				cc_doctor_set(it, CC_DOCTOR_FAIL, why,
					      "reinstall them: make install (manifests/hooks.d), or fix the field named",
					      "%s", err.msg);
				return;
			}
			where = hook_dirs[d];
		}
		if (!where)
			missing++;
		if (used < sizeof(found))
			used += (size_t)snprintf(found + used, sizeof(found) - used, "%s%s %s", s ? ", " : "",
						 hook_stages[s], where ? where : "not installed");
	}
	if (missing == 2 && cc_doctor_captured(ctx) && !cc_root_exists(ctx->root, "/etc") &&
	    !cc_root_exists(ctx->root, "/usr/share"))
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "the captured tree has no /etc or /usr/share");
	else if (missing)
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "make install puts corecarve-createRuntime.json and corecarve-poststop.json in "
			      "/usr/share/containers/oci/hooks.d (ignore when only crun bundles or containerd are used)",
			      "%s", found);
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "%s: valid", found);
}

void cc_doctor_check_policy(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	const struct cc_policy *p = ctx->policy;
	_cleanup_free_ char *res = ctx->reserved ? cc_cpulist_format(ctx->reserved) : NULL;
	_cleanup_bitmap_ hwloc_bitmap_t off = ctx->reserved ? hwloc_bitmap_dup(ctx->reserved) : NULL;
	_cleanup_free_ char *offs = NULL, *online = NULL;
	char rule[512] = "";
	const char *why = "the node policy names the classes annotations ask for and the reserved CPUs the "
			  "host keeps; the hook refuses every carve when it does not load";

	if (!p) {
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, "fix the field named (corecarve-policy(5))", "%s",
			      ctx->policy_error ? ctx->policy_error : "policy did not load");
		return;
	}
	if (ctx->topo)
		cc_policy_reserved_why(p, ctx->topo, rule, sizeof(rule));
	/* A reserved CPU the node does not have reserves nothing: a list
	 * written for another machine. */
	if (off && ctx->topo && (hwloc_bitmap_andnot(off, off, ctx->topo->online), !hwloc_bitmap_iszero(off))) {
		offs = cc_cpulist_format(off);
		online = cc_cpulist_format(ctx->topo->online);
		cc_doctor_set(it, CC_DOCTOR_WARN, why,
			      "write reserved for this node's CPUs (corecarve topology lists them)",
			      "%s: reserved %s names CPUs %s this node does not have online (online %s)", p->source,
			      res ? res : "?", offs ? offs : "?", online ? online : "?");
		return;
	}
	cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "%s: %d class%s, reserved %s%s%s%s", p->source, p->nclasses,
		      p->nclasses == 1 ? "" : "es", res ? res : "unknown (no topology)", rule[0] ? " (" : "", rule,
		      rule[0] ? ")" : "");
}

/* Every class of the policy can carve its smallest request on this node
 * with nothing carved: a class that cannot is a policy that can never
 * work here (a reserved set covering the class, minShared on one core). */
void cc_doctor_check_capacity(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ struct cc_capacity *cap = NULL;
	char found[CC_DOCTOR_TEXT_MAX / 2] = "", never[CC_DOCTOR_TEXT_MAX / 2] = "", fix[CC_DOCTOR_TEXT_MAX] = "";
	size_t used = 0, bad = 0;
	int n = 0, nbad = 0;
	const char *why = "a class whose smallest request cannot be carved on an empty node refuses every pod "
			  "that asks for it; `corecarve status` shows what is left now";

	if (!ctx->policy || !ctx->topo) {
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "needs the policy and the topology (see their lines)");
		return;
	}
	if (cc_capacity_compute(ctx->topo, ctx->policy, NULL, &cap, &n, &err) < 0) {
		cc_doctor_set(it, CC_DOCTOR_UNKNOWN, why, NULL, "%s", err.msg);
		return;
	}
	for (int i = 0; i < n; i++) {
		const struct cc_capacity *c = &cap[i];

		if (c->never[0]) {
			bool seen = false;

			nbad++;
			/* Classes that fail for the same reason share one clause. */
			for (int k = 0; k < i && !seen; k++)
				seen = !strcmp(cap[k].never, c->never);
			for (int k = i; k < n && !seen && bad < sizeof(never); k++)
				if (!strcmp(cap[k].never, c->never))
					bad += (size_t)snprintf(never + bad, sizeof(never) - bad, "%s%s",
								k == i ? (bad ? "; " : "") : ", ", cap[k].name);
			if (!seen && bad < sizeof(never))
				bad += (size_t)snprintf(never + bad, sizeof(never) - bad, ": %s", c->never);
			if (!strstr(fix, c->fix) && strlen(fix) + strlen(c->fix) + 3 < sizeof(fix))
				snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix), "%s%s", fix[0] ? "; " : "", c->fix);
		}
		if (used < sizeof(found))
			used += (size_t)snprintf(found + used, sizeof(found) - used, "%s%s %s%d CPU%s%s", used ? ", " : "",
						 c->name, c->exclusive ? "up to " : "", c->largest_empty,
						 c->largest_empty == 1 ? "" : "s", c->exclusive ? "" : " shared");
	}
	if (nbad)
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, fix, "%d of %d class%s can never carve here (%s); on an empty node: %s",
			      nbad, n, n == 1 ? "" : "es", never, found);
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "every class fits its smallest request; on an empty node: %s",
			      found);
}

void cc_doctor_check_ledger(const struct cc_doctor_ctx *ctx, struct cc_doctor_item *it)
{
	struct cc_err err = CC_ERR_INIT;
	const char *dir = ctx->state_dir ? ctx->state_dir : CC_LEDGER_DIR;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	const char *why = "the ledger records every carve and what to restore; the hook refuses to carve "
			  "without it";

	if (ctx->state_error) {
		cc_doctor_set(it, CC_DOCTOR_FAIL, why, "name the hook's state directory, or none for " CC_LEDGER_DIR,
			      "%s", ctx->state_error);
		return;
	}
	l = cc_ledger_open_as(ctx->state_dir, CC_LEDGER_READ, ctx->lock, &err);
	if (!l && err.code == ETIMEDOUT)
		cc_doctor_set(it, CC_DOCTOR_FAIL, why,
			      "the message names what holds the ledger lock: let it finish, or stop it if it is stuck "
			      "(docs/troubleshooting.md, \"The ledger lock\")",
			      "%s", err.msg);
	else if (!l)
		cc_doctor_set(it, CC_DOCTOR_FAIL, why,
			      err.code == EACCES ? "run doctor as root (the ledger is root's, mode 0700)"
						 : "`corecarve status --kernel` shows the node's partitions without the ledger; "
						   "`corecarve audit --set-aside-ledger` moves the damaged file aside so hooks "
						   "start afresh (corecarve(8), DAMAGED LEDGER)",
			      "%s", err.msg);
	else
		cc_doctor_set(it, CC_DOCTOR_OK, why, NULL, "%s readable: %d carve%s%s", dir, cc_ledger_ncarves(l),
			      cc_ledger_ncarves(l) == 1 ? "" : "s",
			      access(dir, F_OK) < 0 ? " (directory not created yet: no carve since boot)" : "");
}
