/* The shipped manifests: every Kubernetes YAML loads (libyaml, through the
 * project's strict reader) and has the kind, apiVersion and fields its kind
 * needs; the policy in the ConfigMap and the annotations of the example
 * pods parse as corecarve reads them; the DaemonSet mounts exactly the host
 * paths it needs; the hooks.d and containerd hook files are what the
 * runtimes expect.  The checker is tested on broken manifests too. */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cleanup.h"
#include "ledger.h"
#include "policy.h"
#include "testlib.h"
#include "yaml_tree.h"

#define SRC CC_SOURCE_DIR "/"

/* The host paths the DaemonSet may mount, and why: nothing more. */
static const char *const host_paths[] = {
	"/opt/corecarve",                          /* the installed binary and its libraries */
	"/etc/containers/oci/hooks.d",             /* hooks.d for CRI-O and podman */
	"/etc/corecarve",                          /* the node policy */
	"/run/corecarve",                          /* the ledger, read and repaired by the audit */
	"/sys/fs/cgroup",                          /* cgroupfs, read and repaired by the audit */
	"/var/lib/node_exporter/textfile_collector", /* the audit's metrics */
	"/var/lib/kubelet/device-plugins",         /* the device plugin's sockets, the kubelet's registration */
	"/var/lib/kubelet/pod-resources",          /* the kubelet's PodResources API: which grants pods hold */
	NULL,
};

static const struct cc_ynode *path(const struct cc_ynode *n, const char *dotted)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (char *k = strtok_r(buf, ".", &save); k && n; k = strtok_r(NULL, ".", &save))
		n = n->type == CC_YMAPPING ? cc_ynode_get(n, k) : NULL;
	return n;
}

/* A required string field. */
static int need_string(const struct cc_ynode *root, const char *dotted, const char **out, struct cc_err *err)
{
	const struct cc_ynode *n = path(root, dotted);

	if (!n)
		return cc_err_set(err, EINVAL, "%s: %s: missing", root->doc->source, dotted);
	return cc_ynode_string(n, out, err);
}

static int need_type(const struct cc_ynode *root, const char *dotted, enum cc_ytype t, const struct cc_ynode **out,
		     struct cc_err *err)
{
	const struct cc_ynode *n = path(root, dotted);

	if (!n || n->type != t || (t != CC_YSCALAR && n->n == 0))
		return cc_err_set(err, EINVAL, "%s: %s: missing or not a non-empty %s", root->doc->source, dotted,
				  t == CC_YMAPPING ? "mapping" : t == CC_YSEQUENCE ? "sequence" : "value");
	*out = n;
	return 0;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static int check_containers(const struct cc_ynode *spec, const char *which, const struct cc_ynode *volumes,
			    struct cc_err *err)
{
	const struct cc_ynode *list = cc_ynode_get(spec, which);

