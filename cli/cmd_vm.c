/* corecarve vm: pin VMs' vCPUs on whole cores of one core class, reserved
 * in the ledger like containers (plugin/flows/vm.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "cpulist.h"
#include "irqbalance.h"
#include "sandbox.h"
#include "table.h"
#include "vm.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve vm reconcile [--dry-run] [--json] [--verbose] [OPTIONS]\n"
		"       corecarve vm status [--json] [OPTIONS] [table options: -o|--output LIST, -n|--no-headers,\n"
		"                         -r|--raw, --width N]\n"
		"       corecarve vm xml NAME [--vcpus N] [OPTIONS]\n\n"
		"reconcile: find each VM of the VM list (its QEMU through libvirt's pid file, a pid\n"
		"file, or its -name), reserve whole cores of its class in the ledger, pin vCPU n to\n"
		"one CPU (the same one while the VM lives), its other threads to the emulator set,\n"
		"and libvirt's per-vCPU cgroups where they exist; release the carves of VMs that are\n"
		"gone.  Prints what it changes (or, with --dry-run, would change); a second run has\n"
		"nothing to do.\n"
		"status: the VMs, their carves and where their threads run, with findings\n"
		"(VM_MIXED_CLASSES, VM_SHARED_CPU, VM_DRIFT, VM_GONE).\n"
		"xml: the libvirt <cputune>/<numatune> of the VM's carve (or of the carve reconcile\n"
		"would make), for libvirt to own the pinning; --vcpus N for a VM that has not run\n"
		"yet (libvirt needs the XML before the first start).\n\n"
		"OPTIONS:\n"
		"  --config FILE   the VM list (default " CC_VMS_PATH ", else the policy's vms:)\n"
		"  --policy FILE   the policy (default $CORECARVE_POLICY, else " CC_POLICY_PATH ")\n"
		"  --state DIR     the ledger (default $CORECARVE_STATE_DIR, else " CC_LEDGER_DIR ")\n"
		"  --root DIR      read /proc and /sys under DIR (reconcile: with --dry-run only)\n\n"
		"exit status: 0 done (or nothing to do, no findings); 1 a VM was refused (status:\n"
		"findings); 2 bad input or a failure (one line on stderr)\n");
}

struct opts {
	const char *sub;
	const char *name; /* xml */
	const char *root;
	const char *policy;
	const char *state;
	const char *config;
	const char *vcpus; /* xml --vcpus */
	struct cc_table_opts table; /* status: the findings table */
	char state_buf[PATH_MAX];
	bool dry_run, json, verbose;
	struct cc_cli_lock lock;
};

enum { OPT_ROOT = 1, OPT_POLICY, OPT_STATE, OPT_CONFIG, OPT_VCPUS, OPT_JSON, OPT_DRY_RUN, OPT_VERBOSE };

