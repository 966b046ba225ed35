package jobreport

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Duration prints seconds the way a person says them: 45 s, 12 min,
// 3 h 05 min, as the HTML report does.
func Duration(s float64) string {
	switch {
	case s < 120:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
	case s < 7200:
		return strconv.Itoa(int(math.Round(s/60))) + " min"
	default:
		h := int(s / 3600)
		m := int(math.Round((s - float64(h)*3600) / 60))
		if m == 60 {
			h, m = h+1, 0
		}
		return fmt.Sprintf("%d h %02d min", h, m)
	}
}

// Percent prints a ratio as a whole percentage, or one decimal under 10 %.
func Percent(r float64) string {
	switch {
	case math.IsNaN(r):
		return "n/a"
	case r != 0 && math.Abs(r) < 0.1:
		return strconv.FormatFloat(math.Round(r*1000)/10, 'f', 1, 64) + " %"
	}
	return strconv.Itoa(int(math.Round(r*100))) + " %"
}

// GPUHours prints GPU-seconds as GPU-hours.
func GPUHours(s float64) string {
	h := s / 3600
	if h < 10 {
		return strconv.FormatFloat(h, 'f', 2, 64) + " GPU-h"
	}
	return strconv.FormatFloat(h, 'f', 1, 64) + " GPU-h"
}

// Money prints an amount in the analyzer's currency.
func Money(x float64, currency string) string {
	if currency == "" || currency == "USD" {
		return fmt.Sprintf("$%.2f", x)
	}
	return fmt.Sprintf("%.2f %s", x, currency)
}

// Clock prints a Unix time as UTC, to the second.
func Clock(t float64) string {
	return time.Unix(0, int64(t*1e9)).UTC().Format("2006-01-02 15:04:05")
}

// GB prints bytes in gigabytes (10^9, as jobstats prints them).
func GB(b float64) string {
	if math.IsNaN(b) {
		return "n/a"
	}
	return strconv.FormatFloat(b/1e9, 'f', 1, 64) + " GB"
}
