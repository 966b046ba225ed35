package cgroupstat

import (
	"bytes"
	"fmt"
	"math"
	"time"
)

// CPUStat is what a cpu.stat file says. The v2 file gives times in µs
// (usage_usec, throttled_usec), the v1 one in ns (throttled_time, and
// usage in cpuacct.usage instead); both are converted to durations.
type CPUStat struct {
	// Usage is the CPU time used, when the file has usage_usec (v2).
	Usage    time.Duration
	HasUsage bool
	// Periods, ThrottledPeriods and Throttled are nr_periods,
	// nr_throttled and throttled_usec (v2) or throttled_time (v1).
	Periods, ThrottledPeriods uint64
	Throttled                 time.Duration
	HasThrottling             bool
}

// ParseCPUStat reads a cpu.stat file, v1 or v2 ("key value" lines; keys it
// does not use, such as user_usec or nr_bursts, are skipped). name is the
// file's name in errors.
func ParseCPUStat(name string, data []byte) (CPUStat, error) {
	var s CPUStat
	var periods, throttled, throttledTime bool
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		key, val, ok := bytes.Cut(line, []byte{' '})
		v, vok := parseUint(val)
		if !ok || !vok {
			return CPUStat{}, fmt.Errorf("%s:%d: want \"key value\", got %q", name, n, line)
		}
		switch string(key) {
		case "usage_usec":
			s.Usage, s.HasUsage = micros(v), true
		case "nr_periods":
			s.Periods, periods = v, true
		case "nr_throttled":
			s.ThrottledPeriods, throttled = v, true
		case "throttled_usec":
			s.Throttled, throttledTime = micros(v), true
		case "throttled_time":
			s.Throttled, throttledTime = nanos(v), true
		}
	}
	// The three come together from every kernel that has CFS bandwidth
	// control; one without the others is not a file to trust.
	s.HasThrottling = periods && throttled && throttledTime
	if (periods || throttled || throttledTime) && !s.HasThrottling {
		return CPUStat{}, fmt.Errorf("%s: nr_periods, nr_throttled and the throttled time not all present", name)
	}
	return s, nil
}

// Stall is one line of a PSI file: the total time, since the cgroup was
// made or the node booted, that some (or all, for full) non-idle tasks
// were stalled on the resource.
type Stall struct {
	Total time.Duration
	Has   bool
}

// PSI is one pressure file (cpu.pressure, /proc/pressure/io, ...).
type PSI struct {
	Some, Full Stall
}

// ParsePressure reads a PSI file: lines
// "some avg10=0.00 avg60=0.00 avg300=0.00 total=465907442" and the same
// with "full", total in µs. Only total is read: the averages are the
// kernel's smoothing of it, which a monitoring system does itself. name is
// the file's name in errors.
func ParsePressure(name string, data []byte) (PSI, error) {
	var p PSI
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		kind, rest, _ := bytes.Cut(line, []byte{' '})
		var st *Stall
		switch string(kind) {
		case "some":
			st = &p.Some
		case "full":
			st = &p.Full
		default:
			return PSI{}, fmt.Errorf("%s:%d: want a some or full line, got %q", name, n, line)
		}
		i := bytes.Index(rest, []byte("total="))
		if i < 0 || (i > 0 && rest[i-1] != ' ') {
			return PSI{}, fmt.Errorf("%s:%d: no total= in %q", name, n, line)
		}
		field, _, _ := bytes.Cut(rest[i+len("total="):], []byte{' '})
		v, ok := parseUint(field)
		if !ok {
			return PSI{}, fmt.Errorf("%s:%d: total %q is not a count of µs", name, n, field)
		}
		*st = Stall{Total: micros(v), Has: true}
	}
	return p, nil
}

// parseUint reads a decimal number, without the allocation of a string
// conversion; surrounding spaces (the trailing newline, a blank line the
// kernel's v1 files end with) are allowed.
func parseUint(b []byte) (uint64, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// micros and nanos convert a kernel count to a duration, saturating where
// a corrupt or 292-year figure would not fit.
func micros(v uint64) time.Duration {
	if v > math.MaxInt64/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(v) * time.Microsecond
}

func nanos(v uint64) time.Duration {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(v)
}
