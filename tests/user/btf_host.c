// SPDX-License-Identifier: GPL-2.0
/*
 * btf_host: the module's BTF reader (kmod/btf.c, compiled here as it is, in user space) on this
 * machine's own /sys/kernel/btf/vmlinux when there is one, and on blobs made to be wrong:
 * truncated at every length, a string section without its final NUL, names and sections out of
 * range, kinds it does not know with and without 7.x's layout section, bitfields, duplicates,
 * typedef loops, and every single-bit corruption of a good blob. Each must give the right
 * answer or an error, never a wrong answer and never a read out of bounds (make host-btf builds
 * it with AddressSanitizer and UBSan where the compiler has them).
 *
 *	btf_host [BTF-FILE]	(default /sys/kernel/btf/vmlinux)
 */
#include "../t.h"

#include "btf_user.h"
#include "../../kmod/btf.h"

/* A blob under construction: its type and string sections, and a layout section. */
struct bb {
	uint8_t ty[4096];
	size_t ty_len;
	char st[1024];
	size_t st_len;
	uint8_t layout[256];
	size_t layout_len;
	uint32_t nr; /* types so far: the last one's id */
};

static void bb_init(struct bb *b)
{
	memset(b, 0, sizeof(*b));
	b->st_len = 1; /* offset 0: the empty name */
}

static uint32_t bb_str(struct bb *b, const char *s)
{
	uint32_t off = (uint32_t)b->st_len;

	if (!*s)
		return 0;
	memcpy(b->st + b->st_len, s, strlen(s) + 1);
	b->st_len += strlen(s) + 1;
	return off;
}

static void bb_u32(struct bb *b, uint32_t v)
{
	memcpy(b->ty + b->ty_len, &v, 4);
	b->ty_len += 4;
}

/* A type record's head; returns its id. */
static uint32_t bb_type(struct bb *b, const char *name, uint32_t kind, uint32_t vlen, int kflag,
			uint32_t size_type)
{
	bb_u32(b, bb_str(b, name));
	bb_u32(b, kind << 24 | vlen | (uint32_t)kflag << 31);
	bb_u32(b, size_type);
	return ++b->nr;
}

static uint32_t bb_int(struct bb *b, const char *name, uint32_t size)
{
	uint32_t id = bb_type(b, name, 1, 0, 0, size);

	bb_u32(b, size * 8); /* encoding 0, offset 0, bits */
	return id;
}

static void bb_member(struct bb *b, const char *name, uint32_t type, uint32_t bits)
{
	bb_u32(b, bb_str(b, name));
	bb_u32(b, type);
	bb_u32(b, bits);
}

static void bb_layout(struct bb *b, size_t kind, uint8_t info_sz, uint8_t elem_sz)
{
	if (b->layout_len < (kind + 1) * 4)
		b->layout_len = (kind + 1) * 4;
	b->layout[kind * 4] = info_sz;
	b->layout[kind * 4 + 1] = elem_sz;
}

