// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: a reader of BTF (see btf.h). The format is the kernel's
 * (Documentation/bpf/btf.rst): a header, then a type section of variable-length records, type
 * ids counting them from 1, and a string section. Nothing here trusts a length or an offset in
 * the blob before checking it against what holds it.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#else
#include <errno.h>
#include <string.h>
#endif

#include "btf.h"

#define CSF_BTF_MAGIC 0xeb9f
#define CSF_BTF_HDR 24 /* magic to str_len */
#define CSF_BTF_HDR_LAYOUT 32 /* and layout_off, layout_len (7.x) */
#define CSF_BTF_HDR_MAX 256 /* longer: not a header this reader could know */
#define CSF_BTF_TYPE 12 /* name_off, info, size or type */
#define CSF_BTF_MEMBER 12 /* name_off, type, offset */
#define CSF_BTF_LAYOUT 4 /* a layout entry: info_sz, elem_sz, flags */
#define CSF_BTF_HOPS 32 /* typedefs and qualifiers followed before giving up */

/* The kinds, as include/uapi/linux/btf.h numbers them. */
enum {
	CSF_BTF_INT = 1,
	CSF_BTF_PTR,
	CSF_BTF_ARRAY,
	CSF_BTF_STRUCT,
	CSF_BTF_UNION,
	CSF_BTF_ENUM,
	CSF_BTF_FWD,
	CSF_BTF_TYPEDEF,
	CSF_BTF_VOLATILE,
	CSF_BTF_CONST,
	CSF_BTF_RESTRICT,
	CSF_BTF_FUNC,
	CSF_BTF_FUNC_PROTO,
	CSF_BTF_VAR,
	CSF_BTF_DATASEC,
	CSF_BTF_FLOAT,
	CSF_BTF_DECL_TAG,
	CSF_BTF_TYPE_TAG,
	CSF_BTF_ENUM64,
};

/* A record of the type section, checked: it lies whole within the section. */
struct csf_btf_rec {
	u32 off; /* in the type section */
	u32 len; /* with what follows struct btf_type */
	u32 name_off;
	u32 kind, vlen;
	bool kflag;
	u32 size_type; /* size, or the type it refers to */
};

static u32 csf_btf_u32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v)); /* a crafted blob need not be aligned */
	return v;
}

int csf_btf_init(struct csf_btf *b, const void *data, size_t size)
{
	const u8 *d = data;
	u32 hdr_len, type_off, type_len, str_off, str_len;
	u64 room;

	memset(b, 0, sizeof(*b));
	if (size < CSF_BTF_HDR)
		return -EINVAL;
	/* magic (u16), version, flags, hdr_len: little-endian x86 reads its own order */
	if ((d[0] | d[1] << 8) != CSF_BTF_MAGIC || d[2] != 1)
		return -EINVAL;
	hdr_len = csf_btf_u32(d + 4);
	if (hdr_len < CSF_BTF_HDR || hdr_len > size || hdr_len % 4)
		return -EINVAL;
	if (hdr_len > CSF_BTF_HDR && hdr_len < CSF_BTF_HDR_LAYOUT)
		return -EINVAL;
	if (hdr_len > CSF_BTF_HDR_MAX)
		return -EOPNOTSUPP;
	/* Fields after the ones known must be zero: else they would mean something. */
	for (u32 i = CSF_BTF_HDR_LAYOUT; i < hdr_len; i++)
		if (d[i])
			return -EOPNOTSUPP;
	room = size - hdr_len;
	type_off = csf_btf_u32(d + 8);
	type_len = csf_btf_u32(d + 12);
	str_off = csf_btf_u32(d + 16);
	str_len = csf_btf_u32(d + 20);
	if ((u64)type_off + type_len > room || (u64)str_off + str_len > room)
		return -EINVAL;
	/* Every name ends within the section; offset 0 is the empty name. */
	if (!str_len || d[hdr_len + str_off] || d[hdr_len + str_off + str_len - 1])
		return -EINVAL;
	b->types = d + hdr_len + type_off;
	b->types_len = type_len;
	b->strs = (const char *)d + hdr_len + str_off;
	b->strs_len = str_len;
	if (hdr_len >= CSF_BTF_HDR_LAYOUT) {
		u32 layout_off = csf_btf_u32(d + 24), layout_len = csf_btf_u32(d + 28);

		if ((u64)layout_off + layout_len > room || layout_len % CSF_BTF_LAYOUT)
			return -EINVAL;
		if (layout_len) {
			b->layout = d + hdr_len + layout_off;
			b->layout_kinds = layout_len / CSF_BTF_LAYOUT;
		}
	}
	return 0;
}

