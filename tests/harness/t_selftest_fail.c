// SPDX-License-Identifier: GPL-2.0
/* A test that must fail: the harness self-test (tests/debian/selftest.sh) checks it is caught. */
#define T_LEGACY_BLOCKS /* scenarios as blocks in main(), until converted */
#include "../t.h"

int main(void)
{
	TEST("a failing check fails the test") {
		CHECK(1 + 1 == 3, "the harness must report this failure");
	}
	return t_done("t_selftest_fail");
}
