/* The corecarve.io/placement annotation: a small YAML mapping written by
 * whoever may create pods, read by a privileged hook, so it goes through the
 * same strict loader as the policy and a size bound before that. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "policy.h"
#include "policy_schema.h"
#include "yaml_tree.h"

static const char *const request_keys[] = { "class", "cpus", "memory", "irq", "smt", NULL };

static int parse_value(const char *yaml, size_t len, struct cc_request *out, struct cc_err *err)
{
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	struct cc_request r = { 0 };
	const struct cc_ynode *root, *n;
	long long cpus;
	int v;

	if (!yaml)
		return cc_err_set(err, EINVAL, "no value");
	if (len > CC_ANNOTATION_MAX)
		return cc_err_set(err, EFBIG, "value is %zu bytes, more than the %d allowed", len,
				  CC_ANNOTATION_MAX);
	/* No source: the value is one short line, named by the caller's
	 * "annotation <key>" prefix, and errors name the field. */
	doc = cc_yaml_parse(yaml, len, NULL, err);
	if (!doc)
		return -1;
	root = doc->root;
	if (!root)
		return cc_err_set(err, EINVAL, "empty value: expected a mapping such as {class: latency, cpus: 4}");
	if (cc_ynode_mapping(root, err) < 0 || cc_ynode_check_keys(root, request_keys, err) < 0)
		return -1;

	n = cc_ynode_get(root, "class");
	if (!n)
		return cc_ynode_missing(root, "class", err);
	if (cc_ynode_strcpy(n, r.class_name, sizeof(r.class_name), err) < 0)
		return -1;
	if (!cc_policy_name_ok(r.class_name, sizeof(r.class_name) - 1)) {
		char got[96];

		cc_ynode_describe(n, got, sizeof(got));
		return cc_ynode_err(n, err, EINVAL, "expected a class name (a-z, 0-9 and '-'), got %s", got);
	}

	n = cc_ynode_get(root, "cpus");
	if (!n)
		return cc_ynode_missing(root, "cpus", err);
	if (cc_ynode_uint(n, 1, CC_CPU_LIMIT, &cpus, err) < 0)
		return -1;
	r.cpus = (int)cpus;

	if ((n = cc_ynode_get(root, "memory"))) {
		if (cc_ynode_enum(n, cc_memory_values, &v, err) < 0)
			return -1;
		r.has_memory = true;
		r.memory = (enum cc_memory)v;
	}
	if ((n = cc_ynode_get(root, "irq"))) {
		if (cc_ynode_enum(n, cc_irq_values, &v, err) < 0)
			return -1;
		r.has_irq = true;
		r.irq = (enum cc_irq)v;
	}
	if ((n = cc_ynode_get(root, "smt"))) {
		if (cc_ynode_enum(n, cc_smt_values, &v, err) < 0)
			return -1;
		r.has_smt = true;
		r.smt = (enum cc_smt)v;
	}
	*out = r;
	return 0;
}

int cc_request_parse_key(const char *key, const char *yaml, size_t len, struct cc_request *out,
			 struct cc_err *err)
{
	if (!key)
		key = CC_ANNOTATION_KEY;
	if (parse_value(yaml, len, out, err) < 0)
		return cc_err_prefix(err, "annotation %s", key);
	/* A key too long for the field could never be a Kubernetes one; it
	 * only names the request in messages, so a cut one still refuses. */
	snprintf(out->annotation, sizeof(out->annotation), "%s", key);
	return 0;
}

void cc_req_keys_format(unsigned set, char *buf, size_t size)
{
	size_t used = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; cc_req_key_values[i].name; i++)
		if (set & (unsigned)cc_req_key_values[i].value && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
						 cc_req_key_values[i].name);
}

/* The keys of `r` that an annotation wrote; `class` needs no permission. */
static unsigned keys_set(const struct cc_request *r)
{
	/* cpus is required: every parsed annotation sets it. */
	return CC_REQ_CPUS | (r->has_memory ? CC_REQ_MEMORY : 0u) | (r->has_irq ? CC_REQ_IRQ : 0u) |
	       (r->has_smt ? CC_REQ_SMT : 0u);
}

int cc_request_permitted(const struct cc_request *r, const struct cc_pclass *pc, struct cc_err *err)
{
	unsigned refused = keys_set(r) & ~pc->annotation_may_set;
	char list[64], alt[64];
	bool several;

	if (!refused)
		return 0;
	/* Without cpus no annotation is ever complete: a class kept for
	 * `corecarve exec` and the vms list. */
	if (refused & CC_REQ_CPUS)
		return cc_err_set(err, EPERM,
				  "cpus: class \"%s\" does not let an annotation set cpus, so no annotation may ask for it "
				  "(policy classes.%s.annotationMaySet); ask for another class or add cpus there",
				  pc->name, pc->name);
	cc_req_keys_format(refused, list, sizeof(list));
	several = strchr(list, ',') != NULL;
	/* "irq, smt" as the field, "irq or smt" in the sentence. */
	snprintf(alt, sizeof(alt), "%s", list);
	if (several) {
		char *comma = strrchr(alt, ',');

		memmove(comma + 3, comma + 1, strlen(comma + 1) + 1);
		memcpy(comma, " or", 3);
	}
	return cc_err_set(err, EPERM,
			  "%s: class \"%s\" does not let an annotation set %s (policy classes.%s.annotationMaySet); "
			  "remove %s from the annotation or add %s there",
			  list, pc->name, alt, pc->name, several ? "them" : list, several ? "them" : "it");
}

