// Package kmsg reads the NVIDIA driver's XID reports out of kernel log text
// as real hosts keep it, so that a node's own log can drive the replay of
// the remediation (gpureplay -remediate) instead of a DCGM recording.
//
// The driver reports an XID with one kernel message per event:
//
//	NVRM: Xid (PCI:0000:3b:00): 13, pid=2924364, name=pt_main_thread, Graphics SM Warp Exception ...
//
// One application fault often logs a dozen such lines within milliseconds,
// so every line is one event at its own time, sub-second part included:
// grouping them is the remediation's job, not the parser's.
//
// What surrounds the message depends on the tool that wrote the log. The
// format is detected line by line, so a file pasted together from two tools
// still reads:
//
//   - dmesg --ctime (-T): "[Mon Nov 24 10:00:00 2025] NVRM: ..."; local time
//     of the host, to the second.
//   - ISO 8601: dmesg --time-format iso "2025-11-24T10:00:00,123456+00:00 NVRM: ...",
//     and journalctl -k -o short-iso (or short-iso-precise, or an RFC 3339
//     syslog file) "2025-11-24T10:00:00+0000 HOST kernel: NVRM: ...".
//   - journald's and syslog's default short format: "Nov 24 10:00:00 HOST
//     kernel: NVRM: ..." (or short-precise, with microseconds). It has no
//     year: [Options.Year] gives the first line's, and a step from December
//     back to January moves to the next year.
//   - dmesg's raw form: "[12345.678901] NVRM: ...", seconds since boot.
//     [Options.Boot] turns them into times; without it an XID line in this
//     form is an error, since any guess would put the events at the wrong
//     instant.
//
// dmesg --decode's "kern  :warn  : " prefix may come first, and the
// kernel's own "[12345.678901] " stamp that syslog keeps inside a message
// after "kernel: " is skipped: the wall clock before it is the time.
//
// Lines without "NVRM: Xid" are skipped, whatever they hold. A line with
// one that cannot be read (no timestamp in a known format, a bus id or code
// that is not one) is an error naming the line and column, because a
// dropped XID is a fault the remediation never sees.
package kmsg

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Format is the timestamp form of a line.
type Format int

// The formats this package reads.
const (
	// Ctime is dmesg --ctime: "[Mon Nov 24 10:00:00 2025]".
	Ctime Format = iota + 1
	// ISO is ISO 8601 with a zone: dmesg --time-format iso, journalctl -o
	// short-iso and short-iso-precise, RFC 3339 syslog.
	ISO
	// Short is journald's and syslog's "Nov 24 10:00:00", without a year.
	Short
	// Monotonic is dmesg's raw "[12345.678901]", seconds since boot.
	Monotonic
)

func (f Format) String() string {
	switch f {
	case Ctime:
		return "ctime"
	case ISO:
		return "iso"
	case Short:
		return "short"
	case Monotonic:
		return "monotonic"
	}
	return "unknown"
}

// Event is one XID line.
type Event struct {
	// Line is the line's number in the input, from 1.
	Line   int
	Format Format
	Time   time.Time
	// Host is the journald or syslog host field; empty for dmesg output,
	// which does not name its host.
	Host string
	// BusID is the GPU's PCI bus id as the driver prints it, lower case,
	// without "PCI:": "0000:3b:00" (domain:bus:device).
	BusID string
	XID   int
	// PID and Process are the pid= and name= fields the driver adds since
	// about R470; HasPID is false where there is none or it is
	// '<unknown>', and Process is empty then too.
	PID     int
	HasPID  bool
	Process string
	// Message is the rest of the report after the code and the pid and
	// name fields: "Graphics SM Warp Exception on (GPC 9, TPC 1, SM 1): Out Of Range Address".
	Message string
	// Recovery is set for XID 154, the driver's recovery action changing.
	Recovery *Recovery
}

// Recovery is what an XID 154 says: the GPU's recovery action, which
// nvidia-smi shows as "GPU Recovery Action", changed from From to To.
type Recovery struct {
	// HasFrom is false when the driver printed only the new action.
	From, To Action
	HasFrom  bool
}

// Action is a recovery action as the driver prints it: "0x1 (GPU Reset
// Required)" is Code 1, Name "GPU Reset Required". The names differ
// between driver versions ("PF FLR", "OS Reboot"), the codes do not.
type Action struct {
	Code int
	Name string
}

func (a Action) String() string {
	return fmt.Sprintf("0x%x (%s)", a.Code, a.Name)
}

// Options say what a log leaves out.
type Options struct {
	// Year is the year of the first journald short-format line, which
	// has none. Zero makes such an XID line an error.
	Year int
	// Location is the zone of the forms without one (ctime and short):
	// the host's local time when it wrote them. Nil means UTC.
	Location *time.Location
	// Boot is when the host booted, for the seconds-since-boot form.
	// The zero time makes such an XID line an error.
	Boot time.Time
}