const struct cc_opt cc_opts_vm[] = {
	{ "--config", NULL, "FILE", OPT_CONFIG, 0, NULL },
	{ "--policy", NULL, "FILE", OPT_POLICY, 0, NULL },
	{ "--state", NULL, "DIR", OPT_STATE, 0, NULL },
	{ "--root", NULL, "DIR", OPT_ROOT, 0, NULL },
	{ "--vcpus", NULL, "N", OPT_VCPUS, 0, "xml" },
	/* Taken elsewhere only to say what it is for. */
	{ "--vcpus", NULL, "N", OPT_VCPUS, CC_CLI_REFUSED, "reconcile status" },
	{ "--json", NULL, NULL, OPT_JSON, 0, "reconcile status" },
	{ "--dry-run", NULL, NULL, OPT_DRY_RUN, 0, "reconcile" },
	{ "--verbose", NULL, NULL, OPT_VERBOSE, 0, "reconcile" },
	CC_CLI_OPTS_TABLE("status"),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* 1: help printed; 0: parsed; -1: err set. */
static int parse(int argc, char **argv, struct opts *o, struct cc_err *err)
{
	if (argc < 2)
		return cc_err_set(err, EINVAL, "vm: expected reconcile, status or xml (see corecarve vm --help)");
	o->sub = argv[1];
	if (strcmp(o->sub, "reconcile") && strcmp(o->sub, "status") && strcmp(o->sub, "xml"))
		return cc_err_set(err, EINVAL, "vm: unknown subcommand \"%s\" (expected reconcile, status or xml)", o->sub);
	for (int i = 2; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_vm, o->sub, argc, argv, &i, &v, err), r;

		switch (id) {
		case -1:
			return -1;
		case OPT_ROOT:
			o->root = v;
			break;
		case OPT_POLICY:
			o->policy = v;
			break;
		case OPT_STATE:
			o->state = v;
			break;
		case OPT_CONFIG:
			o->config = v;
			break;
		case OPT_VCPUS:
			o->vcpus = v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_VERBOSE:
			o->verbose = true;
			break;
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return 1;
		case CC_OPT_WORD:
			if (v[0] != '-' && !strcmp(o->sub, "xml") && !o->name) {
				o->name = v;
				break;
			}
			return cc_err_set(err, EINVAL, "vm %s: unexpected argument \"%s\"", o->sub, v);
		default:
			if ((r = cc_table_set(&o->table, id, v, err)) < 0)
				return -1;
			if (!r)
				return cc_err_set(err, EINVAL, "vm %s: unexpected argument \"%s\"", o->sub, v);
		}
	}
	if (!strcmp(o->sub, "xml") && !o->name)
		return cc_err_set(err, EINVAL, "vm xml: expected the name of a VM");
	if (o->vcpus && strcmp(o->sub, "xml"))
		return cc_err_set(err, EINVAL, "vm %s: --vcpus is for vm xml (a VM that has not run yet)", o->sub);
	if (!o->policy || !*o->policy)
		o->policy = getenv("CORECARVE_POLICY");
	if (o->policy && !*o->policy)
		o->policy = NULL;
	if (cc_cli_state_dir(o->state, o->root, o->state_buf, sizeof(o->state_buf), &o->state, err) < 0)
		return -1;
	return cc_cli_lock(&o->lock, argc, argv, err);
}

