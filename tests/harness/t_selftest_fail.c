// SPDX-License-Identifier: GPL-2.0
/* A test that must fail: the harness self-test (tests/debian/selftest.sh) checks it is caught. */
#include "../t.h"

SCENARIO(failing_check, "a failing check fails the test")
{
	CHECK(1 + 1 == 3, "the harness must report this failure");
}

int main(void)
{
	return t_main("t_selftest_fail");
}
