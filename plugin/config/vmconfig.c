/* corecarve: the VM list (vmconfig.h). */
#define _GNU_SOURCE
#include "vmconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "paths.h"

static const char *const top_keys[] = { "vms", NULL };
static const char *const vm_keys[] = { "class", "libvirt", "pidfile", "qemuName", "threads",
				       "emulator", "memory", NULL };

static const struct cc_yenum emulator_values[] = {
	{ "shared", CC_VM_EMU_SHARED }, { "reserved", CC_VM_EMU_RESERVED }, { NULL, 0 }
};
/* `any` is left out: a VM's memory follows its vCPUs or the class. */
static const struct cc_yenum memory_values[] = {
	{ "local", CC_MEM_LOCAL }, { "spread", CC_MEM_SPREAD }, { NULL, 0 }
};

const char *cc_vm_find_name(enum cc_vm_find f)
{
	switch (f) {
	case CC_VM_FIND_LIBVIRT:
		return "libvirt";
	case CC_VM_FIND_PIDFILE:
		return "pidfile";
	case CC_VM_FIND_NAME:
		break;
	}
	return "qemuName";
}

const char *cc_vm_emulator_name(enum cc_vm_emulator e)
{
	return cc_yenum_name(emulator_values, (int)e);
}

const char *cc_vm_id_name(const char *id)
{
	return id && !strncmp(id, "vm:", 3) && id[3] ? id + 3 : NULL;
}

void cc_vmconfig_fini(struct cc_vmconfig *cfg)
{
	free(cfg->vms);
	memset(cfg, 0, sizeof(*cfg));
}

const struct cc_vm_spec *cc_vmconfig_find(const struct cc_vmconfig *cfg, const char *name)
{
	for (int i = 0; cfg && name && i < cfg->n; i++)
		if (!strcmp(cfg->vms[i].name, name))
			return &cfg->vms[i];
	return NULL;
}

/* VM names end up in ledger ids, log lines and JSON: letters, digits and
 * "._-", starting with a letter or digit (libvirt's usual domain names). */
static bool vm_name_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (n == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return n >= 1 && n < CC_VM_NAME_MAX;
}

/* "got ..." naming a quoted scalar as a string: a quoted "2" is refused
 * because it is not a number. */
static void describe_typed(const struct cc_ynode *n, char *buf, size_t size)
{
	char got[256];

	cc_ynode_describe(n, got, sizeof(got));
	snprintf(buf, size, "%s%s", n->type == CC_YSCALAR && !n->plain ? "the string " : "", got);
}

static int parse_threads(const struct cc_ynode *n, int *out, struct cc_err *err)
{
	char got[300];

	if (n->type == CC_YSCALAR && n->plain && (!strcmp(n->text, "1") || !strcmp(n->text, "2"))) {
		*out = n->text[0] - '0';
		return 0;
	}
	describe_typed(n, got, sizeof(got));
	return cc_ynode_err(n, err, EINVAL, "expected 1 or 2, got %s", got);
}

/* The one way to find the VM's QEMU; without any, its -name is the VM's
 * name (what `qemu -name NAME` and libvirt's `-name guest=NAME` give). */
static int parse_find(const struct cc_ynode *vm, struct cc_vm_spec *s, struct cc_err *err)
{
	static const char *const keys[] = { "qemuName", "libvirt", "pidfile" };
	static const enum cc_vm_find kinds[] = { CC_VM_FIND_NAME, CC_VM_FIND_LIBVIRT, CC_VM_FIND_PIDFILE };
	const struct cc_ynode *found = NULL;

	s->find = CC_VM_FIND_NAME;
	snprintf(s->target, sizeof(s->target), "%s", s->name);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct cc_ynode *n = cc_ynode_get(vm, keys[i]);

		if (!n)
			continue;
		if (found)
			return cc_ynode_err(n, err, EINVAL, "give one of qemuName, libvirt or pidfile (%s is given too)",
					    found->key);
		found = n;
		s->find = kinds[i];
		if (cc_ynode_strcpy(n, s->target, sizeof(s->target), err) < 0)
			return -1;
		if (!s->target[0])
			return cc_ynode_err(n, err, EINVAL, "must not be empty");
	}
	if (s->find == CC_VM_FIND_PIDFILE && s->target[0] != '/')
		return cc_ynode_err(found, err, EINVAL, "expected an absolute path, got \"%s\"", s->target);
	/* The domain becomes a file name under /run/libvirt/qemu. */
	if (s->find == CC_VM_FIND_LIBVIRT && (strchr(s->target, '/') || s->target[0] == '.'))
		return cc_ynode_err(found, err, EINVAL, "a libvirt domain name has no '/' and does not start with '.', got \"%s\"",
				    s->target);
	return 0;
}