	if (!list)
		return 0;
	for (const struct cc_ynode *c = list->first; c; c = c->next) {
		const struct cc_ynode *mounts = cc_ynode_get(c, "volumeMounts");
		const char *name, *image;
		const struct cc_ynode *priv = path(c, "securityContext.privileged");

		if (need_string(c, "name", &name, err) < 0 || need_string(c, "image", &image, err) < 0)
			return -1;
		if (priv && priv->type == CC_YSCALAR && !strcmp(priv->text, "true"))
			return cc_ynode_err(priv, err, EPERM, "container %s: no container needs to be privileged", name);
		for (const struct cc_ynode *m = mounts ? mounts->first : NULL; m; m = m->next) {
			const char *vol;
			bool found = false;

			if (need_string(m, "name", &vol, err) < 0)
				return -1;
			for (const struct cc_ynode *v = volumes->first; v && !found; v = v->next) {
				const struct cc_ynode *vn = cc_ynode_get(v, "name");

				found = vn && vn->type == CC_YSCALAR && !strcmp(vn->text, vol);
			}
			if (!found)
				return cc_ynode_err(m, err, EINVAL, "container %s mounts volume \"%s\", which is not defined",
						    name, vol);
		}
	}
	return 0;
}

static bool volume_mounted(const struct cc_ynode *spec, const char *vol)
{
	static const char *const lists[] = { "containers", "initContainers" };

	for (int i = 0; i < 2; i++) {
		const struct cc_ynode *l = cc_ynode_get(spec, lists[i]);

		for (const struct cc_ynode *c = l ? l->first : NULL; c; c = c->next) {
			const struct cc_ynode *mounts = cc_ynode_get(c, "volumeMounts");

			for (const struct cc_ynode *m = mounts ? mounts->first : NULL; m; m = m->next) {
				const struct cc_ynode *n = cc_ynode_get(m, "name");

				if (n && n->type == CC_YSCALAR && !strcmp(n->text, vol))
					return true;
			}
		}
	}
	return false;
}

/* The audit container's AUTOFIX (audit --fix=CODE,...): every code is one
 * the audit knows, and none whose repair reaches beyond cgroupfs and the
 * ledger, which is all the pod may write (docs/audit.md). */
static int check_autofix(const struct cc_ynode *spec, struct cc_err *err)
{
	static const char *const beyond[] = { "TASK_ESCAPED", "IRQ_ON_CARVE", "POWER_DRIFT", "POWER_NOT_RESTORED",
					      "VM_DRIFT", "VM_GONE", NULL };
	const struct cc_ynode *ctrs = cc_ynode_get(spec, "containers");

	for (const struct cc_ynode *c = ctrs ? ctrs->first : NULL; c; c = c->next) {
		const struct cc_ynode *env = cc_ynode_get(c, "env");

		for (const struct cc_ynode *e = env ? env->first : NULL; e; e = e->next) {
			const struct cc_ynode *n = cc_ynode_get(e, "name"), *v = cc_ynode_get(e, "value");
			char buf[1024], *save = NULL;

			if (!n || n->type != CC_YSCALAR || strcmp(n->text, "AUTOFIX"))
				continue;
			if (!v || v->type != CC_YSCALAR)
				return cc_ynode_err(e, err, EINVAL, "AUTOFIX: expected a value");
			snprintf(buf, sizeof(buf), "%s", v->text);
			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (cc_audit_code_parse(t) < 0)
					return cc_ynode_err(v, err, EINVAL, "AUTOFIX: %s is no finding code", t);
				if (in_list(beyond, t))
					return cc_ynode_err(v, err, EPERM, "AUTOFIX: %s repairs what a pod cannot write", t);
			}
			return 0;
		}
	}
	return 0;
}