/*
 * What follows struct btf_type in a record of kind with vlen elements, or -EOPNOTSUPP for a
 * kind this reader does not know and the layout section does not describe.
 */
static s64 csf_btf_extra(const struct csf_btf *b, u32 kind, u32 vlen)
{
	const u8 *l;

	switch (kind) {
	case CSF_BTF_PTR:
	case CSF_BTF_FWD:
	case CSF_BTF_TYPEDEF:
	case CSF_BTF_VOLATILE:
	case CSF_BTF_CONST:
	case CSF_BTF_RESTRICT:
	case CSF_BTF_FUNC:
	case CSF_BTF_FLOAT:
	case CSF_BTF_TYPE_TAG:
		return 0;
	case CSF_BTF_INT: /* encoding, offset, bits */
	case CSF_BTF_VAR: /* linkage */
	case CSF_BTF_DECL_TAG: /* component_idx */
		return 4;
	case CSF_BTF_ARRAY: /* type, index_type, nelems */
		return 12;
	case CSF_BTF_STRUCT:
	case CSF_BTF_UNION:
	case CSF_BTF_DATASEC:
	case CSF_BTF_ENUM64:
		return (s64)vlen * 12;
	case CSF_BTF_ENUM:
	case CSF_BTF_FUNC_PROTO:
		return (s64)vlen * 8;
	}
	/* Kind 0 is no type at all; later kinds only as the blob describes them. */
	if (!kind)
		return -EINVAL;
	if (kind >= b->layout_kinds)
		return -EOPNOTSUPP;
	l = b->layout + kind * CSF_BTF_LAYOUT;
	return l[0] + (s64)vlen * l[1];
}

/* The record at off of the type section, which must lie whole within it. */
static int csf_btf_rec(const struct csf_btf *b, u32 off, struct csf_btf_rec *r)
{
	const u8 *p = b->types + off;
	u32 info;
	s64 extra;

	if (off > b->types_len || b->types_len - off < CSF_BTF_TYPE)
		return -EINVAL;
	r->off = off;
	r->name_off = csf_btf_u32(p);
	info = csf_btf_u32(p + 4);
	r->size_type = csf_btf_u32(p + 8);
	/* 7.x widened both (bits 24-30, 0-23): the bits they took were zero before. */
	r->kind = (info >> 24) & 0x7f;
	r->vlen = info & 0xffffff;
	r->kflag = info >> 31;
	if (r->name_off >= b->strs_len)
		return -EINVAL;
	extra = csf_btf_extra(b, r->kind, r->vlen);
	if (extra < 0)
		return (int)extra;
	if (extra > b->types_len - off - CSF_BTF_TYPE)
		return -EINVAL;
	r->len = CSF_BTF_TYPE + (u32)extra;
	return 0;
}

/* The record of type id (1 is the first). */
static int csf_btf_type(const struct csf_btf *b, u32 id, struct csf_btf_rec *r)
{
	u32 off = 0, n = 1;
	int err;

	if (!id)
		return -ENOENT; /* void */
	while (off < b->types_len) {
		err = csf_btf_rec(b, off, r);
		if (err)
			return err;
		if (n++ == id)
			return 0;
		off += r->len;
	}
	return -EINVAL; /* an id past the last type */
}

static bool csf_btf_named(const struct csf_btf *b, u32 name_off, const char *name)
{
	return name_off < b->strs_len && !strcmp(b->strs + name_off, name);
}

int csf_btf_find_struct(const struct csf_btf *b, const char *name)
{
	struct csf_btf_rec r;
	u32 off = 0, n = 1;
	int found = -ENOENT, err;

	/* To the end: two structs of one name would leave the answer open. */
	for (; off < b->types_len; off += r.len, n++) {
		err = csf_btf_rec(b, off, &r);
		if (err)
			return err;
		if (r.kind != CSF_BTF_STRUCT || !csf_btf_named(b, r.name_off, name))
			continue;
		if (found > 0 || n > (u32)0x7fffffff)
			return -EINVAL;
		found = (int)n;
	}
	return found;
}

