// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: where the long-slice watch's reports go (slice.c makes them): trace events
 * (slice_trace.h) and a ring of the last CSF_RING reports, which the root-only file "slices"
 * reads as text lines, one per report, with poll(). The ring never stops its writer: the oldest
 * report goes, and a reader that had not read it gets a "lost N" line instead.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/poll.h>
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

/* Readers are woken from an irq_work: the probe holds the runqueue lock, where no wakeup may. */
static void csf_ring_wake(struct irq_work *work)
{
	wake_up_interruptible(&csf_ring_wq);
}

static struct irq_work csf_ring_work = IRQ_WORK_INIT(csf_ring_wake);

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
	irq_work_queue(&csf_ring_work); /* already pending: that wakeup serves this one too */
}

/* No wakeup may be left pending once the watch is off. */
void csf_slices_sync(void)
{
	irq_work_sync(&csf_ring_work);
}

/* ---- The file ---- */

struct csf_slices_reader {
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
	raw_spin_lock_irqsave(&csf_ring.lock, flags);
	rd->pos = csf_ring.head > CSF_RING ? csf_ring.head - CSF_RING : 0; /* what the ring holds */
	raw_spin_unlock_irqrestore(&csf_ring.lock, flags);
	file->private_data = rd;
	return 0;
}

static int csf_slices_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
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

static int csf_format(char *buf, size_t len, const struct csf_slice_report *r)
{
	static const char *const classes[] = { "unknown", "stop", "deadline", "rt",
					       "fair",	  "ext",  "idle" };
	static const char *const vias[] = { "none", "irq", "nmi", "lost" };
	char comm[4 * TASK_COMM_LEN + 1] = "", frame[KSYM_SYMBOL_LEN];
	int w, i;

	csf_escape(comm, sizeof(comm), r->comm, sizeof(r->comm));
	w = scnprintf(buf, len, "seq=%llu event=%s cpu=%u tid=%d tgid=%d comm=%s class=%s ", r->seq,
		      r->event == CSF_SLICE_END ? "end" : "running", r->cpu, r->pid, r->tgid, comm,
		      classes[r->class]);
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
	w += scnprintf(buf + w, len - w, "\n");
	return w;
}

static ssize_t csf_slices_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct csf_slices_reader *rd = file->private_data;
	struct csf_slice_report r;
	unsigned long flags;
	ssize_t done = 0;
	bool lost;
	int n;

	if (!csf_slices_ready(rd)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		if (wait_event_interruptible(csf_ring_wq, csf_slices_ready(rd)))
			return -ERESTARTSYS;
	}
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