static int check_daemonset(const struct cc_ynode *root, struct cc_err *err)
{
	const struct cc_ynode *match = NULL, *labels = NULL, *spec = NULL, *volumes = NULL, *hn, *hp;

	if (need_type(root, "spec.selector.matchLabels", CC_YMAPPING, &match, err) < 0 ||
	    need_type(root, "spec.template.metadata.labels", CC_YMAPPING, &labels, err) < 0 ||
	    need_type(root, "spec.template.spec", CC_YMAPPING, &spec, err) < 0 ||
	    need_type(spec, "containers", CC_YSEQUENCE, &volumes, err) < 0 ||
	    need_type(spec, "volumes", CC_YSEQUENCE, &volumes, err) < 0)
		return -1;
	for (const struct cc_ynode *m = match->first; m; m = m->next) {
		const struct cc_ynode *l = cc_ynode_get(labels, m->key);

		if (!l || l->type != CC_YSCALAR || strcmp(l->text, m->text))
			return cc_ynode_err(m, err, EINVAL, "selector label %s is not on the pod template", m->key);
	}
	hn = cc_ynode_get(spec, "hostNetwork");
	hp = cc_ynode_get(spec, "hostPID");
	if (hn && !strcmp(hn->text ? hn->text : "", "true"))
		return cc_ynode_err(hn, err, EPERM, "the DaemonSet needs no host network");
	/* The audit reads the tasks of carved cgroups: in a PID namespace of
	 * its own they all read as 0 (TASKS_HIDDEN). */
	if (!hp || hp->type != CC_YSCALAR || strcmp(hp->text, "true"))
		return cc_err_set(err, EINVAL, "%s: spec.template.spec.hostPID: must be true: the audit reads the tasks of "
				  "carved cgroups, which another PID namespace lists as 0", root->doc->source);
	if (check_containers(spec, "initContainers", volumes, err) < 0 ||
	    check_containers(spec, "containers", volumes, err) < 0 || check_autofix(spec, err) < 0)
		return -1;
	for (const struct cc_ynode *v = volumes->first; v; v = v->next) {
		const char *name, *host;

		if (need_string(v, "name", &name, err) < 0)
			return -1;
		if (!volume_mounted(spec, name))
			return cc_ynode_err(v, err, EINVAL, "volume %s is mounted by no container", name);
		if (!cc_ynode_get(v, "hostPath"))
			continue;
		if (need_string(v, "hostPath.path", &host, err) < 0)
			return -1;
		if (!in_list(host_paths, host))
			return cc_ynode_err(v, err, EPERM, "hostPath %s is not one corecarve needs", host);
	}
	return 0;
}