static int csf_btf_struct(const struct csf_btf *b, int id, struct csf_btf_rec *r)
{
	int err;

	if (id <= 0)
		return -EINVAL;
	err = csf_btf_type(b, (u32)id, r);
	if (err)
		return err;
	return r->kind == CSF_BTF_STRUCT ? 0 : -EINVAL;
}

int csf_btf_struct_size(const struct csf_btf *b, int id, u32 *size)
{
	struct csf_btf_rec r;
	int err = csf_btf_struct(b, id, &r);

	if (!err)
		*size = r.size_type;
	return err;
}

/* The size of integer type id, through typedefs and qualifiers. */
static int csf_btf_int_size(const struct csf_btf *b, u32 id, u32 *size)
{
	struct csf_btf_rec r;
	int err;

	for (int hop = 0; hop < CSF_BTF_HOPS; hop++) {
		err = csf_btf_type(b, id, &r);
		if (err)
			return err;
		switch (r.kind) {
		case CSF_BTF_TYPEDEF:
		case CSF_BTF_VOLATILE:
		case CSF_BTF_CONST:
		case CSF_BTF_RESTRICT:
		case CSF_BTF_TYPE_TAG:
			id = r.size_type;
			continue;
		case CSF_BTF_INT:
			*size = r.size_type;
			return 0;
		default:
			return -ENOENT;
		}
	}
	return -EINVAL; /* a loop */
}

int csf_btf_member(const struct csf_btf *b, int id, const char *name, u32 *offset, u32 *size)
{
	struct csf_btf_rec s;
	int err = csf_btf_struct(b, id, &s);

	if (err)
		return err;
	for (u32 i = 0; i < s.vlen; i++) {
		const u8 *m = b->types + s.off + CSF_BTF_TYPE + i * CSF_BTF_MEMBER;
		u32 bits = csf_btf_u32(m + 8), bitfield = 0;

		if (!csf_btf_named(b, csf_btf_u32(m), name))
			continue;
		if (s.kflag) { /* bits 0-23 the offset, 24-31 a bitfield's width */
			bitfield = bits >> 24;
			bits &= 0xffffff;
		}
		if (bitfield || bits % 8)
			return -EINVAL;
		err = csf_btf_int_size(b, csf_btf_u32(m + 4), size);
		if (err)
			return err;
		*offset = bits / 8;
		if ((u64)*offset + *size > s.size_type)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

#ifdef __KERNEL__
#define CSF_BTF_PATH "/sys/kernel/btf/vmlinux"
#define CSF_BTF_MAX_SIZE (64 << 20) /* 6.1 to 7.3: 5 to 7 MB */

/*
 * Read with kernel_read(), not kernel_read_file(): that one asks the security modules about
 * its purpose, and IPE (7.x) warns about a purpose it has no rule for.
 */
int csf_btf_vmlinux(struct csf_btf *b, void **data)
{
	struct file *f;
	loff_t size, pos = 0;
	void *buf;
	int err;

	*data = NULL;
	/*
	 * As the writer of slice_warn_us sees it: init_task's root need not be init's (a guest
	 * whose init chroots sees no /sys from there).
	 */
	f = filp_open(CSF_BTF_PATH, O_RDONLY, 0);
	if (IS_ERR(f))
		return (int)PTR_ERR(f);
	size = i_size_read(file_inode(f));
	err = size > 0 && size <= CSF_BTF_MAX_SIZE ? 0 : -EFBIG;
	buf = err ? NULL : vmalloc(size);
	if (!err && !buf)
		err = -ENOMEM;
	while (!err && pos < size) {
		ssize_t n = kernel_read(f, (char *)buf + pos, size - pos, &pos);

		if (n <= 0)
			err = n ? (int)n : -EIO;
	}
	fput(f);
	if (!err)
		err = csf_btf_init(b, buf, size);
	if (err)
		vfree(buf);
	else
		*data = buf;
	return err;
}
#endif
