package slurm

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Node is what scontrol show node -o says of a node.
type Node struct {
	Name string
	// State as Slurm prints it: a base state and its flags joined by "+",
	// e.g. IDLE, MIXED+DRAIN (draining), IDLE+DRAIN (drained),
	// DOWN+NOT_RESPONDING.
	State string
	// Reason is the text given with the drain or down, without the
	// " [user@time]" scontrol appends; ReasonUser and ReasonTime are those.
	Reason     string
	ReasonUser string
	ReasonTime time.Time
	// Gres is the node's configured GRES ("gpu:8"); GresUsed what jobs
	// hold, from -d ("gpu:2(IDX:0-1)").
	Gres, GresUsed string
	// BootTime is when the node last booted, as slurmd reported it: a
	// reboot changes it.
	BootTime time.Time
	// SlurmdStartTime is when slurmd last started and registered.
	SlurmdStartTime time.Time
	CPUs            int
	Partitions      []string
}

// Base is the node's state without its flags: IDLE, MIXED, ALLOCATED,
// DOWN, ...
func (n Node) Base() string { b, _, _ := strings.Cut(n.State, "+"); return b }

// HasFlag says whether the node's state carries flag (DRAIN,
// NOT_RESPONDING, REBOOT_REQUESTED, ...).
func (n Node) HasFlag(flag string) bool {
	return slices.Contains(strings.Split(n.State, "+")[1:], flag)
}

// Drained says whether the node takes no new jobs: drained or draining,
// or down.
func (n Node) Drained() bool { return n.HasFlag("DRAIN") || n.Base() == "DOWN" }

// Busy says whether jobs run on the node (a draining node not yet
// drained).
func (n Node) Busy() bool {
	switch n.Base() {
	case "ALLOCATED", "MIXED", "COMPLETING":
		return true
	}
	return n.HasFlag("COMPLETING")
}

// reasonRE splits "text [user@2026-12-02T05:00:00]".
var reasonRE = regexp.MustCompile(`^(.*) \[([^@\]]*)@([^\]]*)\]$`)

// Node returns the node called name.
func (c *Client) Node(ctx context.Context, name string) (Node, error) {
	if err := checkNodeName(name); err != nil {
		return Node{}, err
	}
	out, err := c.scontrol(ctx, "show", "node", "-d", "-o", name)
	if err != nil {
		return Node{}, err
	}
	ls := lines(out)
	if len(ls) == 0 {
		return Node{}, fmt.Errorf("scontrol show node %s: %w (no record printed)", name, ErrNotFound)
	}
	return parseNode(ls[0], c.loc())
}

func checkNodeName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n=,[]\"") {
		return fmt.Errorf("slurm node name %q: want one node's name, without spaces, '=', ',' or brackets", name)
	}
	return nil
}

// parseNode reads one line of scontrol show node -d -o.
func parseNode(line string, loc *time.Location) (Node, error) {
	rec := parseRecord(line)
	n := Node{Name: rec.get("NodeName"), State: rec.get("State"), Gres: rec.get("Gres"), GresUsed: rec.get("GresUsed")}
	if n.Name == "" {
		return Node{}, fmt.Errorf("scontrol show node: no NodeName= in %q", clip(line))
	}
	if unset(n.Gres) {
		n.Gres = ""
	}
	if reason := rec.get("Reason"); !unset(reason) {
		n.Reason = reason
		if m := reasonRE.FindStringSubmatch(reason); m != nil {
			n.Reason, n.ReasonUser = m[1], m[2]
			n.ReasonTime, _ = parseTime(m[3], loc) // the text stays whole if the time is odd
		}
	}
	var err error
	if n.BootTime, err = parseTime(rec.get("BootTime"), loc); err != nil {
		return Node{}, fmt.Errorf("node %s: BootTime: %w", n.Name, err)
	}
	if n.SlurmdStartTime, err = parseTime(rec.get("SlurmdStartTime"), loc); err != nil {
		return Node{}, fmt.Errorf("node %s: SlurmdStartTime: %w", n.Name, err)
	}
	if v := rec.get("CPUTot"); v != "" {
		if n.CPUs, err = strconv.Atoi(v); err != nil {
			return Node{}, fmt.Errorf("node %s: CPUTot=%s: not a number", n.Name, v)
		}
	}
	if p := rec.get("Partitions"); !unset(p) {
		n.Partitions = strings.Split(p, ",")
	}
	return n, nil
}

// MaxReasonLen is the longest reason Drain writes. Slurm itself sets no
// limit, but the reason is shown in sinfo -R, squeue and every operator's
// tooling; 128 bytes keeps it one line.
const MaxReasonLen = 128

// SafeReason makes text a reason scontrol keeps as written: scontrol
// strips one double quote at each end of Reason= (src/scontrol/
// update_node.c), and a '=' would read as a new field to anything parsing
// -o output, ours included; so quotes, '=', control characters and
// anything outside printable ASCII become '_', and the text is cut to
// MaxReasonLen.
func SafeReason(text string) string {
	b := []byte(strings.TrimSpace(text))
	for i, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\'' || c == '=' || c == '`' || c == '\\' {
			b[i] = '_'
		}
	}
	if len(b) > MaxReasonLen {
		b = b[:MaxReasonLen]
	}
	return string(b)
}

// Drain drains node with reason: Slurm starts no new job there, and the
// running ones go on to their end (or until requeued). The reason is
// passed through SafeReason; an empty one is an error, as Slurm refuses a
// drain without a reason.
func (c *Client) Drain(ctx context.Context, node, reason string) error {
	if err := checkNodeName(node); err != nil {
		return err
	}
	r := SafeReason(reason)
	if r == "" {
		return fmt.Errorf("drain of %s: a reason is required", node)
	}
	_, err := c.scontrol(ctx, "update", "NodeName="+node, "State=DRAIN", "Reason="+r)
	return err
}

// SetReason replaces the reason of a drained or down node, leaving its
// state.
func (c *Client) SetReason(ctx context.Context, node, reason string) error {
	if err := checkNodeName(node); err != nil {
		return err
	}
	r := SafeReason(reason)
	if r == "" {
		return fmt.Errorf("reason of %s: must not be empty", node)
	}
	_, err := c.scontrol(ctx, "update", "NodeName="+node, "Reason="+r)
	return err
}

// Resume returns a drained or down node to service (State=RESUME).
func (c *Client) Resume(ctx context.Context, node string) error {
	if err := checkNodeName(node); err != nil {
		return err
	}
	_, err := c.scontrol(ctx, "update", "NodeName="+node, "State=RESUME")
	return err
}

// Reboot asks Slurm to reboot node once its jobs are done (scontrol
// reboot ASAP), through slurm.conf's RebootProgram; the node comes back
// DOWN with reason, for the caller to resume once it has checked it.
func (c *Client) Reboot(ctx context.Context, node, reason string) error {
	if err := checkNodeName(node); err != nil {
		return err
	}
	r := SafeReason(reason)
	if r == "" {
		return fmt.Errorf("reboot of %s: a reason is required", node)
	}
	_, err := c.scontrol(ctx, "reboot", "ASAP", "nextstate=DOWN", "reason="+r, node)
	return err
}
