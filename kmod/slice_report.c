// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: where the long-slice watch's reports go (slice_watch.c makes them): trace events
 * (slice_trace.h) and a ring of the last CSF_RING reports, which the root-only file "slices"
 * reads as text lines, one per report, with poll(). The ring never stops its writer: the oldest
 * report goes, and a reader that had not read it gets a "lost N" line instead.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "csf.h"
#include "slice.h"

#define CREATE_TRACE_POINTS
#include "slice_trace.h"

#define CSF_RING 256 /* reports kept for readers of "slices" */

/* ---- The ring of reports ---- */

static struct {
	raw_spinlock_t lock; /* taken with interrupts off, from the probe and the timers too */
	u64 head; /* the sequence number of the next report */
	struct csf_slice_report rec[CSF_RING];
} csf_ring = { .lock = __RAW_SPIN_LOCK_UNLOCKED(csf_ring.lock) };

static DECLARE_WAIT_QUEUE_HEAD(csf_ring_wq);

static bool slice_printk;
module_param(slice_printk, bool, 0644);
MODULE_PARM_DESC(slice_printk, "log a line per long-slice report (rate-limited; default off)");

static const char *const csf_class_names[] = { "unknown", "stop", "deadline", "rt",
					       "fair",	  "ext",  "idle" };
static int csf_escape(char *buf, size_t len, const char *s, size_t n);

/*
 * The kernel log's lines for the reports made since the last call, if asked for: from the
 * irq_work, not where the report is made, as the switch probe holds the runqueue lock, where
 * printk() could deadlock waking a console's waiter.
 */
static void csf_ring_printk(void)
{
	static DEFINE_RATELIMIT_STATE(rs, 5 * HZ, 10);
	static atomic_t busy = ATOMIC_INIT(0); /* the work can run on two CPUs at once */
	static u64 pos; /* the next report to log */
	char comm[4 * TASK_COMM_LEN + 1];
	struct csf_slice_report r;
	unsigned long flags;
	bool any;

	if (atomic_xchg(&busy, 1))
		return;
	for (int i = 0; i < CSF_RING; i++) {
		raw_spin_lock_irqsave(&csf_ring.lock, flags);
		if (csf_ring.head > CSF_RING && pos < csf_ring.head - CSF_RING)
			pos = csf_ring.head - CSF_RING;
		any = pos < csf_ring.head;
		if (any)
			r = csf_ring.rec[pos++ % CSF_RING];
		raw_spin_unlock_irqrestore(&csf_ring.lock, flags);
		if (!any)
			break;
		if (!READ_ONCE(slice_printk) || !__ratelimit(&rs))
			continue;
		csf_escape(comm, sizeof(comm), r.comm, sizeof(r.comm));
		pr_info("long slice: cpu %u tid %d (%s) class %s %s %llu.%03llu ms, exec %lld us\n",
			r.cpu, r.pid, comm, csf_class_names[r.class],
			r.event == CSF_SLICE_END ? "ended after" : "running for",
			r.len_ns / NSEC_PER_MSEC, r.len_ns % NSEC_PER_MSEC / NSEC_PER_USEC,
			r.exec_ns < 0 ? -1 : r.exec_ns / NSEC_PER_USEC);
	}
	atomic_set_release(&busy, 0);
}

/* Readers are woken from an irq_work: the probe holds the runqueue lock, where no wakeup may. */
static void csf_ring_wake(struct irq_work *work)
{
	wake_up_interruptible(&csf_ring_wq);
	csf_ring_printk();
}

static struct irq_work csf_ring_work = IRQ_WORK_INIT(csf_ring_wake);
static bool csf_ring_owed; /* a wakeup a CPU going offline left to an online one */

/*
 * Wake the readers. A CPU going offline has flushed its irq_work already and would not take the
 * interrupt irq_work_queue() raises: the work would stay pending there, no reader would be woken
 * again and irq_work_sync() would wait for ever. Such a CPU leaves the wakeup to the next online
 * CPU's watch timer (csf_slices_tick()), or to csf_slices_sync(). So does an isolated CPU the
 * watch leaves alone: the interrupt would disturb it. Preemption off: the CPU cannot go offline
 * between the check and the queueing (its stopper takes it down).
 */