static int check_configmap(const struct cc_ynode *root, struct cc_policy **policy, struct cc_err *err)
{
	const struct cc_ynode *data = cc_ynode_get(root, "data");
	const struct cc_ynode *file = data ? cc_ynode_get(data, "policy.yaml") : NULL;
	const char *text;
	char name[512];

	/* (Not path(): the key holds a dot.) */
	if (!file)
		return cc_err_set(err, EINVAL, "%s: data.policy.yaml: missing", root->doc->source);
	if (cc_ynode_string(file, &text, err) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s: data.policy.yaml", root->doc->source);
	cc_policy_free(*policy); /* the one a caller passed in (SANITIZE=1 saw the leak) */
	*policy = cc_policy_parse(text, strlen(text), name, err);
	return *policy ? 0 : -1;
}

/* Every placement annotation parses, names a container of the pod, and
 * asks for a class the policy has, setting only what the class lets an
 * annotation set. */
static int check_pod(const struct cc_ynode *root, const struct cc_policy *policy, struct cc_err *err)
{
	const struct cc_ynode *ann = path(root, "metadata.annotations"), *ctrs = NULL;
	int found = 0;

	if (need_type(root, "spec.containers", CC_YSEQUENCE, &ctrs, err) < 0)
		return -1;
	for (const struct cc_ynode *c = ctrs->first; c; c = c->next) {
		const char *s;

		if (need_string(c, "name", &s, err) < 0 || need_string(c, "image", &s, err) < 0)
			return -1;
	}
	for (const struct cc_ynode *a = ann ? ann->first : NULL; a; a = a->next) {
		struct cc_request req;
		const char *suffix;
		bool named = false;

		if (strncmp(a->key, CC_ANNOTATION_KEY, strlen(CC_ANNOTATION_KEY)))
			continue;
		found++;
		if (a->type != CC_YSCALAR || a->plain)
			return cc_ynode_err(a, err, EINVAL, "annotation values are strings: quote it");
		if (cc_request_parse_key(a->key, a->text, a->len, &req, err) < 0)
			return -1;
		suffix = a->key + strlen(CC_ANNOTATION_KEY);
		if (*suffix == '.') {
			for (const struct cc_ynode *c = ctrs->first; c && !named; c = c->next)
				named = !strcmp(cc_ynode_get(c, "name")->text, suffix + 1);
			if (!named)
				return cc_ynode_err(a, err, EINVAL, "no container is called \"%s\"", suffix + 1);
		} else if (*suffix) {
			return cc_ynode_err(a, err, EINVAL, "not a corecarve annotation key");
		}
		if (policy && !cc_policy_class(policy, req.class_name))
			return cc_ynode_err(a, err, EINVAL, "class \"%s\" is not in the policy", req.class_name);
		/* What the hook would refuse on that policy: an override the
		 * class does not grant an annotation. */
		if (policy && cc_request_permitted(&req, cc_policy_class(policy, req.class_name), err) < 0)
			return cc_err_prefix(err, "%s:%d:%d: annotation %s", root->doc->source, a->key_line, a->key_col,
					     a->key);
	}
	if (!found)
		return cc_err_set(err, EINVAL, "%s: no %s annotation: not an example of corecarve", root->doc->source,
				  CC_ANNOTATION_KEY);
	return 0;
}

/* Check one manifest; `policy` is the ConfigMap's, for pods. */
static int check_manifest(const char *text, const char *source, struct cc_policy **policy, struct cc_err *err)
{
	static const struct {
		const char *kind, *api;
		bool namespaced;
	} kinds[] = {
		{ "Namespace", "v1", false },
		{ "ConfigMap", "v1", true },
		{ "DaemonSet", "apps/v1", true },
		{ "Pod", "v1", false },
	};
	_cleanup_ydoc_ struct cc_ydoc *doc = cc_yaml_parse(text, strlen(text), source, err);
	const char *kind, *api, *name, *ns;
	size_t k;

	if (!doc)
		return -1;
	if (!doc->root || doc->root->type != CC_YMAPPING)
		return cc_err_set(err, EINVAL, "%s: not a mapping", source);
	if (need_string(doc->root, "kind", &kind, err) < 0 || need_string(doc->root, "apiVersion", &api, err) < 0 ||
	    need_string(doc->root, "metadata.name", &name, err) < 0)
		return -1;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[k].kind, kind); k++)
		;
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return cc_err_set(err, EINVAL, "%s: kind %s: no checks for it here (add them)", source, kind);
	if (strcmp(kinds[k].api, api))
		return cc_err_set(err, EINVAL, "%s: %s: apiVersion is %s, expected %s", source, kind, api, kinds[k].api);
	if (kinds[k].namespaced &&
	    (need_string(doc->root, "metadata.namespace", &ns, err) < 0 || strcmp(ns, "corecarve-system")))
		return cc_err_isset(err) ? -1 : cc_err_set(err, EINVAL, "%s: metadata.namespace: expected corecarve-system, got %s", source, ns);
	if (!strcmp(kind, "DaemonSet"))
		return check_daemonset(doc->root, err);
	if (!strcmp(kind, "ConfigMap"))
		return check_configmap(doc->root, policy, err);
	if (!strcmp(kind, "Pod"))
		return check_pod(doc->root, *policy, err);
	return 0;
}

START_TEST(test_kubernetes_manifests)
{
	_cleanup_policy_ struct cc_policy *policy = NULL;
	const char *order[] = { "namespace.yaml", "configmap-policy.yaml", "daemonset.yaml", "pod-example.yaml" };
	glob_t g;
	int seen = 0;

	/* The ConfigMap first: pods are checked against its policy. */
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		char file[512];
		_cleanup_free_ char *text = NULL;

		snprintf(file, sizeof(file), SRC "manifests/kubernetes/%s", order[i]);
		text = cc_test_slurp(file);
		ck_assert_msg(check_manifest(text, file, &policy, &err) == 0, "%s", err.msg);
		seen++;
	}
	/* No manifest escapes the checks. */
	ck_assert_int_eq(glob(SRC "manifests/kubernetes/*.yaml", 0, NULL, &g), 0);
	ck_assert_int_eq((int)g.gl_pathc, seen);
	globfree(&g);
	/* The examples' pod, against the same policy. */
	{
		struct cc_err err = CC_ERR_INIT;
		_cleanup_free_ char *text = cc_test_slurp(SRC "examples/kubernetes-pod.yaml");

		ck_assert_msg(check_manifest(text, "examples/kubernetes-pod.yaml", &policy, &err) == 0, "%s", err.msg);
	}
}
END_TEST

