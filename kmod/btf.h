/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: a reader of BTF, the kernel's own description of its types, as
 * /sys/kernel/btf/vmlinux serves it. It finds a struct by name, and a member's byte offset and
 * the size of its (integer) type, for the layouts no header gives a module (struct rq).
 *
 * The blob is checked as it is read: the header's sections against its size, every record
 * against the type section's end, every name against the string section, which must end with
 * a NUL. Kinds it does not know are stepped over with the blob's own layout section (7.x's
 * 32-byte header), or end the search: it answers "unknown", never a guess.
 *
 * btf.c is also compiled in user space, for the host test (tests/user/btf_host.c): with no
 * __KERNEL__, the few kernel types it uses come from tests/user/btf_user.h, included first.
 */
#ifndef CSF_BTF_H
#define CSF_BTF_H

#ifdef __KERNEL__
#include <linux/types.h>
#endif /* user space: tests/user/btf_user.h gives the same types */

struct csf_btf {
	const u8 *types; /* the type section */
	u32 types_len;
	const char *strs; /* the string section, NUL-terminated */
	u32 strs_len;
	const u8 *layout; /* the layout section (4 bytes a kind), or NULL */
	u32 layout_kinds;
};

/* Check data's header and sections; b then points into data. 0, or -EINVAL. */
int csf_btf_init(struct csf_btf *b, const void *data, size_t size);

/*
 * The type id of the one struct called name: > 0, or -ENOENT (none), -EINVAL (a bad record,
 * two of them), -EOPNOTSUPP (a kind neither known nor described by the layout section).
 */
int csf_btf_find_struct(const struct csf_btf *b, const char *name);

/* The size of struct id, in bytes; errors as above. */
int csf_btf_struct_size(const struct csf_btf *b, int id, u32 *size);

/*
 * Member name of struct id: its byte offset, and the size of its type once typedefs and
 * qualifiers are peeled off, which must be an integer (-EINVAL for a bitfield, -ENOENT for no
 * such member or another type).
 */
int csf_btf_member(const struct csf_btf *b, int id, const char *name, u32 *offset, u32 *size);

#ifdef __KERNEL__
/* Read the running kernel's BTF (/sys/kernel/btf/vmlinux) into *data; free it with vfree(). */
int csf_btf_vmlinux(struct csf_btf *b, void **data);
#endif

#endif /* CSF_BTF_H */
