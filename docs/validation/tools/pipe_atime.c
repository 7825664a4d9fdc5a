/*
 * pipe_atime: the per-operation cost of the {a,c,m}time updates that a FIFO's read and
 * write still make and an anonymous pipe's no longer make (Linux f017b0a4951f, "pipe: don't
 * update {a,c,m}time for anonymous pipes"). On a kernel that has the commit, the difference
 * FIFO - anonymous pipe, same message size, same packet mode, is that cost.
 *
 * Build:  gcc -O2 -Wall -o pipe_atime pipe_atime.c
 * Usage:  pipe_atime MODE KIND OPS [FIFO_DIR]
 *   MODE  solo      one thread, pinned to CPU 0: write BATCH packets, then read them back
 *                   (non-blocking, no context switch); the write and the read side are timed
 *                   apart with CLOCK_THREAD_CPUTIME_ID, so time other tasks take is not counted
 *         pp1       ping-pong, two processes pinned to CPU 0: A writes 512 B to B, B writes
 *                   512 B back; one op = one round trip (2 writes, 2 reads, 2 switches)
 *         pp2       the same ping-pong with A on CPU 0 and B on CPU 1
 *         stream1   one-directional: a writer writes OPS packets, a child reader drains them
 *                   (stress-ng's pipe stressor without its user-space loops), both on CPU 0
 *         stream2   the same with the reader on CPU 1
 *   KIND  anon      pipe2(O_DIRECT)   (stress-ng 0.15.06: packet mode, 512-byte writes)
 *         fifo      mkfifo in FIFO_DIR (default /dev/shm), opened O_RDWR, then O_DIRECT
 *                   set with fcntl so that both kinds are packet-mode pipes
 *   Output: one line, "MODE KIND OPS ns_per_op_cpu [w_ns r_ns] [csw/op N]" where
 *   ns_per_op_cpu is the CPU time (user+sys, getrusage of the process and its reaped child)
 *   per op. In solo mode w_ns and r_ns are the write and read system-call CPU times per
 *   packet; in stream mode the writer's and the reader's CPU time per packet. csw/op counts
 *   both processes' context switches (voluntary + involuntary) per op.
 *
 * Written for schedlab's validation notes (docs/validation/pipe-atime.md); no kernel code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 512   /* stress-ng 0.15.06 --pipe-data-size default (workloads.md §2.1) */
#define BATCH 16  /* the default pipe ring: 16 slots, one packet each in packet mode */

static char buf[MSG];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		die("sched_setaffinity");
}

static double ns(const struct timespec *t)
{
	return t->tv_sec * 1e9 + t->tv_nsec;
}

/* Context switches (voluntary + involuntary) of the process or its reaped children. */
static long csw(int who)
{
	struct rusage r;
	if (getrusage(who, &r))
		die("getrusage");
	return r.ru_nvcsw + r.ru_nivcsw;
}

static double rusage_ns(int who)
{
	struct rusage r;
	if (getrusage(who, &r))
		die("getrusage");
	return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e9 +
	       (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e3;
}

/* A packet-mode pipe of the given kind: fd[0] read end, fd[1] write end. */
static void make_pipe(const char *kind, const char *dir, int fd[2], int nonblock)
{
	if (!strcmp(kind, "anon")) {
		if (pipe2(fd, O_DIRECT | (nonblock ? O_NONBLOCK : 0)))
			die("pipe2");
		return;
	}
	char path[256];
	snprintf(path, sizeof(path), "%s/pipe_atime.%d.%d", dir, getpid(), rand());
	if (mkfifo(path, 0600))
		die("mkfifo");
	/* O_RDWR on a FIFO never blocks on open (Linux); two opens give two struct files, as
	 * a reader and a writer opening the FIFO would have. */
	fd[0] = open(path, O_RDWR | (nonblock ? O_NONBLOCK : 0));
	fd[1] = open(path, O_RDWR | (nonblock ? O_NONBLOCK : 0));
	if (fd[0] < 0 || fd[1] < 0)
		die("open fifo");
	unlink(path);
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(fd[i], F_GETFL);
		if (fcntl(fd[i], F_SETFL, fl | O_DIRECT))
			die("fcntl O_DIRECT on fifo");
	}
}

static void xwrite(int fd)
{
	for (;;) {
		ssize_t n = write(fd, buf, MSG);
		if (n == MSG)
			return;
		if (n < 0 && errno == EINTR)
			continue;
		die("write");
	}
}

static int xread(int fd)
{
	for (;;) {
		ssize_t n = read(fd, buf, MSG);
		if (n == MSG)
			return 0;
		if (n == 0)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		die("read");
	}
}

