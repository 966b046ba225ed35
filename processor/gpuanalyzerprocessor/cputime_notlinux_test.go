//go:build !linux

package gpuanalyzerprocessor

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
