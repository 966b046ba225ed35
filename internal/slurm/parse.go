package slurm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// keyRE is the start of a field in scontrol's one-line output: a key of
// letters, digits and Slurm's few punctuation marks (CPUs/Task,
// AllocNode:Sid, ReqB:S:C:T), then "=".
var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:/]*=`)

// record is one line of `scontrol show ... -o`: its fields in order.
// A key may repeat (the per-node Nodes=/GRES= groups of show job -d).
type record []field

type field struct{ key, value string }

// parseRecord splits a line of `scontrol -o` into its fields. scontrol
// prints "Key=Value" pairs separated by single spaces and does not quote
// values, so a value with spaces in it (a job name, a node's Reason, its
// OS) runs on into the words that follow; a word that does not start a
// new key belongs to the value before it.
func parseRecord(line string) record {
	var rec record
	for _, word := range strings.Split(strings.TrimSpace(line), " ") {
		if word == "" {
			continue // scontrol pads some fields with a second space
		}
		if loc := keyRE.FindStringIndex(word); loc != nil {
			rec = append(rec, field{key: word[:loc[1]-1], value: word[loc[1]:]})
			continue
		}
		if len(rec) == 0 {
			continue // text before the first key: nothing scontrol prints
		}
		rec[len(rec)-1].value += " " + word
	}
	return rec
}

// get returns the first value of key, "" when absent.
func (r record) get(key string) string {
	for _, f := range r {
		if f.key == key {
			return f.value
		}
	}
	return ""
}

// unset reports the words Slurm prints for a field with no value.
func unset(v string) bool {
	switch v {
	case "", "(null)", "N/A", "None", "Unknown", "n/a":
		return true
	}
	return false
}

// ParseDuration reads a Slurm time string as scontrol prints it and as
// sbatch --time takes it (sbatch(1), "-t, --time"): "minutes",
// "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes" and "days-hours:minutes:seconds". UNLIMITED and
// INFINITE are 0, meaning no limit.
func ParseDuration(s string) (time.Duration, error) {
	switch strings.ToUpper(s) {
	case "UNLIMITED", "INFINITE":
		return 0, nil
	}
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("slurm time %q: want [days-]hours:minutes:seconds, minutes[:seconds] or UNLIMITED", s)
	}
	days := 0
	rest := s
	dayForm := false
	if i := strings.IndexByte(s, '-'); i >= 0 {
		d, err := strconv.Atoi(s[:i])
		if err != nil || d < 0 {
			return bad()
		}
		days, rest, dayForm = d, s[i+1:], true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return bad()
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return bad()
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case dayForm && len(nums) == 1: // days-hours
		h = nums[0]
	case dayForm && len(nums) == 2: // days-hours:minutes
		h, m = nums[0], nums[1]
	case len(nums) == 3: // [days-]hours:minutes:seconds
		h, m, sec = nums[0], nums[1], nums[2]
	case len(nums) == 2: // minutes:seconds
		m, sec = nums[0], nums[1]
	default: // minutes
		m = nums[0]
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, nil
}

// parseTime reads a timestamp as scontrol prints it: ISO 8601 without a
// zone, in the local time of the machine scontrol ran on (Slurm's
// slurm_make_time_str with its default format). Unknown, None and N/A are
// the zero time.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if unset(s) {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("slurm timestamp %q: want YYYY-MM-DDTHH:MM:SS", s)
	}
	return t, nil
}

// ExpandHostlist expands a Slurm hostlist ("gpu[01-03,07],login1") into
// its host names, in order. It follows Slurm's src/common/hostlist.c: a
// comma outside brackets separates hosts; inside brackets, a comma
// separates ranges and a range "lo-hi" keeps the zero padding of lo; a
// name with several bracket groups is their product. "(null)" and "" are
// no hosts.
func ExpandHostlist(s string) ([]string, error) {
	if unset(s) {
		return nil, nil
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				if depth < 0 {
					return nil, fmt.Errorf("hostlist %q: ']' without '[' at %d", s, i)
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return nil, fmt.Errorf("hostlist %q: '[' not closed", s)
		}
		if part := s[start:i]; part != "" {
			names, err := expandHost(part)
			if err != nil {
				return nil, fmt.Errorf("hostlist %q: %w", s, err)
			}
			if len(out)+len(names) > maxHosts {
				return nil, fmt.Errorf("hostlist %q expands to more than %d hosts", s, maxHosts)
			}
			out = append(out, names...)
		}
		start = i + 1
	}
	return out, nil
}

// maxHosts bounds an expansion, so that "n[0-999999999]" is an error, not
// a machine's memory.
const maxHosts = 1 << 16

// expandHost expands one host expression with bracket groups.
func expandHost(s string) ([]string, error) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		return []string{s}, nil
	}
	end := strings.IndexByte(s[open:], ']') + open
	prefix, ranges := s[:open], s[open+1:end]
	suffixes, err := expandHost(s[end+1:])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, found := strings.Cut(r, "-")
		if !found {
			hi = lo
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if lo == "" || hi == "" || errA != nil || errB != nil || a < 0 || b < a {
			return nil, fmt.Errorf("range %q in %q: want N or LO-HI with LO <= HI", r, s)
		}
		// b-a+1 first: times the suffixes it could overflow.
		if b-a+1 > maxHosts || len(out)+(b-a+1)*len(suffixes) > maxHosts {
			return nil, fmt.Errorf("%q expands to more than %d hosts", s, maxHosts)
		}
		width := len(lo)
		for n := a; n <= b; n++ {
			for _, suf := range suffixes {
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, n, suf))
			}
		}
	}
	return out, nil
}

// parseIndices reads a GPU index list as show job -d prints it inside
// "(IDX:...)": "0-1,4".
func parseIndices(s string) ([]int, error) {
	var out []int
	for _, r := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(r, "-")
		if !found {
			hi = lo
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if errA != nil || errB != nil || a < 0 || b < a || b-a > 4096 {
			return nil, fmt.Errorf("GPU index range %q in %q", r, s)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}