/* The checker finds what it is for. */
static const struct {
	const char *text;
	const char *why;
} broken[] = {
	{ "apiVersion: v1\nmetadata: {name: x}\n", "t: kind: missing" },
	{ "kind: Namespace\napiVersion: v2\nmetadata: {name: x}\n", "t: Namespace: apiVersion is v2, expected v1" },
	{ "kind: Service\napiVersion: v1\nmetadata: {name: x}\n", "t: kind Service: no checks for it here" },
	{ "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x, namespace: default}\ndata: {}\n",
	  "metadata.namespace: expected corecarve-system, got default" },
	{ "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "data:\n  policy.yaml: |\n    classes:\n      a: {coreType: performance, smt: half}\n",
	  "t: data.policy.yaml:2:30: classes.a.smt: expected isolate or full, got \"half\"" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
	  "    spec:\n      hostPID: true\n      containers: [{name: c, image: i, volumeMounts: [{name: root, mountPath: /h}]}]\n"
	  "      volumes: [{name: root, hostPath: {path: /}}]\n",
	  "hostPath / is not one corecarve needs" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: b}}\n"
	  "    spec:\n      containers: [{name: c, image: i}]\n      volumes: [{name: v, emptyDir: {}}]\n",
	  "selector label app is not on the pod template" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
	  "    spec:\n      hostPID: true\n      containers: [{name: c, image: i, securityContext: {privileged: true}}]\n"
	  "      volumes: [{name: v, emptyDir: {}}]\n",
	  "container c: no container needs to be privileged" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
	  "    spec:\n      hostPID: true\n      containers: [{name: c, image: i}]\n      volumes: [{name: v, emptyDir: {}}]\n",
	  "volume v is mounted by no container" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
	  "    spec:\n      containers: [{name: c, image: i}]\n      volumes: [{name: v, emptyDir: {}}]\n",
	  "t: spec.template.spec.hostPID: must be true" },
	{ "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: x, namespace: corecarve-system}\n"
	  "spec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
	  "    spec:\n      hostPID: true\n      hostNetwork: true\n      containers: [{name: c, image: i}]\n"
	  "      volumes: [{name: v, emptyDir: {}}]\n",
	  "the DaemonSet needs no host network" },
	{ "kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  annotations:\n    corecarve.io/placement.web: \"{class: latency, cpus: 0}\"\n"
	  "spec:\n  containers: [{name: web, image: i}]\n",
	  "annotation corecarve.io/placement.web: cpus: expected an integer >= 1, got \"0\"" },
	{ "kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  annotations:\n    corecarve.io/placement.db: \"{class: latency, cpus: 1}\"\n"
	  "spec:\n  containers: [{name: web, image: i}]\n",
	  "no container is called \"db\"" },
	{ "kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  annotations:\n    corecarve.io/placement: \"{class: warp, cpus: 1}\"\n"
	  "spec:\n  containers: [{name: web, image: i}]\n",
	  "class \"warp\" is not in the policy" },
	{ "kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  annotations:\n    corecarve.io/placement.web: \"{class: isolated, cpus: 1, irq: leave}\"\n"
	  "spec:\n  containers: [{name: web, image: i}]\n",
	  "t:6:5: annotation corecarve.io/placement.web: irq: class \"isolated\" does not let an annotation set irq (policy "
	  "classes.isolated.annotationMaySet); remove irq from the annotation or add it there" },
	{ "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec:\n  containers: [{name: web, image: i}]\n",
	  "no corecarve.io/placement annotation" },
	{ "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec:\n  containers: [{name: web, image: i}]\n---\nkind: Pod\n",
	  "t:6:1: multiple documents are not allowed" },
};

