package ncclinspector

import (
	"bufio"
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The ncclras client's text report (NCCL src/ras/client_support.cc). What
// is read of it, and why:
//
//   - the communicators table (Group, Comms, Nodes per comm, Ranks per
//     node, Ranks per comm, Ranks in group, Status, Errors): Status is one
//     of NOCOMM, INIT, RUNNING, FINALIZE, ABORT and Errors a comma list
//     of INCOMPLETE, ERROR, MISMATCH; it also gives each group's rank
//     count, which the straggler inference needs;
//   - the "#<group>-<comm> (<hash>) <problem>" sections, with the ranks
//     they name and what is said of each;
//   - "The outlier node(s):" lines, the nodes whose process or GPU count
//     differs from the rest;
//   - the job-level INCOMPLETE/DEAD/TIMEOUT sections' "Process <pid> on
//     node <ip> managing GPU..." lines.
//
// On a MISMATCH, RAS prints how many ranks reached which operation count,
// most frequent first, and names only the ranks of the rare counts (the
// outliers). Those may be ahead of the rest or behind it: NCCL issue #1911
// shows two ranks named for being one operation ahead while the thirty
// stragglers go unnamed. So each named rank carries its Relation to the
// majority, and RASMismatch.Lagging infers the stragglers.

// RASReport is what one ncclras report says.
type RASReport struct {
	// NCCLVersion is from "NCCL version 2.26.2 compiled with ...".
	NCCLVersion string
	// OutlierNodes are the nodes "The outlier node(s):" names.
	OutlierNodes []RASNode
	// Groups are the rows of the communicators table.
	Groups []RASGroup
	// Communicators are the per-communicator sections, in report order.
	Communicators []RASComm
	// Processes are the job-level sections' processes (missing from
	// INCOMPLETE, DEAD, ...), each with the section's word as Problem.
	Processes []RASProcess
}

// RASNode is an outlier node and the processes it runs.
type RASNode struct {
	Node string
	PIDs []int
}

// RASGroup is one row of the communicators table.
type RASGroup struct {
	Group, Comms, NodesPerComm, RanksPerNode, RanksPerComm, RanksInGroup int
	// Status is RUNNING, NOCOMM, ...; Errors the listed problems (none
	// when the column is empty or OK).
	Status string
	Errors []string
}

// RASComm is one "#g-c (hash) PROBLEM" section.
type RASComm struct {
	Group, Index int
	Hash         string
	Problem      string
	// NRanks is the communicator's rank count from the table (Ranks per
	// comm of its group); 0 when the table did not give it.
	NRanks int
	// Missing is "Missing communicator data from N rank(s)"; -1 when not said.
	Missing int
	// Mismatches are the per-collective operation-count mismatches.
	Mismatches []RASMismatch
	// Ranks are the ranks named outside a mismatch (missing ranks, ranks
	// with another status, ranks that reported an error).
	Ranks []RASRank
}

// RASMismatch is one "Communicator ranks have different X operation
// counts" block.
type RASMismatch struct {
	Collective string
	// Counts are the operation counts reported, most frequent first as
	// RAS prints them, with a single named rank's count added as a group
	// of one.
	Counts []RASOpCount
	// Ranks are the ranks named, each at its group's operation.
	Ranks []RASRank
}

// RASOpCount is "N ranks have launched up to operation OP" (OP 0: have not
// launched any).
type RASOpCount struct {
	Ranks     int
	Operation int64
}

// Relation is where a named rank stands against the majority.
type Relation string

// The relations; RelationNone for a rank where there is no majority to
// compare with, or it is in it.
const (
	RelationNone   Relation = ""
	RelationAhead  Relation = "ahead"
	RelationBehind Relation = "behind"
)

// RASRank is a rank a section names and what it says of it.
type RASRank struct {
	Rank int
	// GPU is as printed after "GPU" ("4"); GPUIndex its leading number,
	// -1 when none. PID is 0 and Node empty when RAS printed "[process
	// information not found]".
	GPU      string
	GPUIndex int
	PID      int
	Node     string
	// Operation is the operation it launched up to; -1 when not said.
	Operation int64
	Relation  Relation
	// Status is "has status X" or "reported X"; Missing marks a rank
	// listed as missing communicator data.
	Status  string
	Missing bool
}

// RASProcess is a process a job-level section names.
type RASProcess struct {
	Problem string
	PID     int
	Node    string
	GPUs    string
}

var (
	reVersion     = regexp.MustCompile(`^NCCL version (\S+)`)
	reOutlierHead = regexp.MustCompile(`^The outlier nodes?:`)
	reOutlierNode = regexp.MustCompile(`^\s+Node (\S+) running process(?:es)? ([\d,]+)`)
	reTableRow    = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([A-Z]+)(?:\s+([A-Z,]+))?\s*$`)
	reCommHead    = regexp.MustCompile(`^#(\d+)-(\d+) \(([0-9a-fA-F]+)\) ([A-Z,]+)\s*$`)
	reJobHead     = regexp.MustCompile(`^([A-Z]+)\s*$`)
	reDiffCounts  = regexp.MustCompile(`^\s+Communicator ranks have different (\S+) operation counts`)
	reCountLine   = regexp.MustCompile(`^\s+(\d+) ranks have (?:launched up to operation (\d+)|not launched any operations)`)
	reMissing     = regexp.MustCompile(`^\s+Missing communicator data from (\d+) rank`)
	reRank        = regexp.MustCompile(`^\s+Rank (\d+)(?: (?:has launched up to operation (\d+)|(has not launched any operations)|has status (\S+)|reported (\S+)))? -- (?:GPU (.+?) managed by process (\d+) on node (\S+)|\[process information not found\])`)
	reProcess     = regexp.MustCompile(`^\s+Process (\d+) on node (\S+) managing GPUs? ?(.*)$`)
)

// ParseRAS reads an ncclras report. Lines it does not know are skipped,
// and it never fails: a report cut short (as issue text often is) gives
// what its lines say.
func ParseRAS(data []byte) RASReport {
	var rep RASReport
	var comm *RASComm
	var mm *RASMismatch
	jobProblem, inOutliers, missingBlock := "", false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" {
			inOutliers = false
			continue
		}
		if line[0] != ' ' {
			inOutliers, missingBlock, mm = false, false, nil
		}
		if m := match(reVersion, line); m != nil {
			rep.NCCLVersion = m[1]
			continue
		}
		if reOutlierHead.MatchString(line) {
			inOutliers = true
			continue
		}
		if m := match(reOutlierNode, line); m != nil && inOutliers {
			rep.OutlierNodes = append(rep.OutlierNodes, RASNode{Node: m[1], PIDs: atoiList(m[2])})
			continue
		}
		if m := match(reTableRow, line); m != nil {
			g := RASGroup{Status: m[7]}
			ns := []*int{&g.Group, &g.Comms, &g.NodesPerComm, &g.RanksPerNode, &g.RanksPerComm, &g.RanksInGroup}
			for i, p := range ns {
				*p = atoi(m[i+1])
			}
			if m[8] != "" && m[8] != "OK" {
				g.Errors = strings.Split(m[8], ",")
			}
			rep.Groups = append(rep.Groups, g)
			continue
		}
		if m := match(reCommHead, line); m != nil {
			rep.Communicators = append(rep.Communicators, RASComm{
				Group: atoi(m[1]), Index: atoi(m[2]), Hash: m[3], Problem: m[4], Missing: -1,
			})
			comm, jobProblem = &rep.Communicators[len(rep.Communicators)-1], ""
			continue
		}
		if m := match(reJobHead, line); m != nil {
			comm, jobProblem = nil, m[1]
			continue
		}
		if line[0] != ' ' {
			comm, jobProblem = nil, "" // another section: Errors, Warnings, a title
			continue
		}
		if m := match(reProcess, line); m != nil && jobProblem != "" {
			rep.Processes = append(rep.Processes, RASProcess{Problem: jobProblem, PID: atoi(m[1]), Node: m[2], GPUs: m[3]})
			continue
		}
		if comm == nil {
			continue
		}
		if m := match(reDiffCounts, line); m != nil {
			comm.Mismatches = append(comm.Mismatches, RASMismatch{Collective: m[1]})
			mm, missingBlock = &comm.Mismatches[len(comm.Mismatches)-1], false
			continue
		}
		if m := match(reMissing, line); m != nil {
			comm.Missing, missingBlock, mm = atoi(m[1]), true, nil
			continue
		}
		if m := match(reCountLine, line); m != nil && mm != nil {
			mm.Counts = append(mm.Counts, RASOpCount{Ranks: atoi(m[1]), Operation: atoi64(m[2])})
			continue
		}
		if m := match(reRank, line); m != nil {
			addRank(comm, mm, m, missingBlock)
		}
	}
	for i := range rep.Communicators {
		c := &rep.Communicators[i]
		c.NRanks = rep.RanksPerComm(c.Group)
		for j := range c.Mismatches {
			c.Mismatches[j].relate()
		}
	}
	return rep
}