static void csf_ring_kick(void)
{
	int cpu;

	preempt_disable();
	cpu = smp_processor_id();
	if (cpu_online(cpu) && !csf_slice_cpu_quiet(cpu))
		irq_work_queue(&csf_ring_work); /* already pending: that wakeup serves this one */
	else
		WRITE_ONCE(csf_ring_owed, true);
	preempt_enable();
}

/* From the watch's timer on an online CPU. */
void csf_slices_tick(void)
{
	if (READ_ONCE(csf_ring_owed) && xchg(&csf_ring_owed, false))
		irq_work_queue(&csf_ring_work);
}

/* Any context but NMI: the switch probe, hard timers, a CPU going offline. */
void csf_report(struct csf_slice_report *r)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&csf_ring.lock, flags);
	r->seq = csf_ring.head++;
	csf_ring.rec[r->seq % CSF_RING] = *r;
	raw_spin_unlock_irqrestore(&csf_ring.lock, flags);

	if (r->event == CSF_SLICE_END)
		trace_csf_slice_end(r);
	else
		trace_csf_slice(r);
	csf_ring_kick();
}

/* No wakeup may be left pending once the watch is off. */
void csf_slices_sync(void)
{
	irq_work_sync(&csf_ring_work);
	if (xchg(&csf_ring_owed, false))
		csf_ring_wake(NULL);
}

/* ---- The file ---- */

struct csf_slices_reader {
	struct mutex lock; /* read(), pread() and preadv() of one open file, one at a time */
	u64 pos; /* the next report to read */
	u64 lost; /* reports overwritten before this reader read them, not yet said */
	char line[2048];
};

static int csf_slices_open(struct inode *inode, struct file *file)
{
	struct csf_slices_reader *rd;
	unsigned long flags;

	if (file->f_mode & FMODE_WRITE)
		return -EACCES;
	rd = kzalloc(sizeof(*rd), GFP_KERNEL_ACCOUNT);
	if (!rd)
		return -ENOMEM;
	mutex_init(&rd->lock);
	raw_spin_lock_irqsave(&csf_ring.lock, flags);
	rd->pos = csf_ring.head > CSF_RING ? csf_ring.head - CSF_RING : 0; /* what the ring holds */
	raw_spin_unlock_irqrestore(&csf_ring.lock, flags);
	file->private_data = rd;
	return 0;
}

static int csf_slices_release(struct inode *inode, struct file *file)
{
	struct csf_slices_reader *rd = file->private_data;

	mutex_destroy(&rd->lock);
	kfree(rd);
	return 0;
}

static bool csf_slices_ready(struct csf_slices_reader *rd)
{
	return READ_ONCE(csf_ring.head) > rd->pos;
}

/* Characters that would split a key=value line are written as \xHH. */
static int csf_escape(char *buf, size_t len, const char *s, size_t n)
{
	int w = 0;

	for (; n && *s; s++, n--) {
		unsigned char c = *s;

		if (c <= ' ' || c >= 0x7f || c == '\\' || c == '=' || c == ',')
			w += scnprintf(buf + w, len - w, "\\x%02x", c);
		else
			w += scnprintf(buf + w, len - w, "%c", c);
	}
	return w;
}

static const char *const csf_policy_names[] = { "normal", "fifo", "rr",	      "batch",
						"iso",	  "idle", "deadline", "ext" };

/*
 * The trace events' text form of a stack (slice_trace.h): symbols only. A user-space frame shows
 * as "user", an address no symbol covers (a module unloaded since) as "?": either would print
 * an address that tracefs's readers, who may not read /proc/kallsyms, must not learn.
 */
const char *csf_trace_stack(struct trace_seq *p, const unsigned long *ip, unsigned int n, bool user)
{
	const char *ret = trace_seq_buffer_ptr(p);
	char frame[KSYM_SYMBOL_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (user)
			strscpy(frame, "user", sizeof(frame));
		else if (!sprint_symbol(frame, ip[i]) || !strncmp(frame, "0x", 2))
			strscpy(frame, "?", sizeof(frame));
		trace_seq_printf(p, "%s%s", i ? "," : "", frame);
	}
	if (!n)
		trace_seq_putc(p, '-');
	trace_seq_putc(p, 0);
	return ret;
}

