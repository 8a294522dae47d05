/* The pod sandbox's process for the e2e guests, which reach no registry to
 * pull registry.k8s.io/pause from: what the Kubernetes pause container
 * does — hold the pod's namespaces, exit on SIGINT/SIGTERM, reap the
 * zombies it inherits as the pod's PID 1.  Built static (the image holds
 * nothing else). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction q = { .sa_handler = quit }, r = { .sa_handler = reap, .sa_flags = SA_NOCLDSTOP };

	if (sigaction(SIGINT, &q, NULL) < 0 || sigaction(SIGTERM, &q, NULL) < 0 || sigaction(SIGCHLD, &r, NULL) < 0)
		return 1;
	for (;;)
		pause();
}