// Error is an XID line that could not be read.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("kmsg: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// MaxLine is the longest line read. The kernel keeps a record under 1 KiB;
// a far longer line is not a kernel log, and reading it whole would only
// cost memory.
const MaxLine = 64 << 10

// Parse reads r to its end and returns its XID events in input order.
// On an error it returns the events before the bad line with it.
func Parse(r io.Reader, opts Options) ([]Event, error) {
	p := parser{opts: opts}
	if p.opts.Location == nil {
		p.opts.Location = time.UTC
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	var out []Event
	n := 0
	for sc.Scan() {
		n++
		ev, ok, err := p.line(n, sc.Text())
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return out, &Error{Line: n + 1, Column: 1, Msg: fmt.Sprintf("line longer than %d bytes: not a kernel log", MaxLine)}
		}
		return out, err
	}
	return out, nil
}

// Sniff reports whether text (the start of a file) is a kernel log: its
// first line that is not blank and not a journalctl "-- ... --" banner
// starts with a timestamp in one of the formats Parse reads. A CSV trace
// starts with its header row, which never does.
func Sniff(text []byte) bool {
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(string(text), '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		s := strings.TrimRight(string(line), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "-- ") {
			continue
		}
		start := decodePrefix(s)
		_, _, ok := detect(s[start:])
		return ok
	}
	return false
}

const marker = "NVRM: Xid"

type parser struct {
	opts Options
	// year and month of the last short-format line, for the year.
	year, month int
}

// line reads one line: ok is false for a line that is not an XID.
func (p *parser) line(n int, s string) (Event, bool, error) {
	s = strings.TrimSuffix(s, "\r")
	at := strings.Index(s, marker)
	if at < 0 {
		return Event{}, false, nil
	}
	fail := func(col int, format string, args ...any) (Event, bool, error) {
		return Event{}, false, &Error{Line: n, Column: col + 1, Msg: fmt.Sprintf(format, args...)}
	}
	ev := Event{Line: n}
	start := decodePrefix(s)
	f, end, ok := detect(s[start:])
	if !ok || start+end > at {
		return fail(start, "XID line without a timestamp this reads: want dmesg --ctime \"[Mon Nov 24 10:00:00 2025]\", ISO 8601 \"2025-11-24T10:00:00,123456+00:00\", journald \"Nov 24 10:00:00 HOST kernel:\" or dmesg \"[12345.678901]\"")
	}
	ev.Format = f
	stamp := s[start : start+end]
	var err error
	switch f {
	case Ctime:
		ev.Time, err = time.ParseInLocation("Mon Jan _2 15:04:05 2006", strings.TrimSpace(stamp[1:len(stamp)-1]), p.opts.Location)
		if err != nil {
			return fail(start, "dmesg --ctime timestamp %q: %v", stamp, err)
		}
	case ISO:
		ev.Time, err = parseISO(stamp)
		if err != nil {
			return fail(start, "ISO 8601 timestamp %q: %v", stamp, err)
		}
	case Short:
		if p.opts.Year == 0 && p.year == 0 {
			return fail(start, "journald timestamp %q has no year: give the year of the log's first line (Options.Year, gpureplay -year)", stamp)
		}
		ev.Time, err = p.short(stamp)
		if err != nil {
			return fail(start, "journald timestamp %q: %v", stamp, err)
		}
	case Monotonic:
		if p.opts.Boot.IsZero() {
			return fail(start, "timestamp %q counts seconds since boot: give the boot time (Options.Boot, gpureplay -boot) to place it", stamp)
		}
		d, err := parseMonotonic(stamp)
		if err != nil {
			return fail(start, "timestamp %q: %v", stamp, err)
		}
		ev.Time = p.opts.Boot.Add(d)
	}
	// Between the timestamp and the report: journald's "HOST kernel: ",
	// and syslog's copy of the kernel's own stamp.
	mid := strings.TrimSpace(s[start+end : at])
	if f == ISO || f == Short {
		if host, rest, ok := strings.Cut(mid, " "); ok && strings.HasPrefix(rest, "kernel:") {
			ev.Host = host
		}
	}
	if err := parseReport(&ev, s, at+len(marker)); err != nil {
		return Event{}, false, &Error{Line: n, Column: err.col + 1, Msg: err.msg}
	}
	return ev, true, nil
}

