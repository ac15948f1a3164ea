/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btf_user.h: the kernel types kmod/btf.c uses, from the C library, so that the host test
 * (btf_host.c) compiles the module's BTF reader as it is. make host-btf includes it first.
 */
#ifndef CSF_TESTS_BTF_USER_H
#define CSF_TESTS_BTF_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#endif /* CSF_TESTS_BTF_USER_H */
