/* corecarve audit: finding codes, the report, running the checks, output. */
#define _GNU_SOURCE
#include "audit.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "text.h"

static const struct {
	const char *name;
	enum cc_audit_severity severity;
} codes[CC_AUDIT_NCODES] = {
	[CC_AUDIT_CARVE_DRIFT] = { "CARVE_DRIFT", CC_AUDIT_CRITICAL },
	[CC_AUDIT_PARTITION_INVALID] = { "PARTITION_INVALID", CC_AUDIT_CRITICAL },
	[CC_AUDIT_PARTITION_MISSING] = { "PARTITION_MISSING", CC_AUDIT_CRITICAL },
	[CC_AUDIT_OVERLAP] = { "OVERLAP", CC_AUDIT_CRITICAL },
	[CC_AUDIT_RESERVED_CARVED] = { "RESERVED_CARVED", CC_AUDIT_WARNING },
	[CC_AUDIT_SOFT_EXCLUSIVITY_LEAK] = { "SOFT_EXCLUSIVITY_LEAK", CC_AUDIT_CRITICAL },
	[CC_AUDIT_SPLIT_CORE] = { "SPLIT_CORE", CC_AUDIT_CRITICAL },
	[CC_AUDIT_MEMS_MISALIGNED] = { "MEMS_MISALIGNED", CC_AUDIT_WARNING },
	[CC_AUDIT_IRQ_ON_CARVE] = { "IRQ_ON_CARVE", CC_AUDIT_WARNING },
	[CC_AUDIT_IRQ_COUNTS_ON_CARVE] = { "IRQ_COUNTS_ON_CARVE", CC_AUDIT_WARNING },
	[CC_AUDIT_QUOTA_ON_CARVE] = { "QUOTA_ON_CARVE", CC_AUDIT_CRITICAL },
	[CC_AUDIT_QUOTA_WITH_PINNING] = { "QUOTA_WITH_PINNING", CC_AUDIT_WARNING },
	[CC_AUDIT_TASK_ESCAPED] = { "TASK_ESCAPED", CC_AUDIT_WARNING },
	[CC_AUDIT_STALE_RECORD] = { "STALE_RECORD", CC_AUDIT_WARNING },
	[CC_AUDIT_UNKNOWN_CARVE] = { "UNKNOWN_CARVE", CC_AUDIT_WARNING },
	[CC_AUDIT_KUBELET_STATIC_CPU_MANAGER] = { "KUBELET_STATIC_CPU_MANAGER", CC_AUDIT_WARNING },
	[CC_AUDIT_VM_MIXED_CLASSES] = { "VM_MIXED_CLASSES", CC_AUDIT_WARNING },
	[CC_AUDIT_VM_SHARED_CPU] = { "VM_SHARED_CPU", CC_AUDIT_CRITICAL },
	[CC_AUDIT_VM_DRIFT] = { "VM_DRIFT", CC_AUDIT_CRITICAL },
	[CC_AUDIT_VM_GONE] = { "VM_GONE", CC_AUDIT_WARNING },
	[CC_AUDIT_POWER_DRIFT] = { "POWER_DRIFT", CC_AUDIT_WARNING },
	[CC_AUDIT_POWER_NOT_RESTORED] = { "POWER_NOT_RESTORED", CC_AUDIT_WARNING },
	[CC_AUDIT_RELEASE_PENDING] = { "RELEASE_PENDING", CC_AUDIT_WARNING },
	[CC_AUDIT_RECORD_ORPHAN] = { "RECORD_ORPHAN", CC_AUDIT_WARNING },
	[CC_AUDIT_RECORD_DRIFT] = { "RECORD_DRIFT", CC_AUDIT_WARNING },
	[CC_AUDIT_LEDGER_MISSING] = { "LEDGER_MISSING", CC_AUDIT_CRITICAL },
	[CC_AUDIT_TASKS_HIDDEN] = { "TASKS_HIDDEN", CC_AUDIT_WARNING },
	[CC_AUDIT_CGROUP_UNREADABLE] = { "CGROUP_UNREADABLE", CC_AUDIT_WARNING },
	[CC_AUDIT_SHARED_NARROW] = { "SHARED_NARROW", CC_AUDIT_WARNING },
	[CC_AUDIT_TASKS_UNREAD] = { "TASKS_UNREAD", CC_AUDIT_WARNING },
};

static const char *const repairs[] = {
	[CC_REPAIR_NONE] = "none",
	[CC_REPAIR_REAPPLY] = "reapply",
	[CC_REPAIR_TAKE_BACK] = "take-back",
	[CC_REPAIR_DROP_QUOTA] = "drop-quota",
	[CC_REPAIR_REPIN] = "repin",
	[CC_REPAIR_STEER_IRQS] = "steer-irqs",
	[CC_REPAIR_RELEASE] = "release",
	[CC_REPAIR_VM_RECONCILE] = "vm-reconcile",
	[CC_REPAIR_POWER] = "power",
	[CC_REPAIR_DROP_OWNER] = "drop-owner",
	[CC_REPAIR_WIDEN_SHARED] = "widen-shared",
};