func (p *parser) short(stamp string) (time.Time, error) {
	// Parse in a leap year so that "Feb 29" reads; the year is set below.
	t, err := time.Parse("2006 Jan _2 15:04:05", "2024 "+stamp)
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case p.year == 0:
		p.year = p.opts.Year
	case int(t.Month()) < p.month && p.month == 12 && t.Month() == 1:
		p.year++
	}
	p.month = int(t.Month())
	u := time.Date(p.year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), p.opts.Location)
	if u.Day() != t.Day() {
		return time.Time{}, fmt.Errorf("no %s %d in %d", t.Month(), t.Day(), p.year)
	}
	return u, nil
}

// decodePrefix measures dmesg --decode's "FACILITY:LEVEL : " prefix
// ("kern  :warn  : "): the offset of what follows, 0 without one.
func decodePrefix(s string) int {
	i := 0
	for pass := 0; pass < 2; pass++ {
		j := i
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		if j == i || j-i > 8 {
			return 0
		}
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != ':' {
			return 0
		}
		i = j + 1
	}
	if i >= len(s) || s[i] != ' ' {
		return 0
	}
	return i + 1
}

// detect recognises the timestamp at the start of s and returns its format
// and length. It checks the shape only; the parse comes after.
func detect(s string) (Format, int, bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return 0, 0, false
		}
		inner := strings.TrimLeft(s[1:end], " ")
		if isSeconds(inner) {
			return Monotonic, end + 1, true
		}
		// "Mon Nov 24 10:00:00 2025" or "Mon Nov  3 10:00:00 2025".
		if len(inner) >= 24 && inner[3] == ' ' && inner[7] == ' ' && isClock(inner[len(inner)-13:len(inner)-5]) {
			return Ctime, end + 1, true
		}
		return 0, 0, false
	}
	if len(s) >= 19 && isDigits(s[:4]) && s[4] == '-' && isDigits(s[5:7]) && s[7] == '-' && isDigits(s[8:10]) && s[10] == 'T' && isClock(s[11:19]) {
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		return ISO, end, true
	}
	// "Nov 24 10:00:00" or "Nov  3 10:00:00", maybe ".123456".
	if len(s) >= 15 && isMonth(s[:3]) && s[3] == ' ' && (s[4] == ' ' || isDigits(s[4:5])) && isDigits(s[5:6]) && s[6] == ' ' && isClock(s[7:15]) {
		end := 15
		if end < len(s) && s[end] == '.' {
			end++
			for end < len(s) && s[end] >= '0' && s[end] <= '9' {
				end++
			}
		}
		return Short, end, true
	}
	return 0, 0, false
}

func isSeconds(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && isDigits(sec) && isDigits(frac)
}

