# SPDX-License-Identifier: GPL-2.0
#
# A trace log of the x86_fpu_latency_* events, the same for the same arguments:
#   awk -v n=LINES [-v seed=S] [-v malformed=1] -f gen-log.awk
# n event lines over twelve (event, RFBM, XINUSE) groups of very different sizes, in the
# formats of trace_pipe (5- and 4-character flags) and trace-cmd report, latencies with a
# tail (spikes, values past 65535, and two past 32 bits: one just past, one trace_clock()-sized
# as the series warns of), and with malformed=1 lines both csfcat fpu-report and the series' script skip: truncated ones,
# an empty latency, a CR LF ending, no task name, an empty timestamp; and lines of other kinds.
#
# The same log from every awk: printf's %d is exact only within 32 bits on some (mawk, Debian's
# default, prints 2147483647 for anything larger), so every number printed with %d stays below
# 2^31, and the latencies past 32 bits are strings, printed with %s.

function rnd() {
	# a linear congruential generator whose products stay exact in a double, as on every awk
	state = (state * 69069 + 1) % 4294967296
	return state / 4294967296
}

function line(i, g, lat, comm, cpu, ts, f) {
	# lat: a string of digits (see above)
	comm = comms[i % 5] "-" (1000 + i % 97)
	cpu = sprintf("[%03d]", i % 4)
	ts = sprintf("%d.%06d", 100 + int(i / 1000), (i * 7919) % 1000000)
	f = i % 4
	if (f == 0)
		return sprintf("%16s %s d..1. %s: %s: x86/fpu: latency:%s RFBM:%s XINUSE:%s",
			       comm, cpu, ts, ev[g], lat, rfbm[g], xin[g])
	if (f == 1)
		return sprintf("%16s %s d..1  %s: %s: x86/fpu: latency:%s RFBM:%s XINUSE:%s",
			       comm, cpu, ts, ev[g], lat, rfbm[g], xin[g])
	if (f == 2)
		return sprintf("%16s %s  %s: %s: x86/fpu: latency:%s RFBM:%s XINUSE:%s",
			       comm, cpu, ts, ev[g], lat, rfbm[g], xin[g])
	return sprintf("%s %s %s: %s: x86/fpu: latency:%s RFBM:%s XINUSE:%s",
		       comm, cpu, ts, ev[g], lat, rfbm[g], xin[g])
}

BEGIN {
	state = seed + 1
	comms[0] = "bash"; comms[1] = "kworker/u4:1"; comms[2] = "<idle>"
	comms[3] = "Web Content"; comms[4] = "trace-cmd"
	ng = split("xsave:0x202e7:0x202:90 xsave:0x202e7:0x0:60 xsave:0x202e7:0x2:40 " \
		   "xrstor:0x202e7:0x202:90 xrstor:0x202e7:0x0:50 xsave:0x206e7:0x246:30 " \
		   "xrstor:0x206e7:0x246:20 xsave:0x21f:0x207:12 xrstor:0x21f:0x207:6 " \
		   "xsave:0x8000000000000001:0x1:3 xrstor:0x3:0x3:2 xsave:0x3:0x0:1", gs, " ")
	total = 0
	for (g = 1; g <= ng; g++) {
		split(gs[g], p, ":")
		ev[g] = "x86_fpu_latency_" p[1]; rfbm[g] = p[2]; xin[g] = p[3]
		total += p[4]; cum[g] = total
		base[g] = 60 + g * 37
	}
	print "# tracer: nop"
	print "#"
	print "cpus=4"
	for (i = 0; i < n; i++) {
		r = rnd() * total
		for (g = 1; g < ng && r >= cum[g]; g++)
			;
		lat = base[g] + int(rnd() * base[g])
		s = rnd()
		if (s < 0.02)
			lat *= 20
		else if (s < 0.025)
			lat += 70000
		if (lat > 2147483647) {
			print "gen-log.awk: latency " lat " is past %d's 31 bits" >"/dev/stderr"
			exit 1
		}
		lat = sprintf("%d", lat)
		if (i == int(n / 3))
			lat = "4294967301"
		if (i == int(n / 2))
			lat = "1234567890123"
		print line(i, g, lat)
		if (malformed && i % 50 == 7) {
			l = line(i + 1, g, lat)
			print substr(l, 1, int(length(l) * rnd()))
			print "          <idle>-0     [001] d..2.  1.5: sched_switch: prev_comm=swapper/1"
		}
		if (malformed && i % 97 == 11) {
			print "            bash-1    [000] d..1.  1.000002: x86_fpu_latency_xsave: x86/fpu: latency: RFBM:0x202e7 XINUSE:0x202"
			print "            bash-1    [000] d..1.  1.000005: x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202\r"
			print "[000] d..1.  1.000007: x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202"
			print "            bash-1    [000] d..1.  : x86_fpu_latency_xrstor: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202"
		}
	}
}