static void solo(const char *kind, const char *dir, long ops)
{
	int fd[2];
	struct timespec t0, t1, t2;
	double w = 0, r = 0;

	pin(0);
	make_pipe(kind, dir, fd, 1);
	double c0 = rusage_ns(RUSAGE_SELF);
	for (long i = 0; i < ops; i += BATCH) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		for (int j = 0; j < BATCH; j++)
			xwrite(fd[1]);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		for (int j = 0; j < BATCH; j++)
			xread(fd[0]);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t2);
		w += ns(&t1) - ns(&t0);
		r += ns(&t2) - ns(&t1);
	}
	double c1 = rusage_ns(RUSAGE_SELF);
	long n = (ops / BATCH) * BATCH;
	printf("solo %s %ld %.1f %.1f %.1f\n", kind, n, (c1 - c0) / n, w / n, r / n);
}

static void pingpong(const char *kind, const char *dir, long ops, int cpu_b)
{
	int ab[2], ba[2];
	make_pipe(kind, dir, ab, 0);
	make_pipe(kind, dir, ba, 0);
	pin(0);
	double c0 = rusage_ns(RUSAGE_SELF) + rusage_ns(RUSAGE_CHILDREN);
	long s0 = csw(RUSAGE_SELF) + csw(RUSAGE_CHILDREN);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		pin(cpu_b);
		for (long i = 0; i < ops; i++) {
			xread(ab[0]);
			xwrite(ba[1]);
		}
		_exit(0);
	}
	for (long i = 0; i < ops; i++) {
		xwrite(ab[1]);
		xread(ba[0]);
	}
	waitpid(pid, NULL, 0);
	double c1 = rusage_ns(RUSAGE_SELF) + rusage_ns(RUSAGE_CHILDREN);
	long s1 = csw(RUSAGE_SELF) + csw(RUSAGE_CHILDREN);
	printf("pp%d %s %ld %.1f csw/op %.3f\n", cpu_b + 1, kind, ops, (c1 - c0) / ops,
	       (double)(s1 - s0) / ops);
}

static void stream(const char *kind, const char *dir, long ops, int cpu_r)
{
	int p[2];
	make_pipe(kind, dir, p, 0);
	pin(0);
	double c0 = rusage_ns(RUSAGE_SELF) + rusage_ns(RUSAGE_CHILDREN);
	long s0 = csw(RUSAGE_SELF) + csw(RUSAGE_CHILDREN);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		pin(cpu_r);
		for (long i = 0; i < ops; i++)
			xread(p[0]);
		_exit(0);
	}
	double w0 = rusage_ns(RUSAGE_SELF);
	for (long i = 0; i < ops; i++)
		xwrite(p[1]);
	double w1 = rusage_ns(RUSAGE_SELF);
	waitpid(pid, NULL, 0);
	double c1 = rusage_ns(RUSAGE_SELF) + rusage_ns(RUSAGE_CHILDREN);
	/* rd: the reaped reader's CPU time (everything since c0 less the writer's loop). */
	double wr = w1 - w0, rd = (c1 - c0) - (w1 - w0);
	long s1 = csw(RUSAGE_SELF) + csw(RUSAGE_CHILDREN);
	printf("stream%d %s %ld %.1f %.1f %.1f csw/op %.3f\n", cpu_r + 1, kind, ops,
	       (c1 - c0) / ops, wr / ops, rd / ops, (double)(s1 - s0) / ops);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s solo|pp1|pp2|stream1|stream2 anon|fifo OPS [FIFO_DIR]\n",
			argv[0]);
		return 2;
	}
	const char *mode = argv[1], *kind = argv[2];
	long ops = atol(argv[3]);
	const char *dir = argc > 4 ? argv[4] : "/dev/shm";
	if (strcmp(kind, "anon") && strcmp(kind, "fifo")) {
		fprintf(stderr, "pipe_atime: KIND must be anon or fifo, not '%s'\n", kind);
		return 2;
	}
	if (ops <= 0) {
		fprintf(stderr, "pipe_atime: OPS must be a positive count, not '%s'\n", argv[3]);
		return 2;
	}
	srand(getpid());
	memset(buf, 'x', sizeof(buf));
	if (!strcmp(mode, "solo"))
		solo(kind, dir, ops);
	else if (!strcmp(mode, "pp1"))
		pingpong(kind, dir, ops, 0);
	else if (!strcmp(mode, "pp2"))
		pingpong(kind, dir, ops, 1);
	else if (!strcmp(mode, "stream1"))
		stream(kind, dir, ops, 0);
	else if (!strcmp(mode, "stream2"))
		stream(kind, dir, ops, 1);
	else {
		fprintf(stderr, "pipe_atime: unknown MODE '%s'\n", mode);
		return 2;
	}
	return 0;
}
