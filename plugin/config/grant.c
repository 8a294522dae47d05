/* corecarve: the grant annotation (grant.h). */
#define _GNU_SOURCE
#include "grant.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "policy_schema.h"

/* What every refusal of the value ends with. */
#define GRANT_FIX                                                                                        \
	"a grant is the value corecarve device-plugin's Allocate answered, as the kubelet passes it; " \
	"remove the annotation from the pod"

static int bad(struct cc_err *err, const char *why)
{
	return cc_err_set(err, EINVAL, "annotation %s: %s; %s", CC_GRANT_KEY, why, GRANT_FIX);
}

/* The id as the ledger writes it (the cpu-list in its own spelling, so
 * that one grant has one id): -1 when the value spells it otherwise. */
static int canonical_id(struct cc_grant_ref *out, const char *cls, const char *cpus, struct cc_err *err)
{
	_cleanup_free_ char *canon = cc_cpulist_format(out->cpus);

	if (!canon)
		return cc_err_sys(err, ENOMEM, "annotation %s", CC_GRANT_KEY);
	if (strcmp(canon, cpus) || (size_t)snprintf(out->id, sizeof(out->id), "grant:%s:%s", cls, canon) >= sizeof(out->id))
		return bad(err, "its CPUs are not written as the ledger writes them");
	return 0;
}

int cc_grant_ref_parse(const char *value, size_t len, struct cc_grant_ref *out, struct cc_err *err)
{
	char buf[CC_GRANT_ID_MAX + CC_GRANT_TOKEN_MAX + 1], *cls, *cpus, *token;
	struct cc_err why = CC_ERR_INIT;

	memset(out, 0, sizeof(*out));
	if (len >= sizeof(buf) || memchr(value, '\0', len))
		return bad(err, "not a grant (too long, or a NUL inside)");
	memcpy(buf, value, len);
	buf[len] = '\0';
	cls = buf + 6;
	cpus = strncmp(buf, "grant:", 6) ? NULL : strchr(cls, ':');
	token = cpus ? strchr(cpus + 1, ':') : NULL;
	if (!token)
		return bad(err, "not a grant (expected \"grant:<class>:<cpus>:<token>\")");
	*cpus++ = '\0';
	*token++ = '\0';
	if (!cc_policy_name_ok(cls, sizeof(out->class_name) - 1))
		return bad(err, "its class is not a class name (1 to 63 characters of a-z, 0-9 and '-')");
	if (strlen(token) != CC_GRANT_TOKEN_LEN || strspn(token, "0123456789abcdef") != CC_GRANT_TOKEN_LEN)
		return bad(err, "its token is not 32 lowercase hex digits");
	out->cpus = hwloc_bitmap_alloc();
	if (!out->cpus)
		return cc_err_sys(err, ENOMEM, "annotation %s", CC_GRANT_KEY);
	if (cc_cpulist_parse(cpus, out->cpus, "cpus", &why) < 0 || hwloc_bitmap_iszero(out->cpus)) {
		cc_grant_ref_fini(out);
		return bad(err, "its CPUs are not a cpu-list of at least one CPU");
	}
	if (canonical_id(out, cls, cpus, err) < 0) {
		cc_grant_ref_fini(out);
		return -1;
	}
	memcpy(out->class_name, cls, strlen(cls) + 1); /* at most 63 bytes: cc_policy_name_ok */
	memcpy(out->token, token, CC_GRANT_TOKEN_MAX);
	return 0;
}

int cc_grant_ref_lookup(const json_t *annotations, struct cc_grant_ref *out, struct cc_err *err)
{
	const json_t *v = json_is_object(annotations) ? json_object_get(annotations, CC_GRANT_KEY) : NULL;

	memset(out, 0, sizeof(*out));
	if (!v)
		return 0;
	if (!json_is_string(v))
		return bad(err, "expected a string value");
	return cc_grant_ref_parse(json_string_value(v), json_string_length(v), out, err) < 0 ? -1 : 1;
}

void cc_grant_ref_fini(struct cc_grant_ref *g)
{
	if (g && g->cpus) {
		hwloc_bitmap_free(g->cpus);
		g->cpus = NULL;
	}
}