/* The blob: a header of hdr_len bytes (24, or 32 with the layout section), then the sections. */
static size_t bb_blob(const struct bb *b, uint8_t *out, uint32_t hdr_len)
{
	uint32_t h[8] = { 0 };
	size_t len = hdr_len;

	h[0] = 0xeb9f | 1 << 16;
	h[1] = hdr_len;
	h[2] = 0;
	h[3] = (uint32_t)b->ty_len;
	h[4] = (uint32_t)b->ty_len;
	h[5] = (uint32_t)b->st_len;
	if (hdr_len >= 32) {
		h[6] = (uint32_t)(b->ty_len + b->st_len);
		h[7] = (uint32_t)b->layout_len;
	}
	memset(out, 0, hdr_len);
	memcpy(out, h, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
	memcpy(out + len, b->ty, b->ty_len);
	len += b->ty_len;
	memcpy(out + len, b->st, b->st_len);
	len += b->st_len;
	if (hdr_len >= 32) {
		memcpy(out + len, b->layout, b->layout_len);
		len += b->layout_len;
	}
	return len;
}

/* What the module asks: struct rq's nr_running and cpu, and struct sched_class's size. */
struct answer {
	int err; /* the first error, or 0 */
	uint32_t nr_off, nr_size, cpu_off, cpu_size, class_size;
};

/*
 * The reader on an exact-size copy of data (so that AddressSanitizer sees any read past its
 * end).
 */
static struct answer ask(const void *data, size_t len)
{
	struct answer a = { 0 };
	uint8_t *copy = malloc(len ? len : 1);
	struct csf_btf b;
	int rq, sc;

	memcpy(copy, data, len);
	a.err = csf_btf_init(&b, copy, len);
	if (!a.err) {
		rq = csf_btf_find_struct(&b, "rq");
		a.err = rq < 0 ? rq : csf_btf_member(&b, rq, "nr_running", &a.nr_off, &a.nr_size);
		if (!a.err)
			a.err = csf_btf_member(&b, rq, "cpu", &a.cpu_off, &a.cpu_size);
		sc = a.err ? 0 : csf_btf_find_struct(&b, "sched_class");
		if (sc < 0)
			a.err = sc;
		else if (sc > 0)
			a.err = csf_btf_struct_size(&b, sc, &a.class_size);
	}
	free(copy);
	return a;
}

/* The right answer for the blobs below. */
static int right(const struct answer *a)
{
	return !a->err && a->nr_off == 4 && a->nr_size == 4 && a->cpu_off == 16 &&
	       a->cpu_size == 4 && a->class_size == 208;
}

/*
 * A small kernel: struct rq { raw_spinlock_t __lock; unsigned int nr_running; ...; int cpu; },
 * nr_running through a typedef and a volatile, and struct sched_class of 208 bytes. Before rq,
 * a record of kind unknown_kind (unknown to the reader) with 4 bytes and 2 elements of 8, when
 * it is not 0.
 */
static void small(struct bb *b, unsigned int unknown_kind)
{
	uint32_t u32_id, int_id, td, vol;

	bb_init(b);
	u32_id = bb_int(b, "unsigned int", 4);
	int_id = bb_int(b, "int", 4);
	td = bb_type(b, "u32_t", 8, 0, 0, u32_id);
	vol = bb_type(b, "", 9, 0, 0, td);
	if (unknown_kind) {
		bb_type(b, "future", unknown_kind, 2, 0, 0);
		bb_u32(b, 7); /* 4 bytes of its own, then 2 elements of 8 */
		for (int i = 0; i < 4; i++)
			bb_u32(b, 0xffffffff);
	}
	bb_type(b, "rq", 4, 3, 0, 64);
	bb_member(b, "__lock", u32_id, 0);
	bb_member(b, "nr_running", vol, 32);
	bb_member(b, "cpu", int_id, 128);
	bb_type(b, "sched_class", 4, 1, 0, 208);
	bb_member(b, "enqueue_task", u32_id, 0);
}

static uint8_t blob[8192];

/* The BTF file to read: argv[1], or this machine's. */
static const char *path = "/sys/kernel/btf/vmlinux";

/* Lay b out with the 24-byte header into blob and ask the reader about it. */
static struct answer ask_built(const struct bb *b)
{
	return ask(blob, bb_blob(b, blob, 24));
}

SCENARIO(small_blob, "a small blob, 24-byte header: offsets through a typedef and a qualifier")
{
	struct answer a;
	struct bb b;

	small(&b, 0);
	a = ask_built(&b);
	CHECK(right(&a), "err %d nr_running %u/%u cpu %u/%u sched_class %u", a.err, a.nr_off,
	      a.nr_size, a.cpu_off, a.cpu_size, a.class_size);
}

SCENARIO(cut_short, "the same, cut short at every length: an error every time")
{
	struct answer a;
	struct bb b;
	size_t len;
	int wrong = 0;

	small(&b, 0);
	len = bb_blob(&b, blob, 24);
	for (size_t cut = 0; cut < len; cut++) {
		/* The header still says the whole length: nothing of it can be trusted. */
		a = ask(blob, cut);
		wrong += !a.err;
	}
	CHECK_EQ(wrong, 0);
}

SCENARIO(no_final_nul, "a string section without its final NUL")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 0);
	len = bb_blob(&b, blob, 24);
	blob[len - 1] = 'x';
	a = ask(blob, len);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(name_past_strings, "a name offset past the string section")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 0);
	len = bb_blob(&b, blob, 24);
	/* the first record's name_off */
	memset(blob + 24, 0xff, 4);
	a = ask(blob, len);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(sections_wrap, "sections past the end, and offsets that wrap")
{
	struct answer a;
	struct bb b;
	size_t len;
	uint32_t v;

	small(&b, 0);
	len = bb_blob(&b, blob, 24);
	v = 0xfffffff0;
	memcpy(blob + 16, &v, 4); /* str_off: wraps with str_len */
	a = ask(blob, len);
	CHECK_EQ(a.err, -EINVAL);
	len = bb_blob(&b, blob, 24);
	v = (uint32_t)len;
	memcpy(blob + 12, &v, 4); /* type_len: past the end */
	a = ask(blob, len);
	CHECK_EQ(a.err, -EINVAL);
	len = bb_blob(&b, blob, 24);
	v = 0xffff;
	memcpy(blob + 4, &v, 4); /* hdr_len */
	a = ask(blob, len);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(members_past_end, "a struct whose members run past the type section")
{
	struct answer a;
	struct bb b;

	small(&b, 0);
	/* A last struct claiming 1000 members, none there. */
	bb_type(&b, "big", 4, 1000, 0, 8);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(unknown_kind, "a kind the reader does not know, 24-byte header: unknown, not a guess")
{
	struct answer a;
	struct bb b;

	small(&b, 25);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EOPNOTSUPP);
}

SCENARIO(layout_steps_over, "32-byte header: the layout section steps over the unknown kind")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 25);
	bb_layout(&b, 25, 4, 8);
	len = bb_blob(&b, blob, 32);
	a = ask(blob, len);
	CHECK(right(&a), "err %d nr_running %u/%u cpu %u/%u sched_class %u", a.err, a.nr_off,
	      a.nr_size, a.cpu_off, a.cpu_size, a.class_size);
}