func isClock(s string) bool {
	return len(s) == 8 && isDigits(s[:2]) && s[2] == ':' && isDigits(s[3:5]) && s[5] == ':' && isDigits(s[6:])
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var months = "JanFebMarAprMayJunJulAugSepOctNovDec"

func isMonth(s string) bool {
	i := strings.Index(months, s)
	return i >= 0 && i%3 == 0 && len(s) == 3
}

// parseISO reads ISO 8601 as dmesg and journalctl write it: a comma or a
// point before the fraction, and a zone as "Z", "+00:00" or "+0000".
func parseISO(s string) (time.Time, error) {
	s = strings.Replace(s, ",", ".", 1)
	t, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", s)
	if err == nil {
		return t, nil
	}
	if t, err2 := time.Parse("2006-01-02T15:04:05.999999999Z0700", s); err2 == nil {
		return t, nil
	}
	return time.Time{}, errors.New("want a date, a time and a zone such as +00:00")
}

func parseMonotonic(stamp string) (time.Duration, error) {
	inner := strings.TrimSpace(stamp[1 : len(stamp)-1])
	sec, frac, _ := strings.Cut(inner, ".")
	if len(frac) > 9 {
		frac = frac[:9]
	}
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s > int64(1<<62)/int64(time.Second) {
		return 0, errors.New("seconds since boot out of range")
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Duration(s)*time.Second + time.Duration(ns), nil
}

type reportError struct {
	col int
	msg string
}

// parseReport reads "NVRM: Xid (PCI:0000:3b:00): 13, pid=..., name=..., text"
// from s, whose text after "NVRM: Xid" starts at i.
func parseReport(ev *Event, s string, i int) *reportError {
	bad := func(col int, format string, args ...any) *reportError {
		return &reportError{col: col, msg: fmt.Sprintf(format, args...)}
	}
	if !strings.HasPrefix(s[i:], " (") {
		return bad(i, "want \" (PCI:DOMAIN:BUS:DEVICE): CODE\" after %q", marker)
	}
	i += 2
	end := strings.IndexByte(s[i:], ')')
	if end < 0 {
		return bad(i, "unclosed \"(\" around the bus id")
	}
	bus, err := ParseBusID(s[i : i+end])
	if err != nil {
		return bad(i, "%v", err)
	}
	ev.BusID = bus
	i += end + 1
	if !strings.HasPrefix(s[i:], ": ") {
		return bad(i, "want \": CODE\" after the bus id")
	}
	i += 2
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	code, err := strconv.Atoi(s[i:j])
	if err != nil || code < 1 || code > 65535 {
		return bad(i, "want an XID code (1 to 65535), got %q", field(s[i:]))
	}
	ev.XID = code
	rest := s[j:]
	switch {
	case rest == "":
	case strings.HasPrefix(rest, ","):
		rest = strings.TrimSpace(rest[1:])
	default:
		return bad(j, "want \",\" after the XID code, got %q", field(rest))
	}
	// pid=1234 or pid='<unknown>', then name=NAME; each ends at ", ".
	restAt := len(s) - len(rest)
	if v, after, ok := cutField(rest, "pid="); ok {
		if v != "'<unknown>'" {
			pid, err := strconv.Atoi(v)
			if err != nil || pid < 0 {
				return bad(restAt+4, "want a pid, got %q", v)
			}
			ev.PID, ev.HasPID = pid, true
		}
		rest = after
		if v, after, ok := cutField(rest, "name="); ok {
			if v != "<unknown>" {
				ev.Process = v
			}
			rest = after
		}
	}
	ev.Message = strings.TrimSpace(rest)
	if ev.XID == 154 {
		r, ok := parseRecovery(ev.Message)
		if !ok {
			return bad(len(s)-len(rest), "XID 154: want \"GPU recovery action changed from 0xN (NAME) to 0xN (NAME)\", got %q", ev.Message)
		}
		ev.Recovery = &r
	}
	return nil
}

// cutField cuts "KEY=VALUE, " from the start of s.
func cutField(s, key string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, key) {
		return "", s, false
	}
	s = s[len(key):]
	if v, r, found := strings.Cut(s, ", "); found {
		return v, r, true
	}
	return s, "", true
}

func field(s string) string {
	if i := strings.IndexAny(s, " ,"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 20 {
		s = s[:20]
	}
	return s
}

// ParseBusID reads a PCI bus id as the driver's XID line ("PCI:0000:3b:00")
// or nvidia-smi ("00000000:3B:00.0") prints it, and returns the form Event
// uses: "0000:3b:00".
func ParseBusID(s string) (string, error) {
	in := s
	s = strings.TrimPrefix(s, "PCI:")
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		if !isHex(s[i+1:], 1) {
			return "", fmt.Errorf("bus id %q: want DOMAIN:BUS:DEVICE[.FUNCTION] in hex", in)
		}
		s = s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 || !isHex(parts[0], 8) || !isHex(parts[1], 2) || !isHex(parts[2], 2) {
		return "", fmt.Errorf("bus id %q: want DOMAIN:BUS:DEVICE[.FUNCTION] in hex", in)
	}
	dom, _ := strconv.ParseUint(parts[0], 16, 32)
	if dom > 0xffff {
		return "", fmt.Errorf("bus id %q: PCI domain above ffff", in)
	}
	return fmt.Sprintf("%04x:%s:%s", dom, strings.ToLower(parts[1]), strings.ToLower(parts[2])), nil
}

func isHex(s string, most int) bool {
	if s == "" || len(s) > most {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(s[i] >= '0' && s[i] <= '9') && !(c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseRecovery reads "GPU recovery action changed from 0x0 (None) to 0x1
// (GPU Reset Required)"; "from ..." may be missing.
func parseRecovery(msg string) (Recovery, bool) {
	const lead = "GPU recovery action changed "
	if !strings.HasPrefix(msg, lead) {
		return Recovery{}, false
	}
	s := msg[len(lead):]
	var r Recovery
	if strings.HasPrefix(s, "from ") {
		a, rest, ok := parseAction(s[len("from "):])
		if !ok {
			return Recovery{}, false
		}
		r.From, r.HasFrom, s = a, true, strings.TrimPrefix(rest, " ")
	}
	if !strings.HasPrefix(s, "to ") {
		return Recovery{}, false
	}
	a, rest, ok := parseAction(s[len("to "):])
	if !ok || strings.TrimSpace(rest) != "" && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, ".") {
		return Recovery{}, false
	}
	r.To = a
	return r, true
}

// parseAction reads "0x1 (GPU Reset Required)" from the start of s.
func parseAction(s string) (Action, string, bool) {
	num, rest, ok := strings.Cut(s, " (")
	if !ok || !strings.HasPrefix(num, "0x") {
		return Action{}, "", false
	}
	code, err := strconv.ParseUint(num[2:], 16, 16)
	if err != nil {
		return Action{}, "", false
	}
	name, rest, ok := strings.Cut(rest, ")")
	if !ok || name == "" {
		return Action{}, "", false
	}
	return Action{Code: int(code), Name: name}, rest, true
}
