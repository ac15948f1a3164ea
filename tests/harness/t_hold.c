// SPDX-License-Identifier: GPL-2.0
/*
 * t_hold: keep one thread registered with no file open, for the harness's rmmod check
 * (tests/harness/vm-inner.sh). The main thread opens thread-self; a second thread closes the
 * descriptor, which parks the object: registered, holding the module, reachable from no file.
 * Prints "ready" and waits to be killed; its exit then frees the object.
 */
#include "../t.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

static void *closer(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

int main(void)
{
	int fd = open(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, O_RDONLY);
	pthread_t th;

	if (fd < 0)
		t_die("open");
	pthread_create(&th, NULL, closer, (void *)(long)fd);
	pthread_join(th, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
