package gpuanalyzerprocessor

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used, user and
// system; the caller locks its goroutine to the thread.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