func addRank(comm *RASComm, mm *RASMismatch, m []string, missing bool) {
	r := RASRank{Rank: atoi(m[1]), GPU: m[6], GPUIndex: -1, PID: atoi(m[7]), Node: m[8], Operation: -1, Missing: missing}
	if r.Rank < 0 {
		return
	}
	if g := leadingDigits(r.GPU); g != "" {
		r.GPUIndex = atoi(g)
	}
	switch {
	case m[2] != "":
		r.Operation = atoi64(m[2])
	case m[3] != "":
		r.Operation = 0
	case m[4] != "":
		r.Status = m[4]
	case m[5] != "":
		r.Status = m[5]
	}
	if mm == nil {
		comm.Ranks = append(comm.Ranks, r)
		return
	}
	if r.Operation >= 0 {
		// A lone outlier is printed with its count and no group line.
		mm.Counts = append(mm.Counts, RASOpCount{Ranks: 1, Operation: r.Operation})
	} else if len(mm.Counts) > 0 {
		r.Operation = mm.Counts[len(mm.Counts)-1].Operation
	}
	mm.Ranks = append(mm.Ranks, r)
}

// relate sets each named rank's Relation against the most frequent count.
func (m *RASMismatch) relate() {
	major, ok := m.majority()
	if !ok {
		return
	}
	for i := range m.Ranks {
		switch op := m.Ranks[i].Operation; {
		case op < 0 || op == major.Operation:
		case op > major.Operation:
			m.Ranks[i].Relation = RelationAhead
		default:
			m.Ranks[i].Relation = RelationBehind
		}
	}
}