static const char *state_name(enum cc_vm_state s)
{
	static const char *const names[] = { "not-running", "new", "keep", "shared", "release", "refused" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static char *list(hwloc_const_bitmap_t b)
{
	char *s = b ? cc_cpulist_format(b) : strdup("");

	return s ? s : strdup("?");
}

/* ---- text -------------------------------------------------------------------- */

static void print_pins(const struct cc_vm_entry *e)
{
	for (int i = 0; i < e->ncg; i++) {
		_cleanup_free_ char *from = list(e->cg[i].from), *to = list(e->cg[i].to);

		printf("  cgroup    %s %s: \"%s\" -> \"%s\"\n", e->cg[i].cgroup, e->cg[i].file, from, to);
	}
	for (int i = 0; i < e->npins; i++) {
		_cleanup_free_ char *from = list(e->pins[i].from), *to = list(e->pins[i].to);
		char who[32];

		if (e->pins[i].vcpu >= 0)
			snprintf(who, sizeof(who), "vCPU %d", e->pins[i].vcpu);
		else
			snprintf(who, sizeof(who), "emulator");
		printf("  %-9s thread %d: %s -> %s\n", who, (int)e->pins[i].tid, from, to);
	}
	for (int i = 0; i < e->nwarnings; i++)
		printf("  warning   %s\n", e->warnings[i]);
}

static void print_entry(const struct cc_vm_entry *e)
{
	_cleanup_free_ char *cpus = list(e->carve.cpus), *parked = list(e->carve.parked);
	_cleanup_free_ char *mems = list(e->carve.mems);
	char who[128] = "";

	if (e->proc)
		snprintf(who, sizeof(who), " (pid %d, %d vCPU%s, %s)", (int)e->proc->pid, e->proc->nvcpus,
			 e->proc->nvcpus == 1 ? "" : "s", e->proc->accel);
	switch (e->state) {
	case CC_VM_NOT_RUNNING:
		printf("VM %s: not running (%s)\n", e->name, e->why);
		return;
	case CC_VM_REFUSED:
		printf("VM %s%s: refused: %s\n", e->name, who, e->reason);
		return;
	case CC_VM_RELEASE:
		printf("VM %s: release carve %s, CPUs %s%s%s: %s\n", e->name, e->id, cpus, *parked ? " parked " : "",
		       parked, e->why);
		break;
	case CC_VM_NEW:
		printf("VM %s%s: carve class %s on %s\n", e->name, who, e->carve.class_name, e->carve.core_class);
		printf("  cpus      %s%s%s, mems %s\n", cpus, *parked ? " parked " : "", parked, *mems ? mems : "-");
		if (e->nclasses_now > 1)
			printf("  before    vCPUs on %s CPUs (mixed core classes)\n", e->classes_now);
		break;
	case CC_VM_KEEP:
		printf("VM %s%s: carved, class %s on %s, CPUs %s%s\n", e->name, who, e->carve.class_name,
		       e->carve.core_class, cpus, e->npins || e->ncg ? "; pinning again what moved" : "; in place");
		break;
	case CC_VM_SHARED:
		printf("VM %s%s: class %s is shared: every vCPU on the %s pool %s, nothing carved\n", e->name, who,
		       e->carve.class_name, e->carve.core_class, cpus);
		break;
	}
	print_pins(e);
}

static void print_text(const struct cc_vm_result *res, const struct opts *o)
{
	if (!res->plan.n)
		printf("no VMs in the VM list%s%s and no VM carves in the ledger\n", res->cfg.source[0] ? " " : "",
		       res->cfg.source);
	for (int i = 0; i < res->plan.n; i++)
		print_entry(&res->plan.e[i]);
	if (res->irq_note[0])
		printf("%s\n", res->irq_note);
	if (!res->plan.nchanges)
		printf("nothing to do\n");
	else if (o->dry_run)
		printf("%d change%s planned; nothing was changed (dry run)\n", res->plan.nchanges,
		       res->plan.nchanges == 1 ? "" : "s");
	else
		printf("%d change%s made\n", res->applied, res->applied == 1 ? "" : "s");
}

/* ---- JSON -------------------------------------------------------------------- */

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *set_json(hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = list(b);

	return json_string(s);
}

static json_t *entry_json(const struct cc_vm_entry *e)
{
	_cleanup_json_ json_t *o = json_object();
	json_t *pins = json_array(), *cgs = json_array(), *warn = json_array(), *map = json_array();
	struct cc_vm_rec rec;
	struct cc_err ignored = CC_ERR_INIT;
	int bad = !o || !pins || !cgs || !warn || !map;

	bad |= set(o, "name", json_string(e->name)) | set(o, "id", json_string(e->id)) |
	       set(o, "state", json_string(state_name(e->state)));
	if (e->proc)
		bad |= set(o, "pid", json_integer(e->proc->pid)) | set(o, "vcpus", json_integer(e->proc->nvcpus)) |
		       set(o, "accel", json_string(e->proc->accel));
	if (e->state == CC_VM_NEW || e->state == CC_VM_KEEP || e->state == CC_VM_RELEASE || e->state == CC_VM_SHARED)
		bad |= set(o, "class", json_string(e->carve.class_name)) |
		       set(o, "core_class", json_string(e->carve.core_class)) | set(o, "cpus", set_json(e->carve.cpus)) |
		       set(o, "parked", set_json(e->carve.parked)) | set(o, "mems", set_json(e->carve.mems)) |
		       set(o, "emulator", set_json(e->emulator));
	if (e->why[0])
		bad |= set(o, "why", json_string(e->why));
	if (e->state == CC_VM_REFUSED)
		bad |= set(o, "reason", json_string(e->reason)) |
		       set(o, "refusal", json_string(e->code == ENOSPC ? "capacity" : "invalid"));
	if (e->proc)
		bad |= set(o, "classes_before", json_string(e->classes_now)) |
		       set(o, "mixed_before", json_boolean(e->nclasses_now > 1));
	for (int i = 0; !bad && i < e->npins; i++)
		bad |= json_array_append_new(pins, json_pack("{s:i, s:i, s:o, s:o}", "tid", (int)e->pins[i].tid, "vcpu",
							     e->pins[i].vcpu, "from", set_json(e->pins[i].from), "to",
							     set_json(e->pins[i].to)));
	for (int i = 0; !bad && i < e->ncg; i++)
		bad |= json_array_append_new(cgs, json_pack("{s:s, s:s, s:o, s:o}", "cgroup", e->cg[i].cgroup, "file",
							    e->cg[i].file, "from", set_json(e->cg[i].from), "to",
							    set_json(e->cg[i].to)));
	for (int i = 0; !bad && i < e->nwarnings; i++)
		bad |= json_array_append_new(warn, json_string(e->warnings[i]));
	if (!bad && (e->state == CC_VM_NEW || e->state == CC_VM_KEEP) && cc_vm_rec_parse(&e->carve, &rec, &ignored) == 0) {
		for (int i = 0; !bad && i < rec.nvcpus; i++)
			bad |= json_array_append_new(map, json_pack("{s:i, s:i, s:i}", "vcpu", rec.vcpus[i].vcpu, "tid",
								    (int)rec.vcpus[i].tid, "cpu", rec.vcpus[i].cpu));
		cc_vm_rec_fini(&rec);
	}
	bad |= set(o, "map", map) | set(o, "pins", pins) | set(o, "cgroups", cgs) | set(o, "warnings", warn);
	return bad ? NULL : cc_steal_ptr(o);
}

static int print_json(const struct cc_vm_result *res, const struct opts *o, const struct cc_vm_finding *f, int nf,
		      struct cc_err *err)
{
	_cleanup_json_ json_t *doc = json_object();
	json_t *vms = json_array(), *fs = json_array();
	int bad = !doc || !vms || !fs;

	for (int i = 0; !bad && i < res->plan.n; i++)
		bad |= json_array_append_new(vms, entry_json(&res->plan.e[i]));
	for (int i = 0; !bad && i < nf; i++)
		bad |= json_array_append_new(fs, json_pack("{s:s, s:s, s:s}", "kind", cc_vm_finding_name(f[i].kind),
							   "vm", f[i].vm, "message", f[i].msg));
	bad |= set(doc, "schema_version", json_integer(1)) | set(doc, "source", json_string(res->cfg.source)) |
	       set(doc, "vms", vms);
	if (!strcmp(o->sub, "status"))
		bad |= set(doc, "findings", fs);
	else
		json_decref(fs), bad |= set(doc, "dry_run", json_boolean(o->dry_run)) |
				       set(doc, "changes", json_integer(res->plan.nchanges)) |
				       set(doc, "applied", json_integer(res->applied)) |
				       set(doc, "refused", json_integer(res->plan.nrefused)) |
				       set(doc, "irq", json_string(res->irq_note));
	if (bad || json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return cc_err_sys(err, ENOMEM, "vm: JSON output");
	printf("\n");
	return 0;
}

/* ---- the subcommands ------------------------------------------------------------- */

static void refusals(const struct cc_vm_result *res)
{
	for (int i = 0; i < res->plan.n; i++)
		if (res->plan.e[i].state == CC_VM_REFUSED)
			fprintf(stderr, "corecarve: %s\n", res->plan.e[i].reason);
}

static int status(const struct cc_ctx *ctx, const struct opts *o, struct cc_vm_result *res, struct cc_err *err)
{
	struct cc_vm_opts vo = { .config = o->config, .dry_run = true };
	_cleanup_free_ struct cc_vm_finding *f = NULL;
	int nf = 0;

	if (cc_vm_status(ctx, &vo, res, &f, &nf, err) < 0)
		return cc_cli_fail(err);
	if (o->json) {
		if (print_json(res, o, f, nf, err) < 0)
			return cc_cli_fail(err);
	} else {
		for (int i = 0; i < res->plan.n; i++)
			print_entry(&res->plan.e[i]);
		if (!res->plan.n)
			printf("no VMs in the VM list and no VM carves in the ledger\n");
		static const struct cc_table_col cols[] = { { "FINDING", 0, 0, NULL }, { "WHAT", 0.8, CC_COL_WRAP, NULL } };
		_cleanup_table_ struct cc_table *t = NULL;

		if (!nf) {
			printf("no findings\n");
			return CC_EXIT_OK;
		}
		if (!(t = cc_table_new(cols, 2, "FINDING,WHAT", &o->table, err)))
			return cc_cli_fail(err);
		for (int i = 0; i < nf; i++)
			if (cc_table_row(t, (const char *[]){ cc_vm_finding_name(f[i].kind), f[i].msg }, err) < 0)
				return cc_cli_fail(err);
		if (cc_table_print(t, stdout, err) < 0)
			return cc_cli_fail(err);
	}
	return nf ? CC_EXIT_REFUSED : CC_EXIT_OK;
}

static int xml(const struct cc_ctx *ctx, const struct opts *o, struct cc_vm_result *res, struct cc_err *err)
{
	struct cc_vm_opts vo = { .config = o->config, .dry_run = true };

	if (o->vcpus) {
		char *end;
		long n;

		errno = 0;
		n = strtol(o->vcpus, &end, 10);
		if (!*o->vcpus || *end || errno || n < 1 || n > CC_VM_MAX_THREADS) {
			cc_err_set(err, EINVAL, "--vcpus: expected 1 to %d, got \"%.32s\"", CC_VM_MAX_THREADS, o->vcpus);
			return cc_cli_fail(err);
		}
		vo.assume_name = o->name;
		vo.assume_vcpus = (int)n;
	}

	if (cc_vm_reconcile(ctx, &vo, res, err) < 0)
		return cc_cli_fail(err);
	for (int i = 0; i < res->plan.n; i++) {
		const struct cc_vm_entry *e = &res->plan.e[i];

		/* A carve being released is not what the VM will have. */
		if (strcmp(e->name, o->name) || e->state == CC_VM_RELEASE)
			continue;
		if (cc_vm_xml(stdout, e, err) < 0) {
			cc_cli_fail(err);
			return e->state == CC_VM_REFUSED ? CC_EXIT_REFUSED : CC_EXIT_ERROR;
		}
		return CC_EXIT_OK;
	}
	cc_err_set(err, ENOENT, "VM %s is not in the VM list%s%s", o->name, res->cfg.source[0] ? " " : "",
		   res->cfg.source);
	return cc_cli_fail(err);
}

int cc_cmd_vm(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct opts o = { 0 };
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_vm_result res = { 0 };
	struct cc_ctx ctx = { 0 };
	struct cc_vm_opts vo;
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return CC_EXIT_OK;
	}
	rc = parse(argc, argv, &o, &err);
	if (rc > 0)
		return CC_EXIT_OK;
	if (rc < 0)
		return cc_cli_fail(&err);
	root = cc_root_open(o.root ? o.root : "/", &err);
	if (!root) {
		cc_err_prefix(&err, "--root");
		return cc_cli_fail(&err);
	}
	/* Before /proc, the ledger and the VM list are read: reconcile pins
	 * threads and writes cgroups from what it finds there.  The helper
	 * restarts irqbalance for the IRQ steering that follows a change. */
	if (!strcmp(o.sub, "reconcile") &&
	    ((!o.dry_run && root->is_host && cc_irqbalance_restart_helper(&err) < 0) ||
	     cc_sandbox_vm_reconcile(&err) < 0))
		return cc_cli_fail(&err);
	ctx = (struct cc_ctx){ .root = root, .policy_path = o.policy, .state_dir = o.state, .lock = &o.lock.lock,
			       .fault = cc_cli_fault(), .log = stderr, .verbose = o.verbose };
	if (!strcmp(o.sub, "status"))
		rc = status(&ctx, &o, &res, &err);
	else if (!strcmp(o.sub, "xml"))
		rc = xml(&ctx, &o, &res, &err);
	else {
		vo = (struct cc_vm_opts){ .config = o.config, .dry_run = o.dry_run };
		rc = cc_vm_reconcile(&ctx, &vo, &res, &err);
		/* What was done is printed even when a later step failed. */
		if (rc < 0 && !res.plan.n) {
			rc = cc_cli_fail(&err);
		} else {
			if (o.json) {
				struct cc_err jerr = CC_ERR_INIT;

				if (print_json(&res, &o, NULL, 0, &jerr) < 0 && rc == 0)
					err = jerr, rc = -1;
			} else {
				print_text(&res, &o);
			}
			fflush(stdout);
			refusals(&res);
			if (rc < 0)
				rc = cc_cli_fail(&err);
			else
				rc = res.plan.nrefused ? CC_EXIT_REFUSED : CC_EXIT_OK;
		}
	}
	cc_vm_result_fini(&res);
	return rc;
}