const char *cc_audit_code_name(enum cc_audit_code c)
{
	return (unsigned)c < CC_AUDIT_NCODES ? codes[c].name : "?";
}

int cc_audit_code_parse(const char *name)
{
	for (int i = 0; i < CC_AUDIT_NCODES; i++)
		if (!strcmp(codes[i].name, name))
			return i;
	return -1;
}

enum cc_audit_severity cc_audit_code_severity(enum cc_audit_code c)
{
	return (unsigned)c < CC_AUDIT_NCODES ? codes[c].severity : CC_AUDIT_WARNING;
}

const char *cc_audit_severity_name(enum cc_audit_severity s)
{
	return s == CC_AUDIT_CRITICAL ? "critical" : "warning";
}

const char *cc_audit_repair_name(enum cc_audit_repair r)
{
	return (unsigned)r < sizeof(repairs) / sizeof(repairs[0]) ? repairs[r] : "?";
}

struct cc_finding *cc_audit_add(struct cc_audit_report *r, enum cc_audit_code code,
				const char *carve, struct cc_err *err)
{
	struct cc_finding *f;

	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 16;
		struct cc_finding *g = realloc(r->f, (size_t)cap * sizeof(*g));

		if (!g)
			return cc_err_sys(err, ENOMEM, "audit"), NULL;
		r->f = g;
		r->cap = cap;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->code = code;
	f->severity = cc_audit_code_severity(code);
	f->repair = CC_REPAIR_NONE;
	f->num = -1;
	snprintf(f->carve, sizeof(f->carve), "%s", carve ? carve : "");
	return f;
}

/* A finding quotes what it read (cgroup names, a captured tree's files):
 * kept valid UTF-8, cut between characters (the JSON output refuses
 * anything else), with control and bidi characters escaped (text.h). */
void cc_audit_text(char *dst, size_t len, const char *fmt, ...)
{
	char raw[2 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	cc_text_escape(dst, len, raw);
}

int cc_audit_count(const struct cc_audit_report *r, enum cc_audit_code code)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->f[i].code == code;
	return n;
}

void cc_audit_report_fini(struct cc_audit_report *r)
{
	free(r->f);
	memset(r, 0, sizeof(*r));
}

const struct cc_audit_check cc_audit_checks[] = {
	{ "records", cc_audit_check_records },
	{ "drift", cc_audit_check_drift },
	{ "partitions", cc_audit_check_partitions },
	{ "exclusivity", cc_audit_check_exclusivity },
	{ "quota", cc_audit_check_quota },
	{ "tasks", cc_audit_check_tasks },
	{ "irqs", cc_audit_check_irqs },
	{ "power", cc_audit_check_power },
	{ "kubelet", cc_audit_check_kubelet },
	/* VM findings come from `vm status` (cc_audit_add_vm), read by the
	 * entry point under the VM module's own ledger lock. */
	{ NULL, NULL },
};

static int finding_cmp(const void *a, const void *b)
{
	const struct cc_finding *x = a, *y = b;
	int c;

	if (x->severity != y->severity)
		return x->severity == CC_AUDIT_CRITICAL ? -1 : 1;
	if (x->code != y->code)
		return (int)x->code - (int)y->code;
	c = strcmp(x->carve, y->carve);
	return c ? c : strcmp(x->object, y->object);
}

int cc_audit_run(const struct cc_audit_in *in, struct cc_audit_report *out, struct cc_err *err)
{
	for (const struct cc_audit_check *c = cc_audit_checks; c->name; c++)
		if (c->fn(in, out, err) < 0)
			return cc_err_prefix(err, "audit check %s", c->name);
	if (out->n > 1)
		qsort(out->f, (size_t)out->n, sizeof(*out->f), finding_cmp);
	return 0;
}

void cc_audit_stats_fill(struct cc_audit_stats *st, const struct cc_ledger *l,
			 const struct cc_audit_snap *s)
{
	hwloc_bitmap_t taken = cc_ledger_taken(l);

	st->carves = cc_ledger_ncarves(l);
	st->carved_cpus = taken ? hwloc_bitmap_weight(taken) : 0;
	if (taken)
		hwloc_bitmap_free(taken);
	st->cgroups = s->ncgroups;
	st->tasks = s->ntasks;
	st->irqs = s->has_irqs ? s->irqs.n : 0;
	st->sample_ms = s->sample_ms;
}

json_t *cc_audit_findings_json(const struct cc_audit_report *r, struct cc_err *err)
{
	_cleanup_json_ json_t *arr = json_array();

	if (!arr)
		return cc_err_sys(err, ENOMEM, "audit"), NULL;
	for (int i = 0; i < r->n; i++) {
		const struct cc_finding *f = &r->f[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "code", cc_audit_code_name(f->code),
				      "severity", cc_audit_severity_name(f->severity), "carve", f->carve,
				      "object", f->object, "expected", f->expected, "actual", f->actual,
				      "fix", f->fix, "repair", cc_audit_repair_name(f->repair));

		if (!o || json_array_append_new(arr, o) < 0)
			return cc_err_sys(err, ENOMEM, "audit"), NULL;
	}
	return cc_steal_ptr(arr);
}