START_TEST(test_checker_refuses)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_err perr = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *policy = cc_policy_default(&perr);

	ck_assert_ptr_nonnull(policy);
	ck_assert_int_eq(check_manifest(broken[_i].text, "t", &policy, &err), -1);
	ck_assert_msg(strstr(err.msg, broken[_i].why) != NULL, "got \"%s\", want \"%s\"", err.msg, broken[_i].why);
}
END_TEST

/* ---- hooks.d (podman, CRI-O) and containerd's base spec hooks -------------- */

static json_t *load_json(const char *file)
{
	json_error_t je;
	json_t *j = json_load_file(file, JSON_REJECT_DUPLICATES, &je);

	ck_assert_msg(j != NULL, "%s:%d: %s", file, je.line, je.text);
	return j;
}

/* One OCI hook object: absolute path, argv "corecarve hook <stage>" (or,
 * for the first stage, "corecarve-hook <stage>"), a timeout long enough
 * for the ledger lock on a busy node. */
static void check_hook_as(const json_t *h, const char *stage, const char *file, bool first_stage)
{
	const char *p = json_string_value(json_object_get(h, "path"));
	const json_t *args = json_object_get(h, "args");
	json_int_t t = json_integer_value(json_object_get(h, "timeout"));
	size_t n = first_stage ? 2 : 3;

	ck_assert_msg(p && p[0] == '/' && strstr(p, first_stage ? "/corecarve-hook" : "/corecarve"),
		      "%s: hook.path \"%s\"", file, p ? p : "");
	ck_assert_int_eq(json_array_size(args), n);
	ck_assert_str_eq(json_string_value(json_array_get(args, 0)), first_stage ? "corecarve-hook" : "corecarve");
	if (!first_stage)
		ck_assert_str_eq(json_string_value(json_array_get(args, 1)), "hook");
	ck_assert_str_eq(json_string_value(json_array_get(args, n - 1)), stage);
	ck_assert_msg(t >= 5 && t <= 60, "%s: timeout %lld", file, (long long)t);
	/* A hook stuck behind the ledger lock gives up and says who holds it
	 * before the runtime kills it: the wait leaves half the timeout to
	 * the rest of the hook. */
	ck_assert_msg(CC_LEDGER_WAIT_MS <= (unsigned)t * 1000 / 2, "%s: timeout %lld s, lock wait %u ms", file,
		      (long long)t, CC_LEDGER_WAIT_MS);
}

static void check_hook(const json_t *h, const char *stage, const char *file)
{
	check_hook_as(h, stage, file, false);
}

START_TEST(test_hooks_d)
{
	static const char *const stages[] = { "createRuntime", "poststop" };

	for (int i = 0; i < 2; i++) {
		char file[512];
		_cleanup_json_ json_t *j = NULL;
		const json_t *when, *st;
		const char *key, *re;
		regex_t rx;

		snprintf(file, sizeof(file), SRC "manifests/hooks.d/corecarve-%s.json", stages[i]);
		j = load_json(file);
		ck_assert_str_eq(json_string_value(json_object_get(j, "version")), "1.0.0");
		check_hook(json_object_get(j, "hook"), stages[i], file);
		st = json_object_get(j, "stages");
		ck_assert_int_eq(json_array_size(st), 1);
		ck_assert_str_eq(json_string_value(json_array_get(st, 0)), stages[i]);
		/* The annotation filter is a regex on keys (and one on values):
		 * it must select both annotation forms and nothing else. */
		when = json_object_get(json_object_get(j, "when"), "annotations");
		ck_assert_int_eq(json_object_size(when), 1);
		json_object_foreach((json_t *)when, key, st)
		{
			re = json_string_value(st);
			ck_assert_int_eq(regcomp(&rx, key, REG_EXTENDED | REG_NOSUB), 0);
			ck_assert_int_eq(regexec(&rx, "corecarve.io/placement", 0, NULL, 0), 0);
			ck_assert_int_eq(regexec(&rx, "corecarve.io/placement.web", 0, NULL, 0), 0);
			ck_assert_int_ne(regexec(&rx, "example.com/corecarve.io/placement", 0, NULL, 0), 0);
			ck_assert_int_ne(regexec(&rx, "corecarveXio/placement", 0, NULL, 0), 0);
			regfree(&rx);
			ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
			ck_assert_int_eq(regexec(&rx, "{class: latency, cpus: 2}", 0, NULL, 0), 0);
			regfree(&rx);
		}
	}
}
END_TEST

