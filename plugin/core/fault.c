#include "fault.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

void cc_fault(const char *armed, const char *step)
{
	if (armed && !strcmp(armed, step))
		kill(getpid(), SIGKILL);
}