// majority is the count with the most ranks (the first such, as RAS sorts
// them); none when two counts tie for it.
func (m *RASMismatch) majority() (RASOpCount, bool) {
	best, tie := -1, false
	for i, c := range m.Counts {
		switch {
		case best < 0 || c.Ranks > m.Counts[best].Ranks:
			best, tie = i, false
		case c.Ranks == m.Counts[best].Ranks && c.Operation != m.Counts[best].Operation:
			tie = true
		}
	}
	if best < 0 || tie {
		return RASOpCount{}, false
	}
	return m.Counts[best], true
}

// Lagging infers the ranks behind the furthest operation count of a
// communicator of nranks ranks: the named ranks behind it, and, when RAS
// named every rank at the furthest count (they were the outliers, as in
// issue #1911), every other rank of the communicator. It returns nil when
// nothing can be inferred (no counts; the furthest ranks unnamed and none
// named behind; nranks unknown when the complement is needed).
func (m *RASMismatch) Lagging(nranks int) []int {
	var maxOp int64 = -1
	groupAtMax := 0
	for _, c := range m.Counts {
		if c.Operation > maxOp {
			maxOp, groupAtMax = c.Operation, c.Ranks
		} else if c.Operation == maxOp {
			groupAtMax += c.Ranks
		}
	}
	if maxOp < 0 {
		return nil
	}
	atMax := map[int]bool{}
	set := map[int]bool{}
	for _, r := range m.Ranks {
		switch {
		case r.Operation == maxOp:
			atMax[r.Rank] = true
		case r.Operation >= 0:
			set[r.Rank] = true
		}
	}
	if len(atMax) > 0 && len(atMax) >= groupAtMax {
		if nranks <= 0 || nranks > 1<<20 {
			return nil
		}
		for rk := range nranks {
			if !atMax[rk] {
				set[rk] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]int, 0, len(set))
	for rk := range set {
		out = append(out, rk)
	}
	sort.Ints(out)
	return out
}

// RanksPerComm is the table's rank count per communicator for a group; 0
// when the table did not list the group.
func (r *RASReport) RanksPerComm(group int) int {
	for _, g := range r.Groups {
		if g.Group == group {
			return g.RanksPerComm
		}
	}
	return 0
}

func match(re *regexp.Regexp, s string) []string { return re.FindStringSubmatch(s) }

// atoi and atoi64 read the regexps' digit groups; a number too large is
// -1, which the callers treat as not given.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func atoi64(s string) int64 {
	if s == "" {
		return 0 // "have not launched any operations"
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func atoiList(s string) []int {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if n := atoi(f); n >= 0 {
			out = append(out, n)
		}
	}
	return out
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