static int csf_format(char *buf, size_t len, const struct csf_slice_report *r)
{
	static const char *const vias[] = { "none", "irq", "nmi", "lost", "isolated", "no-nmi" };
	char comm[4 * TASK_COMM_LEN + 1] = "", frame[KSYM_SYMBOL_LEN];
	int w, i;

	csf_escape(comm, sizeof(comm), r->comm, sizeof(r->comm));
	w = scnprintf(buf, len, "seq=%llu event=%s cpu=%u tid=%d tgid=%d comm=%s class=%s ", r->seq,
		      r->event == CSF_SLICE_END ? "end" : "running", r->cpu, r->pid, r->tgid, comm,
		      csf_class_names[r->class]);
	w += scnprintf(buf + w, len - w, "policy=%s rtprio=%d nice=%d ",
		       r->policy < ARRAY_SIZE(csf_policy_names) ? csf_policy_names[r->policy] : "?",
		       r->rtprio, r->nice);
	w += scnprintf(buf + w, len - w,
		       "start_ns=%llu len_ns=%llu waiting=%d stack_via=%s stack=", r->start_ns,
		       r->len_ns, r->waiting, vias[r->stack_via]);
	for (i = 0; i < r->stack.nr; i++) {
		if (r->stack.user)
			snprintf(frame, sizeof(frame), "user:0x%lx", r->stack.ip[i]);
		else
			sprint_symbol(frame, r->stack.ip[i]);
		if (i)
			w += scnprintf(buf + w, len - w, ",");
		w += csf_escape(buf + w, len - w, frame, sizeof(frame));
	}
	if (!r->stack.nr)
		w += scnprintf(buf + w, len - w, "-");
	w += scnprintf(buf + w, len - w, " exec_ns=%lld\n", r->exec_ns);
	return w;
}

static ssize_t csf_slices_read_locked(struct file *file, char __user *ubuf, size_t count)
{
	struct csf_slices_reader *rd = file->private_data;
	struct csf_slice_report r;
	unsigned long flags;
	ssize_t done = 0;
	bool lost;
	int n;

	while (count > done) {
		raw_spin_lock_irqsave(&csf_ring.lock, flags);
		if (csf_ring.head > CSF_RING && rd->pos < csf_ring.head - CSF_RING) {
			rd->lost += csf_ring.head - CSF_RING - rd->pos;
			rd->pos = csf_ring.head - CSF_RING;
		}
		lost = rd->lost;
		if (!lost && rd->pos == csf_ring.head) {
			raw_spin_unlock_irqrestore(&csf_ring.lock, flags);
			break;
		}
		if (!lost)
			r = csf_ring.rec[rd->pos % CSF_RING];
		raw_spin_unlock_irqrestore(&csf_ring.lock, flags);

		if (lost)
			n = scnprintf(rd->line, sizeof(rd->line), "lost %llu\n", rd->lost);
		else
			n = csf_format(rd->line, sizeof(rd->line), &r);
		if (n > count - done) {
			if (!done) /* not even one line fits */
				return -EINVAL;
			break; /* the line waits for the next read */
		}
		if (copy_to_user(ubuf + done, rd->line, n))
			return done ? done : -EFAULT;
		done += n;
		if (lost)
			rd->lost = 0;
		else
			rd->pos++;
		cond_resched(); /* symbolizing stacks adds up: be no long slice of our own */
	}
	return done;
}

static ssize_t csf_slices_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct csf_slices_reader *rd = file->private_data;
	ssize_t done;

	for (;;) {
		if (!csf_slices_ready(rd)) {
			if (file->f_flags & O_NONBLOCK)
				return -EAGAIN;
			if (wait_event_interruptible(csf_ring_wq, csf_slices_ready(rd)))
				return -ERESTARTSYS;
		}
		if (mutex_lock_interruptible(&rd->lock))
			return -ERESTARTSYS;
		done = csf_slices_read_locked(file, ubuf, count);
		mutex_unlock(&rd->lock);
		/* Another read of this file took what woke this one: wait again. */
		if (done || (file->f_flags & O_NONBLOCK))
			return done ? done : -EAGAIN;
	}
}

static __poll_t csf_slices_poll(struct file *file, poll_table *wait)
{
	struct csf_slices_reader *rd = file->private_data;

	poll_wait(file, &csf_ring_wq, wait);
	return csf_slices_ready(rd) ? EPOLLIN | EPOLLRDNORM : 0;
}

const struct file_operations csf_slices_fops = {
	.owner = THIS_MODULE,
	.open = csf_slices_open,
	.release = csf_slices_release,
	.read = csf_slices_read,
	.poll = csf_slices_poll,
	.llseek = noop_llseek,
};
