#define _GNU_SOURCE
#include "testlib.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cc_test_fixtures_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("CC_SHARED_DIR");
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s/fixtures", env);
	else
		snprintf(dir, sizeof(dir), "%s", CC_SOURCE_DIR "/../shared/fixtures");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return dir;
}

const char *cc_test_fixture_file(const char *dir, const char *file)
{
	static char path[PATH_MAX];
	const char *base = cc_test_fixtures_dir();

	if (base) {
		snprintf(path, sizeof(path), "%s/%s/%s", base, dir, file);
		if (access(path, R_OK) == 0)
			return path;
	}
	printf("SKIPPED: fixture %s/%s not found (expected under ../shared/fixtures)\n", dir, file);
	return NULL;
}

const char *cc_test_fixture_tree(const char *dir, const char *file)
{
	static char out[PATH_MAX];
	char cmd[4 * PATH_MAX + 128], marker[PATH_MAX + 16];
	const char *src = cc_test_fixture_file(dir, file);

	if (!src)
		return NULL;
	/* One extraction per fixture, reused across test processes (Check forks
	 * each test); the marker is written only after tar succeeded. */
	snprintf(out, sizeof(out), "/tmp/corecarve-fixtures-%u/%s", (unsigned)getuid(), dir);
	snprintf(marker, sizeof(marker), "%s/.extracted", out);
	if (access(marker, F_OK) == 0)
		return out;
	/* tar picks the decompressor; fixtures hold looping symlinks, which are
	 * extracted as links, never followed. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && tar -xf '%s' -C '%s' 2>/dev/null && touch '%s'",
		 out, out, src, out, marker);
	if (system(cmd) != 0) {
		printf("SKIPPED: could not extract %s\n", src);
		return NULL;
	}
	return out;
}

char *cc_test_write_tmp(const char *text)
{
	char tmpl[] = "/tmp/cc-test-XXXXXX";
	int fd = mkstemp(tmpl);
	size_t len = strlen(text);

	if (fd < 0)
		return NULL;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	close(fd);
	return strdup(tmpl);
}