START_TEST(test_containerd_crio)
{
	_cleanup_json_ json_t *hooks = load_json(SRC "manifests/containerd/corecarve-hooks.json");
	_cleanup_free_ char *toml = cc_test_slurp(SRC "manifests/containerd/config.toml");
	_cleanup_free_ char *crio = cc_test_slurp(SRC "manifests/crio/50-corecarve.conf");

	/* containerd runs the base spec's hooks for every container: the
	 * first stage, which answers the unannotated ones by itself. */
	check_hook_as(json_array_get(json_object_get(hooks, "createRuntime"), 0), "createRuntime", "corecarve-hooks.json",
		      true);
	check_hook_as(json_array_get(json_object_get(hooks, "poststop"), 0), "poststop", "corecarve-hooks.json", true);
	ck_assert_int_eq(json_object_size(hooks), 2);
	/* Where the DaemonSet puts it, beside the corecarve it runs. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(hooks, "createRuntime"), 0), "path")),
			 "/opt/corecarve/bin/corecarve-hook");
	ck_assert_ptr_nonnull(strstr(toml, "\n  pod_annotations = [\"corecarve.io/*\"]\n"));
	ck_assert_ptr_nonnull(strstr(toml, "\n  container_annotations = [\"corecarve.io/*\"]\n"));
	ck_assert_ptr_nonnull(strstr(toml, "\n  base_runtime_spec = \"/etc/containerd/corecarve-base-spec.json\"\n"));
	/* One file per kubelet cgroup driver, the same but for SystemdCgroup. */
	{
		_cleanup_free_ char *cgfs = cc_test_slurp(SRC "manifests/containerd/config-cgroupfs.toml");
		const char *a = strstr(toml, "\nversion = 2\n"), *b = strstr(cgfs, "\nversion = 2\n");
		const char *sa = strstr(toml, "SystemdCgroup = true\n"), *sb = strstr(cgfs, "SystemdCgroup = false\n");

		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_ptr_nonnull(sa);
		ck_assert_ptr_nonnull(sb);
		ck_assert_int_eq((int)(sa - a), (int)(sb - b));
		ck_assert_int_eq(strncmp(a, b, (size_t)(sa - a)), 0);
		ck_assert_ptr_nonnull(strstr(toml, "cgroupDriver: systemd"));
		ck_assert_ptr_nonnull(strstr(cgfs, "cgroupDriver: cgroupfs"));
	}
	ck_assert_ptr_nonnull(strstr(crio, "\"/etc/containers/oci/hooks.d\",\n"));
	ck_assert_ptr_nonnull(strstr(crio, "\"/usr/share/containers/oci/hooks.d\",\n"));
}
END_TEST

static Suite *manifests_suite(void)
{
	Suite *s = suite_create("manifests");
	TCase *tc = tcase_create("kubernetes");

	tcase_add_test(tc, test_kubernetes_manifests);
	tcase_add_loop_test(tc, test_checker_refuses, 0, sizeof(broken) / sizeof(broken[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("runtimes");
	tcase_add_test(tc, test_hooks_d);
	tcase_add_test(tc, test_containerd_crio);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(manifests_suite)