SCENARIO(kind_40, "32-byte header: kind 40, past the 5 bits older kernels used, vlen past 16 bits")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 40); /* 40 & 0x1f is 8, a typedef, with nothing after it */
	bb_layout(&b, 40, 4, 8);
	len = bb_blob(&b, blob, 32);
	a = ask(blob, len);
	CHECK(right(&a), "err %d nr_running %u/%u cpu %u/%u sched_class %u", a.err, a.nr_off,
	      a.nr_size, a.cpu_off, a.cpu_size, a.class_size);
	/* A struct with 0x10001 members claimed (0x10001 & 0xffff is 1): past the end. */
	small(&b, 0);
	bb_type(&b, "wide", 4, 0x10001, 0, 8);
	bb_member(&b, "m", 1, 0);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(layout_too_short,
	 "32-byte header: a layout section too short for the kind, or lying about its size")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 25);
	bb_layout(&b, 24, 4, 8); /* describes kinds 0 to 24 only */
	len = bb_blob(&b, blob, 32);
	a = ask(blob, len);
	CHECK_EQ(a.err, -EOPNOTSUPP);
	small(&b, 25);
	bb_layout(&b, 25, 4, 12); /* 2 elements of 12: runs into rq, then off the end */
	len = bb_blob(&b, blob, 32);
	a = ask(blob, len);
	CHECK(!right(&a) && a.err, "err %d: a wrong layout gave an answer", a.err);
}

SCENARIO(long_header, "a header longer than known: only with zeros there")
{
	struct answer a;
	struct bb b;
	size_t len;

	small(&b, 0);
	len = bb_blob(&b, blob, 40);
	a = ask(blob, len);
	CHECK(right(&a), "err %d with zeros", a.err);
	blob[36] = 1;
	a = ask(blob, len);
	CHECK_EQ(a.err, -EOPNOTSUPP);
}