int cc_request_parse(const char *yaml, size_t len, struct cc_request *out, struct cc_err *err)
{
	return cc_request_parse_key(CC_ANNOTATION_KEY, yaml, len, out, err);
}

/* "corecarve.io/placement.<name>" into buf; false when there is no name or
 * it is too long to be part of an annotation key (Kubernetes bounds keys at
 * 317 bytes, so no such key can exist). */
static bool container_key(char *buf, size_t size, const char *name)
{
	int n;

	if (!name || !*name)
		return false;
	n = snprintf(buf, size, "%s.%s", CC_ANNOTATION_KEY, name);
	return n > 0 && (size_t)n < size;
}

/* The annotation entry that applies: the per-container key when present,
 * else the pod-wide one.  `strings_only` skips entries whose value is not
 * a string, as cc_request_select documents. */
static json_t *find(const json_t *annotations, const char *container_name, bool strings_only,
		    const char **key)
{
	json_t *obj = (json_t *)annotations; /* jansson's iterators are not const */
	char ck[512];
	void *it = NULL;

	if (container_key(ck, sizeof(ck), container_name)) {
		it = json_object_iter_at(obj, ck);
		if (it && strings_only && !json_is_string(json_object_iter_value(it)))
			it = NULL;
	}
	if (!it) {
		it = json_object_iter_at(obj, CC_ANNOTATION_KEY);
		if (it && strings_only && !json_is_string(json_object_iter_value(it)))
			it = NULL;
	}
	if (!it)
		return NULL;
	*key = json_object_iter_key(it);
	return json_object_iter_value(it);
}

int cc_request_select(const struct json_t *annotations, const char *container_name,
		      const char **value, const char **key)
{
	const char *k = NULL;
	json_t *v;

	if (!json_is_object(annotations))
		return 0;
	v = find(annotations, container_name, true, &k);
	if (!v)
		return 0;
	*value = json_string_value(v);
	if (key)
		*key = k;
	return 1;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

int cc_request_lookup(const struct json_t *annotations, const char *container_name,
		      struct cc_request *out, const char **key, struct cc_err *err)
{
	const char *k = NULL;
	json_t *v;

	if (!annotations)
		return 0;
	if (!json_is_object(annotations))
		return cc_err_set(err, EINVAL, "annotations: expected a JSON object, got %s",
				  json_kind(annotations));
	v = find(annotations, container_name, false, &k);
	if (!v)
		return 0;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "annotation %s: expected a string value, got %s", k,
				  json_kind(v));
	if (cc_request_parse_key(k, json_string_value(v), json_string_length(v), out, err) < 0)
		return -1;
	if (key)
		*key = k;
	return 1;
}

/* The container name's key per runtime: containerd's CRI plugin
 * (pkg/cri/annotations in 1.6/1.7, internal/cri/annotations in 2.x) writes
 * io.kubernetes.cri.container-name; CRI-O copies the kubelet's labels,
 * io.kubernetes.container.name among them, into the annotations
 * (internal/factory/container/container.go, SpecAddAnnotations).  Podman
 * writes neither. */
static const char *oci_container_name(const json_t *annotations)
{
	static const char *const keys[] = { "io.kubernetes.cri.container-name", "io.kubernetes.container.name", NULL };

	for (int i = 0; keys[i]; i++) {
		json_t *v = json_object_get(annotations, keys[i]);

		if (json_is_string(v) && json_string_length(v))
			return json_string_value(v);
	}
	return NULL;
}

bool cc_oci_is_sandbox(const struct json_t *annotations)
{
	/* containerd: io.kubernetes.cri.container-type (container|sandbox);
	 * CRI-O and podman's infra containers up to 4.3:
	 * io.kubernetes.cri-o.ContainerType. */
	static const char *const keys[] = { "io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType", NULL };

	if (!json_is_object(annotations))
		return false;
	for (int i = 0; keys[i]; i++) {
		const char *v = json_string_value(json_object_get(annotations, keys[i]));

		if (v && !strcmp(v, "sandbox"))
			return true;
	}
	return false;
}

int cc_request_lookup_oci(const struct json_t *annotations, struct cc_request *out, const char **key,
			  struct cc_err *err)
{
	if (cc_oci_is_sandbox(annotations))
		return 0;
	return cc_request_lookup(annotations, json_is_object(annotations) ? oci_container_name(annotations) : NULL, out,
				 key, err);
}