static int parse_vm(const struct cc_ynode *n, struct cc_vm_spec *s, struct cc_err *err)
{
	const struct cc_ynode *v;
	int e = CC_VM_EMU_SHARED, m = CC_MEM_LOCAL;

	memset(s, 0, sizeof(*s));
	if (!vm_name_ok(n->key))
		return cc_ynode_err(n, err, EINVAL,
				    "VM names are 1 to %d characters of letters, digits, '.', '_' and '-', "
				    "starting with a letter or digit",
				    CC_VM_NAME_MAX - 1);
	snprintf(s->name, sizeof(s->name), "%s", n->key);
	if (cc_ynode_mapping(n, err) < 0 || cc_ynode_check_keys(n, vm_keys, err) < 0)
		return -1;
	v = cc_ynode_get(n, "class");
	if (!v)
		return cc_ynode_missing(n, "class", err);
	if (cc_ynode_strcpy(v, s->class_name, sizeof(s->class_name), err) < 0)
		return -1;
	if (!s->class_name[0])
		return cc_ynode_err(v, err, EINVAL, "must not be empty");
	cc_ynode_where(v, s->class_where, sizeof(s->class_where));
	if (parse_find(n, s, err) < 0)
		return -1;
	s->threads = 1;
	if ((v = cc_ynode_get(n, "threads"))) {
		if (parse_threads(v, &s->threads, err) < 0)
			return -1;
		s->threads_set = true;
	}
	if ((v = cc_ynode_get(n, "emulator")) && cc_ynode_enum(v, emulator_values, &e, err) < 0)
		return -1;
	if ((v = cc_ynode_get(n, "memory")) && cc_ynode_enum(v, memory_values, &m, err) < 0)
		return -1;
	s->emulator = (enum cc_vm_emulator)e;
	s->memory = (enum cc_memory)m;
	return 0;
}

int cc_vmconfig_parse_node(const struct cc_ynode *vms, struct cc_vmconfig *out, struct cc_err *err)
{
	struct cc_vmconfig cfg = { 0 };

	memset(out, 0, sizeof(*out));
	if (cc_ynode_mapping(vms, err) < 0)
		return -1;
	if (vms->n > CC_VMS_MAX_VMS)
		return cc_ynode_err(vms, err, E2BIG, "%d VMs, more than the %d corecarve handles", vms->n,
				    CC_VMS_MAX_VMS);
	snprintf(cfg.source, sizeof(cfg.source), "%s", vms->doc->source);
	if (vms->n) {
		cfg.vms = calloc((size_t)vms->n, sizeof(*cfg.vms));
		if (!cfg.vms)
			return cc_err_sys(err, ENOMEM, "vms");
	}
	for (const struct cc_ynode *n = vms->first; n; n = n->next) {
		if (parse_vm(n, &cfg.vms[cfg.n], err) < 0) {
			cc_vmconfig_fini(&cfg);
			return -1;
		}
		cfg.n++;
	}
	*out = cfg;
	return 0;
}

int cc_vmconfig_parse(const char *text, size_t len, const char *name, struct cc_vmconfig *out,
		      struct cc_err *err)
{
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	const struct cc_ynode *vms;

	memset(out, 0, sizeof(*out));
	if (!name || !*name)
		name = "vms";
	if (len > CC_VMS_MAX)
		return cc_err_set(err, EFBIG, "%s: %zu bytes, more than the %u a VM list may have", name, len,
				  CC_VMS_MAX);
	doc = cc_yaml_parse(text, len, name, err);
	if (!doc)
		return -1;
	if (!doc->root)
		return cc_err_set(err, EINVAL, "%s: empty document: expected a `vms:` mapping", name);
	if (cc_ynode_mapping(doc->root, err) < 0 || cc_ynode_check_keys(doc->root, top_keys, err) < 0)
		return -1;
	vms = cc_ynode_get(doc->root, "vms");
	if (!vms)
		return cc_ynode_missing(doc->root, "vms", err);
	return cc_vmconfig_parse_node(vms, out, err);
}

/* ---- loading ---- */

/* A regular file of at most CC_VMS_MAX bytes: 1 with *out (caller frees),
 * 0 when absent and `absent_ok`, -1 on error. */
static int read_file(const char *path, bool absent_ok, char **out, size_t *outlen, struct cc_err *err)
{
	if (cc_read_at(AT_FDCWD, path, path, CC_VMS_MAX, CC_READ_REGULAR | (absent_ok ? CC_READ_ABSENT_OK : 0), out,
		       outlen, err) < 0)
		return -1;
	return *out ? 1 : 0;
}

/* The `vms` section of a policy file (the policy itself is checked by
 * cc_policy_load; only this section is read here). */
static int load_from_policy(const char *path, bool absent_ok, struct cc_vmconfig *out, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	const struct cc_ynode *vms;
	size_t len = 0;
	int r = read_file(path, absent_ok, &text, &len, err);

	if (r <= 0)
		return r < 0 ? cc_err_prefix(err, "policy") : 0;
	doc = cc_yaml_parse(text, len, path, err);
	if (!doc)
		return -1;
	if (!doc->root || doc->root->type != CC_YMAPPING || !(vms = cc_ynode_get(doc->root, "vms")))
		return 0;
	return cc_vmconfig_parse_node(vms, out, err) < 0 ? -1 : 1;
}

int cc_vmconfig_load(const char *path, const char *policy_path, struct cc_vmconfig *out, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct cc_vmconfig in_policy = { 0 };
	size_t len = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (path) {
		if (read_file(path, false, &text, &len, err) < 0)
			return -1;
		return cc_vmconfig_parse(text, len, path, out, err);
	}
	r = read_file(CC_VMS_PATH, true, &text, &len, err);
	if (r < 0)
		return -1;
	if (load_from_policy(policy_path ? policy_path : CC_POLICY_PATH, !policy_path, &in_policy, err) < 0)
		return -1;
	if (r == 0) {
		*out = in_policy;
		return 0;
	}
	if (in_policy.n) {
		cc_err_set(err, EINVAL, "VMs are declared in both %s and %s (vms:); keep one list", CC_VMS_PATH,
			   in_policy.source);
		cc_vmconfig_fini(&in_policy);
		return -1;
	}
	cc_vmconfig_fini(&in_policy);
	return cc_vmconfig_parse(text, len, CC_VMS_PATH, out, err);
}
