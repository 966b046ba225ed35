//go:build !unix

package gpuanalyzerprocessor

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