SCENARIO(bitfield_unaligned,
	 "a bitfield, an unaligned member, a member of another kind, a missing one")
{
	struct answer a;
	struct bb b;
	uint32_t u32_id;

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "rq", 4, 2, 1, 64); /* kind_flag: bitfield widths */
	bb_member(&b, "nr_running", u32_id, 3u << 24 | 32);
	bb_member(&b, "cpu", u32_id, 128);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "rq", 4, 2, 0, 64);
	bb_member(&b, "nr_running", u32_id, 36);
	bb_member(&b, "cpu", u32_id, 128);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "p", 2, 0, 0, u32_id);
	bb_type(&b, "rq", 4, 2, 0, 64);
	bb_member(&b, "nr_running", 2, 32); /* a pointer */
	bb_member(&b, "cpu", u32_id, 128);
	a = ask_built(&b);
	CHECK_EQ(a.err, -ENOENT);

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "rq", 4, 1, 0, 64);
	bb_member(&b, "cpu", u32_id, 128);
	a = ask_built(&b);
	CHECK_EQ(a.err, -ENOENT);
}

SCENARIO(member_past_struct,
	 "a member past its struct's end, a type id past the last type, a typedef loop")
{
	struct answer a;
	struct bb b;
	uint32_t u32_id;

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "rq", 4, 2, 0, 8);
	bb_member(&b, "nr_running", u32_id, 32);
	bb_member(&b, "cpu", u32_id, 64); /* bytes 8 to 11 of 8 */
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);

	bb_init(&b);
	u32_id = bb_int(&b, "unsigned int", 4);
	bb_type(&b, "rq", 4, 2, 0, 64);
	bb_member(&b, "nr_running", 99, 32);
	bb_member(&b, "cpu", u32_id, 128);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);

	bb_init(&b);
	bb_type(&b, "a", 8, 0, 0, 2); /* typedef a b; typedef b a; */
	bb_type(&b, "b", 8, 0, 0, 1);
	bb_type(&b, "rq", 4, 1, 0, 64);
	bb_member(&b, "nr_running", 1, 32);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(two_structs, "two structs of one name: no answer")
{
	struct answer a;
	struct bb b;

	small(&b, 0);
	bb_type(&b, "rq", 4, 0, 0, 4);
	a = ask_built(&b);
	CHECK_EQ(a.err, -EINVAL);
}

SCENARIO(bit_flips,
	 "every bit of a good blob flipped, one at a time: no read out of bounds, no hang")
{
	struct answer a;
	struct bb b;
	size_t len;
	int answers = 0;

	small(&b, 25);
	bb_layout(&b, 25, 4, 8);
	len = bb_blob(&b, blob, 32);
	/*
	 * A flip can leave a well-formed blob that says other things (another offset, an
	 * int of 5 bytes: the module checks the sizes it needs): what is checked here is
	 * that every read stays within the blob, which AddressSanitizer sees.
	 */
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			uint8_t saved = blob[i];

			blob[i] ^= (uint8_t)(1u << bit);
			a = ask(blob, len);
			blob[i] = saved;
			answers += !a.err;
		}
	}
	printf("#   %zu bytes x 8 flips: %d still answered\n", len, answers);
	CHECK(answers < (int)len * 8, "every flip answered");
}

SCENARIO(machine_btf,
	 "this machine's BTF: struct rq's nr_running and cpu, struct sched_class's size")
{
	struct answer a;
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n = 0;
	uint8_t *data = NULL;

	if (!f)
		SKIP("%s: %s", path, strerror(errno));
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			data = realloc(data, cap);
			if (!data)
				t_die("realloc");
		}
		size_t got = fread(data + n, 1, cap - n, f);

		if (!got)
			break;
		n += got;
	}
	fclose(f);
	a = ask(data, n);
	free(data);
	printf("#   %s: %zu bytes: rq.nr_running at %u (%u bytes), rq.cpu at %u (%u bytes), "
	       "sched_class %u bytes, err %d\n",
	       path, n, a.nr_off, a.nr_size, a.cpu_off, a.cpu_size, a.class_size, a.err);
	CHECK(!a.err, "error %d", a.err);
	CHECK(a.nr_size == 4 && a.cpu_size == 4, "sizes %u %u", a.nr_size, a.cpu_size);
	CHECK(a.class_size >= 64 && a.class_size % 8 == 0, "sched_class %u", a.class_size);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		path = argv[1];
	return t_main("btf_host");
}
