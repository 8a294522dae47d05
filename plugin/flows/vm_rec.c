/* corecarve: the "vm" record a VM carve keeps in its changes (vm.h). */
#define _GNU_SOURCE
#include "vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

void cc_vm_rec_fini(struct cc_vm_rec *rec)
{
	for (int i = 0; i < rec->nvcpus; i++)
		hwloc_bitmap_free(rec->vcpus[i].old);
	free(rec->vcpus);
	hwloc_bitmap_free(rec->emulator_old);
	memset(rec, 0, sizeof(*rec));
}

static int get_int(const json_t *o, const char *key, long long min, long long max, long long *out,
		   const char *what, struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected an integer", what, key);
	*out = json_integer_value(v);
	if (*out < min || *out > max)
		return cc_err_set(err, ERANGE, "%s.%s: %lld is out of range", what, key, *out);
	return 0;
}

static int get_set(const json_t *o, const char *key, hwloc_bitmap_t *out, const char *what, struct cc_err *err)
{
	const json_t *v = json_object_get(o, key);
	char where[256];

	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a cpu-list string", what, key);
	*out = hwloc_bitmap_alloc();
	if (!*out)
		return cc_err_sys(err, ENOMEM, "%s", what);
	snprintf(where, sizeof(where), "%s.%s", what, key);
	return cc_cpulist_parse(json_string_value(v), *out, where, err);
}

static int cmp_rec(const void *a, const void *b)
{
	const struct cc_vm_vcpu_rec *x = a, *y = b;

	return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
}

static int parse(const json_t *o, struct cc_vm_rec *rec, const char *what, struct cc_err *err)
{
	const json_t *vcpus = json_object_get(o, "vcpus"), *v;
	long long x;
	size_t i;

	if (get_int(o, "pid", 1, 0x3fffffff, &x, what, err) < 0)
		return -1;
	rec->pid = (pid_t)x;
	if (get_int(o, "start", 0, LLONG_MAX, &x, what, err) < 0)
		return -1;
	rec->start = (unsigned long long)x;
	if (get_int(o, "threads", 1, 2, &x, what, err) < 0)
		return -1;
	rec->threads = (int)x;
	if (get_set(o, "emulator_old", &rec->emulator_old, what, err) < 0)
		return -1;
	if (!json_is_array(vcpus) || !json_array_size(vcpus))
		return cc_err_set(err, EINVAL, "%s.vcpus: expected a non-empty array", what);
	rec->vcpus = calloc(json_array_size(vcpus), sizeof(*rec->vcpus));
	if (!rec->vcpus)
		return cc_err_sys(err, ENOMEM, "%s", what);
	json_array_foreach(vcpus, i, v)
	{
		struct cc_vm_vcpu_rec *r = &rec->vcpus[rec->nvcpus];
		char where[400];

		snprintf(where, sizeof(where), "%s.vcpus[%zu]", what, i);
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "%s: expected an object", where);
		rec->nvcpus++;
		if (get_int(v, "vcpu", 0, CC_CPU_LIMIT - 1, &x, where, err) < 0)
			return -1;
		r->vcpu = (int)x;
		if (get_int(v, "tid", 1, 0x3fffffff, &x, where, err) < 0)
			return -1;
		r->tid = (pid_t)x;
		if (get_int(v, "cpu", 0, CC_CPU_LIMIT - 1, &x, where, err) < 0)
			return -1;
		r->cpu = (int)x;
		if (get_set(v, "old", &r->old, where, err) < 0)
			return -1;
	}
	qsort(rec->vcpus, (size_t)rec->nvcpus, sizeof(*rec->vcpus), cmp_rec);
	for (int k = 1; k < rec->nvcpus; k++)
		if (rec->vcpus[k].vcpu == rec->vcpus[k - 1].vcpu)
			return cc_err_set(err, EINVAL, "%s.vcpus: vCPU %d twice", what, rec->vcpus[k].vcpu);
	return 0;
}

int cc_vm_rec_parse(const struct cc_carve *c, struct cc_vm_rec *rec, struct cc_err *err)
{
	char what[300];
	size_t i;
	json_t *o;

	memset(rec, 0, sizeof(*rec));
	json_array_foreach(c->changes, i, o)
	{
		const json_t *type = json_object_get(o, "type");

		if (!json_is_string(type) || strcmp(json_string_value(type), "vm"))
			continue;
		snprintf(what, sizeof(what), "ledger: %s.changes[%zu]", c->id, i);
		if (parse(o, rec, what, err) < 0) {
			cc_vm_rec_fini(rec);
			return -1;
		}
		return 0;
	}
	return cc_err_set(err, EINVAL, "ledger: %s: no \"vm\" record in its changes", c->id);
}

json_t *cc_vm_rec_json(const struct cc_vm_rec *rec)
{
	_cleanup_json_ json_t *o = NULL;
	json_t *arr = json_array();
	_cleanup_free_ char *emu = cc_cpulist_format(rec->emulator_old);

	if (!arr || !emu)
		return json_decref(arr), NULL;
	for (int i = 0; i < rec->nvcpus; i++) {
		const struct cc_vm_vcpu_rec *r = &rec->vcpus[i];
		_cleanup_free_ char *old = cc_cpulist_format(r->old);

		if (!old || json_array_append_new(arr, json_pack("{s:i, s:i, s:i, s:s}", "vcpu", r->vcpu, "tid",
								 (int)r->tid, "cpu", r->cpu, "old", old)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	o = json_pack("{s:s, s:i, s:I, s:i, s:o, s:s}", "type", "vm", "pid", (int)rec->pid, "start",
		      (json_int_t)rec->start, "threads", rec->threads, "vcpus", arr, "emulator_old", emu);
	return cc_steal_ptr(o);
}
