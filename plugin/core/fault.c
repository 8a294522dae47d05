#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cc_fault(const char *armed, const char *step)
{
	size_t n = strlen(step);

	if (!armed || strncmp(armed, step, n))
		return;
	if (!armed[n])
		kill(getpid(), SIGKILL);
	else if (!strcmp(armed + n, ":STOP"))
		kill(getpid(), SIGSTOP); /* as SIGKILL above: the hook's filter allows kill */
}

int cc_fault_errno(const char *armed, const char *point, int nth)
{
	static const struct {
		const char *name;
		int code;
	} codes[] = { { "ENOSPC", ENOSPC }, { "EROFS", EROFS }, { "EIO", EIO }, { "EDQUOT", EDQUOT } };
	size_t n = strlen(point);
	const char *code, *at;

	if (!armed || strncmp(armed, point, n) || armed[n] != ':')
		return 0;
	code = armed + n + 1;
	at = strchr(code, '@');
	if (at && atoi(at + 1) != nth)
		return 0;
	n = at ? (size_t)(at - code) : strlen(code);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strlen(codes[i].name) == n && !strncmp(code, codes[i].name, n))
			return codes[i].code;
	return 0;
}
